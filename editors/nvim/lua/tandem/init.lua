-- Tandem for Neovim: starts `tandem lsp`, sends `tandem.ask`, shows the live
-- transcript from `tandem/runEvent`, and saves buffers on `tandem/saveDocuments`.
--
-- Edits arrive as ordinary `workspace/applyEdit` requests, so they land in
-- the undo history like any other change (`u` undoes the agent's edit).
local M = {}

local transcript = require('tandem.transcript')

M.config = {
  cmd = { 'tandem', 'lsp' },
  root_markers = { '.tandem', '.git' },
  permission_mode = nil, -- 'default' | 'acceptEdits' | 'plan'
  flags = nil, -- passed to vim.lsp.start (e.g. { debounce_text_changes = 150 })
}

M.current_run = nil

--- Server → client notifications and requests Tandem adds to LSP.
M.handlers = {
  ['tandem/runEvent'] = function(_, params)
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
}

local function client()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in ipairs(get({ name = 'tandem' })) do
    return c
  end
  return nil
end

local function root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= '' and vim.fs.dirname(name) or vim.loop.cwd()
  local found = vim.fs.find(M.config.root_markers, { path = start, upward = true })[1]
  return found and vim.fs.dirname(found) or vim.loop.cwd()
end

--- Start (or attach to) the Tandem server for a buffer.
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= '' then
    return
  end
  local init_options = { tandem = { saveDocuments = true, permissionMode = M.config.permission_mode } }
  vim.lsp.start({
    name = 'tandem',
    cmd = M.config.cmd,
    root_dir = root_dir(bufnr),
    init_options = init_options,
    handlers = M.handlers,
    flags = M.config.flags,
  }, { bufnr = bufnr })
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', M.config, opts or {})
  vim.api.nvim_create_autocmd('BufEnter', {
    group = vim.api.nvim_create_augroup('tandem', { clear = true }),
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  M.attach(vim.api.nvim_get_current_buf())
end

--- Ask the agent. `range` is { start_line, end_line } (1-based, inclusive).
function M.ask(prompt, range)
  local c = client()
  if not c then
    vim.notify('Tandem: the language server is not running (call require("tandem").setup())', vim.log.levels.ERROR)
    return
  end
  if prompt == nil or prompt == '' then
    prompt = vim.fn.input('Ask Tandem: ')
    if prompt == '' then
      return
    end
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local argument = { prompt = prompt, textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  if range then
    local last = vim.api.nvim_buf_get_lines(bufnr, range.end_line - 1, range.end_line, false)[1] or ''
    argument.range = {
      start = { line = range.start_line - 1, character = 0 },
      ['end'] = { line = range.end_line - 1, character = #last },
    }
  end
  transcript.start(prompt)
  c.request('workspace/executeCommand', { command = 'tandem.ask', arguments = { argument } }, function(err, result)
    M.current_run = nil
    if err then
      transcript.finish('failed', err.message or vim.inspect(err))
      return
    end
    transcript.finish(result.status, result.text)
  end, bufnr)
end

function M.cancel()
  local c = client()
  local run_id = transcript.run_id()
  if not c or not run_id then
    vim.notify('Tandem: no run to cancel', vim.log.levels.INFO)
    return
  end
  c.request('workspace/executeCommand', { command = 'tandem.cancel', arguments = { { runId = run_id } } }, function() end)
end

function M.show_transcript()
  transcript.show()
end

return M
