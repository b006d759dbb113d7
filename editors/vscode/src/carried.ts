// Which `tandem` binary the extension starts. A platform package (`vsce
// package --target`, scripts/package.js) carries the server in `server/`
// with `server/carried.json` naming the platform it was built for; the
// user's `tandem.serverPath` wins over it. A package without a server (a
// checkout's own `vsce package`) falls back to `tandem` on PATH. Every way
// this can fail ends in one message that says what to do. No `vscode`
// import: the unit tests run these decisions in plain Node.
import { findServer, startFailureMessage } from './logic';

/** The platforms a package is made for (`vsce package --target`). */
export const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'] as const;

/** What the packaging script writes beside the binary (server/carried.json). */
export interface CarriedManifest {
  /** The `vsce --target` the binary was built for, e.g. `linux-x64`. */
  target: string;
  /** The binary's version (`tandem --version`), the extension's own. */
  version: string;
}

/** Where the server comes from, or why none can start. */
export type ServerChoice = { command: string; source: 'setting' | 'carried' | 'path' } | { error: string };

export interface Situation {
  /** The user's own `tandem.serverPath`, '' when unset. */
  setting: string;
  /** The extension's folder. */
  extensionPath: string;
  /** server/carried.json's content, `undefined` when the package has none. */
  manifest: unknown;
  platform: string;
  arch: string;
  pathVar: string | undefined;
  exists: (path: string) => boolean;
  isExecutable: (path: string) => boolean;
}

const INSTALL = 'cargo install tandem-agent --locked';

/** The `vsce --target` name of a platform: `linux-x64`, `win32-x64`… */
export function targetOf(platform: string, arch: string): string {
  return `${platform}-${arch}`;
}

/** The binary's path inside the extension. */
export function carriedPath(extensionPath: string, platform: string): string {
  const sep = platform === 'win32' ? '\\' : '/';
  return `${extensionPath.replace(/[\\/]+$/, '')}${sep}server${sep}${platform === 'win32' ? 'tandem.exe' : 'tandem'}`;
}

/** The platforms with a package, and how to do without one. */
function otherwise(here: string): string {
  const has = (TARGETS as readonly string[]).includes(here);
  const lead = has
    ? `Install the extension's package for ${here}`
    : `There is no package for ${here}; packages exist for ${TARGETS.join(', ')}. Build the server (${INSTALL})`;
  return has ? `${lead} (packages exist for ${TARGETS.join(', ')}), or build the server (${INSTALL}) and set tandem.serverPath to it.` : `${lead} and set tandem.serverPath to it.`;
}

function isManifest(value: unknown): value is CarriedManifest {
  const v = value as CarriedManifest | undefined;
  return typeof v === 'object' && v !== null && typeof v.target === 'string' && typeof v.version === 'string';
}

/** The binary to start, as the situation allows, or the message saying why none. */
export function chooseServer(s: Situation): ServerChoice {
  const here = targetOf(s.platform, s.arch);
  if (s.setting !== '') {
    return findServer(s.setting, s.pathVar, s.isExecutable, s.platform) === undefined
      ? { error: startFailureMessage(s.setting, 'ENOENT') }
      : { command: s.setting, source: 'setting' };
  }
  if (s.manifest === undefined) {
    // A package without a server: the one on PATH, as before packages carried one.
    if (findServer('tandem', s.pathVar, s.isExecutable, s.platform) !== undefined) return { command: 'tandem', source: 'path' };
    return { error: `Tandem: this package of the extension carries no server, and no tandem binary is on PATH. ${otherwise(here)}` };
  }
  if (!isManifest(s.manifest)) {
    return { error: `Tandem: the extension's server/carried.json is damaged: reinstall the extension, or set tandem.serverPath to a tandem binary (${INSTALL}).` };
  }
  if (s.manifest.target !== here) {
    return { error: `Tandem: this package of the extension carries the server for ${s.manifest.target}, and this is ${here}. ${otherwise(here)}` };
  }
  const binary = carriedPath(s.extensionPath, s.platform);
  if (!s.exists(binary)) {
    return { error: `Tandem: the server this extension carries (${binary}) is missing: the installation is incomplete. Reinstall the extension, or set tandem.serverPath to a tandem binary (${INSTALL}).` };
  }
  if (!s.isExecutable(binary)) {
    return { error: `Tandem: the server this extension carries (${binary}) is not executable. Reinstall the extension, make it executable (chmod +x), or set tandem.serverPath to a tandem binary (${INSTALL}).` };
  }
  return { command: binary, source: 'carried' };
}

/**
 * What to tell the user after `COMMAND --version` printed `output`:
 * nothing when it is the extension's version, else which versions differ
 * (or that it did not say).
 */
export function versionMessage(command: string, output: string, extensionVersion: string): string | undefined {
  const found = /^tandem\s+(\S+)/m.exec(output ?? '');
  if (!found) return `Tandem: the server ${command} did not say its version ("tandem --version" printed "${(output ?? '').trim().split('\n')[0]}"); it may not be Tandem's server.`;
  if (found[1] === extensionVersion) return undefined;
  return `Tandem: the server ${command} is version ${found[1]} and this extension is ${extensionVersion}; they may not understand each other. Use the server of the same version (the one the extension carries: clear tandem.serverPath), or the extension of the server's.`;
}
