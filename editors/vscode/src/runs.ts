// Runs as the extension sees them: the current run, its live events (for
// the transcript, the panel and the chat participant), which runs were
// cancelled, and the conversation thread asks continue.
import * as vscode from 'vscode';
import type { AskResult } from './logic';

import type { PastEvent, RunEvent } from './events';

export type { RunEvent } from './events';

export interface RunEventParams {
  runId: string;
  threadId?: string;
  seq: number;
  event: RunEvent;
}

/** The conversation thread the next ask continues, and its past when it was resumed. */
export interface ThreadChange {
  threadId: string | undefined;
  title?: string;
  /** A resumed thread's past (`tandem.transcript`); empty for a new one. */
  past: PastEvent[];
  omitted: number;
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
  /** The conversation thread asks continue (undefined: the next ask starts one). */
  thread: string | undefined;
  private readonly threadEmitter = new vscode.EventEmitter<ThreadChange>();
  readonly onDidChangeThread = this.threadEmitter.event;
  private readonly beginEmitter = new vscode.EventEmitter<string>();
  /** A run starts, with its prompt. */
  readonly onDidBegin = this.beginEmitter.event;
  private readonly endEmitter = new vscode.EventEmitter<AskResult | undefined>();
  /** A run ended, with `tandem.ask`'s answer (undefined when there was none). */
  readonly onDidEnd = this.endEmitter.event;

  event(params: RunEventParams): void {
    if (this.current === 'starting' && params.event?.type !== 'end') this.current = params.runId;
    this.emitter.fire(params);
  }

  begin(prompt = ''): void {
    this.current = 'starting';
    this.beginEmitter.fire(prompt);
  }

  end(result?: AskResult & { threadId?: string }): void {
    this.current = undefined;
    if (result?.threadId) this.thread = result.threadId;
    this.endEmitter.fire(result);
    for (const wake of this.idle.splice(0)) wake();
  }

  /** Continue `threadId` from the next ask on (undefined: start a new thread). */
  setThread(change: ThreadChange): void {
    this.thread = change.threadId;
    this.threadEmitter.fire(change);
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
