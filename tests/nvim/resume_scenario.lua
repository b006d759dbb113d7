-- Conversation threads in a real headless Neovim, for tests/editors/nvim.rs:
-- ask (:TandemAsk), start a new conversation (:TandemNew), resume the first
-- one from the picker (:TandemResume), and ask again. The transcript is
-- captured after each step.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN, SCENARIO_FILE, SCENARIO_OUT, as
-- in ask_scenario.lua; the model is the scripted one.
local env = vim.env
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {}, messages = {} }
local finish = kit.finisher(report)

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SCENARIO_FILE))
  vim.notify = function(message, level)
    table.insert(report.messages, { message = message, level = level })
  end
  -- The picker: keep what it offers, choose the first (the most recent).
  vim.ui.select = function(items, opts, on_choice)
    report.picker = {}
    for _, item in ipairs(items) do
      table.insert(report.picker, opts.format_item and opts.format_item(item) or tostring(item))
    end
    on_choice(items[1])
  end
  local tandem = require('tandem')
  local transcript = require('tandem.transcript')
  tandem.setup({ cmd = { env.TANDEM_BIN, 'lsp' }, permission_mode = 'acceptEdits' })
  if not vim.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = 0 }) > 0
  end, 20) then
    error('the tandem server did not attach')
  end

  -- Ask through the plugin and wait (bounded) for the run's answer: the
  -- plugin says "run …" when the answer came.
  local function ask(prompt)
    local answered = nil
    local seen = #report.messages
    vim.cmd('TandemAsk ' .. prompt)
    if not vim.wait(60000, function()
      for i = seen + 1, #report.messages do
        local message = report.messages[i].message
        if message:find('^Tandem: run ') then
          answered = message
        end
      end
      return answered ~= nil
    end, 20) then
      error('the run of "' .. prompt .. '" did not finish in 60 s')
    end
    return answered
  end

  report.first_status = ask('first question')
  report.first_thread = tandem.thread_id
  report.after_first = transcript.lines()

  vim.cmd('TandemNew')
  report.thread_after_new = tandem.thread_id or vim.NIL
  report.after_new = transcript.lines()

  vim.cmd('TandemResume')
  if not vim.wait(10000, function()
    return tandem.thread_id == report.first_thread
  end, 20) then
    error('the thread was not resumed')
  end
  report.after_resume = transcript.lines()

  report.second_status = ask('second question')
  report.second_thread = tandem.thread_id
  report.after_second = transcript.lines()
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
