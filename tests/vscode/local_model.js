// End to end, issue 28: which model endpoint a run uses is never a surprise.
// In code-server, with an Anthropic key in the server's environment (as a
// stored key is; the harness's loopback Anthropic API stands in for the
// public one) and tandem.provider empty, as a new user would:
//   1. the panel says runs go to Anthropic, and why (the key);
//   2. the walkthrough's "Use a local model" (Tandem: Use a Local Model)
//      asks for the server's URL and the model; the panel then says runs go
//      to that OpenAI-compatible server, and why;
//   3. a prompt typed in the panel reaches that loopback server, and the
//      Anthropic one (the key's provider) gets nothing;
//   4. the panel's pickers (issue 33) show the mode and the model; the mode
//      picker follows a change made in settings.json; plan chosen in the
//      mode picker and a model typed through the model picker's "Other
//      model…" are written to the user's settings.json, and the pickers
//      show the server's answer (it took them without a restart);
//   5. `@notes` picked from the mention list shows a chip above the input,
//      whose × removes it and its mention; picked again and sent, the
//      prompt's card lists it, and the request has the new model, plan
//      mode's section and the file's text;
//   6. after a window reload, the prompt's card still lists what it
//      attached (the thread keeps it);
//   7. the walkthrough ("Tandem: Configure (walkthrough)") has its three
//      steps ticked off (the server runs, a model is set, a question was
//      asked), and its model step offers "Use a local model".
// Screenshots of 3 and of 5 (pickers and a chip) go to E2E_DIR/screenshots.
'use strict';

const { assert, fs, path, dirs, log, open, run, passed, palette, STEP_MS, clearNotifications, quickOpen, quickInputOpen, quickInputClosed, selectAll, insertText, until, model, panelFrame, inPanel, typeInPanel, endCount, nextEnd, shot } = require('./harness');
const { OpenAiMock } = require('./openai_mock');

/** The panel's model line once `want` holds for it. */
function modelLine(panel, what, want) {
  return inPanel(panel, what, (pattern) => {
    const text = document.getElementById('model')?.textContent ?? '';
    return new RegExp(pattern).test(text) ? text : null;
  }, want);
}

/** Answer the input box whose prompt contains `prompt` with `text`. */
async function answerInputBox(page, prompt, text) {
  await quickInputOpen(`the input box "${prompt}" opens`);
  await until(`the input box asks "${prompt}"`, (p) => (document.querySelector('.quick-input-widget')?.innerText ?? '').includes(p), prompt);
  await selectAll();
  await insertText(text);
  await page.keyboard.press('Enter');
}

/** Wait (bounded) until `check()` holds on disk. */
async function onDisk(what, check) {
  const end = Date.now() + 30000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function main() {
  const local = new OpenAiMock('Hello from the local model.');
  const localUrl = `${await local.start()}/v1`;
  // No provider named: the harness's TANDEM_PROVIDER is removed.
  // Typed into settings.json as written: no closing quotes or suggestions added.
  // settings.json opens in a tab, not in VS Code 1.139's modal editor.
  const typing = { 'workbench.editor.useModal': 'off', 'editor.autoClosingQuotes': 'never', 'editor.autoClosingBrackets': 'never', 'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' }, 'editor.suggestOnTriggerCharacters': false };
  const page = await open({ files: { 'hello.txt': 'hi\n', 'notes.md': 'The secret word is pumpernickel.\n' }, settings: typing, env: { TANDEM_PROVIDER: null } });

  // 1. Before: the key decides.
  await quickOpen('hello.txt');
  await palette('Tandem: Open Panel');
  let panel = await panelFrame('the panel opens');
  const before = await modelLine(panel, 'the panel names the Anthropic endpoint', '^Model: anthropic ');
  // (The harness's loopback stands in for the public Anthropic API.)
  assert.match(before, /\(no provider is named and ANTHROPIC_BASE_URL is set to http:\/\/127\.0\.0\.1:\d+\)$/, before);
  log(`check: before, the panel says: ${before}`);

  // 2. The walkthrough's "Use a local model" (its model step's button; step 7).
  await palette('Tandem: Use a Local Model');
  await answerInputBox(page, 'Base URL of the OpenAI-compatible server', localUrl);
  await answerInputBox(page, "The model's name on that server", 'qwen3');
  await quickInputClosed('the input boxes close');
  const escaped = localUrl.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const after = await modelLine(panel, 'the panel names the local endpoint', `^Model: openai qwen3 at ${escaped} `);
  // qwen3 is not in the model table: the line says what was assumed for it.
  assert.match(after, /\(provider is openai \("provider" in the editor's settings\); qwen3 is not in Tandem's model table, so it assumed a \d+-token context window, .*\)$/, after);
  log(`check: after "Use a local model", the panel says: ${after}`);

  // 3. A prompt goes to the local server, not to Anthropic.
  panel = await panelFrame('the panel is there');
  const ends = await endCount(panel);
  await typeInPanel(panel, 'say hello');
  await page.keyboard.press('Enter');
  const ended = await nextEnd(panel, 'the run ends in the panel', ends);
  assert.ok(ended.startsWith('Completed'), `the run's end: ${ended}`);
  await inPanel(panel, 'the answer is shown', (t) => document.getElementById('log').innerText.includes(t) || null, 'Hello from the local model.');
  assert.strictEqual(local.requests.length, 1, `the local server got ${local.requests.length} requests`);
  assert.strictEqual(local.requests[0].body.model, 'qwen3', JSON.stringify(local.requests[0].body.model));
  assert.ok(!JSON.stringify(local.requests[0].headers).includes('test-key'), 'the Anthropic key went to the local server');
  assert.strictEqual(model.requests.length, 0, 'the Anthropic endpoint got a request');
  await shot('local-model');
  log('check: the prompt reached the local server; the Anthropic endpoint got nothing');

  // 4. The pickers: what runs use now, changed elsewhere and in the panel.
  const pickers = (want) => inPanel(panel, `the pickers show ${JSON.stringify(want)}`, (w) => {
    const mode = document.getElementById('modePicker')?.value;
    const model = document.getElementById('modelPicker')?.value;
    return mode === w.mode && model === w.model ? { mode, model, models: [...document.getElementById('modelPicker').options].map((o) => o.textContent) } : null;
  }, want);
  const shown = await pickers({ mode: 'default', model: 'qwen3' });
  assert.deepStrictEqual(shown.models, ['qwen3', 'Other model…'], JSON.stringify(shown.models));
  const settingsFile = path.join(dirs.userData, 'User', 'settings.json');
  const userSettings = () => JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
  // Changed elsewhere: the model by "Use a local model" (above), the mode
  // typed into the user's settings.json and saved. The pickers follow.
  await palette('Preferences: Open User Settings (JSON)');
  await until('settings.json is open, with the focus in it', () => (document.activeElement?.closest('.monaco-editor')?.innerText ?? '').includes('tandem.serverPath'));
  await page.keyboard.down('Control');
  await page.keyboard.press('Home');
  await page.keyboard.up('Control');
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('"tandem.permissionMode": "acceptEdits",');
  await page.keyboard.down('Control');
  await page.keyboard.press('s');
  await page.keyboard.up('Control');
  await pickers({ mode: 'acceptEdits', model: 'qwen3' });
  await onDisk('settings.json has the typed mode', () => userSettings()['tandem.permissionMode'] === 'acceptEdits');
  log('check: the mode picker follows tandem.permissionMode typed into settings.json');
  // Chosen in the panel.
  await panel.select('#modePicker', 'plan');
  await pickers({ mode: 'plan', model: 'qwen3' });
  await panel.select('#modelPicker', '(other)');
  await answerInputBox(page, "The model's name", 'qwen3-coder');
  await quickInputClosed('the model input box closes');
  await pickers({ mode: 'plan', model: 'qwen3-coder' });
  await onDisk('settings.json has the picked mode and model', () => userSettings()['tandem.model'] === 'qwen3-coder');
  const written = userSettings();
  assert.strictEqual(written['tandem.permissionMode'], 'plan', JSON.stringify(written));
  assert.strictEqual(written['tandem.model'], 'qwen3-coder', JSON.stringify(written));
  await modelLine(panel, 'the model line names the new model', `^Model: openai qwen3-coder at ${escaped} `);
  log('check: plan and qwen3-coder picked in the panel are in the user settings.json, and the server answers them');

  // 5. An attachment chip: shown, removed with its ×, picked again and sent.
  const chips = () => panel.evaluate(() => [...document.querySelectorAll('#chips .chip')].map((c) => c.textContent));
  const mentionNotes = async () => {
    await page.keyboard.type('@notes');
    await inPanel(panel, 'the mention list offers notes.md', () => !document.getElementById('mentions').hidden && [...document.querySelectorAll('#mentions .option')].some((o) => o.textContent.includes('notes.md')) || null);
    await page.keyboard.press('Enter');
    await inPanel(panel, 'a chip shows notes.md', () => [...document.querySelectorAll('#chips .chip')].some((c) => c.textContent.includes('notes.md')) || null);
  };
  // ("Use a local model"'s notification would cover the panel's last row in the screenshots.)
  await clearNotifications();
  await typeInPanel(panel, 'what does ');
  await mentionNotes();
  assert.deepStrictEqual(await chips(), ['notes.md×'], JSON.stringify(await chips()));
  const remove = await panel.$('#chips button.chip-remove');
  assert.strictEqual(await remove.evaluate((b) => b.getAttribute('aria-label')), 'Remove notes.md');
  await remove.click();
  await inPanel(panel, 'the chip goes', () => document.querySelectorAll('#chips .chip').length === 0 || null);
  assert.strictEqual(await panel.evaluate(() => document.getElementById('prompt').value), 'what does ');
  log('check: the chip\'s × removed the attachment and its mention');
  await panel.focus('#prompt');
  await mentionNotes();
  await page.keyboard.type('say?');
  await shot('pickers-and-chip');
  const before5 = await endCount(panel);
  await page.keyboard.press('Enter');
  const ended5 = await nextEnd(panel, 'the run with the attachment ends', before5);
  assert.ok(ended5.startsWith('Completed'), `the run's end: ${ended5}`);
  const sent = await panel.evaluate(() => [...document.querySelectorAll('#log .chips.sent')].map((c) => c.textContent).at(-1));
  assert.strictEqual(sent, 'Attached:notes.md', JSON.stringify(sent));
  assert.strictEqual(await chips().then((c) => c.length), 0, 'the chips stay after sending');
  assert.strictEqual(local.requests.length, 2, `the local server got ${local.requests.length} requests`);
  const request = local.requests[1].body;
  assert.strictEqual(request.model, 'qwen3-coder', JSON.stringify(request.model));
  const body = JSON.stringify(request);
  assert.ok(body.includes('Plan Mode Active'), 'the run was not in plan mode');
  assert.ok(body.includes('pumpernickel'), "the request has no text of the attached file");
  await shot('pickers-sent');
  log('check: the next run used qwen3-coder in plan mode, with notes.md attached; its card lists it');

  // 6. A window reload: the card of the prompt comes back from the thread
  // with what it attached.
  await page.reload({ timeout: STEP_MS });
  await until('the workbench loads again', () => !!document.querySelector('.monaco-workbench .part.editor'));
  const reloaded = await panelFrame('the panel after the window reload');
  const again = await inPanel(reloaded, 'the reloaded panel lists the prompt\'s attachment', () =>
    document.getElementById('log').textContent.includes('what does @notes.md say?') ? [...document.querySelectorAll('#log .chips.sent')].map((c) => c.textContent).at(-1) ?? null : null);
  assert.strictEqual(again, 'Attached:notes.md', JSON.stringify(again));
  log('check: after a window reload the prompt\'s card still lists notes.md');
  local.close();
  // 7. The walkthrough ("Tandem: Configure (walkthrough)"): its three
  // steps are ticked off (the server runs, a model is set, a question was
  // asked), and its model step offers "Use a local model" (step 2's
  // command). Last: once it shows, VS Code moves the focus into it.
  await palette('Tandem: Configure (walkthrough)');
  const walkthrough = await until('the walkthrough shows its three steps ticked off', () => {
    const steps = [...document.querySelectorAll('.gettingStartedContainer button.getting-started-step[data-step-id^="tandem.tandem#setup#"]')];
    const shown = steps.map((s) => `${s.querySelector('.step-title')?.textContent}: ${s.getAttribute('aria-checked') === 'true' ? 'done' : 'to do'}`);
    return shown.length === 3 && shown.every((line) => line.endsWith(': done'))
      ? { title: steps[0].closest('.gettingStartedSlide')?.querySelector('.category-title')?.textContent, shown, model: [...steps[1].querySelectorAll('a.monaco-button')].map((a) => a.textContent.trim()) }
      : false;
  });
  assert.deepStrictEqual(walkthrough, {
    title: 'Get started with Tandem',
    shown: ['Install the tandem binary: done', 'Choose a model: an API key or a local model: done', 'Ask your first question: done'],
    model: ['Set API Key', 'Use a local model'],
  });
  await shot('walkthrough');
  log(`check: the walkthrough "${walkthrough.title}" shows ${JSON.stringify(walkthrough.shown)}`);
  await passed('a local model chosen in the walkthrough gets the prompts, and the panel says so');
}

run(main);
