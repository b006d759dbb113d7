-- Run by tests/editors/nvim.rs (`nvim -l`): the binary the plugin starts
-- on Windows, decided on Linux with Windows' answers put in place of
-- Neovim's (`has('win32')`, `executable()`, `os_uname()`): the installed
-- binary is `tandem.exe` and the release target `win32-x64`. Fails (exit
-- 1, the reason on stderr) when a decision is not Windows'.
local env = vim.env
vim.opt.rtp:prepend(env.PLUGIN_DIR)
local install = require('tandem.install')
local tandem = require('tandem')
local dir = 'C:/Users/u/AppData/Local/nvim-data/tandem/bin'
install.dir = function()
  return dir
end

local windows = true
local executables = {}
vim.fn.has = function(feature)
  return (feature == 'win32' and windows) and 1 or 0
end
vim.fn.executable = function(name)
  return executables[name] and 1 or 0
end

local function check(what, got, want)
  if not vim.deep_equal(got, want) then
    error(string.format('%s: got %s, want %s', what, vim.inspect(got), vim.inspect(want)))
  end
end

-- Windows, `tandem` not on PATH, the installer's tandem.exe present.
executables[dir .. '/tandem.exe'] = true
check('the installed binary on Windows', tandem.cmd(), { dir .. '/tandem.exe', 'lsp' })
-- A `tandem` on PATH (Neovim's executable() tries PATHEXT's .exe) wins.
executables['tandem'] = true
check('tandem on PATH on Windows', tandem.cmd(), { 'tandem', 'lsp' })
-- Not Windows: the same folder's tandem.exe is not the binary.
executables['tandem'] = nil
windows = false
check('no tandem.exe off Windows', tandem.cmd(), { 'tandem', 'lsp' })

-- The release target, from libuv's uname as Windows reports it.
vim.uv.os_uname = function()
  return { sysname = 'Windows_NT', machine = 'x86_64', release = '10.0.19045', version = '' }
end
check('the release target on Windows', install.target(), 'win32-x64')
