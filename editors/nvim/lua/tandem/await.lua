-- Waiting for the user inside a server request's handler. vim.lsp.rpc runs
-- each handler in a coroutine, so the handler yields while a picker or an
-- input box is open. The answer may also come while the coroutine still
-- runs (the default vim.ui.select and vim.ui.input block, and a picker may
-- wait in a nested event loop): then it is returned without yielding.

--- Call `start(settle)`, which opens the question and calls `settle(value)`
--- once answered; returns the first value settled. Outside a coroutine the
--- question must answer before `start` returns (nil otherwise).
return function(start)
  local co, is_main = coroutine.running()
  local settled, waiting, result = false, false, nil
  local function settle(value)
    if settled then
      return
    end
    settled, result = true, value
    if waiting then
      vim.schedule(function()
        if coroutine.status(co) == 'suspended' then
          coroutine.resume(co)
        end
      end)
    end
  end
  start(settle)
  if not settled and co and not is_main then
    waiting = true
    coroutine.yield()
  end
  return result
end
