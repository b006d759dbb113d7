-- The transcript buffer (Markdown): every run gets a header and an end
-- marker, code-action runs included; tool calls of sub-agents (events with
-- a `parent` call id) are indented under their parent; the edits a run made
-- are listed as `path:line` links (<CR> or gF opens the changed place).
-- Windows showing the transcript follow new text unless the user moved the
-- cursor up. The chat (lua/tandem/chat.lua) adds a prompt area at the end of
-- the same buffer: a separator line, then what the user types; the
-- transcript's text then grows above the separator.
local M = {}

local state = { bufnr = nil, run_id = nil, header_written = false, in_sub = false, prompt_mark = nil, body_rows = {} }

-- The separator's extmark (it moves with the line as text is added above).
local ns = vim.api.nvim_create_namespace('tandem_chat')

--- The separator line between the transcript and the chat's prompt area.
M.SEPARATOR = '───── message ─────'

--- Tool results show this many lines (folded), then say how many more.
M.BODY_LINES = 40

local function buffer()
  if state.bufnr and vim.api.nvim_buf_is_valid(state.bufnr) then
    return state.bufnr
  end
  state.bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(state.bufnr, 'tandem://transcript')
  vim.bo[state.bufnr].filetype = 'markdown'
  -- Its statusline shows the run's (require('tandem').status()).
  vim.b[state.bufnr].tandem_transcript = true
  -- Markdown's syntax marks an underscore inside a word (`task_id`, a
  -- path) as an error, in red; the transcript is full of them.
  vim.api.nvim_buf_call(state.bufnr, function()
    vim.cmd('silent! syntax clear markdownError')
  end)
  vim.keymap.set('n', '<CR>', function()
    if not require('tandem.chat').enter() then
      M.open_link(vim.api.nvim_get_current_line())
    end
  end, { buffer = state.bufnr, desc = 'Tandem: send the message (prompt area), or open the place under the cursor' })
  return state.bufnr
end

M.buffer = buffer

--- The number of transcript lines: the separator's row when the chat's
--- prompt area exists, else the whole buffer.
local function limit(bufnr)
  if state.prompt_mark then
    local pos = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns, state.prompt_mark, {})
    if pos and pos[1] then
      return pos[1]
    end
    state.prompt_mark = nil
  end
  return vim.api.nvim_buf_line_count(bufnr)
end

--- Run `change` on the buffer, then keep following windows at the end of
--- the transcript (a cursor in the chat's prompt area stays where it is).
local function append(change)
  local bufnr = buffer()
  local before = limit(bufnr)
  local following = {}
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    local row = vim.api.nvim_win_get_cursor(win)[1]
    if row >= before and (not state.prompt_mark or row <= math.max(before, 1)) then
      table.insert(following, win)
    end
  end
  change(bufnr)
  local last = math.max(limit(bufnr), 1)
  for _, win in ipairs(following) do
    pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
  end
end

local function add_lines(lines)
  append(function(bufnr)
    local count = limit(bufnr)
    local first = vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1]
    if count == 1 and first == '' then
      vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, lines)
    else
      vim.api.nvim_buf_set_lines(bufnr, count, count, false, lines)
    end
  end)
end

--- Lines of a tool result beyond its first: shown indented and folded
--- (see M.foldexpr), at most M.BODY_LINES of them.
local function add_body(lines, indent)
  if #lines == 0 then
    return
  end
  local shown = {}
  for i = 1, math.min(#lines, M.BODY_LINES) do
    shown[i] = indent .. '    ' .. lines[i]
  end
  if #lines > M.BODY_LINES then
    table.insert(shown, string.format('%s    … %d more lines', indent, #lines - M.BODY_LINES))
  end
  local bufnr = buffer()
  local first = limit(bufnr) + 1
  -- Marked before the lines go in: Neovim evaluates 'foldexpr' for new
  -- lines as they are set, so the result is folded as it streams (marked
  -- after, only a later change would fold it).
  for row = first, first + #shown - 1 do
    state.body_rows[row] = true
  end
  add_lines(shown)
end

--- 'foldexpr' for windows showing the transcript: a tool result's lines
--- after its first are folded.
function M.foldexpr(lnum)
  return state.body_rows[lnum] and '1' or '0'
end

--- Fold tool results in `win` (closed until opened with |zo|).
function M.set_folds(win)
  vim.wo[win].foldmethod = 'expr'
  vim.wo[win].foldexpr = "v:lua.require'tandem.transcript'.foldexpr(v:lnum)"
  vim.wo[win].foldlevel = 0
  vim.wo[win].foldenable = true
end

--- Add the chat's prompt area (a separator line and an empty line to type
--- on) at the end of the buffer, once.
function M.enable_prompt()
  local bufnr = buffer()
  if state.prompt_mark and limit(bufnr) < vim.api.nvim_buf_line_count(bufnr) then
    return
  end
  local count = vim.api.nvim_buf_line_count(bufnr)
  local empty = count == 1 and vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] == ''
  local row = empty and 0 or count
  vim.api.nvim_buf_set_lines(bufnr, row, empty and 1 or row, false, { M.SEPARATOR, '' })
  state.prompt_mark = vim.api.nvim_buf_set_extmark(bufnr, ns, row, 0, {
    virt_text = { { '  <CR> (normal mode) sends · @file · #selection · :help tandem-chat', 'Comment' } },
    virt_text_pos = 'eol',
    -- Lines added above the separator push it down: the mark goes with it.
    right_gravity = true,
  })
end

--- The separator's row (1-based), or nil when there is no prompt area.
function M.prompt_row()
  local bufnr = buffer()
  if not state.prompt_mark then
    return nil
  end
  local row = limit(bufnr)
  if row >= vim.api.nvim_buf_line_count(bufnr) then
    return nil
  end
  return row + 1
end

--- What the user typed in the prompt area.
function M.prompt_lines()
  local row = M.prompt_row()
  if not row then
    return {}
  end
  return vim.api.nvim_buf_get_lines(buffer(), row, -1, false)
end

--- Empty the prompt area (after sending).
function M.clear_prompt()
  local row = M.prompt_row()
  if row then
    vim.api.nvim_buf_set_lines(buffer(), row, -1, false, { '' })
  end
end

local SUB = '    │ '

--- Stream text onto the last line; new lines of a sub-agent are indented.
local function add_text(text, sub)
  if sub ~= state.in_sub then
    add_lines({ sub and SUB or '' })
    state.in_sub = sub
  end
  append(function(bufnr)
    local last = limit(bufnr)
    if last == 0 then
      vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '' })
      last = 1
    end
    local current = vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1] or ''
    local parts = vim.split(text, '\n', { plain = true })
    parts[1] = current .. parts[1]
    for i = 2, #parts do
      parts[i] = (sub and SUB or '') .. parts[i]
    end
    vim.api.nvim_buf_set_lines(bufnr, last - 1, last, false, parts)
  end)
end

--- A run's header. `prompt` is nil for a run the plugin did not start.
function M.header(prompt)
  local prompt_lines = prompt and vim.split(prompt, '\n', { plain = true }) or { 'Tandem run' }
  local bufnr = buffer()
  local count = limit(bufnr)
  local empty = count == 0 or (count == 1 and vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] == '')
  -- A blank line before (unless first), the heading (the prompt's first
  -- line; its other lines quoted below), a blank line, and the line the
  -- run's text streams onto.
  local lines = empty and { '## ' .. prompt_lines[1] } or { '', '## ' .. prompt_lines[1] }
  for i = 2, #prompt_lines do
    table.insert(lines, '> ' .. prompt_lines[i])
  end
  vim.list_extend(lines, { '', '' })
  add_lines(lines)
  state.header_written = true
  state.in_sub = false
end

function M.start(prompt)
  state.run_id = nil
  M.header(prompt)
  M.show()
end

function M.run_id()
  return state.run_id
end

--- What a tool call is about, for one line: its tool and subject
--- ("edit_file notes.txt"); the statusline shows it too.
local function call_summary(event)
  if type(event.summary) == 'string' and event.summary ~= '' then
    local first = vim.split(event.summary, '\n', { plain = true })[1]
    return (event.name or '?') .. ' ' .. first
  end
  local input = type(event.input) == 'table' and event.input or {}
  local subject = input.file_path or input.command or input.pattern or input.path or input.url
  if type(subject) == 'string' then
    return (event.name or '?') .. ' ' .. vim.split(subject, '\n', { plain = true })[1]
  end
  return event.name or '?'
end

M.call_summary = call_summary

--- How each run event type is shown, by `type`; `false`: not shown in
--- the transcript (the status line, the health check or the run's end
--- marker say it). `M.unhandled()` names the types of the generated
--- protocol table (`tandem.protocol`, from the server's Rust types) this
--- table does not: the tests fail on any.
local show = {
  text = function(event, sub)
    add_text(event.text or '', sub)
  end,
  tool_call = function(event, sub, indent)
    add_lines({ '', indent .. '→ `' .. call_summary(event) .. '`' })
    state.in_sub = sub
  end,
  tool_result = function(event, _, indent)
    local content = vim.split(event.content or '', '\n', { plain = true })
    -- An edit partly applied (or that nobody knows landed) is neither done nor refused.
    local edit = event.edit and event.edit.status
    local mark = (edit == 'partial' or edit == 'unknown') and '  ◐ ' or event.is_error and '  ✗ ' or '  ✓ '
    add_lines({ indent .. mark .. (content[1] or '') })
    add_body(vim.list_slice(content, 2), indent)
    add_lines({ indent })
  end,
  todo = function(event, sub)
    if sub then
      return
    end
    -- The model's todo list, whole each time it changes (todo_write).
    local done = 0
    local items = {}
    for _, item in ipairs(event.todos or {}) do
      local box = ({ completed = '[x]', in_progress = '[~]' })[item.status] or '[ ]'
      if item.status == 'completed' then
        done = done + 1
      end
      table.insert(items, '- ' .. box .. ' ' .. vim.split(item.content or '', '\n', { plain = true })[1])
    end
    add_lines({ '', string.format('**Todo (%d/%d)**', done, #items) })
    add_lines(items)
  end,
  finding = function(event)
    -- A review's finding (report_finding); vim.diagnostic has it too.
    local f = event.finding or {}
    local lines = f.start_line == f.end_line and tostring(f.start_line) or (tostring(f.start_line) .. '-' .. tostring(f.end_line))
    local title = vim.split(f.title or '', '\n', { plain = true })[1]
    add_lines({ '', string.format('**Finding %s** %s `%s:%s`: %s', f.id or '?', f.severity or '', f.file_path or '?', lines, title) })
  end,
  task_started = function(event)
    local command = vim.split(event.command or '', '\n', { plain = true })[1]
    add_lines({ '', string.format('_task %s started in the background: `%s`_', event.task_id or '?', command) })
  end,
  task_ended = function(event)
    local command = vim.split(event.command or '', '\n', { plain = true })[1]
    local how = event.status == 'exited' and event.exit_code ~= nil and ('exited with code ' .. tostring(event.exit_code)) or (event.status or 'ended')
    add_lines({ '', string.format('_task %s %s: `%s`_', event.task_id or '?', how, command) })
  end,
  retry = function(event)
    add_lines({ '', string.format('_retrying (attempt %s): %s_', tostring(event.attempt), event.reason or '') })
  end,
  ['end'] = function(event)
    M.finish(event.status, event.text)
  end,
  provider = false,
  status = false,
  thinking = false,
  compact = false,
  hook = false,
  sandbox = false,
  waiting = false,
  -- An edit confirmed late: the run's edits at its end say what it became.
  effect_changed = false,
  -- The server asks it (a prompt), never sends it as an event.
  question = false,
}

--- The run event types of `tandem.protocol` that `show` does not name,
--- and the ones it names that the protocol does not have.
function M.unhandled()
  local protocol = require('tandem.protocol')
  local missing, unknown = {}, {}
  for _, event_type in ipairs(protocol.order) do
    if show[event_type] == nil then
      table.insert(missing, event_type)
    end
  end
  for event_type in pairs(show) do
    if protocol.run_events[event_type] == nil then
      table.insert(unknown, event_type)
    end
  end
  table.sort(unknown)
  return missing, unknown
end

--- One `tandem/runEvent`.
function M.append(params)
  local event = params.event or {}
  if params.runId and params.runId ~= state.run_id then
    if not state.header_written then
      M.header(nil)
    end
    state.run_id = params.runId
  end
  local sub = event.parent ~= nil
  if event.type == 'edits' then
    -- A past run's edits (tandem.transcript, not a run event), as its end
    -- showed them.
    M.edits(event.edits, nil, event.summary)
    if event.undone then
      -- Undone since, by any front end or process (the run's checkpoint
      -- says so): its changes are not in place.
      add_lines({ '', '_↶ undone since (:TandemRedo puts it back)_' })
    end
    return
  end
  local shown = show[event.type]
  if shown then
    shown(event, sub, sub and SUB or '')
  end
end

--- Empty the transcript (a new conversation starts).
function M.clear()
  local bufnr = buffer()
  vim.api.nvim_buf_set_lines(bufnr, 0, limit(bufnr), false, {})
  state.body_rows = {}
  state.run_id = nil
  state.header_written = false
  state.in_sub = false
end

--- Show a thread's past (the events of `tandem.transcript`) in place of
--- what the transcript held: each run's heading is its prompt, then its
--- text, tool calls and end, as they were shown live.
function M.replay(events, omitted)
  M.clear()
  if omitted and omitted > 0 then
    add_lines({ string.format('_(%d earlier events of this conversation are not shown)_', omitted) })
  end
  for _, event in ipairs(events or {}) do
    if event.type == 'prompt' then
      if state.header_written then
        M.finish(nil)
      end
      M.header(event.text)
    else
      M.append({ event = event })
    end
  end
end

--- The end marker of the current run (once per run).
function M.finish(status, text)
  if not state.header_written then
    return
  end
  add_lines({ '', string.format('**— %s —**', status or 'done') })
  if status ~= 'completed' and text and text ~= '' then
    add_lines(vim.split(text, '\n', { plain = true }))
  end
  state.header_written = false
  state.in_sub = false
end

--- The edits a run made, as links to the changed place.
function M.edits(edits, changed_lines, summary)
  if not edits or #edits == 0 then
    return
  end
  local lines = { '', 'Edits: ' .. require('tandem.edits').summary(edits, summary) }
  for _, edit in ipairs(edits) do
    local path = vim.fn.fnamemodify(vim.uri_to_fname(edit.uri), ':~:.')
    -- One link per changed range; an edit with none (declined, or from a
    -- server without ranges) links to its first changed line, if known.
    local starts = {}
    for _, span in ipairs(edit.ranges or {}) do
      table.insert(starts, span.startLine)
    end
    if #starts == 0 then
      starts = { changed_lines and changed_lines[edit.uri] or 1 }
    end
    for _, line in ipairs(starts) do
      table.insert(lines, string.format('- %s: %s:%d', require('tandem.edits').label(edit), path, line))
    end
    if edit.status == 'partial' and edit.declined and #edit.declined > 0 then
      table.insert(lines, string.format('  declined: %s lines %s', path, require('tandem.edits').lines(edit.declined)))
    end
  end
  add_lines(lines)
end

--- Open `path:line` from a transcript line: in a window already showing
--- the file, else in the previous window, like |:drop|. The buffer is
--- shown as it is, unsaved changes and all (`:edit` on a modified buffer
--- would fail with E37, and reloading would lose nothing but is not ours to do).
function M.open_link(text)
  local path, line = text:match('([^%s]+):(%d+)%s*$')
  if not path then
    return false
  end
  local target = vim.fn.bufadd(vim.fn.fnamemodify(path, ':p'))
  vim.fn.bufload(target)
  vim.bo[target].buflisted = true
  local win = vim.fn.win_findbuf(target)[1]
  if not win then
    vim.cmd('wincmd p')
    win = vim.api.nvim_get_current_win()
    if vim.api.nvim_win_get_buf(win) == buffer() or not pcall(vim.api.nvim_win_set_buf, win, target) then
      -- The transcript is the only window, or the window's buffer cannot be
      -- hidden ('nohidden' with unsaved changes): open a split instead.
      vim.cmd('split')
      win = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(win, target)
    end
  end
  vim.api.nvim_set_current_win(win)
  pcall(vim.api.nvim_win_set_cursor, win, { tonumber(line), 0 })
  return true
end

--- The transcript's lines (without the chat's prompt area).
function M.lines()
  local bufnr = buffer()
  return vim.api.nvim_buf_get_lines(bufnr, 0, limit(bufnr), false)
end

function M.show()
  local bufnr = buffer()
  if #vim.fn.win_findbuf(bufnr) > 0 then
    return
  end
  vim.cmd('botright vsplit')
  vim.api.nvim_win_set_buf(0, bufnr)
  M.set_folds(0)
  vim.api.nvim_win_set_cursor(0, { math.max(limit(bufnr), 1), 0 })
  vim.cmd('wincmd p')
end

return M
