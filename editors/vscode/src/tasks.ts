// Background tasks (`run_shell` with `background`: dev servers, watchers,
// long test runs) as the user sees them: a status bar item while any runs
// ("$(terminal) 2 tasks"), and "Tandem: Background Tasks", a pick of every
// task of the session where choosing a running one stops it and every
// process it started. Both ask the server (`tandem.tasks`, `tandem.stopTask`,
// docs/protocol.md); the list is read again when a run starts or ends a
// task, when a run ends, and every few seconds while a task runs (a task
// that ends by itself between runs says so in no event).
import * as vscode from 'vscode';
import { TandemServer } from './client';
import { TaskInfo, taskState, tasksBarText } from './logic';
import { Runs } from './runs';

/** Every list of the session's tasks read (the panel marks the ended ones). */
const listed = new vscode.EventEmitter<TaskInfo[]>();
export const onDidListTasks = listed.event;

/** While a task runs, the list is read again this often. */
const POLL_MS = 5000;

async function listTasks(server: TandemServer): Promise<TaskInfo[] | undefined> {
  const client = server.client;
  if (!client) return undefined;
  try {
    const answer = (await client.sendRequest('workspace/executeCommand', { command: 'tandem.tasks', arguments: [] })) as { tasks?: TaskInfo[] };
    return answer?.tasks ?? [];
  } catch {
    return undefined;
  }
}

/** Stop task `id` at the user's word, saying how it ended; the task as it
 * ended (undefined: it could not be stopped, and the user was told why). */
export async function stopTask(server: TandemServer, id: string): Promise<TaskInfo | undefined> {
  try {
    const answer = (await server.client?.sendRequest('workspace/executeCommand', { command: 'tandem.stopTask', arguments: [{ taskId: id }] })) as { task?: TaskInfo } | undefined;
    const stopped = answer?.task;
    if (!stopped) throw new Error('the language server is not running');
    void vscode.window.showInformationMessage(`Tandem: task ${stopped.id} (${stopped.command}) ${taskState(stopped)}.`);
    return stopped;
  } catch (error) {
    void vscode.window.showWarningMessage(`Tandem: cannot stop task ${id}: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

export function registerTasks(context: vscode.ExtensionContext, server: TandemServer, runs: Runs): void {
  const item = vscode.window.createStatusBarItem('tandem.tasks', vscode.StatusBarAlignment.Left, 90);
  item.name = 'Tandem background tasks';
  item.command = 'tandem.showTasks';
  let timer: ReturnType<typeof setTimeout> | undefined;
  let reading = false;

  const refresh = async (): Promise<void> => {
    if (reading) return;
    reading = true;
    try {
      const tasks = await listTasks(server);
      if (tasks) listed.fire(tasks);
      if (timer) clearTimeout(timer);
      timer = undefined;
      const text = tasks && tasksBarText(tasks);
      if (!tasks || !text) {
        item.hide();
        return;
      }
      item.text = text;
      const running = tasks.filter((t) => t.status === 'running');
      item.tooltip = `${running.map((t) => `${t.id}: ${t.command}`).join('\n')}\nClick to see them or stop one`;
      item.show();
      timer = setTimeout(() => void refresh(), POLL_MS);
    } finally {
      reading = false;
    }
  };

  const showTasks = async (): Promise<void> => {
    const tasks = await listTasks(server);
    if (tasks === undefined) {
      void vscode.window.showWarningMessage(`Tandem: the language server is not running${server.failure ? ` (${server.failure})` : ''}.`);
      return;
    }
    if (tasks.length === 0) {
      void vscode.window.showInformationMessage('Tandem: no background tasks in this session.');
      return;
    }
    const picks = tasks.map((task) => ({
      task,
      label: task.status === 'running' ? `$(debug-stop) Stop task ${task.id}` : `$(circle-outline) Task ${task.id}`,
      description: task.command,
      detail: `${taskState(task)} · ${task.output_bytes} bytes of output`,
    }));
    const picked = await vscode.window.showQuickPick(picks, { title: 'Tandem: Background Tasks', placeHolder: 'Pick a running task to stop it' });
    if (!picked) return;
    if (picked.task.status !== 'running') {
      void vscode.window.showInformationMessage(`Tandem: task ${picked.task.id} is not running (${taskState(picked.task)}).`);
      return;
    }
    await stopTask(server, picked.task.id);
    await refresh();
  };

  context.subscriptions.push(
    item,
    vscode.commands.registerCommand('tandem.showTasks', showTasks),
    runs.onEvent((params) => {
      const type = params.event?.type;
      if (type === 'task_started' || type === 'task_ended') void refresh();
    }),
    runs.onDidEnd(() => void refresh()),
    { dispose: () => timer && clearTimeout(timer) },
  );
}
