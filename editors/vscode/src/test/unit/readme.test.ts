// The README names everything the extension contributes that a user meets
// by name: each command by its title (as the Command Palette shows it),
// each setting by its key, and the walkthrough with its steps. A command,
// setting or step added to package.json without a word in the README
// fails here, so the two cannot drift apart.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';

const root = path.join(__dirname, '..', '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
/** The README's text with its line breaks as spaces (a name may wrap). */
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8').replace(/\s+/g, ' ');

describe('the README', () => {
  it('names every command by its title', () => {
    const titles: string[] = manifest.contributes.commands.map((c: { title: string }) => c.title);
    assert.ok(titles.length >= 10, `package.json lists ${titles.length} commands`);
    assert.deepStrictEqual(titles.filter((title) => !readme.includes(title)), []);
  });
  it('names every setting by its key', () => {
    const keys = Object.keys(manifest.contributes.configuration.properties);
    assert.ok(keys.length >= 5, `package.json lists ${keys.length} settings`);
    assert.deepStrictEqual(keys.filter((key) => !readme.includes(`\`${key}\``)), []);
  });
  it('names the walkthrough and each of its steps', () => {
    const names: string[] = manifest.contributes.walkthroughs.flatMap((w: { title: string; steps: { title: string }[] }) => [w.title, ...w.steps.map((s) => s.title)]);
    assert.ok(names.length >= 2, `package.json lists ${JSON.stringify(names)}`);
    assert.deepStrictEqual(names.filter((name) => !readme.includes(name)), []);
  });
});
