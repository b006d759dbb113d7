-- What the server sends that Neovim draws in its message area and picker
-- (a notice, a question's first line, its actions) shows control, bidi and
-- zero-width characters visibly, for tests/editors/nvim.rs (issue 49). The
-- plugin's own handlers are called with an attacker's text; the report
-- holds what the screen then shows, read cell by cell.
--
-- Environment: TANDEM_PLUGIN, SCENARIO_OUT (see kit.lua). Run with `-c
-- luafile`: the screen is drawn once startup is done.
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {} }
local finish = kit.finisher(report)

--- The screen's row `row`, as drawn.
local function screen_row(row)
  local cells = {}
  for col = 1, vim.o.columns do
    table.insert(cells, vim.fn.screenstring(row, col))
  end
  return vim.trim(table.concat(cells))
end

local ok, err = pcall(function()
  vim.o.columns = 160
  vim.o.lines = 12
  -- An untrusted folder's notice, whose carriage return would send the
  -- cursor back so that the rest overwrites "bypassPermissions".
  local notice = 'Tandem: ignored until trusted: defaultMode bypassPermissions\r\27[2Ktrusted, nothing to review'
  require('tandem').handlers['window/showMessage'](nil, { type = 2, message = notice })
  vim.cmd('redraw')
  report.notice_row = screen_row(vim.o.lines)
  -- A question: its first line is the picker's prompt, drawn in the
  -- message area too; the action the user picks is returned as sent.
  vim.ui.select = function(items, opts, on_choice)
    report.prompt = opts.prompt
    report.items = vim.tbl_map(opts.format_item or tostring, items)
    on_choice(items[1])
  end
  local action = require('tandem.prompt').show_message_request(nil, {
    type = 3,
    message = "Tandem wants to run: rm victim.txt '\27[2K\rls -la' \226\128\174txt.exe\nAsked because: rm",
    actions = { { title = 'Allow once \226\128\139' }, { title = 'Deny' } },
  })
  report.chosen = action and action.title
  report.samples = {
    osc52 = require('tandem.visible').text('\27]52;c;eA==\7'),
    c1 = require('tandem.visible').text('\194\155' .. '2K'),
    kept = require('tandem.visible').text('naïve 日本語 🦀\ttab\nline'),
    crlf = require('tandem.visible').text('one\r\ntwo'),
  }
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
