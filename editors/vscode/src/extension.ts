// Activation: register the commands first (they stay registered whatever
// happens to the server), then start the server.
import * as vscode from 'vscode';
import { registerChat } from './chat';
import { TandemServer } from './client';
import { registerCodeIntel } from './codeIntel';
import { registerCommands } from './commands';
import { registerOnboarding } from './onboarding';
import { registerPanel } from './panel/view';
import { Runs } from './runs';
import { registerTasks } from './tasks';
import { registerReview } from './review';
import { Transcript } from './transcript';
import { registerTrust } from './trust';
import { registerUndo } from './undo';

let server: TandemServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const transcript = new Transcript();
  const runs = new Runs();
  context.subscriptions.push(transcript.log, runs.onEvent((params) => transcript.append(params)));
  server = new TandemServer(context, transcript, runs);
  context.subscriptions.push(server);
  registerCommands(context, server);
  registerUndo(context, server);
  registerTrust(context, server);
  registerTasks(context, server, runs);
  registerReview(context, server);
  registerChat(context, server);
  registerCodeIntel(context);
  const panel = registerPanel(context, server);
  const onboarding = registerOnboarding(context, server);
  await server.start();
  void onboarding.check();
  await panel.restore();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
