-- The plugin's own review of the agent's edits. The plugin advertises change
-- annotations, so in the default permission mode Tandem marks each edit
-- `needsConfirmation`; this `workspace/applyEdit` handler then opens the
-- review before applying anything: a focused, scrollable floating window
-- holding the diff hunk by hunk, answered with keys shown at its top —
--   a apply hunk   r reject hunk   A apply all   R reject all
--   n / ] next     p / [ previous  ! apply all for the rest of this run
--   c comment on the hunk             q quit (rejects the edit)
-- — and only the hunks the user applied are applied (the server works out
-- from the buffer which landed, and tells the model). With `layout =
-- 'split'` the current and proposed text are side by side (`diffthis`) and
-- the keys answer for the whole edit. Closing the review any other way
-- rejects the edit too, with a message that says so. Edits that need no
-- confirmation apply as Neovim would apply them. A comment (`c`) goes with
-- the answer (`comments` in the applyEdit result: the hunk, its lines, the
-- decision, the words), and the model reads it in the edit's result.
--
-- Server requests run in a coroutine (vim.lsp.rpc), so the handler yields
-- while the review is open. When the server withdraws the request
-- (`$/cancelRequest`: the run was cancelled, or the server stopped
-- waiting), the review closes, nothing is applied, and a message says so.
local M = {}

--- The review's keys, as shown at the top of its window (M.legend lays
--- them out in as many lines as its width needs).
M.KEYS = { 'a apply hunk', 'r reject hunk', 'A apply all', 'R reject all', 'n/] next', 'p/[ previous', 'c comment', '! apply all (rest of run)', 'q quit (rejects)' }
M.SPLIT_KEYS = 'A apply  R reject  ! apply all (rest of run)  q quit (rejects)'

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

--- Show `lines` in a floating window at the top of the editor, next to a
--- vim.ui.select choice (the plugin's questions); returns a function that
--- closes it. `opts`:
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
  vim.wo[win].foldenable = false
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

--- The hunks of a document change: its text edits, those on a shared line
--- together, each with the unified diff it makes alone (2 lines of context).
function M.hunks(change, position_encoding)
  local groups = {}
  local sorted = vim.deepcopy(change.edits or {})
  table.sort(sorted, function(x, y)
    local a, b = x.range.start, y.range.start
    return a.line < b.line or (a.line == b.line and a.character < b.character)
  end)
  for _, text_edit in ipairs(sorted) do
    text_edit.annotationId = nil
    local last = groups[#groups]
    if last and text_edit.range.start.line <= last.last_line then
      table.insert(last.edits, text_edit)
      last.last_line = math.max(last.last_line, text_edit.range['end'].line)
    else
      table.insert(groups, { edits = { text_edit }, first_line = text_edit.range.start.line + 1, last_line = text_edit.range['end'].line })
    end
  end
  local before = buffer_lines(vim.uri_to_bufnr(change.textDocument.uri))
  local before_text = table.concat(before, '\n') .. '\n'
  for _, hunk in ipairs(groups) do
    local scratch = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(scratch, 0, -1, false, before)
    vim.lsp.util.apply_text_edits(vim.deepcopy(hunk.edits), scratch, position_encoding)
    local after = vim.api.nvim_buf_get_lines(scratch, 0, -1, false)
    vim.api.nvim_buf_delete(scratch, { force = true })
    local diff = vim.diff(before_text, table.concat(after, '\n') .. '\n', { result_type = 'unified', ctxlen = 2 })
    hunk.diff = vim.split(diff, '\n', { plain = true, trimempty = true })
  end
  return groups
end

--- `items` two spaces apart, in lines of at most `width` columns: the
--- legend is never cut off at the window's edge (the diff does not wrap).
function M.legend(items, width)
  local lines = {}
  for _, item in ipairs(items) do
    local joined = lines[#lines] and (lines[#lines] .. '  ' .. item)
    if joined and vim.fn.strdisplaywidth(joined) <= width then
      lines[#lines] = joined
    else
      table.insert(lines, item)
    end
  end
  return lines
end

local legend_ns = vim.api.nvim_create_namespace('tandem_review_legend')

--- The review float's width: the editor's, less a margin, within 40..120.
local function review_width()
  return math.min(math.max(40, vim.o.columns - 8), 120)
end

--- Open a focused window on `bufnr`: a float at the top of the editor.
local function open_review_window(bufnr, title, height)
  local width = review_width()
  return vim.api.nvim_open_win(bufnr, true, {
    relative = 'editor',
    row = 1,
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = math.max(3, math.min(height, vim.o.lines - 6)),
    border = 'rounded',
    title = ' ' .. title .. ' ',
    title_pos = 'center',
    zindex = 60,
  })
end

--- The review buffer: every hunk of every document with its state; the
--- user answers with keys, `settle` gets `{ decisions = {…} }` (one
--- 'apply' / 'reject' per hunk), `'rest'` (apply all, rest of the run) or
--- `'closed'`; the user's comments (`c`, one per hunk number) are put in
--- `comments`. Returns a function that closes it.
local function review_hunks(title, documents, settle, comments)
  local hunks = {}
  for _, document in ipairs(documents) do
    for _, hunk in ipairs(document.hunks) do
      hunk.path = document.path
      table.insert(hunks, hunk)
    end
  end
  local decisions = {}
  local current = 1
  local header_lines = {}
  local done = false
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.bo[bufnr].bufhidden = 'wipe'
  vim.b[bufnr].tandem_review = true
  local previous_win = vim.api.nvim_get_current_win()
  local function render()
    local lines = M.legend(M.KEYS, review_width())
    local legend_rows = #lines
    table.insert(lines, '')
    header_lines = {}
    for index, hunk in ipairs(hunks) do
      local state = decisions[index] or 'undecided'
      local mark = index == current and '>' or ' '
      table.insert(header_lines, #lines + 1)
      table.insert(lines, string.format('%s hunk %d/%d  %s line %d  [%s]', mark, index, #hunks, hunk.path, hunk.first_line, state))
      if comments[index] then
        table.insert(lines, '  comment: ' .. comments[index]:gsub('\n', ' '))
      end
      vim.list_extend(lines, hunk.diff)
      table.insert(lines, '')
    end
    vim.bo[bufnr].modifiable = true
    vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
    vim.bo[bufnr].modifiable = false
    -- The legend in one colour: the diff syntax would colour a line of it
    -- that starts with `!` as a changed line.
    vim.api.nvim_buf_clear_namespace(bufnr, legend_ns, 0, -1)
    for row = 0, legend_rows - 1 do
      vim.api.nvim_buf_set_extmark(bufnr, legend_ns, row, 0, { end_row = row, end_col = #lines[row + 1], hl_group = 'Comment', priority = 200 })
    end
    return lines
  end
  local lines = render()
  vim.bo[bufnr].filetype = 'diff'
  local win = open_review_window(bufnr, title, #lines)
  vim.wo[win].cursorline = true
  vim.wo[win].wrap = false
  -- A new window takes the options of the one it opened from: the chat's
  -- folds (its tool output) would fold the diff away.
  vim.wo[win].foldenable = false
  local function focus()
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { header_lines[current], 0 })
      vim.api.nvim_win_call(win, function()
        if current == 1 then
          -- The first hunk under the key legend, both on screen.
          vim.fn.winrestview({ topline = 1 })
        else
          vim.cmd('normal! zt')
        end
      end)
    end
  end
  local function close()
    done = true
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
    if vim.api.nvim_win_is_valid(previous_win) then
      pcall(vim.api.nvim_set_current_win, previous_win)
    end
  end
  local function finish(value)
    if done then
      return
    end
    close()
    settle(value)
  end
  local function next_undecided()
    for offset = 1, #hunks do
      local index = (current - 1 + offset) % #hunks + 1
      if not decisions[index] then
        return index
      end
    end
    return nil
  end
  local function decide(answer)
    decisions[current] = answer
    local following = next_undecided()
    if not following then
      return finish({ decisions = decisions })
    end
    current = following
    render()
    focus()
  end
  local function decide_rest(answer)
    for index = 1, #hunks do
      decisions[index] = decisions[index] or answer
    end
    finish({ decisions = decisions })
  end
  -- The user's words on the current hunk, sent with the answer.
  local function comment()
    local index = current
    vim.ui.input({ prompt = string.format('Comment on hunk %d (sent to Tandem with your answer): ', index), default = comments[index] }, function(text)
      if done or text == nil then
        return
      end
      text = vim.trim(text)
      comments[index] = text ~= '' and text or nil
      render()
      focus()
    end)
  end
  local function move(step)
    current = (current - 1 + step) % #hunks + 1
    render()
    focus()
  end
  local keys = {
    a = function() decide('apply') end,
    r = function() decide('reject') end,
    A = function() decide_rest('apply') end,
    R = function() decide_rest('reject') end,
    n = function() move(1) end,
    [']'] = function() move(1) end,
    p = function() move(-1) end,
    ['['] = function() move(-1) end,
    c = comment,
    ['!'] = function() finish('rest') end,
    q = function() finish('closed') end,
    ['<Esc>'] = function() finish('closed') end,
  }
  for lhs, rhs in pairs(keys) do
    vim.keymap.set('n', lhs, rhs, { buffer = bufnr, nowait = true, desc = 'Tandem review' })
  end
  -- Closed another way (:q, <C-w>c, the server withdrawing it): a reject.
  -- Scheduled, so a withdrawal settles first.
  vim.api.nvim_create_autocmd('WinClosed', {
    pattern = tostring(win),
    once = true,
    callback = function()
      vim.schedule(function()
        if not done then
          done = true
          settle('closed')
        end
      end)
    end,
  })
  focus()
  vim.cmd('redraw')
  return close
end

--- A tab with the current text and the proposed text side by side, the
--- keys (for the whole edit) in each pane's winbar.
local function review_split(change, settle)
  local previous_tab = vim.api.nvim_get_current_tabpage()
  vim.cmd('tabnew')
  local tab = vim.api.nvim_get_current_tabpage()
  local done = false
  local function close()
    done = true
    if vim.api.nvim_tabpage_is_valid(tab) then
      vim.api.nvim_set_current_tabpage(tab)
      vim.cmd('tabclose')
    end
    if vim.api.nvim_tabpage_is_valid(previous_tab) then
      vim.api.nvim_set_current_tabpage(previous_tab)
    end
  end
  local function finish(value)
    if not done then
      close()
      settle(value)
    end
  end
  local keys = {
    A = function() finish({ all = 'apply' }) end,
    R = function() finish({ all = 'reject' }) end,
    ['!'] = function() finish('rest') end,
    q = function() finish('closed') end,
  }
  local function pane(lines, name)
    local bufnr = vim.api.nvim_get_current_buf()
    vim.bo[bufnr].buftype = 'nofile'
    vim.bo[bufnr].bufhidden = 'wipe'
    vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
    pcall(vim.api.nvim_buf_set_name, bufnr, name)
    vim.b[bufnr].tandem_review = true
    vim.bo[bufnr].modifiable = false
    vim.wo.winbar = M.SPLIT_KEYS
    vim.cmd('diffthis')
    for lhs, rhs in pairs(keys) do
      vim.keymap.set('n', lhs, rhs, { buffer = bufnr, nowait = true, desc = 'Tandem review' })
    end
  end
  pane(change.before, 'tandem://current/' .. change.path)
  vim.cmd('rightbelow vnew')
  pane(change.after, 'tandem://proposed/' .. change.path)
  vim.api.nvim_create_autocmd('TabClosed', {
    once = true,
    callback = function()
      vim.schedule(function()
        if not done then
          done = true
          settle('closed')
        end
      end)
    end,
  })
  vim.cmd('redraw')
  return close
end

local await = require('tandem.await')

--- Send the `didChange` of what was just applied to `edit`'s documents
--- now, before the answer: Neovim holds it back (debounce_text_changes) and
--- may send it in pieces, one per hunk, after the answer, so the server
--- would see a buffer holding some of the hunks and take the edit for
--- partly accepted.
function M.send_changes(edit, client)
  if not client then
    return
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and change.textDocument.uri then
      local bufnr = vim.uri_to_bufnr(change.textDocument.uri)
      pcall(function()
        require('vim.lsp._changetracking').flush(client, bufnr)
      end)
    end
  end
end

--- The documents `edit` changes that are open (attached to the client),
--- by buffer number: their LSP version now.
function M.open_versions(edit)
  local out = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    local document = change.textDocument
    if document and document.uri then
      local bufnr = vim.uri_to_bufnr(document.uri)
      if vim.api.nvim_buf_is_loaded(bufnr) then
        -- Not rawget: a buffer never changed since it was opened has no
        -- entry (its version is the table's default, 0), and it must
        -- count as open too.
        out[bufnr] = vim.lsp.util.buf_versions[bufnr]
      end
    end
  end
  return out
end

--- Why `edit` must not be applied now: a document it edits is open at
--- another version than the edit's (the user typed while the review was
--- open, or before the edit came), or was open (`opened`, from
--- M.open_versions) and is closed now. Neovim's own check skips version 0
--- (a buffer never changed since it was opened) and would apply the edit
--- to the wrong lines. `nil` when the edit may be applied. The reason
--- names the version and the change, so the server rebases the edit and
--- offers it again (docs/protocol.md); the buffer's pending `didChange` is
--- sent first, so the server has the text the user typed.
function M.stale(edit, client, opened)
  for _, change in ipairs(edit.documentChanges or {}) do
    local document = change.textDocument
    local version = document and document.version
    if document and document.uri then
      local bufnr = vim.uri_to_bufnr(document.uri)
      local path = vim.fn.fnamemodify(vim.uri_to_fname(document.uri), ':~:.')
      local now = vim.api.nvim_buf_is_loaded(bufnr) and vim.lsp.util.buf_versions[bufnr] or nil
      if opened and opened[bufnr] ~= nil and now == nil then
        -- Worded as a change, so the server waits for the didClose that
        -- may still be on its way before it reads the outcome.
        return string.format('the document changed while the edit was reviewed: the user closed %s', path)
      end
      if type(version) == 'number' and now ~= nil and now ~= version then
        if client then
          pcall(function()
            require('vim.lsp._changetracking').flush(client, bufnr)
          end)
        end
        return string.format('the document changed while the edit was reviewed or on its way: %s is at version %d, the edit is for version %d', path, now, version)
      end
    end
  end
  return nil
end

--- Send the `didChange` of every buffer the edit touched now, before the
--- answer: Neovim sends an edit's first change at once and holds the rest
--- for its debounce, so the answer would overtake them and the server
--- would judge a buffer holding only some of the hunks.
function M.send_changes(edit, client)
  if not client then
    return
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    local document = change.textDocument
    if document and document.uri then
      local bufnr = vim.uri_to_bufnr(document.uri)
      if vim.api.nvim_buf_is_loaded(bufnr) then
        pcall(function()
          require('vim.lsp._changetracking').flush(client, bufnr)
        end)
      end
    end
  end
end

--- The user's comments for the applyEdit answer: each commented hunk's
--- number, its lines before the edit, and what the user decided of it
--- (`decisions`, or `all` for every hunk).
local function comments_answer(documents, comments, decisions, all)
  local out, index = {}, 0
  for _, document in ipairs(documents) do
    for _, hunk in ipairs(document.hunks) do
      index = index + 1
      if comments[index] then
        local last = hunk.first_line
        for _, text_edit in ipairs(hunk.edits) do
          local stop = text_edit.range['end']
          -- A range ending at a line's start ends on the line before it.
          local line = (stop.character > 0 or stop.line + 1 == hunk.first_line) and stop.line + 1 or stop.line
          last = math.max(last, line)
        end
        local decision = (decisions and decisions[index]) or all
        table.insert(out, {
          hunk = index,
          lines = { startLine = hunk.first_line, endLine = last },
          decision = decision == 'apply' and 'accepted' or 'rejected',
          comment = comments[index],
        })
      end
    end
  end
  return #out > 0 and out or nil
end

--- The edit with only the applied hunks' text edits; and whether any is.
local function only_applied(edit, documents, decisions)
  local plain = strip_annotations(edit)
  local kept, index, any = {}, 0, false
  for _, document in ipairs(documents) do
    kept[document.index] = {}
    for _, hunk in ipairs(document.hunks) do
      index = index + 1
      if decisions[index] == 'apply' then
        vim.list_extend(kept[document.index], hunk.edits)
        any = true
      end
    end
  end
  for d, change in ipairs(plain.documentChanges or {}) do
    if change.edits then
      change.edits = kept[d] or {}
    end
  end
  return plain, any
end

--- The `workspace/applyEdit` handler.
function M.apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  local edit = params.edit or {}
  local state = require('tandem.state')
  -- The run this edit is part of: none when the last run has ended (an
  -- undo's restoring edit, answered after its run).
  local run = require('tandem.transcript').run_id()
  if run and state.ended_runs[run] then
    run = nil
  end
  -- Typed before the edit came: its diff would not fit the buffer.
  local stale_now = M.stale(edit, client)
  if stale_now then
    return { applied = false, failureReason = stale_now }
  end
  local opened = M.open_versions(edit)
  -- The comments of a review answered for every hunk at once (`!`).
  local review_comments = nil
  local ok, changes = pcall(M.changes, edit, encoding)
  if ok then
    for _, change in ipairs(changes) do
      M.changed_lines[change.uri] = change.first_line
    end
  end
  if needs_confirmation(edit) and not (run and apply_all_run == run) then
    local documents = {}
    if ok then
      ok, documents = pcall(function()
        local out = {}
        for i, change in ipairs(edit.documentChanges or {}) do
          if change.textDocument and change.edits then
            local path = vim.fn.fnamemodify(vim.uri_to_fname(change.textDocument.uri), ':~:.')
            table.insert(out, { index = i, path = path, hunks = M.hunks(change, encoding) })
          end
        end
        return out
      end)
    end
    if not ok then
      return { applied = false, failureReason = 'the Tandem review could not show the edit: ' .. tostring(changes) }
    end
    local label = params.label or 'Tandem: edit'
    state.set_reviewing(label)
    local close
    local comments = {}
    local answer = await.answer(function(settle)
      if M.options.layout == 'split' and #changes == 1 then
        close = review_split(changes[1], settle)
      else
        close = review_hunks(label, documents, settle, comments)
      end
    end, await.request_id(params))
    state.set_reviewing(nil)
    if close then
      close()
    end
    -- Cancel means no edit lands: the server withdrew this request (the
    -- run was cancelled, or it stopped waiting for the answer).
    if answer == await.WITHDRAWN then
      vim.notify('Tandem: the review was withdrawn (the run was cancelled or stopped waiting); the edit was not applied', vim.log.levels.WARN)
      return { applied = false, failureReason = 'the server withdrew the review before it was answered' }
    end
    -- The run ended while the review was open, and the withdrawal was not
    -- seen (a Neovim whose handlers cannot learn the request's id).
    if run and state.ended_runs[run] then
      vim.notify('Tandem: the run was cancelled during the review; the edit was not applied', vim.log.levels.WARN)
      return { applied = false, failureReason = 'the run was cancelled before the review was answered' }
    end
    if answer == 'closed' or answer == nil then
      -- Closing the review is a rejection: say so, the edit is gone.
      local paths = {}
      for _, change in ipairs(changes) do
        table.insert(paths, change.path)
      end
      vim.notify(
        require('tandem.visible').text(string.format('Tandem: review closed, so the edit to %s was rejected (not applied)', table.concat(paths, ', '))),
        vim.log.levels.WARN
      )
      return { applied = false, failureReason = 'the user closed the Tandem review without choosing, which rejects the edit', comments = comments_answer(documents, comments, nil, 'reject') }
    end
    if answer == 'rest' then
      apply_all_run = run
      review_comments = comments_answer(documents, comments, nil, 'apply')
    elseif answer.all == 'reject' then
      return { applied = false, failureReason = 'the user chose Reject in the Tandem review' }
    elseif answer.decisions then
      local said = comments_answer(documents, comments, answer.decisions)
      local chosen, any = only_applied(edit, documents, answer.decisions)
      if not any then
        return { applied = false, failureReason = 'the user chose Reject in the Tandem review', comments = said }
      end
      local changed = M.stale(edit, client, opened)
      if changed then
        return { applied = false, failureReason = changed }
      end
      local applied, err = pcall(vim.lsp.util.apply_workspace_edit, chosen, encoding)
      M.send_changes(edit, client)
      return { applied = applied, failureReason = (not applied) and tostring(err) or nil, comments = said }
    end
  end
  -- After a review: never on another version, never into a closed buffer.
  local changed = M.stale(edit, client, opened)
  if changed then
    return { applied = false, failureReason = changed }
  end
  local applied, err = pcall(vim.lsp.util.apply_workspace_edit, strip_annotations(edit), encoding)
  M.send_changes(edit, client)
  return { applied = applied, failureReason = (not applied) and tostring(err) or nil, comments = applied and review_comments or nil }
end

return M
