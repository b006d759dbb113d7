-- :checkhealth tandem — the binary and its version, Neovim, which model
-- endpoint runs use and why (never showing keys) and whether its server
-- answers, the server's state, whether shell commands run in a sandbox
-- here, and the other installed copies of Tandem: `tandem doctor --json`,
-- with the settings the plugin gives the server.
local M = {}

--- `tandem doctor --json` in `root`, with the settings the plugin gives the
--- server (so the report is that server's decision); the decoded report, or
--- nil and why not.
local function doctor(exe, root, settings)
  local cmd = { exe, 'doctor', '--json' }
  if next(settings) ~= nil then
    table.insert(cmd, '--editor-settings')
    table.insert(cmd, vim.json.encode(settings))
  end
  local ran, result = pcall(function()
    return vim.system(cmd, { text = true, cwd = root }):wait(10000)
  end)
  local decoded, report = false, nil
  if ran and result.stdout then
    decoded, report = pcall(vim.json.decode, result.stdout)
  end
  if not (decoded and type(report) == 'table' and type(report.sandbox) == 'table') then
    return nil, ran and vim.trim((result.stderr or '') .. ' ' .. (result.stdout or '')) or tostring(result)
  end
  return report, nil
end

function M.check()
  local health = vim.health
  local tandem = require('tandem')
  local state = require('tandem.state')

  health.start('Neovim')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.11 or newer is needed (the plugin is tested on 0.11 and 0.12)')
  end

  health.start('tandem binary')
  local cmd = tandem.cmd() or {}
  local exe = cmd[1] and vim.fn.exepath(cmd[1]) or ''
  if exe == '' then
    health.error(string.format('%q is not executable or not on PATH', tostring(cmd[1])), {
      'cargo install tandem-agent --locked puts `tandem` on PATH (or a release archive)',
      "or set the path: require('tandem').setup({ cmd = { '/path/to/tandem', 'lsp' } })",
    })
  else
    local ok, result = pcall(function()
      return vim.system({ exe, '--version' }, { text = true }):wait(5000)
    end)
    if ok and result.code == 0 then
      local said = vim.trim(result.stdout or '')
      local plugin = require('tandem.version')
      if said == 'tandem ' .. plugin then
        health.ok(string.format('%s (%s), the plugin\'s version', said, exe))
      else
        health.warn(string.format('%s (%s), and the plugin is %s: they may not understand each other', said, exe, plugin), {
          'install the binary of the plugin\'s version (its release archive, or cargo install tandem-agent --locked --version ' .. plugin .. ')',
          'or update the plugin to the binary\'s version',
        })
      end
    else
      health.error(exe .. ' --version failed: ' .. (ok and (result.stderr or '') or tostring(result)))
    end
  end

  -- Which endpoint runs use, and why: the server's one decision, as
  -- `tandem doctor` makes it with the settings this plugin passes.
  health.start('model provider')
  local settings = tandem.server_settings()
  local client = tandem.client()
  local root = (client and client.config and client.config.root_dir) or vim.fn.getcwd()
  local report, failure = nil, 'the tandem binary is not found (see above)'
  if exe ~= '' then
    report, failure = doctor(exe, root, settings)
  end
  local provider = report and report.provider
  if type(provider) == 'table' and provider.provider then
    local at = provider.base_url and (' at ' .. provider.base_url) or ''
    health.ok(string.format('provider %s%s, model %s (%s)', provider.provider, at, provider.model or '?', provider.reason or ''))
  elseif type(provider) == 'table' and provider.error then
    health.warn('runs will fail: ' .. provider.error, {
      'set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, in the environment',
      "or require('tandem').setup({ provider = 'openai', model = '…', settings = { baseUrl = '…' } })",
    })
  else
    health.warn('not checked: `tandem doctor --json` failed: ' .. tostring(failure), { 'an older tandem binary? `tandem --version` should match the plugin' })
  end
  -- Whether that server answers with the key (doctor asks it).
  local server = report and report.modelServer
  if type(server) == 'table' then
    if server.ok then
      health.ok('model server: ' .. tostring(server.message))
    else
      health.warn('model server: ' .. tostring(server.message), {
        'start the server, or set baseUrl (OPENAI_BASE_URL / ANTHROPIC_BASE_URL) to where it listens',
        'a refused key: check ANTHROPIC_API_KEY / OPENAI_API_KEY in the environment Neovim gives the server',
      })
    end
  end
  health.info('permission mode: ' .. (settings.layers.user.permissionMode or 'default'))

  health.start('server')
  if not client then
    health.warn('not running', { "call require('tandem').setup() or vim.lsp.enable('tandem'), then open a file" })
  else
    local info = client.server_info or {}
    health.ok(string.format('running (%s %s, client id %d)', info.name or 'tandem', info.version or '?', client.id))
    health.info(state.run_id and ('active run: ' .. state.run_id) or 'no run is active')
  end

  -- What `tandem doctor` finds for this workspace: bubblewrap found and
  -- able to build a sandbox, switched off by the user's settings, or why
  -- none can start.
  health.start('shell sandbox')
  if exe == '' then
    health.warn('not checked: the tandem binary is not found (see above)')
    return
  end
  if not report then
    health.error('`tandem doctor --json` failed: ' .. tostring(failure), { 'an older tandem binary? `tandem --version` should match the plugin' })
    return
  end
  local sandbox = report.sandbox
  if sandbox.state == 'ready' then
    health.ok(sandbox.description)
  elseif sandbox.state == 'disabled' then
    health.warn(sandbox.notice or sandbox.description, {
      'remove "sandbox": {"enabled": false} from ~/.tandem/settings.json (or the editor settings) to confine commands again',
    })
  else
    health.warn(sandbox.notice or sandbox.description, {
      'Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap',
      'then check again with :checkhealth tandem or `tandem doctor`',
    })
  end
  -- Whether the folder's own settings files are trusted (`tandem trust`).
  local trust = report.trust
  if type(trust) == 'table' then
    if trust.state == 'not trusted' then
      health.warn(trust.notice or "this folder's settings files are not trusted: they may only tighten", {
        ':TandemTrust (or `tandem trust` in the folder) if you trust them as they are',
      })
    elseif trust.state == 'trusted' then
      health.ok("this folder's settings files are trusted")
    else
      health.info('this folder has no Tandem settings files of its own')
    end
  end

  -- The other copies of Tandem doctor found (a tandem on PATH, this
  -- plugin as a plugin manager cloned it, the VS Code extension), and
  -- whether each is the plugin's version.
  local installed = type(report.installed) == 'table' and report.installed or {}
  if #installed > 0 then
    health.start('installed copies')
    local plugin = require('tandem.version')
    for _, copy in ipairs(installed) do
      local line = ('%s %s (%s)'):format(tostring(copy.what), tostring(copy.version or 'of an unknown version'), tostring(copy.path))
      if copy.version == plugin then
        health.ok(line)
      else
        health.warn(line .. ', not the plugin\'s ' .. plugin, { 'one version for all: `tandem doctor` says how to update each' })
      end
    end
  end

  -- Inline completions: the plugin's settings, and the counts of the last
  -- sessions that `tandem doctor` keeps (shown / accepted, for debounceMs).
  health.start('inline completions')
  local inline = require('tandem').config.inline_completions
  if not inline or inline.enabled == false then
    health.info('off (see :help tandem-completions)')
  elseif not vim.lsp.inline_completion then
    health.warn('configured, but this Neovim has no vim.lsp.inline_completion', { 'Neovim 0.12 or newer shows them' })
  else
    health.ok(('on: %s at %s'):format(inline.provider or 'openai', inline.baseUrl or '(baseUrl not set)'))
  end
  local completions = type(report.inlineCompletions) == 'table' and report.inlineCompletions or {}
  for i, session in ipairs(type(completions.sessions) == 'table' and completions.sessions or {}) do
    if i > 3 then
      break
    end
    health.info(('session of %s: %d requests, %d shown, %d accepted'):format(
      os.date('!%Y-%m-%d %H:%M UTC', session.started or 0), session.requests or 0, session.shown or 0, session.accepted or 0))
  end
end

return M
