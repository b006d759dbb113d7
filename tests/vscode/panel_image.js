// End to end, issue 50: a screenshot pasted into the Tandem panel reaches
// the model. In code-server:
//   1. a PNG pasted into the panel's input (a paste event carrying the
//      image file, as the clipboard gives a copied screenshot) shows as a
//      chip with its thumbnail above the input, and is not pasted as text;
//   2. a second image dropped on the input shows as a second chip; its ×
//      removes it;
//   3. the prompt sent: the model's request has the prompt's text, then
//      the pasted image as an Anthropic `image` block with the exact bytes
//      (the dropped-then-removed one absent), and the chips are gone.
// A screenshot of 1-2 (the chips) goes to E2E_DIR/screenshots.
'use strict';

const zlib = require('zlib');
const { assert, model, log, open, run, passed, palette, quickOpen, panelFrame, inPanel, typeInPanel, endCount, nextEnd, shot } = require('./harness');

/** A 48x48 checked PNG, built here (its chunks' CRCs by zlib). */
function checkerPng() {
  const chunk = (type, data) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type), data])));
    return Buffer.concat([length, Buffer.from(type), data, crc]);
  };
  const size = 48;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = [];
  for (let y = 0; y < size; y++) {
    rows.push(0);
    for (let x = 0; x < size; x++) rows.push(x * 5, y * 5, (Math.floor(x / 8) + Math.floor(y / 8)) % 2 ? 200 : 40);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(Buffer.from(rows))), chunk('IEND', Buffer.alloc(0))]);
}

/** Fire `kind` (a paste or a drop) on the panel's input with an image file in it. */
function giveImage(panel, kind, name, base64) {
  return panel.evaluate((k, n, data) => {
    const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    const transfer = new DataTransfer();
    transfer.items.add(new File([bytes], n, { type: 'image/png' }));
    const input = document.getElementById('prompt');
    const event = k === 'paste'
      ? new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true })
      : new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true });
    input.dispatchEvent(event);
    return event.defaultPrevented;
  }, kind, name, base64);
}

/** The image chips above the input: each one's name and whether its thumbnail loaded. */
function imageChips(panel, what, count) {
  return inPanel(panel, what, (n) => {
    const box = document.getElementById('images');
    const chips = [...(box?.querySelectorAll('.image-chip') ?? [])];
    if (chips.length !== n || (n > 0 && box.hidden)) return null;
    const shown = chips.map((c) => ({ name: c.querySelector('.chip-label')?.textContent, loaded: (c.querySelector('img')?.naturalWidth ?? 0) > 0 }));
    return shown.every((c) => c.loaded) ? shown : null;
  }, count);
}

async function main() {
  const png = checkerPng();
  const base64 = png.toString('base64');
  const page = await open({ files: { 'app.txt': 'hello\n' } });
  await quickOpen('app.txt');
  await palette('Tandem: Open Panel');
  const panel = await panelFrame('the panel opens');

  // 1. Pasted: a chip with its thumbnail; nothing pasted as text.
  await typeInPanel(panel, 'what is in this screenshot?');
  assert.strictEqual(await giveImage(panel, 'paste', 'screenshot.png', base64), true, 'the paste was left to the textarea');
  const one = await imageChips(panel, 'the pasted image shows as a chip', 1);
  assert.deepStrictEqual(one, [{ name: 'screenshot.png', loaded: true }], JSON.stringify(one));
  const typed = await panel.evaluate(() => document.getElementById('prompt').value);
  assert.strictEqual(typed, 'what is in this screenshot?', `the input holds ${JSON.stringify(typed)}`);
  log('check: the pasted PNG is a chip with its thumbnail; the input holds only the typed text');

  // 2. Dropped: a second chip, whose × removes it.
  assert.strictEqual(await giveImage(panel, 'drop', 'dropped.png', base64), true, 'the drop was left to the textarea');
  const two = await imageChips(panel, 'the dropped image shows as a second chip', 2);
  assert.deepStrictEqual(two.map((c) => c.name), ['screenshot.png', 'dropped.png'], JSON.stringify(two));
  await shot('panel-image-chips');
  await panel.click('#images .image-chip:nth-child(2) button.chip-remove');
  await imageChips(panel, 'the removed chip is gone', 1);
  log('check: a dropped image is a second chip; its × removes it');

  // 3. Sent: the request has the text, then the pasted image, byte for byte.
  model.queue({ text: 'A checked square.' });
  const ends = await endCount(panel);
  await typeInPanel(panel, '');
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  const ended = await nextEnd(panel, 'the run ends in the panel', ends);
  assert.ok(ended.startsWith('Completed'), `the run's end: ${ended}`);
  const request = await model.request(1);
  const content = request.messages[0].content;
  assert.strictEqual(content[0].type, 'text', JSON.stringify(content[0]));
  assert.ok(content[0].text.endsWith('what is in this screenshot?'), JSON.stringify(content[0].text));
  const images = content.filter((b) => b.type === 'image');
  assert.strictEqual(images.length, 1, `the request carries ${images.length} images`);
  assert.deepStrictEqual(images[0].source, { type: 'base64', media_type: 'image/png', data: base64 });
  await imageChips(panel, 'the chips are gone after sending', 0);
  await inPanel(panel, 'the answer is shown', (t) => document.getElementById('log').innerText.includes(t) || null, 'A checked square.');
  await shot('panel-image-sent');
  log('check: the model got the prompt and the pasted PNG as an image block, exactly');
  await passed('a pasted screenshot reaches the model');
}

run(main);
