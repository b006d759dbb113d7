// End to end, issue 28: which model endpoint a run uses is never a surprise.
// In code-server, with an Anthropic key in the server's environment (as a
// stored key is; the harness's loopback Anthropic API stands in for the
// public one) and tandem.provider empty, as a new user would:
//   1. the panel says runs go to Anthropic, and why (the key);
//   2. the walkthrough's "Use a local model" (Tandem: Use a Local Model)
//      asks for the server's URL and the model; the panel then says runs go
//      to that OpenAI-compatible server, and why;
//   3. a prompt typed in the panel reaches that loopback server, and the
//      Anthropic one (the key's provider) gets nothing.
// A screenshot of 3 goes to E2E_DIR/screenshots.
'use strict';

const { assert, log, open, run, passed, palette, quickOpen, quickInputOpen, quickInputClosed, selectAll, until, model, panelFrame, inPanel, typeInPanel, endCount, nextEnd, shot } = require('./harness');
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
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

async function main() {
  const local = new OpenAiMock('Hello from the local model.');
  const localUrl = `${await local.start()}/v1`;
  // No provider named: the harness's TANDEM_PROVIDER is removed.
  const page = await open({ files: { 'hello.txt': 'hi\n' }, env: { TANDEM_PROVIDER: null } });

  // 1. Before: the key decides.
  await quickOpen('hello.txt');
  await palette('Tandem: Open Panel');
  let panel = await panelFrame('the panel opens');
  const before = await modelLine(panel, 'the panel names the Anthropic endpoint', '^Model: anthropic ');
  // (The harness's loopback stands in for the public Anthropic API.)
  assert.match(before, /\(no provider is named and ANTHROPIC_BASE_URL is set to http:\/\/127\.0\.0\.1:\d+\)$/, before);
  log(`check: before, the panel says: ${before}`);

  // 2. The walkthrough's "Use a local model".
  await palette('Tandem: Use a Local Model');
  await answerInputBox(page, 'Base URL of the OpenAI-compatible server', localUrl);
  await answerInputBox(page, "The model's name on that server", 'qwen3');
  await quickInputClosed('the input boxes close');
  const escaped = localUrl.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const after = await modelLine(panel, 'the panel names the local endpoint', `^Model: openai qwen3 at ${escaped} `);
  assert.match(after, /\(provider \(TANDEM_PROVIDER\) is openai\)$/, after);
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
  local.close();
  await passed('a local model chosen in the walkthrough gets the prompts, and the panel says so');
}

run(main);
