-- A typing fuzzer in a real headless Neovim, for tests/editor_nvim.rs: many
-- runs in one editor session (default mode, so every edit opens the
-- plugin's review), and while a review is open the "user" inserts and
-- deletes text at random above, inside and below the edited lines (now and
-- then the whole buffer), then answers the review (apply all, reject all,
-- or hunk by hunk). Each trial's buffer, the text the user left and the
-- statuses Tandem reported go into the report; the Rust test checks them.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN, SCENARIO_FILE, SCENARIO_OUT, as in
-- ask_scenario.lua; TANDEM_SCRIPT (rewritten before each trial: the scripted
-- model reads the file and makes that trial's edit); SCENARIO_SEED and
-- SCENARIO_TRIALS.
local env = vim.env
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { trials = {}, errors = {} }
local finish = kit.finisher(report)

local function write_file(path, text)
  local file = assert(io.open(path, 'w'))
  file:write(text)
  file:close()
end

-- A small deterministic generator (a linear congruential one), so a seed
-- gives the same trials in every Neovim (math.random differs by version).
local state = tonumber(env.SCENARIO_SEED or '1') or 1
local function random(n)
  state = (state * 1103515245 + 12345) % 2147483648
  return math.floor(state / 65536) % n + 1
end

-- The file: twelve distinct lines, the word `token` on two of them (the
-- two-hunk edit renames it).
local ORIGINAL = {}
for i = 1, 12 do
  ORIGINAL[i] = string.format('line %02d %s', i, (i == 4 or i == 10) and 'token here' or 'plain text')
end
local ORIGINAL_TEXT = table.concat(ORIGINAL, '\n') .. '\n'

local function buffer_text(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  return table.concat(lines, '\n') .. (vim.bo[bufnr].eol and '\n' or '')
end

--- One random user change to `bufnr`, described for the report.
local marker = 0
local function type_something(bufnr)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local roll = random(100)
  marker = marker + 1
  local text = string.format('<u%d>', marker)
  if roll <= 3 then
    vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, {})
    return 'deleted everything'
  end
  local row = random(count) - 1
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  if roll <= 40 then
    local col = random(#line + 1) - 1
    vim.api.nvim_buf_set_text(bufnr, row, col, row, col, { text })
    return string.format('typed %s on line %d col %d', text, row + 1, col)
  elseif roll <= 65 then
    vim.api.nvim_buf_set_lines(bufnr, row, row, false, { 'new ' .. text })
    return string.format('added a line before line %d', row + 1)
  elseif roll <= 85 and #line > 0 then
    local from = random(#line) - 1
    local to = math.min(#line, from + random(4))
    vim.api.nvim_buf_set_text(bufnr, row, from, row, to, {})
    return string.format('deleted cols %d-%d of line %d', from, to, row + 1)
  elseif count > 1 then
    vim.api.nvim_buf_set_lines(bufnr, row, row + 1, false, {})
    return string.format('deleted line %d', row + 1)
  end
  vim.api.nvim_buf_set_text(bufnr, row, 0, row, 0, { text })
  return string.format('typed %s at the start of line %d', text, row + 1)
end

local ok, err = pcall(function()
  local path = env.SCENARIO_FILE
  vim.notify = function() end
  vim.ui.select = function(_, _, on_choice)
    on_choice(nil)
  end
  local tandem = require('tandem')
  tandem.setup({ cmd = { env.TANDEM_BIN, 'lsp' }, permission_mode = 'default', flags = { debounce_text_changes = 150 } })

  local events = {}
  local hooked = {}
  local trial = nil
  local function review_windows()
    local found = {}
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.b[vim.api.nvim_win_get_buf(win)].tandem_review then
        table.insert(found, win)
      end
    end
    return found
  end
  local handled = {}
  local watcher = vim.uv.new_timer()
  watcher:start(10, 10, vim.schedule_wrap(function()
    if not trial then
      return
    end
    local wins = review_windows()
    if #wins == 0 then
      return
    end
    local key = table.concat(vim.tbl_map(tostring, wins), ',')
    if handled[key] then
      return
    end
    handled[key] = true
    -- The review is open: type (or not), then answer.
    local review = { typed = {}, before = buffer_text(trial.bufnr) }
    table.insert(trial.reviews, review)
    -- Trial 1 is always an edit of line 10 typed around (a line added at
    -- the top), so every run sees a rebase that lands.
    local actions = trial.n == 1 and 0 or ({ 0, 0, 0, 0, 1, 1, 1, 1, 2, 3 })[random(10)]
    if trial.n == 1 and #trial.reviews == 1 then
      vim.api.nvim_buf_set_lines(trial.bufnr, 0, 0, false, { 'new <u0>' })
      table.insert(review.typed, 'added a line before line 1')
    end
    for _ = 1, actions do
      table.insert(review.typed, type_something(trial.bufnr))
    end
    trial.user_text = buffer_text(trial.bufnr)
    local hunks = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(wins[1]), 0, -1, false)
    local count = 0
    for _, line in ipairs(hunks) do
      if line:find('^[> ] hunk %d+/%d+') then
        count = count + 1
      end
    end
    local answer
    local roll = trial.n == 1 and 1 or random(10)
    if roll <= 6 then
      answer = 'A'
    elseif roll == 7 then
      answer = 'R'
    else
      answer = ''
      for _ = 1, math.max(count, 1) do
        answer = answer .. (random(2) == 1 and 'a' or 'r')
      end
    end
    review.answer = answer
    vim.api.nvim_set_current_win(wins[1])
    vim.api.nvim_feedkeys(answer, 'x', false)
  end))

  for n = 1, tonumber(env.SCENARIO_TRIALS or '10') do
    -- Half the trials open the file afresh (LSP version 0, the version
    -- Neovim's own stale-edit check skips), half go on in the buffer.
    local fresh = n == 1 or random(2) == 1
    write_file(path, ORIGINAL_TEXT)
    if fresh then
      vim.cmd('silent! %bwipeout!')
      vim.cmd('edit ' .. vim.fn.fnameescape(path))
    else
      vim.api.nvim_buf_set_lines(0, 0, -1, false, ORIGINAL)
    end
    local bufnr = vim.api.nvim_get_current_buf()
    if not vim.wait(10000, function()
      return #vim.lsp.get_clients({ name = 'tandem', bufnr = bufnr }) > 0
    end, 10) then
      error('the tandem server did not attach')
    end
    local client = vim.lsp.get_clients({ name = 'tandem', bufnr = bufnr })[1]
    if not hooked[client.id] then
      hooked[client.id] = true
      local original = tandem.handlers['tandem/runEvent']
      client.handlers['tandem/runEvent'] = function(e, params, ctx)
        table.insert(events, params.event)
        return original(e, params, ctx)
      end
    end
    -- The agent's edit: one line, or `token` on two lines (two hunks).
    local hunks
    local edit
    if n == 1 or random(2) == 1 then
      local line = n == 1 and 10 or random(12)
      hunks = { { old = ORIGINAL[line], new = ORIGINAL[line]:upper() .. ' (agent)' } }
      edit = { file_path = vim.fn.fnamemodify(path, ':t'), old_string = hunks[1].old, new_string = hunks[1].new }
    else
      hunks = { { old = ORIGINAL[4], new = ORIGINAL[4]:gsub('token', 'TOKEN') }, { old = ORIGINAL[10], new = ORIGINAL[10]:gsub('token', 'TOKEN') } }
      edit = { file_path = vim.fn.fnamemodify(path, ':t'), old_string = 'token', new_string = 'TOKEN', replace_all = true }
    end
    write_file(env.TANDEM_SCRIPT, vim.json.encode({ turns = {
      { text = 'Reading.', tool_calls = { { name = 'read_file', input = { file_path = edit.file_path } } } },
      { text = 'Editing.', tool_calls = { { name = 'edit_file', input = edit } } },
      { text = 'Done.' },
    } }))
    events = {}
    trial = { n = n, fresh = fresh, bufnr = bufnr, before = buffer_text(bufnr), hunks = hunks, reviews = {} }
    trial.user_text = trial.before
    local done, result = false, nil
    client:request('workspace/executeCommand', {
      command = 'tandem.ask',
      arguments = { { prompt = 'Edit it', textDocument = { uri = vim.uri_from_bufnr(bufnr) } } },
    }, function(request_err, answer)
      result = answer or { error = request_err and (request_err.message or vim.inspect(request_err)) }
      done = true
    end, bufnr)
    if not vim.wait(60000, function()
      return done
    end, 10) then
      error('trial ' .. n .. ': the run did not finish in 60 s')
    end
    -- The review windows are closed once the run is over.
    vim.wait(5000, function()
      return #review_windows() == 0
    end, 10)
    trial.after = buffer_text(bufnr)
    trial.result = result
    trial.results = {}
    for _, event in ipairs(events) do
      if event.type == 'tool_result' then
        table.insert(trial.results, event)
      end
    end
    trial.bufnr = nil
    table.insert(report.trials, trial)
    trial = nil
  end
  watcher:stop()
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
