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
//   4. Redo: both files hold the run's text again, and the button says Undo;
//   5. a reply with a rust block (highlighted; its Copy button puts the code
//      on the clipboard), a table and a diff block (its lines coloured).
// Before the run, the panel says which model endpoint runs use, and why.
// Screenshots of 1, 2, 4 and 5 go to E2E_DIR/screenshots.
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

  // 5. A reply with a code block, a table and a diff: highlighted code with
  // a Copy button that puts the code (not its markup) on the clipboard, a
  // table, the diff's lines coloured.
  const CODE = 'fn shout(word: &str) -> String {\n    word.to_uppercase() // loud\n}';
  model.queue({
    text: [
      'Here is the helper:', '', '```rust', CODE, '```', '',
      '| File | Change |', '|:-----|-------:|', '| `app.txt` | **1** line |', '| `notes.txt` | 1 line |', '',
      '```diff', '-alpha', '+ALPHA', ' beta', '```',
    ].join('\n'),
  });
  const before = await endCount(panel);
  await typeInPanel(panel, 'Show me the helper and a summary');
  await page.keyboard.press('Enter');
  await nextEnd(panel, 'the reply ends in the panel', before);
  const reply = await panel.evaluate(() => {
    const last = [...document.querySelectorAll('#log .msg.assistant')].at(-1);
    const code = last?.querySelector('.code pre[data-lang="rust"]');
    return {
      keywords: [...(code?.querySelectorAll('.hljs-keyword') ?? [])].map((k) => k.textContent),
      comment: code?.querySelector('.hljs-comment')?.textContent ?? null,
      copy: !!last?.querySelector('.code button.copy'),
      table: [...(last?.querySelectorAll('table tr') ?? [])].map((r) => [...r.children].map((c) => c.textContent)),
      added: [...(last?.querySelectorAll('.hljs-addition') ?? [])].map((a) => a.textContent.trim()),
      removed: [...(last?.querySelectorAll('.hljs-deletion') ?? [])].map((a) => a.textContent.trim()),
    };
  });
  assert.deepStrictEqual(reply.keywords, ['fn'], JSON.stringify(reply));
  assert.strictEqual(reply.comment, '// loud', JSON.stringify(reply));
  assert.ok(reply.copy, 'the code block has no Copy button');
  assert.deepStrictEqual(reply.table, [['File', 'Change'], ['app.txt', '1 line'], ['notes.txt', '1 line']], JSON.stringify(reply));
  assert.deepStrictEqual([reply.removed, reply.added], [['-alpha'], ['+ALPHA']], JSON.stringify(reply));
  await shot('panel-reply-with-code-table-and-diff');
  await page.browserContext().overridePermissions(new URL(page.url()).origin, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
  await clickInPanel(panel, '#log .code:has(pre[data-lang="rust"]) button.copy');
  await inPanel(panel, 'the button says Copied', () => [...document.querySelectorAll('#log .code button.copy')].some((b) => b.textContent === 'Copied'));
  let copied = '';
  const deadline = Date.now() + 10_000;
  while (copied !== CODE && Date.now() < deadline) {
    copied = await page.evaluate(() => navigator.clipboard.readText()).catch((e) => `(${e.message})`);
    if (copied !== CODE) await new Promise((r) => setTimeout(r, 100));
  }
  assert.strictEqual(copied, CODE, 'the clipboard after Copy');
  log('check: highlighted code with Copy (the clipboard holds the code), a table, a coloured diff');
  await passed('Undo and Redo of a run in the Tandem panel, on a buffer and on disk');
}

run(main);
