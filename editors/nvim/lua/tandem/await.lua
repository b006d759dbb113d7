-- Waiting for the user inside a server request's handler, and giving up
-- when the server withdraws the request.
--
-- vim.lsp.rpc runs each handler in a coroutine, so the handler yields while
-- a picker or an input box is open. The answer may also come while the
-- coroutine still runs (the default vim.ui.select and vim.ui.input block,
-- and a picker may wait in a nested event loop): then it is returned
-- without yielding.
--
-- When the server sends `$/cancelRequest` for the request (its run was
-- cancelled, or it stopped waiting), the wait ends with M.WITHDRAWN: the
-- floating windows opened since the question was asked (a picker or input
-- plugin's) close, and a later answer is ignored.
local M = {}

--- What M.answer returns when the server withdrew the request.
M.WITHDRAWN = {}

-- Withdraw functions of the questions open now, by the server request's id.
local pending = {}

--- The JSON-RPC id of the server request `params` came with, the id a later
--- `$/cancelRequest` names.
---
--- vim.lsp does not pass a server request's id to its handler (Neovim 0.11
--- and 0.12 call it with the params alone), so the plugin asks the server
--- for it (the client capability `experimental.tandemRequestIds`, see
--- M.capabilities in init.lua) and the server copies the id into the params
--- as `tandemRequestId`. nil from a server that does not: then the question
--- cannot be withdrawn, and waits for the user's answer.
function M.request_id(params)
  local id = type(params) == 'table' and params.tandemRequestId or nil
  if type(id) == 'number' or type(id) == 'string' then
    return id
  end
  return nil
end

local function window_set()
  local set = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    set[win] = true
  end
  return set
end

--- Close the floating windows opened since `before` (the user's own
--- splits, and windows that were open before, are kept).
local function close_new_floats(before)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if not before[win] and vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_config(win).relative ~= '' then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
end

--- Call `ask(settle)`, which opens the question and calls `settle(value)`
--- once answered; returns the first value settled, or M.WITHDRAWN when the
--- server withdrew the request with id `request_id` first. Outside a
--- coroutine the question must answer before `ask` returns (nil otherwise).
function M.answer(ask, request_id)
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
  if request_id ~= nil then
    local before = window_set()
    pending[request_id] = function()
      if not settled then
        pcall(vim.cmd, 'stopinsert')
        close_new_floats(before)
      end
      settle(M.WITHDRAWN)
    end
  end
  ask(settle)
  if not settled and co and not is_main then
    waiting = true
    coroutine.yield()
  end
  if request_id ~= nil then
    pending[request_id] = nil
  end
  return result
end

--- The `$/cancelRequest` handler: the server withdrew a request.
function M.cancel_request(_, params)
  local id = params and params.id
  local withdraw = id ~= nil and pending[id]
  if withdraw then
    pending[id] = nil
    withdraw()
  end
end

return M
