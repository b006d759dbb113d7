-- Configuration for Neovim 0.11+'s `vim.lsp.config` / `vim.lsp.enable('tandem')`.
-- The client capability `saveDocuments` tells Tandem it may ask us to save
-- the buffers its own edits touched (see lua/tandem/init.lua).
return {
  cmd = { 'tandem', 'lsp' },
  root_markers = { '.tandem', '.git' },
  init_options = { tandem = { saveDocuments = true } },
  handlers = require('tandem').handlers,
}
