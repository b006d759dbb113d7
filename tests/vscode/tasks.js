// End to end: a background task in code-server (issue 32), as a user meets
// it: the agent starts a dev server with run_shell's `background`; the run
// ends and the status bar says one task runs; "Tandem: Background Tasks"
// lists it, and picking it stops it and every process it started (checked
// on the machine); the status bar item goes. A screenshot of the running
// task and of the pick go to E2E_DIR/screenshots.
'use strict';

const { spawnSync } = require('child_process');
const { assert, model, log, open, run, passed, palette, until, waitForToast, clearNotifications, RUN_ENDED, shot, statusBarSays } = require('./harness');

const SLEEPER = `sleep 600.${process.pid}`;

function running() {
  return spawnSync('pgrep', ['-f', SLEEPER]).status === 0;
}

async function main() {
  const page = await open({ files: { 'notes.txt': 'hello\n' }, settings: { 'tandem.permissionMode': 'bypassPermissions' } });
  // The extension is up (its status bar item), so the palette knows its commands.
  await statusBarSays('the extension is up', 'Tandem');
  model.queue({ text: 'Starting the server.' }, { tool: { name: 'run_shell', input: { command: `exec ${SLEEPER}`, background: true } } });
  model.queue({ text: 'It runs in the background.' });
  await palette('Tandem: Ask agent');
  await until('the ask input box opens', () => document.querySelector('.quick-input-widget input')?.getAttribute('placeholder') === 'What should the agent do?');
  await page.keyboard.type('start the dev server');
  await page.keyboard.press('Enter');
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
  await passed('background tasks in code-server');
}

run(main);
