-- Run by tests/editors/nvim.rs after a plugin manager's init.lua (the
-- lazy.nvim spec or the vim.pack lines of :help tandem-install) has
-- installed the plugin and its binary: whether the plugin is loaded (its
-- module, its commands), which binary setup() runs, and :checkhealth
-- tandem. Writes the report to CHECK_OUT as JSON and quits.
local report = {}
local loaded, tandem = pcall(require, 'tandem')
report.loaded = loaded
report.cmd = loaded and tandem.cmd() or nil
report.command = vim.fn.exists(':TandemAsk') == 2
report.messages = vim.api.nvim_exec2('messages', { output = true }).output
-- A file opened, so setup()'s server starts and the health check finds it.
vim.cmd.edit('notes.txt')
report.attached = vim.wait(20000, function()
  return loaded and tandem.client() ~= nil and tandem.client().initialized == true
end, 50)
local health_ok, health_err = pcall(vim.cmd, 'checkhealth tandem')
report.health = health_ok and vim.api.nvim_buf_get_lines(0, 0, -1, false) or { tostring(health_err) }
local file = assert(io.open(vim.env.CHECK_OUT, 'w'))
file:write(vim.json.encode(report))
file:close()
vim.cmd('qa!')
