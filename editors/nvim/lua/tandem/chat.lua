-- The chat (:TandemChat): the transcript buffer with a prompt area at its
-- end. The thread reads as Markdown above a separator line; what the user
-- types below it is sent with <CR> in normal mode, continuing the thread.
-- `@path` names a workspace file (completed with the buffer's 'omnifunc',
-- typing `@` opens the menu) and `#selection` sends the last visual
-- selection of a file buffer as context, as :'<,'>TandemAsk does.
local M = {}

local transcript = require('tandem.transcript')

--- Sent messages, oldest first, for <Up>/<Down> in the prompt area.
M.history = {}
local history_index = nil

--- The file buffer and lines of the last visual selection outside the chat.
local selection = nil

--- How many workspace files the @ completion lists at most.
M.COMPLETION_LIMIT = 2000

local function notify(message, level)
  vim.notify('Tandem: ' .. message, level or vim.log.levels.INFO)
end

local function in_prompt_area(win)
  local row = transcript.prompt_row()
  return row ~= nil and vim.api.nvim_win_get_cursor(win)[1] > row
end

--- Remember the last visual selection of a file buffer (for #selection).
local function track_selection()
  vim.api.nvim_create_autocmd('ModeChanged', {
    group = vim.api.nvim_create_augroup('tandem_chat_selection', { clear = true }),
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

--- `@path` mentions in `text` that name files.
function M.mentions(text)
  local paths, seen = {}, {}
  for path in text:gmatch('@([^%s@`\'"]+)') do
    path = path:gsub('[%.,;:!?%)]+$', '')
    if not seen[path] and vim.fn.filereadable(path) == 1 then
      seen[path] = true
      table.insert(paths, path)
    end
  end
  return paths
end

--- The `tandem.ask` argument for a chat message: the text as typed, the
--- mentioned files named for the agent, `#selection` as the document and
--- range. Nil and a reason when it cannot be sent.
function M.argument(text)
  local argument = { prompt = text }
  local mentioned = M.mentions(text)
  if #mentioned > 0 then
    argument.prompt = text .. '\n\n(Files the user mentioned with @: ' .. table.concat(mentioned, ', ') .. '.)'
  end
  if text:find('#selection', 1, true) then
    if not selection or not vim.api.nvim_buf_is_valid(selection.bufnr) then
      return nil, '#selection: select lines in a file first (visual mode), then send'
    end
    local last = vim.api.nvim_buf_get_lines(selection.bufnr, selection.end_line - 1, selection.end_line, false)[1] or ''
    argument.textDocument = { uri = vim.uri_from_bufnr(selection.bufnr) }
    argument.range = {
      start = { line = selection.start_line - 1, character = 0 },
      ['end'] = { line = selection.end_line - 1, character = #last },
    }
  end
  return argument
end

--- Send what the prompt area holds. False when nothing was sent.
function M.send()
  local text = vim.trim(table.concat(transcript.prompt_lines(), '\n'))
  if text == '' then
    notify('type a message below the line first')
    return false
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
  track_selection()
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
