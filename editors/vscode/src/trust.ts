// "Tandem: Trust Workspace": the server's `tandem.trust` (docs/protocol.md)
// trusts this folder's own settings files (.tandem/settings.json,
// .tandem/settings.local.json, .mcp.json) as they are now; until then they
// may only tighten. When what now applies starts with a session (MCP or
// language servers), the server is restarted to start them.
import * as vscode from 'vscode';
import { TandemServer } from './client';
import { TrustAnswer, trustSummary } from './logic';

export async function trustWorkspace(server: TandemServer): Promise<TrustAnswer | undefined> {
  const client = await server.ready();
  if (!client) return undefined;
  let answer: TrustAnswer;
  try {
    answer = (await client.sendRequest('workspace/executeCommand', { command: 'tandem.trust', arguments: [] })) as TrustAnswer;
  } catch (error) {
    void vscode.window.showWarningMessage(`Tandem: cannot trust this folder: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  const message = trustSummary(answer);
  server.transcript.note(message);
  void vscode.window.showInformationMessage(message);
  if (answer.restart) await server.restart('the folder is trusted');
  return answer;
}

export function registerTrust(context: vscode.ExtensionContext, server: TandemServer): void {
  context.subscriptions.push(vscode.commands.registerCommand('tandem.trustWorkspace', () => trustWorkspace(server)));
}
