// What the Tandem panel shows, kept in the extension host, free of the
// `vscode` module so mocha tests it: the conversation's items in order (the
// user's prompts, the runs' events, each run's edit statuses), the pending
// permission asks, and the state the status bar shows. The webview is a
// view of this: when it is (re)loaded it gets `snapshot()` and then every
// new item, so a webview reloaded mid-run shows what it missed and goes on.
// Streamed text is kept merged (one item per stretch of text), so a
// snapshot holds as many items as the transcript has parts, not pieces.
import type { Finding, RunEdit, RunEvent, RunEventType, TodoItem, ToolCallEvent } from '../events';
import { statusLanded, statusWords } from '../events';
import type { Attachment } from './input';
import type { PickerState } from './pickers';

/**
 * One thing in the panel: a run event (any of its fields), or one of the
 * panel's own: `prompt` (what the user asked), `edits` (a run's edit
 * statuses), `note`. The webview switches on `type`, so tsc names a type it
 * does not handle.
 */
export interface PanelItem {
  type: RunEventType | 'prompt' | 'edits' | 'note';
  /** A tool call's id (sub-agent events name it as their `parent`). */
  id?: string;
  text?: string;
  name?: string;
  summary?: string;
  input?: unknown;
  is_error?: boolean;
  content?: string;
  status?: string;
  parent?: string;
  attempt?: number;
  reason?: string;
  message?: string;
  provider?: string;
  model?: string;
  base_url?: string | null;
  edit?: RunEdit | null;
  runId?: string;
  /** `edits`: each edit's status at the run's end. */
  edits?: EndEdit[];
  /** `edits`: an edit of the run landed, so the panel offers its Undo (`tandem.undo` of `runId`). */
  undoable?: boolean;
  /** `edits`: the run is undone now, so the panel offers Redo. */
  undone?: boolean;
  usage?: Usage;
  cost_usd?: number | null;
  thread_id?: string | null;
  kind?: { type: string; path?: string; paths?: string[]; command?: string; url?: string };
  /** A tool call's paths as the user reads them (relative to the workspace), beside `kind`'s absolute ones. */
  shown_paths?: string[];
  /** `todo`: the model's whole list. */
  todos?: TodoItem[];
  /** `finding`: a review's finding (report_finding). */
  finding?: Finding;
  /** `prompt`: what the prompt attached (`@path`, `@selection`), as its chips showed it. */
  attachments?: Attachment[];
  /** `task_started`, `task_ended`: the background task and its command. */
  task_id?: string;
  command?: string;
  exit_code?: number | null;
}

export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/** One edit of a run's end line: its file, status, the call that made it, or the command that changed the file. */
export interface EndEdit {
  path: string;
  display: string;
  status: string;
  toolCallId?: string;
  command?: string;
  deleted?: boolean;
}

/** A permission (or other) question waiting for the user's answer. */
export interface PendingAsk {
  id: number;
  message: string;
  actions: string[];
}

export type RunState =
  | { state: 'idle' }
  | { state: 'running'; tool?: string }
  | { state: 'asking'; message: string };

export interface Snapshot {
  items: PanelItem[];
  asks: PendingAsk[];
  running: boolean;
  threadId?: string;
  title?: string;
  /** Which model endpoint runs use, and why (`providerLine`). */
  provider?: string;
}

/** What `tandem.provider` answers, and what a run's `provider` event carries. */
export interface Endpoint {
  provider?: string;
  model?: string;
  base_url?: string;
  reason?: string;
  error?: string;
  /** `tandem.provider` only: the models a front end may offer on this provider, the current one first. */
  models?: string[];
  /** `tandem.provider` only: the efforts each of `models` takes (a model taking none is absent). */
  efforts?: Record<string, string[]>;
  /** `tandem.provider` only: the permission mode runs start in now. */
  permissionMode?: string;
}

/** The panel's line about the model endpoint: where prompts go, and why. */
export function providerLine(endpoint: Endpoint): string {
  if (endpoint.error !== undefined) return `Model: none (${endpoint.error.split('\n')[0]})`;
  const at = endpoint.base_url ? ` at ${endpoint.base_url}` : '';
  return `Model: ${endpoint.provider ?? '?'} ${endpoint.model ?? ''}${at} (${endpoint.reason ?? ''})`;
}

/** What a change sends to a listener (the webview). */
export type Change =
  | { op: 'item'; item: PanelItem }
  | { op: 'reset'; snapshot: Snapshot }
  | { op: 'asks'; asks: PendingAsk[] }
  | { op: 'state'; running: boolean; threadId?: string; title?: string }
  | { op: 'undo'; runId: string; undone: boolean }
  | { op: 'provider'; text: string };

/**
 * The panel's messages, extension → webview: the conversation's changes
 * and the view's own. Both sides import this, so a message one sends and
 * the other does not handle (or a field it spells differently) fails tsc.
 */
export type ToWebview =
  | Change
  | { op: 'history'; entries: string[] }
  | { op: 'mentions'; query: string; items: { label: string; value: string; detail?: string }[] }
  | { op: 'insert'; text: string }
  | { op: 'focus' }
  /** How a task the user stopped from the panel ended ("stopped"), or that it could not be. */
  | { op: 'task'; taskId: string; state: string }
  /** The files of an edit waiting in the Refactor Preview; null: none waits. */
  | { op: 'review'; paths: string[] | null }
  /** How many review comments wait for "Send review to agent". */
  | { op: 'reviewComments'; count: number }
  /** The model and mode pickers' state. */
  | { op: 'pickers'; state: PickerState }
  /** What the draft `prompt` attaches (its chips). */
  | { op: 'attachments'; prompt: string; items: Attachment[] };

/** The panel's messages, webview → extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; prompt: string; images?: { name: string; data: string }[]; effort?: string }
  | { type: 'stop' }
  | { type: 'answer'; id: number; title: string }
  | { type: 'open'; path: string }
  | { type: 'openUrl'; url: string }
  | { type: 'newThread' }
  | { type: 'resume' }
  | { type: 'mentionQuery'; query: string }
  | { type: 'mentioned'; value: string }
  | { type: 'mentionSelection' }
  | { type: 'undo'; runId: string; direction: 'undo' | 'redo' }
  | { type: 'stopTask'; taskId: string }
  /** A code block's Copy button: its text, for the clipboard. */
  | { type: 'copy'; text: string }
  /** The waiting review's button: show the Refactor Preview. */
  | { type: 'showReview' }
  /** The waiting review's other button: reject the edit, and say what to do instead. */
  | { type: 'rejectReview' }
  /** The waiting review's comment button: words that go to the model with the answer. */
  | { type: 'commentReview' }
  /** "Send review to agent": the kept comments start the next turn. */
  | { type: 'sendReview' }
  /** The draft in the input box, which mentions something: what would it attach? */
  | { type: 'draft'; prompt: string }
  /** The mode picker: set `tandem.permissionMode`. */
  | { type: 'pickMode'; mode: string }
  /** The model picker: set `tandem.model` (`OTHER_MODEL`: ask for its name). */
  | { type: 'pickModel'; model: string };

export class Conversation {
  private items: PanelItem[] = [];
  private asks: PendingAsk[] = [];
  private running = false;
  /** The current tool call's summary, by call id, while it runs. */
  private tools = new Map<string, string>();
  threadId: string | undefined;
  title: string | undefined;
  /** The model endpoint line (`providerLine`): from `tandem.provider`, then each run's first event. */
  provider: string | undefined;
  /** The run whose events came last. */
  private lastRun: string | undefined;
  /** The current run's `end` event came. */
  private endSeen = false;
  private listeners: ((change: Change) => void)[] = [];

  /** `shownPath`: an absolute path as the panel shows it (relative to the workspace). */
  constructor(private readonly shownPath: (path: string) => string = (path) => path) {}

  onChange(listener: (change: Change) => void): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  }

  private fire(change: Change): void {
    for (const listener of this.listeners) listener(change);
  }

  snapshot(): Snapshot {
    return { items: this.items.slice(), asks: this.asks.slice(), running: this.running, threadId: this.threadId, title: this.title, provider: this.provider };
  }

  /** A run starts with this prompt, which attached `attachments`. */
  begin(prompt: string, attachments: Attachment[] = []): void {
    this.running = true;
    this.lastRun = undefined;
    this.endSeen = false;
    this.tools.clear();
    if (this.title === undefined) this.title = titleOf(prompt);
    this.add(attachments.length > 0 ? { type: 'prompt', text: prompt, attachments } : { type: 'prompt', text: prompt });
    this.fireState();
  }

  /** Which model endpoint runs use (`tandem.provider`, or a run's `provider` event). */
  setProvider(endpoint: Endpoint): void {
    this.provider = providerLine(endpoint);
    this.fire({ op: 'provider', text: this.provider });
  }

  /** One of the run's events (`tandem/runEvent`). */
  event(runId: string, event: RunEvent): void {
    if (event.type === 'provider' && event.parent === undefined) {
      this.setProvider({ ...event, base_url: event.base_url ?? undefined });
      return;
    }
    if (event.type === 'tool_call' && event.id !== undefined && event.parent === undefined) {
      this.tools.set(event.id, toolLine(event));
    }
    if (event.type === 'tool_result' && event.id !== undefined) this.tools.delete(event.id);
    if (event.type === 'end' && event.parent === undefined) this.endSeen = true;
    this.lastRun = runId;
    this.add(this.withShownPaths({ ...event, runId }));
  }

  /** A tool call's item with its files as the panel shows them (relative to the workspace). */
  private withShownPaths(item: PanelItem): PanelItem {
    const kind = item.kind;
    if (item.type !== 'tool_call' || !kind) return item;
    const paths = kind.path ? [kind.path] : (kind.paths ?? []);
    return paths.length > 0 ? { ...item, shown_paths: paths.map(this.shownPath) } : item;
  }

  /**
   * The run is over; `edits` as `tandem.ask` answered them (URIs turned
   * into paths by the caller), `runId` the answer's (else the run whose
   * events came last). A run an edit of which landed can be undone.
   * `failure`: why the ask failed; a run that never got going (the server
   * refused it: the thread runs in another window, say) shows it as its
   * end, since no `end` event will.
   */
  end(edits: EndEdit[], threadId: string | undefined, runId?: string, failure?: string): void {
    this.running = false;
    this.tools.clear();
    const run = runId || this.lastRun;
    if (failure !== undefined && !this.endSeen) this.add({ type: 'end', status: 'failed', text: failure, runId: run });
    this.endSeen = false;
    if (edits.length > 0) {
      const undoable = run !== undefined && edits.some((e) => statusLanded(e.status));
      this.add({ type: 'edits', edits, runId: run, undoable, undone: false });
    }
    if (threadId !== undefined) this.threadId = threadId;
    this.fireState();
  }

  /**
   * A run was undone (`undone`) or redone: its edits line offers the
   * other now; `note` says what became of each file. `names`: the run's
   * id as the server answered it, then its checkpoint's id (a past run's
   * line, restored from the thread, is keyed by that); the checkpoint's
   * wins, then the latest line of the run id (a restarted server counts
   * its run ids again).
   */
  restored(names: (string | undefined)[], undone: boolean, note: string): void {
    const lines = this.items.filter((i) => i.type === 'edits' && i.undoable);
    const [runId, checkpoint] = names;
    const item = lines.find((i) => checkpoint !== undefined && i.runId === checkpoint) ?? lines.reverse().find((i) => runId !== undefined && i.runId === runId);
    if (item?.runId) {
      item.undone = undone;
      this.fire({ op: 'undo', runId: item.runId, undone });
    }
    this.note(note);
  }

  /** An undo or redo of `runId` did not happen: its button is offered again as it was; `note` says why. */
  restoreFailed(runId: string, note: string): void {
    const item = this.items.find((i) => i.type === 'edits' && i.runId === runId && i.undoable);
    if (item) this.fire({ op: 'undo', runId, undone: item.undone === true });
    this.note(note);
  }

  /** A line of the panel's own (a restart, a reload that ended a run). */
  note(text: string): void {
    this.add({ type: 'note', text });
  }

  /** Start over: a new thread (`threadId` undefined) or a resumed one with its past. */
  reset(threadId: string | undefined, title: string | undefined, past: PanelItem[]): void {
    this.items = [];
    // A past call shows its files as the live one did (the server gives
    // it its kind again: `tandem.transcript`).
    for (const item of past) this.store(this.withShownPaths(item));
    this.threadId = threadId;
    this.title = title;
    this.fire({ op: 'reset', snapshot: this.snapshot() });
  }

  setAsks(asks: PendingAsk[]): void {
    this.asks = asks.slice();
    this.fire({ op: 'asks', asks: this.asks.slice() });
  }

  /** What the status bar shows. */
  runState(): RunState {
    const ask = this.asks[0];
    if (ask) return { state: 'asking', message: ask.message.split('\n')[0] };
    if (!this.running) return { state: 'idle' };
    const tools = [...this.tools.values()];
    return { state: 'running', tool: tools[tools.length - 1] };
  }

  /** The stored items (for tests and the size check). */
  itemCount(): number {
    return this.items.length;
  }

  private add(item: PanelItem): void {
    this.store(item);
    this.fire({ op: 'item', item });
  }

  /** Keep an item; a text piece following text of the same run and parent is merged into it. */
  private store(item: PanelItem): void {
    const last = this.items[this.items.length - 1];
    if (item.type === 'text' && last?.type === 'text' && last.runId === item.runId && last.parent === item.parent) {
      this.items[this.items.length - 1] = { ...last, text: (last.text ?? '') + (item.text ?? '') };
      return;
    }
    this.items.push(item);
  }

  private fireState(): void {
    this.fire({ op: 'state', running: this.running, threadId: this.threadId, title: this.title });
  }
}

/** A thread's title from its first prompt: the first line, shortened. */
export function titleOf(prompt: string): string {
  const line = prompt.trim().split('\n')[0].trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/** A tool call on one line: its name and summary. */
export function toolLine(event: ToolCallEvent | PanelItem): string {
  const summary = (event.summary ?? '').split('\n')[0];
  return summary ? `${event.name ?? 'tool'} ${summary}` : (event.name ?? 'tool');
}

/** A run's usage and cost on one line, e.g. `1,234 in · 56 out · $0.0045`. */
export function usageLine(usage: Usage | undefined, costUsd: number | undefined): string {
  if (!usage) return '';
  const n = (value: number | undefined) => (value ?? 0).toLocaleString('en-US');
  const parts = [`${n(usage.input_tokens)} in`, `${n(usage.output_tokens)} out`];
  if (usage.cache_read_input_tokens) parts.push(`${n(usage.cache_read_input_tokens)} cached`);
  if (typeof costUsd === 'number' && Number.isFinite(costUsd)) parts.push(`$${costUsd < 0.01 ? costUsd.toFixed(4) : costUsd.toFixed(2)}`);
  return parts.join(' · ');
}

/** An edit's status as the panel names it (the words every front end uses). */
export function editStatusLabel(status: string, command?: string | null, deleted?: boolean): string {
  if (command !== undefined && command !== null) return deleted ? 'deleted by a command' : 'changed by a command';
  return statusWords(status);
}
