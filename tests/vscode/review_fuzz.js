// A typing fuzzer in real VS Code (code-server), for tests/editor_vscode.rs:
// many runs in one window in the default permission mode, each edit waiting
// in the Refactor Preview; while it waits the user clicks into the editor
// and types, adds and deletes lines and characters at random above, inside
// and below the edited lines (now and then everything), then ticks every
// hunk and applies, discards, or applies one of two hunks. VS Code refuses
// an edit whose document changed ("Cannot apply refactoring because … has
// changed in the meantime"); Tandem rebases it and offers it again, or says
// why it cannot. Each trial's text as the user left it, the buffer after
// the run, the end notification and the model's tool result are written to
// E2E_DIR/trials.json, which the Rust test checks
// (tests/common/review_fuzz.rs). FUZZ_SEED and FUZZ_TRIALS set the run.
'use strict';

const { assert, fs, path, E2E_DIR, dirs, model, log, open, run, passed, palette, quickOpen, until, clearNotifications, clickPreviewButton, RUN_ENDED, windowUri, editorLines, toolResult, askAgent } = require('./harness');

let state = Number(process.env.FUZZ_SEED ?? '1') || 1;
/** 1..n, from a seeded generator (the same as the Neovim fuzzer's). */
function random(n) {
  state = (state * 1103515245 + 12345) % 2147483648;
  return (Math.floor(state / 65536) % n) + 1;
}

const ORIGINAL = [];
for (let i = 1; i <= 12; i++) ORIGINAL.push(`line ${String(i).padStart(2, '0')} ${i === 4 || i === 10 ? 'token here' : 'plain text'}`);
const ORIGINAL_TEXT = `${ORIGINAL.join('\n')}\n`;

let page;
let uri;

/** The editor's text, as its lines show it. */
async function text() {
  const lines = await editorLines(uri);
  return (lines ?? []).join('\n');
}

/** Put the cursor at the start of line `index` (0-based) by clicking it. */
async function clickLine(index) {
  const at = await page.evaluate(
    ({ u, i }) => {
      const editor = document.querySelector(`.editor-instance .monaco-editor[data-uri="${u}"]`);
      const lines = [...editor.querySelectorAll('.view-lines .view-line')];
      lines.sort((x, y) => parseFloat(x.style.top) - parseFloat(y.style.top));
      const line = lines[Math.min(i, lines.length - 1)];
      const box = line.getBoundingClientRect();
      const content = editor.querySelector('.view-lines').getBoundingClientRect();
      return { x: content.left + 1, y: box.top + box.height / 2 };
    },
    { u: uri, i: index },
  );
  await page.mouse.click(at.x, at.y);
  await page.keyboard.press('Home');
  await page.keyboard.press('Home');
}

async function keys(...names) {
  for (const name of names) await page.keyboard.press(name);
}

/** Wait until the editor's text is `want` (the user's keystrokes all show). */
function showsText(want, what) {
  return until(
    what,
    ({ u, w }) => {
      const editor = document.querySelector(`.editor-instance .monaco-editor[data-uri="${u}"]`);
      if (!editor) return false;
      const lines = [...editor.querySelectorAll('.view-lines .view-line')];
      lines.sort((x, y) => parseFloat(x.style.top) - parseFloat(y.style.top));
      return lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n') === w;
    },
    { u: uri, w: want },
    10_000,
  );
}

/** One random change by the user, waited for until it shows; says what it was. */
let marker = 0;
async function typeSomething() {
  const before = await text();
  const lines = before.split('\n');
  const count = Math.max(1, lines.length - 1);
  const row = random(count) - 1;
  const line = lines[row] ?? '';
  const roll = random(100);
  marker++;
  const typed = `<u${marker}>`;
  const after = lines.slice();
  let what;
  if (roll <= 3) {
    await clickLine(0);
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await keys('Delete');
    after.splice(0, after.length, '');
    what = 'deleted everything';
  } else if (roll <= 40) {
    const col = random(line.length + 1) - 1;
    await clickLine(row);
    for (let i = 0; i < col; i++) await keys('ArrowRight');
    await page.keyboard.type(typed);
    after[row] = line.slice(0, col) + typed + line.slice(col);
    what = `typed ${typed} on line ${row + 1} col ${col}`;
  } else if (roll <= 65) {
    await clickLine(row);
    await page.keyboard.type(`new ${typed}`);
    await keys('Enter');
    after.splice(row, 0, `new ${typed}`);
    what = `added a line before line ${row + 1}`;
  } else if (roll <= 85 && line.length > 0) {
    const from = random(line.length) - 1;
    const n = Math.min(line.length - from, random(4));
    await clickLine(row);
    for (let i = 0; i < from; i++) await keys('ArrowRight');
    for (let i = 0; i < n; i++) await keys('Delete');
    after[row] = line.slice(0, from) + line.slice(from + n);
    what = `deleted cols ${from}-${from + n} of line ${row + 1}`;
  } else {
    await clickLine(row);
    await page.keyboard.down('Control');
    await page.keyboard.down('Shift');
    await page.keyboard.press('k');
    await page.keyboard.up('Shift');
    await page.keyboard.up('Control');
    after.splice(row, 1);
    if (after.length === 0) after.push('');
    what = `deleted line ${row + 1}`;
  }
  await showsText(after.join('\n'), `the editor shows: ${what}`);
  return what;
}

/** The preview's rows once it shows an edit: `{ files, hunks }` counts. */
function previewOpen(what) {
  return until(what, () => {
    const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
    if (!list || !list.checkVisibility()) return false;
    const rows = [...list.querySelectorAll('.monaco-list-row')];
    const hunks = rows.filter((r) => r.getAttribute('aria-level') === '2').length;
    return hunks > 0 ? { hunks } : false;
  });
}

/** Tick exactly the hunk rows in `which` (0-based), then Apply. */
async function applyHunks(which) {
  await page.evaluate((w) => {
    const rows = [...document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row[aria-level="2"]')];
    rows.forEach((row, i) => {
      const box = row.querySelector('.edit-checkbox');
      if (box && (box.getAttribute('aria-checked') === 'true') !== w.includes(i)) box.click();
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
  await clickPreviewButton('Apply');
}

/** After an answer: the next review, or the run's end notification. */
function nextReviewOrEnd(ended) {
  return until(
    'the edit is offered again or the run ends',
    ({ pattern, seen }) => {
      const toast = [...document.querySelectorAll('.notification-toast')].map((t) => t.innerText.replace(/\s+/g, ' ').trim()).find((t) => new RegExp(pattern).test(t));
      if (toast) return { end: toast };
      // VS Code's modal refusal of an edit whose document changed.
      const dialog = [...document.querySelectorAll('.monaco-dialog-box')].find((d) => d.innerText.includes('has changed in the meantime'));
      if (dialog) return { refused: dialog.innerText.replace(/\s+/g, ' ').trim() };
      const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
      if (!list || !list.checkVisibility()) return false;
      const rows = [...list.querySelectorAll('.monaco-list-row[aria-level="2"]')];
      // A new preview: rows not marked as answered.
      return rows.length > 0 && rows.every((r) => r.dataset.fuzzAnswered !== seen) ? { review: true } : false;
    },
    { pattern: ended, seen: 'yes' },
  );
}

/** The status the end notification gives the run's one edit. */
function statusOf(toast) {
  const words = [
    ['partly applied', 'partial'],
    ['applied', 'applied'],
    ['declined', 'rejected'],
    ['superseded', 'superseded'],
    ['not applied', 'not_applied'],
    ['unknown', 'unknown'],
  ];
  const counted = /1 edit: 1 ([a-z ]+?)\./.exec(toast);
  if (!counted) return `none (${toast})`;
  return words.find(([w]) => counted[1] === w)?.[1] ?? counted[1];
}

async function main() {
  const trials = Number(process.env.FUZZ_TRIALS ?? '10');
  page = await open({
    deadlineMs: Number(process.env.FUZZ_DEADLINE_MS ?? '600000'),
    files: { 'notes.txt': ORIGINAL_TEXT },
    settings: {
      'tandem.permissionMode': 'default',
      'editor.quickSuggestions': { other: false, comments: false, strings: false },
      'editor.suggestOnTriggerCharacters': false,
      'editor.wordBasedSuggestions': 'off',
      'editor.acceptSuggestionOnEnter': 'off',
      'editor.autoClosingBrackets': 'never',
      'editor.autoIndent': 'none',
      'editor.minimap.enabled': false,
    },
  });
  uri = windowUri('notes.txt');
  const file = path.join(dirs.workspace, 'notes.txt');
  await quickOpen('notes.txt');
  const report = [];
  for (let n = 1; n <= trials; n++) {
    // Back to the original text, saved.
    fs.writeFileSync(file, ORIGINAL_TEXT);
    await clickLine(0);
    await palette('File: Revert File');
    await until('the buffer is the original again', ({ u, want }) => {
      const editor = document.querySelector(`.editor-instance .monaco-editor[data-uri="${u}"]`);
      if (!editor) return false;
      const lines = [...editor.querySelectorAll('.view-lines .view-line')];
      lines.sort((x, y) => parseFloat(x.style.top) - parseFloat(y.style.top));
      return lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n') === want;
    }, { u: uri, want: ORIGINAL_TEXT });
    await clearNotifications();
    let hunks;
    let input;
    // Trial 1 is always an edit of line 10 typed around (a line added at
    // the top), so every run sees a rebase that lands.
    if (n === 1 || random(2) === 1) {
      const line = n === 1 ? 9 : random(12) - 1;
      hunks = [{ old: ORIGINAL[line], new: `${ORIGINAL[line].toUpperCase()} (agent)` }];
      input = { file_path: 'notes.txt', old_string: hunks[0].old, new_string: hunks[0].new };
    } else {
      hunks = [3, 9].map((i) => ({ old: ORIGINAL[i], new: ORIGINAL[i].replace('token', 'TOKEN') }));
      input = { file_path: 'notes.txt', old_string: 'token', new_string: 'TOKEN', replace_all: true };
    }
    model.clear();
    model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: 'notes.txt' } } });
    model.queue({ text: 'Editing.' }, { tool: { name: 'edit_file', input } });
    model.queue({ text: 'Done.' });
    const requestsBefore = model.requests.length;
    // VS Code answers Discard and a refused Apply alike (applied: false), so
    // after typing either is offered again (tests/common/review_fuzz.rs).
    const trial = { n, hunks, reviews: [], before: await text(), discard_after_typing_offers_again: true };
    trial.user_text = trial.before;
    await askAgent('Edit it');
    let outcome = await previewOpen(`trial ${n}: the edit waits in the Refactor Preview`).then((p) => ({ review: p }));
    while (outcome.review) {
      const shown = await previewOpen('the preview shows the edit');
      const review = { typed: [], before: await text() };
      trial.reviews.push(review);
      const forced = n === 1 && trial.reviews.length === 1;
      const actions = n === 1 ? 0 : [0, 0, 0, 0, 1, 1, 1, 1, 2, 3][random(10) - 1];
      if (forced) {
        const before = await text();
        await clickLine(0);
        await page.keyboard.type('new <u0>');
        await keys('Enter');
        await showsText(`new <u0>\n${before}`, 'the line added at the top shows');
        review.typed.push('added a line before line 1');
      }
      for (let i = 0; i < actions; i++) review.typed.push(await typeSomething());
      trial.user_text = await text();
      // Mark this preview's rows, to tell a new one from it.
      await page.evaluate(() => {
        for (const row of document.querySelectorAll('.monaco-list[aria-label="Bulk Edit"] .monaco-list-row')) row.dataset.fuzzAnswered = 'yes';
      });
      const roll = n === 1 ? 1 : random(10);
      if (roll <= 6) {
        review.answer = 'A';
        await applyHunks([...Array(shown.hunks).keys()]);
      } else if (roll === 7) {
        review.answer = 'R';
        await clickPreviewButton('Discard');
      } else {
        const which = [...Array(shown.hunks).keys()].filter(() => random(2) === 1);
        review.answer = [...Array(shown.hunks).keys()].map((i) => (which.includes(i) ? 'a' : 'r')).join('');
        if (which.length === 0) await clickPreviewButton('Discard');
        else await applyHunks(which);
      }
      outcome = await nextReviewOrEnd(RUN_ENDED);
      if (outcome.refused) {
        // The user reads VS Code's "Cannot apply refactoring because
        // 'notes.txt' has changed in the meantime" and presses OK.
        review.refused = outcome.refused;
        await page.evaluate(() => {
          const dialog = [...document.querySelectorAll('.monaco-dialog-box')].find((d) => d.innerText.includes('has changed in the meantime'));
          const ok = dialog && [...dialog.querySelectorAll('.monaco-button')].find((b) => b.innerText.trim() === 'OK');
          ok?.click();
        });
        outcome = await nextReviewOrEnd(RUN_ENDED);
      }
    }
    const status = statusOf(outcome.end);
    const lines = await editorLines(uri);
    trial.after = (lines ?? []).join('\n');
    trial.result = { edits: [{ status }], toast: outcome.end };
    // The model's request after the edit carries the edit's tool result.
    const body = await model.request(requestsBefore + 3);
    const content = toolResult(body, `toolu_mock_${requestsBefore + 2}_1`);
    const result = body.messages.at(-1).content.find((b) => b.type === 'tool_result');
    // (The model's request has no edit status; the notification's is checked.)
    trial.results = [{}, { content, is_error: result?.is_error === true }];
    log(`trial ${n}: ${trial.reviews.map((r) => `${r.typed.length} typed, ${r.answer}`).join('; ')} → ${status}`);
    report.push(trial);
  }
  fs.writeFileSync(path.join(E2E_DIR, 'trials.json'), JSON.stringify(report));
  assert.strictEqual(report.length, trials);
  await passed(`${trials} typing trials during reviews`);
}

run(main);
