// The transcript's text, free of the `vscode` module so mocha tests it in
// plain Node: each run event becomes the text appended to the "Tandem"
// output channel. A sub-agent's events carry `parent`, the id of the call
// that started it (an `agent` call, or a forked `skill`); they are indented
// under that call, one level per generation, and its streamed text starts
// on a line of its own, as the parent's text does when it resumes.
import { findingLine, statusTone, unhandled } from './events';
import type { PastEvent, RunEvent, ToolCallEvent } from './events';

/** One level of nesting. */
const LEVEL = '    │ ';

/** What a tool call is about, on one line. */
export function callSummary(event: ToolCallEvent): string {
  if (event.summary) return `${event.name ?? '?'} ${event.summary.split('\n')[0]}`;
  const input = (typeof event.input === 'object' && event.input !== null ? event.input : {}) as Record<string, unknown>;
  const subject = ['file_path', 'command', 'pattern', 'path', 'url'].map((k) => input[k]).find((v) => typeof v === 'string');
  return `${event.name ?? '?'}${subject ? ' ' + String(subject).split('\n')[0] : ''}`;
}

export class TranscriptText {
  /** The nesting depth of each tool call's own line, by call id. */
  private readonly callDepth = new Map<string, number>();
  /** The depth of the line being written. */
  private depth = 0;
  private atLineStart = true;

  /** A new run: nothing is open. */
  reset(): void {
    this.callDepth.clear();
    this.depth = 0;
    this.atLineStart = true;
  }

  /** The text that ends the current line, if one is open. */
  lineBreak(): string {
    if (this.atLineStart) return '';
    this.atLineStart = true;
    return '\n';
  }

  /** The text to append for one run event ('' for events not shown). */
  event(event: RunEvent): string {
    const depth = event.parent !== undefined ? (this.callDepth.get(event.parent) ?? 0) + 1 : 0;
    switch (event.type) {
      case 'text':
        return this.text(event.text ?? '', depth);
      case 'tool_call': {
        if (event.id !== undefined) this.callDepth.set(event.id, depth);
        return this.line(`→ ${callSummary(event)}`, depth);
      }
      case 'tool_result': {
        const first = (event.content ?? '').split('\n')[0];
        // A partly applied edit (or one nobody knows landed) is neither done nor refused.
        const edit = event.edit?.status;
        const mark = edit !== undefined && statusTone(edit) === 'partial' ? '◐' : event.is_error ? '✗' : '✓';
        return this.line(`  ${mark} ${first}`, depth);
      }
      case 'retry':
        return this.line(`(retrying, attempt ${event.attempt}: ${event.reason})`, 0);
      case 'todo': {
        // The model's todo list, whole each time it changes (todo_write).
        if (depth > 0) return '';
        const done = event.todos.filter((item) => item.status === 'completed').length;
        const items = event.todos.map((item) => `  ${todoBox(item.status)} ${item.content.split('\n')[0]}`);
        return this.line(`Todo (${done}/${event.todos.length})`, 0) + items.map((item) => item + '\n').join('');
      }
      case 'finding':
        // A review's finding (report_finding); the Problems panel has it too.
        return this.line(`Finding ${findingLine(event.finding)}`, depth);
      case 'task_started':
        return this.line(`(task ${event.task_id} started in the background: ${firstLine(event.command)})`, depth);
      case 'task_ended':
        return this.line(`(task ${event.task_id} ${taskEnd(event)}: ${firstLine(event.command)})`, depth);
      // Shown elsewhere (the run's heading and end marker, the status
      // bar, the panel) or not in the transcript.
      case 'provider':
      case 'status':
      case 'thinking':
      case 'compact':
      case 'hook':
      case 'sandbox':
      case 'waiting':
      case 'effect_changed':
      // The server asks it (a prompt), never sends it as an event.
      case 'question':
      case 'end':
        return '';
      default:
        // A run event type this switch does not name fails to compile.
        unhandled(event);
        return '';
    }
  }

  /** A whole line at `depth`, on a line of its own. */
  private line(content: string, depth: number): string {
    const out = this.lineBreak() + LEVEL.repeat(depth) + content + '\n';
    this.depth = depth;
    this.atLineStart = true;
    return out;
  }

  /** Streamed text: continues the open line when it is at the same depth. */
  private text(text: string, depth: number): string {
    if (text === '') return '';
    let out = depth !== this.depth ? this.lineBreak() : '';
    this.depth = depth;
    const prefix = LEVEL.repeat(depth);
    const lines = text.split('\n');
    lines.forEach((piece, index) => {
      if (index > 0) {
        out += '\n';
        this.atLineStart = true;
      }
      if (piece === '') return;
      if (this.atLineStart) out += prefix;
      out += piece;
      this.atLineStart = false;
    });
    return out;
  }
}

/** A run's heading: the first line of its prompt. */
export function heading(title: string): string {
  return `\n## ${title.split('\n')[0]}\n\n`;
}

/** A run's end marker: its status, and why when it did not complete. */
export function ending(status: string, text?: string): string {
  return `\n— ${status} —\n` + (status !== 'completed' && text ? `${text}\n` : '');
}

/**
 * A conversation thread's past (the events of `tandem.transcript`) as the
 * live transcript showed it: each run's heading (its `prompt` event), its
 * events, its end marker, and what became of its edits (its `edits` event).
 */
export function threadText(events: PastEvent[], omitted = 0): string {
  const text = new TranscriptText();
  let out = omitted > 0 ? `(${omitted} earlier events of this conversation are not shown)\n` : '';
  for (const event of events) {
    if (event.type === 'prompt') {
      out += text.lineBreak();
      text.reset();
      out += heading(event.text ?? '');
    } else if (event.type === 'end') {
      out += text.lineBreak() + ending(event.status ?? '?', event.text);
    } else if (event.type === 'edits') {
      if (event.summary) out += text.lineBreak() + `${event.summary}\n`;
    } else {
      out += text.event(event);
    }
  }
  return out + text.lineBreak();
}

/** A todo item's checkbox, as the terminal and Neovim show it. */
export function todoBox(status: string): string {
  return status === 'completed' ? '[x]' : status === 'in_progress' ? '[~]' : '[ ]';
}

/** How a background task ended: "exited with code 1", "stopped". */
export function taskEnd(event: { status: string; exit_code?: number | null }): string {
  return event.status === 'exited' && typeof event.exit_code === 'number' ? `exited with code ${event.exit_code}` : event.status;
}

function firstLine(text: string): string {
  return text.split('\n')[0];
}
