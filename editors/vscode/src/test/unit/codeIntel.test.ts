// Unit tests of the `tandem/codeIntel` answers made from VS Code's objects
// (src/codeIntelShapes.ts), in plain Node: the objects below have the
// fields VS Code's classes have.
import * as assert from 'assert';
import {
  Clock,
  lspCalls,
  lspDiagnostic,
  lspDocumentSymbols,
  lspHovers,
  lspLocations,
  lspWorkspaceSymbols,
  question,
  waitSettled,
} from '../../codeIntelShapes';

const uri = (s: string) => ({ toString: () => s });
const range = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });
const A = 'file:///w/app.ts';
const B = 'file:///w/lib.ts';

describe('tandem/codeIntel params', () => {
  it('takes a position question', () => {
    assert.deepStrictEqual(question({ operation: 'references', uri: A, position: { line: 1, character: 10 } }), {
      operation: 'references',
      uri: A,
      position: { line: 1, character: 10 },
    });
  });
  it('says what is wrong with bad params', () => {
    assert.deepStrictEqual(question({ operation: 'rename', uri: A }), { error: 'unknown operation: rename' });
    assert.deepStrictEqual(question({}), { error: 'tandem/codeIntel needs an operation' });
    assert.deepStrictEqual(question(null), { error: 'tandem/codeIntel needs an operation' });
    assert.deepStrictEqual(question({ operation: 'definition', position: { line: 0, character: 0 } }), { error: 'definition needs a uri' });
    assert.deepStrictEqual(question({ operation: 'hover', uri: A, position: { line: -1, character: 0 } }), {
      error: 'hover needs a position {line, character} (0-based, UTF-16)',
    });
    assert.deepStrictEqual(question({ operation: 'diagnostics' }), { error: 'diagnostics needs a uri' });
  });
  it('needs no uri for a workspace symbol search, and no position for document symbols', () => {
    assert.deepStrictEqual(question({ operation: 'workspaceSymbols', query: 'add' }), { operation: 'workspaceSymbols', query: 'add' });
    assert.deepStrictEqual(question({ operation: 'documentSymbols', uri: A }), { operation: 'documentSymbols', uri: A });
  });
  it('fills in the settle bounds the server left out', () => {
    assert.deepStrictEqual(question({ operation: 'diagnostics', uri: A, settle: { version: 4 } }), {
      operation: 'diagnostics',
      uri: A,
      settle: { version: 4, quietMs: 300, timeoutMs: 3000 },
    });
    assert.deepStrictEqual(question({ operation: 'diagnostics', uri: A }), { operation: 'diagnostics', uri: A });
  });
});

describe('tandem/codeIntel answers', () => {
  it('gives Locations and LocationLinks in LSP form', () => {
    const answer = lspLocations([
      { uri: uri(A), range: range(0, 16, 0, 19) },
      { targetUri: uri(B), targetRange: range(2, 0, 4, 1), targetSelectionRange: range(2, 9, 2, 12), originSelectionRange: range(1, 10, 1, 13) },
      { targetUri: uri(B), targetRange: range(7, 0, 7, 5) },
      null,
      { nonsense: true },
    ]);
    assert.deepStrictEqual(answer, [
      { uri: A, range: range(0, 16, 0, 19) },
      { targetUri: B, targetRange: range(2, 0, 4, 1), targetSelectionRange: range(2, 9, 2, 12), originSelectionRange: range(1, 10, 1, 13) },
      { targetUri: B, targetRange: range(7, 0, 7, 5), targetSelectionRange: range(7, 0, 7, 5) },
    ]);
    assert.deepStrictEqual(lspLocations(undefined), []);
  });
  it('joins a hover\'s parts into one markdown text', () => {
    const answer = lspHovers([{ contents: [{ value: 'function add(a: number): number', language: 'typescript' }, { value: 'Adds.' }, 'plain'], range: range(1, 10, 1, 13) }]);
    assert.deepStrictEqual(answer, [
      { contents: { kind: 'markdown', value: '```typescript\nfunction add(a: number): number\n```\n\nAdds.\n\nplain' }, range: range(1, 10, 1, 13) },
    ]);
  });
  it('counts symbol kinds from 1 as LSP does, and keeps the document symbol tree', () => {
    // VS Code: Class = 4, Method = 5, Function = 11; LSP: Class = 5, Method = 6, Function = 12.
    const answer = lspDocumentSymbols([
      {
        name: 'Greeter',
        detail: '',
        kind: 4,
        range: range(0, 0, 5, 1),
        selectionRange: range(0, 6, 0, 13),
        location: { uri: uri(A), range: range(0, 0, 5, 1) },
        children: [{ name: 'greet', detail: '', kind: 5, range: range(1, 2, 3, 3), selectionRange: range(1, 2, 1, 7), children: [] }],
      },
      { name: 'add', kind: 11, containerName: 'lib', location: { uri: uri(B), range: range(3, 0, 3, 20) } },
    ]);
    assert.deepStrictEqual(answer, [
      {
        name: 'Greeter',
        kind: 5,
        range: range(0, 0, 5, 1),
        selectionRange: range(0, 6, 0, 13),
        children: [{ name: 'greet', kind: 6, range: range(1, 2, 3, 3), selectionRange: range(1, 2, 1, 7) }],
      },
      { name: 'add', kind: 12, containerName: 'lib', location: { uri: B, range: range(3, 0, 3, 20) } },
    ]);
    assert.deepStrictEqual(lspWorkspaceSymbols([{ name: 'add', kind: 11, location: { uri: uri(B), range: range(3, 0, 3, 20) } }, { kind: 1 }]), [
      { name: 'add', kind: 12, location: { uri: B, range: range(3, 0, 3, 20) } },
    ]);
  });
  it('gives incoming and outgoing calls with their items', () => {
    const item = { name: 'main', kind: 11, detail: 'app.ts', uri: uri(A), range: range(4, 0, 8, 1), selectionRange: range(4, 9, 4, 13) };
    const lspItem = { name: 'main', kind: 12, detail: 'app.ts', uri: A, range: range(4, 0, 8, 1), selectionRange: range(4, 9, 4, 13) };
    assert.deepStrictEqual(lspCalls([{ from: item, fromRanges: [range(5, 2, 5, 5)] }], 'from'), [{ from: lspItem, fromRanges: [range(5, 2, 5, 5)] }]);
    assert.deepStrictEqual(lspCalls([{ to: item, fromRanges: [] }, { from: item }], 'to'), [{ to: lspItem, fromRanges: [] }]);
  });
  it('counts diagnostic severities from 1 as LSP does, and keeps source and code', () => {
    // VS Code: Error = 0, Warning = 1, Information = 2, Hint = 3.
    assert.deepStrictEqual(lspDiagnostic({ range: range(1, 6, 1, 7), message: "Type 'string' is not assignable to type 'number'.", severity: 0, source: 'ts', code: 2322 }), {
      range: range(1, 6, 1, 7),
      message: "Type 'string' is not assignable to type 'number'.",
      severity: 1,
      source: 'ts',
      code: 2322,
    });
    assert.deepStrictEqual(
      lspDiagnostic({ range: range(0, 0, 0, 3), message: 'unused', severity: 3, code: { value: 'no-unused', target: uri('https://example.com/no-unused') }, tags: [1] }),
      { range: range(0, 0, 0, 3), message: 'unused', severity: 4, code: 'no-unused', codeDescription: { href: 'https://example.com/no-unused' }, tags: [1] },
    );
    assert.strictEqual(lspDiagnostic({ range: range(0, 0, 0, 1), message: 'x', severity: 1 }).severity, 2);
  });
});

/** A clock the test moves by hand. */
class FakeClock implements Clock {
  time = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  now(): number {
    return this.time;
  }
  setTimer(fn: () => void, ms: number): unknown {
    const id = ++this.ids;
    this.timers.push({ at: this.time + ms, fn, id });
    return id;
  }
  clearTimer(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.time = next.at;
      this.timers = this.timers.filter((t) => t !== next);
      next.fn();
    }
    this.time = end;
  }
}

/** A diagnostics event source the test fires. */
function source() {
  let listener: ((version: number) => void) | undefined;
  return {
    subscribe: (fn: (version: number) => void) => {
      listener = fn;
      return { dispose: () => (listener = undefined) };
    },
    fire: (version: number) => listener?.(version),
    listening: () => listener !== undefined,
  };
}

describe('diagnostics settling after an edit', () => {
  const settle = { version: 5, quietMs: 300, timeoutMs: 3000 };

  it('settles once a change at the edit\'s version is followed by quiet', async () => {
    const clock = new FakeClock();
    const events = source();
    let result: boolean | undefined;
    const wait = waitSettled(settle, { version: 4, time: 0 }, events.subscribe, clock).then((r) => (result = r));
    clock.advance(1000);
    events.fire(4); // a change from before the edit does not count
    clock.advance(1000);
    events.fire(5); // syntax diagnostics
    clock.advance(200);
    events.fire(5); // semantic diagnostics, before the quiet ended
    clock.advance(299);
    await Promise.resolve();
    assert.strictEqual(result, undefined, 'settled before the quiet period after the last change');
    clock.advance(1);
    await wait;
    assert.strictEqual(result, true);
    assert.ok(!events.listening(), 'the listener is removed');
  });
  it('counts a change that came before the question', async () => {
    const clock = new FakeClock();
    clock.time = 1000;
    const events = source();
    const wait = waitSettled(settle, { version: 5, time: 900 }, events.subscribe, clock);
    clock.advance(200);
    assert.strictEqual(await wait, true);
  });
  it('gives up at the bound when nothing changes, and on cancel', async () => {
    const clock = new FakeClock();
    const events = source();
    const wait = waitSettled(settle, undefined, events.subscribe, clock);
    clock.advance(3000);
    assert.strictEqual(await wait, false);
    let cancel: (() => void) | undefined;
    const cancelled = waitSettled(settle, undefined, events.subscribe, clock, (c) => (cancel = c));
    cancel?.();
    assert.strictEqual(await cancelled, false);
    assert.ok(!events.listening());
  });
});
