// The real `tandem lsp` on the wire, driven with Microsoft's
// vscode-languageserver-protocol (the library under vscode-languageclient),
// answering the server's requests as VS Code does: the client advertises
// change annotations, and an edit marked `needsConfirmation` is the Refactor
// Preview's to apply or reject.
//
// The binary: $TANDEM_BIN, else ../../target/debug/tandem (cargo build).
import * as assert from 'assert';
import { spawn, ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import {
  createProtocolConnection,
  ProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { REJECTED_IN_PREVIEW, needsConfirmation, serverSettings, textInputAnswer } from '../../logic';
import type { RunEvent } from '../../runs';
import { TranscriptText, ending, heading, threadText } from '../../transcriptText';

const BIN = process.env.TANDEM_BIN ?? path.resolve(__dirname, '../../../../../target/debug/tandem');

interface Position {
  line: number;
  character: number;
}
interface TextEdit {
  range: { start: Position; end: Position };
  newText: string;
  annotationId?: string;
}

/** Apply LSP text edits (UTF-16 positions, as JavaScript strings are). */
function applyEdits(text: string, edits: TextEdit[]): string {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const offset = (p: Position) => Math.min((lineStarts[p.line] ?? text.length) + p.character, text.length);
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  for (const edit of sorted) {
    text = text.slice(0, offset(edit.range.start)) + edit.newText + text.slice(offset(edit.range.end));
  }
  return text;
}

interface Session {
  connection: ProtocolConnection;
  process: ChildProcess;
  root: string;
  events: { type: string; is_error?: boolean; content?: string }[];
  applyEdits: { edit: { documentChanges: { edits: TextEdit[] }[]; changeAnnotations?: Record<string, unknown> } }[];
  /** The `tandem/textInput` requests, answered with `typed`. */
  textInputs: { prompt?: string }[];
}

/** What the user types into an input box (`tandem/textInput`); undefined dismisses it. */
let typed: string | undefined;

/** A workspace with `files`, the server started on it with a model script. */
async function start(
  files: Record<string, string>,
  turns: unknown[],
  options: Record<string, unknown>,
  answerEdit: (params: Session['applyEdits'][0]) => 'apply' | 'reject',
  document: { name: string; text: string },
): Promise<Session & { uri: string; text: () => string }> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-wire-')));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(root, name), text);
  const script = path.join(root, '..', path.basename(root) + '-script.json');
  fs.writeFileSync(script, JSON.stringify({ turns }));
  const child = spawn(BIN, ['lsp'], {
    cwd: root,
    // Conversation threads are saved beside the workspace, not in the user's data folder.
    env: { ...process.env, TANDEM_PROVIDER: 'scripted', TANDEM_SCRIPT: script, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', XDG_DATA_HOME: `${root}-data` },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const session: Session = { connection, process: child, root, events: [], applyEdits: [], textInputs: [] };
  const uri = pathToFileURL(path.join(root, document.name)).toString();
  let text = document.text;
  let version = 1;
  connection.onNotification('tandem/runEvent', (params: { event: Session['events'][0] }) => session.events.push(params.event));
  connection.onRequest('workspace/configuration', () => [{}]);
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('window/showMessageRequest', (params: { actions?: { title: string }[] }) =>
    (params.actions ?? []).find((a) => a.title === 'Allow once' || a.title === 'Keep planning') ?? null,
  );
  connection.onRequest('window/showDocument', () => ({ success: true }));
  // As the extension answers it: the input box's value, or null.
  connection.onRequest('tandem/textInput', (params: { prompt?: string }) => {
    session.textInputs.push(params);
    return textInputAnswer(typed);
  });
  connection.onRequest('workspace/applyEdit', (params: Session['applyEdits'][0]) => {
    session.applyEdits.push(params);
    if (answerEdit(params) === 'reject') {
      return { applied: false, failureReason: REJECTED_IN_PREVIEW };
    }
    // As VS Code: the buffer changes, then didChange, then the answer.
    const edits = params.edit.documentChanges.flatMap((c) => c.edits);
    text = applyEdits(text, edits);
    version += 1;
    connection.sendNotification('textDocument/didChange', {
      textDocument: { uri, version },
      contentChanges: [{ text }],
    });
    return { applied: true };
  });
  connection.listen();
  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(root).toString(),
    workspaceFolders: [{ uri: pathToFileURL(root).toString(), name: 'w' }],
    clientInfo: { name: 'Visual Studio Code', version: '1.139.0' },
    capabilities: {
      workspace: {
        applyEdit: true,
        configuration: true,
        workspaceEdit: { documentChanges: true, changeAnnotationSupport: { groupsOnLabel: true } },
      },
      window: { workDoneProgress: true, showDocument: { support: true } },
    },
    initializationOptions: { tandem: options },
  });
  await connection.sendNotification('initialized', {});
  await connection.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'plaintext', version, text },
  });
  return { ...session, uri, text: () => text };
}

/**
 * Wait (bounded) until `done` holds. The server's answer to tandem.ask and
 * its last `tandem/runEvent` notification travel on one pipe but from two
 * queues inside the server, so a client can see the answer first.
 */
async function waitUntil(what: string, done: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function stop(session: Session): Promise<void> {
  await session.connection.sendRequest('shutdown');
  await session.connection.sendNotification('exit');
  session.connection.dispose();
  await new Promise((resolve) => (session.process.exitCode !== null ? resolve(null) : session.process.once('exit', resolve)));
  fs.rmSync(session.root, { recursive: true, force: true });
  fs.rmSync(`${session.root}-data`, { recursive: true, force: true });
}

const turns = [
  { text: 'Reading.', tool_calls: [{ name: 'read_file', input: { file_path: 'notes.txt' } }] },
  { text: 'Editing.', tool_calls: [{ name: 'edit_file', input: { file_path: 'notes.txt', old_string: 'line three', new_string: 'LINE THREE' } }] },
  { text: 'Done.' },
];
const onDisk = 'line one\nline two\nline three\n';
const unsaved = 'typed, not saved\nline two\nline three\n';

interface Answer {
  status: string;
  text: string;
  edits: { uri: string; status: string; ranges: { startLine: number; endLine: number }[]; toolCallId?: string }[];
}

describe('tandem lsp, answered as VS Code answers', function () {
  before(function () {
    if (!fs.existsSync(BIN)) {
      throw new Error(`no tandem binary at ${BIN}: run cargo build, or set TANDEM_BIN`);
    }
  });

  it('sends a review edit confirmed in the Refactor Preview; the unsaved buffer keeps the typing, the disk is untouched', async () => {
    const s = await start({ 'notes.txt': onDisk }, turns, { provider: '', model: '' }, () => 'apply', {
      name: 'notes.txt',
      text: unsaved,
    });
    try {
      const answer = (await s.connection.sendRequest('workspace/executeCommand', {
        command: 'tandem.ask',
        arguments: [{ prompt: 'Capitalise line three', textDocument: { uri: s.uri } }],
      })) as Answer;
      assert.strictEqual(answer.status, 'completed', JSON.stringify(answer));
      assert.deepStrictEqual(answer.edits, [{ uri: s.uri, status: 'applied', ranges: [{ startLine: 3, endLine: 3 }], toolCallId: 'toolu_script_2_1' }]);
      assert.strictEqual(s.applyEdits.length, 1);
      assert.ok(needsConfirmation(s.applyEdits[0].edit as never), JSON.stringify(s.applyEdits[0]));
      assert.strictEqual(s.text(), 'typed, not saved\nline two\nLINE THREE\n');
      assert.strictEqual(fs.readFileSync(path.join(s.root, 'notes.txt'), 'utf8'), onDisk);
      await waitUntil('the run events end with "end"', () => s.events.some((e) => e.type === 'end'));
    } finally {
      await stop(s);
    }
  });

  it('an edit not applied in the Refactor Preview is "rejected", and the model is told why', async () => {
    const s = await start({ 'notes.txt': onDisk }, turns, {}, () => 'reject', { name: 'notes.txt', text: unsaved });
    try {
      const answer = (await s.connection.sendRequest('workspace/executeCommand', {
        command: 'tandem.ask',
        arguments: [{ prompt: 'Capitalise line three' }],
      })) as Answer;
      assert.deepStrictEqual(answer.edits, [{ uri: s.uri, status: 'rejected', ranges: [], toolCallId: 'toolu_script_2_1' }], JSON.stringify(answer));
      assert.strictEqual(s.text(), unsaved);
      const result = s.events.filter((e) => e.type === 'tool_result')[1];
      assert.strictEqual(result.is_error, true);
      assert.ok(result.content?.includes(REJECTED_IN_PREVIEW), result.content);
    } finally {
      await stop(s);
    }
  });

  it('"Keep planning" in plan mode asks for feedback in an input box, and the model gets the typed text', async () => {
    const planTurns = [
      { text: '', tool_calls: [{ name: 'tool_search', input: { query: 'select:enter_plan_mode' } }] },
      { text: '', tool_calls: [{ name: 'enter_plan_mode', input: {} }] },
      { text: '', tool_calls: [{ name: 'exit_plan_mode', input: {} }] },
      { text: 'Replanning.' },
    ];
    // The initialization options the extension sends with empty settings.
    const s = await start({ 'notes.txt': onDisk }, planTurns, serverSettings(() => undefined) as never, () => 'apply', {
      name: 'notes.txt',
      text: onDisk,
    });
    typed = 'Split step 2 into two steps.';
    try {
      const answer = (await s.connection.sendRequest('workspace/executeCommand', {
        command: 'tandem.ask',
        arguments: [{ prompt: 'Plan it' }],
      })) as Answer;
      assert.strictEqual(answer.status, 'completed', JSON.stringify(answer));
      assert.deepStrictEqual(s.textInputs.map((p) => p.prompt), ['Tandem keeps planning. What should change in the plan?']);
      const exit = s.events.filter((e) => e.type === 'tool_result')[2];
      assert.strictEqual(exit.content, 'User rejected the plan and wants to keep planning.\n\nUser feedback: Split step 2 into two steps.');
    } finally {
      typed = undefined;
      await stop(s);
    }
  });

  it('acceptEdits sends the edit without a review annotation', async () => {
    const s = await start({ 'notes.txt': onDisk }, turns, { permissionMode: 'acceptEdits' }, () => 'apply', {
      name: 'notes.txt',
      text: onDisk,
    });
    try {
      const answer = (await s.connection.sendRequest('workspace/executeCommand', {
        command: 'tandem.ask',
        arguments: [{ prompt: 'Capitalise line three' }],
      })) as Answer;
      assert.strictEqual(answer.status, 'completed', JSON.stringify(answer));
      assert.strictEqual(needsConfirmation(s.applyEdits[0].edit as never), false);
      assert.strictEqual(s.text(), 'line one\nline two\nLINE THREE\n');
    } finally {
      await stop(s);
    }
  });
  it("tandem.transcript gives a thread's past, shown as the live transcript showed it", async () => {
    const script = [turns[0], { text: 'It has three lines.' }];
    const s = await start({ 'notes.txt': onDisk }, script, {}, () => 'apply', { name: 'notes.txt', text: onDisk });
    try {
      const ask = async (prompt: string, threadId?: string) =>
        (await s.connection.sendRequest('workspace/executeCommand', {
          command: 'tandem.ask',
          arguments: [{ prompt, textDocument: { uri: s.uri }, threadId }],
        })) as Answer & { threadId: string };
      const first = await ask('what is in notes.txt?');
      await waitUntil('the first run ended', () => s.events.filter((e) => e.type === 'end').length === 1);
      const second = await ask('and now?', first.threadId);
      assert.strictEqual(second.threadId, first.threadId);
      await waitUntil('the second run ended', () => s.events.filter((e) => e.type === 'end').length === 2);
      // What the live transcript showed: each run's heading, events, end marker.
      const live: string[] = [];
      let run = new TranscriptText();
      let text = '';
      const prompts = ['what is in notes.txt?', 'and now?'];
      for (const event of s.events as RunEvent[]) {
        if (text === '') text = heading(prompts[live.length]);
        if (event.type === 'end') {
          live.push(text + run.lineBreak() + ending(event.status ?? '', event.text));
          run = new TranscriptText();
          text = '';
        } else {
          text += run.event(event);
        }
      }
      const past = (await s.connection.sendRequest('workspace/executeCommand', {
        command: 'tandem.transcript',
        arguments: [{ threadId: first.threadId }],
      })) as { events: RunEvent[]; omitted: number };
      assert.strictEqual(past.omitted, 0);
      assert.strictEqual(threadText(past.events, past.omitted), live.join(''));
      assert.ok(live[0].includes('→ read_file notes.txt') && live[1].startsWith('\n## and now?'), live.join(''));
    } finally {
      await stop(s);
    }
  });
});
