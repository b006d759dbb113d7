// "Ask agent", "Cancel run", "Show transcript".
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { transcript } from './client';

interface AskResult {
  runId: string;
  status: 'completed' | 'cancelled' | 'failed' | 'turn_limit';
  text: string;
  edits: { uri: string; status: string }[];
}

export function registerCommands(context: vscode.ExtensionContext, client: LanguageClient): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('tandem.askAgent', async () => {
      const prompt = await vscode.window.showInputBox({ prompt: 'Ask Tandem', placeHolder: 'What should the agent do?' });
      if (!prompt) {
        return;
      }
      const editor = vscode.window.activeTextEditor;
      const argument: Record<string, unknown> = { prompt };
      if (editor) {
        argument.textDocument = { uri: editor.document.uri.toString() };
        if (!editor.selection.isEmpty) {
          argument.range = client.code2ProtocolConverter.asRange(editor.selection);
        }
      }
      transcript.start(prompt);
      try {
        const result = (await client.sendRequest('workspace/executeCommand', {
          command: 'tandem.ask',
          arguments: [argument],
        })) as AskResult;
        transcript.finish(result.status, result.text, result.edits);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        transcript.finish('failed', message, []);
        void vscode.window.showErrorMessage(`Tandem: ${message}`);
      }
    }),
    vscode.commands.registerCommand('tandem.cancelRun', async () => {
      const runId = transcript.runId;
      if (!runId) {
        void vscode.window.showInformationMessage('Tandem: no run to cancel');
        return;
      }
      await client.sendRequest('workspace/executeCommand', { command: 'tandem.cancel', arguments: [{ runId }] });
    }),
    vscode.commands.registerCommand('tandem.showTranscript', () => transcript.show()),
  );
}
