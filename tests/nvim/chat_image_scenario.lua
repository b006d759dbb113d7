-- Drives the chat (:TandemChat) in a real headless Neovim, for
-- tests/editors/nvim.rs (issue 50): a message naming an image with
-- `@shot.png` typed in the prompt area and sent with <CR>; the report has
-- the answer to tandem.ask and the chat's lines. The test reads the
-- thread the server saved, whose first message must carry the image.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN, SCENARIO_FILE, SCENARIO_OUT (as
-- ask_scenario.lua); the scripted model is set up by the test.
local env = vim.env
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {}, results = {} }
local finish = kit.finisher(report)

local function keys(text)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(text, true, false, true), 'mx', false)
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SCENARIO_FILE))
  local tandem = require('tandem')
  tandem.setup({ cmd = { env.TANDEM_BIN, 'lsp' } })
  if not vim.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = 0 }) > 0
  end, 20) then
    error('the tandem server did not attach')
  end
  local client = vim.lsp.get_clients({ name = 'tandem' })[1]
  local request = client.request
  client.request = function(self, method, params, handler, ...)
    if method == 'workspace/executeCommand' and params.command == 'tandem.ask' then
      report.argument = params.arguments[1]
      local inner = handler
      handler = function(request_err, result, ...)
        local ret = inner(request_err, result, ...)
        table.insert(report.results, result or { error = request_err and request_err.message })
        return ret
      end
    end
    return request(self, method, params, handler, ...)
  end
  vim.cmd('TandemChat')
  keys('iWhat is in @shot.png?<Esc>')
  keys('<CR>')
  if not vim.wait(30000, function()
    return #report.results >= 1
  end, 20) then
    error('the run did not finish')
  end
  report.chat = require('tandem.transcript').lines()
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
