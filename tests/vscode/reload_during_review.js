// End to end (issue 28, "a VS Code window reload during a partial review"),
// in code-server in the default permission mode: a rename in two places
// waits in the Refactor Preview with one of its two hunks ticked, and the
// window reloads before Apply. Nothing of the edit lands (the buffer and
// the disk hold what they held), and the panel after the reload shows the
// thread's past with the edit's card and the run's end line saying what
// really happened: the edit was not applied — never "written", "applied"
// or "failed" — and the run did not complete. Screenshot
// reload-during-review.
'use strict';

const { assert, model, log, open, run, passed, quickOpen, until, shot, windowUri, waitForLines, editorLines, disk, STEP_MS, panelFrame, inPanel, typeInPanel, palette } = require('./harness');

const APP = 'def greet(name):\n    return "hi " + name\n\n\nprint(greet("ann"))\n';

/** The panel's view of the run: the edit card's status, the end line's entries and the run's end. */
function panelStatuses(panel) {
  return panel.evaluate(() => {
    const cards = [...document.querySelectorAll('#log .card')].filter((c) => (c.querySelector('.name')?.textContent ?? '') === 'edit_file');
    const line = [...document.querySelectorAll('#log .edits')].at(-1);
    const ends = [...document.querySelectorAll('#log .end')].map((e) => e.textContent.trim());
    return {
      cards: cards.map((c) => c.querySelector('.status')?.textContent ?? ''),
      end: line ? [...line.querySelectorAll('.edit')].map((e) => e.textContent.trim()) : [],
      ends,
    };
  });
}

async function main() {
  const page = await open({ files: { 'app.py': APP } });
  const appUri = windowUri('app.py');
  await quickOpen('app.py');
  model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: 'app.py' } } });
  model.queue({ text: 'Renaming.' }, { tool: { name: 'edit_file', input: { file_path: 'app.py', old_string: 'greet(', new_string: 'welcome(', replace_all: true } } });
  model.queue({ text: 'Done.' });

  await palette('Tandem: Open Panel');
  let panel = await panelFrame('the panel opens');
  await typeInPanel(panel, 'Rename greet to welcome');
  await page.keyboard.press('Enter');

  await until('the rename waits in the Refactor Preview as two hunks', () => {
    const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
    return !!list && list.checkVisibility() && list.querySelectorAll('.monaco-list-row[aria-level="2"]').length === 2;
  });
  await page.evaluate(() => {
    // The preview opens with both ticked: the second is unticked.
    const rows = [...document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="2"]')];
    rows.forEach((row, i) => {
      const box = row.querySelector('.edit-checkbox');
      if (box && (box.getAttribute('aria-checked') === 'true') !== (i === 0)) box.click();
    });
  });
  await until('the first hunk is ticked', () => {
    const rows = [...document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="2"]')];
    return rows.length === 2 && rows.map((r) => r.querySelector('.edit-checkbox')?.getAttribute('aria-checked') === 'true').join() === 'true,false';
  });

  // The window reloads with the review open, one hunk ticked.
  await page.reload({ timeout: STEP_MS });
  await until('the workbench loads again', () => !!document.querySelector('.monaco-workbench .part.editor'));
  panel = await panelFrame('the panel after the window reload');
  await inPanel(panel, 'the panel shows the thread\'s past', () => document.getElementById('log').textContent.includes('Rename greet to welcome'));
  // The reloaded window restores the open editors only when it saved its
  // layout before the reload, which it does lazily (seen in CI: no editor
  // came back). What this test judges is the document's text, so open it.
  if ((await editorLines(appUri)) === null) {
    log('the reloaded window did not restore app.py\'s tab: opening it');
    await quickOpen('app.py');
  }
  await waitForLines('the buffer holds what it held', appUri, APP.split('\n'));
  assert.strictEqual(disk('app.py'), APP, 'nothing of the edit reached the disk');
  // The card and the end line come from the thread, where the window's
  // previous server wrote what became of the edit as the reload stopped it.
  await inPanel(panel, 'the past shows the run\'s end and its edits line', () => document.querySelectorAll('#log .edits .edit').length > 0);
  const reloaded = await panelStatuses(panel);
  log(`after the reload: ${JSON.stringify(reloaded)}`);
  await shot('reload-during-review');
  assert.strictEqual(reloaded.cards.length, 1, `one edit card: ${JSON.stringify(reloaded)}`);
  assert.match(reloaded.cards[0], /not applied/, `the card says the edit was not applied: ${JSON.stringify(reloaded)}`);
  assert.deepStrictEqual(reloaded.end, ['app.py not applied'], `the end line: ${JSON.stringify(reloaded)}`);
  log('check: after the reload the card and the end line say the edit was not applied; the buffer and the disk are as before');
  await passed('a window reload during a partial review: nothing landed, and the panel says so');
}

run(main);
