// The answers to `tandem/codeIntel` (docs/protocol.md) in LSP's shapes,
// made from what VS Code's `vscode.execute…Provider` commands and
// `vscode.languages.getDiagnostics` give. Free of the `vscode` module (the
// objects are read by their fields), so mocha tests it in plain Node.
//
// VS Code's enums are not LSP's: SymbolKind and DiagnosticSeverity count
// from 0 in VS Code and from 1 in LSP. Positions are UTF-16 in both.

export interface PositionLike {
  line: number;
  character: number;
}
export interface RangeLike {
  start: PositionLike;
  end: PositionLike;
}
/** A `vscode.Uri` (its `toString()` is the URI). */
export interface UriLike {
  toString(): string;
}

export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
export interface LspLocation {
  uri: string;
  range: LspRange;
}
export interface LspLocationLink {
  targetUri: string;
  targetRange: LspRange;
  targetSelectionRange: LspRange;
  originSelectionRange?: LspRange;
}

/** The operations and the VS Code command that answers each. */
export const OPERATION_COMMANDS = {
  definition: 'vscode.executeDefinitionProvider',
  references: 'vscode.executeReferenceProvider',
  implementation: 'vscode.executeImplementationProvider',
  hover: 'vscode.executeHoverProvider',
  documentSymbols: 'vscode.executeDocumentSymbolProvider',
  workspaceSymbols: 'vscode.executeWorkspaceSymbolProvider',
  incomingCalls: 'vscode.provideIncomingCalls',
  outgoingCalls: 'vscode.provideOutgoingCalls',
} as const;
export type Operation = keyof typeof OPERATION_COMMANDS | 'diagnostics';

/** The request's params (docs/protocol.md, "tandem/codeIntel"). */
export interface CodeIntelParams {
  operation?: string;
  uri?: string;
  position?: { line?: unknown; character?: unknown };
  query?: string;
  settle?: { version?: unknown; quietMs?: unknown; timeoutMs?: unknown };
}

/** A question the handler can ask VS Code, or why the params are wrong. */
export type Question =
  | { operation: 'diagnostics'; uri: string; settle?: { version: number; quietMs: number; timeoutMs: number } }
  | { operation: 'workspaceSymbols'; query: string; uri?: string }
  | { operation: 'documentSymbols'; uri: string }
  | { operation: Exclude<keyof typeof OPERATION_COMMANDS, 'workspaceSymbols' | 'documentSymbols'>; uri: string; position: LspPosition }
  | { error: string };

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Check the params; the error is the JSON-RPC error's message (code -32602). */
export function question(params: CodeIntelParams | null | undefined): Question {
  const p = params ?? {};
  const operation = p.operation;
  if (typeof operation !== 'string') return { error: 'tandem/codeIntel needs an operation' };
  if (operation !== 'diagnostics' && !(operation in OPERATION_COMMANDS)) return { error: `unknown operation: ${operation}` };
  if (operation === 'workspaceSymbols') {
    const q: Question = { operation, query: typeof p.query === 'string' ? p.query : '' };
    if (typeof p.uri === 'string') q.uri = p.uri;
    return q;
  }
  if (typeof p.uri !== 'string' || p.uri === '') return { error: `${operation} needs a uri` };
  if (operation === 'diagnostics') {
    const s = p.settle;
    if (s === undefined || s === null) return { operation, uri: p.uri };
    return {
      operation,
      uri: p.uri,
      settle: {
        version: isCount(s.version) ? s.version : 0,
        quietMs: isCount(s.quietMs) ? s.quietMs : 300,
        timeoutMs: isCount(s.timeoutMs) ? s.timeoutMs : 3000,
      },
    };
  }
  if (operation === 'documentSymbols') return { operation, uri: p.uri };
  const position = p.position;
  if (!position || !isCount(position.line) || !isCount(position.character)) {
    return { error: `${operation} needs a position {line, character} (0-based, UTF-16)` };
  }
  return {
    operation: operation as Exclude<keyof typeof OPERATION_COMMANDS, 'workspaceSymbols' | 'documentSymbols'>,
    uri: p.uri,
    position: { line: position.line, character: position.character },
  };
}

export function lspPosition(p: PositionLike): LspPosition {
  return { line: p.line, character: p.character };
}

export function lspRange(r: RangeLike): LspRange {
  return { start: lspPosition(r.start), end: lspPosition(r.end) };
}

interface LocationLike {
  uri: UriLike;
  range: RangeLike;
}
interface LocationLinkLike {
  targetUri: UriLike;
  targetRange: RangeLike;
  targetSelectionRange?: RangeLike;
  originSelectionRange?: RangeLike;
}

/** A `vscode.Location` or `vscode.LocationLink` as LSP's `Location` / `LocationLink`. */
export function lspLocation(item: LocationLike | LocationLinkLike): LspLocation | LspLocationLink | undefined {
  if (!item || typeof item !== 'object') return undefined;
  if ('targetUri' in item && item.targetUri && item.targetRange) {
    const link: LspLocationLink = {
      targetUri: item.targetUri.toString(),
      targetRange: lspRange(item.targetRange),
      targetSelectionRange: lspRange(item.targetSelectionRange ?? item.targetRange),
    };
    if (item.originSelectionRange) link.originSelectionRange = lspRange(item.originSelectionRange);
    return link;
  }
  if ('uri' in item && item.uri && item.range) return { uri: item.uri.toString(), range: lspRange(item.range) };
  return undefined;
}

/** What a definition / references / implementation command gave. */
export function lspLocations(items: unknown): (LspLocation | LspLocationLink)[] {
  if (!Array.isArray(items)) return [];
  return items.map((i) => lspLocation(i)).filter((l): l is LspLocation | LspLocationLink => l !== undefined);
}

/** A hover part: a `MarkdownString` (`.value`), a `MarkedString` string, or `{language, value}`. */
type HoverPart = string | { value: string; language?: string };
interface HoverLike {
  contents: HoverPart[];
  range?: RangeLike;
}

/** A `vscode.Hover` as LSP's `Hover`, its parts as one markdown text. */
export function lspHover(hover: HoverLike): { contents: { kind: 'markdown'; value: string }; range?: LspRange } {
  const parts = (Array.isArray(hover?.contents) ? hover.contents : []).map((part) => {
    if (typeof part === 'string') return part;
    if (part && typeof part.value === 'string') {
      return part.language ? `\`\`\`${part.language}\n${part.value}\n\`\`\`` : part.value;
    }
    return '';
  });
  const answer: { contents: { kind: 'markdown'; value: string }; range?: LspRange } = {
    contents: { kind: 'markdown', value: parts.filter((p) => p !== '').join('\n\n') },
  };
  if (hover?.range) answer.range = lspRange(hover.range);
  return answer;
}

export function lspHovers(items: unknown): ReturnType<typeof lspHover>[] {
  if (!Array.isArray(items)) return [];
  return items.filter((h) => h && typeof h === 'object').map((h) => lspHover(h as HoverLike));
}

/** VS Code's SymbolKind counts from 0 (File), LSP's from 1. */
export function lspSymbolKind(kind: unknown): number {
  return typeof kind === 'number' && Number.isInteger(kind) && kind >= 0 && kind <= 25 ? kind + 1 : 13; // 13: Variable
}

interface DocumentSymbolLike {
  name: string;
  detail?: string;
  kind: number;
  tags?: readonly number[];
  range: RangeLike;
  selectionRange: RangeLike;
  children?: DocumentSymbolLike[];
}
interface SymbolInformationLike {
  name: string;
  kind: number;
  tags?: readonly number[];
  containerName?: string;
  location: LocationLike;
}

export interface LspDocumentSymbol {
  name: string;
  detail?: string;
  kind: number;
  tags?: number[];
  range: LspRange;
  selectionRange: LspRange;
  children?: LspDocumentSymbol[];
}
export interface LspSymbolInformation {
  name: string;
  kind: number;
  tags?: number[];
  containerName?: string;
  location: LspLocation;
}

function documentSymbol(s: DocumentSymbolLike): LspDocumentSymbol {
  const out: LspDocumentSymbol = { name: s.name, kind: lspSymbolKind(s.kind), range: lspRange(s.range), selectionRange: lspRange(s.selectionRange) };
  if (s.detail) out.detail = s.detail;
  if (s.tags && s.tags.length > 0) out.tags = [...s.tags];
  if (Array.isArray(s.children) && s.children.length > 0) out.children = s.children.map(documentSymbol);
  return out;
}

function symbolInformation(s: SymbolInformationLike): LspSymbolInformation | undefined {
  const location = s.location && lspLocation(s.location);
  if (!location || !('uri' in location)) return undefined;
  const out: LspSymbolInformation = { name: s.name, kind: lspSymbolKind(s.kind), location };
  if (s.containerName) out.containerName = s.containerName;
  if (s.tags && s.tags.length > 0) out.tags = [...s.tags];
  return out;
}

/**
 * What `vscode.executeDocumentSymbolProvider` gave (its items carry both a
 * DocumentSymbol's ranges and children and a SymbolInformation's location):
 * DocumentSymbols, the tree, when they have ranges; else SymbolInformation.
 */
export function lspDocumentSymbols(items: unknown): (LspDocumentSymbol | LspSymbolInformation)[] {
  if (!Array.isArray(items)) return [];
  const out: (LspDocumentSymbol | LspSymbolInformation)[] = [];
  for (const item of items) {
    if (!item || typeof item !== 'object' || typeof item.name !== 'string') continue;
    if (item.range && item.selectionRange) out.push(documentSymbol(item as DocumentSymbolLike));
    else {
      const info = symbolInformation(item as SymbolInformationLike);
      if (info) out.push(info);
    }
  }
  return out;
}

/** What `vscode.executeWorkspaceSymbolProvider` gave (`SymbolInformation[]`). */
export function lspWorkspaceSymbols(items: unknown): LspSymbolInformation[] {
  if (!Array.isArray(items)) return [];
  return items
    .filter((i) => i && typeof i === 'object' && typeof i.name === 'string')
    .map((i) => symbolInformation(i as SymbolInformationLike))
    .filter((s): s is LspSymbolInformation => s !== undefined);
}

export interface CallHierarchyItemLike {
  name: string;
  kind: number;
  detail?: string;
  tags?: readonly number[];
  uri: UriLike;
  range: RangeLike;
  selectionRange: RangeLike;
}
export interface LspCallHierarchyItem {
  name: string;
  kind: number;
  detail?: string;
  tags?: number[];
  uri: string;
  range: LspRange;
  selectionRange: LspRange;
}

export function lspCallHierarchyItem(item: CallHierarchyItemLike): LspCallHierarchyItem {
  const out: LspCallHierarchyItem = {
    name: item.name,
    kind: lspSymbolKind(item.kind),
    uri: item.uri.toString(),
    range: lspRange(item.range),
    selectionRange: lspRange(item.selectionRange),
  };
  if (item.detail) out.detail = item.detail;
  if (item.tags && item.tags.length > 0) out.tags = [...item.tags];
  return out;
}

/** `vscode.provideIncomingCalls`' (`{from, fromRanges}`) or `provideOutgoingCalls`' (`{to, fromRanges}`) answer. */
export function lspCalls(items: unknown, field: 'from' | 'to'): { [k: string]: LspCallHierarchyItem | LspRange[] }[] {
  if (!Array.isArray(items)) return [];
  const out: { [k: string]: LspCallHierarchyItem | LspRange[] }[] = [];
  for (const call of items) {
    const item = call && (call as Record<string, unknown>)[field];
    if (!item || typeof item !== 'object') continue;
    const ranges = Array.isArray(call.fromRanges) ? (call.fromRanges as RangeLike[]).map(lspRange) : [];
    out.push({ [field]: lspCallHierarchyItem(item as CallHierarchyItemLike), fromRanges: ranges });
  }
  return out;
}

interface DiagnosticLike {
  range: RangeLike;
  message: string;
  severity?: number;
  source?: string;
  code?: string | number | { value: string | number; target: UriLike };
  tags?: readonly number[];
}
export interface LspDiagnostic {
  range: LspRange;
  message: string;
  severity: number;
  source?: string;
  code?: string | number;
  codeDescription?: { href: string };
  tags?: number[];
}

/** A `vscode.Diagnostic` as LSP's: VS Code's severity counts from 0 (Error), LSP's from 1. */
export function lspDiagnostic(d: DiagnosticLike): LspDiagnostic {
  const severity = typeof d.severity === 'number' && d.severity >= 0 && d.severity <= 3 ? d.severity + 1 : 1;
  const out: LspDiagnostic = { range: lspRange(d.range), message: d.message, severity };
  if (d.source) out.source = d.source;
  if (typeof d.code === 'string' || typeof d.code === 'number') out.code = d.code;
  else if (d.code && typeof d.code === 'object') {
    out.code = d.code.value;
    if (d.code.target) out.codeDescription = { href: d.code.target.toString() };
  }
  if (d.tags && d.tags.length > 0) out.tags = [...d.tags];
  return out;
}

/** Timers, so the settling is testable with a clock of the test's own. */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/**
 * When a document's diagnostics have settled after an agent's edit (the
 * `settle` of docs/protocol.md): once they changed while the document was
 * at `version` or later, then did not change for `quietMs`; at most
 * `timeoutMs`. Fed every diagnostics change of the document (with the
 * document's version then) and the last change before the question came.
 * Resolves true when settled, false at the bound or when cancelled.
 */
export function waitSettled(
  settle: { version: number; quietMs: number; timeoutMs: number },
  last: { version: number; time: number } | undefined,
  subscribe: (onChange: (version: number) => void) => { dispose(): void },
  clock: Clock,
  onCancel?: (cancel: () => void) => void,
): Promise<boolean> {
  return new Promise((resolve) => {
    let quiet: unknown;
    let done = false;
    const finish = (value: boolean) => {
      if (done) return;
      done = true;
      if (quiet !== undefined) clock.clearTimer(quiet);
      clock.clearTimer(bound);
      subscription.dispose();
      resolve(value);
    };
    const quietFrom = (time: number) => {
      if (quiet !== undefined) clock.clearTimer(quiet);
      quiet = clock.setTimer(() => finish(true), Math.max(0, settle.quietMs - (clock.now() - time)));
    };
    const subscription = subscribe((version) => {
      if (version >= settle.version) quietFrom(clock.now());
    });
    const bound = clock.setTimer(() => finish(false), settle.timeoutMs);
    if (last && last.version >= settle.version) quietFrom(last.time);
    onCancel?.(() => finish(false));
  });
}
