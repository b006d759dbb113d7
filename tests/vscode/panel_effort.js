// End to end, issue 50: the effort picker beside the panel's model picker.
// In code-server, with tandem.model set to claude-sonnet-4-5 (a model that
// takes no effort: its thinking is a budget):
//   1. the effort picker is hidden;
//   2. claude-opus-5-5 picked in the model picker: the effort picker shows
//      the efforts the server says that model takes, "default" first;
//   3. "max" picked and a prompt sent: the model's request is for
//      claude-opus-5-5 with `output_config.effort` "max";
//   4. the choice stays for the next prompt, and "default" sends the
//      settings' effort (none set here: no output_config).
// A screenshot of 2-3 (the pickers) goes to E2E_DIR/screenshots.
'use strict';

const { assert, model, log, run, open, passed, palette, quickOpen, panelFrame, inPanel, typeInPanel, endCount, nextEnd, shot } = require('./harness');

/** The effort picker: whether it shows, its options and its value. */
function effortPicker(panel) {
  return panel.evaluate(() => {
    const select = document.getElementById('effortPicker');
    return { hidden: select.hidden, options: [...select.options].map((o) => o.value), value: select.value };
  });
}

/** Send `text` from the panel and wait for its run to end. */
async function send(page, panel, text) {
  const ends = await endCount(panel);
  await typeInPanel(panel, text);
  await page.keyboard.press('Enter');
  const ended = await nextEnd(panel, `the run of "${text}" ends`, ends);
  assert.ok(ended.startsWith('Completed'), `the run's end: ${ended}`);
}

async function main() {
  const page = await open({ files: { 'app.txt': 'hello\n' }, settings: { 'tandem.model': 'claude-sonnet-4-5' } });
  // (A file opened activates the extension, as in panel_image.js.)
  await quickOpen('app.txt');
  await palette('Tandem: Open Panel');
  const panel = await panelFrame('the panel opens');

  // 1. A model that takes no effort: no effort picker.
  await inPanel(panel, 'the model picker shows claude-sonnet-4-5', () => document.getElementById('modelPicker').value === 'claude-sonnet-4-5' || null);
  const none = await effortPicker(panel);
  assert.strictEqual(none.hidden, true, `the effort picker shows for claude-sonnet-4-5: ${JSON.stringify(none)}`);
  log('check: no effort picker for a model that takes no effort');

  // 2. A model that takes one: the picker shows its efforts.
  await panel.select('#modelPicker', 'claude-opus-5-5');
  await inPanel(panel, 'the effort picker shows for claude-opus-5-5', () => !document.getElementById('effortPicker').hidden || null);
  const offered = await effortPicker(panel);
  assert.deepStrictEqual(offered.options, ['', 'low', 'medium', 'high', 'xhigh', 'max'], JSON.stringify(offered));
  assert.strictEqual(offered.value, '', 'the effort picker starts at the default');
  log('check: claude-opus-5-5 picked, the effort picker offers its efforts');

  // 3. "max" goes with the next prompt.
  await panel.select('#effortPicker', 'max');
  await shot('panel-effort-picker');
  model.queue({ text: 'Thought hard.' });
  await send(page, panel, 'think hard');
  const first = await model.request(1);
  assert.strictEqual(first.model, 'claude-opus-5-5', JSON.stringify(first.model));
  assert.deepStrictEqual(first.output_config, { effort: 'max' }, JSON.stringify(first.output_config));
  await inPanel(panel, 'the answer is shown', (t) => document.getElementById('log').innerText.includes(t) || null, 'Thought hard.');
  assert.strictEqual((await effortPicker(panel)).value, 'max', 'the effort picker kept its choice');
  log('check: the request was for claude-opus-5-5 with output_config.effort max');

  // 4. Back to the default: the settings' effort (none) goes.
  await panel.select('#effortPicker', '');
  model.queue({ text: 'As usual.' });
  await send(page, panel, 'as usual');
  const second = await model.request(2);
  assert.strictEqual(second.model, 'claude-opus-5-5', JSON.stringify(second.model));
  assert.strictEqual(second.output_config, undefined, JSON.stringify(second.output_config));
  await shot('panel-effort-sent');
  log('check: with the default effort the request carries none');
  await passed('an effort picked in the panel reaches the model');
}

run(main);
