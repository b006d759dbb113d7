-- The transcript buffer (Markdown): every run gets a header and an end
-- marker, code-action runs included; tool calls of sub-agents (events with
-- a `parent` call id) are indented under their parent; the edits a run made
-- are listed as `path:line` links (<CR> or gF opens the changed place).
-- Windows showing the transcript follow new text unless the user moved the
-- cursor up.
local M = {}

local state = { bufnr = nil, run_id = nil, header_written = false, in_sub = false }

local function buffer()
  if state.bufnr and vim.api.nvim_buf_is_valid(state.bufnr) then
    return state.bufnr
  end
  state.bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(state.bufnr, 'tandem://transcript')
  vim.bo[state.bufnr].filetype = 'markdown'
  vim.keymap.set('n', '<CR>', function()
    M.open_link(vim.api.nvim_get_current_line())
  end, { buffer = state.bufnr, desc = 'Tandem: open the changed place under the cursor' })
  return state.bufnr
end

--- Run `change` on the buffer, then keep following windows at the end.
local function append(change)
  local bufnr = buffer()
  local before = vim.api.nvim_buf_line_count(bufnr)
  local following = {}
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    if vim.api.nvim_win_get_cursor(win)[1] >= before then
      table.insert(following, win)
    end
  end
  change(bufnr)
  local last = vim.api.nvim_buf_line_count(bufnr)
  for _, win in ipairs(following) do
    pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
  end
end

local function add_lines(lines)
  append(function(bufnr)
    local count = vim.api.nvim_buf_line_count(bufnr)
    local first = vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1]
    if count == 1 and first == '' then
      vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, lines)
    else
      vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, lines)
    end
  end)
end

local SUB = '    │ '

--- Stream text onto the last line; new lines of a sub-agent are indented.
local function add_text(text, sub)
  if sub ~= state.in_sub then
    add_lines({ sub and SUB or '' })
    state.in_sub = sub
  end
  append(function(bufnr)
    local last = vim.api.nvim_buf_line_count(bufnr)
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
  local title = prompt and vim.split(prompt, '\n', { plain = true })[1] or 'Tandem run'
  local bufnr = buffer()
  local empty = vim.api.nvim_buf_line_count(bufnr) == 1 and vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] == ''
  -- A blank line before (unless first), the heading, a blank line, and the
  -- line the run's text streams onto.
  add_lines(empty and { '## ' .. title, '', '' } or { '', '## ' .. title, '', '' })
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

--- What a tool call is about, for one line.
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
  local indent = sub and SUB or ''
  if event.type == 'text' then
    add_text(event.text or '', sub)
  elseif event.type == 'tool_call' then
    add_lines({ '', indent .. '→ `' .. call_summary(event) .. '`' })
    state.in_sub = sub
  elseif event.type == 'tool_result' then
    local first = vim.split(event.content or '', '\n', { plain = true })[1] or ''
    add_lines({ indent .. (event.is_error and '  ✗ ' or '  ✓ ') .. first, indent })
  elseif event.type == 'retry' then
    add_lines({ '', string.format('_retrying (attempt %s): %s_', tostring(event.attempt), event.reason or '') })
  elseif event.type == 'end' then
    M.finish(event.status, event.text)
  end
end

--- Empty the transcript (a new conversation starts).
function M.clear()
  local bufnr = buffer()
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, {})
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
function M.edits(edits, changed_lines)
  if not edits or #edits == 0 then
    return
  end
  local lines = { '', 'Edits:' }
  for _, edit in ipairs(edits) do
    local path = vim.fn.fnamemodify(vim.uri_to_fname(edit.uri), ':~:.')
    local line = changed_lines and changed_lines[edit.uri] or 1
    table.insert(lines, string.format('- %s: %s:%d', edit.status, path, line))
  end
  add_lines(lines)
end

--- Open `path:line` from a transcript line in the previous window.
function M.open_link(text)
  local path, line = text:match('([^%s]+):(%d+)%s*$')
  if not path then
    return false
  end
  vim.cmd('wincmd p')
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  pcall(vim.api.nvim_win_set_cursor, 0, { tonumber(line), 0 })
  return true
end

function M.lines()
  return vim.api.nvim_buf_get_lines(buffer(), 0, -1, false)
end

function M.show()
  local bufnr = buffer()
  if #vim.fn.win_findbuf(bufnr) > 0 then
    return
  end
  vim.cmd('botright vsplit')
  vim.api.nvim_win_set_buf(0, bufnr)
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  vim.cmd('wincmd p')
end

return M
