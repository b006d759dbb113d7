-- Drives a real headless Neovim 0.12 through an inline completion, for
-- tests/editors/inline.rs. Run with `-S` (not `-l`): the "user" types
-- through nvim_input, so the keys go through Neovim's main loop as typed
-- keys do (Insert mode, its autocommands, the mappings), while timers watch
-- the screen. The plugin is set up with `inline_completions`; the user opens
-- a new last line and types; Neovim's own vim.lsp.inline_completion asks
-- Tandem after its debounce and shows the ghost text; the plugin's accept
-- key inserts it. The report says what was on screen and in the buffer.
--
-- Environment: TANDEM_BIN, TANDEM_PLUGIN (editors/nvim), SCENARIO_INLINE
-- (the inlineCompletions settings for setup(), JSON; null for none), SCENARIO_TYPED (what the user
-- types on the new line), SCENARIO_OUT (the JSON report), SCENARIO_WAIT_MS
-- (how long to wait for the ghost text), SCENARIO_DIAGNOSTICS (optional: a
-- JSON list of vim.diagnostic items another source publishes on the buffer
-- before the user types, as a language server would).
local env = vim.env
local kit = dofile(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)) .. '/kit.lua')
kit.load_plugin()

local report = { errors = {} }
local finish = kit.finisher(report)

local namespace = vim.api.nvim_create_namespace('nvim.lsp.inline_completion')

--- The ghost text on screen: the virtual text of Neovim's inline completion.
local function ghost_text()
  local parts = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(0, namespace, 0, -1, { details = true })) do
    local details = mark[4]
    for _, chunk in ipairs(details.virt_text or {}) do
      table.insert(parts, chunk[1])
    end
    for _, line in ipairs(details.virt_lines or {}) do
      local text = {}
      for _, chunk in ipairs(line) do
        table.insert(text, chunk[1])
      end
      table.insert(parts, '\n' .. table.concat(text))
    end
  end
  return table.concat(parts)
end

local function buffer_text()
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
end

local when = kit.when

local step = kit.stepper(report, finish)

local tandem = require('tandem')
-- SCENARIO_INLINE null: setup() names none (they are on in the user's
-- ~/.tandem/settings.json).
local inline = vim.json.decode(env.SCENARIO_INLINE)
tandem.setup({ cmd = { env.TANDEM_BIN, 'lsp' }, inline_completions = inline ~= vim.NIL and inline or nil })
report.has_inline_completion = vim.lsp.inline_completion ~= nil
local wait_ms = tonumber(env.SCENARIO_WAIT_MS or '') or 120000

when(30000, function()
  local client = vim.lsp.get_clients({ name = 'tandem', bufnr = 0 })[1]
  return client ~= nil and client.initialized and client.server_capabilities.inlineCompletionProvider ~= nil
end, step(function(advertised)
  report.advertised = advertised
  -- The accept key, mapped once Tandem's client attached offering them.
  report.mapping = vim.fn.maparg(tandem.config.inline_completion_key or '', 'i', false, true).desc
  if env.SCENARIO_DIAGNOSTICS and env.SCENARIO_DIAGNOSTICS ~= '' then
    vim.diagnostic.set(vim.api.nvim_create_namespace('scenario-linter'), 0, vim.json.decode(env.SCENARIO_DIAGNOSTICS))
  end
  -- The user opens a new last line and types.
  vim.api.nvim_input('Go' .. env.SCENARIO_TYPED)
  when(wait_ms, function()
    return ghost_text() ~= ''
  end, step(function(shown)
    report.shown = shown
    report.ghost = ghost_text()
    report.mode = vim.api.nvim_get_mode().mode
    report.lines_shown = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    local before = buffer_text()
    -- Accept with the plugin's key, typed (after SCENARIO_TYPED_AFTER, typed
    -- at once, before a newer suggestion can come).
    vim.api.nvim_input((env.SCENARIO_TYPED_AFTER or '') .. tandem.config.inline_completion_key)
    when(10000, function()
      return buffer_text() ~= before
    end, step(function(accepted)
      -- The accept key's work is scheduled while the keys are processed:
      -- look once what was scheduled before has run.
      vim.schedule(step(function()
        report.accepted = accepted
        report.lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
        report.ghost_after = ghost_text()
        finish()
      end))
    end))
  end))
end))
