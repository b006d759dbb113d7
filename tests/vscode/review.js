// End to end: the review of an edit in VS Code's Refactor Preview, as a new
// user first meets it (issue 53), in code-server in the default permission
// mode. The model's edit_file gives the whole of app.py as its old_string
// and changes its first and last lines:
//   1. the preview lists two entries under app.py, one per hunk, each with
//      its own label naming the line it changes and what it does there;
//   2. the preview opens with both ticked, so its first view (the diff that
//      opens on the first entry) shows the proposed text, not the unchanged
//      file;
//   3. after Apply, app.py's tab is still open with the edit in it;
//   4. what the model is told about saved or unsaved is what the disk
//      holds: the file was clean, so the edit is saved and the result says
//      nothing of an unsaved change.
// Screenshots of the preview and of the window after Apply go to
// E2E_DIR/screenshots.
'use strict';

const { assert, model, log, open, run, passed, until, waitForToast, waitForLines, clickPreviewButton, RUN_ENDED, shot, windowUri, disk, toolResult, askAgent, previewHunks } = require('./harness');

const APP = 'def greet(name):\n    return "hi " + name\n\n\nprint(greet("ann"))\n';
const NEW = 'def welcome(name):\n    return "hi " + name\n\n\nprint(welcome("ann"))\n';

/** The lines of the modified side of the Refactor Preview's diff, once it shows `line`. */
function previewShows(what, line) {
  return until(
    what,
    (l) => {
      const sides = [...document.querySelectorAll('.editor-instance .monaco-diff-editor .editor.modified')].filter((e) => e.checkVisibility());
      for (const side of sides) {
        const lines = [...side.querySelectorAll('.view-lines .view-line')].map((v) => v.textContent.replace(/\u00a0/g, ' '));
        if (lines.includes(l)) return lines;
      }
      return false;
    },
    line,
  );
}

/** The open editor tabs' labels. */
function tabs(page) {
  return page.evaluate(() => [...document.querySelectorAll('.tabs-container .tab')].map((t) => t.getAttribute('aria-label') ?? ''));
}

async function main() {
  const page = await open({ files: { 'app.py': APP } });
  const appUri = windowUri('app.py');
  // Opened as a user opens a file to look at it: a single click in the
  // Explorer, which gives it the preview tab (the one the Refactor
  // Preview's diff takes when the user clicks an entry).
  await until('the Explorer lists app.py', () =>
    [...document.querySelectorAll('.explorer-folders-view .monaco-list-row')].some((r) => (r.getAttribute('aria-label') ?? '').startsWith('app.py')),
  );
  let clicked = false;
  for (const r of await page.$$('.explorer-folders-view .monaco-list-row')) {
    if ((await r.evaluate((e) => e.getAttribute('aria-label') ?? '')).startsWith('app.py')) {
      await r.click();
      clicked = true;
      break;
    }
  }
  assert.ok(clicked, 'app.py is not in the Explorer');
  await waitForLines('app.py is open', appUri, APP.split('\n'));
  const opened = await tabs(page);
  log(`tabs before the run: ${JSON.stringify(opened)}`);
  assert.ok(opened.includes('app.py, preview'), `app.py is not in the preview tab: ${JSON.stringify(opened)}`);

  model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: 'app.py' } } });
  model.queue({ text: 'Renaming.' }, { tool: { name: 'edit_file', input: { file_path: 'app.py', old_string: APP, new_string: NEW } } });
  model.queue({ text: 'Done.' });
  const before = model.requests.length;
  await askAgent('Rename greet to welcome');

  // 1. Two entries, each labelled with what it changes.
  const hunks = await previewHunks('the edit waits in the Refactor Preview as two entries', 'app.py', 2);
  log(`the preview's entries: ${JSON.stringify(hunks)}`);
  assert.match(hunks[0].title, /line 1\b/, `the first entry's label names no line 1: ${hunks[0].title}`);
  assert.match(hunks[0].title, /greet/, `the first entry's label says nothing of what it changes: ${hunks[0].title}`);
  assert.match(hunks[1].title, /line 5\b/, `the second entry's label names no line 5: ${hunks[1].title}`);
  assert.notStrictEqual(hunks[0].title, hunks[1].title, 'the two entries have one label');

  // 2. Ticked, and the first view is the change.
  assert.ok(hunks.every((h) => h.checked), `the preview opened with entries unticked: ${JSON.stringify(hunks)}`);
  // The user clicks the first entry: the preview's diff opens on it.
  const first = await page.$('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="2"]');
  assert.ok(first, 'the preview has no entry to click');
  // On its text, right of its box.
  await first.click({ offset: { x: 150, y: 10 } });
  const shown = await previewShows('the Refactor Preview shows the proposed text', 'def welcome(name):');
  log(`the preview's proposed side: ${JSON.stringify(shown)}`);
  await shot('review-preview');
  assert.strictEqual(disk('app.py'), APP, 'the file was written before its review');
  log(`check: two entries, each labelled, ticked; the first view is the change; tabs: ${JSON.stringify(await tabs(page))}`);

  // 3. Apply: the tab stays.
  await clickPreviewButton('Apply');
  const ended = await waitForToast('the run ends', RUN_ENDED);
  log(`the run: "${ended}"`);
  assert.ok(ended.includes('1 edit: 1 applied'), `the run's end: ${ended}`);
  await waitForLines('app.py is open with the edit after Apply', appUri, NEW.split('\n'));
  const after = await tabs(page);
  log(`tabs after Apply: ${JSON.stringify(after)}`);
  assert.ok(after.some((t) => t.startsWith('app.py')), `app.py's tab is gone after Apply: ${JSON.stringify(after)}`);
  await shot('review-applied');

  // 4. Saved, and told so.
  const told = toolResult(await model.request(before + 3), `toolu_mock_${before + 2}_1`);
  log(`the model was told:\n${told}`);
  const onDisk = disk('app.py');
  if (onDisk === NEW) {
    assert.doesNotMatch(told, /unsaved/, 'the model is told the change is unsaved while the disk holds it');
  } else {
    assert.strictEqual(onDisk, APP, 'the disk holds neither text');
    assert.match(told, /unsaved/, 'the model is not told the change is unsaved while the disk does not hold it');
  }
  assert.strictEqual(onDisk, NEW, 'a clean buffer\'s reviewed edit was not saved');
  log('check: the tab stays after Apply; the disk holds the edit and the model is told nothing of unsaved');
  await passed('two labelled entries ticked, the change shown first, the tab kept after Apply, saved and told so');
}

run(main);
