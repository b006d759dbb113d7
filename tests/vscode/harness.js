// The harness of the code-server end-to-end scripts (e2e.js, code_intel.js,
// chat.js, undo.js, panel_undo.js, two_windows.js, local_model.js): the packaged extension
// (.vsix) installed into real VS Code (code-server, VS Code 1.139), opened
// in headless Chromium, with a
// loopback Anthropic API as the model (anthropic_mock.js), and the page
// helpers that drive the window as a user does. Each script is its own
// Node process: the state below (the page, the processes) is the script's.
//
// Environment (all required): TANDEM_BIN (the tandem binary), CODE_SERVER
// (code-server's out/node/entry.js; run with this script's Node, 24),
// CHROMIUM (the browser), VSIX (the packaged extension), E2E_DIR (an empty
// directory for all state: workspace, user data, extensions, HOME).
// puppeteer-core is found through NODE_PATH. Loopback only: code-server
// binds 127.0.0.1 on a port the OS picks, and Chromium resolves no other
// host.
'use strict';

const assert = require('assert');
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { pathToFileURL } = require('url');

function need(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`e2e: ${name} is not set`);
    process.exit(2);
  }
  return value;
}

const TANDEM_BIN = need('TANDEM_BIN');
const CODE_SERVER = need('CODE_SERVER');
const CHROMIUM = need('CHROMIUM');
const VSIX = need('VSIX');
const E2E_DIR = need('E2E_DIR');
const puppeteer = require('puppeteer-core');
const { MockModel, gate } = require('./anthropic_mock');

/** The whole test, install to last check; each wait below is shorter. */
const DEADLINE_MS = 420_000;
/** One step: a window loading, a run reaching its review, a run ending. */
const STEP_MS = 60_000;

const started = Date.now();
function log(message) {
  console.error(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

const dirs = {
  workspace: path.join(E2E_DIR, 'workspace'),
  userData: path.join(E2E_DIR, 'user-data'),
  extensions: path.join(E2E_DIR, 'extensions'),
  home: path.join(E2E_DIR, 'home'),
  chromium: path.join(E2E_DIR, 'chromium'),
};

/** The window opens in VS Code's Restricted Mode (`open({restricted: true})`). */
let restrictedMode = false;
/** The loopback model's base URL. */
let modelUrl;
/** More environment for code-server (and so the extension and the server); null removes a variable. */
let extraEnv = {};
/**
 * The model: a loopback Anthropic API (anthropic_mock.js) whose turns each
 * step queues, and whose stream a step can hold open.
 */
const model = new MockModel();

// Processes to stop however the test ends.
let codeServer;
let browser;
let codeServerLog = '';

async function cleanup() {
  model.close();
  fs.writeFileSync(path.join(E2E_DIR, 'code-server.log'), codeServerLog);
  if (browser) {
    const b = browser;
    browser = undefined;
    await b.close().catch(() => b.process()?.kill('SIGKILL'));
  }
  if (codeServer && codeServer.exitCode === null) {
    // Its own process group: the extension host and `tandem lsp` go too.
    try {
      process.kill(-codeServer.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

async function fail(error) {
  console.error(`e2e FAILED: ${error && error.stack ? error.stack : error}`);
  if (page) {
    try {
      const shot = path.join(E2E_DIR, 'failure.png');
      await page.screenshot({ path: shot });
      console.error(`e2e: screenshot of the window at the failure: ${shot}`);
      const toasts = await notifications(page);
      console.error(`e2e: notifications on screen: ${JSON.stringify(toasts)}`);
      const editors = await page.$$eval('.monaco-editor', (es) => es.map((e) => e.getAttribute('data-uri')));
      console.error(`e2e: editors in the window: ${JSON.stringify(editors)}`);
    } catch {
      // The browser is gone; nothing more to show.
    }
  }
  console.error(`e2e: code-server's log (last 3000 characters):\n${codeServerLog.slice(-3000)}`);
  await cleanup();
  process.exit(1);
}

/** The window (set by `open`). */
let page;

/**
 * The process groups this script starts (code-server, Chromium), one a
 * line in E2E_DIR/groups, for tests/editors/vscode.rs to stop should this
 * script itself hang.
 */
function recordGroup(pid) {
  if (pid) fs.appendFileSync(path.join(E2E_DIR, 'groups'), `${pid}\n`);
}
/**
 * The workspace's `files` (name → text) and VS Code's user settings:
 * `settings` over a quiet default (no tips, no updates, no AI features, the
 * tandem binary under test).
 */
function setup(files, settings, trusted) {
  fs.mkdirSync(dirs.workspace, { recursive: true });
  fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
  fs.mkdirSync(dirs.extensions, { recursive: true });
  fs.mkdirSync(dirs.home, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dirs.workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(dirs.workspace, name), text);
  }
  const all = {
    'tandem.serverPath': TANDEM_BIN,
    'files.autoSave': 'off',
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'chat.disableAIFeatures': true,
    'security.workspace.trust.enabled': false,
    ...settings,
  };
  fs.writeFileSync(path.join(dirs.userData, 'User', 'settings.json'), JSON.stringify(all, null, 2));
  // A test's own Tandem settings files are the user's: the folder is
  // trusted (`tandem trust`, in the data folder the server gets), unless
  // the test is about an untrusted folder.
  const projectFiles = ['.tandem/settings.json', '.tandem/settings.local.json', '.mcp.json'];
  if (trusted && Object.keys(files).some((name) => projectFiles.includes(name))) {
    const result = spawnSync(TANDEM_BIN, ['trust'], { cwd: dirs.workspace, env: serverEnv(), encoding: 'utf8', timeout: STEP_MS });
    assert.strictEqual(result.status, 0, `tandem trust failed: ${result.stderr}`);
  }
}
/** code-server's environment: its own HOME, and the loopback model. */
function serverEnv() {
  const env = {
    ...process.env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: path.join(dirs.home, '.config'),
    XDG_DATA_HOME: path.join(dirs.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(dirs.home, '.cache'),
    // No extension gallery (code-server's default is open-vsx.org).
    EXTENSIONS_GALLERY: '{}',
    TANDEM_PROVIDER: 'anthropic',
    TANDEM_MODEL: '',
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'test-key',
    OPENAI_API_KEY: '',
  };
  for (const [name, value] of Object.entries(extraEnv)) {
    if (value === null) delete env[name];
    else env[name] = value;
  }
  return env;
}

const commonArgs = () => ['--config', path.join(E2E_DIR, 'code-server.yaml'), '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];

/**
 * The packaged extension in this window's extensions folder: installed with
 * `code-server --install-extension`, or, when the test run installed it once
 * that way already (INSTALLED_EXTENSIONS, tests/editors/vscode.rs), a copy of
 * that folder with its index pointed here. Returns which.
 */
function installExtension() {
  fs.writeFileSync(path.join(E2E_DIR, 'code-server.yaml'), 'auth: none\n');
  const installed = process.env.INSTALLED_EXTENSIONS;
  let how;
  if (installed) {
    fs.cpSync(installed, dirs.extensions, { recursive: true });
    const index = path.join(dirs.extensions, 'extensions.json');
    fs.writeFileSync(index, fs.readFileSync(index, 'utf8').split(installed).join(dirs.extensions));
    how = `a copy of ${installed}, installed once with code-server --install-extension`;
  } else {
    const result = spawnSync(process.execPath, [CODE_SERVER, ...commonArgs(), '--install-extension', VSIX, '--force'], {
      env: serverEnv(),
      encoding: 'utf8',
      timeout: STEP_MS,
    });
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
    assert.strictEqual(result.status, 0, `code-server --install-extension failed (${result.error ?? result.status}):\n${output}`);
    assert.match(output, /successfully installed/, output);
    how = 'code-server --install-extension';
  }
  assert.ok(fs.readdirSync(dirs.extensions).some((name) => name.startsWith('tandem.tandem-')), 'the extension is not in the extensions dir');
  return how;
}

/** Start code-server on a port the OS picks; resolve to its URL. */
function startCodeServer() {
  const args = [
    CODE_SERVER,
    ...commonArgs(),
    '--auth',
    'none',
    '--bind-addr',
    '127.0.0.1:0',
    '--disable-telemetry',
    '--disable-update-check',
    ...(restrictedMode ? [] : ['--disable-workspace-trust']),
    '--disable-getting-started-override',
    '--disable-proxy',
    '--ignore-last-opened',
  ];
  codeServer = spawn(process.execPath, args, { env: serverEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  recordGroup(codeServer.pid);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not listen within ${STEP_MS / 1000} s`)), STEP_MS);
    const read = (chunk) => {
      codeServerLog += chunk;
      const match = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(codeServerLog);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    codeServer.stdout.setEncoding('utf8').on('data', read);
    codeServer.stderr.setEncoding('utf8').on('data', read);
    codeServer.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`code-server exited (${code ?? signal})`));
    });
  });
}

// ---- The page, as a user sees it ----------------------------------------

/** Wait (bounded) until `fn(arg)` holds in the page; re-checked on each DOM change. */
async function until(what, fn, arg, ms = STEP_MS) {
  try {
    const handle = await page.waitForFunction(fn, { timeout: ms, polling: 'mutation' }, arg);
    return await handle.jsonValue();
  } catch (error) {
    throw new Error(`timed out after ${ms / 1000} s waiting until ${what} (${error.message})`);
  }
}

/** The notification toasts' texts. */
function notifications(p) {
  return p.$$eval('.notification-toast', (toasts) => toasts.map((t) => t.innerText.replace(/\s+/g, ' ').trim()));
}

/** Click (in the DOM) a toast's button; toasts move while others arrive. */
async function clickToastButton(toastText, button) {
  const clicked = await page.evaluate(
    (text, label) => {
      const toast = [...document.querySelectorAll('.notification-toast')].find((t) => t.innerText.includes(text));
      const b = toast && [...toast.querySelectorAll('.monaco-button')].find((x) => x.innerText.trim() === label);
      if (!b) return false;
      b.click();
      return true;
    },
    toastText,
    button,
  );
  assert.ok(clicked, `no "${button}" button on the notification "${toastText}"`);
}

/** The quick input (palette, input box) is open and has focus. */
async function quickInputOpen(what) {
  await until(what, () => {
    const widget = document.querySelector('.quick-input-widget');
    const input = widget && widget.querySelector('input');
    return !!widget && widget.style.display !== 'none' && document.activeElement === input;
  });
}

async function quickInputClosed(what) {
  await until(what, () => {
    const widget = document.querySelector('.quick-input-widget');
    return !widget || widget.style.display === 'none';
  });
}

async function selectAll() {
  await page.keyboard.down('Control');
  await page.keyboard.press('a');
  await page.keyboard.up('Control');
}

/**
 * Put `text` into the focused field in one piece (one input event, as a
 * paste or an input method gives), for fields whose typing is not what a
 * test is about: the palette, Quick Open, input boxes, prompts. Typed a key
 * at a time, each key in the command palette filters its commands again,
 * and the renderer spent about 28 ms of CPU a key (undo.js, traced: 6.2 of
 * its 10 s); with the scripts' titles and prompts typed in one piece,
 * undo.js took 16 CPU-s instead of 20. Where the typing is the subject
 * (the user's unsaved text, the fuzzer, ghost text, `@` mentions), the
 * scripts type a key at a time.
 */
async function insertText(text) {
  await page.keyboard.sendCharacter(text);
}

/** Run a command from the palette (F1), by its title. */
async function palette(title) {
  await page.keyboard.press('F1');
  await quickInputOpen('the command palette opens');
  await insertText(title);
  await until(
    `the palette offers "${title}"`,
    (t) => {
      const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
      return !!row && (row.getAttribute('aria-label') ?? '').startsWith(t);
    },
    title,
  );
  await page.keyboard.press('Enter');
}

/** "Tandem: Ask agent" from the palette, with `prompt` in its input box. */
async function askAgent(prompt) {
  await palette('Tandem: Ask agent');
  await until('the ask input box opens', () => document.querySelector('.quick-input-widget input')?.getAttribute('placeholder') === 'What should the agent do?');
  await insertText(prompt);
  await page.keyboard.press('Enter');
}

/** The lines of the editor showing `uri` (Monaco renders only what is visible: the file is short). */
function editorLines(uri) {
  return page.evaluate((u) => {
    const editor = document.querySelector(`.editor-instance .monaco-editor[data-uri="${u}"]`);
    if (!editor) return null;
    const lines = [...editor.querySelectorAll('.view-lines .view-line')];
    lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
    return lines.map((l) => l.textContent.replace(/\u00a0/g, ' '));
  }, uri);
}

async function waitForLines(what, uri, expected) {
  await until(
    what,
    ({ u, want }) => {
      const editor = document.querySelector(`.editor-instance .monaco-editor[data-uri="${u}"]`);
      if (!editor) return false;
      const lines = [...editor.querySelectorAll('.view-lines .view-line')];
      lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
      return JSON.stringify(lines.map((l) => l.textContent.replace(/\u00a0/g, ' '))) === JSON.stringify(want);
    },
    { u: uri, want: expected },
  );
}

/** The Refactor Preview's rows: text, title (the annotation label), checked. */
function previewRows() {
  return page.evaluate(() => {
    const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
    if (!list) return [];
    return [...list.querySelectorAll('.monaco-list-row')].map((row) => ({
      label: row.getAttribute('aria-label') ?? '',
      title: [...row.querySelectorAll('[title]')].map((e) => e.getAttribute('title')).join(' '),
      checked: row.querySelector('.edit-checkbox')?.getAttribute('aria-checked') === 'true',
    }));
  });
}

/**
 * The Refactor Preview's entries (one per hunk) under the file `name`, once
 * it lists `count` of them: the label VS Code reads out, the title (the
 * change annotation's label), ticked.
 */
function previewHunks(what, name, count) {
  return until(
    what,
    ({ n, c }) => {
      const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
      if (!list || !list.checkVisibility()) return false;
      const rows = [...list.querySelectorAll('.monaco-list-row')];
      const file = rows.findIndex((r) => r.getAttribute('aria-level') === '1' && (r.getAttribute('aria-label') ?? '').includes(n));
      if (file < 0) return false;
      const hunks = [];
      for (const row of rows.slice(file + 1)) {
        if (row.getAttribute('aria-level') !== '2') break;
        hunks.push({
          label: row.getAttribute('aria-label') ?? '',
          title: [...row.querySelectorAll('[title]')].map((e) => e.getAttribute('title')).join(' '),
          checked: row.querySelector('.edit-checkbox')?.getAttribute('aria-checked') === 'true',
        });
      }
      return hunks.length === c ? hunks : false;
    },
    { n: name, c: count },
  );
}

async function waitForPreview(what, edit) {
  await until(
    what,
    (e) => {
      const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
      return !!list && [...list.querySelectorAll('.monaco-list-row')].some((r) => (r.getAttribute('aria-label') ?? '').includes(e));
    },
    edit,
  );
}

/** Click the Refactor Preview's button (Apply, Discard). */
async function clickPreviewButton(label) {
  const clicked = await page.evaluate((l) => {
    const pane = document.querySelector('.bulk-edit-panel');
    const button = pane && [...pane.querySelectorAll('.buttons .monaco-button')].find((b) => b.innerText.trim() === l);
    if (!button) return false;
    button.click();
    return true;
  }, label);
  assert.ok(clicked, `the Refactor Preview has no ${label} button`);
}

/** Wait for a toast matching `pattern` (a RegExp source); resolve to its text. */
async function waitForToast(what, pattern) {
  return until(
    what,
    (source) => {
      const re = new RegExp(source);
      const texts = [...document.querySelectorAll('.notification-toast')].map((e) => e.innerText.replace(/\s+/g, ' ').trim());
      return texts.find((t) => re.test(t)) ?? false;
    },
    pattern,
  );
}

/** How a run ended, as its end notification says. */
const RUN_ENDED = 'Tandem: run (completed|failed|cancelled|stopped)';

async function clearNotifications() {
  await palette('Notifications: Clear All Notifications');
  await until('the notifications are cleared', () => document.querySelectorAll('.notification-toast').length === 0);
}

// ---- The Tandem panel (a webview: an iframe in an iframe of the page) --------

/** Wait (bounded) for the panel's frame, other than `old`, to be loaded and fed its snapshot. */
async function panelFrame(what, old) {
  const end = Date.now() + STEP_MS;
  for (;;) {
    for (const frame of page.frames()) {
      if (frame === old || frame.isDetached()) continue;
      const ready = await frame.evaluate(() => !!document.getElementById('prompt') && document.body.dataset.ready === '1').catch(() => false);
      if (ready) return frame;
    }
    if (Date.now() > end) throw new Error(`timed out after ${STEP_MS / 1000} s waiting until ${what}`);
    // Look again when a frame navigates, or after half a second (a frame's script may still be starting).
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 500);
      page.once('framenavigated', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** Wait (bounded) until `fn(arg)` holds in the panel; re-checked on each DOM change there. */
async function inPanel(frame, what, fn, arg, ms = STEP_MS) {
  try {
    const handle = await frame.waitForFunction(fn, { timeout: ms, polling: 'mutation' }, arg);
    return await handle.jsonValue();
  } catch (error) {
    throw new Error(`timed out after ${ms / 1000} s waiting until ${what} in the panel (${error.message})`);
  }
}

/** Click the last element matching `selector` in the panel (the newest run's). */
async function clickInPanel(frame, selector) {
  const element = (await frame.$$(selector)).at(-1);
  assert.ok(element, `the panel has no ${selector}`);
  await element.click();
}

/** Put the focus in the panel's input box, then type as a user types. */
async function typeInPanel(frame, text) {
  await clickInPanel(frame, '#prompt');
  if (text) await page.keyboard.type(text);
}

/** How many runs the panel shows ended. */
function endCount(frame) {
  return frame.evaluate(() => document.querySelectorAll('#log .run-end').length);
}

/** Wait until the panel shows more than `count` ended runs; resolves to the last one's text. */
function nextEnd(frame, what, count) {
  return inPanel(frame, what, (n) => {
    const ends = document.querySelectorAll('#log .run-end');
    return ends.length > n ? ends[ends.length - 1].textContent : null;
  }, count);
}

/** Wait until the Tandem status bar item says `text`. */
function statusBarSays(what, text) {
  return until(what, (t) => [...document.querySelectorAll('.statusbar-item')].some((i) => (i.id ?? '').endsWith('tandem.status') && i.innerText.includes(t)), text);
}

/** The Tandem status bar item's text. */
function statusBarText() {
  return page.evaluate(() => {
    const item = [...document.querySelectorAll('.statusbar-item')].find((i) => (i.id ?? '').endsWith('tandem.status'));
    return item ? item.innerText.replace(/\s+/g, ' ').trim() : '';
  });
}

/** A screenshot of the window, kept with the test's state. */
async function shot(name) {
  const dir = path.join(E2E_DIR, 'screenshots');
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`) });
}


/** The window's URI of a workspace file: vscode-remote://HOST:PORT/PATH. */
function windowUri(name) {
  return `vscode-remote://${new URL(state.url).host}${pathToFileURL(path.join(dirs.workspace, name)).pathname}`;
}

/** What the harness started; `page` is the window. */
const state = { url: undefined, page: undefined };

/**
 * Install the extension, start code-server and the model, open the
 * workspace in Chromium and wait for the workbench. Resolves to the page.
 * A failure after this ends the script through `fail` (and so does the
 * deadline).
 */
async function open({ files = {}, settings = {}, env = {}, deadlineMs = DEADLINE_MS, trusted = true, restricted = false } = {}) {
  extraEnv = env;
  // VS Code's Restricted Mode: workspace trust on, the folder not trusted,
  // without the startup dialog or the banner (the window opens as a user
  // who declined to trust the folder sees it).
  restrictedMode = restricted;
  if (restricted) {
    settings = {
      'security.workspace.trust.enabled': true,
      'security.workspace.trust.startupPrompt': 'never',
      'security.workspace.trust.banner': 'never',
      'security.workspace.trust.untrustedFiles': 'open',
      ...settings,
    };
  }
  const deadline = setTimeout(() => void fail(new Error(`the test did not finish within ${deadlineMs / 1000} s`)), deadlineMs);
  deadline.unref();
  modelUrl = await model.start();
  setup(files, settings, trusted);
  const how = installExtension();
  log(`installed ${path.basename(VSIX)}: ${how}`);
  state.url = await startCodeServer();
  log(`code-server listens on ${state.url}`);
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: dirs.chromium,
    env: { ...process.env, HOME: dirs.home },
    args: [
      '--no-sandbox',
      '--disable-dev-shm-usage',
      '--disable-gpu',
      '--no-first-run',
      '--no-default-browser-check',
      // Loopback only: every other host name fails to resolve.
      '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
    ],
  });
  recordGroup(browser.process()?.pid);
  page = await browser.newPage();
  state.page = page;
  await page.setViewport({ width: 1400, height: 900 });
  await page.goto(`${state.url}/?folder=${encodeURIComponent(dirs.workspace)}`, { timeout: STEP_MS });
  await until('the workbench loads', () => !!document.querySelector('.monaco-workbench .part.editor'));
  log('the workbench is up');
  return page;
}

/**
 * Another window on the same workspace: a second browser tab, for which
 * code-server starts an extension host of its own (and so the extension
 * starts its own tandem lsp), as a second VS Code window does. The page
 * helpers act on the window `usePage` chose last; this one after it loads.
 */
async function openWindow() {
  const other = await browser.newPage();
  await other.setViewport({ width: 1400, height: 900 });
  await other.goto(`${state.url}/?folder=${encodeURIComponent(dirs.workspace)}`, { timeout: STEP_MS });
  await usePage(other);
  await until('the other window\'s workbench loads', () => !!document.querySelector('.monaco-workbench .part.editor'));
  return other;
}

/** Make `p` the window the page helpers act on, and bring it to the front. */
async function usePage(p) {
  page = p;
  state.page = p;
  await p.bringToFront();
}

/**
 * The `tandem lsp` processes of this test's windows (descendants of its
 * code-server: an extension host each), by pid.
 */
function serverPids() {
  const children = new Map();
  const argvs = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
      argvs.set(Number(entry), fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0'));
    } catch {
      // The process ended while the list was read.
    }
  }
  const found = [];
  const queue = [codeServer.pid];
  while (queue.length > 0) {
    const pid = queue.pop();
    const argv = argvs.get(pid) ?? [];
    if (argv[0] === TANDEM_BIN && argv[1] === 'lsp') found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** The end of a script that passed. */
async function passed(what) {
  await cleanup();
  log(`PASSED: ${what}`);
  process.exit(0);
}

/** Run `main`; any failure (or the deadline) ends the script with its state shown. */
function run(main) {
  main().catch((error) => void fail(error));
}

/** Open a workspace file with Quick Open (Ctrl+P) and wait until its editor has the focus. */
async function quickOpen(name) {
  await page.keyboard.down('Control');
  await page.keyboard.press('p');
  await page.keyboard.up('Control');
  await quickInputOpen('quick open opens');
  await insertText(name);
  await until(
    `quick open offers ${name}`,
    (n) => {
      const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
      return !!row && (row.getAttribute('aria-label') ?? '').includes(n);
    },
    path.basename(name),
  );
  await page.keyboard.press('Enter');
  await until(
    `${name} is open with the focus in its editor`,
    (u) => {
      const editor = document.querySelector(`.editor-instance .monaco-editor[data-uri="${u}"]`);
      return !!editor && editor.contains(document.activeElement);
    },
    windowUri(name),
  );
}

/** The text of the tool result for the tool call `id` in the model's request `body` (Anthropic's messages). */
function toolResult(body, id) {
  for (const message of body.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type === 'tool_result' && block.tool_use_id === id) {
        return typeof block.content === 'string' ? block.content : block.content.map((c) => c.text ?? '').join('');
      }
    }
  }
  throw new Error(`no tool result for ${id} in the model's request`);
}

/** A workspace file's text on disk. */
function disk(name) {
  return fs.readFileSync(path.join(dirs.workspace, name), 'utf8');
}

/** True when `name`'s tab shows unsaved changes. */
function tabDirty(name) {
  return page.evaluate((n) => [...document.querySelectorAll('.tab')].some((t) => t.classList.contains('dirty') && (t.getAttribute('aria-label') ?? '').startsWith(n)), name);
}

module.exports = {
  askAgent,
  insertText,
  assert,
  fs,
  path,
  TANDEM_BIN,
  serverEnv,
  E2E_DIR,
  STEP_MS,
  dirs,
  model,
  gate,
  state,
  log,
  open,
  openWindow,
  usePage,
  run,
  passed,
  windowUri,
  quickOpen,
  disk,
  tabDirty,
  toolResult,
  until,
  notifications,
  clickToastButton,
  quickInputOpen,
  quickInputClosed,
  selectAll,
  palette,
  editorLines,
  waitForLines,
  previewRows,
  previewHunks,
  waitForPreview,
  clickPreviewButton,
  waitForToast,
  RUN_ENDED,
  clearNotifications,
  panelFrame,
  inPanel,
  clickInPanel,
  typeInPanel,
  endCount,
  nextEnd,
  statusBarSays,
  statusBarText,
  shot,
  serverPids,
};
