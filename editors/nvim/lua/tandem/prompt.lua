-- Tandem's questions (`window/showMessageRequest`): a shell command to
-- allow or deny, a hook to trust, the plan to accept. Their message has
-- many lines (the whole command, every line, and why it was asked), and
-- picker plugins behind vim.ui.select show a prompt on one line: so the
-- whole message is shown in a floating window while vim.ui.select offers
-- the actions. The float closes once answered. Closing the picker without
-- choosing answers nothing (for a permission: deny). When the server
-- withdraws the question (`$/cancelRequest`), the picker and the float
-- close and a later choice is ignored.
local M = {}

local await = require('tandem.await')
local review = require('tandem.review')
local visible = require('tandem.visible')

--- The `window/showMessageRequest` handler of the Tandem client: the chosen
--- action, or vim.NIL when dismissed or withdrawn.
function M.show_message_request(_, params)
  params = params or {}
  local actions = params.actions or {}
  local message = params.message or ''
  local lines = vim.split(message, '\n', { plain = true })
  local titles = {}
  for _, action in ipairs(actions) do
    table.insert(titles, action.title)
  end
  if #titles == 0 then
    vim.notify(visible.text(message), params.type == 1 and vim.log.levels.ERROR or vim.log.levels.WARN)
    return vim.NIL
  end
  local close = review.show_float('Tandem asks', lines, { filetype = 'markdown', mark = 'tandem_prompt' })
  local choice = await.answer(function(settle)
    -- The picker's prompt and items are drawn in the message area, where a
    -- control character acts: shown visibly (the float's buffer shows them itself).
    vim.ui.select(titles, { prompt = visible.text(lines[1]), kind = 'tandem_prompt', format_item = visible.text }, settle)
  end, await.request_id(params))
  close()
  if choice == await.WITHDRAWN then
    vim.notify('Tandem: the question was withdrawn (the run was cancelled or stopped waiting)', vim.log.levels.WARN)
    return vim.NIL
  end
  for _, action in ipairs(actions) do
    if action.title == choice then
      return action
    end
  end
  return vim.NIL
end

return M
