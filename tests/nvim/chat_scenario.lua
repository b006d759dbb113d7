-- Drives the chat (:TandemChat) in a real headless Neovim, for
-- tests/editors/nvim.rs: a message with an @file mention typed in the
-- prompt area and sent with <CR>, a follow-up on the same thread, the @
-- completion, tool results folded as they stream, a link opened on an
-- unsaved buffer, "fix this error" for a diagnostic published by another
-- source, a message with #buffer and #diagnostics, and the chat's /
-- commands (/resume from the picker and by id).
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN, SCENARIO_FILE, SCENARIO_OUT (as
-- ask_scenario.lua); the scripted model is set up by the test.
local env = vim.env
-- -u NONE loads no plugin/ scripts: kit.lua loads ours as a plugin manager would.
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {}, messages = {}, results = {} }
local finish = kit.finisher(report)

local function keys(text)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(text, true, false, true), 'mx', false)
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SCENARIO_FILE))
  local file_buf = vim.api.nvim_get_current_buf()
  vim.notify = function(message, level)
    table.insert(report.messages, { message = message, level = level })
  end
  local tandem = require('tandem')
  tandem.setup({ cmd = { env.TANDEM_BIN, 'lsp' }, permission_mode = 'acceptEdits' })
  if not vim.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = 0 }) > 0
  end, 20) then
    error('the tandem server did not attach')
  end
  local client = vim.lsp.get_clients({ name = 'tandem' })[1]
  -- Every answer to tandem.ask, in order.
  local request = client.request
  client.request = function(self, method, params, handler, ...)
    if method == 'workspace/executeCommand' and params.command == 'tandem.ask' then
      local inner = handler
      handler = function(request_err, result, ...)
        local ret = inner(request_err, result, ...)
        table.insert(report.results, result or { error = request_err and request_err.message })
        return ret
      end
    end
    return request(self, method, params, handler, ...)
  end
  local function wait_runs(count)
    if not vim.wait(30000, function()
      return #report.results >= count
    end, 20) then
      error('run ' .. count .. ' did not finish: ' .. vim.inspect(report.results))
    end
  end

  -- The user has unsaved text in the file, and selects line two before
  -- the chat is open (for #selection).
  vim.api.nvim_buf_set_lines(file_buf, 0, 1, false, { 'typed by the user' })
  keys('2GV<Esc>gg')

  -- The chat opens with the cursor on its prompt line.
  vim.cmd('TandemChat')
  local chat_win = vim.api.nvim_get_current_win()
  local chat_buf = vim.api.nvim_get_current_buf()
  report.chat_name = vim.api.nvim_buf_get_name(chat_buf)
  report.prompt_row = require('tandem.transcript').prompt_row()
  report.cursor_row = vim.api.nvim_win_get_cursor(0)[1]
  -- @ completion lists the workspace's files.
  report.completion = require('tandem.chat').omnifunc(0, 'not')

  -- Type a two-line message and send it with <CR> in normal mode.
  keys('iCapitalise line three in @notes.txt<CR>please<Esc>')
  keys('<CR>')
  wait_runs(1)
  report.after_first = vim.api.nvim_buf_get_lines(chat_buf, 0, -1, false)
  report.prompt_after_send = require('tandem.transcript').prompt_lines()
  -- Tool results are folded in the chat window as they stream in: nothing
  -- here recomputes the folds (no zx), the window shows what it got.
  report.folded = {}
  vim.api.nvim_win_call(chat_win, function()
    for row = 1, vim.api.nvim_buf_line_count(chat_buf) do
      if vim.fn.foldclosed(row) == row then
        table.insert(report.folded, vim.api.nvim_buf_get_lines(chat_buf, row - 1, row, false)[1])
      end
    end
  end)

  -- A follow-up continues the thread.
  vim.api.nvim_set_current_win(chat_win)
  vim.api.nvim_win_set_cursor(chat_win, { vim.api.nvim_buf_line_count(chat_buf), 0 })
  keys('iAnd thanks: #selection and @notes.txt:3, please<Esc>')
  keys('<CR>')
  wait_runs(2)


  -- <CR> on the edit's link opens the unsaved buffer there (no E37).
  vim.api.nvim_set_current_win(chat_win)
  local link_row = nil
  for row, line in ipairs(vim.api.nvim_buf_get_lines(chat_buf, 0, -1, false)) do
    if line:match('notes%.txt:%d+$') then
      link_row = row
    end
  end
  report.link_line = link_row and vim.api.nvim_buf_get_lines(chat_buf, link_row - 1, link_row, false)[1]
  if link_row then
    vim.api.nvim_win_set_cursor(chat_win, { link_row, 0 })
    local link_ok, link_err = pcall(keys, '<CR>')
    report.link_error = not link_ok and tostring(link_err) or nil
    report.link_opened = vim.api.nvim_buf_get_name(0)
    report.link_cursor = vim.api.nvim_win_get_cursor(0)[1]
    report.link_modified = vim.bo.modified
  end

  -- Diagnostics from another source (not a language server): the code
  -- action and :TandemFix see the one on the cursor's line.
  vim.api.nvim_set_current_buf(file_buf)
  local ns = vim.api.nvim_create_namespace('chat_scenario_lint')
  vim.diagnostic.set(ns, file_buf, {
    { lnum = 1, col = 0, end_lnum = 1, end_col = 4, message = 'line two is wrong', severity = vim.diagnostic.severity.ERROR, source = 'lint' },
    { lnum = 2, col = 0, end_lnum = 2, end_col = 4, message = 'line three shouts', severity = vim.diagnostic.severity.WARN, source = 'lint' },
  })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  report.actions = {}
  local offered = false
  vim.ui.select = function(items, opts, on_choice)
    for _, item in ipairs(items) do
      table.insert(report.actions, item.action and item.action.title or tostring(item))
    end
    offered = true
    on_choice(nil)
  end
  vim.lsp.buf.code_action()
  vim.wait(5000, function()
    return offered
  end, 20)
  vim.cmd('TandemFix')
  wait_runs(3)
  report.fix_prompt = vim.tbl_filter(function(line)
    return line:find('^## Fix this error') ~= nil
  end, require('tandem.transcript').lines())
  report.transcript = require('tandem.transcript').lines()
  report.buffer = vim.api.nvim_buf_get_lines(file_buf, 0, -1, false)

  -- From the file, back to the chat: #buffer attaches the file as the
  -- buffer has it, #diagnostics sends all of its diagnostics.
  vim.cmd('TandemChat')
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(chat_buf), 0 })
  keys('iCheck #buffer against #diagnostics<Esc>')
  keys('<CR>')
  wait_runs(4)

  -- The thread as the server saved it: every prompt, the mentions named.
  local saved = client:request_sync('workspace/executeCommand', {
    command = 'tandem.transcript', arguments = { { threadId = report.results[1].threadId } },
  }, 5000, file_buf)
  report.saved_prompts = {}
  report.saved_attachments = {}
  for _, event in ipairs(((saved or {}).result or {}).events or {}) do
    if event.type == 'prompt' then
      table.insert(report.saved_prompts, event.text)
      table.insert(report.saved_attachments, event.attachments or {})
    end
  end

  -- For the test that :help tandem-chat names what the chat has: the
  -- keys the plugin maps in its buffer in normal mode (the markdown
  -- filetype plugin's own, `]]` and the like, are Neovim's), and its /
  -- commands.
  report.chat_keys = {}
  for _, map in ipairs(vim.api.nvim_buf_get_keymap(chat_buf, 'n')) do
    if (map.desc or ''):find('^Tandem') then
      table.insert(report.chat_keys, map.lhs)
    end
  end
  report.chat_commands = vim.tbl_keys(require('tandem.chat').commands)

  -- The chat's commands: /new starts a new conversation, /resume ID shows
  -- the first one again and continues it; an unknown command is said, not sent.
  local function command(text)
    vim.cmd('TandemChat')
    local win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(vim.api.nvim_get_current_buf()), 0 })
    keys('i' .. text .. '<Esc>')
    keys('<CR>')
  end
  command('/new')
  report.thread_after_new = tandem.thread_id or vim.NIL
  report.after_new = require('tandem.transcript').lines()
  command('/nosuch')
  -- /resume alone offers the workspace's threads; the user picks the first.
  vim.ui.select = function(items, opts, on_choice)
    report.picker = vim.tbl_map(opts.format_item or tostring, items)
    on_choice(items[1])
  end
  command('/resume')
  if not vim.wait(10000, function()
    return tandem.thread_id == report.results[1].threadId
  end, 20) then
    error('/resume did not resume the thread picked')
  end
  report.after_picked = require('tandem.transcript').lines()
  command('/new')
  command('/resume ' .. report.results[1].threadId)
  if not vim.wait(10000, function()
    return tandem.thread_id == report.results[1].threadId
  end, 20) then
    error('/resume did not resume the thread')
  end
  report.after_resume = require('tandem.transcript').lines()
  report.runs_after_commands = #report.results
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
