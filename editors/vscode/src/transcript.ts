// The transcript in the "Tandem" output channel: every run (palette, code
// action or chat) gets a heading and an end marker; edits are listed as
// workspace-relative paths; sub-agent events (with `parent`) are nested
// under the call that started them (transcriptText.ts).
import * as vscode from 'vscode';
import { AskResult, editsSummary } from './logic';
import type { PastEvent } from './events';
import { RunEventParams } from './runs';
import { TranscriptText, ending, heading, threadText } from './transcriptText';

export class Transcript {
  readonly log = vscode.window.createOutputChannel('Tandem');
  private open = false;
  private readonly text = new TranscriptText();

  start(title: string): void {
    this.log.append(this.text.lineBreak());
    this.text.reset();
    this.log.append(heading(title));
    this.open = true;
    this.log.show(true);
  }

  append(params: RunEventParams): void {
    this.log.append(this.text.event(params.event));
  }

  finish(result: AskResult, folders: string[]): void {
    if (!this.open) return;
    this.open = false;
    this.log.append(this.text.lineBreak());
    this.log.append(ending(result.status, result.text));
    const summary = editsSummary(result.edits, folders);
    if (summary !== '') this.log.appendLine(summary);
  }

  note(text: string): void {
    this.log.append(this.text.lineBreak());
    this.log.appendLine(text);
  }

  /** Empty the transcript (a new conversation starts). */
  clear(): void {
    this.log.clear();
    this.text.reset();
    this.open = false;
  }

  /** Show a conversation thread's whole past in place of what was shown. */
  replay(events: PastEvent[], omitted: number): void {
    this.clear();
    this.log.append(threadText(events, omitted));
    this.log.show(true);
  }

  show(): void {
    this.log.show(true);
  }
}
