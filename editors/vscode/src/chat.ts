// `@tandem` in the chat view: the prompt (with the active editor as
// context) runs as an ordinary Tandem run, its text, tool calls and edits
// streamed into the chat response.
import * as vscode from 'vscode';
import { TandemServer, workspaceFolders } from './client';
import { runAsk } from './commands';
import { relativePath } from './logic';

export function registerChat(context: vscode.ExtensionContext, server: TandemServer): void {
  const chat = (vscode as { chat?: typeof vscode.chat }).chat;
  if (!chat?.createChatParticipant) return; // an editor without the chat API
  const participant = chat.createChatParticipant('tandem.agent', async (request, _context, stream, token) => {
    const editor = vscode.window.activeTextEditor;
    const argument: { prompt: string; textDocument?: { uri: string } } = { prompt: request.prompt };
    if (editor) argument.textDocument = { uri: editor.document.uri.toString() };
    const result = await runAsk(
      server,
      argument,
      ({ event }) => {
        if (event.type === 'text' && event.text) stream.markdown(event.text);
        if (event.type === 'tool_call') stream.progress(event.summary ?? event.name ?? 'working');
      },
      token,
    );
    if (!result) {
      stream.markdown('Tandem could not start the run (see the notification).');
      return;
    }
    for (const edit of result.edits) {
      stream.markdown(`\n\n${edit.status}: `);
      stream.anchor(vscode.Uri.parse(edit.uri), relativePath(edit.uri, workspaceFolders()));
    }
    if (result.status !== 'completed') stream.markdown(`\n\n**${result.status}**: ${result.text}`);
    return { metadata: { runId: result.runId, status: result.status } };
  });
  context.subscriptions.push(participant);
}
