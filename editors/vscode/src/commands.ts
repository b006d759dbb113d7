// The commands: "Ask agent", "New Conversation", "Resume Conversation",
// "Cancel run", "Show transcript", "Set API Key", "Use a local model", "Set server path",
// "Restart server", and the internal
// `tandem.runAsk` that every run goes through (palette, code actions, chat).
import * as vscode from 'vscode';
import { CancellationTokenSource, WorkDoneProgress } from 'vscode-languageclient/node';
import { SECRET_KEYS, TandemServer, workspaceFolders } from './client';
import { AskResult, editLanded, endSummary, firstLine, LOCAL_MODEL_URL, localModelSettings, ownText, relativePath } from './logic';
import type { PastEvent } from './events';
import { RunEvent, RunEventParams } from './runs';

export interface AskArgument {
  prompt: string;
  textDocument?: { uri: string };
  range?: unknown;
  diagnostics?: unknown[];
  /** Files the user attached (`@path`): the server sends their text to the model. */
  attachments?: { uri: string }[];
  wait?: boolean;
  /** The conversation thread to continue (the server answers it). */
  threadId?: string;
  /** "Send review to agent": the user's comments on the run's changes, sent with `tandem.sendReview` (the prompt is only shown). */
  comments?: { uri: string; startLine: number; endLine: number; comment: string }[];
  /** Images sent with the prompt (pasted or dropped in the panel): base64, the server checks them. */
  images?: AskImage[];
  /** This run's effort (the panel's effort picker), over the effort setting; the server refuses one the model does not take. */
  effort?: string;
}

/** An image of `tandem.ask` (docs/protocol.md): its bytes as base64, and its name for messages. */
export interface AskImage {
  data: string;
  name?: string;
}

/** The images a webview message carries, as `tandem.ask` takes them (anything else dropped). */
export function pastedImages(value: unknown): AskImage[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((i): i is { data: string; name?: unknown } => typeof i === 'object' && i !== null && typeof (i as { data?: unknown }).data === 'string')
    .map((i) => (typeof i.name === 'string' ? { data: i.data, name: i.name } : { data: i.data }));
}

let progressTokens = 0;

/** How a run shows itself beside the transcript. */
export interface AskOptions {
  /** A progress notification with Cancel (the panel has its own Stop). */
  progress: boolean;
  /** The end-of-run notification of this result (the panel shows the end when it is visible). */
  announce: (result: AskResult) => boolean;
}

const NOTIFY: AskOptions = { progress: true, announce: () => true };

/** Cancel the active run: the server stops it, an open review is discarded. */
export async function cancelRun(server: TandemServer, quiet = false): Promise<void> {
  const runId = server.runs.current;
  const client = server.client;
  if (!runId || !client) {
    if (!quiet) void vscode.window.showInformationMessage('Tandem: no run is active.');
    return;
  }
  if (runId === 'starting') {
    server.runs.cancelStarting?.cancel();
    return;
  }
  server.runs.markCancelled(runId);
  // The cancel goes out before the review is discarded: the discarded
  // review answers the server's applyEdit, and were that answer first, the
  // run would go on to its end (the edit declined) before the cancel came.
  const cancelling = client.sendRequest('workspace/executeCommand', {
    command: 'tandem.cancel',
    arguments: [{ runId }],
  }) as Promise<{ cancelled?: boolean }>;
  await server.discardReview();
  const answer = await cancelling;
  if (!answer?.cancelled && !quiet) {
    void vscode.window.showInformationMessage(`Tandem: ${runId} had already ended; no run is active.`);
  }
}

/**
 * Run `tandem.ask` with a cancellable progress notification, frame it in
 * the transcript, and say how it ended. `onEvent` also gets the run's
 * events (the chat participant streams them).
 */
export async function runAsk(
  server: TandemServer,
  argument: AskArgument,
  onEvent?: (params: RunEventParams) => void,
  outerToken?: vscode.CancellationToken,
  options: AskOptions = NOTIFY,
): Promise<AskResult | undefined> {
  const client = await server.ready();
  if (!client) return undefined;
  if (server.runs.current) {
    void vscode.window.showWarningMessage(
      `Tandem: a run is already active (${server.runs.current}). Wait for it or run "Tandem: Cancel run".`,
    );
    return undefined;
  }
  // Code actions carry "wait": false (for editors that run commands
  // synchronously); the extension waits without blocking, for the answer.
  argument = { ...argument };
  delete argument.wait;
  if (argument.threadId === undefined && server.runs.thread !== undefined) argument.threadId = server.runs.thread;
  server.runs.begin(argument.prompt);
  server.transcript.start(argument.prompt);
  const events = onEvent ? server.runs.onEvent(onEvent) : undefined;
  const starting = new CancellationTokenSource();
  server.runs.cancelStarting = starting;
  const announce = (result: AskResult) => {
    if (options.announce(result)) void announceEnd(result);
  };
  let outcome: (AskResult & { threadId?: string }) | undefined;
  const location = options.progress ? vscode.ProgressLocation.Notification : vscode.ProgressLocation.Window;
  try {
    return (outcome = await vscode.window.withProgress(
      { location, title: 'Tandem', cancellable: options.progress },
      async (progress, token) => {
        const workDoneToken = `tandem-vscode-${++progressTokens}`;
        const reports = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
          if (value.kind !== 'end' && value.message) progress.report({ message: value.message });
        });
        const cancel = () => void cancelRun(server, true);
        const cancels = [token.onCancellationRequested(cancel), outerToken?.onCancellationRequested(cancel)];
        progress.report({ message: firstLine(argument.prompt).slice(0, 80) });
        try {
          const result = (await client.sendRequest(
            'workspace/executeCommand',
            // A review's prompt is the server's, made of its comments.
            argument.comments ? { command: 'tandem.sendReview', arguments: [{ ...argument, prompt: '' }], workDoneToken } : { command: 'tandem.ask', arguments: [argument], workDoneToken },
            starting.token,
          )) as AskResult & { threadId?: string };
          server.transcript.finish(result, workspaceFolders());
          announce(result);
          return result;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          if (starting.token.isCancellationRequested) {
            // Cancelled before the server named the run: $/cancelRequest stopped it.
            const result: AskResult = { runId: '', status: 'cancelled', text: 'cancelled before the run started', edits: [] };
            server.transcript.finish(result, workspaceFolders());
            announce(result);
            return result;
          }
          const result: AskResult = { runId: server.runs.current ?? '', status: 'failed', text: message, edits: [] };
          server.transcript.finish(result, workspaceFolders());
          // A panel that is showing says it as the run's end.
          if (options.announce(result)) void vscode.window.showErrorMessage(`Tandem: ${message}`);
          return result;
        } finally {
          reports.dispose();
          cancels.forEach((c) => c?.dispose());
        }
      },
    ));
  } finally {
    events?.dispose();
    server.runs.cancelStarting = undefined;
    server.runs.end(outcome);
  }
}

/** The end-of-run notification, with the changed files to open. */
async function announceEnd(result: AskResult): Promise<void> {
  const folders = workspaceFolders();
  const message = endSummary(result, folders);
  // One button per changed file (two edits of one file are one button).
  const changed = result.edits.filter(editLanded).filter((e, i, all) => all.findIndex((o) => o.uri === e.uri) === i).slice(0, 2);
  // Undo takes the whole run back (tandem.undo), buffers and disk alike.
  const undoable = result.runId !== '' && result.edits.some(editLanded);
  const buttons = [...changed.map((e) => `Open ${relativePath(e.uri, folders)}`), ...(undoable ? ['Undo'] : []), 'Show transcript'];
  const show =
    result.status === 'completed'
      ? vscode.window.showInformationMessage
      : result.status === 'cancelled'
        ? vscode.window.showWarningMessage
        : vscode.window.showErrorMessage;
  const choice = await show(message, ...buttons);
  const opened = changed.find((e) => choice === `Open ${relativePath(e.uri, folders)}`);
  if (opened) {
    await vscode.window.showTextDocument(vscode.Uri.parse(opened.uri));
  } else if (choice === 'Undo') {
    await vscode.commands.executeCommand('tandem.undoRun', result.runId);
  } else if (choice === 'Show transcript') {
    await vscode.commands.executeCommand('tandem.showTranscript');
  }
}

/** A thread as `tandem.threads` lists it. */
interface ThreadSummary {
  threadId: string;
  title: string;
  lastActivity: string;
  runs: number;
}

/**
 * Continue a saved conversation thread: `threadId`, or one picked from this
 * workspace's threads. The transcript shows its whole past
 * (`tandem.transcript`), and the next ask continues it.
 */
/** How often, and how far apart, a restored panel looks again for the end of a run its window's previous server was ending. */
const RESTORE_LOOKS = 20;
const RESTORE_LOOK_MS = 500;

/** The thread's last run has ended (or there is none): its past ends with the run's `end` (and its `edits`). */
function runEnded(events: PastEvent[]): boolean {
  const last = events.at(-1);
  return last === undefined || last.type === 'end' || last.type === 'edits';
}

export async function resumeConversation(server: TandemServer, threadId?: string, quiet = false): Promise<void> {
  const client = await server.ready();
  if (!client) return;
  if (server.runs.current) {
    void vscode.window.showWarningMessage(`Tandem: a run is active (${server.runs.current}). Wait for it or cancel it first.`);
    return;
  }
  let title: string | undefined;
  try {
    if (!threadId) {
      const listed = (await client.sendRequest('workspace/executeCommand', { command: 'tandem.threads', arguments: [] })) as {
        threads?: ThreadSummary[];
      };
      const threads = listed?.threads ?? [];
      if (threads.length === 0) {
        void vscode.window.showInformationMessage('Tandem: no saved conversation in this workspace.');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        threads.map((t) => ({
          label: t.title || t.threadId,
          description: `${t.lastActivity.slice(0, 16).replace('T', ' ')} · ${t.runs} run${t.runs === 1 ? '' : 's'}`,
          threadId: t.threadId,
        })),
        { placeHolder: 'Resume a Tandem conversation' },
      );
      if (!pick) return;
      threadId = pick.threadId;
      title = pick.label;
    }
    const transcript = async () =>
      (await client.sendRequest('workspace/executeCommand', {
        command: 'tandem.transcript',
        arguments: [{ threadId }],
      })) as { events?: PastEvent[]; omitted?: number };
    let past = await transcript();
    server.runs.setThread({ threadId, title, past: past?.events ?? [], omitted: past?.omitted ?? 0 });
    // After a window reload the window's previous server may still be
    // ending the thread's last run (cancelled by the reload: its edit's
    // status and its end are written as it stops): look again until the
    // run has ended, a bounded number of times, so the panel does not
    // keep showing a run that is over as running.
    for (let look = 0; quiet && look < RESTORE_LOOKS && !runEnded(past?.events ?? []); look++) {
      await new Promise((resolve) => setTimeout(resolve, RESTORE_LOOK_MS));
      if (server.runs.current || server.runs.thread !== threadId) break;
      past = await transcript();
      if (runEnded(past?.events ?? [])) server.runs.setThread({ threadId, title, past: past?.events ?? [], omitted: past?.omitted ?? 0 });
    }
    server.transcript.replay(past?.events ?? [], past?.omitted ?? 0);
    if (!quiet) void vscode.window.showInformationMessage('Tandem: resumed the conversation; the next ask continues it.');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (!quiet) void vscode.window.showErrorMessage(`Tandem: cannot resume the conversation: ${message}`);
    else server.logLine(`cannot show the panel's conversation ${threadId ?? ''} again: ${message}`);
  }
}

function editorArgument(prompt: string, client: TandemServer['client']): AskArgument {
  const editor = vscode.window.activeTextEditor;
  const argument: AskArgument = { prompt };
  if (editor && client) {
    argument.textDocument = { uri: editor.document.uri.toString() };
    if (!editor.selection.isEmpty) argument.range = client.code2ProtocolConverter.asRange(editor.selection);
  }
  return argument;
}

export function registerCommands(context: vscode.ExtensionContext, server: TandemServer): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('tandem.askAgent', async () => {
      const client = await server.ready();
      if (!client) return;
      const prompt = await vscode.window.showInputBox({ prompt: 'Ask Tandem', placeHolder: 'What should the agent do?' });
      if (!prompt) return;
      await runAsk(server, editorArgument(prompt, client));
    }),
    vscode.commands.registerCommand('tandem.runAsk', (argument: AskArgument) => runAsk(server, argument)),
    vscode.commands.registerCommand('tandem.cancelRun', () => cancelRun(server)),
    // After a run: comments on its changes, kept until sent.
    vscode.commands.registerCommand('tandem.commentOnSelection', async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.document.uri.scheme !== 'file') {
        void vscode.window.showInformationMessage('Tandem: select lines of a file the run changed, then comment on them.');
        return;
      }
      const { start, end } = editor.selection;
      // A selection that ends at a line's start does not take that line.
      const last = end.line > start.line && end.character === 0 ? end.line - 1 : end.line;
      const lines = start.line === last ? `line ${start.line + 1}` : `lines ${start.line + 1}-${last + 1}`;
      const words = await vscode.window.showInputBox({ prompt: `Your comment on ${lines}, for Tandem (sent with "Send review to agent")` });
      if (!words?.trim()) return;
      server.setReviewComments([...server.reviewComments, { uri: editor.document.uri.toString(), startLine: start.line + 1, endLine: last + 1, comment: words.trim() }]);
    }),
    vscode.commands.registerCommand('tandem.sendReviewToAgent', async () => {
      const comments = server.reviewComments;
      if (comments.length === 0) {
        void vscode.window.showInformationMessage('Tandem: no review comments to send. Select changed lines and run "Tandem: Comment on Selection for Review" first.');
        return;
      }
      server.setReviewComments([]);
      await runAsk(server, { prompt: `Review: ${comments.length} comment${comments.length === 1 ? '' : 's'} on the changes`, comments });
    }),
    // The panel passes `{quiet: true}`: it shows the new conversation itself.
    vscode.commands.registerCommand('tandem.newConversation', (options?: { quiet?: boolean }) => {
      server.runs.setThread({ threadId: undefined, past: [], omitted: 0 });
      server.transcript.clear();
      if (options?.quiet !== true) void vscode.window.showInformationMessage('Tandem: the next ask starts a new conversation.');
    }),
    vscode.commands.registerCommand('tandem.resumeConversation', (threadId?: string) => resumeConversation(server, threadId)),
    vscode.commands.registerCommand('tandem.showTranscript', () => server.transcript.show()),
    vscode.commands.registerCommand('tandem.restartServer', () => server.restart('restart requested')),
    vscode.commands.registerCommand('tandem.setApiKey', async () => {
      const pick = await vscode.window.showQuickPick(
        [
          { label: 'Anthropic', key: 'anthropic' as const },
          { label: 'OpenAI or OpenAI-compatible', key: 'openai' as const },
        ],
        { placeHolder: 'Which provider is the key for?' },
      );
      if (!pick) return;
      const value = await vscode.window.showInputBox({
        prompt: `${pick.label} API key (stored in VS Code's SecretStorage; empty removes it)`,
        password: true,
        ignoreFocusOut: true,
      });
      if (value === undefined) return;
      if (value.trim() === '') {
        await context.secrets.delete(SECRET_KEYS[pick.key]);
        void vscode.window.showInformationMessage(`Tandem: the ${pick.label} key was removed; the server restarts.`);
      } else {
        await context.secrets.store(SECRET_KEYS[pick.key], value.trim());
        void vscode.window.showInformationMessage(`Tandem: the ${pick.label} key is stored; the server restarts.`);
      }
    }),
    // The walkthrough's "Use a local model": the provider is named with the
    // URL, so no stored API key can send the prompts elsewhere. The boxes
    // start from the user's own values, never a folder's (Enter would write
    // the folder's URL into the user's settings).
    vscode.commands.registerCommand('tandem.useLocalModel', async () => {
      const config = vscode.workspace.getConfiguration('tandem');
      const url = await vscode.window.showInputBox({
        prompt: 'Base URL of the OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio)',
        value: ownText(config.inspect('baseUrl')) || LOCAL_MODEL_URL,
        ignoreFocusOut: true,
        validateInput: (value) => (/^https?:\/\/\S+$/.test(value.trim()) ? undefined : 'a URL such as http://localhost:11434/v1'),
      });
      if (url === undefined) return;
      const model = await vscode.window.showInputBox({
        prompt: "The model's name on that server (for Ollama, as `ollama list` shows it)",
        value: ownText(config.inspect('model')) ?? '',
        ignoreFocusOut: true,
        validateInput: (value) => (value.trim() !== '' ? undefined : 'the server needs a model name'),
      });
      if (model === undefined) return;
      for (const [key, value] of Object.entries(localModelSettings(url, model))) {
        await config.update(key, value, vscode.ConfigurationTarget.Global);
      }
      void vscode.window.showInformationMessage(`Tandem: prompts go to ${url.trim()} (${model.trim()}); the server restarts.`);
    }),
    vscode.commands.registerCommand('tandem.setServerPath', async () => {
      const config = vscode.workspace.getConfiguration('tandem');
      const value = await vscode.window.showInputBox({
        prompt: 'Path to the tandem binary',
        value: ownText(config.inspect('serverPath')) ?? 'tandem',
        ignoreFocusOut: true,
      });
      if (value === undefined) return;
      await config.update('serverPath', value.trim(), vscode.ConfigurationTarget.Global);
    }),
  );
}
