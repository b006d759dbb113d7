-- A run's edits as `tandem.ask` answers them (docs/protocol.md): each has a
-- `status` (applied | partial | rejected | not_applied | superseded |
-- unknown | written) and `ranges`, the lines it changed; a partial edit
-- also has `declined`, a file a shell command changed `command`. The
-- server words the whole list (`summary`), the same in every front end;
-- this module words one edit, and the list when a server gives no summary.
-- Each status's words and whether it landed come from the server's types
-- (`tandem.protocol`'s `edit_statuses`).
local M = {}

local protocol = require('tandem.protocol')

-- The words, in the order a summary counts them.
local ORDER = {}
for _, status in ipairs(protocol.edit_status_order) do
  local words = protocol.edit_statuses[status].words
  if not vim.tbl_contains(ORDER, words) then
    table.insert(ORDER, words)
  end
end

--- The words for an edit status.
function M.words(status)
  local known = protocol.edit_statuses[status]
  return known and known.words or tostring(status)
end

--- The words for one edit: a file a command changed is no edit of the agent's.
function M.label(edit)
  if edit.command then
    return edit.deleted and 'deleted by a command' or 'changed by a command'
  end
  return M.words(edit.status)
end

--- The change is (at least partly) in the file.
function M.landed(edit)
  local known = protocol.edit_statuses[edit.status]
  return known ~= nil and known.landed
end

--- "3-4, 10" for a list of `{startLine, endLine}`.
function M.lines(spans)
  local out = {}
  for _, span in ipairs(spans or {}) do
    if span.startLine == span.endLine then
      table.insert(out, tostring(span.startLine))
    else
      table.insert(out, string.format('%d-%d', span.startLine, span.endLine))
    end
  end
  return table.concat(out, ', ')
end

local function path_of(edit)
  return vim.fn.fnamemodify(vim.uri_to_fname(edit.uri), ':~:.')
end

--- Edits counted by status, and every changed range:
--- "2 edits: 1 applied, 1 declined. Changed: a.txt lines 3-4, 10. Not applied: b.txt (declined)."
--- With no edits: "No edits." `summary`: the server's words for them, used
--- when given.
function M.summary(edits, summary)
  edits = edits or {}
  if #edits == 0 then
    return 'No edits.'
  end
  if type(summary) == 'string' and summary ~= '' then
    return summary
  end
  local counts = {}
  for _, edit in ipairs(edits) do
    local words = M.label(edit)
    counts[words] = (counts[words] or 0) + 1
  end
  local counted = {}
  for _, words in ipairs(ORDER) do
    if counts[words] then
      table.insert(counted, string.format('%d %s', counts[words], words))
      counts[words] = nil
    end
  end
  for words, n in pairs(counts) do
    table.insert(counted, string.format('%d %s', n, words))
  end
  local parts = { string.format('%d edit%s: %s.', #edits, #edits == 1 and '' or 's', table.concat(counted, ', ')) }
  local changed, other = {}, {}
  for _, edit in ipairs(edits) do
    if M.landed(edit) then
      local where = M.lines(edit.ranges)
      local place = path_of(edit)
      if where ~= '' then
        place = string.format('%s %s %s', place, where:find('[-,]') and 'lines' or 'line', where)
      end
      if edit.status == 'partial' then
        local declined = M.lines(edit.declined)
        place = string.format('%s (partly applied; declined: %s)', place, declined ~= '' and declined or 'the rest')
      end
      table.insert(changed, place)
    else
      table.insert(other, string.format('%s (%s)', path_of(edit), M.words(edit.status)))
    end
  end
  if #changed > 0 then
    table.insert(parts, 'Changed: ' .. table.concat(changed, '; ') .. '.')
  end
  if #other > 0 then
    table.insert(parts, 'Not applied: ' .. table.concat(other, ', ') .. '.')
  end
  return table.concat(parts, ' ')
end

return M
