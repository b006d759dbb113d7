// End to end: the packaged extension (.vsix) in real VS Code (code-server,
// VS Code 1.139) in headless Chromium, driven as a user drives it, with
// the scripted model. tests/editor_vscode.rs runs it; it exits 0 when
// every check passed and prints each check on stderr as it goes.
//
// It covers, in one window:
//   1. a missing binary: the error names the path and offers
//      "Set tandem.serverPath"; setting it there starts the server without
//      a reload, and the commands work ("Tandem: Show transcript");
//   2. "Tandem: Ask agent" from the palette, with unsaved typing in the
//      file: the edit waits in the Refactor Preview under Tandem's label,
//      is ticked and applied there, the buffer holds both texts, the disk
//      is untouched, and the end notification names the changed file;
//   3. "Tandem: Cancel run" while an edit waits in the Refactor Preview:
//      the preview is discarded, the buffer and the disk keep their text,
//      and the end notification says the run was cancelled;
//   4. a multi-line shell command: asked in a modal dialog whose detail
//      shows every line and why it asks; "Deny" runs nothing.
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

/** The whole test, install to last check; each wait below is shorter. */
const DEADLINE_MS = 240_000;
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
const notes = path.join(dirs.workspace, 'notes.txt');
/** notes.txt as the window names it: vscode-remote://HOST:PORT/PATH. */
let notesUri;
const script = path.join(E2E_DIR, 'script.json');
const missingBinary = path.join(E2E_DIR, 'not-installed', 'tandem');
const ON_DISK = 'line one\nline two\nline three\n';
const TYPED = 'typed, not saved ';

/** The scripted model: read the file, then one edit_file, then done. */
function writeScript(oldString, newString) {
  const turns = [
    { text: 'Reading.', tool_calls: [{ name: 'read_file', input: { file_path: 'notes.txt' } }] },
    { text: 'Editing.', tool_calls: [{ name: 'edit_file', input: { file_path: 'notes.txt', old_string: oldString, new_string: newString } }] },
    { text: 'Done.' },
  ];
  fs.writeFileSync(script, JSON.stringify({ turns }));
}

/** The scripted model: one shell command, then done. */
function writeShellScript(command) {
  const turns = [{ text: 'Running.', tool_calls: [{ name: 'run_shell', input: { command } }] }, { text: 'Done.' }];
  fs.writeFileSync(script, JSON.stringify({ turns }));
}

// Processes to stop however the test ends.
let codeServer;
let browser;
let codeServerLog = '';

async function cleanup() {
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

let page;

/**
 * The process groups this script starts (code-server, Chromium), one a
 * line in E2E_DIR/groups, for tests/editor_vscode.rs to stop should this
 * script itself hang.
 */
function recordGroup(pid) {
  if (pid) fs.appendFileSync(path.join(E2E_DIR, 'groups'), `${pid}\n`);
}

function setup() {
  fs.mkdirSync(dirs.workspace, { recursive: true });
  fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
  fs.mkdirSync(dirs.extensions, { recursive: true });
  fs.mkdirSync(dirs.home, { recursive: true });
  fs.writeFileSync(notes, ON_DISK);
  writeScript('line three', 'LINE THREE');
  const settings = {
    'tandem.serverPath': missingBinary,
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
  };
  fs.writeFileSync(path.join(dirs.userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
}

/** code-server's environment: its own HOME, and the scripted model. */
function serverEnv() {
  return {
    ...process.env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: path.join(dirs.home, '.config'),
    XDG_DATA_HOME: path.join(dirs.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(dirs.home, '.cache'),
    // No extension gallery (code-server's default is open-vsx.org).
    EXTENSIONS_GALLERY: '{}',
    TANDEM_PROVIDER: 'scripted',
    TANDEM_SCRIPT: script,
    TANDEM_MODEL: '',
    ANTHROPIC_API_KEY: '',
    OPENAI_API_KEY: '',
  };
}

const commonArgs = () => ['--config', path.join(E2E_DIR, 'code-server.yaml'), '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];

function installExtension() {
  fs.writeFileSync(path.join(E2E_DIR, 'code-server.yaml'), 'auth: none\n');
  const result = spawnSync(process.execPath, [CODE_SERVER, ...commonArgs(), '--install-extension', VSIX, '--force'], {
    env: serverEnv(),
    encoding: 'utf8',
    timeout: STEP_MS,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  assert.strictEqual(result.status, 0, `code-server --install-extension failed (${result.error ?? result.status}):\n${output}`);
  assert.match(output, /successfully installed/, output);
  assert.ok(fs.readdirSync(dirs.extensions).some((name) => name.startsWith('tandem.tandem-')), 'the extension is not in the extensions dir');
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
    '--disable-workspace-trust',
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

/** Run a command from the palette (F1), by its title. */
async function palette(title) {
  await page.keyboard.press('F1');
  await quickInputOpen('the command palette opens');
  await page.keyboard.type(title);
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

/** True when notes.txt's tab shows unsaved changes. */
function notesTabDirty() {
  return page.evaluate(() => [...document.querySelectorAll('.tab')].some((t) => t.classList.contains('dirty') && (t.getAttribute('aria-label') ?? '').startsWith('notes.txt')));
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

function disk() {
  return fs.readFileSync(notes, 'utf8');
}

// ---- The scenario ----------------------------------------------------------

async function main() {
  const deadline = setTimeout(() => void fail(new Error(`the test did not finish within ${DEADLINE_MS / 1000} s`)), DEADLINE_MS);
  setup();
  installExtension();
  log(`installed ${path.basename(VSIX)} with code-server --install-extension`);
  const url = await startCodeServer();
  log(`code-server listens on ${url}`);
  notesUri = `vscode-remote://${new URL(url).host}${pathToFileURL(notes).pathname}`;
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
  await page.setViewport({ width: 1400, height: 900 });
  await page.goto(`${url}/?folder=${encodeURIComponent(dirs.workspace)}`, { timeout: STEP_MS });
  await until('the workbench loads', () => !!document.querySelector('.monaco-workbench .part.editor'));
  log('the workbench is up');

  // 1. A missing binary: a clear error offering tandem.serverPath; fixing it there starts the server.
  const missing = await waitForToast('the missing-binary error shows', 'was not found');
  assert.ok(missing.includes(missingBinary), `the error does not name the path: ${missing}`);
  assert.ok(missing.includes('Set tandem.serverPath'), `the error offers no "Set tandem.serverPath": ${missing}`);
  // Only ours: the extension finds the binary missing before the language
  // client starts, so the client's own "couldn't create connection" error
  // (shown before ours when it tried) never comes.
  const toasts = await page.$$eval('.notification-toast', (all) => all.map((t) => t.innerText.replace(/\s+/g, ' ').trim()));
  assert.ok(!toasts.some((t) => t.includes("couldn't create connection")), `a second error beside ours: ${JSON.stringify(toasts)}`);
  log(`check: a missing binary gives "${missing}" and no other error`);
  await clickToastButton('was not found', 'Set tandem.serverPath');
  await quickInputOpen('the server path input box opens');
  const shown = await page.$eval('.quick-input-widget input', (input) => input.value);
  assert.strictEqual(shown, missingBinary, 'the input box does not start from the current tandem.serverPath');
  await selectAll();
  await page.keyboard.type(TANDEM_BIN);
  await page.keyboard.press('Enter');
  await quickInputClosed('the server path input box closes');
  await clearNotifications();
  await palette('Tandem: Show transcript');
  await until(
    'the transcript says the server restarted',
    () => [...document.querySelectorAll('.monaco-editor[data-uri^="output:"] .view-line')].some((l) => l.textContent.replace(/\u00a0/g, ' ').includes('(server restarted:')),
  );
  log('check: "Set tandem.serverPath" started the server without a reload; "Tandem: Show transcript" works');

  // 2. Ask from the palette with unsaved typing; apply the edit in the Refactor Preview.
  await page.keyboard.down('Control');
  await page.keyboard.press('p');
  await page.keyboard.up('Control');
  await quickInputOpen('quick open opens');
  await page.keyboard.type('notes.txt');
  await until('quick open offers notes.txt', () => {
    const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
    return !!row && (row.getAttribute('aria-label') ?? '').includes('notes.txt');
  });
  await page.keyboard.press('Enter');
  await until(
    'notes.txt is open with the focus in its editor',
    (u) => {
      const editor = document.querySelector(`.editor-instance .monaco-editor[data-uri="${u}"]`);
      return !!editor && editor.contains(document.activeElement);
    },
    notesUri,
  );
  await page.keyboard.down('Control');
  await page.keyboard.press('Home');
  await page.keyboard.up('Control');
  await page.keyboard.type(TYPED);
  const typedLines = [`${TYPED}line one`, 'line two', 'line three', ''];
  await waitForLines('the typing shows in the editor', notesUri, typedLines);
  assert.ok(await notesTabDirty(), 'notes.txt should have unsaved changes');
  assert.strictEqual(disk(), ON_DISK);
  log('check: unsaved typing is in the buffer, not on disk');

  await palette('Tandem: Ask agent');
  await until('the ask input box opens', () => document.querySelector('.quick-input-widget input')?.getAttribute('placeholder') === 'What should the agent do?');
  await page.keyboard.type('Capitalise line three');
  await page.keyboard.press('Enter');
  await waitForPreview('the edit waits in the Refactor Preview', 'replacing line three with LINE THREE');
  const rows = await previewRows();
  assert.ok(rows.some((r) => r.title.includes('Tandem: edit_file notes.txt')), `the preview does not show Tandem's label: ${JSON.stringify(rows)}`);
  assert.deepStrictEqual(await editorLines(notesUri), typedLines, 'the edit landed before it was applied in the preview');
  await until('the progress notification offers Cancel', () =>
    [...document.querySelectorAll('.notification-toast')].some(
      (t) => t.innerText.includes('Tandem') && [...t.querySelectorAll('.monaco-button')].some((b) => b.innerText.trim() === 'Cancel'),
    ),
  );
  log(`check: the edit waits in the Refactor Preview under Tandem's label (${JSON.stringify(rows.map((r) => r.label))})`);
  // Tick the file (and so its edit), then Apply.
  await page.evaluate(() => {
    const row = document.querySelector('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="1"]');
    const box = row && row.querySelector('.edit-checkbox');
    if (box && box.getAttribute('aria-checked') !== 'true') box.click();
  });
  await until('every edit in the preview is ticked', () => {
    const boxes = [...document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .edit-checkbox')];
    return boxes.length > 0 && boxes.every((b) => b.getAttribute('aria-checked') === 'true');
  });
  await clickPreviewButton('Apply');
  const completed = await waitForToast('the run ends', RUN_ENDED);
  assert.ok(completed.includes('Tandem: run completed. Changed: notes.txt.'), `the run did not complete with the edit: ${completed}`);
  const bothTexts = [`${TYPED}line one`, 'line two', 'LINE THREE', ''];
  await waitForLines('the buffer holds the typing and the edit', notesUri, bothTexts);
  assert.ok(await notesTabDirty(), 'notes.txt should still have unsaved changes');
  assert.strictEqual(disk(), ON_DISK, 'the disk changed');
  log(`check: "${completed}"; the buffer holds both texts; the disk is untouched`);

  // 3. Cancel while the edit waits in the Refactor Preview: nothing lands.
  await clearNotifications();
  writeScript('line two', 'LINE TWO');
  await palette('Tandem: Ask agent');
  await until('the ask input box opens', () => document.querySelector('.quick-input-widget input')?.getAttribute('placeholder') === 'What should the agent do?');
  await page.keyboard.type('Capitalise line two');
  await page.keyboard.press('Enter');
  await waitForPreview('the second edit waits in the Refactor Preview', 'replacing line two with LINE TWO');
  log('the second edit waits in the Refactor Preview; cancelling the run');
  await palette('Tandem: Cancel run');
  const cancelled = await waitForToast('the cancelled run ends', RUN_ENDED);
  assert.ok(cancelled.includes('Tandem: run cancelled.'), `the run did not end cancelled: ${cancelled}`);
  assert.ok(!cancelled.includes('Changed:'), `the cancelled run reports a change: ${cancelled}`);
  await until('the Refactor Preview is discarded', () => {
    const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
    return !list || list.querySelectorAll('.monaco-list-row').length === 0 || !list.checkVisibility();
  });
  assert.deepStrictEqual(await editorLines(notesUri), bothTexts, 'the cancelled edit changed the buffer');
  assert.strictEqual(disk(), ON_DISK, 'the disk changed');
  log(`check: "${cancelled}"; the preview is discarded; the buffer and the disk are unchanged`);

  // 4. A multi-line shell command is asked in a modal dialog showing every line; Deny runs nothing.
  await clearNotifications();
  const made = path.join(dirs.workspace, 'made-by-agent.txt');
  const commandLines = ['echo first step', 'touch made-by-agent.txt', 'echo third step'];
  writeShellScript(commandLines.join('\n'));
  await palette('Tandem: Ask agent');
  await until('the ask input box opens', () => document.querySelector('.quick-input-widget input')?.getAttribute('placeholder') === 'What should the agent do?');
  await page.keyboard.type('Make a file');
  await page.keyboard.press('Enter');
  const dialog = await until('the shell command is asked in a modal dialog', () => {
    const box = document.querySelector('.monaco-dialog-box');
    const buttons = box ? [...box.querySelectorAll('.monaco-button')].map((b) => b.innerText.trim()) : [];
    if (!buttons.includes('Deny')) return null;
    return {
      message: box.querySelector('.dialog-message-text')?.innerText ?? '',
      detail: box.querySelector('.dialog-message-detail')?.innerText ?? '',
      buttons,
    };
  });
  assert.strictEqual(dialog.message, 'Tandem wants to run a shell command:', `the dialog's title: ${JSON.stringify(dialog)}`);
  assert.deepStrictEqual(dialog.detail.split('\n').slice(0, commandLines.length), commandLines, `the dialog does not show every line: ${JSON.stringify(dialog)}`);
  assert.ok(dialog.detail.includes('Asked because:'), `the dialog does not say why it asks: ${JSON.stringify(dialog)}`);
  for (const title of ['Allow once', 'Always allow', 'Deny']) assert.ok(dialog.buttons.includes(title), `no "${title}" in ${JSON.stringify(dialog.buttons)}`);
  assert.ok(!(await notifications(page)).some((t) => t.includes('wants to run')), 'the ask is also a notification');
  log(`check: the shell command is asked in a modal with every line (${JSON.stringify(dialog.detail.split('\n').slice(0, commandLines.length))})`);
  await page.evaluate(() => {
    const deny = [...document.querySelectorAll('.monaco-dialog-box .monaco-button')].find((b) => b.innerText.trim() === 'Deny');
    if (deny) deny.click();
  });
  await until('the dialog closes', () => !document.querySelector('.monaco-dialog-box'));
  const denied = await waitForToast('the run with the denied command ends', RUN_ENDED);
  assert.ok(denied.includes('Tandem: run completed.'), `the run did not complete after the deny: ${denied}`);
  assert.ok(!fs.existsSync(made), 'the denied command ran');
  log(`check: "Deny" ran nothing; "${denied}"`);

  clearTimeout(deadline);
  await cleanup();
  log('PASSED: missing binary, ask with unsaved typing reviewed in the Refactor Preview, cancel during review, a multi-line command asked in a modal');
}

main().catch((error) => void fail(error));
