-- Drives a real headless Neovim through one Tandem run, for tests/editors/nvim.rs.
--
-- Environment: TANDEM_BIN (the binary), TANDEM_PLUGIN (editors/nvim),
-- SCENARIO_FILE (the file to open), SCENARIO_TYPED (text the "user" types on
-- line 1 before asking, left unsaved), SCENARIO_PROMPT, SCENARIO_OUT (where
-- the JSON report goes). The model is whatever TANDEM_PROVIDER says (the
-- tests use the scripted one).
local env = vim.env
-- -u NONE loads no plugin/ scripts: kit.lua loads ours as a plugin manager would.
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { events = {}, errors = {} }
local finish = kit.finisher(report)

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SCENARIO_FILE))
  -- The statusline as :help tandem-status shows it, evaluated for the
  -- file's window as Neovim draws it (the current one once a scenario
  -- closed that).
  vim.cmd([[set statusline+=%{v:lua.require'tandem'.status()}]])
  local file_win = vim.api.nvim_get_current_win()
  local function drawn_status()
    local win = vim.api.nvim_win_is_valid(file_win) and file_win or vim.api.nvim_get_current_win()
    return vim.trim(vim.api.nvim_eval_statusline(vim.o.statusline, { winid = win }).str)
  end
  -- The address (SCENARIO_NVIM_ADDR, also written into the model's script)
  -- lets the scripted model's shell step "type" into this editor mid-run,
  -- as a user would.
  vim.fn.serverstart(env.SCENARIO_NVIM_ADDR)
  -- Permission prompts: answer like a user clicking "Allow once", and keep
  -- what was asked for the report.
  report.prompts = {}
  vim.lsp.handlers['window/showMessageRequest'] = function(_, params)
    table.insert(report.prompts, params.message)
    for _, action in ipairs(params.actions or {}) do
      if action.title == env.SCENARIO_PLAN_ANSWER then
        return action
      end
    end
    for _, action in ipairs(params.actions or {}) do
      if action.title == 'Allow once' or action.title == 'Apply' then
        return action
      end
    end
    return vim.NIL
  end
  local tandem = require('tandem')
  -- SCENARIO_DEBOUNCE delays Neovim's didChange: with a long one the
  -- server sends its edit before it hears of the user's typing, and Neovim
  -- skips the stale edit yet answers applied: true.
  local debounce = tonumber(env.SCENARIO_DEBOUNCE or '') or 150
  -- SCENARIO_REVIEW: the user's answer to the plugin's edit review (keys
  -- typed into its window, below); the review on screen and the
  -- statusline at that moment go into the report.
  report.reviews = {}
  -- The plugin's questions (window/showMessageRequest): the float on
  -- screen goes into the report, and the answer is SCENARIO_PLAN_ANSWER,
  -- else SCENARIO_PROMPT_ANSWER, else "Allow once" or "Apply".
  report.asked = {}
  local function answer_prompt(items, opts, on_choice)
    local floats = {}
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      local buf = vim.api.nvim_win_get_buf(win)
      if vim.b[buf].tandem_prompt then
        table.insert(floats, {
          floating = vim.api.nvim_win_get_config(win).relative ~= '',
          lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
        })
      end
    end
    local wanted_answer = env.SCENARIO_PROMPT_ANSWER
    if wanted_answer == 'LateAllow' then
      -- A picker plugin's floating window stays open until the server
      -- withdraws the question (its prompt timeout); the plugin should
      -- close it. The user then presses "Allow once" anyway.
      local picker_buf = vim.api.nvim_create_buf(false, true)
      vim.api.nvim_buf_set_lines(picker_buf, 0, -1, false, items)
      local picker = vim.api.nvim_open_win(picker_buf, false, {
        relative = 'editor', row = 2, col = 2, width = 30, height = #items, style = 'minimal',
      })
      report.prompt_picker_closed = vim.wait(15000, function()
        return not vim.api.nvim_win_is_valid(picker)
      end, 20)
      if not report.prompt_picker_closed then
        vim.api.nvim_win_close(picker, true)
      end
      wanted_answer = 'Allow once'
    end
    local choice = nil
    -- (false stands for an unset variable: a nil would end ipairs.)
    local answers = { env.SCENARIO_PLAN_ANSWER or false, wanted_answer or false, 'Allow once', 'Apply' }
    for _, wanted in ipairs(answers) do
      for _, item in ipairs(items) do
        if choice == nil and item == wanted then
          choice = item
        end
      end
    end
    table.insert(report.asked, { prompt = opts.prompt, items = items, floats = floats, choice = choice })
    on_choice(choice)
  end
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == 'tandem_prompt' then
      return answer_prompt(items, opts, on_choice)
    end
    on_choice(nil)
  end
  -- The edit review is the plugin's own window: watched for (a timer,
  -- which runs while the scenario waits for the run) and answered with
  -- keys typed into it, as the user would, per SCENARIO_REVIEW: Apply (A),
  -- Reject (R), Apply all (!), Close (:close), keys:<keys> (typed one by
  -- one), CancelThenApply, LateApply, CancelThenLateApply.
  local function review_windows()
    local found = {}
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.b[vim.api.nvim_win_get_buf(win)].tandem_review then
        table.insert(found, win)
      end
    end
    return found
  end
  local function preview_of(wins)
    local preview = {}
    for _, win in ipairs(wins) do
      table.insert(preview, {
        floating = vim.api.nvim_win_get_config(win).relative ~= '',
        focused = win == vim.api.nvim_get_current_win(),
        diff = vim.wo[win].diff,
        lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false),
        -- The keys it answers (its buffer's own normal-mode maps).
        keys = vim.tbl_map(function(map)
          return map.lhs
        end, vim.api.nvim_buf_get_keymap(vim.api.nvim_win_get_buf(win), 'n')),
        -- What the user sees of it: the first line on screen, and how
        -- many lines are hidden in closed folds.
        topline = vim.fn.getwininfo(win)[1].topline,
        folded = vim.api.nvim_win_call(win, function()
          local hidden = 0
          for lnum = 1, vim.api.nvim_buf_line_count(0) do
            if vim.fn.foldclosed(lnum) ~= -1 then
              hidden = hidden + 1
            end
          end
          return hidden
        end),
      })
    end
    return preview
  end
  local function type_keys(keys)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'x', false)
  end
  local handled = {}
  local function answer_review(wins)
    local review = { preview = preview_of(wins), status = tandem.status(), statusline = drawn_status(), after = {} }
    table.insert(report.reviews, review)
    local wanted = env.SCENARIO_REVIEW or 'Apply'
    if wanted == 'CancelThenApply' then
      -- The user cancels the run while the review is open, then presses
      -- Apply anyway (if the review is still there).
      local run = require('tandem.transcript').run_id()
      tandem.cancel()
      report.cancel_seen = vim.wait(10000, function()
        return require('tandem.state').ended_runs[run] == true
      end, 20)
      wanted = 'Apply'
    end
    if wanted == 'LateApply' or wanted == 'CancelThenLateApply' then
      -- The user looks at the review while the server withdraws it (the
      -- run is cancelled, or the applyEdit times out): the plugin should
      -- close it. The user then presses Apply anyway.
      if wanted == 'CancelThenLateApply' then
        tandem.cancel()
      end
      report.picker_closed = vim.wait(15000, function()
        return #review_windows() == 0
      end, 20)
      type_keys('A')
      return
    end
    if #review_windows() == 0 then
      return
    end
    if wanted == 'Close' then
      vim.api.nvim_win_close(wins[#wins], true)
    elseif wanted == 'UnloadFileThenApply' then
      -- The user unloads the file's buffer (:bunload!) while the review
      -- is open, then applies the review anyway.
      local file = vim.fn.bufnr(env.SCENARIO_FILE)
      vim.api.nvim_buf_delete(file, { force = true, unload = true })
      report.file_loaded_at_answer = vim.api.nvim_buf_is_loaded(file)
      vim.api.nvim_set_current_win(wins[1])
      type_keys('A')
      report.file_loaded_after = vim.api.nvim_buf_is_loaded(file)
    elseif wanted:find('^keys:') then
      -- One key at a time, the review's state captured after each.
      for key in wanted:sub(6):gmatch('.') do
        type_keys(key)
        table.insert(review.after, preview_of(review_windows()))
      end
    else
      type_keys(({ Apply = 'A', Reject = 'R', ['Apply all'] = '!' })[wanted] or wanted)
    end
  end
  -- What the statusline says through the run, each change once, in order.
  report.statuses = {}
  local function note_status()
    local now = tandem.status()
    if report.statuses[#report.statuses] ~= now then
      table.insert(report.statuses, now)
    end
  end
  local watcher = vim.uv.new_timer()
  watcher:start(20, 20, vim.schedule_wrap(function()
    note_status()
    local wins = review_windows()
    if #wins == 0 then
      return
    end
    -- A split review is ready when both its panes are.
    if vim.api.nvim_win_get_config(wins[1]).relative == '' and #wins < 2 then
      return
    end
    local key = table.concat(vim.tbl_map(tostring, wins), ',')
    if handled[key] then
      return
    end
    handled[key] = true
    answer_review(wins)
  end))
  -- Text the user types when asked (vim.ui.input, as an input plugin
  -- would give it): SCENARIO_TYPED_ANSWER.
  report.inputs = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(report.inputs, { prompt = opts.prompt })
    if env.SCENARIO_INPUT == 'CancelThenLate' then
      -- An input plugin's floating box stays open; the user cancels the
      -- run, the plugin should close the box, and the user's text typed
      -- after that is ignored.
      local box = vim.api.nvim_open_win(vim.api.nvim_create_buf(false, true), false, {
        relative = 'editor', row = 2, col = 2, width = 40, height = 1, style = 'minimal',
      })
      tandem.cancel()
      report.input_closed = vim.wait(15000, function()
        return not vim.api.nvim_win_is_valid(box)
      end, 20)
      if not report.input_closed then
        vim.api.nvim_win_close(box, true)
      end
    end
    on_confirm(env.SCENARIO_TYPED_ANSWER)
  end
  report.messages = {}
  vim.notify = function(message, level)
    table.insert(report.messages, { message = message, level = level })
  end
  local settings = nil
  if env.SCENARIO_APPLY_EDIT_MS then
    settings = { timeouts = { applyEditMs = tonumber(env.SCENARIO_APPLY_EDIT_MS) } }
  end
  if env.SCENARIO_PROMPT_MS then
    settings = { timeouts = { promptMs = tonumber(env.SCENARIO_PROMPT_MS) } }
  end
  tandem.setup({
    settings = settings,
    cmd = { env.TANDEM_BIN, 'lsp' },
    permission_mode = env.SCENARIO_MODE or 'acceptEdits',
    review = { layout = env.SCENARIO_LAYOUT or 'float' },
    flags = { debounce_text_changes = debounce },
  })
  -- Wait for the server to attach.
  local attached = vim.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = 0 }) > 0
  end, 20)
  if not attached then
    error('the tandem server did not attach')
  end
  -- Capture the live transcript as it arrives, and the statusline drawn
  -- once the plugin has handled each event.
  report.statuslines = {}
  local original = tandem.handlers['tandem/runEvent']
  vim.lsp.get_clients({ name = 'tandem' })[1].handlers['tandem/runEvent'] = function(e, params, ctx)
    table.insert(report.events, params.event)
    local ret = original(e, params, ctx)
    table.insert(report.statuslines, { event = (params.event or {}).type, statusline = drawn_status() })
    return ret
  end
  -- SCENARIO_FOLDS: the window the ask starts from folds every line, as
  -- the chat's transcript window folds tool output (a new window takes
  -- the current one's options).
  if env.SCENARIO_FOLDS == '1' then
    vim.wo.foldmethod = 'expr'
    vim.wo.foldexpr = '1'
    vim.wo.foldlevel = 0
    vim.wo.foldenable = true
  end
  -- The user types on line 1 and does not save.
  if env.SCENARIO_TYPED and env.SCENARIO_TYPED ~= '' then
    vim.api.nvim_buf_set_lines(0, 0, 1, false, { env.SCENARIO_TYPED })
  end
  local client = vim.lsp.get_clients({ name = 'tandem' })[1]
  local done = false
  local bufnr = vim.api.nvim_get_current_buf()
  report.status_idle = tandem.status()
  report.statusline_idle = drawn_status()
  local via = env.SCENARIO_VIA or 'request'
  if via == 'request' then
    client:request('workspace/executeCommand', {
      command = 'tandem.ask',
      arguments = { { prompt = env.SCENARIO_PROMPT, textDocument = { uri = vim.uri_from_bufnr(bufnr) } } },
    }, function(request_err, result)
      report.ask_error = request_err and (request_err.message or vim.inspect(request_err)) or nil
      report.result = result
      done = true
    end, bufnr)
  else
    -- Through the plugin, as :TandemAsk or a code action would: capture the
    -- answer by wrapping the client's request.
    local request = client.request
    client.request = function(self, method, params, handler, ...)
      if method == 'workspace/executeCommand' and params.command == 'tandem.ask' then
        local inner = handler
        handler = function(request_err, result, ...)
          local ret = inner(request_err, result, ...)
          report.ask_error = request_err and (request_err.message or vim.inspect(request_err)) or nil
          report.result = result
          done = true
          return ret
        end
      end
      return request(self, method, params, handler, ...)
    end
    if via == 'plugin' then
      tandem.ask(env.SCENARIO_PROMPT, nil)
    else
      -- A code action on lines 1-2, run as Neovim runs a chosen action.
      local actions = client:request_sync('textDocument/codeAction', {
        textDocument = { uri = vim.uri_from_bufnr(bufnr) },
        range = { start = { line = 0, character = 0 }, ['end'] = { line = 1, character = 0 } },
        context = { diagnostics = {} },
      }, 5000, bufnr)
      local chosen = nil
      for _, action in ipairs((actions and actions.result) or {}) do
        if action.title == 'Tandem: explain this code' then
          chosen = action
        end
      end
      if not chosen then
        error('no "explain this code" action: ' .. vim.inspect(actions))
      end
      client:exec_cmd(chosen.command, { bufnr = bufnr })
    end
  end
  if not vim.wait(60000, function() return done end, 20) then
    error('the run did not finish in 60 s')
  end
  report.transcript = require('tandem.transcript').lines()
  -- SCENARIO_SEND_REVIEW: once the run is over, the user comments on lines
  -- 2-3 of the file (:TandemComment) and sends the review (/sendreview in the
  -- chat's words, :TandemSendReview here); the next run's prompt, as the
  -- thread keeps it, is reported.
  if env.SCENARIO_SEND_REVIEW == '1' then
    local thread = tandem.thread_id
    vim.cmd('TandemSendReview')
    report.nothing_to_send = report.messages[#report.messages] and report.messages[#report.messages].message
    vim.cmd('buffer ' .. vim.fn.bufnr(env.SCENARIO_FILE))
    vim.cmd('2,3TandemComment these two lines belong together')
    local ends = function()
      local n = 0
      for _, e in ipairs(report.events) do
        if e.type == 'end' then
          n = n + 1
        end
      end
      return n
    end
    local before = ends()
    vim.cmd('TandemSendReview')
    report.review_done = vim.wait(60000, function()
      return ends() > before and require('tandem.state').run_id == nil
    end, 20)
    local client = vim.lsp.get_clients({ name = 'tandem' })[1]
    local answer = client:request_sync('workspace/executeCommand', { command = 'tandem.transcript', arguments = { { threadId = thread } } }, 10000)
    report.prompts = {}
    for _, e in ipairs(((answer or {}).result or {}).events or {}) do
      if e.type == 'prompt' then
        table.insert(report.prompts, e.text)
      end
    end
    report.comments_left = #tandem.review_comments
  end
  -- SCENARIO_TASKS: :TandemTasks once the run is over; the user picks the
  -- first task, which stops it.
  if env.SCENARIO_TASKS == '1' then
    local select = vim.ui.select
    vim.ui.select = function(items, opts, on_choice)
      report.task_items = vim.tbl_map(opts.format_item or tostring, items)
      on_choice(items[1], 1)
    end
    vim.cmd('TandemTasks')
    report.task_stopped = vim.wait(15000, function()
      for _, m in ipairs(report.messages) do
        if tostring(m.message):find('stopped: ', 1, true) then
          return true
        end
      end
      return false
    end, 20)
    vim.ui.select = select
  end
  -- Review previews still on screen once the run is over (a withdrawn
  -- review's handler may still be closing its preview: wait, bounded).
  local function previews()
    local count = 0
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.b[vim.api.nvim_win_get_buf(win)].tandem_review then
        count = count + 1
      end
    end
    return count
  end
  vim.wait(5000, function()
    return previews() == 0
  end, 20)
  report.previews_left = previews()
  -- The plugin's question floats still open (none once answered).
  report.prompts_left = 0
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.b[vim.api.nvim_win_get_buf(win)].tandem_prompt then
      report.prompts_left = report.prompts_left + 1
    end
  end
  note_status()
  watcher:stop()
  report.status_after = tandem.status()
  report.statusline_after = drawn_status()
  -- :TandemCancel with nothing running says so.
  vim.cmd('TandemCancel')
  -- :help works at once (doc/tags).
  report.help_ok = pcall(vim.cmd, 'help tandem-review')
  -- The commands the plugin defined, for the test that :help names them.
  report.commands = vim.tbl_keys(vim.api.nvim_get_commands({}))
  if report.help_ok then
    report.help_line = vim.api.nvim_get_current_line()
    vim.cmd('close')
  end
  -- :checkhealth tandem
  local health_ok, health_err = pcall(vim.cmd, 'checkhealth tandem')
  report.health = health_ok and vim.api.nvim_buf_get_lines(0, 0, -1, false) or { tostring(health_err) }
  vim.cmd('silent! tabclose')
  -- Again with a plugin of another version than the binary's.
  vim.cmd('silent! tabclose')
  package.loaded['tandem.version'] = '0.0.1-test'
  health_ok, health_err = pcall(vim.cmd, 'checkhealth tandem')
  report.health_other_version = health_ok and vim.api.nvim_buf_get_lines(0, 0, -1, false) or { tostring(health_err) }
  package.loaded['tandem.version'] = nil
  vim.cmd('silent! tabclose')
  -- Back in the scenario's buffer for the report below.
  vim.api.nvim_set_current_buf(bufnr)
  report.buffer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  report.modified = vim.bo.modified
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
