// The transcript in the "Tandem" output channel: every run (palette, code
// action or chat) gets a heading and an end marker; edits are listed as
// workspace-relative paths; sub-agent events (with `parent`) are indented.
import * as vscode from 'vscode';
import { AskResult, relativePath } from './logic';
import { RunEventParams } from './runs';

export class Transcript {
  readonly log = vscode.window.createOutputChannel('Tandem');
  private open = false;

  start(title: string): void {
    this.log.appendLine('');
    this.log.appendLine(`## ${title.split('\n')[0]}`);
    this.log.appendLine('');
    this.open = true;
    this.log.show(true);
  }

  append(params: RunEventParams): void {
    const event = params.event;
    const indent = event.parent ? '    │ ' : '';
    switch (event.type) {
      case 'text':
        this.log.append(indent ? (event.text ?? '').replace(/\n/g, `\n${indent}`) : (event.text ?? ''));
        break;
      case 'tool_call': {
        const input = event.input ?? {};
        const subject = ['file_path', 'command', 'pattern', 'path', 'url'].map((k) => input[k]).find((v) => typeof v === 'string');
        const summary = event.summary ?? `${event.name}${subject ? ' ' + String(subject).split('\n')[0] : ''}`;
        this.log.appendLine(`\n${indent}→ ${summary}`);
        break;
      }
      case 'tool_result': {
        const first = (event.content ?? '').split('\n')[0];
        this.log.appendLine(`${indent}  ${event.is_error ? '✗' : '✓'} ${first}`);
        break;
      }
      case 'retry':
        this.log.appendLine(`\n(retrying, attempt ${event.attempt}: ${event.reason})`);
        break;
    }
  }

  finish(result: AskResult, folders: string[]): void {
    if (!this.open) return;
    this.open = false;
    this.log.appendLine(`\n— ${result.status} —`);
    if (result.status !== 'completed' && result.text) this.log.appendLine(result.text);
    for (const edit of result.edits) {
      this.log.appendLine(`  ${edit.status}: ${relativePath(edit.uri, folders)}`);
    }
  }

  note(text: string): void {
    this.log.appendLine(text);
  }

  show(): void {
    this.log.show(true);
  }
}
