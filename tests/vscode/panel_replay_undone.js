// End to end (issue 53): a run undone from another process reads as undone
// when the Tandem panel replays its thread, in code-server with edits
// applied directly (tandem.permissionMode acceptEdits):
//   1. two runs typed in the panel, each editing one closed file on disk
//      (first.txt, then second.txt): each run's edits line says "applied"
//      and offers Undo;
//   2. `tandem undo` in another process (as in a terminal) takes back the
//      last run: second.txt is back on disk;
//   3. the window reloaded: the panel replays the thread from the server;
//      the first run still reads "applied" with Undo, the second reads
//      "undone" on its edits line (each entry, and a line saying the run
//      was undone since) and on its edit's card, and offers Redo;
//   4. Redo there: second.txt holds the run's text again, and the line
//      and the card read "applied" again with Undo.
// Screenshots of 3 and 4 go to E2E_DIR/screenshots.
'use strict';

const { assert, model, log, open, run, passed, palette, quickOpen, until, disk, dirs, serverEnv, TANDEM_BIN, STEP_MS, panelFrame, inPanel, clickInPanel, typeInPanel, endCount, nextEnd, shot } = require('./harness');
const { spawnSync } = require('child_process');

const FIRST = 'one\ntwo\n';
const SECOND = 'red\ngreen\n';

/** Each run's edits line as the user reads it: its entries, its undone line, its button; and the edit cards' statuses. */
function panelRuns(panel) {
  return panel.evaluate(() => ({
    lines: [...document.querySelectorAll('#log .edits')].map((line) => ({
      entries: [...line.querySelectorAll('.edit')].map((e) => e.textContent.trim()),
      undone: line.querySelector('.undone-since')?.textContent ?? null,
      button: line.querySelector('button.undo')?.textContent ?? null,
    })),
    cards: [...document.querySelectorAll('#log .card')]
      .filter((c) => (c.querySelector('.name')?.textContent ?? '') === 'edit_file')
      .map((c) => c.querySelector('.status')?.textContent ?? ''),
  }));
}

/** A run typed in the panel that edits `file`'s `from` to `to` and completes. */
async function editRun(page, panel, file, from, to) {
  model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: file } } });
  model.queue({ text: 'Editing.' }, { tool: { name: 'edit_file', input: { file_path: file, old_string: from, new_string: to } } });
  model.queue({ text: 'Done.' });
  const ends = await endCount(panel);
  await typeInPanel(panel, `Shout ${from} in ${file}`);
  await page.keyboard.press('Enter');
  const ended = await nextEnd(panel, `the run on ${file} ends in the panel`, ends);
  assert.ok(ended.startsWith('Completed'), `the run's end: ${ended}`);
  await inPanel(panel, `the run on ${file} lists its edit`, (n) => document.querySelectorAll('#log .edits').length > n, ends);
}

async function main() {
  const page = await open({ files: { 'first.txt': FIRST, 'second.txt': SECOND, 'readme.txt': 'runs edit the other files\n' }, settings: { 'tandem.permissionMode': 'acceptEdits' } });

  // 1. Two runs, each editing a closed file on disk (a file is opened
  // first: that starts the extension).
  await quickOpen('readme.txt');
  await palette('Tandem: Open Panel');
  let panel = await panelFrame('the panel opens');
  await editRun(page, panel, 'first.txt', 'two', 'TWO');
  await editRun(page, panel, 'second.txt', 'green', 'GREEN');
  assert.strictEqual(disk('first.txt'), 'one\nTWO\n');
  assert.strictEqual(disk('second.txt'), 'red\nGREEN\n');
  const live = await panelRuns(panel);
  const applied = {
    lines: [
      { entries: ['first.txt applied'], undone: null, button: 'Undo' },
      { entries: ['second.txt applied'], undone: null, button: 'Undo' },
    ],
    cards: ['✓ applied', '✓ applied'],
  };
  assert.deepStrictEqual(live, applied, 'the two runs in the panel');
  log(`check: two runs, each applied with Undo: ${JSON.stringify(live)}`);

  // 2. `tandem undo` in another process: the last run.
  const undo = spawnSync(TANDEM_BIN, ['undo'], { cwd: dirs.workspace, env: serverEnv(), encoding: 'utf8', timeout: STEP_MS });
  assert.strictEqual(undo.status, 0, `tandem undo: ${undo.stdout}${undo.stderr}`);
  assert.strictEqual(disk('second.txt'), SECOND, `tandem undo did not restore second.txt: ${undo.stdout}`);
  log(`tandem undo said: ${undo.stdout.trim()}`);

  // 3. The window reloaded: the panel replays the thread.
  await page.reload({ timeout: STEP_MS });
  await until('the workbench loads again', () => !!document.querySelector('.monaco-workbench .part.editor'));
  panel = await panelFrame('the panel after the window reload');
  await inPanel(panel, 'the panel replays both runs', () => document.querySelectorAll('#log .edits').length === 2);
  const replayed = await panelRuns(panel);
  log(`after the reload: ${JSON.stringify(replayed)}`);
  assert.deepStrictEqual(replayed, {
    lines: [
      { entries: ['first.txt applied'], undone: null, button: 'Undo' },
      { entries: ['second.txt undone'], undone: '↶ undone since (Redo puts it back)', button: 'Redo' },
    ],
    cards: ['✓ applied', '↶ undone'],
  }, 'the replayed runs: the second undone since');
  await shot('replay-undone-from-another-process');
  log('check: the replayed run undone from another process reads "undone" (entry, line, card) and offers Redo; the other reads "applied"');

  // 4. Redo in the panel: applied again.
  await clickInPanel(panel, '#log .edits button.undo');
  await inPanel(panel, 'the run offers Undo again after its redo', () => [...document.querySelectorAll('#log .edits button.undo')].at(-1)?.textContent === 'Undo' && !document.querySelector('#log .edits .undone-since'));
  const deadline = Date.now() + STEP_MS;
  while (disk('second.txt') !== 'red\nGREEN\n' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.strictEqual(disk('second.txt'), 'red\nGREEN\n', 'the redo did not put second.txt back');
  assert.deepStrictEqual(await panelRuns(panel), applied, 'the runs after the redo');
  await shot('replay-redone');
  log('check: Redo in the replayed panel put the run back; it reads "applied" with Undo again');
  await passed('a run undone from another process reads as undone in the replayed panel');
}

run(main);
