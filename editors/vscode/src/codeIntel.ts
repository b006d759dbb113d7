// Answers Tandem's `tandem/codeIntel` request (docs/protocol.md) from
// VS Code's other language features: the `vscode.execute…Provider` and call
// hierarchy commands, and `vscode.languages.getDiagnostics` for every
// source but Tandem's own. VS Code merges every provider's answer, so each
// answer has one entry in `results`; it does not say how many language
// servers answered, so no `servers` count is given. (Hovers are the
// exception: VS Code gives one per provider, and each is an entry.)
import * as vscode from 'vscode';
import { ErrorCodes, LanguageClient, ResponseError } from 'vscode-languageclient/node';
import {
  CallHierarchyItemLike,
  CodeIntelParams,
  lspCalls,
  lspDiagnostic,
  lspDocumentSymbols,
  lspHovers,
  lspLocations,
  lspWorkspaceSymbols,
  OPERATION_COMMANDS,
  question,
  waitSettled,
} from './codeIntelShapes';

/** The last diagnostics change of each document: its version then, and when. */
const changes = new Map<string, { version: number; time: number }>();

function documentOf(uri: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
}

function versionOf(uri: string): number {
  return documentOf(uri)?.version ?? 0;
}

const clock = {
  now: () => Date.now(),
  setTimer: (fn: () => void, ms: number) => setTimeout(fn, ms),
  clearTimer: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Record every diagnostics change (a question after an edit may come after the change it waits for). */
export function registerCodeIntel(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.languages.onDidChangeDiagnostics((event) => {
      const time = Date.now();
      for (const uri of event.uris) {
        changes.set(uri.toString(), { version: versionOf(uri.toString()), time });
      }
    }),
  );
}

/** The diagnostics of `uri` from every source but Tandem's own collection. */
function diagnosticsOf(client: LanguageClient, uri: vscode.Uri) {
  const ours = new Set(client.diagnostics?.get(uri) ?? []);
  return vscode.languages
    .getDiagnostics(uri)
    .filter((d) => !ours.has(d))
    .map(lspDiagnostic);
}

/** Open the document (its language features need it loaded; an unknown file answers nothing). */
async function load(uri: vscode.Uri): Promise<void> {
  try {
    await vscode.workspace.openTextDocument(uri);
  } catch {
    // A file VS Code cannot open (binary, gone): the commands answer nothing.
  }
}

/** The `tandem/codeIntel` handler. */
export async function answerCodeIntel(client: LanguageClient, params: CodeIntelParams, token: vscode.CancellationToken): Promise<unknown> {
  const q = question(params);
  if ('error' in q) return new ResponseError(ErrorCodes.InvalidParams, q.error);
  if (q.operation === 'workspaceSymbols') {
    const found = await vscode.commands.executeCommand(OPERATION_COMMANDS.workspaceSymbols, q.query);
    return { results: [lspWorkspaceSymbols(found)] };
  }
  const uri = vscode.Uri.parse(q.uri);
  await load(uri);
  if (q.operation === 'diagnostics') {
    let settled = true;
    const key = uri.toString();
    const document = documentOf(key);
    // VS Code cannot say whether anything checks a document. Plain text
    // that no source ever reported on has nobody to wait for; any other
    // language may have a checker that has found nothing yet (TypeScript
    // reports nothing for a clean file until an edit), so it waits.
    const unchecked = document?.languageId === 'plaintext' && !changes.has(key);
    if (q.settle && !unchecked) {
      settled = await waitSettled(
        q.settle,
        changes.get(key),
        (onChange) =>
          vscode.languages.onDidChangeDiagnostics((event) => {
            if (event.uris.some((u) => u.toString() === key)) onChange(versionOf(key));
          }),
        clock,
        (cancel) => token.onCancellationRequested(cancel),
      );
    }
    return { diagnostics: diagnosticsOf(client, uri), settled };
  }
  if (q.operation === 'documentSymbols') {
    const found = await vscode.commands.executeCommand(OPERATION_COMMANDS.documentSymbols, uri);
    return { results: [lspDocumentSymbols(found)] };
  }
  const position = new vscode.Position(q.position.line, q.position.character);
  switch (q.operation) {
    case 'hover':
      // One Hover per provider that answered, as docs/protocol.md has it.
      return { results: lspHovers(await vscode.commands.executeCommand(OPERATION_COMMANDS.hover, uri, position)) };
    case 'incomingCalls':
    case 'outgoingCalls': {
      const items = (await vscode.commands.executeCommand('vscode.prepareCallHierarchy', uri, position)) as CallHierarchyItemLike[] | undefined;
      const field = q.operation === 'incomingCalls' ? 'from' : 'to';
      const calls = [];
      for (const item of items ?? []) {
        if (token.isCancellationRequested) break;
        calls.push(...lspCalls(await vscode.commands.executeCommand(OPERATION_COMMANDS[q.operation], item), field));
      }
      return { results: [calls] };
    }
    default:
      return { results: [lspLocations(await vscode.commands.executeCommand(OPERATION_COMMANDS[q.operation], uri, position))] };
  }
}
