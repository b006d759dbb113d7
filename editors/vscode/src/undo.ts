// "Tandem: Undo Last Run", "Tandem: Undo Hunk by Hunk" (its review hunk
// by hunk) and "Tandem: Redo": the server's `tandem.undo` /
// `tandem.redo` (docs/protocol.md), which restore every file a run changed
// (open documents through a reviewed workspace/applyEdit, closed files on
// disk) and say what became of each; the end-of-run notification's Undo
// button undoes that run, and so does the Undo (then Redo) on a run's
// edits in the Tandem panel, which hears of every undo and redo.
import * as vscode from 'vscode';
import { TandemServer, workspaceFolders } from './client';
import { UndoAnswer, undoArguments, undoSummary } from './logic';

/** An undo or redo that was asked for: `requested` the run named (none: the last run), and the answer, or why there is none. */
export interface Restore {
  direction: 'undo' | 'redo';
  requested?: string;
  answer?: UndoAnswer;
  /** What the user is told. */
  message: string;
}

const restores = new vscode.EventEmitter<Restore>();
/** Every undo and redo, from wherever it was asked (the palette, a notification, the panel). */
export const onDidRestore = restores.event;

/**
 * Undo (or redo) `runId`, else the last run (the last undone run for a
 * redo), and say what became of each file: in a notification offering the
 * opposite command, unless `notify` is false (the panel shows it itself).
 * `perHunk`: the restore is reviewed hunk by hunk (else each file whole).
 */
export async function undoRun(server: TandemServer, direction: 'undo' | 'redo', runId?: string, notify = true, perHunk = false): Promise<UndoAnswer | undefined> {
  const fail = (why: string): undefined => {
    const message = `Tandem: cannot ${direction}: ${why}`;
    restores.fire({ direction, requested: runId, message });
    if (notify) void vscode.window.showWarningMessage(message);
    return undefined;
  };
  const client = await server.ready();
  if (!client) return fail('the Tandem server is not running');
  let answer: UndoAnswer;
  try {
    answer = (await client.sendRequest('workspace/executeCommand', {
      command: direction === 'undo' ? 'tandem.undo' : 'tandem.redo',
      arguments: undoArguments(runId, perHunk),
    })) as UndoAnswer;
  } catch (error) {
    // Nothing to undo, a run still going, an unknown run: the server says which.
    return fail(error instanceof Error ? error.message : String(error));
  }
  const message = undoSummary(direction, answer, workspaceFolders());
  server.transcript.note(message);
  restores.fire({ direction, requested: runId, answer, message });
  if (!notify) return answer;
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
    restores,
    vscode.commands.registerCommand('tandem.undoRun', (runId?: string) => undoRun(server, 'undo', typeof runId === 'string' ? runId : undefined)),
    vscode.commands.registerCommand('tandem.undoRunPerHunk', (runId?: string) => undoRun(server, 'undo', typeof runId === 'string' ? runId : undefined, true, true)),
    vscode.commands.registerCommand('tandem.redoRun', (runId?: string) => undoRun(server, 'redo', typeof runId === 'string' ? runId : undefined)),
  );
}
