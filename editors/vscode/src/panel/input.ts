// The panel's input box logic, free of the DOM and of `vscode` so mocha
// tests it and the webview bundles it: the prompt history (Up/Down, as a
// shell's), and the `@` mention being typed at the cursor.

/** The most prompts the history keeps. */
export const HISTORY_LIMIT = 100;

/**
 * Prompt history. Up at the first line walks back, Down walks forward and
 * past the newest entry gives back the draft that was being typed.
 */
export class History {
  private entries: string[];
  /** The entry shown: entries.length means the draft. */
  private index: number;
  private draft = '';

  constructor(entries: string[] = []) {
    this.entries = entries.filter((e) => typeof e === 'string' && e.trim() !== '').slice(-HISTORY_LIMIT);
    this.index = this.entries.length;
  }

  /** A sent prompt; a repeat of the newest entry is kept once. */
  add(prompt: string): void {
    if (prompt.trim() === '') return;
    if (this.entries[this.entries.length - 1] !== prompt) this.entries.push(prompt);
    if (this.entries.length > HISTORY_LIMIT) this.entries.splice(0, this.entries.length - HISTORY_LIMIT);
    this.index = this.entries.length;
    this.draft = '';
  }

  /** The older entry to show in place of `current`, or undefined at the oldest. */
  up(current: string): string | undefined {
    if (this.index === 0) return undefined;
    if (this.index === this.entries.length) this.draft = current;
    this.index--;
    return this.entries[this.index];
  }

  /** The newer entry (or the draft), or undefined when the draft is shown. */
  down(): string | undefined {
    if (this.index >= this.entries.length) return undefined;
    this.index++;
    return this.index === this.entries.length ? this.draft : this.entries[this.index];
  }

  all(): string[] {
    return this.entries.slice();
  }
}

/** An `@` mention being typed: where it starts and what is typed after the `@`. */
export interface MentionQuery {
  start: number;
  query: string;
}

/** The mention at the cursor (`@` at a word start, no space since), or undefined. */
export function mentionAt(text: string, cursor: number): MentionQuery | undefined {
  const before = text.slice(0, cursor);
  const match = /(^|\s)@([^\s@]*)$/.exec(before);
  if (!match) return undefined;
  return { start: cursor - match[2].length - 1, query: match[2] };
}

/** The text with the mention at `mention` replaced by `@value ` and the new cursor. */
export function applyMention(text: string, cursor: number, mention: MentionQuery, value: string): { text: string; cursor: number } {
  const inserted = `@${value} `;
  const after = text.slice(cursor).replace(/^\S*/, '');
  return { text: text.slice(0, mention.start) + inserted + after, cursor: mention.start + inserted.length };
}

/**
 * The files a prompt mentions: each `@path` at a word start that is one of
 * `known` (workspace-relative paths), in order, once each; `@selection` and
 * words that name no known file are not files. Trailing punctuation is not
 * part of the path.
 */
export function mentionedFiles(prompt: string, known: readonly string[]): string[] {
  const files = new Set(known);
  const found: string[] = [];
  for (const match of prompt.matchAll(/(^|\s)@([^\s@]+)/g)) {
    const path = match[2].replace(/[.,;:!?)]+$/, '');
    if (files.has(path) && !found.includes(path)) found.push(path);
  }
  return found;
}

/** Files matching a mention query, best first: the name starts with it, then contains it, then the path does. */
export function rankFiles(paths: string[], query: string, limit = 20): string[] {
  const q = query.toLowerCase();
  const scored: { path: string; score: number }[] = [];
  for (const path of paths) {
    const lower = path.toLowerCase();
    const name = lower.slice(lower.lastIndexOf('/') + 1);
    const score = q === '' ? 3 : name.startsWith(q) ? 0 : name.includes(q) ? 1 : lower.includes(q) ? 2 : -1;
    if (score >= 0) scored.push({ path, score });
  }
  scored.sort((a, b) => a.score - b.score || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((s) => s.path);
}

/** What a prompt attaches, as a chip shows it: the mention's value, a short label, the whole name. */
export interface Attachment {
  /** What follows the `@` in the prompt (a workspace-relative path, or `selection`). */
  value: string;
  label: string;
  detail: string;
}

/** The prompt mentions `@selection` (at a word start, trailing punctuation aside). */
export function mentionsSelection(prompt: string): boolean {
  return /(^|\s)@selection(?=$|[\s.,;:!?)])/.test(prompt);
}

/**
 * What sending `prompt` attaches, in the order the prompt names it: the
 * editor's selection when it is mentioned and one was taken (`selection`:
 * its label, e.g. `src/a.ts:3-7`), then each mentioned workspace file
 * (`known`, as `mentionedFiles`). The panel's chips show this list, and
 * the sent prompt's card keeps it.
 */
export function attachmentsOf(prompt: string, known: readonly string[], selection?: string): Attachment[] {
  const attached: Attachment[] = [];
  if (selection !== undefined && mentionsSelection(prompt)) attached.push({ value: 'selection', label: selection, detail: `the selection ${selection}` });
  for (const path of mentionedFiles(prompt, known)) {
    attached.push({ value: path, label: path.slice(path.lastIndexOf('/') + 1), detail: path });
  }
  return attached;
}

/**
 * A past prompt's attachments as the thread kept them (`tandem.transcript`:
 * each file's workspace path, `:LINE` or `:FIRST-LAST` after it when lines
 * were attached), as its card shows them.
 */
export function savedAttachments(names: readonly string[]): Attachment[] {
  return names.map((name) => {
    const path = name.replace(/:\d+(-\d+)?$/, '');
    return { value: path, label: name.slice(path.lastIndexOf('/') + 1), detail: name };
  });
}

/**
 * The prompt without its mentions of `value` (`@value` at a word start,
 * trailing punctuation kept), each with one space after it, so a chip's ×
 * removes the attachment and its text together.
 */
export function removeMention(prompt: string, value: string): string {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return prompt.replace(new RegExp(`(^|\\s)@${escaped}(?=$|[\\s.,;:!?)])[ \\t]?`, 'g'), '$1');
}
