-- Answers Tandem's `tandem/codeIntel` request from the buffer's other
-- language servers (every client attached to it but Tandem) and from
-- vim.diagnostic, so the agent can ask for definitions, references,
-- symbols, the call hierarchy and a file's diagnostics. See
-- docs/protocol.md ("tandem/codeIntel") for the request and its answers.
--
-- Positions on the wire are UTF-16 (LSP's default); each client gets the
-- position in its own offset encoding. The answers are the servers' own
-- LSP results, one per client that answered.
local M = {}

local await = require('tandem.await')

-- How long a question waits for a language server that is still starting
-- (no client attached to the buffer yet), in milliseconds.
M.attach_wait_ms = 5000
-- How long a question waits for the servers' answers (the server gives up
-- sooner, after timeouts.codeIntelMs, and withdraws the request).
M.answer_wait_ms = 30000

local methods = {
  definition = 'textDocument/definition',
  references = 'textDocument/references',
  implementation = 'textDocument/implementation',
  hover = 'textDocument/hover',
  documentSymbols = 'textDocument/documentSymbol',
  workspaceSymbols = 'workspace/symbol',
  incomingCalls = 'textDocument/prepareCallHierarchy',
  outgoingCalls = 'textDocument/prepareCallHierarchy',
}

-- The last diagnostics change of each buffer: the buffer's changedtick
-- then (Neovim's LSP document version) and when it happened.
local changes = {}
local listening = false

local function listen()
  if listening then
    return
  end
  listening = true
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = vim.api.nvim_create_augroup('tandem.code_intel', { clear = true }),
    callback = function(args)
      local bufnr = args.buf
      if bufnr and vim.api.nvim_buf_is_valid(bufnr) then
        changes[bufnr] = { tick = vim.b[bufnr].changedtick, time = vim.uv.now() }
      end
    end,
  })
end
M.listen = listen

--- The buffer for `uri`, loaded (so its language servers can attach).
local function buffer_for(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    pcall(vim.fn.bufload, bufnr)
    -- A buffer loaded without being shown gets no filetype (and so no
    -- language server) until detection runs.
    if vim.bo[bufnr].filetype == '' then
      pcall(vim.api.nvim_buf_call, bufnr, function()
        vim.cmd('filetype detect')
      end)
    end
  end
  return bufnr
end

--- The clients attached to `bufnr` other than Tandem that support `method`
--- (all attached ones when `method` is nil).
local function servers(bufnr, method)
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if client.name ~= 'tandem' and (method == nil or client:supports_method(method, bufnr)) then
      table.insert(found, client)
    end
  end
  return found
end

--- Every client but Tandem (for a workspace symbol search with no file).
local function all_servers(method)
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients()) do
    if client.name ~= 'tandem' and client:supports_method(method) then
      table.insert(found, client)
    end
  end
  return found
end

--- Wait (bounded) until some client but Tandem is attached to `bufnr`.
local function wait_for_attach(bufnr, method)
  if #servers(bufnr, method) > 0 then
    return
  end
  await.answer(function(settle)
    local timer = vim.uv.new_timer()
    local autocmd
    local function done()
      if timer then
        timer:stop()
        timer:close()
        timer = nil
      end
      if autocmd then
        pcall(vim.api.nvim_del_autocmd, autocmd)
        autocmd = nil
      end
      settle(true)
    end
    autocmd = vim.api.nvim_create_autocmd('LspAttach', {
      buffer = bufnr,
      callback = function()
        if #servers(bufnr, method) > 0 then
          vim.schedule(done)
        end
      end,
    })
    timer:start(M.attach_wait_ms, 0, vim.schedule_wrap(done))
  end)
end

--- `position` (UTF-16) as `client` counts it on `bufnr`.
local function position_for(client, bufnr, position)
  local encoding = client.offset_encoding or 'utf-16'
  if encoding == 'utf-16' or not position then
    return position
  end
  local line = vim.api.nvim_buf_get_lines(bufnr, position.line, position.line + 1, false)[1] or ''
  local ok, byte = pcall(vim.str_byteindex, line, 'utf-16', position.character, false)
  if not ok then
    return position
  end
  if encoding == 'utf-8' then
    return { line = position.line, character = byte }
  end
  local ok32, index = pcall(vim.str_utfindex, line, encoding, byte, false)
  return { line = position.line, character = ok32 and index or position.character }
end

--- Send `method` to each client (`params_for(client)`), wait for every
--- answer (bounded), and return the results in client order.
local function ask_each(clients, bufnr, method, params_for, request_id)
  local results = {}
  if #clients == 0 then
    return results
  end
  local answered = 0
  await.answer(function(settle)
    local timer = vim.uv.new_timer()
    local function finish()
      if timer then
        timer:stop()
        timer:close()
        timer = nil
      end
      settle(true)
    end
    for index, client in ipairs(clients) do
      local ok = client:request(method, params_for(client), function(err, result)
        if not err then
          results[index] = result == nil and vim.NIL or result
        end
        answered = answered + 1
        if answered == #clients then
          vim.schedule(finish)
        end
      end, bufnr)
      if not ok then
        answered = answered + 1
      end
    end
    if answered == #clients then
      vim.schedule(finish)
    end
    timer:start(M.answer_wait_ms, 0, vim.schedule_wrap(finish))
  end, request_id)
  local list = {}
  for index = 1, #clients do
    if results[index] ~= nil then
      table.insert(list, results[index])
    end
  end
  return list
end

--- The call hierarchy: prepare on each client, then ask the same client
--- for the incoming or outgoing calls of each item it gave.
local function calls(clients, bufnr, uri, position, operation, request_id)
  local method = operation == 'incomingCalls' and 'callHierarchy/incomingCalls' or 'callHierarchy/outgoingCalls'
  local results = {}
  for _, client in ipairs(clients) do
    local prepared = ask_each({ client }, bufnr, 'textDocument/prepareCallHierarchy', function(c)
      return { textDocument = { uri = uri }, position = position_for(c, bufnr, position) }
    end, request_id)[1]
    if type(prepared) == 'table' then
      for _, item in ipairs(prepared) do
        local answer = ask_each({ client }, bufnr, method, function()
          return { item = item }
        end, request_id)[1]
        if answer ~= nil then
          table.insert(results, answer)
        end
      end
    end
  end
  return results
end

--- The buffer's diagnostics from every source but Tandem, in LSP form.
local function diagnostics_of(bufnr)
  local tandem = {}
  for _, client in ipairs(vim.lsp.get_clients({ name = 'tandem' })) do
    tandem[vim.lsp.diagnostic.get_namespace(client.id)] = true
  end
  local list = {}
  for _, diagnostic in ipairs(vim.diagnostic.get(bufnr)) do
    if not tandem[diagnostic.namespace] then
      local original = diagnostic.user_data and diagnostic.user_data.lsp
      table.insert(list, original or vim.lsp.diagnostic.from({ diagnostic })[1])
    end
  end
  return list
end

--- Wait until the diagnostics of `bufnr` have settled after the edit that
--- made version `settle.version`: a change seen at that version or later,
--- then none for `settle.quietMs`; at most `settle.timeoutMs`. True when
--- they settled.
local function wait_settled(bufnr, settle_params, request_id)
  local version = tonumber(settle_params.version) or vim.b[bufnr].changedtick
  local quiet = tonumber(settle_params.quietMs) or 300
  local bound = tonumber(settle_params.timeoutMs) or 3000
  local result = await.answer(function(settle)
    local quiet_timer = vim.uv.new_timer()
    local bound_timer = vim.uv.new_timer()
    local autocmd
    local function finish(value)
      for _, timer in ipairs({ quiet_timer, bound_timer }) do
        if not timer:is_closing() then
          timer:stop()
          timer:close()
        end
      end
      if autocmd then
        pcall(vim.api.nvim_del_autocmd, autocmd)
        autocmd = nil
      end
      settle(value)
    end
    local function quiet_from(last_time)
      local remaining = math.max(0, quiet - (vim.uv.now() - last_time))
      quiet_timer:stop()
      quiet_timer:start(remaining, 0, vim.schedule_wrap(function()
        finish(true)
      end))
    end
    autocmd = vim.api.nvim_create_autocmd('DiagnosticChanged', {
      buffer = bufnr,
      callback = function()
        if vim.b[bufnr].changedtick >= version then
          quiet_from(vim.uv.now())
        end
      end,
    })
    local last = changes[bufnr]
    if last and last.tick >= version then
      quiet_from(last.time)
    end
    bound_timer:start(bound, 0, vim.schedule_wrap(function()
      finish(false)
    end))
  end, request_id)
  return result == true
end

--- The `tandem/codeIntel` handler.
function M.handle(_, params)
  listen()
  params = params or {}
  local request_id = await.request_id(params)
  local operation = params.operation
  if operation == 'diagnostics' then
    if not params.uri then
      return nil, { code = -32602, message = 'diagnostics needs a uri' }
    end
    local bufnr = buffer_for(params.uri)
    local attached = #servers(bufnr)
    local settled = true
    if params.settle then
      -- Nothing but Tandem follows the buffer and no other source has
      -- spoken: there is nothing to wait for.
      if attached == 0 and #diagnostics_of(bufnr) == 0 then
        return { diagnostics = {}, settled = true, servers = 0 }
      end
      settled = wait_settled(bufnr, params.settle, request_id)
    end
    return { diagnostics = diagnostics_of(bufnr), settled = settled, servers = attached > 0 and attached or nil }
  end
  local method = methods[operation]
  if not method then
    return nil, { code = -32602, message = 'unknown operation: ' .. tostring(operation) }
  end
  if operation == 'workspaceSymbols' and not params.uri then
    local clients = all_servers(method)
    local results = ask_each(clients, nil, method, function()
      return { query = params.query or '' }
    end, request_id)
    return { results = results, servers = #clients }
  end
  if not params.uri then
    return nil, { code = -32602, message = operation .. ' needs a uri' }
  end
  local bufnr = buffer_for(params.uri)
  wait_for_attach(bufnr, method)
  local clients = servers(bufnr, method)
  local uri = params.uri
  local results
  if operation == 'incomingCalls' or operation == 'outgoingCalls' then
    results = calls(clients, bufnr, uri, params.position, operation, request_id)
  else
    results = ask_each(clients, bufnr, method, function(client)
      if operation == 'workspaceSymbols' then
        return { query = params.query or '' }
      end
      local request = { textDocument = { uri = uri } }
      if operation ~= 'documentSymbols' then
        request.position = position_for(client, bufnr, params.position)
      end
      if operation == 'references' then
        request.context = { includeDeclaration = true }
      end
      return request
    end, request_id)
  end
  return { results = results, servers = #clients }
end

return M
