-- :TandemTrust in a real headless Neovim, for tests/editor_nvim.rs: the
-- workspace's own .tandem/settings.json asks for bypassPermissions. Until
-- the folder is trusted the server says so (window/showMessage, shown with
-- vim.notify) and a shell command is asked (denied here: nothing runs);
-- after :TandemTrust the same command runs unasked.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN, SCENARIO_FILE, SCENARIO_OUT, as
-- in ask_scenario.lua; SCENARIO_MADE, the file the command makes.
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
  -- Every question is answered "Deny".
  vim.ui.select = function(items, _, on_choice)
    table.insert(report.asked, items)
    on_choice('Deny')
  end
  require('tandem').setup({ cmd = { env.TANDEM_BIN, 'lsp' } })
  if not vim.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'tandem', bufnr = 0 }) > 0
  end, 20) then
    error('the tandem server did not attach')
  end

  -- Wait (bounded) for a message that contains `text`, after running
  -- `command` (none: since the start, the server's notice may have come
  -- while it attached).
  local function until_message(command, text)
    local seen = command and #report.messages or 0
    if command then
      vim.cmd(command)
    end
    local found = nil
    if not vim.wait(60000, function()
      for i = seen + 1, #report.messages do
        if report.messages[i].message:find(text, 1, true) then
          found = report.messages[i].message
        end
      end
      return found ~= nil
    end, 20) then
      error((command or 'start') .. ' gave no message with "' .. text .. '" in 60 s')
    end
    return found
  end

  report.notice = until_message(nil, 'not trusted yet')
  report.untrusted_run = until_message('TandemAsk make it', 'Tandem: run ')
  report.untrusted_asked = #report.asked
  report.made_untrusted = vim.uv.fs_stat(env.SCENARIO_MADE) ~= nil
  report.trusted = until_message('TandemTrust', 'trusts the settings files')
  report.trusted_run = until_message('TandemAsk make it again', 'Tandem: run ')
  report.trusted_asked = #report.asked - report.untrusted_asked
  report.made_trusted = vim.uv.fs_stat(env.SCENARIO_MADE) ~= nil
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
