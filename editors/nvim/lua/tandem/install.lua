-- The tandem binary of the plugin's version, from its release: the archive
-- for this platform and the release's SHA256SUMS, fetched (curl) or copied
-- from a local folder, the archive's checksum checked (a mismatch is
-- refused and nothing is installed), unpacked, and the binary put in
-- `dir` (default: stdpath('data')/tandem/bin) once it says the plugin's
-- version; a binary of that version already there is kept as it is. A lazy.nvim `build` step calls it (see :help tandem-install).
local M = {}

--- Where releases are: GitHub's, or $TANDEM_RELEASES (a mirror, a local
--- folder) holding one folder per release, `v<version>`.
function M.releases()
  local mirror = vim.env.TANDEM_RELEASES
  if mirror and mirror ~= '' then
    return mirror
  end
  return 'https://github.com/tandem-agent/tandem/releases/download'
end

--- This machine's release target (`linux-x64`, `darwin-arm64`, `win32-x64`…), or nil and why.
function M.target()
  local uname = vim.uv.os_uname()
  local os = ({ Linux = 'linux', Darwin = 'darwin', Windows_NT = 'win32' })[uname.sysname]
  local arch = ({ x86_64 = 'x64', AMD64 = 'x64', aarch64 = 'arm64', arm64 = 'arm64' })[uname.machine]
  local target = os and arch and (os .. '-' .. arch)
  local known = { 'linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64' }
  if not target or not vim.tbl_contains(known, target) then
    return nil, string.format('no release binary for %s %s (there are: %s); build it: cargo install tandem-agent --locked', uname.sysname, uname.machine, table.concat(known, ', '))
  end
  return target
end

--- The default folder the binary goes to.
function M.dir()
  return vim.fs.joinpath(vim.fn.stdpath('data'), 'tandem', 'bin')
end

local function run(cmd)
  local ok, result = pcall(function()
    return vim.system(cmd, { text = true }):wait(120000)
  end)
  if not ok then
    return nil, tostring(result)
  end
  if result.code ~= 0 then
    return nil, vim.trim((result.stderr or '') .. ' ' .. (result.stdout or ''))
  end
  return result.stdout or ''
end

--- `name` from `source` (a URL prefix, or a local folder) into `dest`.
local function fetch(source, name, dest)
  if source:match('^https?://') then
    local _, err = run({ 'curl', '-fsSL', '-o', dest, source .. '/' .. name })
    return err == nil, err
  end
  local ok, err = vim.uv.fs_copyfile(vim.fs.joinpath(source, name), dest)
  return ok ~= nil, err
end

local function sha256(path)
  local out = run({ 'sha256sum', path }) or run({ 'shasum', '-a', '256', path })
  return out and out:match('^(%x+)')
end

--- Install the binary; returns its path, or nil and what went wrong.
--- opts.source: where the release's files are (default: the release of
--- the plugin's version, under M.releases()); opts.dir: where the binary goes.
function M.install(opts)
  opts = opts or {}
  local version = require('tandem.version')
  local target, why = M.target()
  if not target then
    return nil, why
  end
  local source = opts.source or (M.releases() .. '/v' .. version)
  local dir = opts.dir or M.dir()
  local exe = target == 'win32-x64' and 'tandem.exe' or 'tandem'
  -- Already there in the plugin's version: nothing to fetch. (vim.pack
  -- announces a fresh install twice, as an update and as an install.)
  local present = vim.fs.joinpath(dir, exe)
  if vim.fn.executable(present) == 1 and vim.trim(run({ present, '--version' }) or '') == 'tandem ' .. version then
    return present
  end
  local stem = string.format('tandem-%s-%s', version, target)
  local archive = stem .. (target == 'win32-x64' and '.zip' or '.tar.gz')
  local work = vim.fn.tempname()
  vim.fn.mkdir(work, 'p')
  local function fail(message)
    vim.fn.delete(work, 'rf')
    return nil, message
  end
  local ok, err = fetch(source, 'SHA256SUMS', vim.fs.joinpath(work, 'SHA256SUMS'))
  if not ok then
    return fail(string.format('could not get SHA256SUMS from %s: %s', source, err))
  end
  ok, err = fetch(source, archive, vim.fs.joinpath(work, archive))
  if not ok then
    return fail(string.format('could not get %s from %s: %s', archive, source, err))
  end
  local wanted
  for line in io.lines(vim.fs.joinpath(work, 'SHA256SUMS')) do
    local sum, name = line:match('^(%x+)%s+%*?(%S+)$')
    if name == archive then
      wanted = sum:lower()
    end
  end
  if not wanted then
    return fail(string.format('SHA256SUMS at %s has no line for %s: refused, nothing installed', source, archive))
  end
  local got = sha256(vim.fs.joinpath(work, archive))
  if got ~= wanted then
    return fail(string.format('the checksum of %s does not match SHA256SUMS (%s, not %s): refused, nothing installed', archive, tostring(got), wanted))
  end
  local _, untar = run({ 'tar', '-xf', vim.fs.joinpath(work, archive), '-C', work })
  if untar then
    return fail(string.format('could not unpack %s: %s', archive, untar))
  end
  local unpacked = vim.fs.joinpath(work, stem, exe)
  local said = run({ unpacked, '--version' })
  if vim.trim(said or '') ~= 'tandem ' .. version then
    return fail(string.format('%s says %q, not "tandem %s": refused, nothing installed', archive, vim.trim(said or ''), version))
  end
  pcall(vim.fn.mkdir, dir, 'p')
  if vim.fn.isdirectory(dir) == 0 then
    return fail(string.format('cannot create the folder %s (no write access?); give another: install({ dir = … })', dir))
  end
  local path = vim.fs.joinpath(dir, exe)
  local copied, copy_err = vim.uv.fs_copyfile(unpacked, path)
  if not copied then
    return fail(string.format('cannot write %s: %s (no write access?)', path, tostring(copy_err)))
  end
  vim.uv.fs_chmod(path, tonumber('755', 8))
  vim.fn.delete(work, 'rf')
  return path
end

return M
