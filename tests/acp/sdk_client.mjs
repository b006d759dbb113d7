// An editor, as an ACP client on the official TypeScript SDK
// (@agentclientprotocol/sdk on npm, whose zod schemas check every request
// and notification Tandem sends), for tests/acp.rs. It starts `tandem acp`
// and plays a client that misbehaves the ways real ones do:
//
// - `read_failures`: {path: from}: the `from`-th read of the file and every
//   later one fail (agent-shell answers fs/read_text_file with an error when
//   the user presses C-g at its "Reload?" prompt); `read_hangs`: {path:
//   from}: the same, never answered;
// - `strip_final_newline`: reads return the text without its final newline
//   (avante.nvim joins a buffer's lines with "\n");
// - `writes`: "ok" (the buffer takes the text), "hang" (never answered),
//   "disk_then_hang" (avante.nvim: the disk is written, the buffer keeps its
//   text, no answer) or "buffer_then_fail" (the buffer takes the text, then
//   an error: its save failed);
// - `second`: a second `tandem acp` process (avante.nvim starts two per
//   chat) loads the same session while the first one's prompt waits on its
//   first permission question, prompts (`while_held`), and prompts again
//   once the first prompt is over (`after`);
// - `cancel_request_on_execute`: the first prompt is withdrawn with
//   `$/cancel_request` (the SDK's cancellationSignal) once a shell command
//   starts;
// - `lifecycle`: after the prompts, the session's life as ACP v1 has it:
//   `session/list`, `session/delete` (twice), `logout`, a `session/new`
//   and a prompt refused while logged out, `authenticate`, a `session/new`
//   again (each outcome in `report.lifecycle`).
//
// - `wait_command`: before prompting, wait (up to 60 s) for an
//   `available_commands_update` offering this command (an MCP server's
//   prompt appears once the server is ready);
// - `prompt_blocks`: prompts given as content blocks, after `prompts`.
//
// Usage: TANDEM_ACP_SDK=DIR node sdk_client.mjs SCENARIO_JSON — prints one
// JSON object (the report).

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const acp = await import(pathToFileURL(join(process.env.TANDEM_ACP_SDK, 'dist/acp.js')).href);
const scenario = JSON.parse(process.argv[2]);

/** One client connection to one `tandem acp` process, with what it saw. */
class Editor {
  constructor(name) {
    this.name = name;
    this.buffers = { ...(scenario.buffers ?? {}) };
    this.readCounts = {};
    this.report = { reads: [], writes: [], asks: [], updates: [], stop_reasons: [], errors: [] };
    this.answers = [...(scenario.answers ?? [])];
    // Called on the first permission question, before it is answered.
    this.onFirstQuestion = undefined;
  }

  async readTextFile(params) {
    const { path } = params;
    this.report.reads.push(path);
    this.readCounts[path] = (this.readCounts[path] ?? 0) + 1;
    const from = scenario.read_failures?.[path];
    if (from !== undefined && this.readCounts[path] >= from) {
      throw new acp.RequestError(-32603, 'the user cancelled the reload of the modified buffer');
    }
    const hangFrom = scenario.read_hangs?.[path];
    if (hangFrom !== undefined && this.readCounts[path] >= hangFrom) return new Promise(() => {});
    let text = path in this.buffers ? this.buffers[path] : readFileSync(path, 'utf8');
    if (scenario.strip_final_newline) text = text.replace(/\r?\n$/, '');
    return { content: text };
  }

  async writeTextFile(params) {
    const { path, content } = params;
    this.report.writes.push({ path, content });
    switch (scenario.writes ?? 'ok') {
      case 'hang':
        return new Promise(() => {});
      case 'disk_then_hang':
        writeFileSync(path, content);
        return new Promise(() => {});
      case 'buffer_then_fail':
        // The buffer took the text, then saving it failed.
        this.buffers[path] = content;
        throw new acp.RequestError(-32603, 'cannot save: the disk is full');
      default:
        this.buffers[path] = content;
        return {};
    }
  }

  async requestPermission(params) {
    this.report.asks.push({ tool_call: params.toolCall, options: params.options.map((o) => o.optionId) });
    if (this.onFirstQuestion) {
      const run = this.onFirstQuestion;
      this.onFirstQuestion = undefined;
      await run();
    }
    const optionId = this.answers.length > 0 ? this.answers.shift() : 'allow_once';
    return { outcome: { outcome: 'selected', optionId } };
  }

  async sessionUpdate(params) {
    this.report.updates.push(params.update);
    const update = params.update;
    if (this.onCommands && update.sessionUpdate === 'available_commands_update') this.onCommands(update.availableCommands);
    if (this.onExecute && update.sessionUpdate === 'tool_call' && update.kind === 'execute') {
      const run = this.onExecute;
      this.onExecute = undefined;
      run();
    }
  }
}

/** Start `tandem acp` and connect `editor` to it. */
function start(editor) {
  const [command, ...args] = scenario.agent;
  const child = spawn(command, args, { cwd: scenario.cwd, stdio: ['pipe', 'pipe', 'inherit'] });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const connection = new acp.ClientSideConnection(() => editor, stream);
  return { child, connection };
}

async function initialize(connection) {
  return connection.initialize({
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    clientInfo: { name: 'tandem-test-sdk-editor', version: '1' },
  });
}

async function prompt(connection, editor, sessionId, text, options) {
  try {
    // prompt() takes no options; request() does (the cancellation signal).
    const blocks = typeof text === 'string' ? [{ type: 'text', text }] : text;
    const params = { sessionId, prompt: blocks };
    const response = options ? await connection.request('session/prompt', params, options) : await connection.prompt(params);
    editor.report.stop_reasons.push(response.stopReason);
  } catch (err) {
    editor.report.errors.push(String(err?.message ?? err));
  }
}

/** End a connection: close the agent's stdin and wait for it to exit. */
async function stop(child) {
  child.stdin.end();
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 10000));
  const code = await Promise.race([exited, timeout]);
  if (code === 'timeout') child.kill('SIGKILL');
  return code;
}

/** What each step of `lifecycle` answered: its result, or its error. */
async function lifecycle(connection, sessionId) {
  const outcome = async (call) => {
    try {
      return { result: (await call()) ?? {} };
    } catch (err) {
      return { error: { code: err?.code, message: String(err?.message ?? err), data: err?.data } };
    }
  };
  const listed = async () => (await connection.listSessions({ cwd: scenario.cwd })).sessions.map((s) => s.sessionId);
  const steps = {};
  steps.listed_before = await listed();
  steps.delete = await outcome(() => connection.deleteSession({ sessionId }));
  steps.delete_again = await outcome(() => connection.deleteSession({ sessionId }));
  steps.listed_after = await listed();
  const other = await connection.newSession({ cwd: scenario.cwd, mcpServers: [] });
  steps.logout = await outcome(() => connection.logout({}));
  steps.new_logged_out = await outcome(() => connection.newSession({ cwd: scenario.cwd, mcpServers: [] }));
  steps.prompt_logged_out = await outcome(() => connection.prompt({ sessionId: other.sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
  steps.authenticate = await outcome(() => connection.authenticate({ methodId: 'environment' }));
  steps.new_again = await outcome(() => connection.newSession({ cwd: scenario.cwd, mcpServers: [] }));
  return steps;
}

const first = new Editor('first');
const { child, connection } = start(first);
const report = { first: first.report };
try {
  await initialize(connection);
  const session = await connection.newSession({ cwd: scenario.cwd, mcpServers: [] });
  report.session_id = session.sessionId;
  let second;
  if (scenario.second) {
    const editor = new Editor('second');
    report.second = editor.report;
    // While the first prompt waits on its question, a second process loads
    // the session and prompts; then the first goes on.
    first.onFirstQuestion = async () => {
      second = { editor, ...start(editor) };
      await initialize(second.connection);
      await second.connection.loadSession({ sessionId: session.sessionId, cwd: scenario.cwd, mcpServers: [] });
      for (const text of scenario.second.while_held ?? []) await prompt(second.connection, editor, session.sessionId, text);
    };
  }
  if (scenario.wait_command) {
    const offered = (commands) => commands.some((c) => c.name === scenario.wait_command);
    const seen = first.report.updates.some((u) => u.sessionUpdate === 'available_commands_update' && offered(u.availableCommands));
    if (!seen) {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no command ${scenario.wait_command} offered in 60 s`)), 60000);
        first.onCommands = (commands) => {
          if (offered(commands)) {
            clearTimeout(timer);
            resolve();
          }
        };
      });
    }
  }
  for (const [index, text] of [...(scenario.prompts ?? []), ...(scenario.prompt_blocks ?? [])].entries()) {
    let options;
    if (index === 0 && scenario.cancel_request_on_execute) {
      const controller = new AbortController();
      first.onExecute = () => controller.abort();
      options = { cancellationSignal: controller.signal };
    }
    await prompt(connection, first, session.sessionId, text, options);
  }
  if (scenario.lifecycle) report.lifecycle = await lifecycle(connection, session.sessionId);
  if (second) {
    for (const text of scenario.second.after ?? []) await prompt(second.connection, second.editor, session.sessionId, text);
    report.second_exit_code = await stop(second.child);
  }
} catch (err) {
  first.report.errors.push(String(err?.stack ?? err));
}
report.exit_code = await stop(child);
report.buffers = first.buffers;
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(0);
