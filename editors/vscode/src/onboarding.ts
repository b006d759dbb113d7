// Getting started: the walkthrough's completion (context keys the steps
// wait on) and the "Configure Tandem" notification when no model provider
// is configured (setup.ts decides).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { SECRET_KEYS, TandemServer } from './client';
import { providerConfigured } from './setup';
import { ownText } from './logic';

const WALKTHROUGH = 'tandem.tandem#setup';
const DONT_ASK = 'tandem.configure.dontAsk';

/** The settings files the server reads a provider from (docs/settings.md). */
function settingsFiles(): unknown[] {
  const paths = [path.join(os.homedir(), '.tandem', 'settings.json')];
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== 'file') continue;
    paths.push(path.join(folder.uri.fsPath, '.tandem', 'settings.json'), path.join(folder.uri.fsPath, '.tandem', 'settings.local.json'));
  }
  const files: unknown[] = [];
  for (const file of paths) {
    try {
      files.push(JSON.parse(fs.readFileSync(file, 'utf8')));
    } catch {
      // Missing or not JSON: the server says so itself when it reads it.
    }
  }
  return files;
}

async function configured(context: vscode.ExtensionContext): Promise<boolean> {
  const config = vscode.workspace.getConfiguration('tandem');
  const env: Record<string, string | undefined> = { ...process.env };
  env.ANTHROPIC_API_KEY ||= await context.secrets.get(SECRET_KEYS.anthropic);
  env.OPENAI_API_KEY ||= await context.secrets.get(SECRET_KEYS.openai);
  // The user's own values: a folder's are not what the server runs with.
  const own = (key: string) => ownText(config.inspect(key));
  return providerConfigured({ env, provider: own('provider'), baseUrl: own('baseUrl'), files: settingsFiles() });
}

/**
 * Tick a step of the walkthrough off. Its completion event (`onContext:`
 * in package.json) is not enough alone: VS Code's walkthrough service is
 * made only when a walkthrough or the Welcome page first shows (not at
 * startup when the Welcome page does not open), and a context key that is
 * already true then counts as seen, so the step never ticks (seen in VS
 * Code 1.139). `welcome.markStepComplete` is VS Code's own command for
 * it, not API: an editor without it leaves the step to its event.
 */
function tick(step: 'binary' | 'model' | 'ask'): void {
  void Promise.resolve(vscode.commands.executeCommand('welcome.markStepComplete', `${WALKTHROUGH}#${step}`)).catch(() => undefined);
}

export function registerOnboarding(context: vscode.ExtensionContext, server: TandemServer): { check(): Promise<void> } {
  const update = async () => {
    const ok = await configured(context);
    const running = server.client !== undefined && server.failure === undefined;
    await vscode.commands.executeCommand('setContext', 'tandem.providerConfigured', ok);
    await vscode.commands.executeCommand('setContext', 'tandem.serverRunning', running);
    if (ok) tick('model');
    if (running) tick('binary');
    return ok;
  };
  context.subscriptions.push(
    vscode.commands.registerCommand('tandem.configure', () => vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH, false)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('tandem')) void update();
    }),
    context.secrets.onDidChange(() => void update()),
    server.onDidStart(() => void update()),
    server.runs.onDidBegin(() => {
      void vscode.commands.executeCommand('setContext', 'tandem.asked', true);
      tick('ask');
    }),
  );
  return {
    async check() {
      if (await update()) return;
      if (context.globalState.get<boolean>(DONT_ASK) === true) return;
      const CONFIGURE = 'Configure Tandem';
      const KEY = 'Set API Key';
      const NEVER = "Don't ask again";
      const choice = await vscode.window.showInformationMessage(
        'Tandem: no model is configured. Set an API key, point Tandem at a local model, or follow the walkthrough.',
        CONFIGURE,
        KEY,
        NEVER,
      );
      if (choice === CONFIGURE) await vscode.commands.executeCommand('tandem.configure');
      else if (choice === KEY) await vscode.commands.executeCommand('tandem.setApiKey');
      else if (choice === NEVER) await context.globalState.update(DONT_ASK, true);
    },
  };
}
