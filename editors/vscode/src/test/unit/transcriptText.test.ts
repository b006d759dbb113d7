// Unit tests of the transcript's text (src/transcriptText.ts), in plain Node.
import * as assert from 'assert';
import type { RunEvent } from '../../runs';
import { TranscriptText, ending, heading, threadText } from '../../transcriptText';

function render(events: RunEvent[]): string {
  const text = new TranscriptText();
  return events.map((event) => text.event(event)).join('') + text.lineBreak();
}

describe('TranscriptText', () => {
  it('shows the todo list as a checklist and a background task as it starts and ends', () => {
    const out = render([
      { type: 'todo', todos: [
        { id: '1', content: 'Read the parser', status: 'completed' },
        { id: '2', content: 'Fix the bug\nwith details', status: 'in_progress' },
        { id: '3', content: 'Run the tests', status: 'pending' },
      ] },
      { type: 'task_started', task_id: '1', command: 'npm run dev' },
      { type: 'task_ended', task_id: '1', command: 'npm run dev', status: 'exited', exit_code: 1, last_lines: ['Error'] },
      { type: 'task_ended', task_id: '2', command: 'sleep 100', status: 'stopped', exit_code: null },
    ]);
    assert.strictEqual(
      out,
      [
        'Todo (1/3)',
        '  [x] Read the parser',
        '  [~] Fix the bug',
        '  [ ] Run the tests',
        '(task 1 started in the background: npm run dev)',
        '(task 1 exited with code 1: npm run dev)',
        '(task 2 stopped: sleep 100)',
        '',
      ].join('\n'),
    );
  });

  it('nests a sub-agent under its agent call, and a forked skill inside it one level deeper', () => {
    const out = render([
      { type: 'text', text: 'Let me ' },
      { type: 'text', text: 'look around.' },
      { type: 'tool_call', input: {}, id: 'c1', name: 'agent', summary: 'explore: find the parser' },
      { type: 'text', text: 'Searching ', parent: 'c1' },
      { type: 'text', text: 'the code.\nTwo places.', parent: 'c1' },
      { type: 'tool_call', id: 'c2', name: 'grep_search', input: { pattern: 'fn parse' }, parent: 'c1' },
      { type: 'tool_result', is_error: false, id: 'c2', content: 'src/a.rs:3\nsrc/b.rs:9', parent: 'c1' },
      { type: 'tool_call', input: {}, id: 'c3', name: 'skill', summary: 'summarise', parent: 'c1' },
      { type: 'text', text: 'Summary: parse is in a.rs.', parent: 'c3' },
      { type: 'tool_result', is_error: false, id: 'c3', content: 'Summary: parse is in a.rs.', parent: 'c1' },
      { type: 'text', text: 'It is in a.rs.', parent: 'c1' },
      { type: 'tool_result', is_error: false, id: 'c1', content: 'It is in a.rs.' },
      { type: 'text', text: 'The parser is in a.rs.' },
    ]);
    assert.strictEqual(
      out,
      [
        'Let me look around.',
        '→ agent explore: find the parser',
        '    │ Searching the code.',
        '    │ Two places.',
        '    │ → grep_search fn parse',
        '    │   ✓ src/a.rs:3',
        '    │ → skill summarise',
        '    │     │ Summary: parse is in a.rs.',
        '    │   ✓ Summary: parse is in a.rs.',
        '    │ It is in a.rs.',
        '  ✓ It is in a.rs.',
        'The parser is in a.rs.',
        '',
      ].join('\n'),
    );
  });

  it('keeps a run without sub-agents flat, and an unknown parent one level in', () => {
    const out = render([
      { type: 'text', text: 'Reading.\n' },
      { type: 'tool_call', input: {}, id: 'r1', name: 'read_file', summary: 'notes.txt' },
      { type: 'tool_result', id: 'r1', content: '1 | line one', is_error: false },
      { type: 'tool_call', input: {}, id: 'e1', name: 'edit_file', summary: 'notes.txt' },
      { type: 'tool_result', id: 'e1', content: 'refused', is_error: true },
      { type: 'tool_call', input: {}, id: 'e2', name: 'edit_file', summary: 'app.py' },
      { type: 'tool_result', id: 'e2', content: 'Partly applied: the user accepted 1 of the 2 hunks of the edit to app.py', is_error: true, edit: { uri: 'file:///app.py', status: 'partial' } },
      { type: 'text', text: 'late', parent: 'gone' },
      { type: 'retry', delay_ms: 1000, attempt: 1, reason: 'overloaded' },
    ]);
    assert.strictEqual(
      out,
      [
        'Reading.',
        '→ read_file notes.txt',
        '  ✓ 1 | line one',
        '→ edit_file notes.txt',
        '  ✗ refused',
        '→ edit_file app.py',
        '  ◐ Partly applied: the user accepted 1 of the 2 hunks of the edit to app.py',
        '    │ late',
        '(retrying, attempt 1: overloaded)',
        '',
      ].join('\n'),
    );
  });
});

describe('threadText', () => {
  it("shows a thread's past as the live transcript showed its runs", () => {
    const first: RunEvent[] = [
      { type: 'tool_call', id: 't1', name: 'read_file', input: { file_path: 'notes.txt' } },
      { type: 'tool_result', is_error: false, id: 't1', content: '   1 | line one\n   2 | line two' },
      { type: 'text', text: 'It has two lines.' },
    ];
    const second: RunEvent[] = [{ type: 'text', text: 'Sorry.' }];
    // Live: a heading, the events, the end marker (what Transcript writes).
    const live = (title: string, events: RunEvent[], status: string, text: string) =>
      heading(title) + render(events) + ending(status, text);
    const past = threadText([
      { type: 'prompt', text: 'what is in notes.txt?\n(second line)' },
      ...first,
      { type: 'end', status: 'completed', text: 'It has two lines.' },
      { type: 'prompt', text: 'and now?' },
      ...second,
      { type: 'end', status: 'failed', text: 'the model is overloaded' },
    ]);
    assert.strictEqual(past, live('what is in notes.txt?', first, 'completed', 'It has two lines.') + live('and now?', second, 'failed', 'the model is overloaded'));
    assert.strictEqual(
      past,
      [
        '',
        '## what is in notes.txt?',
        '',
        '→ read_file notes.txt',
        '  ✓    1 | line one',
        'It has two lines.',
        '',
        '— completed —',
        '',
        '## and now?',
        '',
        'Sorry.',
        '',
        '— failed —',
        'the model is overloaded',
        '',
      ].join('\n'),
    );
  });

  it('says how many earlier events were left out', () => {
    assert.ok(threadText([], 3).startsWith('(3 earlier events of this conversation are not shown)\n'));
  });
});
