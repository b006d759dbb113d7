// The run events as the extension and the panel get them: the union
// generated from the server's Rust types (protocol.generated.ts; regenerate
// it with `UPDATE_EXPECT=1 cargo test --locked --test integration protocol::`),
// plus what the LSP server adds on the way: the `edit` outcome on the
// `tool_result` of a call that changed a file, and the `prompt` event that
// opens each run in a thread's past (`tandem.transcript`). Free of the
// `vscode` module: the webview and the mocha tests use it too.
import type * as Wire from './protocol.generated';

export type { RunStatus, ToolKind, Usage, RunEventType, TodoItem } from './protocol.generated';
export { RUN_EVENT_TYPES } from './protocol.generated';

/** What became of a call's change to a file (the `edits` entry of `tandem.ask`'s answer). */
export interface EditOutcome {
  uri: string;
  status: string;
  ranges?: { startLine: number; endLine: number }[];
  declined?: { startLine: number; endLine: number }[];
}

export type ToolResultEvent = Wire.ToolResultEvent & { edit?: EditOutcome };
export type ToolCallEvent = Wire.ToolCallEvent;
export type ProviderEvent = Wire.ProviderEvent;
export type EndEvent = Wire.EndEvent;

/** A run event (`tandem/runEvent`'s `event`): a union discriminated by `type`. */
export type RunEvent = Exclude<Wire.RunEvent, Wire.ToolResultEvent> | ToolResultEvent;

/** The event that opens each run in a thread's past (`tandem.transcript`). */
export interface PromptEvent {
  type: 'prompt';
  text: string;
  /** What the prompt attached, as the thread kept it (`notes.md`, `src/a.ts:3-9`). */
  attachments?: string[];
}

/**
 * What became of a past run's edits, as its end line listed them
 * (`tandem.transcript`, after the run's `end`): the answer's `edits` entries,
 * each with the call that made it.
 */
export interface EditsEvent {
  type: 'edits';
  edits: (EditOutcome & { toolCallId?: string; command?: string; deleted?: boolean })[];
  summary?: string;
  /** The run's checkpoint, while it is kept: `tandem.undo` takes it as the `runId`. */
  checkpoint?: string;
  /** The run is undone now (its checkpoint says so). */
  undone?: boolean;
}

/** An event of a thread's past: a run event, a run's prompt, or its edits. */
export type PastEvent = RunEvent | PromptEvent | EditsEvent;

/** tsc fails here when a switch over a union misses one of its members. */
export function unhandled(value: never): void {
  void value;
}
