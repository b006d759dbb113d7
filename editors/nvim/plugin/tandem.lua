-- User commands for Tandem. The language server itself is started by
-- require('tandem').setup() or by `vim.lsp.enable('tandem')`.
if vim.g.loaded_tandem then
  return
end
vim.g.loaded_tandem = true

-- `:help tandem` works at once: doc/tags ships with the plugin; if it is
-- missing (a copy without it) and the folder is writable, generate it.
do
  local source = debug.getinfo(1, 'S').source:sub(2)
  local doc = vim.fs.joinpath(vim.fs.dirname(vim.fs.dirname(source)), 'doc')
  if vim.uv.fs_stat(doc) and not vim.uv.fs_stat(vim.fs.joinpath(doc, 'tags')) then
    pcall(vim.cmd.helptags, vim.fn.fnameescape(doc))
  end
end

-- The chat's #selection and #buffer mean what you did before :TandemChat
-- too: the last visual selection and file buffer are remembered from now.
require('tandem.chat').track()

vim.api.nvim_create_user_command('TandemAsk', function(opts)
  local range = nil
  if opts.range > 0 then
    range = { start_line = opts.line1, end_line = opts.line2 }
  end
  require('tandem').ask(opts.args, range)
end, { nargs = '*', range = true, desc = 'Ask the Tandem agent' })

vim.api.nvim_create_user_command('TandemComment', function(opts)
  local range = nil
  if opts.range > 0 then
    range = { start_line = opts.line1, end_line = opts.line2 }
  end
  require('tandem').comment(opts.args, range)
end, { nargs = '*', range = true, desc = 'Comment on lines the Tandem run changed (sent with :TandemSendReview)' })

vim.api.nvim_create_user_command('TandemSendReview', function(opts)
  require('tandem').send_review(opts.args)
end, { nargs = '*', desc = 'Send your review comments to Tandem: they start the next turn' })

vim.api.nvim_create_user_command('TandemNew', function(opts)
  require('tandem').new_thread()
  if opts.args ~= '' then
    require('tandem').ask(opts.args, nil)
  end
end, { nargs = '*', desc = 'Start a new Tandem conversation (optionally asking at once)' })

vim.api.nvim_create_user_command('TandemResume', function(opts)
  require('tandem').resume(opts.args)
end, { nargs = '?', desc = 'Continue a saved Tandem conversation (picked from a list without an id)' })

vim.api.nvim_create_user_command('TandemCancel', function()
  require('tandem').cancel()
end, { desc = 'Cancel the running Tandem agent' })

vim.api.nvim_create_user_command('TandemTranscript', function()
  require('tandem').show_transcript()
end, { desc = 'Show the Tandem transcript' })

vim.api.nvim_create_user_command('TandemChat', function(opts)
  require('tandem').chat(opts.args)
end, { nargs = '*', desc = 'Open the Tandem chat (optionally sending a message at once)' })

vim.api.nvim_create_user_command('TandemFix', function()
  require('tandem').fix()
end, { desc = 'Ask Tandem to fix the diagnostics on the cursor line (every source)' })

vim.api.nvim_create_user_command('TandemUndo', function(opts)
  require('tandem').undo(opts.args, opts.bang)
end, { nargs = '?', bang = true, desc = "Undo the last Tandem run (or run {id}): every file it changed goes back (with !: reviewed hunk by hunk)" })

vim.api.nvim_create_user_command('TandemTrust', function()
  require('tandem').trust()
end, { desc = "Trust this folder's own Tandem settings files as they are now" })

vim.api.nvim_create_user_command('TandemTasks', function()
  require('tandem').tasks()
end, { desc = "The session's background tasks; pick a running one to stop it" })

vim.api.nvim_create_user_command('TandemRedo', function(opts)
  require('tandem').redo(opts.args)
end, { nargs = '?', desc = 'Redo the Tandem run undone last (or run {id})' })
