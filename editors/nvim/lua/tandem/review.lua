-- The plugin's own review of the agent's edits. The plugin advertises change
-- annotations, so in the default permission mode Tandem marks each edit
-- `needsConfirmation`; this `workspace/applyEdit` handler then shows the diff
-- (a floating unified diff, or a side-by-side `diffthis` split) and asks
-- through `vim.ui.select` — Apply / Reject / Apply all for the rest of the
-- run — before applying anything. Edits that need no confirmation apply as
-- Neovim would apply them.
--
-- Server requests run in a coroutine (vim.lsp.rpc), so the handler yields
-- while the choice is open and picker plugins can take their time. When the
-- server withdraws the request (`$/cancelRequest`: the run was cancelled, or
-- the server stopped waiting), the preview and the picker close, nothing is
-- applied, and a message says so.
local M = {}

M.APPLY = 'Apply'
M.REJECT = 'Reject'
M.APPLY_ALL = 'Apply all (rest of this run)'

--- Options, set by require('tandem').setup({ review = {...} }).
M.options = { layout = 'float' } -- 'float' (unified diff) | 'split' (diffthis)

-- The run whose remaining edits the user accepted with "Apply all".
local apply_all_run = nil

--- The first changed line (1-based) per URI of the last applied edits, so
--- the transcript can link to the changed place.
M.changed_lines = {}

--- True when any edit in `edit` carries an annotation that needs confirmation.
local function needs_confirmation(edit)
  local annotations = edit.changeAnnotations or {}
  local function annotated(text_edit)
    local id = text_edit.annotationId
    return id ~= nil and annotations[id] ~= nil and annotations[id].needsConfirmation == true
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    for _, text_edit in ipairs(change.edits or {}) do
      if annotated(text_edit) then
        return true
      end
    end
    if annotated(change) then
      return true
    end
  end
  return false
end

--- A copy of `edit` without annotations: Neovim applies it as a plain edit
--- (and 0.12 does not ask a second time).
local function strip_annotations(edit)
  local plain = vim.deepcopy(edit)
  plain.changeAnnotations = nil
  for _, change in ipairs(plain.documentChanges or {}) do
    change.annotationId = nil
    for _, text_edit in ipairs(change.edits or {}) do
      text_edit.annotationId = nil
    end
  end
  return plain
end

local function buffer_lines(bufnr)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
  end
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

--- For each document the edit changes: its path, the lines before and after.
function M.changes(edit, position_encoding)
  local out = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and change.edits then
      local uri = change.textDocument.uri
      local bufnr = vim.uri_to_bufnr(uri)
      local before = buffer_lines(bufnr)
      local scratch = vim.api.nvim_create_buf(false, true)
      vim.api.nvim_buf_set_lines(scratch, 0, -1, false, before)
      local edits = vim.deepcopy(change.edits)
      for _, text_edit in ipairs(edits) do
        text_edit.annotationId = nil
      end
      vim.lsp.util.apply_text_edits(edits, scratch, position_encoding)
      local after = vim.api.nvim_buf_get_lines(scratch, 0, -1, false)
      vim.api.nvim_buf_delete(scratch, { force = true })
      local first = nil
      for _, text_edit in ipairs(change.edits) do
        local line = text_edit.range.start.line + 1
        first = first and math.min(first, line) or line
      end
      table.insert(out, {
        uri = uri,
        path = vim.fn.fnamemodify(vim.uri_to_fname(uri), ':~:.'),
        before = before,
        after = after,
        first_line = first or 1,
      })
    end
  end
  return out
end

--- The unified diff of all changes, as lines.
function M.unified(changes)
  local lines = {}
  for _, change in ipairs(changes) do
    table.insert(lines, '--- a/' .. change.path)
    table.insert(lines, '+++ b/' .. change.path)
    local diff = vim.diff(table.concat(change.before, '\n') .. '\n', table.concat(change.after, '\n') .. '\n', {
      result_type = 'unified',
      ctxlen = 3,
    })
    for _, line in ipairs(vim.split(diff, '\n', { plain = true, trimempty = true })) do
      table.insert(lines, line)
    end
  end
  return lines
end

--- Show `lines` in a floating window at the top of the editor, next to
--- the vim.ui.select choice; returns a function that closes it. `opts`:
--- `filetype` ('diff' by default) and `mark` (the buffer variable set to
--- true, 'tandem_review' by default).
function M.show_float(title, lines, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].filetype = opts.filetype or 'diff'
  vim.bo[bufnr].modifiable = false
  vim.b[bufnr][opts.mark or 'tandem_review'] = true
  local width = math.min(math.max(40, vim.o.columns - 8), 120)
  local height = math.min(#lines, math.max(3, vim.o.lines - 10))
  local win = vim.api.nvim_open_win(bufnr, false, {
    relative = 'editor',
    row = 1,
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
    title = ' ' .. title .. ' ',
    title_pos = 'center',
    zindex = 60,
  })
  vim.cmd('redraw')
  return function()
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.api.nvim_buf_delete(bufnr, { force = true })
    end
  end
end

--- A tab with the current text and the proposed text side by side.
local function show_split(change)
  local previous_tab = vim.api.nvim_get_current_tabpage()
  vim.cmd('tabnew')
  local tab = vim.api.nvim_get_current_tabpage()
  local buffers = {}
  local function pane(lines, name)
    local bufnr = vim.api.nvim_get_current_buf()
    vim.bo[bufnr].buftype = 'nofile'
    vim.bo[bufnr].bufhidden = 'wipe'
    vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
    pcall(vim.api.nvim_buf_set_name, bufnr, name)
    vim.b[bufnr].tandem_review = true
    vim.bo[bufnr].modifiable = false
    vim.cmd('diffthis')
    table.insert(buffers, bufnr)
  end
  pane(change.before, 'tandem://current/' .. change.path)
  vim.cmd('rightbelow vnew')
  pane(change.after, 'tandem://proposed/' .. change.path)
  vim.cmd('redraw')
  return function()
    if vim.api.nvim_tabpage_is_valid(tab) then
      vim.api.nvim_set_current_tabpage(tab)
      vim.cmd('tabclose')
    end
    if vim.api.nvim_tabpage_is_valid(previous_tab) then
      vim.api.nvim_set_current_tabpage(previous_tab)
    end
  end
end

local await = require('tandem.await')

--- Ask the user (yields in the handler's coroutine); returns the choice,
--- nil when the picker was closed, or await.WITHDRAWN when the server
--- withdrew the request first (the picker's windows are closed then, and a
--- late answer is ignored).
local function choose(prompt)
  local items = { M.APPLY, M.REJECT, M.APPLY_ALL }
  local opts = { prompt = prompt, kind = 'tandem_review' }
  return await.answer(function(settle)
    vim.ui.select(items, opts, settle)
  end, await.request_id())
end

--- The `workspace/applyEdit` handler.
function M.apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  local edit = params.edit or {}
  local run = require('tandem.transcript').run_id()
  local ok, changes = pcall(M.changes, edit, encoding)
  if ok then
    for _, change in ipairs(changes) do
      M.changed_lines[change.uri] = change.first_line
    end
  end
  if needs_confirmation(edit) and not (run and apply_all_run == run) then
    local state = require('tandem.state')
    if not ok then
      return { applied = false, failureReason = 'the Tandem review could not show the edit: ' .. tostring(changes) }
    end
    local label = params.label or 'Tandem: edit'
    local close
    if M.options.layout == 'split' and #changes == 1 then
      close = show_split(changes[1])
    else
      close = M.show_float(label, M.unified(changes))
    end
    state.set_reviewing(label)
    local choice = choose(label .. ' — apply this edit?')
    state.set_reviewing(nil)
    close()
    -- Cancel means no edit lands: the server withdrew this request (the
    -- run was cancelled, or it stopped waiting for the answer).
    if choice == await.WITHDRAWN then
      vim.notify('Tandem: the review was withdrawn (the run was cancelled or stopped waiting); the edit was not applied', vim.log.levels.WARN)
      return { applied = false, failureReason = 'the server withdrew the review before it was answered' }
    end
    -- The run ended while the review was open, and the withdrawal was not
    -- seen (a Neovim whose handlers cannot learn the request's id).
    if run and state.ended_runs[run] then
      vim.notify('Tandem: the run was cancelled during the review; the edit was not applied', vim.log.levels.WARN)
      return { applied = false, failureReason = 'the run was cancelled before the review was answered' }
    end
    if choice == M.APPLY_ALL then
      apply_all_run = run
    elseif choice ~= M.APPLY then
      if choice ~= M.REJECT then
        -- Closing the review is a rejection too: say so, the edit is gone.
        local paths = {}
        for _, change in ipairs(changes) do
          table.insert(paths, change.path)
        end
        vim.notify(
          string.format('Tandem: review closed, so the edit to %s was rejected (not applied)', table.concat(paths, ', ')),
          vim.log.levels.WARN
        )
      end
      local why = choice == M.REJECT and 'the user chose Reject in the Tandem review'
        or 'the user closed the Tandem review without choosing, which rejects the edit'
      return { applied = false, failureReason = why }
    end
  end
  local applied, err = pcall(vim.lsp.util.apply_workspace_edit, strip_annotations(edit), encoding)
  return { applied = applied, failureReason = (not applied) and tostring(err) or nil }
end

return M
