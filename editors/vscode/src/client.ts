// The language client for `tandem lsp`: capabilities Tandem reads, and the
// server → client messages it adds to LSP.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { Transcript } from './transcript';

let client: LanguageClient | undefined;
export const transcript = new Transcript();

export async function startClient(context: vscode.ExtensionContext): Promise<LanguageClient> {
  const config = vscode.workspace.getConfiguration('tandem');
  const command = config.get<string>('serverPath') || 'tandem';
  const serverOptions: ServerOptions = { command, args: ['lsp'] };
  const clientOptions: LanguageClientOptions = {
    // Every file: the agent reads and edits any document, not one language.
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions: {
      tandem: {
        // We answer tandem/saveDocuments, so edits the agent made to
        // buffers without user changes reach the disk before its next
        // shell command.
        saveDocuments: true,
        provider: config.get<string>('provider') || undefined,
        model: config.get<string>('model') || undefined,
        permissionMode: config.get<string>('permissionMode') || undefined,
      },
    },
    outputChannel: transcript.log,
  };
  client = new LanguageClient('tandem', 'Tandem', serverOptions, clientOptions);
  client.onNotification('tandem/runEvent', (params) => transcript.append(params));
  client.onRequest('tandem/saveDocuments', async (params: { uris: string[] }) => {
    const saved: string[] = [];
    for (const uri of params.uris ?? []) {
      const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      if (document && (await document.save())) {
        saved.push(uri);
      }
    }
    return { saved };
  });
  context.subscriptions.push(client);
  await client.start();
  return client;
}

export async function stopClient(): Promise<void> {
  if (client) {
    await client.stop();
    client = undefined;
  }
}
