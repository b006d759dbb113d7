// Generated from the Rust types (server/src/protocol/) by
// `UPDATE_EXPECT=1 cargo test --locked --test integration protocol::`. Do not edit: the test fails when this
// file differs from what the types give.
/* eslint-disable */

/**
 * What a call does, as every layer above `tools/` sees it: permissions,
 * reviews, the transcript and `lsp/` use this, never a tool's name or its
 * input fields. Fail closed: [`ToolKind::Other`] is not read-only.
 */
export type ToolKind = { type: 'read'; paths: string[] } | { type: 'edit'; path: string } | { type: 'execute'; command: string } | { type: 'fetch'; url: string } | { type: 'other' };

/**
 * What one call did to one file: an edit tool's change (reviewed in the
 * editor or written on disk) or a shell command's.
 */
export type FileEffect = { path: string; status: EditStatus; ranges?: LineSpan[]; declined?: LineSpan[]; by_command?: string | null; deleted?: boolean; untried?: boolean };

/**
 * An edit's outcome as `tandem.ask`'s answer (`edits[].status`), the run
 * events and the editors' messages name it. These strings are a contract
 * (docs/protocol.md); this is the one place that spells them.
 */
export type EditStatus = 'applied' | 'partial' | 'rejected' | 'not_applied' | 'superseded' | 'written' | 'unknown';

/**
 * Lines `start..=end`, 1-based, of a text. A change that removed lines
 * without putting any in their place spans the one line where they were.
 */
export type LineSpan = { startLine: number; endLine: number };

/**
 * One edit of a run as the editor's front end reports it: an entry of
 * `tandem.ask`'s `edits`, the `edit` of the `tool_result` of the call that
 * made it, and what a thread keeps of its run's edits.
 */
export type RunEdit = { uri: string; status: EditStatus; ranges?: LineSpan[]; declined?: LineSpan[] | null; command?: string | null; deleted?: boolean; toolCallId?: string | null };

/** What a [`RunEvent::Question`] asks. */
export type QuestionKind = { type: 'permission'; tool: string; kind: ToolKind; question: string } | { type: 'review'; path: string } | { type: 'plan' };

/**
 * Token counts, from the provider's own `usage`. `input_tokens` counts
 * every input token, cached or not; the two cache fields say how many of
 * them were read from the prompt cache or written to it (Anthropic), or
 * read from it (OpenAI's `cached_tokens`).
 */
export type Usage = { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };

/** One item of the todo list. */
export type TodoItem = { id?: string; content: string; status: TodoStatus };

/** Where one item of the list stands. */
export type TodoStatus = 'pending' | 'in_progress' | 'completed';

/** One finding of a review, on lines of one file. */
export type Finding = { id: string; file_path: string; start_line: number; end_line: number; severity: Severity; kind: string; title: string; body: string; suggestion?: string | null; related?: RelatedPlace[] };

/** How much a finding matters. */
export type Severity = 'error' | 'warning' | 'info';

/** Another place a finding involves. */
export type RelatedPlace = { file_path: string; line: number; message: string };

/** Where a task is in its life. */
export type TaskStatus = 'running' | 'exited' | 'stopped' | 'lost';

export type RunStatus = 'completed' | 'cancelled' | 'failed' | 'turn_limit' | 'loop';

/** What one call of a run did to one file, as the run's end lists it. */
export type ChangedFile = { call_id: string; path: string; status: EditStatus; ranges?: LineSpan[]; declined?: LineSpan[]; by_command?: string | null; deleted?: boolean; untried?: boolean };

/** The answer to `tandem.ask` once its run ended. */
export type AskAnswer = { runId: string; status: RunStatus; text: string; edits: RunEdit[]; summary?: string | null; threadId: string; costUsd?: number | null; usage?: Usage };

/**
 * The answer to `tandem.ask` with `"wait": false`, at once: the run's end
 * comes as its `end` event.
 */
export type AskStarted = { runId: string; threadId: string };

/** The edit statuses whose change is (at least partly) in the file. */
export const LANDED_EDIT_STATUSES: readonly EditStatus[] = ['applied', 'partial', 'written'];

/** Each edit status as a run's summary counts it (`written` is `applied` to the user). */
export const EDIT_STATUS_WORDS: Readonly<Record<EditStatus, string>> = {
  applied: 'applied',
  partial: 'partly applied',
  rejected: 'declined',
  not_applied: 'not applied',
  superseded: 'superseded',
  unknown: 'unknown',
  written: 'applied',
};

/**
 * The run's first event: the model endpoint it talks to, and why that
 * one (never a key).
 */
export interface ProviderEvent {
  type: 'provider';
  provider: string;
  model: string;
  base_url?: string | null;
  reason: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/** A piece of the model's answer, as it streams. */
export interface TextEvent {
  type: 'text';
  text: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * The model asked for a tool call. `kind` says what it does (paths,
 * command, URL) and `summary` sums it up for people: front ends use
 * these, never the tool's name or input fields.
 */
export interface ToolCallEvent {
  type: 'tool_call';
  id: string;
  name: string;
  input: unknown;
  kind?: ToolKind;
  summary?: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/** What went back to the model for a call. */
export interface ToolResultEvent {
  type: 'tool_result';
  id: string;
  is_error: boolean;
  content: string;
  /**
   * What the call did to files (an edit tool's change, whatever
   * became of it; the files a shell command changed), in order.
   */
  effects?: FileEffect[];
  /**
   * What became of the call's change to a file, as the editor's
   * front end reports it (`tandem/runEvent`, `tandem.transcript`).
   */
  edit?: RunEdit | null;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * What a call did to a file changed after its result went out: an
 * edit whose outcome was `unknown` (the editor said `applied: true`
 * and its buffer showed nothing in time, or the run stopped waiting)
 * landed after all. `effect` replaces the call's effect on that file.
 */
export interface EffectChangedEvent {
  type: 'effect_changed';
  call_id: string;
  effect: FileEffect;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * The run asks the user something and waits for the answer: a front
 * end puts the question to the user when it reaches this event, so
 * the question never overtakes the events before it. Answered by the
 * front end, not shown as an event (`tandem/runEvent` never carries it).
 */
export interface QuestionEvent {
  type: 'question';
  id: string;
  kind: QuestionKind;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/** After each model turn; `usage` is the run's running total. */
export interface StatusEvent {
  type: 'status';
  turn: number;
  usage: Usage;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * A model request failed and is sent again after `delay_ms`: what that
 * attempt streamed (text, tool calls) is void.
 */
export interface RetryEvent {
  type: 'retry';
  attempt: number;
  delay_ms: number;
  reason: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * A thinking block (Anthropic extended thinking), complete; front ends
 * show it collapsed.
 */
export interface ThinkingEvent {
  type: 'thinking';
  text: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * The history was compacted into a summary: the estimated context
 * size before and after, in tokens.
 */
export interface CompactEvent {
  type: 'compact';
  before_tokens: number;
  after_tokens: number;
  reason: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * A `UserPromptSubmit` or `Stop` hook did something the user should
 * know: blocked the prompt, added context, asked the agent to go on,
 * or failed. `name` is the hook event's name.
 */
export interface HookEvent {
  type: 'hook';
  name: string;
  message: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * The run's shell commands run without a sandbox (switched off in the
 * settings, or none can start here): the first event of such a run.
 */
export interface SandboxEvent {
  type: 'sandbox';
  message: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * The run waits for `what` ("MCP server github") to start before it
 * goes on: before its first model turn, or in a call that needs it.
 */
export interface WaitingEvent {
  type: 'waiting';
  what: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/** The model's todo list, whole, each time it changes (`todo_write`). */
export interface TodoEvent {
  type: 'todo';
  todos: TodoItem[];
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * A review's finding, as `report_finding` reported it (a review run
 * only: `tandem review`, `tandem.review`, ACP's `/review`).
 */
export interface FindingEvent {
  type: 'finding';
  finding: Finding;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * A background task of the run's thread started (`run_shell` with
 * `background`): its id and its command.
 */
export interface TaskStartedEvent {
  type: 'task_started';
  task_id: string;
  command: string;
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * A background task of the run's thread ended: by itself (`exited`,
 * with its exit code, 128 + the signal when one killed it), or
 * `stopped` (by `task_stop`, the user, or its session's end).
 */
export interface TaskEndedEvent {
  type: 'task_ended';
  task_id: string;
  command: string;
  status: TaskStatus;
  exit_code?: number | null;
  /** Its last lines of output. */
  last_lines?: string[];
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/**
 * The run is over. `usage` is the run's total; `cost_usd` the estimate
 * from the price table, when the model's prices are known.
 */
export interface EndEvent {
  type: 'end';
  status: RunStatus;
  text: string;
  usage?: Usage;
  cost_usd?: number | null;
  /** The saved thread, to continue it (`tandem ask --resume`). */
  thread_id?: string | null;
  /** The run's id, when its front end named it (an editor's run). */
  run_id?: string | null;
  /**
   * The files the run changed (an edit landed, at least in part, or
   * a command changed it), as the workspace shows them, sorted.
   */
  changed_files?: string[];
  /**
   * What the run's calls did to files, in the order they did it,
   * each with its call (a sub-agent's calls included), as the
   * calls' results and the `effect_changed` events left them.
   */
  effects?: ChangedFile[];
  /** A sub-agent's event: the id of the parent's call it is nested under. */
  parent?: string;
}

/** A run event (`tandem/runEvent`'s `event`, a line of `tandem ask --json`). */
export type RunEvent =
  | ProviderEvent
  | TextEvent
  | ToolCallEvent
  | ToolResultEvent
  | EffectChangedEvent
  | QuestionEvent
  | StatusEvent
  | RetryEvent
  | ThinkingEvent
  | CompactEvent
  | HookEvent
  | SandboxEvent
  | WaitingEvent
  | TodoEvent
  | FindingEvent
  | TaskStartedEvent
  | TaskEndedEvent
  | EndEvent;

export type RunEventType = RunEvent['type'];

/** Every run event's `type`, in the Rust type's order. */
export const RUN_EVENT_TYPES: readonly RunEventType[] = [
  'provider',
  'text',
  'tool_call',
  'tool_result',
  'effect_changed',
  'question',
  'status',
  'retry',
  'thinking',
  'compact',
  'hook',
  'sandbox',
  'waiting',
  'todo',
  'finding',
  'task_started',
  'task_ended',
  'end',
];
