-- Drives a real headless Neovim through one Tandem run, for tests/editor_nvim.rs.
--
-- Environment: TANDEM_BIN (the binary), TANDEM_PLUGIN (editors/nvim),
-- SCENARIO_FILE (the file to open), SCENARIO_TYPED (text the "user" types on
-- line 1 before asking, left unsaved), SCENARIO_PROMPT, SCENARIO_OUT (where
-- the JSON report goes). The model is whatever TANDEM_PROVIDER says (the
-- tests use the scripted one).
local env = vim.env
vim.opt.runtimepath:prepend(env.TANDEM_PLUGIN)
vim.opt.swapfile = false

local report = { events = {}, errors = {} }
local function finish()
  local file = assert(io.open(env.SCENARIO_OUT, 'w'))
  file:write(vim.json.encode(report))
  file:close()
  vim.cmd('qa!')
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SCENARIO_FILE))
  -- The address lets the scripted model's shell step "type" into this
  -- editor mid-run, as a user would (tandem lsp and its shells inherit it).
  vim.env.SCENARIO_NVIM = vim.fn.serverstart()
  -- Permission prompts: answer like a user clicking "Allow once", and keep
  -- what was asked for the report.
  report.prompts = {}
  vim.lsp.handlers['window/showMessageRequest'] = function(_, params)
    table.insert(report.prompts, params.message)
    for _, action in ipairs(params.actions or {}) do
      if action.title == 'Allow once' or action.title == 'Apply' then
        return action
      end
    end
    return vim.NIL
  end
  local tandem = require('tandem')
  -- SCENARIO_DEBOUNCE delays Neovim's didChange: with a long one the
  -- server sends its edit before it hears of the user's typing, and Neovim
  -- skips the stale edit yet answers applied: true.
  local debounce = tonumber(env.SCENARIO_DEBOUNCE or '') or 150
  tandem.setup({
    cmd = { env.TANDEM_BIN, 'lsp' },
    permission_mode = 'acceptEdits',
    flags = { debounce_text_changes = debounce },
  })
  -- Wait for the server to attach.
  local attached = vim.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = 0 }) > 0
  end, 20)
  if not attached then
    error('the tandem server did not attach')
  end
  -- Capture the live transcript as it arrives.
  local original = tandem.handlers['tandem/runEvent']
  vim.lsp.get_clients({ name = 'tandem' })[1].handlers['tandem/runEvent'] = function(e, params, ctx)
    table.insert(report.events, params.event)
    return original(e, params, ctx)
  end
  -- The user types on line 1 and does not save.
  if env.SCENARIO_TYPED and env.SCENARIO_TYPED ~= '' then
    vim.api.nvim_buf_set_lines(0, 0, 1, false, { env.SCENARIO_TYPED })
  end
  local client = vim.lsp.get_clients({ name = 'tandem' })[1]
  local done = false
  local bufnr = vim.api.nvim_get_current_buf()
  client:request('workspace/executeCommand', {
    command = 'tandem.ask',
    arguments = { { prompt = env.SCENARIO_PROMPT, textDocument = { uri = vim.uri_from_bufnr(bufnr) } } },
  }, function(request_err, result)
    report.ask_error = request_err and (request_err.message or vim.inspect(request_err)) or nil
    report.result = result
    done = true
  end, bufnr)
  if not vim.wait(60000, function() return done end, 20) then
    error('the run did not finish in 60 s')
  end
  report.buffer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  report.modified = vim.bo.modified
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
