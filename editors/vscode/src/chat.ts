// `@tandem` in the chat view: the prompt (with the active editor as
// context) runs as an ordinary Tandem run, its text, tool calls and edits
// streamed into the chat response. A "Tandem" chat model entry makes the
// Chat view call it where no other model exists (no Copilot).
import * as vscode from 'vscode';
import { TandemServer, workspaceFolders } from './client';
import { runAsk } from './commands';
import { editLanded, relativePath } from './logic';

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
      // The chat shows the run's progress, its end and its files itself: no
      // notification over its input, but for a run that changed files,
      // whose end notification offers Undo.
      { progress: false, announce: (result) => result.edits.some(editLanded) },
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
  registerModel(context);
}

/** What Tandem's model entry answers when something asks it as a plain chat model. */
export const NOT_A_MODEL =
  'Tandem is an agent, not a chat model: ask it with @tandem in the Chat view, or in the Tandem panel (Tandem: Open Panel).';

/** The parts of VS Code's LanguageModelChatProvider API (1.104) used here; older typings lack them. */
interface ModelInformation {
  id: string;
  name: string;
  family: string;
  version: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  tooltip?: string;
  isUserSelectable?: boolean;
  capabilities: { toolCalling?: boolean };
}
interface ChatProviderApi {
  registerLanguageModelChatProvider?(
    vendor: string,
    provider: {
      provideLanguageModelChatInformation(options: unknown, token: vscode.CancellationToken): ModelInformation[];
      provideLanguageModelChatResponse(
        model: ModelInformation,
        messages: readonly unknown[],
        options: unknown,
        progress: vscode.Progress<unknown>,
        token: vscode.CancellationToken,
      ): Promise<void>;
      provideTokenCount(model: ModelInformation, text: unknown, token: vscode.CancellationToken): Promise<number>;
    },
  ): vscode.Disposable;
}

/**
 * A "Tandem" entry among VS Code's chat models (vendor `tandem`, declared
 * in contributes.languageModelChatProviders). VS Code resolves a model
 * before it calls any chat participant and fails "Language model
 * unavailable" when there is none (no Copilot); with this entry the Chat
 * view has one, and @tandem runs (it uses Tandem's own model, not the
 * entry). It says it offers tool calling because VS Code's agent mode lists
 * only such models. Asked directly, as a plain model, it says to use @tandem.
 */
function registerModel(context: vscode.ExtensionContext): void {
  const lm = (vscode as unknown as { lm?: ChatProviderApi }).lm;
  const TextPart = (vscode as unknown as { LanguageModelTextPart?: new (text: string) => unknown }).LanguageModelTextPart;
  if (!lm?.registerLanguageModelChatProvider || !TextPart) return; // VS Code before 1.104
  const entry: ModelInformation = {
    id: 'tandem',
    name: 'Tandem',
    family: 'tandem',
    version: '1',
    maxInputTokens: 200000,
    maxOutputTokens: 32000,
    tooltip: 'Lets @tandem run without another chat model; Tandem uses the model of its own settings.',
    isUserSelectable: true,
    capabilities: { toolCalling: true },
  };
  context.subscriptions.push(
    lm.registerLanguageModelChatProvider('tandem', {
      provideLanguageModelChatInformation: () => [entry],
      provideLanguageModelChatResponse: async (_model, _messages, _options, progress) => {
        progress.report(new TextPart(NOT_A_MODEL));
      },
      provideTokenCount: async (_model, text) => Math.ceil((typeof text === 'string' ? text : JSON.stringify(text)).length / 4),
    }),
  );
  // VS Code asks a provider for its models only once something selects
  // models: until then the Chat view has none and the first @tandem fails.
  void Promise.resolve(vscode.lm.selectChatModels({ vendor: 'tandem' })).catch(() => undefined);
}
