-- A review's finding in a real headless Neovim, for tests/editors/nvim.rs:
-- `tandem.review` of notes.txt (the scripted model reports one finding
-- with a suggestion); vim.diagnostic holds it (source "tandem review");
-- with the cursor on its line, Neovim's own code action menu ("Tandem:
-- apply suggested change", chosen by vim.lsp.buf.code_action's filter)
-- applies the fix, and the diagnostic goes.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN, SCENARIO_FILE, SCENARIO_OUT, as
-- in ask_scenario.lua.
local env = vim.env
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {} }
local finish = kit.finisher(report)

local function ours(bufnr)
  return vim.tbl_filter(function(d)
    return d.source == 'tandem review'
  end, vim.diagnostic.get(bufnr))
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SCENARIO_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  require('tandem').setup({ cmd = { env.TANDEM_BIN, 'lsp' } })
  if not vim.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = 0 }) > 0
  end, 20) then
    error('the tandem server did not attach')
  end
  local client = vim.lsp.get_clients({ name = 'tandem', bufnr = 0 })[1]
  local answer = client:request_sync('workspace/executeCommand', { command = 'tandem.review', arguments = { { files = { 'notes.txt' } } } }, 60000)
  if not answer or answer.err then
    error('tandem.review failed: ' .. vim.inspect(answer))
  end
  report.status = answer.result.status
  if not vim.wait(10000, function()
    return #ours(bufnr) > 0
  end, 20) then
    error('no review diagnostic in vim.diagnostic')
  end
  local finding = ours(bufnr)[1]
  report.diagnostic = { lnum = finding.lnum, severity = finding.severity, code = finding.code, message = finding.message }
  -- Neovim's code action, on the finding's line, applying the one that fits.
  vim.api.nvim_win_set_cursor(0, { finding.lnum + 1, 0 })
  vim.lsp.buf.code_action({
    filter = function(action)
      return action.title == 'Tandem: apply suggested change'
    end,
    apply = true,
  })
  if not vim.wait(10000, function()
    return vim.api.nvim_buf_get_lines(bufnr, 1, 2, false)[1] == 'LINE TWO'
  end, 20) then
    error('the suggested change was not applied: ' .. vim.inspect(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)))
  end
  report.lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  -- Its lines rewritten, the finding is gone from vim.diagnostic.
  report.cleared = vim.wait(10000, function()
    return #ours(bufnr) == 0
  end, 20)
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
