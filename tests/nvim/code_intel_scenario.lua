-- Drives a real headless Neovim with a real language server (pyright,
-- started by Neovim's own vim.lsp for Python buffers) beside Tandem, for
-- tests/editors/nvim.rs: the agent edits the open file and asks
-- `code_intel` questions, which the plugin answers from pyright.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN, SCENARIO_FILE (the Python file
-- to open), SCENARIO_PYRIGHT (pyright-langserver), SCENARIO_OUT (the JSON
-- report: the run's events and errors).
local env = vim.env
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()
vim.cmd('filetype on')

local report = { events = {}, errors = {} }
local finish = kit.finisher(report)

local ok, err = pcall(function()
  local root = vim.fs.dirname(env.SCENARIO_FILE)
  -- pyright for every Python buffer, as a user's config would start it
  -- (lib.py too, when the plugin loads it to ask about it).
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'python',
    callback = function(args)
      vim.lsp.start({ name = 'pyright', cmd = { env.SCENARIO_PYRIGHT, '--stdio' }, root_dir = root }, { bufnr = args.buf })
    end,
  })
  -- pyright's first analysis (typeshed's builtins) takes seconds: the
  -- run starts once it has published for the buffer, a warm server.
  local published = false
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    callback = function()
      published = true
    end,
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SCENARIO_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  local tandem = require('tandem')
  -- The bound on the diagnostics wait is raised for a loaded machine; the
  -- wait ends as soon as pyright has published for the edited version.
  tandem.setup({ cmd = { env.TANDEM_BIN, 'lsp' }, permission_mode = 'acceptEdits', settings = { timeouts = { diagnosticsMs = 30000 } } })
  local attached = vim.wait(20000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = bufnr }) > 0
      and #vim.lsp.get_clients({ name = 'pyright', bufnr = bufnr }) > 0
  end, 20)
  if not attached then
    error('tandem and pyright did not both attach')
  end
  if not vim.wait(30000, function() return published end, 20) then
    error('pyright published no diagnostics for the buffer in 30 s')
  end
  local client = vim.lsp.get_clients({ name = 'tandem' })[1]
  local original = tandem.handlers['tandem/runEvent']
  client.handlers['tandem/runEvent'] = function(e, params, ctx)
    table.insert(report.events, params.event)
    return original(e, params, ctx)
  end
  local done = false
  client:request('workspace/executeCommand', {
    command = 'tandem.ask',
    arguments = { { prompt = 'Break it and look around', textDocument = { uri = vim.uri_from_bufnr(bufnr) } } },
  }, function(request_err, result)
    report.ask_error = request_err and (request_err.message or vim.inspect(request_err)) or nil
    report.result = result
    done = true
  end, bufnr)
  if not vim.wait(90000, function() return done end, 20) then
    error('the run did not finish in 90 s')
  end
  report.buffer = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
