// End to end: the agent uses VS Code's own language features (issue 22).
// The extension answers `tandem/codeIntel` from VS Code's built-in
// TypeScript support (no other extension installed), in code-server:
//   1. once TypeScript's IntelliSense status names the project's
//      tsconfig.json, VS Code's own "Go to Definition" (from the command
//      palette) on a call of `add` in app.ts lands on `add` in lib.ts, and
//      VS Code's "Go to References" there lists add's five places;
//   2. the agent (the loopback model) edits app.ts, open in the editor,
//      into a type error: the edit's tool result lists TypeScript's error
//      (TS2345) as new, and the Problems count in the status bar shows it;
//   3. the agent's `definition` of the same call gives the place VS Code's
//      Go to Definition went to; `references` of `add` the places VS Code's
//      Go to References listed (its declaration, its import, its three
//      calls); `hover` gives its signature; `document_symbols` lists
//      lib.ts's functions.
// Screenshots of the window after Go to Definition, Go to References and
// the run go to E2E_DIR/screenshots.
'use strict';

const { assert, model, log, open, run, passed, palette, quickOpen, until, waitForToast, RUN_ENDED, shot, windowUri, toolResult, askAgent } = require('./harness');

const LIB = 'export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport function twice(n: number): number {\n  return add(n, n);\n}\n';
const APP = "import { add } from './lib';\n\nexport const total: number = add(1, 2);\nexport const more = add(total, 3);\n";

/** The editor's cursor as the status bar says it ("Ln 3, Col 31"). */
function cursor(page) {
  return page.evaluate(() => document.getElementById('status.editor.selection')?.innerText.trim() ?? '');
}

async function main() {
  const page = await open({
    files: {
      'lib.ts': LIB,
      'app.ts': APP,
      'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, target: 'es2020', module: 'commonjs' }, include: ['*.ts'] }),
      // TypeScript's diagnostics after the edit take seconds on a loaded
      // machine; the wait ends as soon as they settle.
      '.tandem/settings.json': JSON.stringify({ timeouts: { diagnosticsMs: 30000 } }),
    },
    // The edit lands without a review: this test is about what the agent learns.
    settings: { 'tandem.permissionMode': 'acceptEdits' },
  });

  // 1. VS Code's own Go to Definition, from the `add` of line 3.
  await quickOpen('app.ts');
  // TypeScript registers its language features (Go to Definition among
  // them) only once its server has started, and the palette lists a
  // command only if it applies when the palette opens: opened earlier, it
  // never offers Go to Definition. TypeScript's own IntelliSense status
  // (the `{}` in the status bar) names the project's tsconfig.json once the
  // server has loaded the project, after it registered the features.
  await until('TypeScript has loaded the project (its IntelliSense status names tsconfig.json)', () => {
    const status = document.getElementById('status.languageStatus');
    return !!status && [status, ...status.querySelectorAll('[aria-label]')].some((e) => (e.getAttribute('aria-label') ?? '').includes('tsconfig.json'));
  });
  log('TypeScript has loaded the project');
  await page.keyboard.down('Control');
  await page.keyboard.press('Home');
  await page.keyboard.up('Control');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  for (let i = 0; i < 30; i++) await page.keyboard.press('ArrowRight');
  await until('the cursor is on add( in line 3', () => document.getElementById('status.editor.selection')?.innerText.includes('Ln 3, Col 31'));
  await palette('Go to Definition');
  await until('Go to Definition opens lib.ts with the focus in it', (u) => !!document.querySelector(`.editor-instance .monaco-editor[data-uri="${u}"]`)?.contains(document.activeElement), windowUri('lib.ts'));
  // The status bar follows the focus a moment later: until then it still
  // gives app.ts's cursor (seen in CI: "lib.ts:3:31").
  await until('the status bar gives the cursor in lib.ts', () => {
    const text = document.getElementById('status.editor.selection')?.innerText.trim() ?? '';
    return /^Ln \d+, Col \d+$/.test(text) && text !== 'Ln 3, Col 31';
  });
  const went = /^Ln (\d+), Col (\d+)$/.exec(await cursor(page));
  assert.ok(went, `the status bar does not give the cursor's place: ${await cursor(page)}`);
  const vscodeDefinition = `lib.ts:${went[1]}:${went[2]}`;
  // `add` of `export function add(`: line 1, column 17.
  assert.strictEqual(vscodeDefinition, 'lib.ts:1:17', 'VS Code\'s Go to Definition went elsewhere');
  log(`check: VS Code's Go to Definition on add in app.ts goes to ${vscodeDefinition}`);
  await shot('code-intel-go-to-definition');

  // VS Code's own Go to References from there (the cursor is on `add` in
  // lib.ts): its peek lists each file's references, the first file's
  // group expanded; the others are opened with a click.
  await palette('Go to References');
  await until('the references peek lists its files', () => document.querySelectorAll('.reference-zone-widget .monaco-list-row').length > 0);
  for (;;) {
    const collapsed = await page.$('.reference-zone-widget .monaco-list-row[aria-expanded="false"]');
    if (!collapsed) break;
    const label = await collapsed.evaluate((e) => e.getAttribute('aria-label'));
    await collapsed.click();
    await until(
      `the peek opens "${label}"`,
      (l) => [...document.querySelectorAll('.reference-zone-widget .monaco-list-row')].some((r) => r.getAttribute('aria-label') === l && r.getAttribute('aria-expanded') === 'true'),
      label,
    );
  }
  const vscodeReferences = await until('the references peek lists every reference of its files', () => {
    const labels = [...document.querySelectorAll('.reference-zone-widget .monaco-list-row')].map((r) => r.getAttribute('aria-label') ?? '');
    // A file's row: "3 symbols in app.ts, full path …"; a reference's: "… in app.ts on line 3 at column 30".
    const counted = labels.map((l) => /^(\d+) symbols? in /.exec(l)).filter(Boolean).reduce((n, m) => n + Number(m[1]), 0);
    const places = labels.map((l) => / in (\S+) on line (\d+) at column (\d+)$/.exec(l)).filter(Boolean).map((m) => `${m[1]}:${m[2]}:${m[3]}`);
    return counted > 0 && places.length === counted ? places.sort() : false;
  });
  log(`check: VS Code's Go to References on add lists ${vscodeReferences.join(', ')}`);
  await shot('code-intel-go-to-references');
  await page.keyboard.press('Escape');
  await until('the references peek closes', () => !document.querySelector('.reference-zone-widget .monaco-list-row'));

  // 2. The agent introduces a type error in the open app.ts; then asks about add.
  await quickOpen('app.ts');
  model.queue({ text: 'Finding the tool.' }, { tool: { name: 'tool_search', input: { query: 'select:code_intel' } } });
  model.queue({ text: 'Reading.' }, { tool: { name: 'read_file', input: { file_path: 'app.ts' } } });
  model.queue({ text: 'Editing.' }, { tool: { name: 'edit_file', input: { file_path: 'app.ts', old_string: 'add(1, 2)', new_string: "add(1, 'two')" } } });
  model.queue(
    { text: 'Asking.' },
    { tool: { name: 'code_intel', input: { operation: 'definition', file_path: 'app.ts', line: 3, symbol: 'add' } } },
    { tool: { name: 'code_intel', input: { operation: 'references', file_path: 'lib.ts', line: 1, symbol: 'add' } } },
    { tool: { name: 'code_intel', input: { operation: 'hover', file_path: 'lib.ts', line: 1, symbol: 'add' } } },
    { tool: { name: 'code_intel', input: { operation: 'document_symbols', file_path: 'lib.ts' } } },
  );
  model.queue({ text: 'Done.' });
  const asked = model.requests.length;
  await askAgent('Break app.ts, then look at add');
  const ended = await waitForToast('the run ends', RUN_ENDED);
  assert.ok(ended.includes('Tandem: run completed.'), `the run did not complete: ${ended}`);

  // The model's fourth request carries the edit's result; its fifth the four answers.
  const afterEdit = await model.request(asked + 4);
  const editResult = toolResult(afterEdit, `toolu_mock_${asked + 3}_1`);
  log(`the edit's tool result:\n${editResult}`);
  assert.match(editResult, /Diagnostics after the edit: app\.ts: 1 error, 0 warnings \(1 new\)/, 'the edit\'s result does not list the new error');
  assert.match(editResult, /app\.ts:3:\d+: error \[ts 2345\] \(new\): Argument of type 'string' is not assignable to parameter of type 'number'/, 'the edit\'s result does not give TypeScript\'s error');
  await until('the status bar counts the error', () => /^1\s/.test(document.querySelector('#status\\.problems')?.innerText.trim() ?? ''));
  log('check: the edit\'s tool result lists TypeScript\'s new error, as the Problems count does');

  const answers = await model.request(asked + 5);
  const id = (n) => `toolu_mock_${asked + 4}_${n}`;
  const definition = toolResult(answers, id(1));
  const references = toolResult(answers, id(2));
  const hover = toolResult(answers, id(3));
  const symbols = toolResult(answers, id(4));
  log(`definition:\n${definition}\nreferences:\n${references}\nhover:\n${hover}\ndocument_symbols:\n${symbols}`);
  // The agent's definition is the place VS Code's Go to Definition went to.
  assert.strictEqual(definition, `${vscodeDefinition}: export function add(a: number, b: number): number {`);
  // The agent's references are the places VS Code's Go to References listed:
  // add's declaration, its import and its three calls.
  assert.deepStrictEqual(vscodeReferences, ['app.ts:1:10', 'app.ts:3:30', 'app.ts:4:21', 'lib.ts:1:17', 'lib.ts:6:10'], 'VS Code\'s Go to References listed other places');
  assert.deepStrictEqual(references.split('\n').map((l) => l.split(': ')[0]).sort(), vscodeReferences);
  assert.match(hover, /function add\(a: number, b: number\): number/);
  assert.match(symbols, /lib\.ts:1:17: function add/);
  assert.match(symbols, /lib\.ts:5:17: function twice/);
  log('check: definition is where Go to Definition went, references are what Go to References listed; hover and document symbols are TypeScript\'s');
  await shot('code-intel');
  await passed('diagnostics after an edit, definition, references, hover and document symbols from VS Code\'s TypeScript');
}

run(main);
