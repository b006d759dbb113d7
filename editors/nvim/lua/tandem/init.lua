-- Tandem for Neovim: starts `tandem lsp`, sends `tandem.ask`, shows the live
-- transcript from `tandem/runEvent`, reviews the agent's edits with a diff
-- (lua/tandem/review.lua), shows Tandem's questions whole in a float
-- (lua/tandem/prompt.lua), says how each run ended with its edits counted
-- by status (lua/tandem/edits.lua), and saves buffers on
-- `tandem/saveDocuments`.
--
-- Edits arrive as ordinary `workspace/applyEdit` requests, so they land in
-- the undo history like any other change (`u` undoes the agent's edit).
-- The protocol is described in docs/protocol.md of the Tandem repository.
local M = {}

local transcript = require('tandem.transcript')
local edits = require('tandem.edits')
local review = require('tandem.review')
local state = require('tandem.state')
local await = require('tandem.await')

M.config = {
  cmd = { 'tandem', 'lsp' },
  root_markers = { '.tandem', '.git' },
  -- Server settings (nil: the environment decides; see :help tandem-setup).
  provider = nil, -- 'anthropic' | 'openai' | 'scripted'
  model = nil,
  permission_mode = nil, -- 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan'
  max_turns = nil,
  script = nil, -- the scripted provider's script file
  settings = nil, -- any other server settings, merged last (e.g. { timeouts = { promptMs = 60000 } })
  review = { layout = 'float' }, -- 'float': the diff hunk by hunk, answered per hunk; 'split': current and proposed side by side
  flags = nil, -- passed to vim.lsp.start (e.g. { debounce_text_changes = 150 })
  -- Inline completions (Neovim 0.12's vim.lsp.inline_completion, see
  -- :help tandem-completions): the server's `inlineCompletions` settings
  -- (nil: off), e.g. { enabled = true, provider = 'llama.cpp', baseUrl = 'http://127.0.0.1:8012' },
  -- and the Insert-mode key that accepts a suggestion (false: none).
  inline_completions = nil,
  inline_completion_key = '<Tab>',
}

local function notify(message, level)
  vim.notify('Tandem: ' .. require('tandem.visible').text(message), level or vim.log.levels.INFO)
end

--- The server settings of one setup() configuration (`c`).
local function settings_of(c)
  local settings = {
    provider = c.provider,
    model = c.model,
    permissionMode = c.permission_mode,
    maxTurns = c.max_turns,
    script = c.script,
    inlineCompletions = c.inline_completions,
  }
  return vim.tbl_deep_extend('force', settings, c.settings or {})
end

--- What a folder's own file (an exrc: .nvim.lua, .nvimrc, .exrc, or any
--- file of the working directory outside your config) passed to setup():
--- its server settings go to the server as the folder's, which may only
--- tighten (docs/protocol.md, "Editor settings"); the rest (cmd, flags…)
--- is not used.
M.folder_config = {}

--- The server settings setup() accepts from a folder's file.
local FOLDER_KEYS = { provider = true, model = true, permission_mode = true, max_turns = true, script = true, settings = true, inline_completions = true }

--- Whether the function `level` frames up the stack was defined in a
--- folder's own file rather than in the user's configuration.
function M.called_from_folder(level)
  local info = debug.getinfo(level + 1, 'S')
  local source = info and info.source or ''
  -- Neovim 0.11 runs a `.nvim.lua` exrc as a string named "<nvim>" (as
  -- it runs nvim_exec_lua's); 0.12 names it by its path.
  if source == '<nvim>' then
    return true
  end
  if source:sub(1, 1) ~= '@' then
    return false
  end
  local path = vim.fs.normalize(vim.fn.fnamemodify(source:sub(2), ':p'))
  -- The init file you named with `nvim -u FILE` is yours, wherever it is.
  local argv = vim.v.argv or {}
  for i = 1, #argv - 1 do
    if argv[i] == '-u' and vim.fs.normalize(vim.fn.fnamemodify(argv[i + 1], ':p')) == path then
      return false
    end
  end
  local name = vim.fs.basename(path)
  if name == '.nvim.lua' or name == '.nvimrc' or name == '.exrc' then
    return true
  end
  local inside = function(dir)
    dir = vim.fs.normalize(dir)
    return path:sub(1, #dir + 1) == dir .. '/'
  end
  return inside(vim.fn.getcwd()) and not inside(vim.fn.stdpath('config'))
end

--- The server settings `setup()` maps to (`initializationOptions.tandem`
--- and the answer to `workspace/configuration`), each with who set it:
--- `layers.user` your own setup() (and the plugin's promises: it saves
--- buffers, answers text input and code intelligence), `layers.folder`
--- what a folder's exrc passed, which the server lets only tighten.
function M.server_settings()
  local user = settings_of(M.config)
  user.saveDocuments = true
  user.textInput = true
  user.codeIntel = true
  local folder = settings_of(M.folder_config)
  return { layers = { user = user, folder = next(folder) and folder or vim.empty_dict() } }
end

--- The client capabilities: Neovim's own, plus change annotations, so the
--- server marks edits that need review and review.lua shows their diff.
function M.capabilities()
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.workspace = capabilities.workspace or {}
  capabilities.workspace.workspaceEdit = capabilities.workspace.workspaceEdit or {}
  capabilities.workspace.workspaceEdit.changeAnnotationSupport = { groupsOnLabel = false }
  capabilities.workspace.workspaceEdit.documentChanges = true
  -- vim.lsp hands a server request's handler no id; with this, Tandem puts
  -- it in the params (`tandemRequestId`), so a withdrawn question closes.
  capabilities.experimental = vim.tbl_extend('force', capabilities.experimental or {}, {
    tandemRequestIds = true,
    -- Neovim 0.12 shows an inline completion at its range's start and
    -- applies ranges over several lines: next edits may lie away from the cursor.
    inlineCompletionEditsAnywhere = vim.lsp.inline_completion ~= nil,
  })
  return capabilities
end

--- The plugin's handlers for the server → client messages Tandem uses.
M.handlers = {
  ['tandem/runEvent'] = function(_, params)
    params = params or {}
    local event = params.event or {}
    -- A run already over (its answer can come before its last events, a
    -- cancelled one's above all) no longer moves the statusline.
    if not (params.runId and state.ended_runs[params.runId]) then
      if params.runId and params.runId ~= state.run_id and event.type ~= 'end' then
        state.set_run(params.runId)
      end
      if event.type == 'tool_call' then
        -- The tool and its subject, as the transcript names the call (the
        -- event's summary alone is the subject: "notes.txt").
        state.set_activity(transcript.call_summary(event))
      elseif event.type == 'end' then
        state.ended(params.runId)
        state.finish(event.status)
      end
    end
    transcript.append(params)
  end,
  ['tandem/saveDocuments'] = function(_, params)
    local saved = {}
    for _, uri in ipairs((params or {}).uris or {}) do
      local bufnr = vim.uri_to_bufnr(uri)
      if vim.api.nvim_buf_is_loaded(bufnr) then
        local ok = pcall(vim.api.nvim_buf_call, bufnr, function()
          vim.cmd('silent write')
        end)
        if ok then
          table.insert(saved, uri)
        end
      end
    end
    return { saved = saved }
  end,
  ['workspace/applyEdit'] = function(err, params, ctx)
    return review.apply_edit(err, params, ctx)
  end,
  -- A line of text from the user (the feedback after "Keep planning" in
  -- plan mode's review), through vim.ui.input, so input plugins are used.
  ['tandem/textInput'] = function(_, params)
    params = params or {}
    local text = await.answer(function(settle)
      vim.ui.input({ prompt = 'Tandem: ' .. (params.prompt or 'your answer') .. ' ' }, settle)
    end, await.request_id(params))
    if text == await.WITHDRAWN then
      notify('the question was withdrawn (the run was cancelled or stopped waiting)', vim.log.levels.WARN)
      return { text = vim.NIL }
    end
    if text == nil or vim.trim(text) == '' then
      return { text = vim.NIL }
    end
    return { text = text }
  end,
  -- The server's notices (settings problems, what an untrusted folder's
  -- settings asked for, a sandbox that is off) through vim.notify, the
  -- same in every Neovim version (they start with "Tandem: ").
  ['window/showMessage'] = function(_, params)
    params = params or {}
    local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
    vim.notify(require('tandem.visible').text(params.message or ''), levels[params.type] or vim.log.levels.INFO)
    return vim.NIL
  end,
  -- Permission asks, hook consent and the plan review: the whole message
  -- in a float, the actions through vim.ui.select (lua/tandem/prompt.lua).
  ['window/showMessageRequest'] = function(err, params, ctx)
    return require('tandem.prompt').show_message_request(err, params, ctx)
  end,
  -- The agent's questions to the buffer's other language servers
  -- (lua/tandem/code_intel.lua).
  ['tandem/codeIntel'] = function(err, params, ctx)
    return require('tandem.code_intel').handle(err, params, ctx)
  end,
  ['$/cancelRequest'] = function(err, params, ctx)
    await.cancel_request(err, params, ctx)
  end,
}

--- The running Tandem client, if any.
function M.client()
  for _, c in ipairs(vim.lsp.get_clients({ name = 'tandem' })) do
    return c
  end
  return nil
end

--- The running Tandem client; when there is none, says so (an error) and
--- gives nil.
local function running_client()
  local c = M.client()
  if not c then
    notify('the language server is not running (call require("tandem").setup(), or see :checkhealth tandem)', vim.log.levels.ERROR)
  end
  return c
end

local function root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= '' and vim.fs.dirname(name) or vim.uv.cwd()
  local found = vim.fs.find(M.config.root_markers, { path = start, upward = true })[1]
  return found and vim.fs.dirname(found) or vim.uv.cwd()
end

--- Every diagnostic on lines `first`..`last` (0-based) of `bufnr`, from
--- every source (all namespaces: other language servers, linters,
--- vim.diagnostic.set), in LSP form.
function M.diagnostics_at(bufnr, first, last)
  local found = {}
  for _, diagnostic in ipairs(vim.diagnostic.get(bufnr)) do
    local end_lnum = diagnostic.end_lnum or diagnostic.lnum
    if diagnostic.lnum <= last and end_lnum >= first then
      table.insert(found, diagnostic)
    end
  end
  local lsp = {}
  for _, diagnostic in ipairs(found) do
    local original = diagnostic.user_data and diagnostic.user_data.lsp
    table.insert(lsp, original or vim.lsp.diagnostic.from({ diagnostic })[1])
  end
  return lsp
end

--- Neovim's code-action request carries only the asking client's own
--- diagnostics (0.11: `vim.lsp.buf.code_action` reads the client's
--- namespace), and Tandem publishes none, so "Tandem: fix this error" would
--- never be offered for another server's error. Fill an empty context with
--- every diagnostic in the range.
local function with_every_diagnostic(client)
  if client.tandem_wraps_code_actions then
    return
  end
  client.tandem_wraps_code_actions = true
  local request = client.request
  client.request = function(self, method, params, handler, bufnr, ...)
    if method == 'textDocument/codeAction' and type(params) == 'table' and type(params.context) == 'table'
        and (params.context.diagnostics == nil or #params.context.diagnostics == 0) and params.range then
      local target = bufnr
      if not target or target == 0 then
        target = params.textDocument and vim.uri_to_bufnr(params.textDocument.uri) or vim.api.nvim_get_current_buf()
      end
      params = vim.deepcopy(params)
      params.context.diagnostics = M.diagnostics_at(target, params.range.start.line, params.range['end'].line)
    end
    return request(self, method, params, handler, bufnr, ...)
  end
end

local attached_once = false

--- Neovim 0.12's inline completion for Tandem's client, when configured:
--- in setup() (`inline_completions`), or in Tandem's own settings files
--- (`~/.tandem/settings.json`), which the server's capabilities tell.
--- The accept key is mapped then, not before: a user who has no
--- completions keeps their own <Tab>.
local function enable_inline_completion(client)
  local offered = (client.server_capabilities or {}).inlineCompletionProvider
  if vim.lsp.inline_completion and (M.config.inline_completions or offered) then
    vim.lsp.inline_completion.enable(true, { client_id = client.id })
    M.map_inline_completion_key()
  end
end

local function on_attach(client)
  with_every_diagnostic(client)
  enable_inline_completion(client)
  -- The statusline says "Tandem" from now on, not at the next redraw.
  pcall(vim.cmd, 'redrawstatus!')
  if not attached_once then
    attached_once = true
    notify('attached', vim.log.levels.DEBUG)
  end
end

--- The server's command: `config.cmd`, but for `tandem` not on PATH, the
--- binary `require('tandem.install').install()` put in its folder.
function M.cmd()
  local cmd = M.config.cmd
  if cmd[1] == 'tandem' and vim.fn.executable('tandem') == 0 then
    local installed = vim.fs.joinpath(require('tandem.install').dir(), vim.fn.has('win32') == 1 and 'tandem.exe' or 'tandem')
    if vim.fn.executable(installed) == 1 then
      return vim.list_extend({ installed }, vim.list_slice(cmd, 2))
    end
  end
  return cmd
end

--- The `vim.lsp.start` / `vim.lsp.config` table for Tandem.
function M.lsp_config()
  local settings = M.server_settings()
  return {
    name = 'tandem',
    cmd = M.cmd(),
    root_markers = M.config.root_markers,
    init_options = { tandem = settings },
    settings = { tandem = settings },
    capabilities = M.capabilities(),
    handlers = M.handlers,
    commands = M.commands,
    flags = M.config.flags,
    on_attach = on_attach,
  }
end

--- Start (or attach to) the Tandem server for a buffer; never to the client
--- `not_client` (one being stopped, to start a new session).
function M.attach(bufnr, not_client)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= '' then
    return
  end
  local config = M.lsp_config()
  config.root_dir = root_dir(bufnr)
  config.root_markers = nil
  local opts = { bufnr = bufnr }
  if not_client then
    opts.reuse_client = function(client, conf)
      return client.id ~= not_client and client.name == conf.name and client.root_dir == conf.root_dir
    end
  end
  vim.lsp.start(config, opts)
end

--- The Insert-mode key that accepts the inline completion shown, and
--- types itself when there is none.
local key_mapped = false
function M.map_inline_completion_key()
  local key = M.config.inline_completion_key
  if key_mapped or not (key and vim.lsp.inline_completion) then
    return
  end
  key_mapped = true
  vim.keymap.set('i', key, function()
    if not vim.lsp.inline_completion.get({ on_accept = M.accept_inline_completion }) then
      return key
    end
  end, { expr = true, desc = 'Tandem: accept the inline completion' })
end

--- Insert an inline completion item where the buffer is now. Neovim asks
--- for a new suggestion only 200 ms after the last keystroke, so the item
--- shown may be one made before the user typed its first characters (the
--- ghost text then shows the rest of it); its range ends where the cursor
--- was, and Neovim's own accept would leave those characters after the
--- inserted text ("radius2 *"). A completion (from the start of its line
--- to the cursor) is put in from the range's start to the cursor when what
--- is there is the start of its text, and not at all when the user typed
--- something else (its ghost text showed the rest after that).
function M.accept_inline_completion(item)
  local text, range = item.insert_text, item.range
  local buf = vim.api.nvim_get_current_buf()
  local kind = item.command and item.command.arguments and item.command.arguments[1]
  if type(text) ~= 'string' then
    return
  end
  if range then
    local start_row, start_col, end_row, end_col = range.start.row, range.start.col, range.end_.row, range.end_.col
    local cursor = vim.api.nvim_win_get_cursor(0)
    local row, col = cursor[1] - 1, cursor[2]
    if type(kind) == 'table' and kind.kind == 'completion' and start_row == row and end_row == row then
      local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, true)[1]
      local there = line:sub(start_col + 1, col)
      if col < start_col or text:sub(1, #there) ~= there then
        return
      end
      end_col = col
    end
    local lines = vim.split(text, '\n', { plain = true })
    local ok = pcall(vim.api.nvim_buf_set_text, buf, start_row, start_col, end_row, end_col, lines)
    if not ok then
      return
    end
    vim.api.nvim_win_set_cursor(0, { start_row + #lines, (#lines == 1 and start_col or 0) + #lines[#lines] })
  else
    vim.api.nvim_paste(text, false, 0)
  end
  if item.command then
    local client = vim.lsp.get_client_by_id(item.client_id)
    if client then
      client:exec_cmd(item.command, { bufnr = buf })
    end
  end
end

function M.setup(opts)
  if M.called_from_folder(2) then
    -- An exrc's options are the folder's, not yours: its server settings
    -- may only tighten, and it cannot choose the binary (cmd) or the rest.
    local theirs = {}
    for key, value in pairs(opts or {}) do
      if FOLDER_KEYS[key] then
        theirs[key] = value
      else
        notify('ignored "' .. key .. '" from a folder\'s own file (set it in your own configuration)', vim.log.levels.WARN)
      end
    end
    M.folder_config = vim.tbl_deep_extend('force', M.folder_config, theirs)
    -- Nor does it start anything: your own setup() (or a restart) sends it.
    return
  end
  M.config = vim.tbl_deep_extend('force', M.config, opts or {})
  review.options = vim.tbl_extend('force', review.options, M.config.review or {})
  vim.api.nvim_create_autocmd('BufEnter', {
    group = vim.api.nvim_create_augroup('tandem', { clear = true }),
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  M.attach(vim.api.nvim_get_current_buf())
end

--- Send `tandem.ask` with `argument` ({prompt, textDocument?, range?,
--- diagnostics?}); the transcript frames the run and the end is announced.
--- `command`: another command that starts a run as `tandem.ask` does
--- (`tandem.sendReview`), with `shown` the prompt in the transcript.
function M.ask_argument(argument, bufnr, command, shown)
  local c = running_client()
  if not c then
    return false
  end
  if state.run_id then
    notify(string.format('a run is already active (%s); wait for it or :TandemCancel', state.run_id), vim.log.levels.WARN)
    return false
  end
  -- Continue the current conversation thread (:TandemNew starts a new one).
  if argument.threadId == nil and M.thread_id then
    argument.threadId = M.thread_id
  end
  transcript.start(shown or argument.prompt)
  state.set_run('starting')
  review.changed_lines = {}
  c:request('workspace/executeCommand', { command = command or 'tandem.ask', arguments = { argument } }, function(err, result)
    if result and result.threadId then
      M.thread_id = result.threadId
    end
    state.ended(result and result.runId)
    state.finish(result and result.status or 'failed')
    if err then
      transcript.finish('failed', err.message or vim.inspect(err))
      notify('the run did not start: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    transcript.finish(result.status, result.text) -- no-op when the end event framed it
    transcript.edits(result.edits, review.changed_lines, result.summary)
    if result.status == 'failed' and (result.text or ''):match('^no model provider is configured') then
      -- The whole advice is in the transcript; the message area gets one line.
      notify('no model is configured: give Tandem a key or a local model, see :help tandem-model', vim.log.levels.ERROR)
      return
    end
    local level = result.status == 'completed' and vim.log.levels.INFO or vim.log.levels.WARN
    local how = result.status == 'failed' and ('failed: ' .. vim.split(result.text or '', '\n', { plain = true })[1])
      or result.status
    notify(string.format('run %s. %s', how, edits.summary(result.edits, result.summary)), level)
  end, bufnr)
  return true
end

--- Start a new conversation thread: the next ask does not continue the
--- current one, and the transcript starts empty.
function M.new_thread()
  M.thread_id = nil
  transcript.clear()
  notify('new conversation: the next :TandemAsk starts a new thread')
end

--- Make `thread_id` the current thread and show its whole past in the
--- transcript (`tandem.transcript`).
local function load_thread(c, thread_id)
  local argument = { threadId = thread_id }
  c:request('workspace/executeCommand', { command = 'tandem.transcript', arguments = { argument } }, function(err, result)
    if err then
      notify('cannot resume ' .. thread_id .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    M.thread_id = thread_id
    transcript.replay((result or {}).events, (result or {}).omitted)
    transcript.show()
    notify('resumed conversation ' .. thread_id .. ': :TandemAsk continues it')
  end)
end

--- Continue a saved conversation thread: `thread_id`, or one picked from
--- this workspace's threads (`tandem.threads`, most recent first). The
--- transcript shows its whole history, and :TandemAsk continues it.
function M.resume(thread_id)
  local c = running_client()
  if not c then
    return
  end
  if state.run_id then
    notify(string.format('a run is active (%s); wait for it or :TandemCancel', state.run_id), vim.log.levels.WARN)
    return
  end
  if thread_id and thread_id ~= '' then
    load_thread(c, thread_id)
    return
  end
  c:request('workspace/executeCommand', { command = 'tandem.threads', arguments = {} }, function(err, result)
    if err then
      notify('cannot list the conversations: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local threads = (result or {}).threads or {}
    if #threads == 0 then
      notify('no saved conversation in this workspace')
      return
    end
    vim.ui.select(threads, {
      prompt = 'Resume a Tandem conversation',
      format_item = function(thread)
        local when = (thread.lastActivity or ''):sub(1, 16):gsub('T', ' ')
        return string.format('%s  %s  (%d runs)', when, thread.title or thread.threadId, thread.runs or 0)
      end,
    }, function(choice)
      if choice then
        load_thread(c, choice.threadId)
      end
    end)
  end)
end

--- The user's comments on a run's changes, kept until :TandemSendReview
--- sends them: { uri, startLine, endLine, comment } each.
M.review_comments = {}

--- Comment on lines of the current file (`range`: { start_line,
--- end_line }, else the cursor's line): kept for :TandemSendReview. An
--- empty `text` is asked for with vim.ui.input.
function M.comment(text, range)
  local bufnr = vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= '' or vim.api.nvim_buf_get_name(bufnr) == '' then
    notify('comment on lines of a file (the run changed), not here', vim.log.levels.WARN)
    return
  end
  local line = vim.api.nvim_win_get_cursor(0)[1]
  range = range or { start_line = line, end_line = line }
  local function keep(words)
    words = vim.trim(words or '')
    if words == '' then
      return
    end
    table.insert(M.review_comments, { uri = vim.uri_from_bufnr(bufnr), startLine = range.start_line, endLine = range.end_line, comment = words })
    notify(string.format('%d review comment(s) kept: :TandemSendReview (or /sendreview in the chat) sends them to Tandem', #M.review_comments))
  end
  if text and text ~= '' then
    keep(text)
  else
    vim.ui.input({ prompt = string.format('Comment on lines %d-%d for Tandem: ', range.start_line, range.end_line) }, keep)
  end
end

--- "Send review to agent": the kept comments start the conversation's
--- next turn (`tandem.sendReview`), `extra` words after them.
function M.send_review(extra)
  if #M.review_comments == 0 then
    notify('no review comments to send: :TandemComment on the changed lines first', vim.log.levels.WARN)
    return
  end
  local comments = M.review_comments
  local shown = string.format('Review: %d comment(s) on the changes%s', #comments, (extra and extra ~= '') and (' — ' .. extra) or '')
  if M.ask_argument({ comments = comments, prompt = extra }, nil, 'tandem.sendReview', shown) then
    M.review_comments = {}
  end
end

--- Ask the agent. `range` is { start_line, end_line } (1-based, inclusive).
function M.ask(prompt, range)
  if prompt == nil or prompt == '' then
    prompt = vim.fn.input('Ask Tandem: ')
    if prompt == '' then
      notify('nothing asked (empty prompt)')
      return
    end
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local argument = { prompt = prompt }
  if vim.bo[bufnr].buftype == '' then
    argument.textDocument = { uri = vim.uri_from_bufnr(bufnr) }
    if range then
      local last = vim.api.nvim_buf_get_lines(bufnr, range.end_line - 1, range.end_line, false)[1] or ''
      argument.range = {
        start = { line = range.start_line - 1, character = 0 },
        ['end'] = { line = range.end_line - 1, character = #last },
      }
    end
  end
  M.ask_argument(argument, bufnr)
end

--- Client-side commands: the server's code actions run `tandem.ask`
--- through the plugin, so they get the same transcript and messages.
M.commands = {
  ['tandem.ask'] = function(command, ctx)
    local argument = (command.arguments or {})[1]
    if type(argument) ~= 'table' or not argument.prompt then
      notify('the code action carried no prompt', vim.log.levels.ERROR)
      return
    end
    -- The server's code actions say "wait": false for synchronous clients;
    -- the plugin waits without blocking, and frames the run with its answer.
    argument = vim.deepcopy(argument)
    argument.wait = nil
    M.ask_argument(argument, ctx and ctx.bufnr or vim.api.nvim_get_current_buf())
  end,
}

function M.cancel()
  local c = M.client()
  local run_id = state.run_id ~= 'starting' and state.run_id or transcript.run_id()
  if not c then
    notify('the language server is not running; no run is active')
    return
  end
  if not state.run_id or not run_id then
    notify('no run is active')
    return
  end
  c:request('workspace/executeCommand', { command = 'tandem.cancel', arguments = { { runId = run_id } } }, function(err, result)
    if err then
      notify('cancel failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif result and result.cancelled then
      notify('cancelling ' .. run_id)
    else
      notify(run_id .. ' had already ended; no run is active')
    end
  end)
end

--- The message after `tandem.undo` / `tandem.redo`: the counts, then one
--- line per file with its status (and why, for a conflict).
function M.undo_message(verb, result)
  local counts = { restored = 0, unchanged = 0, conflict = 0 }
  local lines = {}
  for _, file in ipairs(result.files or {}) do
    counts[file.status] = (counts[file.status] or 0) + 1
    local path = vim.fn.fnamemodify(vim.uri_to_fname(file.uri), ':~:.')
    local reason = file.reason and (': ' .. file.reason) or ''
    table.insert(lines, string.format('  %-9s %s%s', file.status, path, reason))
  end
  local done = verb == 'undo' and 'undid' or 'redid'
  local head = string.format('%s %s: %d restored, %d unchanged, %d conflict%s', done, result.runId or '?', counts.restored,
    counts.unchanged, counts.conflict, counts.conflict == 1 and '' or 's')
  return head .. '\n' .. table.concat(lines, '\n'), counts.conflict > 0
end

--- :TandemUndo [{run}] / :TandemRedo [{run}]: take the last run (or {run})
--- back from its checkpoint, or put it back (`tandem.undo`, `tandem.redo`).
--- Buffers are restored through the editor (reviewed in the default mode,
--- each file whole unless `per_hunk`, :TandemUndo!; undone with `u`), files
--- that are not open on disk.
local function restore(verb, run_id, per_hunk)
  local c = running_client()
  if not c then
    return
  end
  local args = {}
  if run_id and run_id ~= '' then
    args.runId = run_id
  end
  if per_hunk then
    args.perHunk = true
  end
  local arguments = next(args) and { args } or {}
  c:request('workspace/executeCommand', { command = 'tandem.' .. verb, arguments = arguments }, function(err, result)
    if err then
      notify(err.message or vim.inspect(err), vim.log.levels.WARN)
      return
    end
    local message, conflicts = M.undo_message(verb, result or {})
    notify(message, conflicts and vim.log.levels.WARN or vim.log.levels.INFO)
  end)
end

function M.undo(run_id, per_hunk)
  restore('undo', run_id, per_hunk)
end

function M.redo(run_id)
  restore('redo', run_id)
end

--- :TandemTrust: trust this folder's own settings files (.tandem/settings.json,
--- .tandem/settings.local.json, .mcp.json) as they are now (`tandem.trust`);
--- until then they may only tighten. When what now applies starts with a
--- session (MCP or language servers), the server is restarted.
function M.trust()
  local c = running_client()
  if not c then
    return
  end
  c:request('workspace/executeCommand', { command = 'tandem.trust', arguments = {} }, function(err, result)
    if err then
      notify('cannot trust this folder: ' .. (err.message or vim.inspect(err)), vim.log.levels.WARN)
      return
    end
    result = result or {}
    local applied = result.applied or {}
    local lines = { 'trusts the settings files of ' .. tostring(result.trusted) .. ' as they are now' }
    if #applied == 0 then
      table.insert(lines, '  (nothing in them needed it)')
    end
    for _, item in ipairs(applied) do
      table.insert(lines, '  now applied: ' .. item)
    end
    for _, item in ipairs(result.skipped or {}) do
      table.insert(lines, '  not read, so not trusted: ' .. item)
    end
    table.insert(lines, 'When one changes, it is ignored again until you trust the folder again.')
    notify(table.concat(lines, '\n'), vim.log.levels.INFO)
    if result.restart then
      -- The project's MCP and language servers start with a new session.
      local buffers = vim.lsp.get_buffers_by_client_id(c.id)
      local old = c.id
      c:stop()
      for _, bufnr in ipairs(buffers) do
        if vim.api.nvim_buf_is_valid(bufnr) then
          M.attach(bufnr, old)
        end
      end
    end
  end)
end

--- One background task as :TandemTasks lists it: "1  running  npm run dev".
local function task_line(task)
  local how = task.status or '?'
  if how == 'exited' and task.exit_code ~= nil then
    how = 'exited ' .. tostring(task.exit_code)
  end
  local command = vim.split(task.command or '', '\n', { plain = true })[1]
  return string.format('%s  %s  %s', task.id or '?', how, command)
end

--- :TandemTasks: the session's background tasks (`tandem.tasks`); picking a
--- running one stops it (`tandem.stopTask`), and the model is told.
function M.tasks()
  local c = running_client()
  if not c then
    return
  end
  c:request('workspace/executeCommand', { command = 'tandem.tasks', arguments = {} }, function(err, result)
    if err then
      notify('cannot list the background tasks: ' .. (err.message or vim.inspect(err)), vim.log.levels.WARN)
      return
    end
    local tasks = (result or {}).tasks or {}
    if #tasks == 0 then
      notify('no background tasks in this session', vim.log.levels.INFO)
      return
    end
    vim.ui.select(tasks, { prompt = 'Tandem background tasks (pick a running one to stop it)', format_item = task_line }, function(task)
      if not task then
        return
      end
      if task.status ~= 'running' then
        notify('task ' .. tostring(task.id) .. ' is not running (' .. task_line(task) .. ')', vim.log.levels.INFO)
        return
      end
      c:request('workspace/executeCommand', { command = 'tandem.stopTask', arguments = { { taskId = task.id } } }, function(stop_err, stopped)
        if stop_err then
          notify('cannot stop task ' .. tostring(task.id) .. ': ' .. (stop_err.message or vim.inspect(stop_err)), vim.log.levels.WARN)
          return
        end
        notify('stopped: ' .. task_line((stopped or {}).task or task), vim.log.levels.INFO)
      end)
    end)
  end)
end

function M.show_transcript()
  transcript.show()
end

--- :TandemFix: ask the agent to fix the diagnostics on the cursor's line,
--- from every source, as the code action "Tandem: fix this error" does.
function M.fix()
  local bufnr = vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local diagnostics = M.diagnostics_at(bufnr, line, line)
  if #diagnostics == 0 then
    notify('no diagnostic on this line (:TandemFix fixes the errors under the cursor)', vim.log.levels.WARN)
    return
  end
  local messages = {}
  for _, diagnostic in ipairs(diagnostics) do
    table.insert(messages, diagnostic.message)
  end
  M.ask_argument({
    prompt = 'Fix this error: ' .. table.concat(messages, '\n'),
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = diagnostics[1].range,
    diagnostics = diagnostics,
  }, bufnr)
end

--- :TandemChat [{message}]: the conversation as a buffer you type in.
function M.chat(text)
  require('tandem.chat').open(text)
end

--- For the statusline: '' when Tandem is not attached to the current
--- buffer, else 'Tandem', 'Tandem: working', 'Tandem: edit_file a.txt', or
--- 'Tandem: review'.
function M.status()
  local ok, clients = pcall(vim.lsp.get_clients, { name = 'tandem', bufnr = 0 })
  -- The review's own window counts as Tandem's, and so does the chat
  -- (the transcript) while the server runs: the user watches the run there.
  local ours = vim.b.tandem_review == true or (vim.b.tandem_transcript == true and M.client() ~= nil)
  return state.status((ok and #clients > 0) or ours)
end

return M
