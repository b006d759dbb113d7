-- :TandemUndo and :TandemRedo in a real headless Neovim, for
-- tests/editors/nvim.rs: a run (acceptEdits, the scripted model) edits the
-- open buffer, writes a file that is not open and runs an approved shell
-- command that makes a file; :TandemUndo takes all three back, :TandemRedo
-- puts them back. The buffer, the files on disk and the plugin's messages
-- are captured after each step.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN, SCENARIO_FILE, SCENARIO_OUT, as
-- in ask_scenario.lua; SCENARIO_CLOSED (the file that is not open) and
-- SCENARIO_MADE (the file the command makes); SCENARIO_MODE (the
-- permission mode, acceptEdits by default: in `default` every review,
-- the run's and the undo's, is answered "A" as the user would); and
-- SCENARIO_TYPE_TOP (a line the user types at the top of the buffer after
-- the run, before the undo); SCENARIO_UNDO_KEYS (the keys, one at a time,
-- that answer the undo's review instead of "A"; the scenario then ends
-- after the undo, the review's hunk headers in the report).
local env = vim.env
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {}, messages = {}, asked = {} }
local finish = kit.finisher(report)

local function read(path)
  local file = io.open(path, 'r')
  if not file then
    return vim.NIL
  end
  local text = file:read('*a')
  file:close()
  return text
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SCENARIO_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.notify = function(message, level)
    table.insert(report.messages, { message = message, level = level })
  end
  -- The shell command's question: "Allow once".
  vim.ui.select = function(items, _, on_choice)
    table.insert(report.asked, items)
    for _, item in ipairs(items) do
      if item == 'Allow once' then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  local tandem = require('tandem')
  tandem.setup({ cmd = { env.TANDEM_BIN, 'lsp' }, permission_mode = env.SCENARIO_MODE or 'acceptEdits' })
  -- Every review window that opens is answered "A" (apply all), as the user
  -- would, or the undo's with SCENARIO_UNDO_KEYS.
  report.reviews = 0
  report.undo_review = {}
  local undoing = false
  local answered = {}
  local watcher = vim.uv.new_timer()
  watcher:start(20, 20, vim.schedule_wrap(function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      local buf = vim.api.nvim_win_get_buf(win)
      if vim.b[buf].tandem_review and not answered[win] then
        answered[win] = true
        report.reviews = report.reviews + 1
        vim.api.nvim_set_current_win(win)
        if undoing and env.SCENARIO_UNDO_KEYS then
          report.undo_review = vim.tbl_filter(function(line)
            return line:find('hunk %d+/%d+') ~= nil
          end, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
          for key in env.SCENARIO_UNDO_KEYS:gmatch('.') do
            vim.api.nvim_feedkeys(key, 'x', false)
          end
        else
          vim.api.nvim_feedkeys('A', 'x', false)
        end
      end
    end
  end))
  if not vim.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = 0 }) > 0
  end, 20) then
    error('the tandem server did not attach')
  end

  -- Run a command and wait (bounded) for the plugin's message that starts
  -- with `prefix`; returns it.
  local function until_message(command, prefix)
    local seen = #report.messages
    vim.cmd(command)
    local found = nil
    if not vim.wait(60000, function()
      for i = seen + 1, #report.messages do
        if report.messages[i].message:find(prefix, 1, true) == 1 then
          found = report.messages[i].message
        end
      end
      return found ~= nil
    end, 20) then
      error(command .. ' gave no "' .. prefix .. '" message in 60 s')
    end
    return found
  end

  local function capture()
    -- The closed file, once opened for its review (the default mode), is a buffer too.
    local closed = vim.fn.bufnr(env.SCENARIO_CLOSED)
    return {
      buffer = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false),
      closed = read(env.SCENARIO_CLOSED),
      closed_buffer = closed > 0 and vim.api.nvim_buf_is_loaded(closed) and vim.api.nvim_buf_get_lines(closed, 0, -1, false) or vim.NIL,
      made = read(env.SCENARIO_MADE),
    }
  end

  report.run = until_message('TandemAsk change things', 'Tandem: run ')
  report.after_run = capture()
  report.reviews_in_run = report.reviews
  if env.SCENARIO_TYPE_TOP then
    vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { env.SCENARIO_TYPE_TOP })
  end
  undoing = true
  report.undo = until_message(env.SCENARIO_UNDO_COMMAND or 'TandemUndo', 'Tandem: undid ')
  report.after_undo = capture()
  undoing = false
  if env.SCENARIO_UNDO_KEYS then
    watcher:stop()
    return
  end
  report.redo = until_message('TandemRedo', 'Tandem: redid ')
  report.after_redo = capture()
  report.undo_again = until_message('TandemUndo', 'Tandem: undid ')
  report.nothing = until_message('TandemUndo', 'Tandem: nothing to undo')
  watcher:stop()
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
