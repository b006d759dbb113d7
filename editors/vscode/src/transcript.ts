// The live transcript, fed by tandem/runEvent ({runId, seq, event}).
import * as vscode from 'vscode';

interface RunEventParams {
  runId: string;
  seq: number;
  event: { type: string; text?: string; name?: string; input?: unknown; is_error?: boolean; content?: string };
}

export class Transcript {
  readonly log = vscode.window.createOutputChannel('Tandem');
  runId: string | undefined;

  start(prompt: string): void {
    this.runId = undefined;
    this.log.appendLine('');
    this.log.appendLine(`## ${prompt}`);
    this.log.show(true);
  }

  append(params: RunEventParams): void {
    this.runId = params.runId;
    const event = params.event;
    switch (event.type) {
      case 'text':
        this.log.append(event.text ?? '');
        break;
      case 'tool_call':
        this.log.appendLine(`\n→ ${event.name} ${JSON.stringify(event.input)}`);
        break;
      case 'tool_result': {
        const first = (event.content ?? '').split('\n')[0];
        this.log.appendLine(`  ${event.is_error ? '✗' : '✓'} ${first}`);
        break;
      }
    }
  }

  finish(status: string, text: string, edits: { uri: string; status: string }[]): void {
    this.log.appendLine(`\n[${status}]`);
    if (status !== 'completed' && text) {
      this.log.appendLine(text);
    }
    for (const edit of edits) {
      this.log.appendLine(`  ${edit.status}: ${edit.uri}`);
    }
    this.runId = undefined;
  }

  show(): void {
    this.log.show(true);
  }
}
