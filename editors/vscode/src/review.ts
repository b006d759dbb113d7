// "Tandem: Review Changes": the agent reviews the uncommitted changes
// (`tandem.review`, docs/review.md). Its findings come as the server's
// diagnostics — the Problems panel, the squiggles — with their code actions
// (fix with Tandem, apply the suggested change, dismiss): no code here.
import * as vscode from 'vscode';
import { TandemServer } from './client';

interface ReviewAnswer {
  nothingToReview?: string;
  status?: string;
  findings?: unknown[];
  skipped?: { path: string; reason: string }[];
}

async function reviewChanges(server: TandemServer): Promise<void> {
  const client = server.client;
  if (!client) {
    void vscode.window.showWarningMessage('Tandem: the language server is not running.');
    return;
  }
  try {
    const answer = (await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Tandem: reviewing the changes' }, () =>
      client.sendRequest('workspace/executeCommand', { command: 'tandem.review', arguments: [{}] }),
    )) as ReviewAnswer | undefined;
    if (answer?.nothingToReview) {
      void vscode.window.showInformationMessage(`Tandem: ${answer.nothingToReview}`);
      return;
    }
    const count = answer?.findings?.length ?? 0;
    const skipped = answer?.skipped?.length ? ` Skipped: ${answer.skipped.map((s) => `${s.path} (${s.reason})`).join(', ')}.` : '';
    void vscode.window.showInformationMessage(`Tandem: review ${answer?.status ?? 'ended'}: ${count} finding(s)${count ? ', in the Problems panel' : ''}.${skipped}`);
    if (count) void vscode.commands.executeCommand('workbench.actions.view.problems');
  } catch (error) {
    void vscode.window.showWarningMessage(`Tandem: the review failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function registerReview(context: vscode.ExtensionContext, server: TandemServer): void {
  context.subscriptions.push(vscode.commands.registerCommand('tandem.reviewChanges', () => reviewChanges(server)));
}
