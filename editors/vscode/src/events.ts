// The run events as the extension and the panel get them: the union
// generated from the server's Rust types (protocol.generated.ts; regenerate
// it with `UPDATE_EXPECT=1 cargo test --locked --test integration protocol::`),
// with what became of each edit (`RunEdit`, its `EditStatus`: whether it
// landed and its words come from the server's types too), plus the `prompt`
// and `edits` events of a thread's past (`tandem.transcript`). Free of the
// `vscode` module: the webview and the mocha tests use it too.
import type * as Wire from './protocol.generated';
import { EDIT_STATUS_WORDS, LANDED_EDIT_STATUSES } from './protocol.generated';

export type { AskAnswer, EditStatus, Finding, LineSpan, RunEdit, RunStatus, ToolKind, Usage, RunEventType, TodoItem } from './protocol.generated';
export { RUN_EVENT_TYPES } from './protocol.generated';

export type ToolResultEvent = Wire.ToolResultEvent;
export type ToolCallEvent = Wire.ToolCallEvent;
export type ProviderEvent = Wire.ProviderEvent;
export type EndEvent = Wire.EndEvent;

/** A review's finding, in one line: `F1 error src/lib.rs:2-3: title`. */
export function findingLine(finding: Wire.Finding): string {
  const lines = finding.start_line === finding.end_line ? `${finding.start_line}` : `${finding.start_line}-${finding.end_line}`;
  return `${finding.id} ${finding.severity} ${finding.file_path}:${lines}: ${finding.title.split('\n')[0]}`;
}

/** A run event (`tandem/runEvent`'s `event`): a union discriminated by `type`. */
export type RunEvent = Wire.RunEvent;

/** The status is one the server's types name (a newer server may send another). */
function isEditStatus(status: string): status is Wire.EditStatus {
  return Object.prototype.hasOwnProperty.call(EDIT_STATUS_WORDS, status);
}

/** The edit's change is (at least partly) in the file, as its status says. */
export function statusLanded(status: string): boolean {
  return isEditStatus(status) && LANDED_EDIT_STATUSES.includes(status);
}

/** The words for an edit status, as the server's messages use them. */
export function statusWords(status: string): string {
  return isEditStatus(status) ? EDIT_STATUS_WORDS[status] : status;
}

/** The order a run's summary counts edits in, by their words. */
export const STATUS_WORDS_ORDER: readonly string[] = [...new Set(Object.values(EDIT_STATUS_WORDS))];

/**
 * How an edit's status is coloured: landed, landed in part (or not known),
 * or not. tsc fails here when the server's types gain a status.
 */
export function statusTone(status: string): 'ok' | 'partial' | 'error' {
  if (!isEditStatus(status)) return 'error';
  switch (status) {
    case 'applied':
    case 'written':
      return 'ok';
    case 'partial':
    case 'unknown':
      return 'partial';
    case 'rejected':
    case 'not_applied':
    case 'superseded':
      return 'error';
    default:
      unhandled(status);
      return 'error';
  }
}

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
  edits: Wire.RunEdit[];
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
