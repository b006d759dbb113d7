-- The transcript buffer: one scratch buffer showing the live run, fed by
-- `tandem/runEvent` notifications ({runId, seq, event}).
local M = {}

local state = { bufnr = nil, run_id = nil }

local function buffer()
  if state.bufnr and vim.api.nvim_buf_is_valid(state.bufnr) then
    return state.bufnr
  end
  state.bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(state.bufnr, 'tandem://transcript')
  vim.bo[state.bufnr].filetype = 'markdown'
  return state.bufnr
end

local function add_lines(lines)
  local bufnr = buffer()
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, lines)
end

local function add_text(text)
  local bufnr = buffer()
  local last = vim.api.nvim_buf_line_count(bufnr)
  local current = vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1] or ''
  local parts = vim.split(current .. text, '\n', { plain = true })
  vim.api.nvim_buf_set_lines(bufnr, last - 1, last, false, parts)
end

function M.start(prompt)
  state.run_id = nil
  add_lines({ '', '## ' .. prompt, '' })
  M.show()
end

function M.run_id()
  return state.run_id
end

function M.append(params)
  state.run_id = params.runId or state.run_id
  local event = params.event or {}
  if event.type == 'text' then
    add_text(event.text or '')
  elseif event.type == 'tool_call' then
    add_lines({ '', '→ ' .. event.name .. ' ' .. vim.json.encode(event.input or {}) })
  elseif event.type == 'tool_result' then
    local first = vim.split(event.content or '', '\n', { plain = true })[1] or ''
    add_lines({ (event.is_error and '  ✗ ' or '  ✓ ') .. first, '' })
  end
end

function M.finish(status, text)
  add_lines({ '', string.format('[%s]', status or 'done') })
  if status ~= 'completed' and text and text ~= '' then
    add_lines(vim.split(text, '\n', { plain = true }))
  end
end

function M.show()
  local bufnr = buffer()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      return
    end
  end
  vim.cmd('botright vsplit')
  vim.api.nvim_win_set_buf(0, bufnr)
  vim.cmd('wincmd p')
end

return M
