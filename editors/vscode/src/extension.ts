// Activation only: start the language client and register the commands.
import * as vscode from 'vscode';
import { startClient, stopClient } from './client';
import { registerCommands } from './commands';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const client = await startClient(context);
  registerCommands(context, client);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
