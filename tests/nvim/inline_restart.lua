-- Inline completions turned on while Tandem runs in a real headless Neovim
-- 0.12, for tests/editors/inline.rs. The plugin is set up with
-- `inline_completions` off; once the client is initialized the editor's
-- settings turn them on (`workspace/didChangeConfiguration`). Neovim says
-- `dynamicRegistration = false` for inline completions, so Tandem cannot
-- register its provider now and tells the user to restart the server; the
-- report says what Neovim advertised and what `vim.notify` showed.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN (editors/nvim), SCENARIO_INLINE
-- (the inlineCompletions settings at start, JSON), SCENARIO_OUT (the JSON
-- report).
local env = vim.env
vim.opt.runtimepath:prepend(env.TANDEM_PLUGIN)
vim.cmd('runtime plugin/tandem.lua')
vim.opt.swapfile = false

local report = { errors = {}, notified = {} }
local function finish()
  local file = assert(io.open(env.SCENARIO_OUT, 'w'))
  file:write(vim.json.encode(report))
  file:close()
  vim.cmd('qa!')
end

-- Every message shown, as Neovim's handler of window/showMessage shows it.
local notify = vim.notify
vim.notify = function(message, level, ...)
  table.insert(report.notified, { text = message, level = level })
  return notify(message, level, ...)
end

--- Call `done` once `check()` holds (polled by a timer in the main loop),
--- or with false after `ms`.
local function when(ms, check, done)
  local deadline = vim.uv.now() + ms
  local function poll()
    local ok, result = pcall(check)
    if ok and result then
      done(true)
    elseif vim.uv.now() > deadline then
      done(false)
    else
      vim.defer_fn(poll, 20)
    end
  end
  poll()
end

local function step(fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then
      table.insert(report.errors, tostring(err))
      finish()
    end
  end
end

local function restart_message()
  for _, message in ipairs(report.notified) do
    if message.text:find('Restart the Tandem server', 1, true) then
      return message
    end
  end
end

local inline = vim.json.decode(env.SCENARIO_INLINE)
require('tandem').setup({ cmd = { env.TANDEM_BIN, 'lsp' }, inline_completions = inline })

local client
when(30000, function()
  client = vim.lsp.get_clients({ name = 'tandem', bufnr = 0 })[1]
  return client ~= nil and client.initialized
end, step(function(started)
  assert(started, 'the Tandem client did not start')
  report.dynamic_registration = vim.tbl_get(client.capabilities, 'textDocument', 'inlineCompletion', 'dynamicRegistration')
  report.advertised_at_start = client.server_capabilities.inlineCompletionProvider ~= nil
  local on = vim.deepcopy(inline)
  on.enabled = true
  client:notify('workspace/didChangeConfiguration', { settings = { tandem = { inlineCompletions = on } } })
  when(20000, restart_message, step(function(told)
    report.told = told
    report.message = restart_message()
    finish()
  end))
end))
