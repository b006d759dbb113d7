-- A run's edits as `tandem.ask` answers them (docs/protocol.md): each has a
-- `status` (applied | partial | rejected | not_applied | superseded |
-- written) and `ranges`, the lines it changed; a partial edit also has
-- `declined`. This module words them for people, the way the server's
-- other front ends do: "3 edits: 2 applied, 1 declined. Changed: …".
local M = {}

local WORDS = {
  applied = 'applied',
  written = 'applied',
  partial = 'partly applied',
  rejected = 'declined',
  not_applied = 'not applied',
  superseded = 'superseded',
}

local ORDER = { 'applied', 'partly applied', 'declined', 'not applied', 'superseded' }

--- The words for an edit status.
function M.words(status)
  return WORDS[status] or tostring(status)
end

--- The change is (at least partly) in the file.
function M.landed(edit)
  return edit.status == 'applied' or edit.status == 'written' or edit.status == 'partial'
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
--- With no edits: "No edits."
function M.summary(edits)
  edits = edits or {}
  if #edits == 0 then
    return 'No edits.'
  end
  local counts = {}
  for _, edit in ipairs(edits) do
    local words = M.words(edit.status)
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
