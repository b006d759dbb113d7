-- A thread's past replayed in the transcript (tests/editors/nvim.rs): a
-- run whose `edits` event says `undone` (tandem.transcript, the run's
-- checkpoint undone since) is shown undone; one not undone is not. No
-- server: the events are given as tandem.transcript answers them.
--
-- Environment: TANDEM_PLUGIN, SCENARIO_OUT, as in ask_scenario.lua.
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {} }
local finish = kit.finisher(report)

local ok, err = pcall(function()
  local transcript = require('tandem.transcript')
  local edit = { uri = vim.uri_from_fname(vim.fn.getcwd() .. '/notes.txt'), status = 'applied', ranges = { { startLine = 2 } } }
  transcript.replay({
    { type = 'prompt', text = 'first' },
    { type = 'end', status = 'completed', text = 'Done.' },
    { type = 'edits', edits = { edit }, summary = '1 edit: 1 applied.', checkpoint = 'c1', undone = true },
    { type = 'prompt', text = 'second' },
    { type = 'end', status = 'completed', text = 'Done.' },
    { type = 'edits', edits = { edit }, summary = '1 edit: 1 applied.', checkpoint = 'c2', undone = false },
  }, 0)
  report.lines = transcript.lines()
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
