// End to end: the Undo (then Redo) on a finished run in the Tandem panel,
// in code-server with edits applied directly (tandem.permissionMode
// acceptEdits), as a user clicks it:
//   1. a run typed in the panel edits the open app.txt (its buffer, which
//      the extension then saves, as it had no unsaved typing) and the
//      closed notes.txt (on disk); its edits line offers Undo, and no
//      notification comes and the Output panel stays closed (the panel
//      shows the run);
//   2. Undo there: app.txt's buffer and notes.txt on disk hold their text
//      from before the run (a restored buffer is left unsaved, as the
//      agent's edits are), a note in the panel lists each file as
//      restored, the button says Redo, and no notification comes;
//   3. the panel's webview reloaded: the run still offers Redo;
//   4. Redo: both files hold the run's text again, and the button says Undo.
// Before the run, the panel says which model endpoint runs use, and why.
// Screenshots of 1, 2 and 4 go to E2E_DIR/screenshots.
'use strict';

const { assert, model, log, open, run, passed, palette, quickOpen, waitForLines, windowUri, disk, notifications, panelFrame, inPanel, clickInPanel, typeInPanel, endCount, nextEnd, shot } = require('./harness');

const APP = 'alpha\nbeta\n';
const NOTES = 'one\ntwo\n';

/** The run's Undo/Redo button once it says `label` and can be clicked. */
function undoButton(panel, what, label) {
  return inPanel(panel, what, (l) => {
    const button = [...document.querySelectorAll('#log .edits button.undo')].at(-1);
    return button && !button.disabled && button.textContent === l ? button.textContent : null;
  }, label);
}

/** The panel's notes (its own lines: what an undo did). */
function notes(panel) {
  return panel.evaluate(() => [...document.querySelectorAll('#log .note')].map((n) => n.textContent));
}

async function noUndoToast(page) {
  const toasts = await notifications(page);
  assert.ok(!toasts.some((t) => /Tandem: (undid|redid|run)/.test(t)), `the panel's undo also showed a notification: ${JSON.stringify(toasts)}`);
}

async function main() {
  const page = await open({ files: { 'app.txt': APP, 'notes.txt': NOTES }, settings: { 'tandem.permissionMode': 'acceptEdits' } });
  const appUri = windowUri('app.txt');

  // 1. A run from the panel edits the open app.txt and the closed notes.txt.
  await quickOpen('app.txt');
  await palette('Tandem: Open Panel');
  let panel = await panelFrame('the panel opens');
  // Where prompts go, before the first one (tandem.provider): the server's
  // one decision, here the provider the harness names and its loopback.
  const shown = await inPanel(panel, 'the panel says which model runs use', () => {
    const text = document.getElementById('model')?.textContent ?? '';
    return text.startsWith('Model: ') ? text : null;
  });
  assert.match(shown, /^Model: anthropic \S+ at http:\/\/127\.0\.0\.1:\d+ \(provider \(TANDEM_PROVIDER\) is anthropic\)$/, shown);
  log(`check: the panel shows the model endpoint: ${shown}`);
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
  await undoButton(panel, 'the run offers Undo', 'Undo');
  await waitForLines('the buffer holds the run\'s edit', appUri, ['ALPHA', 'beta', '']);
  assert.strictEqual(disk('notes.txt'), 'one\nTWO\n', 'the closed notes.txt was not edited on disk');
  await noUndoToast(page);
  // The panel shows the run: the Output panel (the transcript channel,
  // the server's log) stays closed.
  const outputs = await page.evaluate(() => [...document.querySelectorAll('.monaco-editor[data-uri^="output:"]')].filter((e) => e.checkVisibility()).map((e) => e.getAttribute('data-uri')));
  assert.deepStrictEqual(outputs, [], `an output channel opened during the run: ${JSON.stringify(outputs)}`);
  await shot('panel-run-with-undo');
  log('check: the run edited the buffer of app.txt and notes.txt on disk; its edits line offers Undo; no output channel opened');

  // 2. Undo in the panel.
  await clickInPanel(panel, '#log .edits button.undo');
  await undoButton(panel, 'the run offers Redo after its undo', 'Redo');
  await waitForLines('the buffer is back to before the run', appUri, ['alpha', 'beta', '']);
  assert.strictEqual(disk('notes.txt'), NOTES, 'notes.txt is not back on disk');
  const undone = (await notes(panel)).at(-1) ?? '';
  assert.match(undone, /^Tandem: undid run-\d+ \(2 files: 2 restored\)/, `the panel's note: ${undone}`);
  assert.ok(undone.includes('app.txt: restored') && undone.includes('notes.txt: restored'), undone);
  await noUndoToast(page);
  await shot('panel-undone');
  log(`check: Undo in the panel restored the buffer and the disk; the panel says "${undone}"`);

  // 3. The webview reloaded: the run still offers Redo.
  await palette('Developer: Reload Webviews');
  panel = await panelFrame('the panel comes back after the webview reload', panel);
  await undoButton(panel, 'the reloaded panel still offers Redo', 'Redo');
  log('check: after a webview reload the undone run offers Redo');

  // 4. Redo.
  await clickInPanel(panel, '#log .edits button.undo');
  await undoButton(panel, 'the run offers Undo again after its redo', 'Undo');
  await waitForLines('the buffer holds the run\'s edit again', appUri, ['ALPHA', 'beta', '']);
  assert.strictEqual(disk('notes.txt'), 'one\nTWO\n', 'notes.txt does not hold the run\'s edit again');
  const redone = (await notes(panel)).at(-1) ?? '';
  assert.match(redone, /^Tandem: redid run-\d+ \(2 files: 2 restored\)/, `the panel's note: ${redone}`);
  await noUndoToast(page);
  await shot('panel-redone');
  log(`check: Redo in the panel put both edits back; "${redone}"`);
  await passed('Undo and Redo of a run in the Tandem panel, on a buffer and on disk');
}

run(main);
