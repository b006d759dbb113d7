-- The chat (:TandemChat): the transcript buffer with a prompt area at its
-- end. The thread reads as Markdown above a separator line; what the user
-- types below it is sent with <CR> in normal mode, continuing the thread.
-- Mentions attach context the model sees: `@path` a workspace file's text
-- (`@path:10-20` those lines; completed with the buffer's 'omnifunc',
-- typing `@` opens the menu), `#selection` the last visual selection of a
-- file buffer (as :'<,'>TandemAsk does), `#buffer` the file buffer you
-- were in, `#diagnostics` that buffer's diagnostics, from every source.
-- The server reads the files as the editor has them (unsaved text
-- included) and keeps out what a read-deny rule covers. A message that is
-- a command (`/new`, `/resume [id]`, `/cancel`, `/undo`, `/redo`,
-- `/tasks`) runs it instead (M.commands).
local M = {}

local transcript = require('tandem.transcript')

--- Sent messages, oldest first, for <Up>/<Down> in the prompt area.
M.history = {}
local history_index = nil

--- The file buffer and lines of the last visual selection outside the chat.
local selection = nil

--- The file buffer the user was in last (for #buffer and #diagnostics).
local last_file = nil

local function is_file_buffer(bufnr)
  return vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == '' and vim.api.nvim_buf_get_name(bufnr) ~= ''
end

--- How many workspace files the @ completion lists at most.
M.COMPLETION_LIMIT = 2000

local function notify(message, level)
  vim.notify('Tandem: ' .. require('tandem.visible').text(message), level or vim.log.levels.INFO)
end

local function in_prompt_area(win)
  local row = transcript.prompt_row()
  return row ~= nil and vim.api.nvim_win_get_cursor(win)[1] > row
end

--- Remember the last visual selection of a file buffer (for #selection)
--- and the last file buffer entered (for #buffer and #diagnostics).
function M.track()
  local group = vim.api.nvim_create_augroup('tandem_chat_selection', { clear = true })
  vim.api.nvim_create_autocmd('BufEnter', {
    group = group,
    callback = function(args)
      if is_file_buffer(args.buf) then
        last_file = args.buf
      end
    end,
  })
  vim.api.nvim_create_autocmd('ModeChanged', {
    group = group,
    pattern = { '[vV\x16]*:*' },
    callback = function()
      local bufnr = vim.api.nvim_get_current_buf()
      if vim.bo[bufnr].buftype ~= '' then
        return
      end
      local first, last = vim.fn.line("'<"), vim.fn.line("'>")
      if first > 0 and last >= first then
        selection = { bufnr = bufnr, start_line = first, end_line = last }
      end
    end,
  })
end

--- Workspace files whose path starts with (or contains) `base`, relative
--- to the current directory; dot folders, node_modules and target skipped.
function M.files(base)
  local found = {}
  local skip = { ['.git'] = true, node_modules = true, target = true }
  for name, kind in vim.fs.dir('.', {
    depth = 12,
    skip = function(dir)
      local leaf = vim.fs.basename(dir)
      return not (skip[leaf] or leaf:sub(1, 1) == '.')
    end,
  }) do
    if kind == 'file' and (base == '' or name:find(base, 1, true)) then
      table.insert(found, name)
      if #found >= M.COMPLETION_LIMIT then
        break
      end
    end
  end
  table.sort(found, function(a, b)
    local a_prefix, b_prefix = vim.startswith(a, base), vim.startswith(b, base)
    if a_prefix ~= b_prefix then
      return a_prefix
    end
    return a < b
  end)
  return found
end

--- 'omnifunc' of the chat buffer: completes `@path` mentions.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line():sub(1, vim.fn.col('.') - 1)
    local at = line:match('.*()@[^%s@]*$')
    return at and at or -3 -- the column after '@' (0-based), or cancel
  end
  return M.files(base)
end

--- `@path` and `@path:FIRST-LAST` mentions in `text` that name files:
--- `{ path, first, last }` (the lines nil for the whole file).
function M.mentions(text)
  local found, seen = {}, {}
  for mention in text:gmatch('@([^%s@`\'"]+)') do
    mention = mention:gsub('[%.,;:!?%)]+$', '')
    local path, first, last = mention:match('^(.-):(%d+)%-(%d+)$')
    if not path then
      path, first = mention:match('^(.-):(%d+)$')
      last = first
    end
    if not path or vim.fn.filereadable(path) ~= 1 then
      path, first, last = mention, nil, nil
    end
    if not seen[mention] and vim.fn.filereadable(path) == 1 then
      seen[mention] = true
      table.insert(found, { path = path, first = tonumber(first), last = tonumber(last) })
    end
  end
  return found
end

--- The last visual selection of a file buffer: the one seen since the
--- chat was first opened, else the '< '> marks of a file buffer on screen
--- (the alternate one first), so a selection made before :TandemChat counts.
local function last_selection()
  if selection and vim.api.nvim_buf_is_valid(selection.bufnr) then
    return selection
  end
  local candidates = { vim.fn.bufnr('#') }
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    table.insert(candidates, vim.api.nvim_win_get_buf(win))
  end
  for _, bufnr in ipairs(candidates) do
    if bufnr > 0 and is_file_buffer(bufnr) then
      local first, last = vim.api.nvim_buf_get_mark(bufnr, '<')[1], vim.api.nvim_buf_get_mark(bufnr, '>')[1]
      if first > 0 and last >= first then
        return { bufnr = bufnr, start_line = first, end_line = last }
      end
    end
  end
  return nil
end

--- The file buffer #buffer and #diagnostics mean: the last one entered,
--- else one on screen.
local function source_buffer()
  if last_file and is_file_buffer(last_file) then
    return last_file
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local bufnr = vim.api.nvim_win_get_buf(win)
    if is_file_buffer(bufnr) then
      return bufnr
    end
  end
  return nil
end

--- A buffer's diagnostics (every source) as LSP Diagnostics.
local function lsp_diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out, {
      range = {
        start = { line = d.lnum, character = d.col },
        ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
      },
      severity = d.severity,
      message = d.message,
      source = d.source,
    })
  end
  return out
end

--- The `tandem.ask` argument for a chat message: the text as typed, the
--- `@` mentions and `#buffer` as attachments, `#selection` as the document
--- and range, `#diagnostics` as its diagnostics. Nil and a reason when it
--- cannot be sent.
function M.argument(text)
  local argument = { prompt = text }
  local attachments = {}
  for _, mention in ipairs(M.mentions(text)) do
    local attachment = { uri = vim.uri_from_fname(vim.fn.fnamemodify(mention.path, ':p')) }
    if mention.first then
      attachment.range = {
        start = { line = mention.first - 1, character = 0 },
        ['end'] = { line = mention.last - 1, character = 0 },
      }
    end
    table.insert(attachments, attachment)
  end
  local wants = function(word)
    return text:find('#' .. word, 1, true) ~= nil
  end
  if wants('buffer') or wants('diagnostics') then
    local bufnr = source_buffer()
    if not bufnr then
      return nil, '#buffer and #diagnostics: open a file first'
    end
    if wants('buffer') then
      table.insert(attachments, { uri = vim.uri_from_bufnr(bufnr) })
    end
    if wants('diagnostics') then
      argument.textDocument = { uri = vim.uri_from_bufnr(bufnr) }
      argument.diagnostics = lsp_diagnostics(bufnr)
    end
  end
  if #attachments > 0 then
    argument.attachments = attachments
  end
  if wants('selection') then
    local chosen = last_selection()
    if not chosen then
      return nil, '#selection: select lines in a file first (visual mode), then send'
    end
    local last = vim.api.nvim_buf_get_lines(chosen.bufnr, chosen.end_line - 1, chosen.end_line, false)[1] or ''
    if argument.textDocument and argument.textDocument.uri ~= vim.uri_from_bufnr(chosen.bufnr) then
      -- The diagnostics are another file's: that file goes as an attachment.
      argument.attachments = argument.attachments or {}
      table.insert(argument.attachments, { uri = argument.textDocument.uri })
      argument.diagnostics = nil
    end
    argument.textDocument = { uri = vim.uri_from_bufnr(chosen.bufnr) }
    argument.range = {
      start = { line = chosen.start_line - 1, character = 0 },
      ['end'] = { line = chosen.end_line - 1, character = #last },
    }
  end
  return argument
end

--- The chat's commands: a message that is one of these runs it instead of
--- being sent (`//text` sends `/text`): the name of the `tandem` function
--- each runs, given what follows the command (its id, when it takes one).
M.commands = { new = 'new_thread', resume = 'resume', cancel = 'cancel', undo = 'undo', redo = 'redo', tasks = 'tasks', sendreview = 'send_review' }

--- Run `text` when it is a chat command: true when it was one (or named
--- one that does not exist, which is said, not sent).
local function run_command(text)
  local name, rest = text:match('^/(%a+)%s*(.-)%s*$')
  if not name or text:find('\n') then
    return false
  end
  local command = M.commands[name]
  if not command then
    local names = vim.tbl_keys(M.commands)
    table.sort(names)
    notify(string.format('/%s is not a chat command (%s; //%s sends it as a message)', name, '/' .. table.concat(names, ' /'), name), vim.log.levels.WARN)
    return true
  end
  require('tandem')[command](rest ~= '' and rest or nil)
  return true
end

--- Send what the prompt area holds. False when nothing was sent.
function M.send()
  local text = vim.trim(table.concat(transcript.prompt_lines(), '\n'))
  if text == '' then
    notify('type a message below the line first')
    return false
  end
  if run_command(text) then
    table.insert(M.history, text)
    history_index = nil
    transcript.clear_prompt()
    return false
  end
  if text:sub(1, 2) == '//' then
    text = text:sub(2)
  end
  local argument, why = M.argument(text)
  if not argument then
    notify(why, vim.log.levels.WARN)
    return false
  end
  local bufnr = argument.textDocument and vim.uri_to_bufnr(argument.textDocument.uri) or nil
  if not require('tandem').ask_argument(argument, bufnr) then
    return false
  end
  table.insert(M.history, text)
  history_index = nil
  transcript.clear_prompt()
  return true
end

--- <CR> in the transcript buffer: sends when the cursor is in the prompt
--- area; false otherwise (the key then opens a link).
function M.enter()
  if in_prompt_area(0) then
    M.send()
    return true
  end
  return false
end

--- Replace the prompt area's text with the previous (-1) or next (1) sent message.
local function recall(step)
  if #M.history == 0 then
    return
  end
  history_index = math.max(1, math.min(#M.history + 1, (history_index or #M.history + 1) + step))
  local text = M.history[history_index] or ''
  local row = transcript.prompt_row()
  vim.api.nvim_buf_set_lines(0, row, -1, false, vim.split(text, '\n', { plain = true }))
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(0), 0 })
end

local keys_set = false

local function set_keys(bufnr)
  if keys_set then
    return
  end
  keys_set = true
  vim.bo[bufnr].omnifunc = "v:lua.require'tandem.chat'.omnifunc"
  vim.keymap.set('n', '<C-c>', function()
    require('tandem').cancel()
  end, { buffer = bufnr, desc = 'Tandem: cancel the run' })
  for key, step in pairs({ ['<Up>'] = -1, ['<Down>'] = 1 }) do
    vim.keymap.set('n', key, function()
      if in_prompt_area(0) and #M.history > 0 then
        recall(step)
      else
        vim.cmd('normal! ' .. vim.api.nvim_replace_termcodes(key, true, false, true))
      end
    end, { buffer = bufnr, desc = 'Tandem: earlier / later messages in the prompt area' })
  end
  -- Typing '@' in the prompt area opens the file menu.
  vim.api.nvim_create_autocmd('InsertCharPre', {
    buffer = bufnr,
    callback = function()
      if vim.v.char == '@' and in_prompt_area(0) then
        vim.schedule(function()
          if vim.fn.mode() == 'i' then
            vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-x><C-o>', true, false, true), 'n', false)
          end
        end)
      end
    end,
  })
end

--- :TandemChat: show the chat (the transcript with its prompt area) in a
--- window of its own, the cursor on the prompt line. With `text`, send it.
function M.open(text)
  local bufnr = transcript.buffer()
  transcript.enable_prompt()
  set_keys(bufnr)
  if vim.fn.exists('#tandem_chat_selection') == 0 then
    M.track() -- the plugin file was not sourced
  end
  local from = vim.api.nvim_get_current_buf()
  if is_file_buffer(from) then
    last_file = from
  end
  local win = vim.fn.win_findbuf(bufnr)[1]
  if not win then
    vim.cmd('botright vsplit')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, bufnr)
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
  end
  transcript.set_folds(win)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(bufnr), 0 })
  if text and text ~= '' then
    vim.api.nvim_buf_set_lines(bufnr, transcript.prompt_row(), -1, false, vim.split(text, '\n', { plain = true }))
    M.send()
  end
end

return M
