-- Run by tests/editors/nvim.rs (`nvim -l`) with no model configured
-- anywhere: :TandemAsk's message is one line naming :help tandem-model
-- (the transcript keeps the whole advice), and that help tag exists.
-- Writes what was shown to NO_MODEL_OUT as JSON.
local env = vim.env
vim.opt.rtp:prepend(env.PLUGIN_DIR)
vim.cmd.runtime('plugin/tandem.lua')
local tandem = require('tandem')
tandem.setup({ cmd = { env.TANDEM_BIN, 'lsp' } })
local report = { messages = {} }
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(report.messages, message)
  return notify(message, level, opts)
end
vim.cmd.edit('notes.txt')
report.attached = vim.wait(20000, function()
  local client = tandem.client()
  return client ~= nil and client.initialized == true
end, 50)
vim.cmd('TandemAsk say hello')
report.answered = vim.wait(20000, function()
  for _, message in ipairs(report.messages) do
    if message:find('no model', 1, true) or message:find('did not start', 1, true) then
      return true
    end
  end
  return false
end, 50)
report.transcript = table.concat(require('tandem.transcript').lines and require('tandem.transcript').lines() or {}, '\n')
report.help = pcall(vim.cmd, 'help tandem-model')
report.help_line = report.help and vim.api.nvim_get_current_line() or ''
local file = assert(io.open(env.NO_MODEL_OUT, 'w'))
file:write(vim.json.encode(report))
file:close()
