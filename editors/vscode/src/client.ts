// The language client for `tandem lsp`, owned by one `TandemServer` that
// can start, fail, and restart (a changed setting or API key) without a
// window reload. The commands stay registered whatever the server's state.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { CloseAction, ErrorAction, LanguageClient, LanguageClientOptions, RevealOutputChannelOn, ServerOptions, State } from 'vscode-languageclient/node';
import {
  ApiKeys,
  changedWhileReviewed,
  editUris,
  inputBoxOptions,
  lateEditMessage,
  MessageRequestParams,
  messageRequestAnswer,
  messageRequestView,
  needsConfirmation,
  previewEntries,
  INSTEAD_PROMPT,
  REJECTED_IN_PREVIEW,
  rejectedWithWords,
  rejectionMessage,
  relativePath,
  folderSettingsIgnored,
  RESTART_SETTINGS,
  serverEnv,
  layeredSection,
  settingsChange,
  startFailureMessage,
  TextInputParams,
  textInputAnswer,
  USER_ONLY_SETTINGS,
  userSetting,
} from './logic';
import { chooseServer, versionMessage } from './carried';
import { answerCodeIntel } from './codeIntel';
import { Runs } from './runs';
import { Transcript } from './transcript';

/** How long a restart waits for the rest of a batch of setting changes. */
const RESTART_SETTLE_MS = 150;

export const SECRET_KEYS: Record<keyof ApiKeys, string> = {
  anthropic: 'tandem.anthropicApiKey',
  openai: 'tandem.openaiApiKey',
};

export function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
}

export class TandemServer implements vscode.Disposable {
  client: LanguageClient | undefined;
  /** Why the server is not running, for the commands to say. */
  failure: string | undefined;
  /** The folder settings left out were said (once per window). */
  private saidIgnored = false;
  /** The servers (path and `--version`) whose version differs that were said. */
  private readonly versionSaid = new Set<string>();
  private starting: Promise<void> | undefined;
  /** The run whose edit is waiting in the Refactor Preview. */
  private reviewing: string | undefined;
  /** The files of the edit waiting in the Refactor Preview, while one waits. */
  reviewPaths: string[] | undefined;
  /** What the user said to do instead of the edit they are rejecting from the panel. */
  private rejectedWith: string | undefined;
  /** The user's comment on the edit waiting in the Refactor Preview (the panel's "Comment on this edit"). */
  private reviewComment: string | undefined;
  private readonly reviewEmitter = new vscode.EventEmitter<string[] | undefined>();
  /** An edit began to wait in the Refactor Preview (its files), or none waits any more. */
  readonly onDidChangeReview = this.reviewEmitter.event;
  /** The user's comments on a run's changes ("Tandem: Comment on Selection for Review"), until "Send review to agent" sends them. */
  reviewComments: { uri: string; startLine: number; endLine: number; comment: string }[] = [];
  private readonly reviewCommentsEmitter = new vscode.EventEmitter<number>();
  /** The kept review comments changed: how many there are now. */
  readonly onDidChangeReviewComments = this.reviewCommentsEmitter.event;

  /** Keep or drop the review comments; the panel shows their count. */
  setReviewComments(comments: { uri: string; startLine: number; endLine: number; comment: string }[]): void {
    this.reviewComments = comments;
    this.reviewCommentsEmitter.fire(comments.length);
  }
  /** Who answers the server's questions (the Tandem panel); unset: dialogs and notifications. */
  asker: ((params: MessageRequestParams, token: vscode.CancellationToken) => Promise<{ title: string } | null>) | undefined;
  private readonly startedEmitter = new vscode.EventEmitter<boolean>();
  /** A start ended: true when the server runs. */
  readonly onDidStart = this.startedEmitter.event;

  private readonly settingsEmitter = new vscode.EventEmitter<{ pending: boolean }>();
  /**
   * A model or mode change (`pushSettings`) waits for the current run to
   * end (`pending`), or the server has it now.
   */
  readonly onDidPushSettings = this.settingsEmitter.event;
  /** A push waits for the current run to end. */
  private pushWaiting = false;
  /** The user values of the settings the server was last given (at start, or by a push). */
  private sent: Record<string, unknown> = {};

  /** The restart under way or queued, and the reason of one not begun yet. */
  private restarting: Promise<void> | undefined;
  private restartWhy: string | undefined;

  /** The server's log: its stderr and the language client's own messages. */
  private readonly serverLog = vscode.window.createOutputChannel('Tandem');

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly transcript: Transcript,
    readonly runs: Runs,
  ) {
    context.subscriptions.push(
      this.serverLog,
      vscode.workspace.onDidChangeConfiguration((event) => {
        const changed = RESTART_SETTINGS.filter((key) => event.affectsConfiguration(`tandem.${key}`));
        const config = vscode.workspace.getConfiguration('tandem');
        const change = settingsChange(changed, (key) => userSetting(config.inspect(key)), (key) => this.sent[key]);
        if (change === 'push') void this.pushSettings();
        else if (change === 'restart') void this.restart('the Tandem settings changed');
      }),
      context.secrets.onDidChange((event) => {
        if (Object.values(SECRET_KEYS).includes(event.key)) {
          void this.restart('an API key changed');
        }
      }),
    );
  }

  /** A line of the extension's own in the server's log ("Tandem" channel). */
  logLine(text: string): void {
    this.serverLog.appendLine(`[extension] ${text}`);
  }

  /** The running client, or undefined after telling the user why not. */
  async ready(): Promise<LanguageClient | undefined> {
    // A restart under way (a setting changed): its new server, not the one
    // it stops.
    if (this.restarting) await this.restarting;
    if (this.starting) await this.starting;
    if (this.client && this.client.state === State.Running) return this.client;
    await this.offerFix(this.failure ?? 'Tandem: the server is not running.');
    return undefined;
  }

  async start(): Promise<void> {
    this.starting = this.startInner();
    try {
      await this.starting;
    } finally {
      this.starting = undefined;
      this.startedEmitter.fire(this.client !== undefined && this.failure === undefined);
    }
  }

  private async startInner(): Promise<void> {
    const config = vscode.workspace.getConfiguration('tandem');
    // The user's own settings only: a folder's .vscode/settings.json comes with it.
    const user = (key: string) => userSetting(config.inspect(key));
    const ignored = folderSettingsIgnored(USER_ONLY_SETTINGS, (key) => config.inspect(key));
    if (ignored.length > 0 && !this.saidIgnored) {
      this.saidIgnored = true;
      void vscode.window.showWarningMessage(
        `Tandem ignores ${ignored.map((key) => `tandem.${key}`).join(', ')} from this folder's settings: a folder's own files cannot choose the server, the model, where your API key goes or the mode. Set them in your user settings (or in .tandem/settings.json, which applies once you run "Tandem: Trust Workspace").`,
      );
    }
    const setting = (typeof user('serverPath') === 'string' ? (user('serverPath') as string) : '').trim();
    const keys: ApiKeys = {
      anthropic: await this.context.secrets.get(SECRET_KEYS.anthropic),
      openai: await this.context.secrets.get(SECRET_KEYS.openai),
    };
    const settings = tandemSection();
    this.sent = { inlineCompletions: user('inlineCompletions') };
    const env = serverEnv(process.env, keys);
    // The user's tandem.serverPath, else the binary this package carries
    // (else, in a package without one, `tandem` on PATH).
    const choice = chooseServer({
      setting,
      extensionPath: this.context.extensionPath,
      manifest: readManifest(this.context.extensionPath),
      platform: process.platform,
      arch: process.arch,
      pathVar: env.PATH,
      exists: fs.existsSync,
      isExecutable,
    });
    if ('error' in choice) {
      this.failure = choice.error;
      void this.offerFix(this.failure);
      return;
    }
    const serverPath = choice.command;
    void this.checkVersion(serverPath, env);
    const serverOptions: ServerOptions = { command: serverPath, args: ['lsp'], options: { env } };
    const clientOptions: LanguageClientOptions = {
      // Every file: the agent reads and edits any document, not one language.
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      initializationOptions: { tandem: settings },
      // The server's log (stderr, the client's own messages): opened by
      // itself only when the server stops (closed, below); the client's
      // other errors offer it ("Go to output"); the transcript has a
      // channel of its own.
      outputChannel: this.serverLog,
      revealOutputChannelOn: RevealOutputChannelOn.Error,
      // Code actions run `tandem.ask` through us, so they get the same
      // progress, transcript framing and end message as the palette.
      middleware: {
        // The server's pull of the `tandem` section gets each value with
        // who set it (the user, or the folder, whose values may only
        // tighten), never VS Code's merge of the two.
        workspace: {
          configuration: async (params, token, next) => {
            const answer = await next(params, token);
            if (!Array.isArray(answer)) return answer;
            return answer.map((section, i) => (params.items[i]?.section === 'tandem' ? tandemSection() : section));
          },
        },
        executeCommand: async (command, args, next) => {
          if (command === 'tandem.ask') {
            return vscode.commands.executeCommand('tandem.runAsk', args[0]);
          }
          return next(command, args);
        },
      },
      initializationFailedHandler: () => false,
      errorHandler: {
        error: () => ({ action: ErrorAction.Shutdown }),
        // The server went away without being asked to (it crashed, or was
        // killed): its log says why, so it opens, and the error offers a
        // restart (the client's own error, "Connection to server got
        // closed", is written to the log only).
        closed: () => {
          this.failure = 'Tandem: the server stopped. Run "Tandem: Restart server", or check tandem.serverPath.';
          this.serverLog.show(true);
          void this.offerRestart();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient('tandem', 'Tandem', serverOptions, clientOptions);
    // textDocument/inlineCompletion (LSP 3.18) is a proposed feature of
    // vscode-languageclient 9: it registers an InlineCompletionItemProvider
    // that forwards to the server when the server advertises
    // inlineCompletionProvider (only with tandem.inlineCompletions on), and
    // cancels the request when VS Code does. Ghost text, Tab, and VS Code's
    // own partial accepts (Ctrl+Right: the next word) come with it; the
    // item's command (tandem.inlineCompletionAccepted) runs on a full accept.
    client.registerProposedFeatures();
    client.onNotification('tandem/runEvent', (params) => this.runs.event(params));
    client.onRequest('tandem/saveDocuments', async (params: { uris: string[] }) => {
      const saved: string[] = [];
      for (const uri of params.uris ?? []) {
        const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
        if (document && (await document.save())) saved.push(uri);
      }
      return { saved };
    });
    client.onRequest('workspace/applyEdit', (params, token) => this.applyEdit(client, params, token));
    // A line of text from the user (plan mode's feedback after "Keep planning").
    client.onRequest('tandem/textInput', async (params: TextInputParams, token) =>
      textInputAnswer(await vscode.window.showInputBox(inputBoxOptions(params), token)),
    );
    // The agent's questions to VS Code's other language features (definitions, references, diagnostics…).
    client.onRequest('tandem/codeIntel', (params, token) => answerCodeIntel(client, params, token));
    // Permission and hook consent prompts: in the Tandem panel when it is
    // registered (`asker`); else a multi-line or long one in a modal whose
    // detail shows every line (a notification would fold and cut it).
    client.onRequest('window/showMessageRequest', (params: MessageRequestParams, token) =>
      (this.asker ?? showMessageRequest)(params, token),
    );
    this.client = client;
    try {
      await client.start();
      this.failure = undefined;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.failure = startFailureMessage(serverPath, message);
      this.client = undefined;
      try {
        await client.dispose();
      } catch {
        // The process never started; nothing to stop.
      }
      void this.offerFix(this.failure);
    }
  }

  /**
   * Send the running server the `tandem` section again (the settings only
   * `LIVE_SETTINGS` changed): as `workspace/configuration` answers it,
   * with the user's own values of the user-only settings. The server's
   * next run uses them; a run going on finishes as it started (its edits
   * and commands are not judged by a mode it did not start in), so the
   * section goes when it ends, as a restart would wait for it.
   */
  async pushSettings(): Promise<void> {
    if (this.pushWaiting) return;
    if (this.runs.current) {
      this.pushWaiting = true;
      this.settingsEmitter.fire({ pending: true });
      try {
        await this.runs.whenIdle();
      } finally {
        this.pushWaiting = false;
      }
    }
    // A start or restart under way may have read the settings before this
    // change: the section goes to the server it starts.
    await this.restarting?.catch(() => undefined);
    await this.starting?.catch(() => undefined);
    const client = this.client;
    if (!client || client.state !== State.Running) {
      this.settingsEmitter.fire({ pending: false });
      return;
    }
    const config = vscode.workspace.getConfiguration('tandem');
    const section = tandemSection();
    try {
      await client.sendNotification('workspace/didChangeConfiguration', { settings: { tandem: section } });
      this.sent = { inlineCompletions: userSetting(config.inspect('inlineCompletions')) };
      this.logLine('the model, the permission mode or the inline completions changed: sent the settings to the server (no restart)');
    } catch (err) {
      this.logLine(`sending the changed settings failed (${String(err)}): restarting`);
      void this.restart('the Tandem settings changed');
    }
    this.settingsEmitter.fire({ pending: false });
  }

  /**
   * Restart the server. Restarts never overlap: one asked for while another
   * runs follows it, and those asked for before it begins are one (a
   * command writing several settings fires a change for each: the server
   * restarts once, with all of them).
   */
  restart(why: string): Promise<void> {
    if (this.restartWhy !== undefined) {
      this.restartWhy = why;
      return this.restarting ?? Promise.resolve();
    }
    this.restartWhy = why;
    const previous = this.restarting ?? Promise.resolve();
    const restarting = previous.then(async () => {
      // The rest of a batch of setting writes arrives meanwhile.
      await new Promise((resolve) => setTimeout(resolve, RESTART_SETTLE_MS));
      if (this.runs.current) {
        void vscode.window.showWarningMessage(`Tandem: ${this.restartWhy}; the server restarts after the current run.`);
        await this.runs.whenIdle();
      }
      const reason = this.restartWhy ?? why;
      this.restartWhy = undefined;
      await this.stop();
      await this.start();
      if (this.client) this.transcript.note(`(server restarted: ${reason})`);
    });
    this.restarting = restarting;
    void restarting.finally(() => {
      if (this.restarting === restarting) this.restarting = undefined;
    });
    return restarting;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch {
        // Already gone.
      }
    }
  }

  /**
   * `SERVER --version` against the extension's own version: a server of
   * another version is started all the same (it may work), and the user is
   * told once per server and version.
   */
  private async checkVersion(server: string, env: NodeJS.ProcessEnv): Promise<void> {
    // A server that cannot run at all: the start says so, not this.
    const output = await new Promise<string | undefined>((resolve) => {
      execFile(server, ['--version'], { env, timeout: 10_000 }, (error, stdout) => resolve(error ? undefined : String(stdout)));
    });
    if (output === undefined) return;
    const mine = String(this.context.extension.packageJSON.version ?? '');
    const message = versionMessage(server, output, mine);
    const key = `${server}\n${output}`;
    if (message === undefined || this.versionSaid.has(key)) return;
    this.versionSaid.add(key);
    this.serverLog.appendLine(message);
    void vscode.window.showWarningMessage(message);
  }

  /** The error, with a button that sets tandem.serverPath. */
  private async offerRestart(): Promise<void> {
    const RESTART = 'Restart server';
    const choice = await vscode.window.showErrorMessage('Tandem: the server stopped. Its log is in the Output panel ("Tandem").', RESTART);
    if (choice === RESTART) await vscode.commands.executeCommand('tandem.restartServer');
  }

  private async offerFix(message: string): Promise<void> {
    const SET = 'Set tandem.serverPath';
    const choice = await vscode.window.showErrorMessage(message, SET);
    if (choice === SET) await vscode.commands.executeCommand('tandem.setServerPath');
  }

  /**
   * `workspace/applyEdit`, as vscode-languageclient does it (the version
   * check, then `workspace.applyEdit`, which opens the Refactor Preview for
   * edits needing confirmation), plus: a cancelled run's review is
   * discarded, a rejection says why, and an edit landing after a cancel is
   * reported.
   */
  private async applyEdit(
    client: LanguageClient,
    params: { label?: string; edit: Parameters<LanguageClient['protocol2CodeConverter']['asWorkspaceEdit']>[0] },
    token: vscode.CancellationToken,
  ): Promise<{ applied: boolean; failureReason?: string; comments?: ReviewComment[] }> {
    const answer = await this.applyEditAnswer(client, params, token);
    // The user's words on the edit go with the answer (docs/protocol.md,
    // "Comments on hunks"): on the whole edit, as the preview answers it.
    const comment = this.reviewComment;
    this.reviewComment = undefined;
    return comment ? { ...answer, comments: [{ hunk: 0, decision: answer.applied ? 'accepted' : 'rejected', comment }] } : answer;
  }

  private async applyEditAnswer(
    client: LanguageClient,
    params: { label?: string; edit: Parameters<LanguageClient['protocol2CodeConverter']['asWorkspaceEdit']>[0] },
    token: vscode.CancellationToken,
  ): Promise<{ applied: boolean; failureReason?: string }> {
    const raw = params.edit as Parameters<typeof needsConfirmation>[0];
    const uris = editUris(raw);
    const paths = uris.map((uri) => relativePath(uri, workspaceFolders()));
    for (const change of raw?.documentChanges ?? []) {
      const version = (change.textDocument as { version?: number } | undefined)?.version;
      const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === change.textDocument?.uri);
      if (document && typeof version === 'number' && document.version !== version) {
        return { applied: false, failureReason: `the document is at version ${document.version}, not ${version}` };
      }
    }
    const run = this.runs.current;
    const review = needsConfirmation(raw);
    const edit = await client.protocol2CodeConverter.asWorkspaceEdit(params.edit);
    if (!edit) return { applied: false, failureReason: 'the edit was empty' };
    // The review shows the edit ticked, and keeps the files' tabs open.
    const shown = review ? ((await tickedPreview(client, raw)) ?? edit) : edit;
    const tabs = review ? tabsShowing(uris) : [];
    if (review) {
      this.reviewing = run ?? 'unknown';
      this.reviewPaths = paths;
      this.reviewEmitter.fire(paths);
    }
    const discard = token.onCancellationRequested(() => void this.discardReview());
    let applied: boolean;
    let rejectedWith: string | undefined;
    try {
      applied = await vscode.workspace.applyEdit(shown);
      await reopenTabs(tabs);
    } finally {
      discard.dispose();
      rejectedWith = this.rejectedWith;
      this.rejectedWith = undefined;
      this.reviewing = undefined;
      if (review) {
        this.reviewPaths = undefined;
        this.reviewEmitter.fire(undefined);
      }
    }
    const cancelled = token.isCancellationRequested || (run !== undefined && this.runs.wasCancelled(run));
    if (applied && cancelled) {
      const message = lateEditMessage(paths);
      this.transcript.note(message);
      void vscode.window.showWarningMessage(message);
    }
    // The user typed in the document while the edit was in the preview:
    // VS Code refused it ("has changed in the meantime"); the server offers
    // it again, rebased onto the new text, or says why it cannot.
    const changed = applied ? undefined : changedWhileReviewed(raw, (uri) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri)?.version, workspaceFolders());
    if (changed) return { applied: false, failureReason: changed };
    if (!applied && review && rejectedWith !== undefined) return { applied: false, failureReason: rejectedWithWords(rejectedWith) };
    if (!applied && review) {
      void vscode.window.showWarningMessage(rejectionMessage(paths));
      return { applied: false, failureReason: REJECTED_IN_PREVIEW };
    }
    return applied ? { applied } : { applied, failureReason: 'VS Code did not apply the edit' };
  }

  /**
   * The panel's "Reject: tell Tandem what to do instead" on the edit
   * waiting in the Refactor Preview: ask what, then discard the preview;
   * the edit's answer carries the words to the model. Dismissed, the
   * review goes on.
   */
  async rejectReview(): Promise<void> {
    if (!this.reviewing) return;
    const words = await vscode.window.showInputBox({ ...inputBoxOptions({ prompt: INSTEAD_PROMPT }), placeHolder: 'The edit is rejected; Tandem reads this with it' });
    if (!words?.trim() || !this.reviewing) return;
    this.rejectedWith = words.trim();
    await this.discardReview();
  }

  /**
   * The panel's "Comment on this edit" on the edit waiting in the Refactor
   * Preview: ask for the words; they go to Tandem with the answer given in
   * the preview (Apply or Discard), and the model reads them in the same
   * run. Dismissed, nothing changes.
   */
  async commentReview(): Promise<void> {
    if (!this.reviewing) return;
    const words = await vscode.window.showInputBox({
      ...inputBoxOptions({ prompt: 'Your comment on this edit, sent to Tandem with your answer in the Refactor Preview' }),
      value: this.reviewComment ?? '',
      placeHolder: 'e.g. keep the old name in the tests',
    });
    if (words === undefined || !this.reviewing) return;
    this.reviewComment = words.trim() || undefined;
    if (this.reviewComment) this.transcript.note(`Your comment on the waiting edit, sent with your answer: ${this.reviewComment}`);
  }

  /** Close an open Refactor Preview of the run being cancelled. */
  async discardReview(): Promise<void> {
    if (!this.reviewing) return;
    try {
      await vscode.commands.executeCommand('refactorPreview.discard');
    } catch {
      // No preview open (VS Code applied or discarded it already).
    }
  }

  dispose(): void {
    void this.stop();
  }
}

/**
 * A reviewed edit as the Refactor Preview should open it: one entry per
 * hunk, labelled with the server's words for it, and ticked, so the
 * preview's diff shows the change rather than the unchanged file. VS Code
 * ticks an entry only when it does not need confirmation, and opens the
 * preview only when some entry does: that one is a createFile of the
 * (existing) file with ignoreIfExists, which the preview lists nowhere
 * (there is nothing to create) and never applies (it stays unticked).
 * Undefined (the edit is previewed as it came, unticked) for anything but
 * text edits, or a file that is not on disk.
 */
async function tickedPreview(client: LanguageClient, raw: Parameters<typeof previewEntries>[0]): Promise<vscode.WorkspaceEdit | undefined> {
  const entries = previewEntries(raw);
  if (!entries) return undefined;
  const out = new vscode.WorkspaceEdit();
  const uris: vscode.Uri[] = [];
  for (const entry of entries) {
    const uri = client.protocol2CodeConverter.asUri(entry.uri);
    if (!uris.some((u) => u.toString() === uri.toString())) uris.push(uri);
    const range = client.protocol2CodeConverter.asRange(entry.range);
    out.replace(uri, range, entry.newText, { needsConfirmation: false, label: entry.label, description: entry.description });
  }
  for (const uri of uris) {
    try {
      if ((await vscode.workspace.fs.stat(uri)).type !== vscode.FileType.File) return undefined;
    } catch {
      return undefined;
    }
  }
  out.createFile(uris[0], { ignoreIfExists: true }, { needsConfirmation: true, label: 'Tandem: review' });
  return out;
}

/** Where a tab showing a file was when a review began. */
interface TabPlace {
  uri: vscode.Uri;
  column: vscode.ViewColumn;
  active: boolean;
}

/** The tabs showing `uris` now. */
function tabsShowing(uris: string[]): TabPlace[] {
  const places: TabPlace[] = [];
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      if (tab.input instanceof vscode.TabInputText && uris.includes(tab.input.uri.toString())) {
        places.push({ uri: tab.input.uri, column: group.viewColumn, active: tab.isActive && group.isActive });
      }
    }
  }
  return places;
}

/**
 * Open again the files whose tabs the review closed: the Refactor Preview's
 * diff opens in the preview tab, which is often the file's own (opened
 * with a single click or Quick Open), and closes after Apply, taking it along.
 */
async function reopenTabs(places: TabPlace[]): Promise<void> {
  const open = tabsShowing(places.map((p) => p.uri.toString()));
  for (const place of places) {
    if (open.some((o) => o.uri.toString() === place.uri.toString() && o.column === place.column)) continue;
    try {
      await vscode.window.showTextDocument(place.uri, { viewColumn: place.column, preview: false, preserveFocus: !place.active });
    } catch {
      // Deleted meanwhile, or the group is gone: nothing to keep open.
    }
  }
}

/** Ask the user; a cancelled request (the server gave up waiting) answers null. */
async function showMessageRequest(
  params: MessageRequestParams,
  token: vscode.CancellationToken,
): Promise<{ title: string } | null> {
  const view = messageRequestView(params);
  const options: vscode.MessageOptions = view.modal ? { modal: true, detail: view.detail } : {};
  const show = (): Thenable<string | undefined> => {
    if (view.severity === 'error') return vscode.window.showErrorMessage(view.message, options, ...view.titles);
    if (view.severity === 'warning') return vscode.window.showWarningMessage(view.message, options, ...view.titles);
    return vscode.window.showInformationMessage(view.message, options, ...view.titles);
  };
  let cancelled: vscode.Disposable | undefined;
  const onCancel = new Promise<undefined>((resolve) => {
    cancelled = token.onCancellationRequested(() => resolve(undefined));
  });
  try {
    const chosen = await Promise.race([show(), onCancel]);
    return token.isCancellationRequested ? null : messageRequestAnswer(params, chosen);
  } finally {
    cancelled?.dispose();
  }
}

/** server/carried.json of a platform package, `undefined` when there is none (or `null` when unreadable JSON). */
function readManifest(extensionPath: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(path.join(extensionPath, 'server', 'carried.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A file the server process could be spawned from. */
function isExecutable(path: string): boolean {
  try {
    fs.accessSync(path, process.platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK);
    return fs.statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The `tandem` section for the server, every key with who set it
 * ([`layeredSection`]): the keys are whatever VS Code holds under `tandem`
 * (registered or not, in any layer), inspected for the first folder, the
 * server's workspace root, so a folder's `.vscode/settings.json` lands in
 * the folder's layer in a multi-root window too.
 */
export function tandemSection(): ReturnType<typeof layeredSection> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const config = vscode.workspace.getConfiguration('tandem', folder);
  const all = vscode.workspace.getConfiguration(undefined, folder).get<unknown>('tandem');
  const keys = typeof all === 'object' && all !== null ? Object.keys(all) : [];
  return layeredSection(keys, (key) => config.inspect(key));
}

/** The user's words on an edit's hunk (0: the whole edit), sent in the applyEdit answer. */
interface ReviewComment {
  hunk: number;
  decision: 'accepted' | 'rejected';
  comment: string;
}
