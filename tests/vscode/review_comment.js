// End to end: a comment on an edit waiting in VS Code's Refactor Preview,
// from the Tandem panel, reaches the model (issue 55), in code-server in
// the default permission mode:
//   1. while the edit waits, the panel's notice offers "Comment on this
//      edit"; it asks for the words in an input box;
//   2. the user applies the edit in the preview: the edit lands, and the
//      model's next request carries the comment with the decision in the
//      edit's tool result ("the whole edit accepted by the user, with a
//      comment: …").
//   3. after the run, "Tandem: Comment on Selection for Review" keeps a
//      comment on a line; the panel offers "Send review to agent (1
//      comment)", which starts the thread's next turn: the model's request
//      carries the comment with its file and line.
// Screenshots of the panel with the notice and with the send button go to
// E2E_DIR/screenshots.
'use strict';

const { assert, model, log, open, run, passed, until, waitForToast, waitForLines, clickPreviewButton, RUN_ENDED, shot, windowUri, toolResult, askAgent, previewHunks, palette, panelFrame, inPanel, clickInPanel, insertText, quickOpen } = require('./harness');

const NOTES = 'line one\nline two\n';
const WORDS = 'fine, and upper-case line one the same way';

async function main() {
  const page = await open({ files: { 'notes.txt': NOTES } });
  const uri = windowUri('notes.txt');
  await quickOpen('notes.txt');
  await waitForLines('notes.txt is open', uri, NOTES.split('\n'));
  model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: 'notes.txt' } } });
  model.queue({ text: 'Editing.' }, { tool: { name: 'edit_file', input: { file_path: 'notes.txt', old_string: 'line two', new_string: 'LINE TWO' } } });
  model.queue({ text: 'Done.' });
  const before = model.requests.length;
  await askAgent('Capitalise line two');
  await previewHunks('the edit waits in the Refactor Preview', 'notes.txt', 1);

  // 1. The panel's comment button, and the input box it opens.
  await palette('Tandem: Open Panel');
  const panel = await panelFrame('the panel opens while the edit waits');
  await inPanel(panel, 'the notice offers a comment on the waiting edit', () => !document.getElementById('review').hidden && !!document.querySelector('#review button[data-comment-review]'));
  await shot('review-comment-button');
  await clickInPanel(panel, '#review button[data-comment-review]');
  await until('an input box asks for the comment', () => {
    const widget = document.querySelector('.quick-input-widget');
    return !!widget && widget.style.display !== 'none' && widget.innerText.includes('Your comment on this edit');
  });
  await insertText(WORDS);
  await page.keyboard.press('Enter');
  await until('the input box closes', () => {
    const widget = document.querySelector('.quick-input-widget');
    return !widget || widget.style.display === 'none';
  });
  log('check: the panel offered "Comment on this edit" and took the words');

  // 2. Apply in the preview; the model reads the comment.
  await clickInPanel(panel, '#review button[data-show-review]');
  await previewHunks('the preview is back', 'notes.txt', 1);
  await clickPreviewButton('Apply');
  const ended = await waitForToast('the run ends', RUN_ENDED);
  assert.ok(ended.includes('1 edit: 1 applied'), `the run's end: ${ended}`);
  await waitForLines('the edit landed', uri, ['line one', 'LINE TWO', '']);
  const told = toolResult(await model.request(before + 3), `toolu_mock_${before + 2}_1`);
  log(`the model was told:\n${told}`);
  assert.ok(told.startsWith('Successfully edited notes.txt'), told);
  assert.ok(told.includes(`\n- the whole edit accepted by the user, with a comment: ${WORDS}`), `the model did not read the comment: ${told}`);
  await shot('review-comment-sent');

  // 3. Send review to agent: a comment on line 1 after the run.
  model.queue({ text: 'Addressed.' });
  await palette('Tandem: Comment on Selection for Review');
  await until('an input box asks for the review comment', () => {
    const widget = document.querySelector('.quick-input-widget');
    return !!widget && widget.style.display !== 'none' && widget.innerText.includes('Your comment on line 1');
  });
  const REVIEW = 'say what line one is for';
  await insertText(REVIEW);
  await page.keyboard.press('Enter');
  await inPanel(panel, 'the panel offers to send the review', () => document.querySelector('#reviewComments button[data-send-review]')?.textContent === 'Send review to agent (1 comment)');
  await shot('review-send-button');
  const sent = model.requests.length;
  await clickInPanel(panel, '#reviewComments button[data-send-review]');
  await inPanel(panel, 'the review run ends in the panel', () => document.getElementById('log').innerText.includes('Addressed.') && document.getElementById('reviewComments').hidden);
  const request = await model.request(sent + 1);
  const last = JSON.stringify(request.messages.at(-1));
  log(`the review's request ends with: ${last}`);
  assert.ok(last.includes(`- notes.txt line 1: ${REVIEW}`), `the model did not get the review: ${last}`);
  assert.ok(request.messages.length > 3, 'the review did not continue the thread');
  await passed('a comment on the waiting edit from the panel reached the model with the decision; Send review to agent started the next turn with a comment');
}

run(main);
