// Unit tests of which server the extension starts (src/carried.ts): the
// user's tandem.serverPath, the binary a platform package carries, or
// `tandem` on PATH; and the message for each way that fails.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { carriedPath, chooseServer, Situation, TARGETS, versionMessage } from '../../carried';

const EXT = '/ext/tandem-0.1.0';
const BINARY = '/ext/tandem-0.1.0/server/tandem';

/** A Linux x64 machine with the given files (path → executable?). */
function situation(files: Record<string, boolean>, more: Partial<Situation> = {}): Situation {
  return {
    setting: '',
    extensionPath: EXT,
    manifest: { target: 'linux-x64', version: '0.1.0' },
    platform: 'linux',
    arch: 'x64',
    pathVar: '/usr/bin:/bin',
    exists: (p) => p in files,
    isExecutable: (p) => files[p] === true,
    ...more,
  };
}

describe('the server the extension starts', () => {
  it('is the carried binary when tandem.serverPath is unset', () => {
    assert.deepStrictEqual(chooseServer(situation({ [BINARY]: true })), { command: BINARY, source: 'carried' });
  });
  it('is tandem.serverPath when set, even with a carried binary', () => {
    const choice = chooseServer(situation({ [BINARY]: true, '/opt/tandem': true }, { setting: '/opt/tandem' }));
    assert.deepStrictEqual(choice, { command: '/opt/tandem', source: 'setting' });
  });
  it('names a missing tandem.serverPath and not the carried binary', () => {
    const choice = chooseServer(situation({ [BINARY]: true }, { setting: '/opt/none' }));
    assert.ok('error' in choice && /"\/opt\/none" was not found/.test(choice.error), JSON.stringify(choice));
  });
  it('says a missing carried binary is an incomplete installation, and what to do', () => {
    const choice = chooseServer(situation({}));
    assert.ok('error' in choice, JSON.stringify(choice));
    assert.match(choice.error, /carries \(\/ext\/tandem-0\.1\.0\/server\/tandem\) is missing/);
    assert.match(choice.error, /Reinstall the extension, or set tandem\.serverPath/);
  });
  it('says a carried binary that is not executable is so, and what to do', () => {
    const choice = chooseServer(situation({ [BINARY]: false }));
    assert.ok('error' in choice, JSON.stringify(choice));
    assert.match(choice.error, /is not executable\. Reinstall the extension, make it executable \(chmod \+x\)/);
  });
  it('says which platform a package of another platform is for, and which exist', () => {
    const choice = chooseServer(situation({ [BINARY]: true }, { arch: 'arm64' }));
    assert.ok('error' in choice, JSON.stringify(choice));
    assert.match(choice.error, /carries the server for linux-x64, and this is linux-arm64\. Install the extension's package for linux-arm64/);
    assert.ok(choice.error.includes(TARGETS.join(', ')), choice.error);
  });
  it('on a platform without a package, says so, lists those that exist and how to build', () => {
    const choice = chooseServer(situation({}, { platform: 'freebsd', manifest: undefined }));
    assert.ok('error' in choice, JSON.stringify(choice));
    assert.match(choice.error, /There is no package for freebsd-x64; packages exist for linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64\. Build the server \(cargo install tandem-agent --locked\)/);
  });
  it('in a package without a server, is tandem on PATH', () => {
    const choice = chooseServer(situation({ '/usr/bin/tandem': true }, { manifest: undefined }));
    assert.deepStrictEqual(choice, { command: 'tandem', source: 'path' });
  });
  it('says a damaged carried.json is damaged', () => {
    const choice = chooseServer(situation({ [BINARY]: true }, { manifest: null }));
    assert.ok('error' in choice && /carried\.json is damaged/.test(choice.error), JSON.stringify(choice));
  });
  it('on Windows, in a package without a server, is tandem.exe on PATH', () => {
    const choice = chooseServer(situation({ 'C:\\bin\\tandem.exe': true }, { platform: 'win32', manifest: undefined, pathVar: 'C:\\Windows;C:\\bin' }));
    assert.deepStrictEqual(choice, { command: 'tandem', source: 'path' });
  });
  it('is server\\tandem.exe on Windows', () => {
    assert.strictEqual(carriedPath('C:\\ext\\t', 'win32'), 'C:\\ext\\t\\server\\tandem.exe');
  });
});

describe("the server's version against the extension's", () => {
  it('says nothing when they are the same', () => {
    assert.strictEqual(versionMessage('/x/tandem', 'tandem 0.1.0\n', '0.1.0'), undefined);
  });
  it('names both versions when they differ', () => {
    assert.match(versionMessage('/x/tandem', 'tandem 0.2.0\n', '0.1.0') ?? '', /\/x\/tandem is version 0\.2\.0 and this extension is 0\.1\.0/);
  });
  it('says when the binary does not say a version', () => {
    assert.match(versionMessage('/x/other', 'usage: other\n', '0.1.0') ?? '', /did not say its version .*"usage: other"/);
  });
});

describe('versions from one place', () => {
  it("the extension's version is the crate's (Cargo.toml)", () => {
    const root = path.join(__dirname, '..', '..', '..');
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const cargo = fs.readFileSync(path.join(root, '..', '..', 'Cargo.toml'), 'utf8');
    const crate = /^\[package\][^[]*?^version\s*=\s*"([^"]+)"/m.exec(cargo);
    assert.ok(crate, 'Cargo.toml has no [package] version');
    assert.strictEqual(manifest.version, crate[1]);
  });
});
