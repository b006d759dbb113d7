// The packaged extension holds only `dependencies` (vsce leaves the
// development ones out): code the extension host loads may require only
// those, `vscode` and Node's own modules. The webview's bundle (esbuild)
// carries what it imports itself, so a development dependency such as
// highlight.js is fine there and nowhere else.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { builtinModules } from 'module';

const root = path.join(__dirname, '..', '..', '..');
const out = path.join(root, 'out');

/** The compiled files the extension host loads: `main` and what it requires, relatively, in turn. */
function loaded(entry: string): string[] {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const match of fs.readFileSync(file, 'utf8').matchAll(/require\("(\.[^"]+)"\)/g)) {
      const target = path.resolve(path.dirname(file), match[1]);
      queue.push(fs.existsSync(`${target}.js`) ? `${target}.js` : path.join(target, 'index.js'));
    }
  }
  return [...seen];
}

describe('the packaged extension', () => {
  it('requires nothing the .vsix leaves out', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const allowed = new Set([...Object.keys(manifest.dependencies ?? {}), 'vscode', ...builtinModules]);
    const found: string[] = [];
    const files = loaded(path.join(root, manifest.main));
    for (const file of files) {
      for (const match of fs.readFileSync(file, 'utf8').matchAll(/require\("([^"]+)"\)/g)) {
        const name = match[1];
        if (name.startsWith('.')) continue;
        const pkg = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0];
        if (!allowed.has(pkg) && !allowed.has(pkg.replace(/^node:/, ''))) found.push(`${path.relative(out, file)}: ${name}`);
      }
    }
    assert.ok(files.length > 10, `the walk from ${manifest.main} found only ${files.join(', ')}`);
    assert.deepStrictEqual(found, []);
  });
  it('registers every command it contributes (a palette entry that runs nothing is caught here)', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const code = loaded(path.join(root, manifest.main)).map((file) => fs.readFileSync(file, 'utf8')).join('\n');
    const ids: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command);
    assert.ok(ids.includes('tandem.undoRunPerHunk'), ids.join(', '));
    assert.deepStrictEqual(ids.filter((id) => !code.includes(`registerCommand('${id}'`) && !code.includes(`registerCommand("${id}"`)), []);
  });
});
