// "Tandem: Undo Last Run" and "Tandem: Redo": the server's `tandem.undo` /
// `tandem.redo` (docs/protocol.md), which restore every file a run changed
// (open documents through a reviewed workspace/applyEdit, closed files on
// disk) and say what became of each; the end-of-run notification's Undo
// button undoes that run.
import * as vscode from 'vscode';
import { TandemServer, workspaceFolders } from './client';
import { UndoAnswer, undoSummary } from './logic';

/** Undo (or redo) `runId`, else the last run (the last undone run for a redo), and say what became of each file. */
export async function undoRun(server: TandemServer, direction: 'undo' | 'redo', runId?: string): Promise<UndoAnswer | undefined> {
  const client = await server.ready();
  if (!client) return undefined;
  let answer: UndoAnswer;
  try {
    answer = (await client.sendRequest('workspace/executeCommand', {
      command: direction === 'undo' ? 'tandem.undo' : 'tandem.redo',
      arguments: runId ? [{ runId }] : [],
    })) as UndoAnswer;
  } catch (error) {
    // Nothing to undo, a run still going, an unknown run: the server says which.
    const message = error instanceof Error ? error.message : String(error);
    void vscode.window.showWarningMessage(`Tandem: cannot ${direction}: ${message}`);
    return undefined;
  }
  const message = undoSummary(direction, answer, workspaceFolders());
  server.transcript.note(message);
  const again = direction === 'undo' ? 'Redo' : 'Undo';
  const conflicts = (answer.files ?? []).some((f) => f.status === 'conflict');
  const show = conflicts ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  void show(message, again).then((choice) => {
    if (choice === again) void undoRun(server, direction === 'undo' ? 'redo' : 'undo', answer.runId);
  });
  return answer;
}

export function registerUndo(context: vscode.ExtensionContext, server: TandemServer): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('tandem.undoRun', (runId?: string) => undoRun(server, 'undo', typeof runId === 'string' ? runId : undefined)),
    vscode.commands.registerCommand('tandem.redoRun', (runId?: string) => undoRun(server, 'redo', typeof runId === 'string' ? runId : undefined)),
  );
}
