// Unit tests of the Tandem panel's logic (src/panel/*), in plain Node.
import * as assert from 'assert';
import { Asks, Cancellation } from '../../panel/asks';
import { Change, Conversation, editStatusLabel, providerLine, usageLine } from '../../panel/conversation';
import { applyMention, attachmentsOf, History, mentionAt, mentionedFiles, mentionsSelection, rankFiles, removeMention, savedAttachments } from '../../panel/input';
import { askedEffort, effortChoices, emptyPickers, modelChoices, pickerNote, shownMode, shownModel } from '../../panel/pickers';
import { escapeHtml, MarkdownStream, renderInline, renderMarkdown, visibleControls } from '../../panel/markdown';

/** A character the panel must never put in its page raw. */
const INVISIBLE_IN_HTML = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u202a-\u202e\u2066-\u2069\ufeff]/;
import { statusBarText } from '../../panel/status';
import { providerConfigured } from '../../setup';

/** Every tag name in a piece of HTML. */
function tags(html: string): string[] {
  return [...html.matchAll(/<\/?([a-zA-Z0-9]+)/g)].map((m) => m[1].toLowerCase());
}

const ALLOWED = new Set(['p', 'br', 'strong', 'em', 'code', 'pre', 'a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'hr', 'div', 'span', 'button', 'table', 'thead', 'tbody', 'tr', 'th', 'td']);

describe('renderMarkdown', () => {
  it('renders the subset models write', () => {
    assert.strictEqual(renderMarkdown('# Title\n\nSome **bold** and *it* and `code`.'), '<h1>Title</h1><p>Some <strong>bold</strong> and <em>it</em> and <code>code</code>.</p>');
    assert.strictEqual(renderMarkdown('- one\n- two\n\n1. first'), '<ul><li>one</li><li>two</li></ul><ol><li>first</li></ol>');
    assert.strictEqual(
      renderMarkdown('```rust\nfn main() {}\n```'),
      '<div class="code"><span class="lang">rust</span><button class="copy secondary" title="Copy the code">Copy</button><pre data-lang="rust"><code class="hljs"><span class="hljs-keyword">fn</span> <span class="hljs-title function_">main</span>() {}</code></pre></div>',
    );
    assert.strictEqual(renderMarkdown('> quoted'), '<blockquote><p>quoted</p></blockquote>');
  });
  it('highlights known languages by their fence names and escapes the rest', () => {
    assert.match(renderMarkdown('```ts\nconst a = "x";\n```'), /<span class="hljs-keyword">const<\/span> a = <span class="hljs-string">&quot;x&quot;<\/span>;/);
    // An unknown language (or none) is escaped text, still with its Copy button.
    assert.match(renderMarkdown('```nonesuch\n<b>x</b>\n```'), /<code class="hljs">&lt;b&gt;x&lt;\/b&gt;<\/code>/);
    assert.match(renderMarkdown('```\n<script>alert(1)</script>\n```'), /<span class="lang"><\/span><button class="copy/);
    // Markup in highlighted code comes out as text too.
    const html = renderMarkdown('```html\n<img src=x onerror=alert(1)>\n```');
    assert.ok(!html.includes('<img'), html);
  });
  it('colours the lines of a diff fence', () => {
    const html = renderMarkdown('```diff\n-old line\n+new line\n same\n```');
    assert.match(html, /<span class="hljs-deletion">-old line\n?<\/span>/);
    assert.match(html, /<span class="hljs-addition">\+new line\n?<\/span>/);
  });
  it('renders a table with its alignments and inline markdown in the cells', () => {
    assert.strictEqual(
      renderMarkdown('| Tool | Calls |\n|:-----|------:|\n| `read_file` | **3** |\n| a \\| b | 1 |'),
      '<table><thead><tr><th class="align-left">Tool</th><th class="align-right">Calls</th></tr></thead>' +
        '<tbody><tr><td class="align-left"><code>read_file</code></td><td class="align-right"><strong>3</strong></td></tr>' +
        '<tr><td class="align-left">a | b</td><td class="align-right">1</td></tr></tbody></table>',
    );
    // A pipe in a line that no rule follows is text.
    assert.strictEqual(renderMarkdown('a | b'), '<p>a | b</p>');
  });
  it('leaves snake_case alone', () => {
    assert.strictEqual(renderInline('read_file and edit_file'), 'read_file and edit_file');
  });
  it('makes paths in inline code file links and keeps only http(s) and mailto links', () => {
    assert.strictEqual(renderInline('see `src/a.ts:12`'), 'see <a class="file" href="#" data-path="src/a.ts:12"><code>src/a.ts:12</code></a>');
    assert.strictEqual(renderInline('`a b.txt`'), '<code>a b.txt</code>');
    assert.strictEqual(renderInline('[docs](https://example.com/x)'), '<a class="url" href="#" data-url="https://example.com/x">docs</a>');
    assert.strictEqual(renderInline('[click](javascript:alert(1))'), '[click](javascript:alert(1))');
    assert.strictEqual(renderInline('[click](javascript:void)'), 'click');
  });
  it('renders HTML and scripts from the model as text', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror="alert(1)">',
      '[x](javascript:alert(1))',
      '```\n</code></pre><script>alert(2)</script>\n```',
      '```html\n</code></pre><script>alert(3)</script><img src=x onerror=alert(4)>\n```',
      '```js\n"</span><script>alert(5)</script>"\n```',
      '| <b>h</b> | x |\n|---|---|\n| <script>alert(6)</script> | `</td>` |',
      '`<b onclick=1>`',
      '**<iframe src="https://evil">**',
      '<a href="https://evil" onclick="x()">a</a>',
      '> <style>body{display:none}</style>',
      '- <svg onload=alert(1)>',
      '[a"onmouseover="x](https://ok.example/"onclick="y)',
    ].join('\n\n');
    const html = renderMarkdown(hostile);
    for (const tag of tags(html)) assert.ok(ALLOWED.has(tag), `a <${tag}> came through: ${html}`);
    for (const tag of html.matchAll(/<[a-z0-9]+((?:\s+[a-z-]+="[^"]*")*)\s*>/gi)) {
      for (const attribute of tag[1].matchAll(/\s+([a-z-]+)="[^"]*"/gi)) {
        assert.ok(['class', 'href', 'data-path', 'data-url', 'data-lang', 'title'].includes(attribute[1]), `a ${attribute[1]} attribute came through: ${tag[0]}`);
      }
    }
    assert.ok(!/<[a-z]/i.test(html.replace(/<\/?(p|br|strong|em|code|pre|a|h[1-6]|ul|ol|li|blockquote|hr|div|span|button|table|thead|tbody|tr|th|td)(\s+[a-z-]+="[^"]*")*>/g, '')), `a tag the renderer does not write: ${html}`);
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), html);
    // Attribute values hold no raw quote that could end them.
    for (const value of html.matchAll(/="([^"]*)"/g)) assert.ok(!value[1].includes('"'));
  });
  it('escapes the five HTML characters', () => {
    assert.strictEqual(escapeHtml(`<a href="x" class='y'>&`), '&lt;a href=&quot;x&quot; class=&#39;y&#39;&gt;&amp;');
  });
  it('shows controls, bidi overrides and zero-width characters as visible escapes (issue 49)', () => {
    const table: [string, string][] = [
      ["rm victim.txt '\x1b[2K\rls -la'", "rm victim.txt '\\x1b[2K\\rls -la'"],
      ['\x1b]52;c;eA==\x07', '\\x1b]52;c;eA==\\x07'],
      ['\u009b2K\u007f\b', '\\u{9b}2K\\x7f\\x08'],
      ['rm \u202etxt.exe \u2066a\u2069', 'rm \\u{202e}txt.exe \\u{2066}a\\u{2069}'],
      ['r\u200bm \ufeffx\u2060', 'r\\u{200b}m \\u{feff}x\\u{2060}'],
      ['tag \u{e0041}', 'tag \\u{e0041}'],
      ['one\n\ttwo\r\nthree', 'one\n\ttwo\r\nthree'],
      ['naïve 日本語 🦀 👨\u200d👩\u200d👧', 'naïve 日本語 🦀 👨\u200d👩\u200d👧'],
    ];
    for (const [input, shown] of table) assert.strictEqual(visibleControls(input), shown, JSON.stringify(input));
    assert.strictEqual(escapeHtml('<b>\u202e</b>'), '&lt;b&gt;\\u{202e}&lt;/b&gt;');
    const html = renderMarkdown('Done \u202eexe.txt\n\n```sh\nrm \x1b[2K\rls\n```\n\n`a\u200bb.ts`');
    assert.ok(!INVISIBLE_IN_HTML.test(html), JSON.stringify(html));
    // (The renderer ends a line at a lone CR, as a page would show it.)
    assert.ok(html.includes('\\u{202e}exe.txt') && html.includes('rm</span> \\x1b[2K') && html.includes('a\\u{200b}b.ts'), html);
  });
});

describe('MarkdownStream', () => {
  const text = [
    '# Plan\n\nFirst I read `notes.txt`.\n\n',
    '```ts\nconst a = 1;\n\nconst b = 2;\n```\n',
    'Then:\n- one\n- two\n\nDone **now**.',
  ].join('');

  /** The HTML the stream has shown after pushing `pieces`: committed blocks, then the tail. */
  function streamed(pieces: string[]): { html: string; committed: number } {
    const stream = new MarkdownStream();
    const blocks: string[] = [];
    let tail = '';
    for (const piece of pieces) {
      const update = stream.push(piece);
      blocks.push(...update.committed);
      tail = update.tail;
    }
    return { html: blocks.join('') + tail, committed: blocks.length };
  }

  it('shows the same HTML however the text is cut into pieces', () => {
    const whole = renderMarkdown(text);
    assert.strictEqual(streamed([text]).html, whole);
    for (const size of [1, 2, 3, 7, 16]) {
      const pieces: string[] = [];
      for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
      assert.strictEqual(streamed(pieces).html, whole, `pieces of ${size}`);
    }
  });
  it('commits finished blocks once and keeps a blank line inside a fence in its block', () => {
    const { committed } = streamed([text]);
    // "# Plan", the paragraph, the code block, "Then: + list"; "Done" is the tail.
    assert.strictEqual(committed, 4);
  });
  it('re-renders only the open block: a long transcript costs the new text, not the whole', function () {
    // A megabyte of text (its time is a benchmark's business, not this test's).
    this.timeout(30_000);
    const stream = new MarkdownStream();
    const paragraph = 'word '.repeat(200) + '\n\n';
    let longestTail = 0;
    for (let i = 0; i < 1000; i++) {
      const update = stream.push(paragraph);
      longestTail = Math.max(longestTail, update.tail.length);
      assert.strictEqual(update.committed.length, 1);
    }
    assert.ok(stream.source().length > 1_000_000);
    assert.strictEqual(longestTail, 0);
  });
});

describe('Conversation', () => {
  it('merges streamed text for the snapshot and sends every piece live', () => {
    const conversation = new Conversation();
    const live: Change[] = [];
    conversation.onChange((c) => live.push(c));
    conversation.begin('Fix the test');
    conversation.event('run-1', { type: 'text', text: 'Rea' });
    conversation.event('run-1', { type: 'text', text: 'ding.' });
    conversation.event('run-1', { type: 'tool_call', input: {}, id: 't1', name: 'read_file', summary: 'notes.txt' });
    conversation.event('run-1', { type: 'text', text: 'sub', parent: 't1' });
    conversation.event('run-1', { type: 'text', text: 'more', parent: 't1' });
    conversation.event('run-1', { type: 'text', text: 'After.' });
    const snapshot = conversation.snapshot();
    assert.deepStrictEqual(
      snapshot.items.map((i) => [i.type, i.text ?? i.name]),
      [['prompt', 'Fix the test'], ['text', 'Reading.'], ['tool_call', 'read_file'], ['text', 'submore'], ['text', 'After.']],
    );
    assert.strictEqual(live.filter((c) => c.op === 'item').length, 7);
    assert.strictEqual(snapshot.title, 'Fix the test');
    assert.strictEqual(snapshot.running, true);
  });
  it('says what runs for the status bar, and what waits for an answer first', () => {
    const conversation = new Conversation();
    assert.deepStrictEqual(conversation.runState(), { state: 'idle' });
    conversation.begin('go');
    assert.deepStrictEqual(conversation.runState(), { state: 'running', tool: undefined });
    conversation.event('run-1', { type: 'tool_call', input: {}, id: 't1', name: 'run_shell', summary: 'cargo test\nmore' });
    assert.deepStrictEqual(conversation.runState(), { state: 'running', tool: 'run_shell cargo test' });
    conversation.setAsks([{ id: 1, message: 'Tandem wants to run a shell command:\ncargo test', actions: ['Deny'] }]);
    assert.deepStrictEqual(conversation.runState(), { state: 'asking', message: 'Tandem wants to run a shell command:' });
    conversation.setAsks([]);
    conversation.event('run-1', { type: 'tool_result', id: 't1', is_error: false, content: 'ok' });
    assert.deepStrictEqual(conversation.runState(), { state: 'running', tool: undefined });
    conversation.end([{ path: '/w/a.txt', display: 'a.txt', status: 'applied' }], 'thread-1');
    assert.deepStrictEqual(conversation.runState(), { state: 'idle' });
    assert.strictEqual(conversation.threadId, 'thread-1');
    assert.strictEqual(conversation.snapshot().items.at(-1)?.type, 'edits');
  });
  it('offers Undo on a run whose edit landed, Redo once it is undone, and keeps both in the snapshot', () => {
    const conversation = new Conversation();
    conversation.begin('shout');
    conversation.event('run-2', { type: 'text', text: 'Editing.' });
    conversation.end([{ path: '/w/a.txt', display: 'a.txt', status: 'applied' }], 't', 'run-2');
    conversation.begin('try');
    conversation.end([{ path: '/w/b.txt', display: 'b.txt', status: 'rejected' }], 't', 'run-3');
    const edits = () => conversation.snapshot().items.filter((i) => i.type === 'edits').map((i) => [i.runId, i.undoable, i.undone]);
    assert.deepStrictEqual(edits(), [['run-2', true, false], ['run-3', false, false]]);
    const live: Change[] = [];
    conversation.onChange((c) => live.push(c));
    conversation.restored(['run-2', '20261203-1200-ab'], true, 'Tandem: undid run-2 (1 file: 1 restored). a.txt: restored.');
    assert.deepStrictEqual(edits()[0], ['run-2', true, true]);
    assert.deepStrictEqual(live[0], { op: 'undo', runId: 'run-2', undone: true });
    assert.strictEqual(conversation.snapshot().items.at(-1)?.text, 'Tandem: undid run-2 (1 file: 1 restored). a.txt: restored.');
    conversation.restoreFailed('run-2', 'Tandem: cannot redo: run run-2 is still going');
    assert.deepStrictEqual(live[2], { op: 'undo', runId: 'run-2', undone: true });
    conversation.restored(['run-2'], false, 'redone');
    assert.deepStrictEqual(edits()[0], ['run-2', true, false]);
  });
  it('finds a past run\'s line by its checkpoint, and a run id counted again by its latest line', () => {
    const conversation = new Conversation();
    // A past run restored from the thread (keyed by its checkpoint), a live
    // run of an earlier server, and one of the restarted server, both run-1.
    conversation.reset('t', 'title', [{ type: 'edits', edits: [{ path: '/w/a.txt', display: 'a.txt', status: 'applied' }], runId: 'ck-old', undoable: true, undone: false }]);
    for (const path of ['b.txt', 'c.txt']) {
      conversation.begin('edit');
      conversation.end([{ path: `/w/${path}`, display: path, status: 'applied' }], 't', 'run-1');
    }
    const undone = () => conversation.snapshot().items.filter((i) => i.type === 'edits').map((i) => i.undone);
    conversation.restored(['run-1', 'ck-old'], true, 'undid the past run');
    assert.deepStrictEqual(undone(), [true, false, false]);
    conversation.restored(['run-1', 'ck-new'], true, 'undid the last run-1');
    assert.deepStrictEqual(undone(), [true, false, true]);
  });
  it('shows an ask the server refused as a failed end, and a failed run that ended once', () => {
    const conversation = new Conversation();
    conversation.begin('continue');
    conversation.end([], 't', '', 'this conversation is running in another window: thread t has a run going');
    const ends = () => conversation.snapshot().items.filter((i) => i.type === 'end').map((i) => [i.status, i.text]);
    assert.deepStrictEqual(ends(), [['failed', 'this conversation is running in another window: thread t has a run going']]);
    conversation.begin('again');
    conversation.event('run-4', { type: 'end', status: 'failed', text: 'the provider failed' });
    conversation.end([], 't', 'run-4', 'the provider failed');
    assert.strictEqual(ends().length, 2);
  });
  it('starts over with a resumed thread and its past', () => {
    const conversation = new Conversation();
    conversation.begin('old');
    const live: Change[] = [];
    conversation.onChange((c) => live.push(c));
    conversation.reset('t-2', 'Other thread', [{ type: 'prompt', text: 'p' }, { type: 'text', text: 'a', runId: 'x' }, { type: 'text', text: 'b', runId: 'x' }]);
    assert.strictEqual(live.length, 1);
    assert.strictEqual(live[0].op, 'reset');
    assert.deepStrictEqual(conversation.snapshot().items.map((i) => i.text), ['p', 'ab']);
    assert.strictEqual(conversation.snapshot().title, 'Other thread');
  });
  it("shows a past call's files as the live call showed them", () => {
    const conversation = new Conversation((path) => path.replace('/w/', ''));
    const call = { type: 'tool_call' as const, id: 'c1', name: 'edit_file', input: {}, kind: { type: 'edit' as const, path: '/w/src/a.ts' }, summary: 'src/a.ts' };
    conversation.event('run-1', call);
    const live = conversation.snapshot().items[0];
    conversation.reset('t', 'title', [{ ...call, runId: 'past-1' }]);
    const past = conversation.snapshot().items[0];
    assert.deepStrictEqual(past.shown_paths, ['src/a.ts']);
    assert.deepStrictEqual(past.shown_paths, live.shown_paths);
  });
});

describe('the model endpoint line (issue 28)', () => {
  it("says where prompts go and why, from tandem.provider and from each run's first event", () => {
    const conversation = new Conversation();
    const changes: Change[] = [];
    conversation.onChange((change) => changes.push(change));
    conversation.setProvider({ provider: 'anthropic', model: 'claude-sonnet-4-5', base_url: 'https://api.anthropic.com', reason: 'no provider or base URL is set, and ANTHROPIC_API_KEY is' });
    conversation.begin('hello');
    conversation.event('run-1', { type: 'provider', provider: 'openai', model: 'qwen3', base_url: 'http://localhost:11434/v1', reason: 'no provider is named and baseUrl is set to http://localhost:11434/v1' });
    const lines = changes.filter((c) => c.op === 'provider').map((c) => (c as { text: string }).text);
    assert.deepStrictEqual(lines, [
      'Model: anthropic claude-sonnet-4-5 at https://api.anthropic.com (no provider or base URL is set, and ANTHROPIC_API_KEY is)',
      'Model: openai qwen3 at http://localhost:11434/v1 (no provider is named and baseUrl is set to http://localhost:11434/v1)',
    ]);
    assert.strictEqual(conversation.snapshot().provider, lines[1], 'a reloaded webview shows it too');
    assert.ok(!conversation.snapshot().items.some((item) => item.type === 'provider'), 'a line at the top, not a transcript entry');
  });
  it('says why there is none', () => {
    assert.strictEqual(providerLine({ error: 'no model provider is configured. Set one of:\n  ANTHROPIC_API_KEY' }), 'Model: none (no model provider is configured. Set one of:)');
  });
});

describe('usage, edit statuses and the status bar', () => {
  it('puts a run\'s tokens and cost on one line', () => {
    assert.strictEqual(usageLine({ input_tokens: 1234, output_tokens: 56 }, 0.0045), '1,234 in · 56 out · $0.0045');
    assert.strictEqual(usageLine({ input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 8 }, 1.5), '10 in · 2 out · 8 cached · $1.50');
    assert.strictEqual(usageLine(undefined, undefined), '');
  });
  it('names edit statuses as the panel shows them', () => {
    const labels = ['applied', 'written', 'partial', 'rejected', 'superseded', 'not_applied', 'unknown'].map((s) => editStatusLabel(s));
    assert.deepStrictEqual(labels, ['applied', 'applied', 'partly applied', 'declined', 'superseded', 'not applied', 'unknown']);
    // A file a command changed is no edit of the agent's.
    assert.strictEqual(editStatusLabel('written', 'python -m pytest'), 'changed by a command');
    assert.strictEqual(editStatusLabel('written', 'rm old.log', true), 'deleted by a command');
  });
  it('says idle, the running tool, or that an approval waits', () => {
    assert.strictEqual(statusBarText({ state: 'idle' }).text, '$(comment-discussion) Tandem');
    assert.strictEqual(statusBarText({ state: 'running', tool: 'read_file notes.txt' }).text, '$(loading~spin) Tandem: read_file notes.txt');
    const asking = statusBarText({ state: 'asking', message: 'Tandem wants to run a shell command:' });
    assert.strictEqual(asking.text, '$(bell-dot) Tandem: waiting for your approval');
    assert.ok(asking.warning);
    assert.ok(statusBarText({ state: 'running', tool: 'x'.repeat(100) }).text.endsWith('…'));
  });
});

class Token implements Cancellation {
  isCancellationRequested = false;
  private listeners: (() => void)[] = [];
  onCancellationRequested(listener: () => void) {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  }
  cancel() {
    this.isCancellationRequested = true;
    for (const l of this.listeners) l();
  }
}

describe('Asks', () => {
  const params = { type: 2, message: 'Tandem wants to run a shell command:\nrm -rf build\n\nAsked because: no rule allows it\n', actions: [{ title: 'Allow once' }, { title: 'Deny' }] };

  it('waits for the answer picked in the panel, with the whole message', async () => {
    const conversation = new Conversation();
    const asks = new Asks(conversation);
    const answer = asks.ask(params, new Token());
    const [pending] = conversation.snapshot().asks;
    assert.strictEqual(pending.message, 'Tandem wants to run a shell command:\nrm -rf build\n\nAsked because: no rule allows it');
    assert.deepStrictEqual(pending.actions, ['Allow once', 'Deny']);
    assert.strictEqual(asks.answer(pending.id, 'Always allow'), false, 'an action the ask does not offer');
    assert.strictEqual(asks.answer(pending.id, 'Allow once'), true);
    assert.deepStrictEqual(await answer, { title: 'Allow once' });
    assert.deepStrictEqual(conversation.snapshot().asks, []);
    assert.strictEqual(asks.answer(pending.id, 'Deny'), false, 'answered twice');
  });
  it('answers null when the server withdraws the ask, and drops it from the panel', async () => {
    const conversation = new Conversation();
    const asks = new Asks(conversation);
    const token = new Token();
    const answer = asks.ask(params, token);
    assert.strictEqual(asks.pending().length, 1);
    token.cancel();
    assert.strictEqual(await answer, null);
    assert.deepStrictEqual(conversation.snapshot().asks, []);
  });
  it('keeps several asks apart', async () => {
    const asks = new Asks(new Conversation());
    const first = asks.ask(params, new Token());
    const second = asks.ask({ message: 'Tandem wants to fetch https://x', actions: [{ title: 'Deny' }] }, new Token());
    const [a, b] = asks.pending();
    asks.answer(b.id, 'Deny');
    asks.answer(a.id, 'Allow once');
    assert.deepStrictEqual([await first, await second], [{ title: 'Allow once' }, { title: 'Deny' }]);
  });
});

describe('the input box', () => {
  it('walks the history with Up and Down and gives back the draft', () => {
    const history = new History(['one', 'two']);
    assert.strictEqual(history.up('draft'), 'two');
    assert.strictEqual(history.up('two'), 'one');
    assert.strictEqual(history.up('one'), undefined);
    assert.strictEqual(history.down(), 'two');
    assert.strictEqual(history.down(), 'draft');
    assert.strictEqual(history.down(), undefined);
    history.add('three');
    history.add('three');
    assert.deepStrictEqual(history.all(), ['one', 'two', 'three']);
  });
  it('finds the @ mention at the cursor and replaces it', () => {
    assert.deepStrictEqual(mentionAt('look at @src/ma', 15), { start: 8, query: 'src/ma' });
    assert.strictEqual(mentionAt('mail me@host', 12), undefined);
    // What a sent prompt attaches: the known files it mentions, once each.
    const known = ['src/main.rs', 'README.md', 'selection'];
    assert.deepStrictEqual(mentionedFiles('fix @src/main.rs, then @README.md and @src/main.rs again', known), ['src/main.rs', 'README.md']);
    assert.deepStrictEqual(mentionedFiles('mail me@src/main.rs or @nothing.rs', known), []);
    assert.deepStrictEqual(mentionedFiles('@README.md.', known), ['README.md']);
    assert.strictEqual(mentionAt('@a b', 4), undefined);
    const text = 'fix @no please';
    const applied = applyMention(text, 7, { start: 4, query: 'no' }, 'notes.txt');
    assert.deepStrictEqual(applied, { text: 'fix @notes.txt  please', cursor: 15 });
  });
  it('ranks files by name first', () => {
    assert.deepStrictEqual(rankFiles(['src/notes.ts', 'docs/my-notes.md', 'notes.txt', 'a/b/c.rs'], 'notes'), ['notes.txt', 'src/notes.ts', 'docs/my-notes.md']);
    assert.strictEqual(rankFiles(['a', 'b', 'c'], '', 2).length, 2);
  });
});

describe('providerConfigured', () => {
  const none = { env: { PATH: '/usr/bin', OPENAI_API_KEY: ' ' }, files: [{ permissions: {} }, 'not an object'] };
  it('is false with no setting, variable or settings file naming a provider', () => {
    assert.strictEqual(providerConfigured(none), false);
  });
  it('is true for a setting, a variable, or a settings file', () => {
    assert.ok(providerConfigured({ ...none, provider: 'openai' }));
    assert.ok(providerConfigured({ ...none, baseUrl: 'http://localhost:11434/v1' }));
    assert.ok(providerConfigured({ ...none, env: { ANTHROPIC_API_KEY: 'sk-ant-x' } }));
    assert.ok(providerConfigured({ ...none, files: [{ provider: 'anthropic' }] }));
    assert.ok(providerConfigured({ ...none, files: [{ env: { OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1' } }] }));
    assert.ok(!providerConfigured({ ...none, files: [{ env: { OTHER: 'x' } }] }));
  });
});

describe('attachment chips', () => {
  const known = ['src/a.ts', 'README.md', 'docs/guide.md'];
  it('lists what sending the prompt attaches: the selection when mentioned and taken, then each known file once', () => {
    assert.deepStrictEqual(attachmentsOf('look at @src/a.ts and @README.md, then @src/a.ts again', known), [
      { value: 'src/a.ts', label: 'a.ts', detail: 'src/a.ts' },
      { value: 'README.md', label: 'README.md', detail: 'README.md' },
    ]);
    assert.deepStrictEqual(attachmentsOf('explain @selection.', known, 'src/a.ts:3-7'), [{ value: 'selection', label: 'src/a.ts:3-7', detail: 'the selection src/a.ts:3-7' }]);
    // No selection taken, an unknown file, an address: nothing attached.
    assert.deepStrictEqual(attachmentsOf('explain @selection and @nope.ts, mail me@example.com', known), []);
  });
  it('shows a past prompt\'s attachments as the thread kept them, lines and all', () => {
    assert.deepStrictEqual(savedAttachments(['notes.md', 'src/a.ts:3', 'src/deep/b.ts:10-20']), [
      { value: 'notes.md', label: 'notes.md', detail: 'notes.md' },
      { value: 'src/a.ts', label: 'a.ts:3', detail: 'src/a.ts:3' },
      { value: 'src/deep/b.ts', label: 'b.ts:10-20', detail: 'src/deep/b.ts:10-20' },
    ]);
  });
  it('knows @selection only at a word start', () => {
    assert.ok(mentionsSelection('@selection'));
    assert.ok(mentionsSelection('fix (this @selection)'));
    assert.ok(!mentionsSelection('x@selection'));
    assert.ok(!mentionsSelection('@selections'));
  });
  it("a chip's × takes its mention out of the prompt, every time it is named, and nothing else", () => {
    assert.strictEqual(removeMention('look at @src/a.ts and @README.md', 'src/a.ts'), 'look at and @README.md');
    assert.strictEqual(removeMention('@README.md explain @README.md.', 'README.md'), 'explain .');
    assert.strictEqual(removeMention('see @README.mdx and @README.md', 'README.md'), 'see @README.mdx and ');
    assert.strictEqual(removeMention('fix @selection', 'selection'), 'fix ');
  });
  it("the sent prompt's item keeps what it attached", () => {
    const c = new Conversation();
    const attachments = [{ value: 'src/a.ts', label: 'a.ts', detail: 'src/a.ts' }];
    c.begin('look at @src/a.ts', attachments);
    c.begin('and again');
    const items = c.snapshot().items;
    assert.deepStrictEqual(items[0], { type: 'prompt', text: 'look at @src/a.ts', attachments });
    assert.deepStrictEqual(items[1], { type: 'prompt', text: 'and again' });
  });
});

describe('the model and mode pickers', () => {
  it("show the server's mode and model, list the one set and the provider's others once each", () => {
    const state = { ...emptyPickers(), modeSetting: 'acceptEdits', modelSetting: 'claude-sonnet-4-5', mode: 'acceptEdits', model: 'claude-sonnet-4-5', models: ['claude-sonnet-4-5', 'claude-opus-4-5', 'claude-haiku-4-5'] };
    assert.strictEqual(shownMode(state), 'acceptEdits');
    assert.strictEqual(shownModel(state), 'claude-sonnet-4-5');
    assert.deepStrictEqual(modelChoices(state), ['claude-sonnet-4-5', 'claude-opus-4-5', 'claude-haiku-4-5']);
    assert.strictEqual(pickerNote(state), undefined);
  });
  it('offer the efforts of the model shown, and send a chosen one only while that model takes it', () => {
    const efforts = { 'claude-opus-4-6': ['low', 'medium', 'high', 'max'], 'claude-opus-5-5': ['low', 'medium', 'high', 'xhigh', 'max'] };
    const state = { ...emptyPickers(), model: 'claude-opus-5-5', models: ['claude-opus-5-5', 'claude-opus-4-6', 'claude-haiku-4-5'], efforts };
    assert.deepStrictEqual(effortChoices(state), ['low', 'medium', 'high', 'xhigh', 'max']);
    assert.strictEqual(askedEffort(state, 'xhigh'), 'xhigh');
    assert.strictEqual(askedEffort(state, ''), undefined);
    const older = { ...state, modelSetting: 'claude-opus-4-6', settling: true };
    assert.strictEqual(askedEffort(older, 'xhigh'), undefined);
    assert.strictEqual(askedEffort(older, 'max'), 'max');
    const none = { ...state, model: 'claude-haiku-4-5' };
    assert.deepStrictEqual(effortChoices(none), []);
    assert.strictEqual(askedEffort(none, 'max'), undefined);
    assert.deepStrictEqual(effortChoices({ ...state, model: 'constructor' }), []);
  });
  it('before the server answers: the settings, else default and no model', () => {
    assert.strictEqual(shownMode(emptyPickers()), 'default');
    assert.strictEqual(shownModel(emptyPickers()), '');
    assert.deepStrictEqual(modelChoices(emptyPickers()), []);
    assert.strictEqual(shownMode({ ...emptyPickers(), modeSetting: 'plan' }), 'plan');
  });
  it('a choice made during a run shows as chosen and says it applies to the next run', () => {
    const state = { ...emptyPickers(), modeSetting: 'plan', modelSetting: 'qwen3-coder', mode: 'default', model: 'qwen3', models: ['qwen3'], pending: true };
    assert.strictEqual(shownMode(state), 'plan');
    assert.strictEqual(shownModel(state), 'qwen3-coder');
    assert.deepStrictEqual(modelChoices(state), ['qwen3-coder', 'qwen3']);
    assert.match(pickerNote(state) ?? '', /applies to the next run/);
  });
  it('show a new setting, without a note, until the server answers it', () => {
    const state = { ...emptyPickers(), modeSetting: 'plan', modelSetting: 'qwen3-coder', mode: 'default', model: 'qwen3', models: ['qwen3'], settling: true };
    assert.deepStrictEqual([shownMode(state), shownModel(state), pickerNote(state)], ['plan', 'qwen3-coder', undefined]);
  });
  it('say so when the server runs with another mode than the one chosen', () => {
    const state = { ...emptyPickers(), modeSetting: 'acceptEdits', mode: 'plan', model: 'qwen3', models: ['qwen3'] };
    assert.strictEqual(shownMode(state), 'plan');
    assert.match(pickerNote(state) ?? '', /tandem\.permissionMode is acceptEdits, but runs start in plan: a settings file decides it/);
  });
});
