// End to end: one status per edit in the Tandem panel (issue 28), in
// code-server in the default permission mode:
//   1. a rename in two places asked in the panel, one of its two hunks
//      ticked in the Refactor Preview, then a shell command approved in
//      the panel (Tandem saves the edited buffer before it): the edit's card
//      says "partly applied", the run's end line lists app.py once, partly
//      applied (the save before the command is no second edit), and the
//      buffer holds exactly the ticked hunk;
//   2. a window reload: the panel shows the thread's past with the same
//      card status, end line, usage and Undo button (they come from the
//      thread and its checkpoint, not from the window's memory), and the
//      whole log the same: its text, and its links (a file named in the
//      model's text, a URL, the edited file on the card) to the same
//      places; one Tandem item in the status bar, before and after (no
//      background task runs);
//   3. that Undo, pressed after the reload, takes the run back: its
//      restoring edit is reviewed in the Refactor Preview, and the buffer
//      is the text before the run.
// Screenshots of both go to E2E_DIR/screenshots (partial-after-run,
// partial-after-reload).
'use strict';

const { assert, model, log, open, run, passed, palette, quickOpen, until, waitForLines, clickPreviewButton, shot, windowUri, STEP_MS, panelFrame, inPanel, clickInPanel, typeInPanel, endCount, nextEnd } = require('./harness');

const APP = 'def greet(name):\n    return "hi " + name\n\n\nprint(greet("ann"))\n';

/** The panel's view of the run: the edit card's status, the end line's entries. */
function panelStatuses(panel) {
  return panel.evaluate(() => {
    const cards = [...document.querySelectorAll('#log .card')].filter((c) => (c.querySelector('.name')?.textContent ?? '') === 'edit_file');
    const line = [...document.querySelectorAll('#log .edits')].at(-1);
    const runEnd = [...document.querySelectorAll('#log .run-end')].at(-1);
    return {
      cards: cards.map((c) => c.querySelector('.status')?.textContent ?? ''),
      end: line ? [...line.querySelectorAll('.edit')].map((e) => e.textContent.trim()) : [],
      undo: line?.querySelector('button.undo')?.textContent ?? null,
      usage: runEnd?.querySelector('.usage')?.textContent ?? null,
    };
  });
}

/** The panel's whole log as the user reads it: its text, and where each link goes. */
function panelLog(panel) {
  return panel.evaluate(() => ({
    text: document.getElementById('log').innerText.replace(/[ \t]+\n/g, '\n').trim(),
    links: [...document.querySelectorAll('#log a')].map((a) => ({ text: a.textContent, path: a.dataset.path ?? null, url: a.dataset.url ?? null })),
  }));
}

/** The status bar items of the extension (`tandem.tandem`) on screen, by id and text. */
function tandemStatusItems(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.statusbar-item')]
      .filter((i) => (i.id ?? '').toLowerCase().startsWith('tandem.tandem.') && i.checkVisibility())
      .map((i) => `${i.id}: ${i.innerText.replace(/\s+/g, ' ').trim()}`),
  );
}

async function main() {
  const page = await open({ files: { 'app.py': APP } });
  const appUri = windowUri('app.py');
  await quickOpen('app.py');
  model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: 'app.py' } } });
  model.queue({ text: 'Renaming `greet` in `app.py`, as [the rename guide](https://example.com/rename) says.' }, { tool: { name: 'edit_file', input: { file_path: 'app.py', old_string: 'greet(', new_string: 'welcome(', replace_all: true } } });
  model.queue({ text: 'Running it.' }, { tool: { name: 'run_shell', input: { command: 'python3 app.py; cat app.py' } } });
  model.queue({ text: 'Done.' });

  await palette('Tandem: Open Panel');
  let panel = await panelFrame('the panel opens');
  const ends = await endCount(panel);
  await typeInPanel(panel, 'Rename greet to welcome and run it');
  await page.keyboard.press('Enter');

  // 1. One of the two hunks ticked, then the command approved.
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
  await clickPreviewButton('Apply');
  await inPanel(panel, 'the command is asked in the panel', () => !!document.querySelector('#asks button[data-action="Allow once"]'));
  await clickInPanel(panel, '#asks button[data-action="Allow once"]');
  const ended = await nextEnd(panel, 'the run ends in the panel', ends);
  assert.ok(ended.startsWith('Completed'), `the run's end: ${ended}`);
  await waitForLines('the buffer holds the ticked hunk only', appUri, ['def welcome(name):', '    return "hi " + name', '', '', 'print(greet("ann"))', '']);
  const after = await inPanel(panel, 'the end line lists the edit', () => [...document.querySelectorAll('#log .edits .edit')].length > 0);
  assert.ok(after);
  const run = await panelStatuses(panel);
  log(`after the run: ${JSON.stringify(run)}`);
  assert.deepStrictEqual({ ...run, usage: undefined }, { cards: ['◐ partly applied'], end: ['app.py partly applied'], undo: 'Undo', usage: undefined }, 'the card and the end line after the run');
  assert.ok(/ in · .* out/.test(run.usage ?? ''), `the run's usage on its end line: ${run.usage}`);
  const logAfterRun = await panelLog(panel);
  assert.ok(logAfterRun.links.some((l) => l.path === 'app.py') && logAfterRun.links.some((l) => l.url === 'https://example.com/rename'), `the log's links: ${JSON.stringify(logAfterRun.links)}`);
  // tandem.transcript.reveal is off: no output channel opened for the run.
  assert.ok(!(await page.evaluate(() => [...document.querySelectorAll('.monaco-editor[data-uri^="output:"]')].some((e) => e.checkVisibility()))), 'an output channel opened for the run');
  // The status bar goes idle when `tandem.ask` answers, which comes after
  // the run's end event the panel shows (the answer waits for the run's
  // late edits to settle): wait for it rather than read it mid-way.
  await until('the status bar says the run is over', () =>
    [...document.querySelectorAll('.statusbar-item')].some((i) => (i.id ?? '').toLowerCase().startsWith('tandem.tandem.') && i.checkVisibility() && !/running/.test(i.innerText)));
  const items = await tandemStatusItems(page);
  assert.strictEqual(items.length, 1, `Tandem's status bar items with no background task: ${JSON.stringify(items)}`);
  await shot('partial-after-run');
  log('check: the partly applied edit\'s card and end line say "partly applied", app.py listed once');

  // 2. A window reload: the same, from the thread.
  await page.reload({ timeout: STEP_MS });
  await until('the workbench loads again', () => !!document.querySelector('.monaco-workbench .part.editor'));
  panel = await panelFrame('the panel after the window reload');
  await inPanel(panel, 'the panel shows the thread\'s past with its end line', () => document.getElementById('log').textContent.includes('Rename greet to welcome') && document.querySelectorAll('#log .edits .edit').length > 0);
  const reloaded = await panelStatuses(panel);
  log(`after the reload: ${JSON.stringify(reloaded)}`);
  assert.deepStrictEqual(reloaded, run, 'the card and the end line after a window reload');
  const logAfterReload = await panelLog(panel);
  assert.deepStrictEqual(logAfterReload, logAfterRun, 'the whole log (text and links) after a window reload');
  assert.deepStrictEqual(await tandemStatusItems(page), items, "Tandem's status bar items after the reload");
  await shot('partial-after-reload');
  log(`check: after a window reload the card, the end line, the usage, the Undo button and the whole log (${logAfterRun.text.split('\n').length} lines, ${logAfterRun.links.length} links) are as before; one status bar item (${items[0]})`);

  // 3. Undo after the reload: the restoring edit is reviewed (every hunk
  // ticked), and the buffer is as before the run. app.py is opened again
  // first: an open document's undo is reviewed, a closed file's is written
  // as the user asked, and VS Code does not always bring the editor back
  // after a reload (seen in CI under load: no editor, the undo written).
  await quickOpen('app.py');
  await waitForLines('app.py is open after the reload with the ticked hunk only', appUri, ['def welcome(name):', '    return "hi " + name', '', '', 'print(greet("ann"))', '']);
  await clickInPanel(panel, '#log .edits button.undo');
  await until('the undo waits in the Refactor Preview', () => {
    const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
    return !!list && list.checkVisibility() && list.querySelectorAll('.monaco-list-row[aria-level="2"]').length > 0;
  });
  await page.evaluate(() => {
    for (const row of document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="2"]')) {
      const box = row.querySelector('.edit-checkbox');
      if (box && box.getAttribute('aria-checked') !== 'true') box.click();
    }
  });
  await until('every hunk of the undo is ticked', () =>
    [...document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="2"] .edit-checkbox')].every((b) => b.getAttribute('aria-checked') === 'true'));
  await clickPreviewButton('Apply');
  await waitForLines('the undo restored the text before the run', appUri, APP.split('\n'));
  await inPanel(panel, 'the run\'s button now offers Redo', () => [...document.querySelectorAll('#log .edits button.undo')].at(-1)?.textContent === 'Redo');
  await shot('undo-after-reload');
  log('check: the Undo offered after the reload took the run back');
  await passed('a partly applied edit reported once, the same after a window reload, and undone from the reloaded panel');
}

run(main);
