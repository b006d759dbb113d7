// End to end: two VS Code windows on one workspace (issue 20). Two tabs of
// code-server on one folder are two windows: each has its own extension
// host, so each runs its own tandem lsp, and both share the workspace's
// saved threads. As a user does it:
//   1. window A asks in its panel: a new conversation;
//   2. window B opens on the same folder (a second tandem lsp starts) and
//      resumes that conversation from "Tandem: Resume Conversation";
//   3. A's follow-up is held mid-stream; B's prompt on the conversation is
//      refused in B's panel ("this conversation is running in another
//      window"), and nothing reaches the model for it;
//   4. once A's run ended, B's prompt continues the conversation, and the
//      model gets A's exchanges with it;
//   5. A's next follow-up gets B's exchange too (A read the thread again
//      from its file: its copy in memory was out of date).
// Screenshots of 3 and 5 go to E2E_DIR/screenshots.
'use strict';

const { assert, fs, path, TANDEM_BIN, dirs, model, gate, log, open, openWindow, usePage, run, passed, palette, quickOpen, until, panelFrame, notifications, inPanel, typeInPanel, endCount, nextEnd, shot } = require('./harness');

/** The tandem lsp processes of this test (its binary, its HOME). */
function tandemServers() {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const argv = fs.readFileSync(path.join('/proc', pid, 'cmdline'), 'utf8').split('\0');
        const environ = fs.readFileSync(path.join('/proc', pid, 'environ'), 'utf8').split('\0');
        return argv[0] === TANDEM_BIN && argv[1] === 'lsp' && environ.includes(`HOME=${dirs.home}`);
      } catch {
        return false;
      }
    });
}

/**
 * Bring window `p` to the front (a tab in the back gets no animation
 * frames, and its webviews may be reloaded) and resolve to its panel's
 * frame as it is now.
 */
async function front(p, what) {
  await usePage(p);
  return panelFrame(what);
}

/** Type `prompt` in the panel and press Enter; resolve to the run end's text. */
async function send(page, panel, prompt) {
  const ends = await endCount(panel);
  await typeInPanel(panel, prompt);
  await page.keyboard.press('Enter');
  return nextEnd(panel, `"${prompt}" ends in the panel`, ends);
}

/** The text of every user message of a model request. */
function userTexts(body) {
  return body.messages
    .filter((m) => m.role === 'user')
    .flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.filter((b) => b.type === 'text').map((b) => b.text)));
}

async function main() {
  // 1. Window A: a new conversation from the panel.
  const a = await open({ files: { 'notes.txt': 'notes\n' } });
  // A file opened starts the extension (and its server).
  await quickOpen('notes.txt');
  await palette('Tandem: Open Panel');
  let panelA = await panelFrame('window A\'s panel opens');
  model.queue({ text: 'Hello from A.' });
  const first = await send(a, panelA, 'first from A');
  assert.ok(first.startsWith('Completed'), `A's first run: ${first}`);
  assert.strictEqual(tandemServers().length, 1, 'one window, one server');

  // 2. Window B on the same folder: its own extension host and server.
  const b = await openWindow();
  await quickOpen('notes.txt');
  await palette('Tandem: Resume Conversation');
  await until('the conversation is offered', () => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes('first from A')));
  await b.keyboard.press('Enter');
  await palette('Tandem: Open Panel');
  let panelB = await panelFrame('window B\'s panel opens');
  await inPanel(panelB, 'B\'s panel shows the conversation\'s past', () => document.getElementById('log').textContent.includes('Hello from A.'));
  const servers = tandemServers();
  assert.strictEqual(servers.length, 2, `two windows do not run two servers: ${servers}`);
  log(`check: two windows on one folder run two tandem lsp processes (${servers.join(', ')})`);

  // 3. A's follow-up held mid-stream; B is refused the conversation.
  panelA = await front(a, 'window A\'s panel');
  const held = gate();
  model.queue({ text: 'Working on it… ' }, { gate: held.promise }, { text: 'A is done.' });
  const endsA = await endCount(panelA);
  await typeInPanel(panelA, 'second from A');
  await a.keyboard.press('Enter');
  await inPanel(panelA, 'A\'s follow-up streams', () => document.getElementById('log').textContent.includes('Working on it'));
  const asked = model.requests.length;
  panelB = await front(b, 'window B\'s panel');
  const refused = await send(b, panelB, 'from B while A runs');
  log(`B's panel says: ${refused}`);
  assert.match(refused, /^failed: this conversation is running in another window/, `B's refused prompt: ${refused}`);
  assert.strictEqual(model.requests.length, asked, 'B\'s refused prompt reached the model');
  const toasts = await notifications(b);
  assert.ok(!toasts.some((t) => t.includes('running in another window')), `the panel's refusal is also a notification: ${JSON.stringify(toasts)}`);
  await shot('two-windows-refused');
  log('check: while A runs the conversation, B\'s prompt on it is refused in B\'s panel');

  // 4. A's run ends; B continues the conversation with A's exchanges.
  held.open();
  panelA = await front(a, 'window A\'s panel');
  const second = await nextEnd(panelA, 'A\'s follow-up ends', endsA);
  assert.ok(second.startsWith('Completed'), `A's follow-up: ${second}`);
  panelB = await front(b, 'window B\'s panel');
  model.queue({ text: 'Hello from B.' });
  const fromB = await send(b, panelB, 'from B after A');
  assert.ok(fromB.startsWith('Completed'), `B's run: ${fromB}`);
  const seenByB = userTexts(await model.request(asked + 1));
  for (const text of ['first from A', 'second from A', 'from B after A']) assert.ok(seenByB.some((t) => t.includes(text)), `B's request lacks "${text}": ${JSON.stringify(seenByB)}`);
  assert.ok(!seenByB.some((t) => t.includes('from B while A runs')), `the refused prompt is in the thread: ${JSON.stringify(seenByB)}`);
  log('check: after A\'s run ended, B continued the conversation with A\'s exchanges');

  // 5. A's next follow-up has B's exchange: A read the thread again.
  panelA = await front(a, 'window A\'s panel');
  model.queue({ text: 'A again.' });
  const third = await send(a, panelA, 'third from A');
  assert.ok(third.startsWith('Completed'), `A's third run: ${third}`);
  const seenByA = userTexts(await model.request(asked + 2));
  for (const text of ['first from A', 'second from A', 'from B after A', 'third from A']) assert.ok(seenByA.some((t) => t.includes(text)), `A's request lacks "${text}": ${JSON.stringify(seenByA)}`);
  await shot('two-windows-continued');
  log('check: A\'s follow-up carries B\'s exchange: nothing B added was lost');
  await passed('two windows on one workspace: a conversation running in one is refused in the other, and each continues what the other added');
}

run(main);
