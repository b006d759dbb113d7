-- Configuration for Neovim's `vim.lsp.config` / `vim.lsp.enable('tandem')`:
-- the same settings, capabilities and handlers as require('tandem').setup()
-- (configure them with require('tandem').config or setup()).
local config = require('tandem').lsp_config()
config.name = nil
return config
