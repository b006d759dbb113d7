-- avante.nvim as the ACP client of `tandem acp`, in a headless Neovim, for
-- tests/editor_nvim.rs. avante.nvim, plenary.nvim and nui.nvim come from the
-- folder AVANTE_DIR (never from this repository). The prompt goes through
-- avante's own ACP streaming (`require('avante.llm').stream`, what its
-- sidebar calls), so its own fs/read_text_file and fs/write_text_file
-- handlers answer Tandem: reads from the buffer (lines joined with "\n"),
-- writes to the disk followed by `:edit` of the buffer.
--
-- SCENARIO (env):
--   newline  notes.txt is open and unmodified; the model edits it.
--   e37      notes.txt is open with the user's unsaved line; the model edits
--            it (avante writes the disk, `:edit` fails with E37, no answer).
--   two      a prompt whose shell command waits for the file `go`; while it
--            runs, a second avante ACP client (a second `tandem acp`) loads
--            the same session and prompts; then `go` is made.
-- The report (SCENARIO_OUT, JSON): each prompt's stop reason or error, the
-- buffer's lines and what avante said.

local out = assert(os.getenv('SCENARIO_OUT'))
local scenario = assert(os.getenv('SCENARIO'))
local root = vim.fn.getcwd()
local report = { errors = {}, stops = {}, messages = {} }

local function finish()
  local file = assert(io.open(out, 'w'))
  file:write(vim.json.encode(report))
  file:close()
  pcall(function() require('avante').cleanup_all_acp_clients() end)
  vim.cmd('qa!')
end

local ok, err = xpcall(function()
  local avante_dir = assert(os.getenv('AVANTE_DIR'))
  for _, name in ipairs({ 'plenary.nvim', 'nui.nvim', 'avante.nvim' }) do
    vim.opt.rtp:prepend(avante_dir .. '/' .. name)
  end
  vim.o.swapfile = false
  -- avante's log module fills its level table while iterating it with
  -- pairs(), which Lua leaves undefined: now and then the numeric default
  -- level is missing and `require('avante')` fails ("Invalid log level:
  -- 3"). A level given by name is looked up among the names, always there.
  vim.g.avante = { log_level = 'warn' }
  require('avante').setup({
    provider = 'tandem',
    acp_providers = {
      tandem = {
        command = assert(os.getenv('TANDEM_BIN')),
        args = { 'acp' },
        -- avante gives the agent PATH and these only.
        env = {
          HOME = assert(os.getenv('AGENT_HOME')),
          XDG_DATA_HOME = assert(os.getenv('AGENT_DATA')),
          XDG_CACHE_HOME = assert(os.getenv('AGENT_HOME')) .. '/.cache',
          TANDEM_PROVIDER = 'scripted',
          TANDEM_SCRIPT = assert(os.getenv('TANDEM_SCRIPT')),
        },
      },
    },
  })
  local History = require('avante.history')
  local llm = require('avante.llm')

  --- One prompt through avante's ACP stream; `opts` keeps its client and session.
  local function ask(name, text, opts)
    opts = opts or {}
    opts.history_messages = { History.Message:new('user', text) }
    opts.on_chunk = function() end
    opts.on_messages_add = function() end
    opts.on_save_acp_client = function(client) opts.acp_client = client end
    opts.on_save_acp_session_id = function(id) opts.acp_session_id = id end
    opts.on_stop = function(stop)
      local error = stop.error
      if type(error) == 'table' then error = error.message or vim.inspect(error) end
      report.stops[#report.stops + 1] = { name = name, reason = stop.reason, error = error }
      opts.stopped = true
    end
    llm.stream(opts)
    return opts
  end

  local function wait(what, ms, condition)
    if not vim.wait(ms, condition, 20) then error('timed out waiting for ' .. what) end
  end

  local notes = root .. '/notes.txt'
  if scenario == 'newline' or scenario == 'e37' then
    vim.cmd('edit ' .. vim.fn.fnameescape(notes))
    if scenario == 'e37' then
      -- The user's unsaved line.
      vim.api.nvim_buf_set_lines(0, 2, 2, false, { 'typed, not saved' })
    end
    local first = ask('edit', 'shout the second line of notes.txt')
    wait('the prompt to end', 60000, function() return first.stopped end)
  elseif scenario == 'two' then
    local first = ask('first', 'wait for go')
    wait('the first prompt to run its command', 60000, function() return vim.uv.fs_stat(root .. '/started') ~= nil end)
    local second = ask('second', 'me too', { acp_session_id = first.acp_session_id })
    wait('the second prompt to end', 60000, function() return second.stopped end)
    report.second_client_distinct = second.acp_client ~= nil and second.acp_client ~= first.acp_client
    local go = assert(io.open(root .. '/go', 'w'))
    go:close()
    wait('the first prompt to end', 60000, function() return first.stopped end)
    report.session_id = first.acp_session_id
  else
    error('no scenario ' .. scenario)
  end
  report.buffer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  report.modified = vim.bo.modified
  for _, message in ipairs(vim.api.nvim_exec2('messages', { output = true }).output and vim.split(vim.api.nvim_exec2('messages', { output = true }).output, '\n') or {}) do
    report.messages[#report.messages + 1] = message
  end
end, debug.traceback)
if not ok then report.errors[#report.errors + 1] = tostring(err) end
finish()
