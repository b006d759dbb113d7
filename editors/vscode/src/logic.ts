// The extension's own decisions, free of the `vscode` module so mocha tests
// them in plain Node: which settings reach the server, which environment the
// server process gets, whether an edit needs review, and what the user is
// told when a run ends or an edit is rejected.

import { visibleControls } from './visible';
import { STATUS_WORDS_ORDER, statusLanded, statusWords } from './events';
import type { AskAnswer, LineSpan, RunEdit } from './events';

/** What `tandem.*` settings look like to us (a `WorkspaceConfiguration.get`). */
export type SettingGetter = (key: string) => unknown;

export interface ServerSettings {
  saveDocuments: true;
  /** The extension answers `tandem/textInput` with an input box. */
  textInput: true;
  /** The extension answers `tandem/codeIntel` from VS Code's other language features (src/codeIntel.ts). */
  codeIntel: true;
  provider?: string;
  model?: string;
  /** The chosen provider's base URL; with no provider, the server takes the one it belongs to. */
  baseUrl?: string;
  permissionMode?: string;
  maxTurns?: number;
  /** `tandem.inlineCompletions`, passed on as written (the server checks each field). */
  inlineCompletions?: Record<string, unknown>;
}

/** What `WorkspaceConfiguration.inspect` tells of one setting (the parts we read). */
export interface SettingLayers {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The `tandem.*` settings the extension passes on are the user's own:
 * their user settings, never a folder's `.vscode/settings.json`, which
 * comes with the repository (a cloned folder could otherwise name the
 * binary to run, the base URL the API key is sent to, or a looser mode).
 * A project's own choices belong in `.tandem/settings.json`, which applies
 * once the user trusts the folder ("Tandem: Trust Workspace"). A setting
 * the user did not set is not sent, so the settings files decide.
 */
export function userSetting(layers: SettingLayers | undefined): unknown {
  // Only what the user set: a default (`permissionMode: "default"`) would
  // hide the mode of the settings files under it.
  return layers?.globalValue;
}

/** The user's own text value of a setting (a box prefilled with it), never a folder's. */
export function ownText(layers: SettingLayers | undefined): string | undefined {
  const value = userSetting(layers);
  return typeof value === 'string' ? value : undefined;
}

/** The settings a folder's own settings set, which the extension leaves out (said once). */
export function folderSettingsIgnored(keys: readonly string[], inspect: (key: string) => SettingLayers | undefined): string[] {
  return keys.filter((key) => {
    const layers = inspect(key);
    const set = (value: unknown) => value !== undefined && value !== '' && value !== null;
    return set(layers?.workspaceValue) || set(layers?.workspaceFolderValue);
  });
}

/** The extension's settings that the user alone may set: a folder's value is said to be ignored, once. */
export const USER_ONLY_SETTINGS = ['serverPath', 'provider', 'model', 'baseUrl', 'permissionMode', 'maxTurns', 'inlineCompletions'] as const;

/** What the extension itself promises the server (it answers these requests). */
export const CLIENT_PROMISES = { saveDocuments: true, textInput: true, codeIntel: true } as const;

/**
 * The `tandem` section as the server gets it, every key sorted by who set
 * it (docs/protocol.md, "Editor settings"): `layers.user` holds the values
 * of the user's own settings (`inspect().globalValue`) and the extension's
 * promises; `layers.folder` what the folder set (`workspaceValue`, from
 * `.vscode/settings.json` or a `.code-workspace` file, then
 * `workspaceFolderValue`), which the server takes as an untrusted project
 * layer that may only tighten. Every key: `keys` is whatever the section
 * holds, so a key added later is sorted the same way; nothing here names
 * the keys that matter. A default is in neither (the settings files decide).
 */
export function layeredSection(keys: Iterable<string>, inspect: (key: string) => SettingLayers | undefined): { layers: { user: Record<string, unknown>; folder: Record<string, unknown> } } {
  const user: Record<string, unknown> = {};
  const folder: Record<string, unknown> = {};
  for (const key of new Set(keys)) {
    const layers = inspect(key);
    if (layers?.globalValue !== undefined) user[key] = layers.globalValue;
    const theirs = folderValue(layers);
    if (theirs !== undefined) folder[key] = theirs;
  }
  return { layers: { user: { ...user, ...CLIENT_PROMISES }, folder } };
}

/** A folder's value of one key: the workspace's, then the folder's over it (objects key by key). */
function folderValue(layers: SettingLayers | undefined): unknown {
  const workspace = layers?.workspaceValue;
  const folder = layers?.workspaceFolderValue;
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (isObject(workspace) && isObject(folder)) return { ...workspace, ...folder };
  return folder !== undefined ? folder : workspace;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * The `initializationOptions.tandem` object. Empty settings are left out
 * ("not set"), so the environment applies, as the settings promise.
 */
export function serverSettings(get: SettingGetter): ServerSettings {
  const settings: ServerSettings = { saveDocuments: true, textInput: true, codeIntel: true };
  const provider = text(get('provider'));
  const model = text(get('model'));
  const baseUrl = text(get('baseUrl'));
  const permissionMode = text(get('permissionMode'));
  const maxTurns = get('maxTurns');
  if (provider) settings.provider = provider;
  if (model) settings.model = model;
  if (baseUrl) settings.baseUrl = baseUrl;
  if (permissionMode) settings.permissionMode = permissionMode;
  if (typeof maxTurns === 'number' && Number.isInteger(maxTurns) && maxTurns > 0) settings.maxTurns = maxTurns;
  const inline = get('inlineCompletions');
  if (inline && typeof inline === 'object' && !Array.isArray(inline) && Object.keys(inline).length > 0) {
    settings.inlineCompletions = { ...(inline as Record<string, unknown>) };
  }
  return settings;
}

export interface ApiKeys {
  anthropic?: string;
  openai?: string;
}

/**
 * The server process's environment: VS Code's own and the API keys from
 * SecretStorage (never from settings files). Empty values are not set.
 * `tandem.baseUrl` is not here: it goes to the server as the `baseUrl`
 * setting, so the server decides which provider it belongs to (with no
 * `tandem.provider`, the OpenAI-compatible one) instead of a stored
 * Anthropic key winning over it.
 */
export function serverEnv(base: Record<string, string | undefined>, keys: ApiKeys): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined) env[name] = value;
  }
  const anthropic = text(keys.anthropic);
  const openai = text(keys.openai);
  if (anthropic) env.ANTHROPIC_API_KEY = anthropic;
  if (openai) env.OPENAI_API_KEY = openai;
  return env;
}

/** Ollama's OpenAI-compatible endpoint, the walkthrough's suggestion. */
export const LOCAL_MODEL_URL = 'http://localhost:11434/v1';

/**
 * The settings "Use a local model" writes: the provider named with the
 * URL, so a stored Anthropic key can never send the prompts elsewhere.
 */
export function localModelSettings(url: string, model: string): { provider: 'openai'; baseUrl: string; model: string } {
  return { provider: 'openai', baseUrl: url.trim(), model: model.trim() };
}

/** The server's `tandem/textInput` request: a line of text from the user. */
export interface TextInputParams {
  prompt?: string;
  placeholder?: string;
}

/** The options of the input box that answers `tandem/textInput`. */
export function inputBoxOptions(params: TextInputParams | undefined): {
  title: string;
  prompt: string;
  placeHolder?: string;
  ignoreFocusOut: true;
} {
  return {
    title: 'Tandem',
    prompt: params?.prompt ?? 'Your answer',
    placeHolder: params?.placeholder,
    ignoreFocusOut: true,
  };
}

/** The answer to `tandem/textInput`: the typed text, or null when the box was dismissed or left empty. */
export function textInputAnswer(value: string | undefined): { text: string | null } {
  return { text: value !== undefined && value.trim() !== '' ? value : null };
}

/** The settings whose change reaches the server: by a restart, unless `LIVE_SETTINGS` take it. */
export const RESTART_SETTINGS = ['serverPath', 'provider', 'model', 'baseUrl', 'permissionMode', 'maxTurns', 'inlineCompletions'];

/**
 * The settings the running server takes without a restart: the extension
 * sends the `tandem` section again (`workspace/didChangeConfiguration`),
 * and the server's next run uses the new model and mode (the panel's
 * pickers change these).
 */
export const LIVE_SETTINGS: readonly string[] = ['model', 'permissionMode', 'inlineCompletions'];

/**
 * What a change of the settings `changed` takes: nothing, the section sent
 * to the running server ("push"), or a restart. A push can set a value but
 * not take one back: the server keeps the initialization options under
 * what it is sent, so a user value cleared (`user` gives the user's own
 * value of a key) restarts the server, as does any other setting. The same
 * holds for a field of `inlineCompletions` (an object the server reads
 * field by field): the object is pushed while it keeps every field of the
 * one the server had (`sent`); the server then turns completions on or off
 * and follows the new fields without a restart.
 */
export function settingsChange(changed: readonly string[], user: (key: string) => unknown, sent: (key: string) => unknown = () => undefined): 'none' | 'push' | 'restart' {
  const relevant = changed.filter((key) => RESTART_SETTINGS.includes(key));
  if (relevant.length === 0) return 'none';
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const settable = (key: string): boolean => {
    const now = user(key);
    if (key !== 'inlineCompletions') return text(now) !== undefined;
    const before = sent(key);
    return isObject(now) && (!isObject(before) || Object.keys(before).every((field) => now[field] !== undefined));
  };
  const live = relevant.every((key) => LIVE_SETTINGS.includes(key) && settable(key));
  return live ? 'push' : 'restart';
}

interface LspPosition {
  line: number;
  character: number;
}
interface LspTextEdit {
  annotationId?: string;
  range?: { start: LspPosition; end: LspPosition };
  newText?: string;
}
interface LspWorkspaceEdit {
  documentChanges?: { textDocument?: { uri: string; version?: number | null }; edits?: LspTextEdit[]; annotationId?: string; uri?: string; kind?: string }[];
  changeAnnotations?: Record<string, { needsConfirmation?: boolean; label?: string; description?: string }>;
}

/** One hunk of an edit as the Refactor Preview lists it. */
export interface PreviewEntry {
  uri: string;
  range: { start: LspPosition; end: LspPosition };
  newText: string;
  /** The server's words for the hunk (where it is, what it does), shown with its entry. */
  label: string;
  description?: string;
}

/**
 * The hunks of a reviewed edit, each with its own label (the server gives
 * each hunk its change annotation), for a Refactor Preview that opens with
 * them ticked: VS Code ticks only what does not need confirmation, and a
 * preview whose entries start unticked first shows the unchanged file.
 * Undefined when the edit holds anything but text edits (a file created,
 * renamed or deleted), which is previewed as it came.
 */
export function previewEntries(edit: LspWorkspaceEdit | undefined): PreviewEntry[] | undefined {
  const annotations = edit?.changeAnnotations ?? {};
  const entries: PreviewEntry[] = [];
  for (const change of edit?.documentChanges ?? []) {
    const uri = change.textDocument?.uri;
    if (change.kind !== undefined || uri === undefined || !Array.isArray(change.edits)) return undefined;
    for (const textEdit of change.edits) {
      if (!textEdit.range || typeof textEdit.newText !== 'string') return undefined;
      const annotation = annotations[textEdit.annotationId ?? change.annotationId ?? ''];
      entries.push({ uri, range: textEdit.range, newText: textEdit.newText, label: annotation?.label ?? 'Tandem', description: annotation?.description });
    }
  }
  return entries.length > 0 ? entries : undefined;
}

/** True when the edit asks for the user's confirmation (a review). */
export function needsConfirmation(edit: LspWorkspaceEdit | undefined): boolean {
  const annotations = edit?.changeAnnotations ?? {};
  const confirmed = (id: string | undefined) => id !== undefined && annotations[id]?.needsConfirmation === true;
  for (const change of edit?.documentChanges ?? []) {
    if (confirmed(change.annotationId)) return true;
    for (const textEdit of change.edits ?? []) {
      if (confirmed(textEdit.annotationId)) return true;
    }
  }
  return false;
}

/**
 * Why VS Code did not apply `edit`, when a document it edits is now at
 * another version than the edit's (`versionOf`: a document's version, or
 * undefined when it is not open): the user typed in it while the edit was
 * in the Refactor Preview, and VS Code refused it on Apply ("Cannot apply
 * refactoring because … has changed in the meantime"). Undefined when no
 * document changed. The words name the version and the change, so the
 * server rebases the edit and offers it again (docs/protocol.md), instead
 * of taking it for the user's rejection.
 */
export function changedWhileReviewed(edit: LspWorkspaceEdit | undefined, versionOf: (uri: string) => number | undefined, folders: string[]): string | undefined {
  for (const change of edit?.documentChanges ?? []) {
    const uri = change.textDocument?.uri;
    const version = change.textDocument?.version;
    if (uri === undefined || typeof version !== 'number') continue;
    const now = versionOf(uri);
    if (now !== undefined && now !== version) {
      return `the document changed while the edit was reviewed: ${relativePath(uri, folders)} is at version ${now}, the edit is for version ${version} (VS Code: Cannot apply refactoring because it has changed in the meantime)`;
    }
  }
  return undefined;
}

/** The URIs an edit touches. */
export function editUris(edit: LspWorkspaceEdit | undefined): string[] {
  const uris: string[] = [];
  for (const change of edit?.documentChanges ?? []) {
    const uri = change.textDocument?.uri ?? change.uri;
    if (uri && !uris.includes(uri)) uris.push(uri);
  }
  return uris;
}

/**
 * A URI as a path relative to the workspace folder holding it (folders are
 * `file://` URI strings), or the file's path when none holds it.
 */
export function relativePath(uri: string, folders: string[]): string {
  const decode = (u: string) => {
    try {
      return decodeURIComponent(u.replace(/^file:\/\//, ''));
    } catch {
      return u.replace(/^file:\/\//, '');
    }
  };
  const path = decode(uri);
  for (const folder of folders) {
    const root = decode(folder).replace(/\/+$/, '');
    if (path.startsWith(root + '/')) {
      return path.slice(root.length + 1);
    }
  }
  return path;
}

/** Lines `startLine..endLine` (1-based) of a file after an edit. */
export type EditLines = LineSpan;

/** One edit of a run, as `tandem.ask` answers it (docs/protocol.md). */
export type EditResult = RunEdit;

/** What a run's end says: the answer's, or one made up for a run that never started. */
export type AskResult = Pick<AskAnswer, 'runId' | 'status' | 'text' | 'edits' | 'summary'>;

export { statusWords };

/** An edit's status as the user reads it: a command's change is no edit of the agent's. */
export function editWords(edit: { status: string; command?: string | null; deleted?: boolean }): string {
  if (edit.command !== undefined && edit.command !== null) return edit.deleted ? 'deleted by a command' : 'changed by a command';
  return statusWords(edit.status);
}

/** The change is (at least partly) in the file. */
export function editLanded(edit: { status: string }): boolean {
  return statusLanded(edit.status);
}

function lines(spans: EditLines[] | null | undefined): string {
  return (spans ?? []).map((s) => (s.startLine === s.endLine ? `${s.startLine}` : `${s.startLine}-${s.endLine}`)).join(', ');
}

/**
 * Edits counted by status and listed with every changed range:
 * "3 edits: 2 applied, 1 declined. Changed: a.txt lines 3-4, 10. Not applied: b.txt (declined)."
 */
export function editsSummary(edits: EditResult[], folders: string[]): string {
  if (edits.length === 0) return '';
  const order = STATUS_WORDS_ORDER;
  const counts = new Map<string, number>();
  for (const edit of edits) counts.set(statusWords(edit.status), (counts.get(statusWords(edit.status)) ?? 0) + 1);
  const counted = [...counts.entries()].sort((a, b) => {
    const [ia, ib] = [order.indexOf(a[0]), order.indexOf(b[0])];
    return (ia < 0 ? order.length : ia) - (ib < 0 ? order.length : ib);
  });
  const parts = [`${edits.length} edit${edits.length === 1 ? '' : 's'}: ${counted.map(([words, n]) => `${n} ${words}`).join(', ')}.`];
  const changed = edits.filter(editLanded).map((e) => {
    const where = lines(e.ranges);
    const place = where === '' ? relativePath(e.uri, folders) : `${relativePath(e.uri, folders)} ${where.includes(',') || where.includes('-') ? 'lines' : 'line'} ${where}`;
    return e.status === 'partial' ? `${place} (partly applied; declined: ${lines(e.declined) || 'the rest'})` : place;
  });
  if (changed.length > 0) parts.push(`Changed: ${changed.join('; ')}.`);
  const other = edits.filter((e) => !editLanded(e));
  if (other.length > 0) parts.push(`Not applied: ${other.map((e) => `${relativePath(e.uri, folders)} (${statusWords(e.status)})`).join(', ')}.`);
  return parts.join(' ');
}

/** The notification when a run ends: how, and its edits by status. */
export function endSummary(result: AskResult, folders: string[]): string {
  const how =
    result.status === 'completed'
      ? 'completed'
      : result.status === 'failed'
        ? `failed: ${firstLine(result.text)}`
        : result.status === 'cancelled'
          ? 'cancelled'
          : result.status === 'turn_limit'
            ? 'stopped at the turn limit (tandem.maxTurns)'
            : result.status;
  const parts = [/[.:!?]$/.test(how) ? `Tandem: run ${how}` : `Tandem: run ${how}.`];
  // The server's words when it gave them (the same in every front end).
  const edits = result.summary ?? editsSummary(result.edits, folders);
  if (edits !== '') parts.push(edits);
  if (result.status === 'cancelled' && result.edits.some(editLanded)) parts.push('Edits that landed before the cancel stay (Undo takes the whole run back).');
  return parts.join(' ');
}

/** What the user is told when the Refactor Preview did not apply an edit. */
export function rejectionMessage(paths: string[]): string {
  const what = paths.length > 0 ? paths.join(', ') : 'the file';
  return (
    `Tandem: the edit to ${what} was rejected — the Refactor Preview was discarded or nothing in it was ticked. ` +
    'To accept an edit, tick its box in the preview and press Apply; to apply edits without review, set tandem.permissionMode to acceptEdits.'
  );
}

/** The failure reason the server (and so the model) gets for that rejection. */
export const REJECTED_IN_PREVIEW = 'the user did not apply it in the VS Code Refactor Preview (discarded, or nothing ticked)';

/** The question the panel's "Reject: tell Tandem what to do instead" asks (the server's own words for it). */
export const INSTEAD_PROMPT = 'What should Tandem do instead?';

/**
 * The failure reason for an edit the user rejected from the panel with
 * words for the model (the server passes it on: "the user rejected the
 * edit to a.txt: …").
 */
export function rejectedWithWords(words: string): string {
  return `from the Tandem panel, while it waited in the VS Code Refactor Preview; instead, the user says: ${words.trim()}`;
}

/** What the user is told when an edit landed after the run was cancelled. */
export function lateEditMessage(paths: string[]): string {
  return `Tandem: an edit to ${paths.join(', ')} was applied after the run was cancelled. It is in the buffer, unsaved; undo it with Ctrl+Z if you do not want it.`;
}

/**
 * Where the server binary is, found as the process spawn would find it: an
 * absolute path is taken as it is, a bare name is looked up in PATH, and a
 * relative path with a folder is left to the spawn (its folder depends on
 * the language client's working directory). `undefined` when there is
 * none, so the extension says so itself before the language client starts
 * (whose own "couldn't create connection" notification would otherwise
 * come beside ours). On Windows (`platform` `win32`) PATH is split at `;`
 * and the name is also tried with `.exe`: the spawn starts `tandem.exe`.
 */
export function findServer(serverPath: string, pathVar: string | undefined, isExecutable: (path: string) => boolean, platform: string = process.platform): string | undefined {
  if (isAbsolute(serverPath)) return isExecutable(serverPath) ? serverPath : undefined;
  if (serverPath.includes('/') || serverPath.includes('\\')) return serverPath;
  const windows = platform === 'win32';
  const separator = windows ? ';' : ':';
  const names = windows && !/\.exe$/i.test(serverPath) ? [serverPath, `${serverPath}.exe`] : [serverPath];
  for (const dir of (pathVar ?? '').split(separator)) {
    if (dir === '') continue;
    for (const name of names) {
      const candidate = `${dir.replace(/[\\/]+$/, '')}${windows ? '\\' : '/'}${name}`;
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The message for a server that cannot start. */
function isAbsolute(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}

export function startFailureMessage(serverPath: string, error: string): string {
  const missing = /ENOENT|not found|no such file/i.test(error);
  return missing
    ? `Tandem: the server binary "${serverPath}" was not found. Install it (cargo install tandem-agent --locked) or set tandem.serverPath to its full path.`
    : `Tandem: the server "${serverPath}" did not start: ${firstLine(error)}. Check tandem.serverPath.`;
}

export function firstLine(value: string): string {
  return (value ?? '').split('\n')[0];
}

/** The server's `window/showMessageRequest` (a permission or hook consent prompt). */
export interface MessageRequestParams {
  /** LSP MessageType: 1 error, 2 warning, 3 info, 4 log. */
  type?: number;
  message?: string;
  actions?: { title: string }[];
}

/** How a `window/showMessageRequest` is shown. */
export interface MessageRequestView {
  severity: 'error' | 'warning' | 'info';
  /** A modal dialog, whose detail shows every line; else a notification. */
  modal: boolean;
  message: string;
  detail?: string;
  titles: string[];
}

/**
 * The longest message a notification shows: a notification folds newlines
 * and cuts long text, so anything longer, or of more than one line, is
 * shown in a modal dialog instead.
 */
export const NOTIFICATION_MAX_CHARS = 160;

/**
 * A short one-line message stays a notification; a multi-line or long one
 * (a shell command with a here-doc, a hook's command) becomes a modal with
 * its first line as the title and every other line, uncut, as the detail.
 * What would act instead of showing is shown as an escape ({@link visibleControls}).
 */
export function messageRequestView(params: MessageRequestParams | undefined): MessageRequestView {
  const type = params?.type;
  const severity = type === 1 ? 'error' : type === 2 ? 'warning' : 'info';
  const titles = (params?.actions ?? []).map((action) => action?.title).filter((t): t is string => typeof t === 'string');
  // Made visible first (a lone CR, an ESC sequence, a bidi override or a
  // zero-width space would hide part of the command in the dialog), then
  // CRLF line ends read as lines.
  const whole = visibleControls(params?.message ?? '').replace(/\r\n/g, '\n').replace(/\n+$/, '');
  const newline = whole.indexOf('\n');
  if (newline < 0 && whole.length <= NOTIFICATION_MAX_CHARS) {
    return { severity, modal: false, message: whole, titles };
  }
  if (newline < 0) return { severity, modal: true, message: whole, titles };
  return { severity, modal: true, message: whole.slice(0, newline), detail: whole.slice(newline + 1), titles };
}

/** The answer to `window/showMessageRequest`: the chosen action, or null (dismissed, cancelled). */
export function messageRequestAnswer(
  params: MessageRequestParams | undefined,
  chosen: string | undefined,
): { title: string } | null {
  if (chosen === undefined) return null;
  return (params?.actions ?? []).find((action) => action?.title === chosen) ?? null;
}

/**
 * `tandem.undo` / `tandem.redo`'s arguments: the run (none: the last one),
 * and `perHunk` when the user asked to review the restore hunk by hunk
 * (by default each file is restored whole).
 */
export function undoArguments(runId?: string, perHunk = false): { runId?: string; perHunk?: boolean }[] {
  if (!runId && !perHunk) return [];
  const argument: { runId?: string; perHunk?: boolean } = {};
  if (runId) argument.runId = runId;
  if (perHunk) argument.perHunk = true;
  return [argument];
}

/** `tandem.undo` / `tandem.redo`'s answer (docs/protocol.md). */
export interface UndoAnswer {
  runId: string;
  /** The checkpoint's own id: a past run's Undo in the panel is keyed by it. */
  checkpoint?: string;
  files: { uri: string; status: string; reason?: string }[];
}

/**
 * What the user is told after an undo or redo: the run, how many files
 * came back, and each file with its status (a conflict with its reason).
 */
export function undoSummary(direction: 'undo' | 'redo', answer: UndoAnswer, folders: string[]): string {
  const did = direction === 'undo' ? 'undid' : 'redid';
  const files = answer.files ?? [];
  if (files.length === 0) return `Tandem: ${did} ${answer.runId}; it changed no file.`;
  const count = (status: string) => files.filter((f) => f.status === status).length;
  const counts = [
    [count('restored'), 'restored'],
    [count('unchanged'), 'unchanged'],
    [count('conflict'), count('conflict') === 1 ? 'conflict' : 'conflicts'],
  ]
    .filter(([n]) => n !== 0)
    .map(([n, words]) => `${n} ${words}`);
  const each = files.map((f) => {
    const path = relativePath(f.uri, folders);
    return f.reason ? `${path}: ${f.status} (${f.reason})` : `${path}: ${f.status}`;
  });
  return `Tandem: ${did} ${answer.runId} (${files.length} file${files.length === 1 ? '' : 's'}: ${counts.join(', ')}). ${each.join('; ')}.`;
}

/** `tandem.trust`'s answer (docs/protocol.md). */
export interface TrustAnswer {
  trusted: string;
  /** What was ignored until now and applies from now on, one line each. */
  applied?: string[];
  /** Files not read (a FIFO, a device, too large, linking out), so not trusted, one line each. */
  skipped?: string[];
  /** Project MCP or language servers start only in a new session. */
  restart?: boolean;
}

/** What "Tandem: Trust Workspace" tells the user. */
export function trustSummary(answer: TrustAnswer): string {
  const applied = answer.applied ?? [];
  const what = applied.length === 0 ? 'nothing in them needed it' : `now applied: ${applied.join('; ')}`;
  const restart = answer.restart ? ' The server restarts to start the project\'s servers.' : '';
  const skipped = answer.skipped ?? [];
  const notRead = skipped.length === 0 ? '' : ` Not read, so not trusted: ${skipped.join('; ')}.`;
  return `Tandem trusts this folder's settings files as they are now (${what}). When one changes, it is ignored again until you trust the folder again.${notRead}${restart}`;
}

/** A background task as `tandem.tasks` lists it (docs/protocol.md). */
export interface TaskInfo {
  id: string;
  command: string;
  status: 'running' | 'exited' | 'stopped' | 'lost';
  exit_code?: number;
  started_ms: number;
  ended_ms?: number;
  output_bytes: number;
  processes?: { pid: number; command: string }[];
}

/** "exited 0", "stopped", "running, 3 processes". */
export function taskState(task: TaskInfo): string {
  switch (task.status) {
    case 'running': {
      const n = task.processes?.length ?? 0;
      return n > 0 ? `running, ${n} process${n === 1 ? '' : 'es'}` : 'running';
    }
    case 'exited':
      return `exited ${task.exit_code ?? '?'}`;
    default:
      return task.status;
  }
}

/** The status bar's text for the running tasks (undefined: none runs). */
export function tasksBarText(tasks: TaskInfo[]): string | undefined {
  const running = tasks.filter((t) => t.status === 'running').length;
  if (running === 0) return undefined;
  return `$(terminal) ${running} task${running === 1 ? '' : 's'}`;
}
