// Runs as the extension sees them: the current run, its live events (for
// the transcript and the chat participant), and which runs were cancelled.
import * as vscode from 'vscode';

export interface RunEvent {
  type: string;
  /** A tool call's id (sub-agent events name it as their `parent`). */
  id?: string;
  text?: string;
  name?: string;
  summary?: string;
  input?: Record<string, unknown>;
  is_error?: boolean;
  content?: string;
  status?: string;
  parent?: string;
  attempt?: number;
  reason?: string;
  /** On the tool_result of a call that changed a file: what became of the change. */
  edit?: { uri: string; status: string; ranges?: { startLine: number; endLine: number }[]; declined?: { startLine: number; endLine: number }[] };
}

export interface RunEventParams {
  runId: string;
  seq: number;
  event: RunEvent;
}

export class Runs {
  /** The active run's id ('starting' until the server names it). */
  current: string | undefined;
  /** Cancels the ask before the server named the run ($/cancelRequest). */
  cancelStarting: { cancel(): void } | undefined;
  private readonly cancelled = new Set<string>();
  private readonly emitter = new vscode.EventEmitter<RunEventParams>();
  readonly onEvent = this.emitter.event;
  private idle: (() => void)[] = [];

  event(params: RunEventParams): void {
    if (this.current === 'starting' && params.event?.type !== 'end') this.current = params.runId;
    this.emitter.fire(params);
  }

  begin(): void {
    this.current = 'starting';
  }

  end(): void {
    this.current = undefined;
    for (const wake of this.idle.splice(0)) wake();
  }

  markCancelled(runId: string): void {
    this.cancelled.add(runId);
  }

  wasCancelled(runId: string): boolean {
    return this.cancelled.has(runId);
  }

  whenIdle(): Promise<void> {
    return this.current ? new Promise((resolve) => this.idle.push(resolve)) : Promise.resolve();
  }
}
