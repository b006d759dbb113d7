-- What the plugin knows about the server and the run, for the statusline
-- (`require('tandem').status()`) and `:checkhealth tandem`.
local M = {
  run_id = nil, -- the active run, from tandem/runEvent or the ask
  activity = nil, -- the latest progress message ("edit_file notes.txt")
  reviewing = nil, -- the label of the edit being reviewed
  last_status = nil, -- how the last run ended
  ended_runs = {}, -- run ids whose end event came
}

--- Every window's statusline: the chat and the file windows show it.
local function redraw()
  pcall(vim.cmd, 'redrawstatus!')
end

function M.set_run(run_id)
  M.run_id = run_id
  M.activity = nil
  redraw()
end

function M.set_activity(message)
  M.activity = message
  redraw()
end

function M.set_reviewing(label)
  M.reviewing = label
  redraw()
end

--- The run's end event came (it was cancelled, or it finished).
function M.ended(run_id)
  if run_id then
    M.ended_runs[run_id] = true
  end
end

function M.finish(status)
  M.run_id = nil
  M.activity = nil
  M.reviewing = nil
  M.last_status = status
  redraw()
end

--- A short statusline text: '' when Tandem is not attached to any buffer.
function M.status(attached)
  if not attached then
    return ''
  end
  if M.reviewing then
    return 'Tandem: review'
  end
  if M.run_id then
    if M.activity and M.activity ~= '' then
      return 'Tandem: ' .. M.activity
    end
    return 'Tandem: working'
  end
  return 'Tandem'
end

return M
