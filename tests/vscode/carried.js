// End to end: the linux-x64 platform package (.vsix) on a machine with no
// `tandem` on PATH, no Rust toolchain on PATH and no `tandem.serverPath`
// (issue 54), as a new user installs it:
//   1. `code-server --install-extension FILE` installs it; the extension
//      folder holds server/tandem, executable, and server/carried.json;
//   2. the `tandem lsp` that starts is that carried binary, in an
//      environment whose PATH has neither tandem nor cargo/rustc/rustup;
//   3. the Tandem icon is in the activity bar and opens the panel;
//      a run typed in the Tandem panel edits app.txt (its open buffer) and
//      notes.txt (closed, on disk), and no version warning shows (the
//      carried server says the extension's version).
// The screenshot of 3 goes to E2E_DIR/screenshots.
'use strict';

const { assert, fs, path, dirs, model, log, open, run, passed, until, quickOpen, waitForLines, windowUri, disk, notifications, panelFrame, typeInPanel, endCount, nextEnd, shot } = require('./harness');

const APP = 'alpha\nbeta\n';
const NOTES = 'one\ntwo\n';
const NOT_ON_PATH = ['tandem', 'cargo', 'rustc', 'rustup'];

/** PATH without the folders that hold tandem or a Rust toolchain. */
function cleanPath() {
  return (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => dir !== '' && !NOT_ON_PATH.some((name) => fs.existsSync(path.join(dir, name))))
    .join(':');
}

/** The `tandem lsp` processes whose binary is under the extensions folder: pid → argv[0]. */
function carriedServers() {
  const found = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[1] === 'lsp' && argv[0].startsWith(dirs.extensions)) found.set(Number(entry), argv[0]);
    } catch {
      // The process ended while the list was read.
    }
  }
  return found;
}

async function main() {
  const PATH = cleanPath();
  for (const dir of PATH.split(':')) {
    for (const name of NOT_ON_PATH) assert.ok(!fs.existsSync(path.join(dir, name)), `${name} is on the test's PATH in ${dir}`);
  }
  log(`PATH for code-server: ${PATH}`);
  // tandem.serverPath unset (the harness's default names the test binary).
  const page = await open({
    files: { 'app.txt': APP, 'notes.txt': NOTES },
    settings: { 'tandem.serverPath': undefined, 'tandem.permissionMode': 'acceptEdits' },
    env: { PATH },
  });
  const settings = JSON.parse(fs.readFileSync(path.join(dirs.userData, 'User', 'settings.json'), 'utf8'));
  assert.ok(!('tandem.serverPath' in settings), `tandem.serverPath is set: ${settings['tandem.serverPath']}`);

  // 1. The installed extension carries its server.
  const folder = fs.readdirSync(dirs.extensions).find((name) => name.startsWith('tandem.tandem-'));
  assert.ok(folder, 'the extension is not in the extensions folder');
  const binary = path.join(dirs.extensions, folder, 'server', 'tandem');
  fs.accessSync(binary, fs.constants.X_OK);
  const manifest = JSON.parse(fs.readFileSync(path.join(dirs.extensions, folder, 'server', 'carried.json'), 'utf8'));
  assert.strictEqual(manifest.target, 'linux-x64');
  log(`check: ${folder} carries server/tandem (executable) for ${manifest.target}, version ${manifest.version}`);

  // 2. and 3. A run from the panel, served by the carried binary.
  await quickOpen('app.txt');
  // The Tandem icon is in the activity bar at first launch (not behind
  // "Additional Views" in the secondary side bar), and a click opens the
  // panel in the side bar.
  const icon = await until('the Tandem icon is in the activity bar', () => {
    const item = [...document.querySelectorAll('.part.activitybar .action-item')].find((i) => i.querySelector('.action-label')?.getAttribute('aria-label')?.startsWith('Tandem'));
    return item && item.checkVisibility() ? item.querySelector('.action-label').getAttribute('aria-label') : null;
  });
  await shot('activity-bar-icon');
  const label = await page.evaluateHandle(() =>
    [...document.querySelectorAll('.part.activitybar .action-item .action-label')].find((l) => l.getAttribute('aria-label')?.startsWith('Tandem')),
  );
  await label.asElement().click();
  const panel = await panelFrame('the icon opens the panel');
  const title = await until('the side bar shows the Tandem view', () => {
    const bar = document.querySelector('.part.sidebar');
    const text = bar?.querySelector('.title-label')?.textContent ?? '';
    return bar?.checkVisibility() && /tandem/i.test(text) ? text : null;
  });
  log(`check: the activity bar has the Tandem icon ("${icon}") at first launch; a click opens the panel in the side bar ("${title}")`);
  model.queue(
    { text: 'Reading.' },
    { tool: { name: 'read_file', input: { file_path: 'app.txt' } } },
    { tool: { name: 'read_file', input: { file_path: 'notes.txt' } } },
  );
  model.queue(
    { text: 'Shouting.' },
    { tool: { name: 'edit_file', input: { file_path: 'app.txt', old_string: 'alpha', new_string: 'ALPHA' } } },
    { tool: { name: 'edit_file', input: { file_path: 'notes.txt', old_string: 'two', new_string: 'TWO' } } },
  );
  model.queue({ text: 'Done.' });
  const ends = await endCount(panel);
  await typeInPanel(panel, 'Shout the first word of app.txt and the last of notes.txt');
  await page.keyboard.press('Enter');
  const ended = await nextEnd(panel, 'the run ends in the panel', ends);
  assert.ok(ended.startsWith('Completed'), `the run's end: ${ended}`);
  await waitForLines("the buffer holds the run's edit", windowUri('app.txt'), ['ALPHA', 'beta', '']);
  assert.strictEqual(disk('notes.txt'), 'one\nTWO\n', 'the closed notes.txt was not edited on disk');

  const servers = carriedServers();
  assert.ok(servers.size >= 1, 'no tandem lsp runs from the extension folder');
  for (const [pid, argv0] of servers) {
    assert.strictEqual(fs.realpathSync(argv0), fs.realpathSync(binary), `pid ${pid} runs ${argv0}`);
    const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const serverPath = (environ.find((v) => v.startsWith('PATH=')) ?? 'PATH=').slice(5);
    for (const dir of serverPath.split(':').filter(Boolean)) {
      for (const name of NOT_ON_PATH) assert.ok(!fs.existsSync(path.join(dir, name)), `the server's PATH has ${name} in ${dir}`);
    }
  }
  const toasts = await notifications(page);
  assert.ok(!toasts.some((t) => /is version|did not say its version|not found|carries/.test(t)), `a server warning showed: ${JSON.stringify(toasts)}`);
  await shot('carried-server-run');
  log(`check: the run edited app.txt's buffer and notes.txt on disk, served by ${binary} (pid ${[...servers.keys()].join(', ')}), with no version warning`);
  await passed('the linux-x64 .vsix installed from the file runs its carried server with no tandem, cargo or serverPath');
}

run(main);
