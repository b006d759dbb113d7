-- A folder's exrc in a real headless Neovim, for tests/editors/nvim.rs
-- (issue 49): the workspace's `.nvim.lua` passes setup() bypassPermissions
-- and another server binary. Neovim runs an exrc as 0.11 does (the file's
-- text loaded as a chunk named "<nvim>") and as 0.12 does
-- (loadstring named by its path); then the user's own setup() starts the
-- server. The agent's `rm victim.txt` is asked (denied here), so the file
-- stays: the folder's mode was the folder's layer, not the user's.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN, SCENARIO_FILE, SCENARIO_OUT, as
-- in ask_scenario.lua; SCENARIO_EXRC: "0.11" or "0.12", how the exrc runs.
local env = vim.env
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {}, messages = {}, asked = {} }
local finish = kit.finisher(report)

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SCENARIO_FILE))
  vim.notify = function(message, level)
    table.insert(report.messages, { message = message, level = level })
  end
  vim.ui.select = function(items, _, on_choice)
    table.insert(report.asked, items)
    on_choice('Deny')
  end
  local exrc = vim.fn.getcwd() .. '/.nvim.lua'
  local text = table.concat(vim.fn.readfile(exrc), '\n')
  if env.SCENARIO_EXRC == '0.11' then
    -- What 0.11's C code does (nlua_exec: luaL_loadbuffer named "<nvim>").
    assert(loadstring(text, '<nvim>'))()
  else
    assert(loadstring(text, '@' .. exrc))()
  end
  report.folder_config = require('tandem').folder_config
  require('tandem').setup({ cmd = { env.TANDEM_BIN, 'lsp' }, settings = { timeouts = { promptMs = 60000 } } })
  if not vim.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = 0 }) > 0
  end, 20) then
    error('the tandem server did not attach')
  end
  report.cmd = vim.lsp.get_clients({ name = 'tandem', bufnr = 0 })[1].config.cmd
  local seen = #report.messages
  vim.cmd('TandemAsk clean up')
  if not vim.wait(60000, function()
    for i = seen + 1, #report.messages do
      if report.messages[i].message:find('Tandem: run ', 1, true) then
        return true
      end
    end
    return false
  end, 20) then
    error('the run did not end in 60 s')
  end
  report.victim = vim.uv.fs_stat(vim.fn.getcwd() .. '/victim.txt') ~= nil
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
