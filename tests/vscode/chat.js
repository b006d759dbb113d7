// End to end: `@tandem` in VS Code's Chat view with no Copilot model
// (issue 20): code-server's built-in Copilot Chat extension is there but
// signed out, so VS Code has no chat model of its own. VS Code resolves a language model before it calls a chat
// participant and fails "Language model unavailable" when there is none;
// the extension contributes a "Tandem" entry of its own
// (contributes.languageModelChatProviders), so the Chat view has a model
// and calls @tandem, which runs the agent:
//   1. the Chat view opens with "Tandem" as its model;
//   2. "@tandem hello" runs a Tandem run: the model (the loopback API)
//      gets the prompt, and its answer shows in the chat;
//   3. the next question, typed without "@tandem", goes to Tandem too: the
//      participant is sticky, so the input already holds "@tandem"; no
//      Copilot sign-in shows, and no notification of the runs covers the
//      chat (it shows their progress and ends itself);
//   4. FIXME (VS Code, not Tandem): in a new chat, a question that names no
//      participant goes to VS Code's default chat participant, which only
//      Copilot may be (the `defaultChatParticipant` API is not open to
//      other extensions): signed out, VS Code opens its "Sign in to use
//      GitHub Copilot" dialog, and the question never reaches Tandem. The
//      test asserts that, and what the chat says once the dialog is
//      closed, so a VS Code that changes it fails here and is seen.
// Screenshots of the chat go to E2E_DIR/screenshots.
'use strict';

const { assert, model, log, open, run, passed, palette, until, shot, dirs, fs, state } = require('./harness');

/** The texts of the Copilot sign-in or setup dialogs and notifications on screen. */
function signIn() {
  return state.page.evaluate(() =>
    [...document.querySelectorAll('.monaco-dialog-box, .notification-toast')].map((d) => d.innerText.replace(/\s+/g, ' ').trim()).filter((t) => /copilot|sign in/i.test(t)),
  );
}

/**
 * Type `text` into the chat input until it holds `whole`. On a loaded
 * machine the input can still be settling when the typing starts, and keys
 * go missing (seen in CI: "@tandem" in the input, no "hello", nothing
 * sent): three tries, each starting from `whole` less `text`.
 */
async function typeUntilHeld(text, whole) {
  const page = state.page;
  const holds = (w) => (document.querySelector('.interactive-input-part .view-lines')?.innerText ?? '').replace(/\s+/g, ' ').trim() === w;
  const start = whole.slice(0, whole.length - text.length);
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.type(text);
    try {
      await until('the chat input holds the prompt', holds, whole, 5000);
      return;
    } catch (error) {
      if (attempt === 3) throw error;
      log(`the chat input lost keys (attempt ${attempt}); typing again`);
      await page.keyboard.down('Control');
      await page.keyboard.press('a');
      await page.keyboard.up('Control');
      await page.keyboard.press('Backspace');
      if (start) await page.keyboard.type(start);
    }
  }
}

/**
 * Send `text` (the input then holding `whole`) with Enter; resolves to the
 * model's request number `n`. Once, under four code-servers, VS Code took
 * the question (the input went back to "@tandem") but showed no request
 * and never called the participant: Tandem got nothing, and the script
 * waited for the model until its deadline. So the wait is bounded, and a
 * question lost that way is asked once more, as a user would, from an
 * empty input; a second loss fails the test.
 */
async function send(text, whole, n) {
  const page = state.page;
  for (let attempt = 1; ; attempt++) {
    await typeUntilHeld(attempt === 1 ? text : whole, whole);
    await page.keyboard.press('Enter');
    const request = await Promise.race([model.request(n), new Promise((resolve) => setTimeout(() => resolve(null), 30_000))]);
    if (request) return request;
    const shown = await page.evaluate(() => (document.querySelector('.interactive-session')?.innerText ?? '').replace(/\s+/g, ' ').trim());
    if (attempt === 2) throw new Error(`Tandem got no request for "${whole}" in 30 s, twice; the chat shows: ${shown.slice(0, 300)}`);
    log(`Tandem got no request for "${whole}" in 30 s (the chat shows: ${shown.slice(0, 200)}); asking again`);
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await page.keyboard.press('Backspace');
  }
}

async function main() {
  const page = await open({ files: { 'notes.txt': 'hello\n' }, settings: { 'chat.disableAIFeatures': false } });
  assert.ok(!fs.readdirSync(dirs.extensions).some((name) => name.toLowerCase().includes('copilot')), 'a Copilot extension is installed besides the built-in one');
  await palette('Chat: Open Chat');
  // 1. The model picker of the chat input shows Tandem's entry.
  await until('the Chat view\'s model picker offers Tandem', () =>
    [...document.querySelectorAll('.interactive-input-part *')].some((e) => e.children.length === 0 && e.textContent.trim() === 'Tandem'),
  );
  log('check: the Chat view opens with Tandem as its model');

  // 2. @tandem hello runs the agent and its answer shows in the chat.
  model.queue({ text: 'Hello from Tandem, in the chat.' });
  const asked = model.requests.length;
  await until('the chat input has the focus', () => !!document.activeElement?.closest('.interactive-input-part'));
  const request = await send('@tandem hello', '@tandem hello', asked + 1);
  assert.ok(JSON.stringify(request.messages).includes('hello'), `the run did not get the prompt: ${JSON.stringify(request.messages).slice(0, 300)}`);
  const answer = await until('the answer shows in the chat', () => {
    const text = document.querySelector('.interactive-session')?.innerText ?? '';
    return text.includes('Hello from Tandem, in the chat.') ? text : false;
  });
  assert.ok(!answer.includes('Language model unavailable'), `the chat says: ${answer}`);
  await shot('chat-participant');
  log('check: @tandem hello ran the agent, and its answer shows in the Chat view');

  // 3. The next question, typed without @tandem: the input kept it.
  await until('the chat input keeps @tandem for the next question', () => (document.querySelector('.interactive-input-part .view-lines')?.innerText ?? '').replace(/\s+/g, ' ').trim() === '@tandem');
  model.queue({ text: 'notes.txt says hello.' });
  const before = model.requests.length;
  const followUp = await send('what is in notes.txt', '@tandem what is in notes.txt', before + 1);
  assert.ok(JSON.stringify(followUp.messages).includes('what is in notes.txt'), `the follow-up did not reach Tandem: ${JSON.stringify(followUp.messages).slice(0, 300)}`);
  await until('the follow-up\'s answer shows in the chat', () => (document.querySelector('.interactive-session')?.innerText ?? '').includes('notes.txt says hello.'));
  assert.deepStrictEqual(await signIn(), [], 'a Copilot sign-in showed for a question to @tandem');
  await shot('chat-follow-up');
  // The chat shows the runs' progress and ends itself: no notification
  // came over its input (the notification center lists every one that came).
  await palette('Notifications: Show Notifications');
  await until('the notification center opens', () => !!document.querySelector('.notifications-center')?.checkVisibility());
  const notified = await state.page.evaluate(() => [...document.querySelectorAll('.notifications-center .notification-list-item')].map((n) => n.innerText.replace(/\s+/g, ' ').trim()));
  assert.ok(!notified.some((t) => t.includes('Tandem')), `a chat run notified: ${JSON.stringify(notified)}`);
  await palette('Notifications: Hide Notifications');
  log('check: the next question, typed without @tandem, went to Tandem (the input kept @tandem); no Copilot sign-in, and no notification over the chat');

  // 4. FIXME (VS Code): a new chat's question naming no participant goes
  // to Copilot's sign-in, not to Tandem.
  await palette('Chat: New Chat');
  await until('a new chat with an empty input', () =>
    (document.querySelector('.interactive-input-part .view-lines')?.innerText ?? '').trim() === '' && !(document.querySelector('.interactive-session')?.innerText ?? '').includes('notes.txt says hello.'));
  await until('the new chat\'s input has the focus', () => !!document.activeElement?.closest('.interactive-input-part'));
  const asked2 = model.requests.length;
  await typeUntilHeld('what is in notes.txt', 'what is in notes.txt');
  await page.keyboard.press('Enter');
  const dialog = await until('VS Code asks to sign in to Copilot', () => [...document.querySelectorAll('.monaco-dialog-box')].map((d) => d.innerText.replace(/\s+/g, ' ').trim()).find((t) => t.includes('Sign in to use GitHub Copilot')) ?? false);
  await shot('chat-without-tandem');
  await page.keyboard.press('Escape');
  const said = await until('the chat says why the question went unanswered', () => {
    const text = document.querySelector('.interactive-session')?.innerText ?? '';
    return document.querySelectorAll('.monaco-dialog-box').length === 0 && text.includes('set up GitHub Copilot') ? text.replace(/\s+/g, ' ') : false;
  });
  assert.strictEqual(model.requests.length, asked2, 'the question without @tandem reached Tandem');
  log(`check (FIXME, VS Code): a new chat's question without @tandem opened "${dialog}"; closed, the chat says "${said}"; Tandem got nothing`);
  await passed('@tandem in the Chat view with no Copilot model');
}

run(main);
