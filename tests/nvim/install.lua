-- Run by tests/editors/nvim.rs (`nvim -l`): the plugin's installer
-- (lua/tandem/install.lua) from local folders standing in for a release:
-- a good one into the default folder (stdpath('data'), under the test's
-- XDG_DATA_HOME), one whose SHA256SUMS does not match, and a folder that
-- cannot be made. Writes what each returned to INSTALL_OUT as JSON.
local env = vim.env
vim.opt.rtp:prepend(env.PLUGIN_DIR)
local install = require('tandem.install')
local report = {}
report.path, report.err = install.install({ source = env.INSTALL_SOURCE })
report.cmd = require('tandem').cmd()
report.bad_path, report.bad_err = install.install({ source = env.INSTALL_BAD_SOURCE, dir = env.INSTALL_BAD_DIR })
report.nodir_path, report.nodir_err = install.install({ source = env.INSTALL_SOURCE, dir = env.INSTALL_FILE .. '/bin' })
local file = assert(io.open(env.INSTALL_OUT, 'w'))
file:write(vim.json.encode(report))
file:close()
