// End to end: a review's finding in VS Code's Problems panel (issue 55), as
// a user meets it: the workspace is a git repository with an uncommitted
// change; "Tandem: Review Changes" runs the review (the model reports one
// finding with report_finding); the notification says how many, and the
// Problems panel lists the finding — its message, its source
// "tandem review" and its kind — with no code of the extension's: it is the
// server's diagnostic. Screenshot: the-finding-in-the-problems-panel.
'use strict';

const { spawnSync } = require('child_process');
const { assert, fs, path, dirs, model, log, open, run, passed, palette, until, waitForToast, shot, statusBarSays } = require('./harness');

function git(...args) {
  const result = spawnSync('git', ['-C', dirs.workspace, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { encoding: 'utf8' });
  assert.strictEqual(result.status, 0, `git ${args.join(' ')}: ${result.stderr}`);
}

async function main() {
  fs.mkdirSync(dirs.workspace, { recursive: true });
  fs.writeFileSync(path.join(dirs.workspace, 'notes.txt'), 'line one\nline two\nline three\n');
  git('init', '-q');
  git('add', 'notes.txt');
  git('commit', '-qm', 'notes');
  // The change to review: open() writes it over the committed text.
  await open({ files: { 'notes.txt': 'line one\nline 2\nline three\n' }, settings: {} });
  await statusBarSays('the extension is up', 'Tandem');
  model.queue({ tool: { name: 'report_finding', input: { file_path: 'notes.txt', start_line: 2, end_line: 2, severity: 'warning', kind: 'style',
    title: 'line 2 breaks the pattern', body: 'The other lines spell their numbers.', suggestion: 'line two' } } });
  model.queue({ text: '1 finding.' });
  await palette('Tandem: Review Changes');
  const said = await waitForToast('the review ends', 'review completed: 1 finding');
  log(`check: the notification: ${said}`);
  const asked = JSON.stringify(model.requests[0]?.messages ?? []);
  assert.ok(asked.includes('+line 2'), `the review's prompt holds the diff: ${asked.slice(0, 1500)}`);
  const tools = (model.requests[0]?.tools ?? []).map((t) => t.name);
  assert.ok(tools.includes('report_finding') && !tools.includes('edit_file') && !tools.includes('run_shell'), `the review's tools: ${tools}`);
  const listed = await until('the Problems panel lists the finding', () => {
    const panel = document.querySelector('.markers-panel');
    const text = panel?.innerText?.replace(/\u00a0/g, ' ') ?? '';
    return text.includes('line 2 breaks the pattern') && text.includes('tandem review') ? text : null;
  });
  assert.ok(listed.includes('style'), `the finding's kind (its code) is listed: ${listed}`);
  await shot('the-finding-in-the-problems-panel');
  log(`check: the Problems panel lists it: ${listed.split('\n').filter((l) => l.trim()).join(' | ')}`);
  await passed('a review finding in the Problems panel');
}

run(main);
