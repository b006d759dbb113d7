// End to end: reviews that tell the truth, and Undo Last Run (issue 19),
// in code-server in the default permission mode (every edit reviewed in
// the Refactor Preview):
//   1. one of an edit's two hunks ticked in the Refactor Preview (a rename
//      of greet to welcome, at its definition and its call): the model's
//      tool result names the hunk that landed and the one declined, the
//      buffer holds exactly the ticked hunk, and the end notification says
//      the edit was partly applied;
//   2. an edit to a file that is not open is reviewed per hunk in the
//      Refactor Preview like one to an open file: the file opens, each of
//      its two hunks has its own box, and it lands in the editor;
//   3. "Tandem: Undo Last Run" after that run (which edited the closed
//      file and the open app.py) while the user has typed a line elsewhere
//      in app.py: the restoring edit is reviewed, both files get their
//      text from before the run back, the typed line stays, and the
//      notification lists each file as restored.
// Screenshots of 1, 2 and 3 go to E2E_DIR/screenshots.
'use strict';

const { assert, model, log, open, run, passed, palette, quickOpen, until, waitForToast, waitForLines, clearNotifications, clickPreviewButton, RUN_ENDED, shot, windowUri, disk, toolResult, askAgent, previewHunks } = require('./harness');

const APP = 'def greet(name):\n    return "hi " + name\n\n\nprint(greet("ann"))\n';
const LIB = 'alpha\nbeta\ngamma\ndelta\nalpha\n';

/** Tick the hunk rows numbered in `which` (0-based, among all level-2 rows) and only those. */
async function tickHunks(page, which) {
  await page.evaluate((w) => {
    const rows = [...document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="2"]')];
    rows.forEach((row, i) => {
      const box = row.querySelector('.edit-checkbox');
      const checked = box?.getAttribute('aria-checked') === 'true';
      if (box && checked !== w.includes(i)) box.click();
    });
  }, which);
  await until(
    'the ticks are as wanted',
    (w) => {
      const rows = [...document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="2"]')];
      return rows.length > 0 && rows.every((row, i) => (row.querySelector('.edit-checkbox')?.getAttribute('aria-checked') === 'true') === w.includes(i));
    },
    which,
  );
}

/** Tick every file in the Refactor Preview (and so each of its hunks), then Apply. */
async function applyAll(page) {
  await page.evaluate(() => {
    for (const row of document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="1"]')) {
      const box = row.querySelector('.edit-checkbox');
      if (box && box.getAttribute('aria-checked') !== 'true') box.click();
    }
  });
  await until('every edit in the preview is ticked', () => {
    const boxes = [...document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .edit-checkbox')];
    return boxes.length > 0 && boxes.every((b) => b.getAttribute('aria-checked') === 'true');
  });
  await clickPreviewButton('Apply');
}

async function main() {
  const page = await open({ files: { 'app.py': APP, 'lib.txt': LIB } });
  const appUri = windowUri('app.py');
  const libUri = windowUri('lib.txt');

  // 1. One of two hunks ticked.
  await quickOpen('app.py');
  model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: 'app.py' } } });
  model.queue({ text: 'Renaming.' }, { tool: { name: 'edit_file', input: { file_path: 'app.py', old_string: 'greet(', new_string: 'welcome(', replace_all: true } } });
  model.queue({ text: 'Done.' });
  const before = model.requests.length;
  await askAgent('Rename greet to welcome');
  const hunks = await previewHunks('the rename waits in the Refactor Preview as two hunks', 'app.py', 2);
  log(`the preview's hunks: ${JSON.stringify(hunks)}`);
  await tickHunks(page, [0]);
  await shot('partial-ticked');
  await clickPreviewButton('Apply');
  const partial = await waitForToast('the partly applied run ends', RUN_ENDED);
  assert.ok(partial.includes('1 edit: 1 partly applied'), `the notification does not say partly applied: ${partial}`);
  assert.ok(partial.includes('app.py line 1 (partly applied; declined: 5)'), `the notification does not name the hunks: ${partial}`);
  await waitForLines('the buffer holds the ticked hunk only', appUri, ['def welcome(name):', '    return "hi " + name', '', '', 'print(greet("ann"))', '']);
  const told = toolResult(await model.request(before + 3), `toolu_mock_${before + 2}_1`);
  log(`the model was told:\n${told}`);
  assert.match(told, /Partly applied: the user accepted 1 of the 2 hunks of the edit to app\.py/);
  assert.match(told, /Applied 1: now at line 1 of app\.py\./);
  // The declined hunk is what differs within line 5: the names, not the parenthesis they share.
  assert.match(told, /Declined 1 \(at line 5 of app\.py\): kept\n\s+greet\n\s+instead of\n\s+welcome\n/);
  log(`check: one of two hunks ticked: the model is told which landed and which was declined; "${partial}"`);

  await clearNotifications();

  // 2. A closed file's edit is reviewed per hunk; the same run edits the open app.py.
  model.queue(
    { text: 'Reading.' },
    { tool: { name: 'read_file', input: { file_path: 'lib.txt' } } },
    { tool: { name: 'read_file', input: { file_path: 'app.py' } } },
  );
  model.queue({ text: 'Shouting.' }, { tool: { name: 'edit_file', input: { file_path: 'lib.txt', old_string: 'alpha', new_string: 'ALPHA', replace_all: true } } });
  model.queue({ text: 'Greeting.' }, { tool: { name: 'edit_file', input: { file_path: 'app.py', old_string: '"hi "', new_string: '"hello "' } } });
  model.queue({ text: 'Done.' });
  assert.ok(!(await page.$(`.editor-instance .monaco-editor[data-uri="${libUri}"]`)), 'lib.txt is open before the run');
  await askAgent('Shout alpha, greet with hello');
  const libHunks = await previewHunks('the closed file\'s edit waits in the Refactor Preview as two hunks', 'lib.txt', 2);
  // Ticked as it opens, so the preview's diff shows the change (issue 53).
  assert.ok(libHunks.every((h) => h.checked), `hunks unticked as the preview opened: ${JSON.stringify(libHunks)}`);
  assert.strictEqual(disk('lib.txt'), LIB, 'the closed file was written before its review');
  await shot('closed-file-review');
  log(`check: the closed lib.txt is reviewed per hunk in the Refactor Preview (${JSON.stringify(libHunks.map((h) => h.label))})`);
  await applyAll(page);
  await previewHunks('the edit to app.py waits in the Refactor Preview', 'app.py', 1);
  await applyAll(page);
  const second = await waitForToast('the second run ends', RUN_ENDED);
  assert.ok(second.includes('2 edits: 2 applied'), `the second run: ${second}`);
  assert.ok(second.includes('Undo'), `the end notification offers no Undo: ${second}`);
  const edited = ['def welcome(name):', '    return "hello " + name', '', '', 'print(greet("ann"))', ''];
  await waitForLines('lib.txt is open in an editor with the edit', libUri, ['ALPHA', 'beta', 'gamma', 'delta', 'ALPHA', '']);
  log(`check: both edits applied; "${second}"`);

  // 3. The user types a line elsewhere in app.py; then Undo Last Run.
  await clearNotifications();
  await quickOpen('app.py');
  await waitForLines('app.py holds the second run\'s edit', appUri, edited);
  await page.keyboard.down('Control');
  await page.keyboard.press('End');
  await page.keyboard.up('Control');
  await page.keyboard.type('# typed by the user');
  const typed = [...edited.slice(0, -1), '# typed by the user'];
  await waitForLines('the typed line shows', appUri, typed);
  await palette('Tandem: Undo Last Run');
  // Each open document's restoring edit is reviewed like any edit.
  for (let i = 0; i < 2; i++) {
    await until('a restoring edit waits in the Refactor Preview', () => {
      const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
      return !!list && list.checkVisibility() && list.querySelectorAll('.monaco-list-row').length > 0;
    });
    await applyAll(page);
    const done = await page
      .waitForFunction(() => [...document.querySelectorAll('.notification-toast')].some((t) => t.innerText.includes('Tandem: undid')), { timeout: 3000, polling: 'mutation' })
      .then(() => true)
      .catch(() => false);
    if (done) break;
  }
  const undone = await waitForToast('the undo says what it did', 'Tandem: undid');
  log(`the undo: "${undone}"`);
  assert.match(undone, /Tandem: undid run-\d+ \(2 files: 2 restored\)/);
  assert.ok(undone.includes('app.py: restored') && undone.includes('lib.txt: restored'), undone);
  await waitForLines('app.py is back to before the run, with the typed line', appUri, ['def welcome(name):', '    return "hi " + name', '', '', 'print(greet("ann"))', '# typed by the user']);
  await shot('undone');
  await quickOpen('lib.txt');
  await waitForLines('lib.txt is back to before the run', libUri, ['alpha', 'beta', 'gamma', 'delta', 'alpha', '']);
  log('check: Undo Last Run restored both files and kept the line the user typed');
  await passed('a partly applied edit reported exactly, a closed file reviewed per hunk, Undo Last Run of a two-file run');
}

run(main);
