-- What every Neovim scenario script shares (tests/editors/*.rs run them in
-- a headless Neovim): the plugin from TANDEM_PLUGIN on the runtimepath with
-- no swap files, the report written to SCENARIO_OUT as JSON when the
-- scenario finishes, and, for scripts driven by timers in the main loop
-- (`-S` ones that type through nvim_input), a poll and a guarded step.
-- A script loads it from its own folder:
--   local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
local M = {}

--- Put the plugin under test on the runtimepath and load it.
function M.load_plugin()
  vim.opt.runtimepath:prepend(vim.env.TANDEM_PLUGIN)
  vim.cmd('runtime plugin/tandem.lua')
  vim.opt.swapfile = false
end

--- The scenario's end: write `report` to SCENARIO_OUT and quit.
function M.finisher(report)
  return function()
    local file = assert(io.open(vim.env.SCENARIO_OUT, 'w'))
    file:write(vim.json.encode(report))
    file:close()
    vim.cmd('qa!')
  end
end

--- Call `done` once `check()` holds (polled by a timer in the main loop),
--- or with false after `ms`.
function M.when(ms, check, done)
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

--- Wrap a step of a timer-driven scenario: an error in it is put in
--- `report.errors` and ends the scenario (`finish`).
function M.stepper(report, finish)
  return function(fn)
    return function(...)
      local ok, err = pcall(fn, ...)
      if not ok then
        table.insert(report.errors, tostring(err))
        finish()
      end
    end
  end
end

return M
