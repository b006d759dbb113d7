// End to end: workspace trust in code-server (issue 27), as a user meets it
// in a folder they cloned:
//   1. the folder's .tandem/settings.json asks for acceptEdits and its
//      .vscode/settings.json names another base URL, a looser mode and a
//      server binary: the extension warns once that it ignores the folder's
//      tandem.* settings, the server warns that the folder's own settings
//      are not trusted yet (naming permissionMode), and the model is still
//      the user's (the mock hears the run);
//   2. an edit is reviewed in the Refactor Preview (the default mode, not
//      the folder's acceptEdits) and discarded: the file is unchanged;
//   3. "Tandem: Trust Workspace": a notification says what now applies; the
//      next edit lands without a review (acceptEdits now applies).
// Screenshots of 1 and 3 go to E2E_DIR/screenshots.
'use strict';

const { assert, model, log, open, run, passed, palette, until, waitForToast, clearNotifications, clickPreviewButton, RUN_ENDED, shot, disk, askAgent } = require('./harness');

const NOTES = 'one\ntwo\n';

function queueEdit() {
  model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: 'notes.txt' } } });
  model.queue({ text: 'Shouting.' }, { tool: { name: 'edit_file', input: { file_path: 'notes.txt', old_string: 'two', new_string: 'TWO' } } });
  model.queue({ text: 'Done.' });
}

async function main() {
  const page = await open({
    files: {
      'notes.txt': NOTES,
      '.tandem/settings.json': JSON.stringify({ permissionMode: 'acceptEdits' }),
      '.vscode/settings.json': JSON.stringify({ 'tandem.baseUrl': 'http://127.0.0.1:9/not-the-users', 'tandem.permissionMode': 'bypassPermissions', 'tandem.serverPath': '/nonexistent/evil-tandem' }),
    },
    trusted: false,
  });

  // 1. Both warnings, once each.
  const ignored = await waitForToast('the extension says it ignores the folder\'s tandem.* settings', 'Tandem ignores tandem\\.serverPath, tandem\\.baseUrl, tandem\\.permissionMode from this folder');
  log(`the extension said: ${ignored}`);
  const untrusted = await waitForToast('the server says the folder is not trusted yet', 'not trusted yet');
  assert.ok(untrusted.includes('permissionMode "acceptEdits"') && untrusted.includes('Trust Workspace'), `the server's warning: ${untrusted}`);
  await shot('untrusted-folder');
  log(`check: the server said: ${untrusted}`);
  await clearNotifications();

  // 2. The default mode: the edit waits for review; discarded, nothing lands.
  const before = model.requests.length;
  queueEdit();
  await askAgent('Shout two');
  await until('the edit waits in the Refactor Preview', () => {
    const list = document.querySelector('.monaco-list[aria-label="Bulk Edit"]');
    return !!list && list.checkVisibility() && [...list.querySelectorAll('.monaco-list-row')].some((r) => (r.getAttribute('aria-label') ?? '').includes('notes.txt'));
  });
  assert.ok(model.requests.length > before, 'the user\'s model did not hear the run (the folder\'s base URL was used?)');
  await clickPreviewButton('Discard');
  await waitForToast('the run ends', RUN_ENDED);
  assert.strictEqual(disk('notes.txt'), NOTES, 'a discarded edit landed');
  log('check: untrusted, the edit was reviewed (default mode) and the user\'s model answered');
  await clearNotifications();

  // 3. Trust the folder: acceptEdits applies, the next edit lands unreviewed.
  await palette('Tandem: Trust Workspace');
  const trusted = await waitForToast('the folder is trusted', 'Tandem trusts this folder');
  assert.ok(trusted.includes('permissionMode'), `the trust notification: ${trusted}`);
  await clearNotifications();
  queueEdit();
  await askAgent('Shout two again');
  const ended = await waitForToast('the trusted run ends', RUN_ENDED);
  assert.ok(ended.includes('applied'), `the trusted run: ${ended}`);
  assert.strictEqual(disk('notes.txt'), 'one\nTWO\n', 'trusted, the folder\'s acceptEdits did not apply');
  await shot('trusted-folder');
  log('check: after "Tandem: Trust Workspace" the folder\'s acceptEdits applied');
  await passed('workspace trust in code-server');
}

run(main);
