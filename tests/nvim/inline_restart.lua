-- Inline completions turned on while Tandem runs in a real headless Neovim
-- 0.12, for tests/editors/inline.rs. The plugin is set up with
-- `inline_completions` off; once the client is initialized the editor's
-- settings turn them on (`workspace/didChangeConfiguration`). Neovim says
-- `dynamicRegistration = false` for inline completions, so Tandem cannot
-- register its provider now and tells the user to restart the server; the
-- report says what Neovim advertised and what `vim.notify` showed.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN (editors/nvim), SCENARIO_INLINE
-- (the inlineCompletions settings at start, JSON), SCENARIO_OUT (the JSON
-- report).
local env = vim.env
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {}, notified = {} }
local finish = kit.finisher(report)

-- Every message shown, as Neovim's handler of window/showMessage shows it.
local notify = vim.notify
vim.notify = function(message, level, ...)
  table.insert(report.notified, { text = message, level = level })
  return notify(message, level, ...)
end

local when = kit.when

local step = kit.stepper(report, finish)

local function restart_message()
  for _, message in ipairs(report.notified) do
    if message.text:find('Restart the Tandem server', 1, true) then
      return message
    end
  end
end

local inline = vim.json.decode(env.SCENARIO_INLINE)
require('tandem').setup({ cmd = { env.TANDEM_BIN, 'lsp' }, inline_completions = inline })

local client
when(30000, function()
  client = vim.lsp.get_clients({ name = 'tandem', bufnr = 0 })[1]
  return client ~= nil and client.initialized
end, step(function(started)
  assert(started, 'the Tandem client did not start')
  report.dynamic_registration = vim.tbl_get(client.capabilities, 'textDocument', 'inlineCompletion', 'dynamicRegistration')
  report.advertised_at_start = client.server_capabilities.inlineCompletionProvider ~= nil
  local on = vim.deepcopy(inline)
  on.enabled = true
  client:notify('workspace/didChangeConfiguration', { settings = { tandem = { inlineCompletions = on } } })
  when(20000, restart_message, step(function(told)
    report.told = told
    report.message = restart_message()
    finish()
  end))
end))
