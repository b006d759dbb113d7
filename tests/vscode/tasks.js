// End to end: a background task in code-server (issue 32), as a user meets
// it: the agent starts a dev server with run_shell's `background`; the run
// (with tandem.transcript.reveal on) opens the "Tandem Transcript" output
// channel as it starts; it ends and the status bar says one task runs; "Tandem: Background Tasks"
// lists it, and picking it stops it and every process it started (checked
// on the machine); the status bar item goes. Then a run in the panel
// writes a todo list and starts a second task, whose Stop button there ends
// it; its message mentions a file (@notes.txt), whose text reaches the model.
// Screenshots of the running task, the pick and the panel (the task and the
// todo checklist) go to E2E_DIR/screenshots.
'use strict';

const { spawnSync } = require('child_process');
const { assert, model, log, open, run, passed, palette, until, waitForToast, clearNotifications, RUN_ENDED, shot, statusBarSays, panelFrame, inPanel, clickInPanel, typeInPanel, endCount, nextEnd, askAgent } = require('./harness');

const SLEEPER = `sleep 600.${process.pid}`;
const SECOND = `sleep 601.${process.pid}`;

function running(command = SLEEPER) {
  return spawnSync('pgrep', ['-f', command]).status === 0;
}

async function main() {
  const page = await open({ files: { 'notes.txt': 'hello\n' }, settings: { 'tandem.permissionMode': 'bypassPermissions', 'tandem.transcript.reveal': true } });
  // The extension is up (its status bar item), so the palette knows its commands.
  await statusBarSays('the extension is up', 'Tandem');
  model.queue({ text: 'Starting the server.' }, { tool: { name: 'run_shell', input: { command: `exec ${SLEEPER}`, background: true } } });
  model.queue({ text: 'It runs in the background.' });
  await askAgent('start the dev server');
  // tandem.transcript.reveal: the run's start opens the "Tandem Transcript"
  // output channel on its heading.
  await until('the Output panel shows the "Tandem Transcript" channel with the run', () => {
    const editor = [...document.querySelectorAll('.monaco-editor[data-uri^="output:"]')].find((e) => e.checkVisibility());
    return !!editor && /-Tandem%20Transcript$/.test(editor.getAttribute('data-uri')) && editor.innerText.replace(/\u00a0/g, ' ').includes('## start the dev server');
  });
  log('check: with tandem.transcript.reveal the run opened the "Tandem Transcript" channel');
  await waitForToast('the run ends', RUN_ENDED);
  await until('the status bar says one task runs', () =>
    [...document.querySelectorAll('.statusbar-item')].some((i) => (i.id ?? '').endsWith('tandem.tasks') && i.innerText.includes('1 task')),
  );
  assert.ok(running(), 'the task is not running on the machine');
  await clearNotifications();
  await shot('a-running-task');
  log('check: the run ended, the task runs, the status bar says so');

  await palette('Tandem: Background Tasks');
  await until('the pick offers to stop task 1', () =>
    [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.innerText.includes('Stop task 1') && r.innerText.includes('sleep 600')),
  );
  await shot('the-tasks-pick');
  await page.keyboard.press('Enter');
  const stopped = await waitForToast('the task is stopped', 'task 1 \\(exec sleep 600');
  assert.ok(stopped.includes('stopped'), `the notification: ${stopped}`);
  assert.ok(!running(), 'a process of the stopped task still runs');
  await until('the status bar item goes', () =>
    ![...document.querySelectorAll('.statusbar-item')].some((i) => (i.id ?? '').endsWith('tandem.tasks') && i.innerText.includes('task')),
  );
  log(`check: "Tandem: Background Tasks" stopped it: ${stopped}`);
  await clearNotifications();

  // 2. From the panel (opened with its key): a run there starts another task; its Stop button ends it.
  // Its keybinding (Ctrl+Alt+K) opens the panel.
  await page.keyboard.down('Control');
  await page.keyboard.down('Alt');
  await page.keyboard.press('k');
  await page.keyboard.up('Alt');
  await page.keyboard.up('Control');
  const panel = await panelFrame('the panel opens on Ctrl+Alt+K');
  // The task stopped from the pick shows stopped there too, with no Stop button.
  const first = await inPanel(panel, 'the panel says task 1 stopped', () => document.querySelector('#log .task-state[data-task="1"]')?.textContent ?? null);
  assert.strictEqual(first, '(stopped)');
  const todo = (statuses) => ({ tool: { name: 'todo_write', input: { todos: [
    { content: 'Start the watcher', status: statuses[0] },
    { content: 'Check its first build', status: statuses[1] },
  ] } } });
  model.queue(todo(['in_progress', 'pending']));
  model.queue({ text: 'Starting a watcher.' }, { tool: { name: 'run_shell', input: { command: `exec ${SECOND}`, background: true } } });
  model.queue(todo(['completed', 'in_progress']));
  model.queue({ text: 'The watcher runs.' });
  const ends = await endCount(panel);
  const asked = model.requests.length;
  // The message mentions a file: its text goes to the model with it.
  await typeInPanel(panel, 'start the watcher for @notes.txt ');
  await page.keyboard.press('Enter');
  await nextEnd(panel, 'the run ends in the panel', ends);
  const sent = JSON.stringify(model.requests[asked]?.messages ?? []);
  assert.ok(sent.includes('<attached path=\\"notes.txt\\">\\n   1 | hello'), `the @notes.txt mention did not attach the file's text: ${sent.slice(0, 2000)}`);
  log('check: @notes.txt attached the file\'s text to the message');
  await inPanel(panel, 'the task shows with a Stop button', () => !!document.querySelector('#log button[data-stop-task="2"]'));
  assert.ok(running(SECOND), 'the second task is not running on the machine');
  // The model's todo list, as it last wrote it, is a checklist in the panel.
  const lists = await panel.evaluate(() => [...document.querySelectorAll('#log .todo')].map((l) => l.innerText));
  assert.strictEqual(lists.length, 2, `two todo lists in the panel: ${JSON.stringify(lists)}`);
  assert.ok(/Todo \(1\/2\)/.test(lists[1]) && lists[1].includes('Start the watcher') && lists[1].includes('Check its first build'), `the last list: ${lists[1]}`);
  await shot('a-task-and-the-todo-list-in-the-panel');
  await clickInPanel(panel, '#log button[data-stop-task="2"]');
  await waitForToast('the second task is stopped', 'task 2 \\(exec sleep 601');
  const state = await inPanel(panel, 'the panel says the task stopped', () => document.querySelector('#log .task-state[data-task="2"]')?.textContent ?? null);
  assert.strictEqual(state, '(stopped)');
  // The placeholders the sandbox holds while a task runs are no change of the run's.
  const changed = await panel.evaluate(() => [...document.querySelectorAll('#log .edits')].map((e) => e.textContent).join(' | '));
  assert.ok(!changed.includes('.mcp.json'), `a placeholder was reported as a change: ${changed}`);
  assert.ok(!running(SECOND), 'a process of the task stopped from the panel still runs');
  log(`check: the panel's Stop ended task 2: ${state}`);
  await passed('background tasks in code-server');
}

run(main);
