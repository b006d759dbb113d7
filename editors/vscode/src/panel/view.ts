// The Tandem panel: a webview view (`tandem.panel`, in its own container of
// the secondary side bar) showing the conversation (panel/conversation.ts)
// and taking prompts, Stop, thread changes and answers to the server's
// questions (panel/asks.ts). The webview is only a view: it is sent a
// snapshot whenever it (re)loads, so a webview reloaded mid-run shows what
// it missed and follows the run on. The current thread is kept in the
// workspace state, so after a window reload the panel shows that thread's
// past (`tandem.transcript`) and the next prompt continues it.
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { TandemServer, workspaceFolders } from '../client';
import { cancelRun, resumeConversation, runAsk, AskArgument, AskImage, pastedImages } from '../commands';
import { EditResult, relativePath, taskState, userSetting } from '../logic';
import type { PastEvent } from '../events';
import { statusLanded } from '../events';
import { Asks } from './asks';
import { Conversation, EndEdit, Endpoint, PanelItem, titleOf } from './conversation';
import type { FromWebview, ToWebview } from './conversation';
import { Attachment, attachmentsOf, HISTORY_LIMIT, mentionedFiles, mentionsSelection, rankFiles, savedAttachments } from './input';
import { emptyPickers, OTHER_MODEL, PERMISSION_MODES, PickerState } from './pickers';
import { safeUrl } from './links';
import { onDidRestore, undoRun } from '../undo';
import { onDidListTasks, stopTask } from '../tasks';
import { TandemStatusBar } from './statusBar';

export const VIEW_ID = 'tandem.panel';
const THREAD_KEY = 'tandem.panel.thread';
const HISTORY_KEY = 'tandem.panel.history';
/** The most workspace files offered for `@` mentions. */
const MENTION_FILES = 5000;


/** The selection an `@selection` mention refers to, taken when it was mentioned. */
interface Selection {
  uri: string;
  range: unknown;
  label: string;
}

/**
 * The thread the panel shows, kept for the next window of this workspace:
 * in the workspace state, and in a file of the extension's storage folder,
 * written at once. A window reloaded right after a run began (its edit
 * waiting in the Refactor Preview) may find the workspace state without
 * the last write; the file has it.
 */
class PanelThread {
  constructor(private readonly context: vscode.ExtensionContext) {}

  private file(): string | undefined {
    const dir = this.context.storageUri?.fsPath;
    return dir ? path.join(dir, 'panel-thread.json') : undefined;
  }

  /** What the file (or the workspace state) holds, read once: `set` keeps it. */
  private known: { threadId: string | undefined } | undefined;

  get(): string | undefined {
    this.known ??= { threadId: this.read() };
    return this.known.threadId;
  }

  private read(): string | undefined {
    const file = this.file();
    if (file) {
      try {
        const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { threadId?: unknown };
        if (typeof saved.threadId === 'string' && saved.threadId !== '') return saved.threadId;
        if (saved.threadId === null) return undefined;
      } catch {
        // None yet (or unreadable): the workspace state.
      }
    }
    const kept = this.context.workspaceState.get<string>(THREAD_KEY);
    return typeof kept === 'string' && kept !== '' ? kept : undefined;
  }

  /** Keep `threadId`; a run's every event calls this, so only a change writes. */
  set(threadId: string | undefined): void {
    if (threadId === this.get()) return;
    this.known = { threadId };
    void this.context.workspaceState.update(THREAD_KEY, threadId);
    const file = this.file();
    if (!file) return;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify({ threadId: threadId ?? null }));
    } catch {
      // The workspace state still has it.
    }
  }
}

export class PanelView implements vscode.WebviewViewProvider, vscode.Disposable {
  private readonly thread: PanelThread;
  private view: vscode.WebviewView | undefined;
  /** The webview said it is ready for messages. */
  private ready = false;
  private readonly disposables: vscode.Disposable[] = [];
  private selection: Selection | undefined;
  private files: { at: number; paths: string[] } | undefined;
  /** The input box is to get the focus once the webview is ready. */
  private focusPending = false;
  /** Background tasks seen ended (stopped here, from the tasks pick, or by
   * themselves), by id, with how: their Stop buttons go. */
  private readonly endedTasks = new Map<string, string>();
  /** What the model and mode pickers show. */
  private pickers: PickerState = emptyPickers();
  /** What the prompt being sent attaches, for its card (taken when its run begins). */
  private sending: Attachment[] | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: TandemServer,
    readonly conversation: Conversation,
    private readonly asks: Asks,
  ) {
    this.thread = new PanelThread(context);
    this.disposables.push(
      conversation.onChange((change) => this.post(change)),
      onDidListTasks((tasks) => {
        for (const task of tasks) {
          if (task.status === 'running' || this.endedTasks.has(task.id)) continue;
          this.endedTasks.set(task.id, taskState(task));
          this.post({ op: 'task', taskId: task.id, state: taskState(task) });
        }
      }),
      server.runs.onDidBegin((prompt) => {
        conversation.begin(prompt, this.sending ?? []);
        this.sending = undefined;
      }),
      // The pickers follow the settings however they change (the pickers,
      // the Settings editor, settings.json), and the server's answer once
      // it has them.
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('tandem.model') || event.affectsConfiguration('tandem.permissionMode')) this.updatePickers({ settling: true });
      }),
      server.onDidPushSettings(({ pending }) => {
        this.updatePickers({ pending });
        if (!pending && this.server.client) void this.askProvider();
      }),
      server.onDidChangeReview((paths) => this.post({ op: 'review', paths: paths ?? null })),
      server.onDidChangeReviewComments((count) => this.post({ op: 'reviewComments', count })),
      // Where prompts go, said before the first one: the server's decision.
      server.onDidStart((started) => {
        if (started) void this.askProvider();
      }),
      server.runs.onEvent((params) => {
        conversation.event(params.runId, params.event);
        // The thread is kept from the run's first event on, not only at its
        // end: a window reloaded before the run answered (its edit waiting
        // in the Refactor Preview) comes back to it, not to an empty panel.
        if (params.threadId) this.thread.set(params.threadId);
      }),
      server.runs.onDidEnd((result) => {
        const folders = workspaceFolders();
        const edits = endEdits(result?.edits ?? [], folders);
        const failure = result?.status === 'failed' ? result.text : undefined;
        conversation.end(edits, (result as { threadId?: string } | undefined)?.threadId, result?.runId, failure);
        this.thread.set(server.runs.thread);
      }),
      // An undo or redo from anywhere (the panel, the end notification, the
      // palette): the run's edits line offers the other, and a note says
      // what became of each file.
      onDidRestore((restore) => {
        if (restore.answer) conversation.restored([restore.answer.runId, restore.answer.checkpoint], restore.direction === 'undo', restore.message);
        else if (restore.requested) conversation.restoreFailed(restore.requested, restore.message);
        else conversation.note(restore.message);
      }),
      server.runs.onDidChangeThread((change) => {
        conversation.reset(change.threadId, change.title ?? pastTitle(change.past), pastItems(change.past, change.omitted, workspaceFolders()));
        this.thread.set(change.threadId);
      }),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'media');
    const script = vscode.Uri.joinPath(this.context.extensionUri, 'out', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [media, script] };
    view.webview.html = panelHtml(view.webview, media, script);
    this.disposables.push(
      view.webview.onDidReceiveMessage((message: FromWebview) => void this.receive(message)),
      view.onDidDispose(() => {
        if (this.view === view) {
          this.view = undefined;
          this.ready = false;
        }
      }),
    );
  }

  /** Show the panel; `focus` moves the keyboard into its input box. */
  async reveal(focus: boolean): Promise<void> {
    if (this.view) {
      this.view.show(!focus);
    } else {
      await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    }
    if (focus) {
      this.focusPending = true;
      if (this.ready) this.focusInput();
    }
  }

  private focusInput(): void {
    this.focusPending = false;
    this.post({ op: 'focus' });
  }

  visible(): boolean {
    return this.view?.visible === true;
  }

  /**
   * A question from the server: shown in the panel (opened for it, without
   * taking the focus from the editor), answered there, or withdrawn by the
   * server.
   */
  ask(params: Parameters<Asks['ask']>[0], token: vscode.CancellationToken): Promise<{ title: string } | null> {
    const answer = this.asks.ask(params, token);
    if (!this.visible()) void this.reveal(false);
    return answer;
  }

  private post(message: ToWebview): void {
    if (this.view && this.ready) void this.view.webview.postMessage(message);
  }

  private async receive(message: FromWebview): Promise<void> {
    switch (message?.type) {
      case 'ready':
        this.ready = true;
        this.post({ op: 'history', entries: this.history() });
        this.post({ op: 'reset', snapshot: this.conversation.snapshot() });
        for (const [taskId, state] of this.endedTasks) this.post({ op: 'task', taskId, state });
        if (this.server.reviewPaths) this.post({ op: 'review', paths: this.server.reviewPaths });
        this.post({ op: 'reviewComments', count: this.server.reviewComments.length });
        this.updatePickers({});
        if (this.focusPending) this.focusInput();
        break;
      case 'send':
        await this.send(String(message.prompt ?? ''), pastedImages(message.images), typeof message.effort === 'string' ? message.effort : undefined);
        break;
      case 'stop':
        await cancelRun(this.server, true);
        break;
      case 'answer':
        this.asks.answer(Number(message.id), String(message.title));
        break;
      case 'open':
        await openPath(String(message.path ?? ''));
        break;
      case 'showReview':
        // Every view has a focus command: this one opens the panel area on the preview.
        await vscode.commands.executeCommand('refactorPreview.focus');
        break;
      case 'rejectReview':
        await this.server.rejectReview();
        break;
      case 'commentReview':
        await this.server.commentReview();
        break;
      case 'sendReview':
        await vscode.commands.executeCommand('tandem.sendReviewToAgent');
        break;
      case 'copy':
        await vscode.env.clipboard.writeText(String(message.text ?? ''));
        break;
      case 'openUrl': {
        const url = safeUrl(String(message.url ?? ''));
        if (url) await vscode.env.openExternal(vscode.Uri.parse(url));
        break;
      }
      case 'newThread':
        await vscode.commands.executeCommand('tandem.newConversation', { quiet: true });
        break;
      case 'resume':
        await vscode.commands.executeCommand('tandem.resumeConversation');
        break;
      case 'mentionQuery':
        await this.mentionQuery(String(message.query ?? ''));
        break;
      case 'mentioned':
        if (message.value === 'selection') this.selection = currentSelection(this.server);
        break;
      case 'undo': {
        // The panel shows what happened (restored), so no notification.
        const runId = String(message.runId ?? '');
        if (runId !== '') await undoRun(this.server, message.direction === 'redo' ? 'redo' : 'undo', runId, false);
        break;
      }
      case 'stopTask': {
        const taskId = String(message.taskId ?? '');
        if (taskId === '') break;
        const stopped = await stopTask(this.server, taskId);
        if (stopped) this.endedTasks.set(taskId, taskState(stopped));
        this.post({ op: 'task', taskId, state: stopped ? taskState(stopped) : 'not stopped' });
        break;
      }
      case 'draft': {
        const prompt = String(message.prompt ?? '');
        this.post({ op: 'attachments', prompt, items: await this.attachments(prompt) });
        break;
      }
      case 'pickMode':
        await this.pickMode(String(message.mode ?? ''));
        break;
      case 'pickModel':
        await this.pickModel(String(message.model ?? ''));
        break;
      case 'mentionSelection': {
        this.selection = currentSelection(this.server);
        if (this.selection) this.post({ op: 'insert', text: '@selection ' });
        else void vscode.window.showInformationMessage('Tandem: select some text in an editor first.');
        break;
      }
    }
  }

  private history(): string[] {
    const saved = this.context.workspaceState.get<unknown>(HISTORY_KEY);
    return Array.isArray(saved) ? saved.filter((e): e is string => typeof e === 'string') : [];
  }

  private async send(prompt: string, images: AskImage[] = [], effort?: string): Promise<void> {
    if (prompt.trim() === '') return;
    const history = this.history().filter((e) => e !== prompt);
    history.push(prompt);
    await this.context.workspaceState.update(HISTORY_KEY, history.slice(-HISTORY_LIMIT));
    const argument: AskArgument = { prompt };
    const editor = vscode.window.activeTextEditor;
    const attachments = await this.attachments(prompt);
    if (mentionsSelection(prompt) && this.selection) {
      argument.textDocument = { uri: this.selection.uri };
      argument.range = this.selection.range;
    } else if (editor) {
      argument.textDocument = { uri: editor.document.uri.toString() };
    }
    this.selection = undefined;
    // `@path` mentions attach the files: the server sends their text (the
    // editor's, unsaved changes included) to the model.
    if (prompt.includes('@')) {
      const uris = new Map((await this.workspaceFiles()).map((uri) => [relativePath(uri, workspaceFolders()), uri]));
      const attached = mentionedFiles(prompt, [...uris.keys()]);
      if (attached.length > 0) argument.attachments = attached.map((path) => ({ uri: uris.get(path) ?? path }));
    }
    // Pasted or dropped images: the server checks them and sends them after the prompt.
    if (images.length > 0) argument.images = images;
    // The effort picker's choice, for this run only; the server checks it against the model.
    if (effort !== undefined && effort !== '') argument.effort = effort;
    this.sending = attachments;
    try {
      await runAsk(this.server, argument, undefined, undefined, { progress: false, announce: () => !this.visible() });
    } finally {
      this.sending = undefined;
    }
  }

  /** What sending `prompt` would attach (the chips), as `send` attaches it. */
  private async attachments(prompt: string): Promise<Attachment[]> {
    if (!prompt.includes('@')) return [];
    const folders = workspaceFolders();
    const known = (await this.workspaceFiles()).map((uri) => relativePath(uri, folders));
    return attachmentsOf(prompt, known, this.selection?.label);
  }

  /** Ask the server which endpoint, models and mode runs use now; the model line and the pickers show it. */
  private async askProvider(): Promise<void> {
    const endpoint = await providerOf(this.server);
    if (!endpoint) return;
    this.conversation.setProvider(endpoint);
    this.updatePickers({
      settling: false,
      mode: endpoint.permissionMode,
      model: endpoint.error === undefined ? endpoint.model : undefined,
      models: endpoint.models ?? [],
      efforts: endpoint.efforts ?? {},
    });
  }

  /** The pickers with `change`, the settings read again, sent to the webview. */
  private updatePickers(change: Partial<PickerState>): void {
    const config = vscode.workspace.getConfiguration('tandem');
    const own = (key: string) => {
      const value = userSetting(config.inspect(key));
      return typeof value === 'string' ? value.trim() : '';
    };
    this.pickers = { ...this.pickers, ...change, modeSetting: own('permissionMode'), modelSetting: own('model') };
    this.post({ op: 'pickers', state: this.pickers });
  }

  /**
   * The mode picker: `tandem.permissionMode` in the user's settings (the
   * extension passes only those on: a folder's .vscode/settings.json may
   * not choose the mode). bypassPermissions is confirmed first.
   */
  private async pickMode(mode: string): Promise<void> {
    if (!PERMISSION_MODES.some((m) => m.value === mode)) return;
    if (mode === 'bypassPermissions') {
      const choice = await vscode.window.showWarningMessage(
        'Bypass permissions: from the next run on, Tandem edits files and runs every command without asking (deny rules still apply).',
        { modal: true },
        'Bypass permissions',
      );
      if (choice !== 'Bypass permissions') {
        this.updatePickers({});
        return;
      }
    }
    await this.writeSetting('permissionMode', mode);
  }

  /** The model picker: a listed model, or (`OTHER_MODEL`) one the user names. */
  private async pickModel(model: string): Promise<void> {
    let chosen = model;
    if (model === OTHER_MODEL) {
      const typed = await vscode.window.showInputBox({
        title: 'Tandem: model',
        prompt: "The model's name on the provider runs use (tandem.model in your user settings)",
        value: this.pickers.modelSetting || this.pickers.model || '',
        ignoreFocusOut: true,
      });
      chosen = typed?.trim() ?? '';
    }
    if (chosen === '') {
      this.updatePickers({});
      return;
    }
    await this.writeSetting('model', chosen);
  }

  /** Write `tandem.<key>` in the user's settings; a failure is said and the pickers go back. */
  private async writeSetting(key: 'model' | 'permissionMode', value: string): Promise<void> {
    try {
      await vscode.workspace.getConfiguration('tandem').update(key, value, vscode.ConfigurationTarget.Global);
    } catch (err) {
      void vscode.window.showErrorMessage(`Tandem: could not set tandem.${key}: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.updatePickers({});
  }

  private async mentionQuery(query: string): Promise<void> {
    const items: { label: string; value: string; detail?: string }[] = [];
    const selection = currentSelection(this.server);
    if (selection && 'selection'.startsWith(query.toLowerCase())) {
      items.push({ label: 'selection', value: 'selection', detail: selection.label });
    }
    const folders = workspaceFolders();
    const paths = (await this.workspaceFiles()).map((uri) => relativePath(uri, folders));
    for (const path of rankFiles(paths, query)) items.push({ label: path, value: path });
    this.post({ op: 'mentions', query, items });
  }

  /** The workspace's files (cached for a few seconds while the user types). */
  private async workspaceFiles(): Promise<string[]> {
    if (this.files && Date.now() - this.files.at < 5000) return this.files.paths;
    const found = await vscode.workspace.findFiles('**/*', '**/{node_modules,.git,target,out}/**', MENTION_FILES);
    this.files = { at: Date.now(), paths: found.map((uri) => uri.toString()) };
    return this.files.paths;
  }

  /** After activation: show the thread the panel showed before the window reloaded. */
  async restore(): Promise<void> {
    const threadId = this.thread.get();
    if (threadId !== undefined && this.server.runs.thread === undefined) {
      await resumeConversation(this.server, threadId, true);
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** A file URI's path (others as they are). */
function uriPath(uri: string): string {
  try {
    return vscode.Uri.parse(uri).scheme === 'file' ? vscode.Uri.parse(uri).fsPath : uri;
  } catch {
    return uri;
  }
}

function pastTitle(past: PastEvent[]): string | undefined {
  const first = past.find((e) => e.type === 'prompt');
  return first?.text ? titleOf(first.text) : undefined;
}

/** A run's edits (the answer's, or a past run's `edits` event) as its end line lists them. */
function endEdits(edits: EditResult[], folders: string[]): EndEdit[] {
  return edits.map((e) => ({ path: uriPath(e.uri), display: relativePath(e.uri, folders), status: e.status, toolCallId: e.toolCallId ?? undefined, command: e.command ?? undefined, deleted: e.deleted }));
}

/** A resumed thread's past as panel items; a run the saved file has no end for is marked. */
export function pastItems(past: PastEvent[], omitted: number, folders: string[] = []): PanelItem[] {
  const items: PanelItem[] = [];
  if (omitted > 0) items.push({ type: 'note', text: `(${omitted} earlier events are not shown)` });
  let open = false;
  let run = 0;
  for (const event of past) {
    if (event.type === 'prompt') {
      if (open) items.push({ type: 'note', text: 'This run did not finish (the window reloaded or the server stopped during it).' });
      open = true;
      run++;
    }
    if (event.type === 'end') open = false;
    if (event.type === 'edits') {
      // What became of the run's edits, as its end line showed them, with
      // its Undo (or Redo) while the run's checkpoint is kept.
      const edits = endEdits(event.edits, folders);
      const undoable = event.checkpoint !== undefined && edits.some((e) => statusLanded(e.status));
      items.push({ type: 'edits', edits, runId: event.checkpoint ?? `past-${run}`, undoable, undone: event.undone === true });
      continue;
    }
    if (event.type === 'prompt') {
      const attachments = savedAttachments(event.attachments ?? []);
      items.push(attachments.length > 0 ? { type: 'prompt', text: event.text, attachments, runId: `past-${run}` } : { type: 'prompt', text: event.text, runId: `past-${run}` });
      continue;
    }
    items.push({ ...event, runId: `past-${run}` });
  }
  if (open) items.push({ type: 'note', text: 'This run did not finish (the window reloaded or the server stopped during it).' });
  return items;
}

function currentSelection(server: TandemServer): Selection | undefined {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor || editor.selection.isEmpty || !server.client) return undefined;
  const uri = editor.document.uri.toString();
  const range = server.client.code2ProtocolConverter.asRange(editor.selection);
  const label = `${relativePath(uri, workspaceFolders())}:${editor.selection.start.line + 1}-${editor.selection.end.line + 1}`;
  return { uri, range, label };
}

/** Open a path from the transcript: absolute, or relative to a workspace folder; `:LINE` goes to the line. */
async function openPath(raw: string): Promise<void> {
  const match = /^(.*?)(?::(\d+))?$/.exec(raw.trim());
  const path = match?.[1] ?? raw;
  const line = match?.[2] ? Math.max(0, Number(match[2]) - 1) : undefined;
  const candidates = path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)
    ? [vscode.Uri.file(path)]
    : (vscode.workspace.workspaceFolders ?? []).map((folder) => vscode.Uri.joinPath(folder.uri, path));
  for (const uri of candidates) {
    try {
      const stat = await vscode.workspace.fs.stat(uri);
      if (stat.type & vscode.FileType.Directory) {
        await vscode.commands.executeCommand('revealInExplorer', uri);
        return;
      }
      const position = line !== undefined ? new vscode.Position(line, 0) : undefined;
      await vscode.window.showTextDocument(uri, {
        preview: true,
        selection: position ? new vscode.Range(position, position) : undefined,
      });
      return;
    } catch {
      // Not there; try the next folder.
    }
  }
  void vscode.window.showWarningMessage(`Tandem: ${path} was not found in the workspace.`);
}

function nonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < 32; i++) out += chars.charAt(Math.floor(Math.random() * chars.length));
  return out;
}

/**
 * The panel's page. The CSP allows only the bundled script with this
 * page's nonce (no inline script, no handlers in markup, no eval), styles
 * from the extension, images from the extension and data URIs, and no
 * network: whatever the model writes, nothing in the page can load or run.
 */
function panelHtml(webview: vscode.Webview, media: vscode.Uri, script: vscode.Uri): string {
  const n = nonce();
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${n}'`,
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join('; ');
  const css = webview.asWebviewUri(vscode.Uri.joinPath(media, 'panel.css'));
  const js = webview.asWebviewUri(vscode.Uri.joinPath(script, 'main.js'));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>Tandem</title>
</head>
<body>
<header id="bar">
  <span id="title" class="title">New conversation</span>
  <button id="threads" class="icon" title="Resume a conversation" aria-label="Resume a conversation">History</button>
  <button id="new" class="icon" title="New conversation" aria-label="New conversation">New</button>
</header>
<div id="model" class="model" aria-label="The model endpoint runs use"></div>
<main id="log" role="log" aria-live="polite" aria-label="Conversation" tabindex="0"></main>
<div id="empty" class="empty">Ask Tandem about this workspace. It reads, edits and runs commands with your approval; edits are reviewed in the Refactor Preview.</div>
<section id="review" aria-live="assertive" hidden></section>
<section id="reviewComments" hidden></section>
<section id="asks" aria-live="assertive" hidden></section>
<footer>
  <div id="mentions" role="listbox" aria-label="Mention a file" hidden></div>
  <div id="chips" class="chips" role="list" aria-label="Attached to the prompt" hidden></div>
  <div id="images" class="chips" role="list" aria-label="Images sent with the prompt" hidden></div>
  <textarea id="prompt" rows="3" aria-label="Ask Tandem" placeholder="Ask Tandem (Enter sends, Shift+Enter for a new line, @ mentions a file, Up for history)"></textarea>
  <div class="row pickers">
    <select id="modePicker" title="Permission mode (tandem.permissionMode in your user settings)" aria-label="Permission mode"></select>
    <select id="modelPicker" title="Model (tandem.model in your user settings)" aria-label="Model"></select>
    <select id="effortPicker" title="Effort for the next runs (over the effort setting)" aria-label="Effort" hidden></select>
  </div>
  <div id="pickerNote" class="picker-note" role="status" hidden></div>
  <div class="row">
    <button id="selection" class="secondary" title="Mention the editor's selection" aria-label="Mention the editor's selection">@selection</button>
    <span id="usage" class="usage" aria-label="Usage of the last run"></span>
    <button id="stop" class="secondary" hidden>Stop</button>
    <button id="send">Send</button>
  </div>
</footer>
<script nonce="${n}" src="${js}"></script>
</body>
</html>`;
}

/** Ask the server which model endpoint (models, mode) runs use. */
async function providerOf(server: TandemServer): Promise<Endpoint | undefined> {
  const client = await server.ready();
  if (!client) return undefined;
  try {
    return (await client.sendRequest<Endpoint | null>('workspace/executeCommand', { command: 'tandem.provider', arguments: [] })) ?? undefined;
  } catch (err) {
    // An older server without the command: each run's first event says it.
    console.warn('tandem.provider failed', err);
    return undefined;
  }
}

/** Register the panel, its status bar item and its commands; route the server's questions to it. */
export function registerPanel(context: vscode.ExtensionContext, server: TandemServer): PanelView {
  const conversation = new Conversation((path) => relativePath(vscode.Uri.file(path).toString(), workspaceFolders()));
  const asks = new Asks(conversation);
  const panel = new PanelView(context, server, conversation, asks);
  const statusBar = new TandemStatusBar(conversation);
  server.asker = (params, token) => panel.ask(params, token);
  context.subscriptions.push(
    panel,
    statusBar,
    vscode.window.registerWebviewViewProvider(VIEW_ID, panel, { webviewOptions: { retainContextWhenHidden: false } }),
    vscode.commands.registerCommand('tandem.openPanel', () => panel.reveal(true)),
  );
  return panel;
}
