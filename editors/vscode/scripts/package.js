#!/usr/bin/env node
// Builds a platform package of the extension with its server inside:
//
//   node scripts/package.js [--target linux-x64] [--binary PATH] [--out FILE]
//
// --target is a `vsce package --target` (default: this machine's);
// --binary the `tandem` built for it (default: $TANDEM_PACKAGE_BIN, else
// $TANDEM_BIN, else `cargo build --release --locked` in this tree, for
// this machine only).
// The binary goes to server/tandem[.exe] with server/carried.json (its
// platform and version), which the extension reads (src/carried.ts). A
// binary this machine can run must say the extension's version; one built
// for another platform is taken as the release workflow built it.
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];
const root = path.join(__dirname, '..');
const repo = path.join(root, '..', '..');

function fail(message) {
  process.stderr.write(`package.js: ${message}\n`);
  process.exit(1);
}

function args(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (!['--target', '--binary', '--out'].includes(key) || value === undefined) fail(`unknown or incomplete argument ${key}; usage: package.js [--target T] [--binary PATH] [--out FILE]`);
    out[key.slice(2)] = value;
  }
  return out;
}

const given = args(process.argv.slice(2));
const here = `${process.platform}-${process.arch}`;
const target = given.target ?? here;
if (!TARGETS.includes(target)) fail(`no package for ${target}; the targets are ${TARGETS.join(', ')}`);
const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
let binary = given.binary ?? process.env.TANDEM_PACKAGE_BIN ?? process.env.TANDEM_BIN;
if (binary === undefined) {
  if (target !== here) fail(`--binary is needed for ${target} (this machine is ${here})`);
  execFileSync('cargo', ['build', '--release', '--locked', '--bin', 'tandem'], { cwd: repo, stdio: 'inherit' });
  binary = path.join(repo, 'target', 'release', process.platform === 'win32' ? 'tandem.exe' : 'tandem');
}
if (!fs.existsSync(binary)) fail(`the binary ${binary} does not exist`);
if (target === here) {
  const said = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  if (said !== `tandem ${version}`) fail(`${binary} says "${said}", the extension is ${version}: build the server from this tree`);
}

const server = path.join(root, 'server');
fs.rmSync(server, { recursive: true, force: true });
fs.mkdirSync(server);
const name = target.startsWith('win32') ? 'tandem.exe' : 'tandem';
fs.copyFileSync(binary, path.join(server, name));
fs.chmodSync(path.join(server, name), 0o755);
fs.writeFileSync(path.join(server, 'carried.json'), `${JSON.stringify({ target, version })}\n`);
const out = given.out ?? `tandem-${target}-${version}.vsix`;
try {
  // vsce's own script, run by this Node (a .cmd shim needs a shell on Windows).
  const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
  execFileSync(process.execPath, [vsce, 'package', '--target', target, '--out', out], { cwd: root, stdio: 'inherit' });
} finally {
  // A later package for another platform must not pick this one up.
  fs.rmSync(server, { recursive: true, force: true });
}
process.stdout.write(`package.js: ${out} (${target}, tandem ${version} inside)\n`);
