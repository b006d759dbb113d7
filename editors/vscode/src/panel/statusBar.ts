// The status bar item: idle, running (the current tool), or waiting for
// the user's approval; a click opens the Tandem panel, where a waiting
// question is answered.
import * as vscode from 'vscode';
import { Conversation } from './conversation';
import { statusBarText } from './status';

export class TandemStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('tandem.status', vscode.StatusBarAlignment.Left, 50);
  private readonly subscription: { dispose(): void };

  constructor(private readonly conversation: Conversation) {
    this.item.name = 'Tandem';
    this.item.command = 'tandem.openPanel';
    this.subscription = conversation.onChange(() => this.update());
    this.update();
    this.item.show();
  }

  private update(): void {
    const shown = statusBarText(this.conversation.runState());
    this.item.text = shown.text;
    this.item.tooltip = shown.tooltip;
    this.item.backgroundColor = shown.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
