// End to end: the packaged extension (.vsix) in real VS Code (code-server,
// VS Code 1.139) in headless Chromium, driven as a user drives it, with
// a loopback Anthropic API as the model (anthropic_mock.js). tests/editors/vscode.rs runs it; it exits 0 when
// every check passed and prints each check on stderr as it goes.
//
// It covers, in one window:
//   1. a missing binary: the error names the path and offers
//      "Set tandem.serverPath"; setting it there starts the server without
//      a reload, and the commands work ("Tandem: Show transcript"); the
//      server killed: the "Tandem" output channel opens on its log, and
//      the error's "Restart server" starts it again;
//   2. "Tandem: Ask agent" from the palette, with unsaved typing in the
//      file: the edit waits in the Refactor Preview under Tandem's label,
//      is ticked and applied there, the buffer holds both texts, the disk
//      is untouched, and the end notification names the changed file;
//   3. while an edit waits in the Refactor Preview the Tandem panel says
//      so (the files, the card "waiting for review") and its button shows
//      the preview the user closed; "Tandem: Cancel run" then: the preview
//      is discarded (and the notice gone), the buffer and the disk keep
//      their text, and the end notification says the run was cancelled;
//      the notice's "Reject: tell Tandem what to do instead" on the next
//      waiting edit asks what, discards the preview, and the model reads
//      the words with the rejection;
//   4. a multi-line shell command: asked inline in the Tandem panel (which
//      opens for it), every line and why, no modal, the status bar saying
//      an approval waits; with the panel closed the status bar still says
//      so and brings the panel back with the ask; "Deny" there runs nothing;
//   5. the panel: the status bar item opens it with the focus in its input
//      box; New empties it; a typed prompt's text streams in (as markdown,
//      its HTML inert) before the run ends; a shell command is approved
//      inline and runs; the tool card expands; the run's end shows usage
//      and cost, and no notification;
//   6. a follow-up continues the thread (the model's next request carries
//      both prompts); Up recalls the last prompt;
//   7. Stop cancels a run mid-stream;
//   8. "Developer: Reload Webviews" mid-run: the panel shows the run so
//      far and follows it to its end;
//   9. a two-line command asked after a long answer: every button of the
//      ask is within the panel's view (not scrolled away nor covered);
//      "Tell Tandem what to do instead" asks what in an input box, the
//      command does not run, and the model reads the words with the
//      refusal;
//  10. a window reload mid-run: the panel comes back on the same thread
//      with its past, and the next prompt continues it.
// Screenshots of 1 (the server stopped), 4, 5, 8, 9 and 10 go to
// E2E_DIR/screenshots. The harness
// (harness.js) says what the environment must give.
'use strict';

const {
  assert,
  fs,
  path,
  TANDEM_BIN,
  E2E_DIR,
  STEP_MS,
  dirs,
  model,
  gate,
  log,
  open,
  run,
  passed,
  windowUri,
  quickOpen,
  disk,
  tabDirty,
  until,
  notifications,
  clickToastButton,
  quickInputOpen,
  quickInputClosed,
  selectAll,
  palette,
  editorLines,
  waitForLines,
  previewRows,
  waitForPreview,
  clickPreviewButton,
  waitForToast,
  RUN_ENDED,
  clearNotifications,
  panelFrame,
  inPanel,
  clickInPanel,
  typeInPanel,
  endCount,
  nextEnd,
  statusBarSays,
  statusBarText,
  shot,
  toolResult,
  serverPids,
  askAgent,
  insertText,
} = require('./harness');

const missingBinary = path.join(E2E_DIR, 'not-installed', 'tandem');
const ON_DISK = 'line one\nline two\nline three\n';
const TYPED = 'typed, not saved ';

/** The model's next turns: read the file, then one edit_file, then done. */
function queueEdit(oldString, newString) {
  model.clear();
  model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: 'notes.txt' } } });
  model.queue({ text: 'Editing.' }, { tool: { name: 'edit_file', input: { file_path: 'notes.txt', old_string: oldString, new_string: newString } } });
  model.queue({ text: 'Done.' });
}

/** The model's next turns: one shell command, then done. */
function queueShell(command) {
  model.clear();
  model.queue({ text: 'Running.' }, { tool: { name: 'run_shell', input: { command } } });
  model.queue({ text: 'Done.' });
}

/** The window (harness.js opens it). */
let page;

async function main() {
  queueEdit('line three', 'LINE THREE');
  page = await open({ files: { 'notes.txt': ON_DISK }, settings: { 'tandem.serverPath': missingBinary } });

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
  await insertText(TANDEM_BIN);
  await page.keyboard.press('Enter');
  await quickInputClosed('the server path input box closes');
  await clearNotifications();
  await palette('Tandem: Show transcript');
  await until(
    'the transcript says the server restarted',
    () => [...document.querySelectorAll('.monaco-editor[data-uri^="output:"] .view-line')].some((l) => l.textContent.replace(/\u00a0/g, ' ').includes('(server restarted:')),
  );
  log('check: "Set tandem.serverPath" started the server without a reload; "Tandem: Show transcript" works');

  // The server stops by itself (killed): its log, the "Tandem" output
  // channel, opens, and the error's "Restart server" brings it back.
  const servers = serverPids();
  assert.strictEqual(servers.length, 1, `the tandem lsp processes: ${JSON.stringify(servers)}`);
  process.kill(servers[0], 'SIGKILL');
  const died = await waitForToast('the error says the server stopped', 'the server stopped');
  assert.ok(died.includes('Restart server'), `the error offers no "Restart server": ${died}`);
  const serverLog = await until('the Output panel shows the "Tandem" channel, the server\'s log', () => {
    const picker = [...document.querySelectorAll('.part.panel select')].find((x) => x.getAttribute('aria-label') === 'Switch Output' && x.checkVisibility());
    const editor = [...document.querySelectorAll('.monaco-editor[data-uri^="output:"]')].find((e) => e.checkVisibility());
    if (picker?.options[picker.selectedIndex]?.text !== 'Tandem' || !editor || !/-Tandem$/.test(editor.getAttribute('data-uri'))) return false;
    const text = [...editor.querySelectorAll('.view-line')].map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n');
    return text.includes('Connection to server got closed') ? text : false;
  });
  await shot('server-stopped');
  log(`check: the server killed: "${died}"; the "Tandem" channel opened on its log (${serverLog.split('\n').length} lines shown)`);
  await clickToastButton('the server stopped', 'Restart server');
  await clearNotifications();
  await palette('Tandem: Show transcript');
  await until(
    'the transcript says the server restarted on request',
    () => [...document.querySelectorAll('.monaco-editor[data-uri^="output:"] .view-line')].some((l) => l.textContent.replace(/\u00a0/g, ' ').includes('(server restarted: restart requested)')),
  );
  assert.strictEqual(serverPids().length, 1, 'the restarted server does not run');
  log('check: "Restart server" on the error started the server again');

  // 2. Ask from the palette with unsaved typing; apply the edit in the Refactor Preview.
  await quickOpen('notes.txt');
  await page.keyboard.down('Control');
  await page.keyboard.press('Home');
  await page.keyboard.up('Control');
  await page.keyboard.type(TYPED);
  const typedLines = [`${TYPED}line one`, 'line two', 'line three', ''];
  await waitForLines('the typing shows in the editor', windowUri('notes.txt'), typedLines);
  assert.ok(await tabDirty('notes.txt'), 'notes.txt should have unsaved changes');
  assert.strictEqual(disk('notes.txt'), ON_DISK);
  log('check: unsaved typing is in the buffer, not on disk');

  await askAgent('Capitalise line three');
  await waitForPreview('the edit waits in the Refactor Preview', 'replacing line three with LINE THREE');
  const rows = await previewRows();
  assert.ok(rows.some((r) => r.title.includes('Tandem: notes.txt line') && r.title.includes('edit_file notes.txt')), `the preview does not show Tandem's label: ${JSON.stringify(rows)}`);
  assert.deepStrictEqual(await editorLines(windowUri('notes.txt')), typedLines, 'the edit landed before it was applied in the preview');
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
  assert.ok(completed.includes('Tandem: run completed.') && completed.includes('Changed: notes.txt'), `the run did not complete with the edit: ${completed}`);
  const bothTexts = [`${TYPED}line one`, 'line two', 'LINE THREE', ''];
  await waitForLines('the buffer holds the typing and the edit', windowUri('notes.txt'), bothTexts);
  assert.ok(await tabDirty('notes.txt'), 'notes.txt should still have unsaved changes');
  assert.strictEqual(disk('notes.txt'), ON_DISK, 'the disk changed');
  log(`check: "${completed}"; the buffer holds both texts; the disk is untouched`);

  // 3. Cancel while the edit waits in the Refactor Preview: nothing lands.
  await clearNotifications();
  queueEdit('line two', 'LINE TWO');
  await askAgent('Capitalise line two');
  await waitForPreview('the second edit waits in the Refactor Preview', 'replacing line two with LINE TWO');
  log('the second edit waits in the Refactor Preview');
  // The Tandem panel says an edit waits there (pinned above the input, the
  // edit's card "waiting for review"), and its button shows the preview
  // again after the user closed it.
  await palette('Tandem: Open Panel');
  const reviewPanel = await panelFrame('the panel opens while the edit waits');
  const waiting = await inPanel(reviewPanel, 'the panel says an edit waits for review', () => {
    const box = document.getElementById('review');
    const card = [...document.querySelectorAll('#log .card[data-kind="edit"]')].at(-1);
    return box && !box.hidden && card ? { notice: box.innerText, card: card.querySelector('.status').textContent } : null;
  });
  assert.ok(waiting.notice.includes('notes.txt') && waiting.notice.includes('Refactor Preview') && waiting.notice.includes('Show Refactor Preview'), JSON.stringify(waiting));
  assert.strictEqual(waiting.card, '… waiting for review', JSON.stringify(waiting));
  const previewShown = () => !!document.querySelector('.monaco-list[aria-label="Bulk Edit"]')?.checkVisibility();
  await palette('View: Hide Panel');
  await until('the Refactor Preview is out of sight', () => !document.querySelector('.monaco-list[aria-label="Bulk Edit"]')?.checkVisibility());
  await clickInPanel(reviewPanel, '#review button[data-show-review]');
  await until('"Show Refactor Preview" brings the preview back', previewShown);
  await waitForPreview('the preview still holds the edit', 'replacing line two with LINE TWO');
  await shot('panel-edit-waiting-for-review');
  log(`check: the panel says "${waiting.notice.split('\n')[0]}", the card says "${waiting.card}"; its button shows the preview again`);
  log('cancelling the run');
  await palette('Tandem: Cancel run');
  const cancelled = await waitForToast('the cancelled run ends', RUN_ENDED);
  assert.ok(cancelled.includes('Tandem: run cancelled.'), `the run did not end cancelled: ${cancelled}`);
  assert.ok(!cancelled.includes('Changed:'), `the cancelled run reports a change: ${cancelled}`);
  await until('the Refactor Preview is discarded', () => {
    const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
    return !list || list.querySelectorAll('.monaco-list-row').length === 0 || !list.checkVisibility();
  });
  assert.deepStrictEqual(await editorLines(windowUri('notes.txt')), bothTexts, 'the cancelled edit changed the buffer');
  assert.strictEqual(disk('notes.txt'), ON_DISK, 'the disk changed');
  await inPanel(reviewPanel, 'the review notice goes with the preview', () => document.getElementById('review').hidden);
  log(`check: "${cancelled}"; the preview is discarded (and the panel's notice gone); the buffer and the disk are unchanged`);

  // The panel's "Reject: tell Tandem what to do instead" on an edit waiting
  // in the Refactor Preview (out of sight): it asks what, the preview is
  // discarded, and the model reads the words with the rejection.
  await clearNotifications();
  queueEdit('line one', 'LINE ONE');
  const reviewing = model.requests.length;
  await askAgent('Capitalise line one');
  await waitForPreview('the third edit waits in the Refactor Preview', 'replacing line one with LINE ONE');
  await palette('View: Hide Panel');
  await until('the Refactor Preview is out of sight', () => !document.querySelector('.monaco-list[aria-label="Bulk Edit"]')?.checkVisibility());
  await inPanel(reviewPanel, 'the panel offers to reject the waiting edit with words', () => !document.getElementById('review').hidden && !!document.querySelector('#review button[data-reject-review]'));
  await clickInPanel(reviewPanel, '#review button[data-reject-review]');
  await until('an input box asks what to do instead', () => {
    const widget = document.querySelector('.quick-input-widget');
    return !!widget && widget.style.display !== 'none' && document.activeElement === widget.querySelector('input') && widget.innerText.includes('What should Tandem do instead?');
  });
  const words = 'keep line one as it is and add a line four';
  await insertText(words);
  await page.keyboard.press('Enter');
  const rejectedEnd = await waitForToast('the run whose edit was rejected ends', RUN_ENDED);
  const rejectedResult = toolResult(await model.request(reviewing + 3), `toolu_mock_${reviewing + 2}_1`);
  assert.ok(rejectedResult.includes('the user rejected the edit to notes.txt') && rejectedResult.includes(`instead, the user says: ${words}`), `the model did not read the words: ${rejectedResult}`);
  assert.deepStrictEqual(await editorLines(windowUri('notes.txt')), bothTexts, 'the rejected edit changed the buffer');
  assert.strictEqual(disk('notes.txt'), ON_DISK, 'the disk changed');
  await inPanel(reviewPanel, 'the review notice goes', () => document.getElementById('review').hidden);
  log(`check: "Reject: tell Tandem what to do instead" in the panel discarded the waiting edit ("${rejectedEnd}"); the model read: ${rejectedResult}`);

  // 4. A multi-line shell command is asked inline in the Tandem panel (which opens for it), every line and why; Deny runs nothing.
  await clearNotifications();
  const made = path.join(dirs.workspace, 'made-by-agent.txt');
  const commandLines = ['echo first step', 'touch made-by-agent.txt', 'echo third step'];
  queueShell(commandLines.join('\n'));
  await askAgent('Make a file');
  let panel = await panelFrame('the panel opens for the question');
  const ask = await inPanel(panel, 'the shell command is asked in the panel', () => {
    const box = document.querySelector('#asks .ask');
    if (!box) return null;
    return { message: box.querySelector('.ask-message').textContent, buttons: [...box.querySelectorAll('button')].map((b) => b.textContent) };
  });
  const askLines = ask.message.split('\n');
  assert.strictEqual(askLines[0], 'Tandem wants to run a shell command:', `the ask: ${JSON.stringify(ask)}`);
  assert.deepStrictEqual(askLines.slice(1, 1 + commandLines.length), commandLines, `the ask does not show every line: ${JSON.stringify(ask)}`);
  assert.ok(ask.message.includes('Asked because:'), `the ask does not say why: ${JSON.stringify(ask)}`);
  for (const title of ['Allow once', 'Always allow', 'Deny']) assert.ok(ask.buttons.includes(title), `no "${title}" in ${JSON.stringify(ask.buttons)}`);
  assert.ok(!(await page.$('.monaco-dialog-box')), 'the ask is also a modal dialog');
  assert.ok(!(await notifications(page)).some((t) => t.includes('wants to run')), 'the ask is also a notification');
  await statusBarSays('the status bar says an approval waits', 'waiting for your approval');
  await shot('ask-inline');
  log(`check: the shell command is asked inline in the panel with every line (${JSON.stringify(askLines.slice(1, 1 + commandLines.length))}), no modal; the status bar says it waits`);
  // The panel closed while the ask waits: the status bar still says so,
  // and its item brings the panel back with the ask, still answerable.
  await palette('View: Close Primary Side Bar');
  await until('the side bar closes', () => !document.querySelector('.part.sidebar')?.checkVisibility());
  await statusBarSays('the status bar still says an approval waits', 'waiting for your approval');
  await page.evaluate(() => [...document.querySelectorAll('.statusbar-item')].find((i) => (i.id ?? '').endsWith('tandem.status'))?.querySelector('a')?.click());
  panel = await panelFrame('the status bar item brings the panel back', panel);
  await inPanel(panel, 'the reopened panel shows the waiting ask', () => !!document.querySelector('#asks .ask button[data-action="Deny"]'));
  log('check: the panel closed while the ask waits: the status bar says so and brings the panel back with the ask');
  await clickInPanel(panel, '#asks button[data-action="Deny"]');
  await inPanel(panel, 'the ask goes away', () => document.querySelectorAll('#asks .ask').length === 0);
  const denied = await waitForToast('the run with the denied command ends', RUN_ENDED);
  assert.ok(denied.includes('Tandem: run completed.'), `the run did not complete after the deny: ${denied}`);
  assert.ok(!fs.existsSync(made), 'the denied command ran');
  log(`check: "Deny" in the panel ran nothing; "${denied}"`);

  model.clear();
  await clearNotifications();

  // 5. A prompt typed in the panel: the text streams in before the run ends; HTML in it is inert; a shell command is approved inline.
  const first = gate();
  const inline = path.join(dirs.workspace, 'made-inline.txt');
  model.queue(
    { text: 'Looking **now**. <img src=x id="injected"> <script>document.title="pwned"</script>\n\n' },
    { gate: first.promise },
    { text: 'I will make `made-inline.txt`.' },
    { tool: { name: 'run_shell', input: { command: 'touch made-inline.txt' } } },
  );
  model.queue({ text: 'Made it.' });
  // The status bar item opens the closed panel with the focus in its input box: type straight away.
  await palette('View: Close Primary Side Bar');
  await until('the side bar closes', () => !document.querySelector('.part.sidebar')?.checkVisibility());
  const idle = await statusBarText();
  assert.ok(idle.endsWith('Tandem'), `the idle status bar item: ${idle}`);
  await page.evaluate(() => [...document.querySelectorAll('.statusbar-item')].find((i) => (i.id ?? '').endsWith('tandem.status'))?.querySelector('a')?.click());
  panel = await panelFrame('the status bar item opens the panel', panel);
  // New starts a new conversation: an empty panel, and the next prompt names the thread.
  await clickInPanel(panel, '#new');
  await inPanel(panel, 'the panel empties for a new conversation', () =>
    document.getElementById('title').textContent === 'New conversation' && document.querySelectorAll('#log > *').length === 0,
  );
  await clickInPanel(panel, '#prompt');
  let ends = await endCount(panel);
  await inPanel(panel, 'the input box has the focus', () => document.hasFocus() && document.activeElement === document.getElementById('prompt'));
  await page.keyboard.type('Make a file for me');
  await page.keyboard.press('Enter');
  const streamed = await inPanel(panel, 'the first text shows while the run goes on', () => {
    const text = [...document.querySelectorAll('#log .msg.assistant')].at(-1)?.textContent ?? '';
    return text.includes('Looking now.') && !document.getElementById('stop').hidden ? text : null;
  });
  assert.ok(streamed.includes('<img src=x id="injected">') && streamed.includes('<script>'), `the HTML is not shown as text: ${streamed}`);
  const injected = await panel.evaluate(() => ({ img: !!document.getElementById('injected'), scripts: document.querySelectorAll('#log script').length, strong: document.querySelector('#log strong')?.textContent }));
  assert.deepStrictEqual(injected, { img: false, scripts: 0, strong: 'now' }, 'the markdown is not rendered inert');
  assert.ok(!fs.existsSync(inline));
  await shot('streaming');
  log('check: the model\'s first text shows in the panel before the run ends, as markdown, its HTML as text');
  first.open();
  await inPanel(panel, 'the shell command is asked', () => !!document.querySelector('#asks button[data-action="Allow once"]'));
  await statusBarSays('the status bar says an approval waits', 'waiting for your approval');
  await clickInPanel(panel, '#asks button[data-action="Allow once"]');
  const ended = await nextEnd(panel, 'the run ends in the panel', ends);
  assert.ok(ended.startsWith('Completed'), `the run's end: ${ended}`);
  assert.match(ended, /\d+ in · \d+ out/, `no usage in the run's end: ${ended}`);
  assert.ok(fs.existsSync(inline), 'the approved command did not run');
  const card = await panel.evaluate(() => {
    const c = [...document.querySelectorAll('#log .card[data-kind="execute"]')].at(-1);
    return c && { name: c.querySelector('.name').textContent, status: c.querySelector('.status').textContent };
  });
  assert.deepStrictEqual(card, { name: 'run_shell', status: '✓ done' }, 'the tool card');
  await clickInPanel(panel, '#log .card[data-kind="execute"] button.toggle');
  const result = await inPanel(panel, 'the card expands to its command and result', () => {
    const details = [...document.querySelectorAll('#log .card[data-kind="execute"] .details')].at(-1);
    return details && !details.hidden ? details.textContent : null;
  });
  assert.ok(result.includes('touch made-inline.txt'), result);
  assert.ok(!(await notifications(page)).some((t) => /Tandem: run/.test(t)), 'a panel run also announced its end in a notification');
  await shot('approved');
  log(`check: "Allow once" in the panel ran the command; the run ends "${ended}"; the card expands`);

  // 6. A follow-up continues the thread: the next request carries the first exchange.
  model.queue({ text: 'Still here.' });
  const asked = model.requests.length;
  await typeInPanel(panel, 'Are you still there?');
  await page.keyboard.press('Enter');
  await inPanel(panel, 'the follow-up ends', () => document.body.textContent.includes('Still here.') && !document.getElementById('send').hidden);
  const followUp = await model.request(asked + 1);
  const said = JSON.stringify(followUp.messages);
  assert.ok(said.includes('Make a file for me') && said.includes('Are you still there?'), `the follow-up does not continue the thread: ${said.slice(0, 400)}`);
  assert.strictEqual(await panel.evaluate(() => document.getElementById('title').textContent), 'Make a file for me');
  // Up in the empty input box brings back the last prompt.
  await typeInPanel(panel, '');
  await page.keyboard.press('ArrowUp');
  assert.strictEqual(await panel.evaluate(() => document.getElementById('prompt').value), 'Are you still there?');
  await selectAll();
  await page.keyboard.press('Backspace');
  log('check: the follow-up continued the thread (the request carries both prompts); Up recalls it');

  // 7. Stop ends a run mid-stream.
  const never = gate();
  model.queue({ text: 'Working on a long answer' }, { gate: never.promise }, { text: ' that never comes.' });
  ends = await endCount(panel);
  await typeInPanel(panel, 'Write a long answer');
  await page.keyboard.press('Enter');
  await inPanel(panel, 'the long answer starts', () => [...document.querySelectorAll('#log .msg.assistant')].some((m) => m.textContent.includes('Working on a long answer')));
  await clickInPanel(panel, '#stop');
  const stopped = await nextEnd(panel, 'the stopped run ends', ends);
  assert.ok(stopped.startsWith('cancelled'), `the stopped run: ${stopped}`);
  await inPanel(panel, 'Send is back', () => !document.getElementById('send').hidden);
  never.open();
  log(`check: Stop cancelled the run mid-stream ("${stopped}")`);

  // 8. The webview reloads mid-run: it shows what it missed and follows the run on.
  const held = gate();
  model.queue({ text: 'Before the reload. ' }, { gate: held.promise }, { text: 'After the reload.' });
  ends = await endCount(panel);
  await typeInPanel(panel, 'Survive a reload');
  await page.keyboard.press('Enter');
  await inPanel(panel, 'the text before the reload shows', () => document.body.textContent.includes('Before the reload.'));
  await palette('Developer: Reload Webviews');
  panel = await panelFrame('the reloaded panel', panel);
  await inPanel(panel, 'the reloaded panel shows the run so far', () => document.body.textContent.includes('Before the reload.') && !document.getElementById('stop').hidden);
  held.open();
  const after = await nextEnd(panel, 'the run goes on in the reloaded panel', ends);
  assert.ok(await panel.evaluate(() => document.body.textContent.includes('Before the reload. After the reload.')), 'the reloaded panel lost text');
  assert.ok(after.startsWith('Completed'), after);
  await shot('webview-reloaded');
  log('check: the reloaded webview showed the run so far and followed it to its end');

  // 9. A two-line command asked after a long answer: every button of the
  // ask is within the panel's view, not scrolled away; "Tell Tandem what to
  // do instead" asks what, and the model reads it with the refusal.
  const plan = Array.from({ length: 60 }, (_, i) => `- step ${i + 1} of a long plan`).join('\n');
  const instead = path.join(dirs.workspace, 'made-instead.txt');
  const reason = 'only list the files, create none';
  model.queue({ text: `The plan:\n\n${plan}\n\nNow the file.` }, { tool: { name: 'run_shell', input: { command: 'echo making it\ntouch made-instead.txt' } } });
  model.queue({ text: 'Understood: I only list them.' });
  ends = await endCount(panel);
  const planned = model.requests.length;
  await typeInPanel(panel, 'Plan it, then make the file');
  await page.keyboard.press('Enter');
  const TELL = 'Tell Tandem what to do instead';
  await inPanel(panel, 'the two-line command is asked after the long answer', (t) => !!document.querySelector(`#asks .ask button[data-action="${t}"]`), TELL);
  const placed = await panel.evaluate(() => {
    const logBox = document.getElementById('log');
    const message = document.querySelector('#asks .ask .ask-message').textContent;
    const buttons = [...document.querySelectorAll('#asks .ask button')].map((b) => {
      const r = b.getBoundingClientRect();
      const inView = r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
      // Not covered either: the button is what a click at its middle reaches.
      const reached = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2) === b;
      return { title: b.textContent, inView, reached, box: [Math.round(r.left), Math.round(r.top), Math.round(r.right), Math.round(r.bottom)] };
    });
    return { scrolls: logBox.scrollHeight > logBox.clientHeight * 2, view: [window.innerWidth, window.innerHeight], message, buttons };
  });
  assert.ok(placed.scrolls, `the log is not long enough to push the ask away: ${JSON.stringify(placed)}`);
  assert.deepStrictEqual(placed.message.split('\n').slice(1, 3), ['echo making it', 'touch made-instead.txt'], `the ask: ${placed.message}`);
  // The sandbox contains `touch made-instead.txt`: its shape may be allowed for the session (issue 57).
  assert.deepStrictEqual(placed.buttons.map((b) => b.title), ['Allow once', 'Allow commands like this for this session', 'Always allow', 'Always allow in this project', 'Deny', TELL], JSON.stringify(placed.buttons));
  assert.ok(placed.buttons.every((b) => b.inView && b.reached), `a button of the ask is out of the panel's view or covered (view ${placed.view}): ${JSON.stringify(placed.buttons)}`);
  await shot('ask-after-long-log');
  log(`check: after a long answer every button of the two-line ask is in the panel's view (${placed.view.join('×')}): ${placed.buttons.map((b) => `${b.title} ${b.box}`).join('; ')}`);
  await clickInPanel(panel, `#asks button[data-action="${TELL}"]`);
  await until('an input box asks what to do instead', () => {
    const widget = document.querySelector('.quick-input-widget');
    return !!widget && widget.style.display !== 'none' && document.activeElement === widget.querySelector('input') && widget.innerText.includes('What should Tandem do instead?');
  });
  await insertText(reason);
  await page.keyboard.press('Enter');
  const toldEnd = await nextEnd(panel, 'the run told what to do instead ends', ends);
  assert.ok(toldEnd.startsWith('Completed'), `the run's end: ${toldEnd}`);
  const told = toolResult(await model.request(planned + 2), `toolu_mock_${planned + 1}_1`);
  assert.ok(told.includes(`instead, the user says: ${reason}`), `the model did not read the reason: ${told}`);
  assert.ok(!fs.existsSync(instead), 'the refused command ran');
  log(`check: "${TELL}" asked what, and the model read it with the refusal: ${told}`);

  // 10. The window reloads mid-run: the panel comes back on the same thread with its past, and the next prompt continues it.
  const lost = gate();
  model.queue({ text: 'Interrupted ' }, { gate: lost.promise });
  await typeInPanel(panel, 'A run the reload ends');
  await page.keyboard.press('Enter');
  await inPanel(panel, 'the run before the window reload streams', () => document.body.textContent.includes('Interrupted'));
  await page.reload({ timeout: STEP_MS });
  await until('the workbench loads again', () => !!document.querySelector('.monaco-workbench .part.editor'));
  lost.open();
  panel = await panelFrame('the panel after the window reload');
  const restored = await inPanel(panel, 'the panel shows the thread\'s past', () => {
    const text = document.getElementById('log').textContent;
    return text.includes('Make a file for me') && text.includes('Survive a reload') ? document.getElementById('title').textContent : null;
  });
  assert.strictEqual(restored, 'Make a file for me');
  model.queue({ text: 'Back again.' });
  const before = model.requests.length;
  await typeInPanel(panel, 'After the window reload');
  await page.keyboard.press('Enter');
  await inPanel(panel, 'the run after the window reload ends', () => document.body.textContent.includes('Back again.') && !document.getElementById('send').hidden);
  const resumed = JSON.stringify((await model.request(before + 1)).messages);
  assert.ok(resumed.includes('Make a file for me'), `the run after the reload does not continue the thread: ${resumed.slice(0, 300)}`);
  await shot('window-reloaded');
  log('check: after a window reload the panel shows the thread\'s past and the next prompt continues it');

  await passed('missing binary, ask with unsaved typing reviewed in the Refactor Preview, cancel during review, a multi-line command asked in the panel, the panel\'s streaming, inline approval, follow-up, Stop, webview and window reloads');
}

run(main);

