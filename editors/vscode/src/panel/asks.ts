// The server's questions (`window/showMessageRequest`: a permission ask, a
// hook to trust, a plan to execute) while the Tandem panel answers them,
// free of the `vscode` module so mocha tests it. An ask waits here until
// the user picks one of its actions in the panel, or the server withdraws
// it (its timeout, or a cancelled run: the request's cancellation), which
// answers null, as a dismissed prompt does. Closing the panel leaves it
// waiting: the status bar says so, and the panel shows it again when it
// reopens.
import type { MessageRequestParams } from '../logic';
import type { Conversation, PendingAsk } from './conversation';

/** The part of a cancellation token an ask needs. */
export interface Cancellation {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}

interface Waiting {
  ask: PendingAsk;
  actions: { title: string }[];
  resolve: (answer: { title: string } | null) => void;
  cancelled: { dispose(): void };
}

export class Asks {
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  constructor(private readonly conversation: Conversation) {}

  /** Ask the user; resolves to the chosen action, or null when withdrawn. */
  ask(params: MessageRequestParams | undefined, token: Cancellation): Promise<{ title: string } | null> {
    const actions = (params?.actions ?? []).filter((a): a is { title: string } => typeof a?.title === 'string');
    if (token.isCancellationRequested) return Promise.resolve(null);
    const id = this.nextId++;
    const message = (params?.message ?? '').replace(/\r\n?/g, '\n').replace(/\n+$/, '');
    return new Promise((resolve) => {
      const cancelled = token.onCancellationRequested(() => this.settle(id, null));
      this.waiting.set(id, { ask: { id, message, actions: actions.map((a) => a.title) }, actions, resolve, cancelled });
      this.publish();
    });
  }

  /** The user picked `title` on ask `id`; false when it is no longer waiting or has no such action. */
  answer(id: number, title: string): boolean {
    const waiting = this.waiting.get(id);
    const action = waiting?.actions.find((a) => a.title === title);
    if (!waiting || !action) return false;
    this.settle(id, action);
    return true;
  }

  /** The asks waiting, oldest first. */
  pending(): PendingAsk[] {
    return [...this.waiting.values()].map((w) => w.ask);
  }

  private settle(id: number, answer: { title: string } | null): void {
    const waiting = this.waiting.get(id);
    if (!waiting) return;
    this.waiting.delete(id);
    waiting.cancelled.dispose();
    waiting.resolve(answer);
    this.publish();
  }

  private publish(): void {
    this.conversation.setAsks(this.pending());
  }
}
