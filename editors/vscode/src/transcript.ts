// The transcript in the "Tandem Transcript" output channel: every run
// (palette, code action or chat) gets a heading and an end marker; edits are
// listed as workspace-relative paths; sub-agent events (with `parent`) are
// nested under the call that started them (transcriptText.ts). The panel
// shows the runs: the channel opens at a run's start only with
// `tandem.transcript.reveal`, or by "Tandem: Show transcript". The server's
// own log is the "Tandem" channel (client.ts), opened only on errors.
import * as vscode from 'vscode';
import { AskResult, editsSummary } from './logic';
import type { PastEvent } from './events';
import { RunEventParams } from './runs';
import { TranscriptText, ending, heading, threadText } from './transcriptText';

export class Transcript {
  readonly log = vscode.window.createOutputChannel('Tandem Transcript');
  private open = false;
  private readonly text = new TranscriptText();

  start(title: string): void {
    this.log.append(this.text.lineBreak());
    this.text.reset();
    this.log.append(heading(title));
    this.open = true;
    this.reveal();
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
    this.reveal();
  }

  show(): void {
    this.log.show(true);
  }

  /** Open the channel when the user asked for it on every run. */
  private reveal(): void {
    if (vscode.workspace.getConfiguration('tandem').get<boolean>('transcript.reveal', false)) this.log.show(true);
  }
}
