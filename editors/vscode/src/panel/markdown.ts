// The panel's markdown: a small renderer of the subset models write
// (paragraphs, headings, fenced code, lists, quotes, rules, inline code,
// bold, italics, links), free of the DOM and of `vscode` so mocha tests it
// and the webview bundles it. Everything from the model is escaped first:
// HTML and scripts in the text come out as text, and the only tags in the
// output are the ones this file writes. Links keep only http(s) and mailto
// targets; a relative path in inline code becomes a file link the panel
// opens in the editor.
//
// Fenced code is highlighted by highlight.js (its core and the languages
// below, bundled into the webview; it escapes the code itself) and carries
// a Copy button; a `diff` fence colours its added and removed lines; a
// GitHub table (a header row, a `|---|` row, body rows) is a <table>.
//
// `MarkdownStream` renders streamed text in O(new text): the text is cut
// into blocks at blank lines outside code fences, a finished block is
// rendered once and never again, and only the open last block is rendered
// anew on each piece.

import hljs from 'highlight.js/lib/core';
import { visibleControls } from '../visible';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import lua from 'highlight.js/lib/languages/lua';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import ini from 'highlight.js/lib/languages/ini';

for (const [name, language] of Object.entries({ bash, c, cpp, css, diff, go, java, javascript, json, lua, python, rust, sql, typescript, xml, yaml, ini })) {
  hljs.registerLanguage(name, language);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export { visibleControls };

/** Text for HTML: its markup escaped and its controls made visible ({@link visibleControls}). */
export function escapeHtml(text: string): string {
  return visibleControls(text).replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A path-looking inline code span: `src/a.ts`, `notes.txt:12`, no spaces or scheme. */
const FILE_PATH = /^(?![a-z][a-z0-9+.-]*:\/\/)(?:\.{0,2}\/)?[\w.@-]+(?:\/[\w.@-]+)*\.[A-Za-z0-9]{1,8}(?::\d+)?$/;

import { safeUrl } from './links';
export { safeUrl };

/** Inline markdown of one block's text (already one paragraph, heading or item). */
export function renderInline(text: string): string {
  let out = '';
  let i = 0;
  const special = /[\\`*_[]/g;
  while (i < text.length) {
    // Plain text up to the next character that may start markup, escaped in one piece.
    special.lastIndex = i;
    const next = special.exec(text)?.index ?? text.length;
    if (next > i) {
      out += escapeHtml(text.slice(i, next));
      i = next;
      continue;
    }
    const c = text[i];
    if (c === '\\' && i + 1 < text.length && /[\\`*_[\]()#+\-.!<>]/.test(text[i + 1])) {
      out += escapeHtml(text[i + 1]);
      i += 2;
      continue;
    }
    if (c === '`') {
      let ticks = 1;
      while (text[i + ticks] === '`') ticks++;
      const fence = '`'.repeat(ticks);
      const close = text.indexOf(fence, i + ticks);
      if (close > 0) {
        const code = text.slice(i + ticks, close).replace(/^ (.*) $/, '$1');
        out += FILE_PATH.test(code)
          ? `<a class="file" href="#" data-path="${escapeHtml(code)}"><code>${escapeHtml(code)}</code></a>`
          : `<code>${escapeHtml(code)}</code>`;
        i = close + ticks;
        continue;
      }
      out += escapeHtml(fence);
      i += ticks;
      continue;
    }
    if ((c === '*' || c === '_') && text[i + 1] === c) {
      const close = text.indexOf(c + c, i + 2);
      if (close > i + 2) {
        out += `<strong>${renderInline(text.slice(i + 2, close))}</strong>`;
        i = close + 2;
        continue;
      }
    }
    if ((c === '*' || c === '_') && text[i + 1] !== c && text[i + 1] !== ' ' && text[i + 1] !== undefined) {
      // `_` inside a word (snake_case) is not emphasis.
      const wordBefore = c === '_' && i > 0 && /\w/.test(text[i - 1]);
      const close = wordBefore ? -1 : text.indexOf(c, i + 1);
      if (close > i + 1 && text[close - 1] !== ' ' && !(c === '_' && /\w/.test(text[close + 1] ?? ''))) {
        out += `<em>${renderInline(text.slice(i + 1, close))}</em>`;
        i = close + 1;
        continue;
      }
    }
    if (c === '[') {
      const link = /^\[([^\]\n]*)\]\(([^()\s]*)\)/.exec(text.slice(i));
      if (link) {
        const url = safeUrl(link[2]);
        const label = renderInline(link[1]);
        out += url ? `<a class="url" href="#" data-url="${escapeHtml(url)}">${label}</a>` : label;
        i += link[0].length;
        continue;
      }
    }
    out += escapeHtml(c);
    i++;
  }
  return out;
}

/** A fenced code block's opening line: its fence and language. */
function fenceOpen(line: string): { fence: string; lang: string } | undefined {
  const match = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/.exec(line);
  return match ? { fence: match[1], lang: match[2] } : undefined;
}

function isFenceClose(line: string, fence: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= fence.length && trimmed[0] === fence[0] && /^(`+|~+)$/.test(trimmed);
}

const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;

/** Markdown text (whole blocks) as HTML. */
export function renderMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; items: string[] } | undefined;
  let quote: string[] = [];
  const flushParagraph = () => {
    if (paragraph.length > 0) out.push(`<p>${paragraph.map(renderInline).join('<br>')}</p>`);
    paragraph = [];
  };
  const flushList = () => {
    if (list) {
      const tag = list.ordered ? 'ol' : 'ul';
      out.push(`<${tag}>${list.items.join('')}</${tag}>`);
    }
    list = undefined;
  };
  const flushQuote = () => {
    if (quote.length > 0) out.push(`<blockquote>${renderMarkdown(quote.join('\n'))}</blockquote>`);
    quote = [];
  };
  const flushAll = () => {
    flushParagraph();
    flushList();
    flushQuote();
  };
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    const open = fenceOpen(line);
    if (open) {
      flushAll();
      const code: string[] = [];
      n++;
      while (n < lines.length && !isFenceClose(lines[n], open.fence)) code.push(lines[n++]);
      out.push(codeBlock(code.join('\n'), open.lang));
      continue;
    }
    if (/^\s*$/.test(line)) {
      flushAll();
      continue;
    }
    const quoted = /^ {0,3}> ?(.*)$/.exec(line);
    if (quoted) {
      flushParagraph();
      flushList();
      quote.push(quoted[1]);
      continue;
    }
    flushQuote();
    const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flushAll();
      const level = heading[1].length;
      out.push(`<h${level}>${renderInline(heading[2])}</h${level}>`);
      continue;
    }
    if (/^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flushAll();
      out.push('<hr>');
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      flushParagraph();
      const ordered = /\d/.test(item[2]);
      if (list && list.ordered !== ordered && item[1].length === 0) flushList();
      list ??= { ordered, items: [] };
      const depth = Math.min(4, Math.floor(item[1].replace(/\t/g, '    ').length / 2));
      const indent = depth > 0 ? ` class="indent-${depth}"` : '';
      list.items.push(`<li${indent}>${renderInline(item[3])}</li>`);
      continue;
    }
    if (list && /^\s+\S/.test(line)) {
      // A continuation line of the last item.
      const last = list.items.length - 1;
      list.items[last] = list.items[last].replace(/<\/li>$/, ` ${renderInline(line.trim())}</li>`);
      continue;
    }
    if (line.includes('|') && n + 1 < lines.length && TABLE_RULE.test(lines[n + 1])) {
      flushAll();
      const rows = [line];
      n++;
      const rule = lines[n];
      while (n + 1 < lines.length && lines[n + 1].includes('|') && !/^\s*$/.test(lines[n + 1])) rows.push(lines[++n]);
      out.push(table(rows, rule));
      continue;
    }
    flushList();
    paragraph.push(line);
  }
  flushAll();
  return out.join('');
}

/** The language highlight.js knows a fence's name by (`ts`, `sh`, `rs`…), or undefined. */
export function languageOf(lang: string): string | undefined {
  const name = lang.toLowerCase();
  const aliases: Record<string, string> = { sh: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', rs: 'rust', ts: 'typescript', tsx: 'typescript', js: 'javascript', jsx: 'javascript', py: 'python', html: 'xml', yml: 'yaml', toml: 'ini', patch: 'diff', 'c++': 'cpp', h: 'c', golang: 'go' };
  const known = aliases[name] ?? name;
  return hljs.getLanguage(known) ? known : undefined;
}

/** A fenced code block: its language and a Copy button over the highlighted code. */
function codeBlock(code: string, lang: string): string {
  const language = lang ? languageOf(lang) : undefined;
  // highlight.js escapes the markup itself; the controls are made visible first.
  const body = language ? hljs.highlight(visibleControls(code), { language, ignoreIllegals: true }).value : escapeHtml(code);
  const label = lang ? `<span class="lang">${escapeHtml(lang)}</span>` : '<span class="lang"></span>';
  const dataLang = lang ? ` data-lang="${escapeHtml(lang)}"` : '';
  return `<div class="code">${label}<button class="copy secondary" title="Copy the code">Copy</button><pre${dataLang}><code class="hljs">${body}</code></pre></div>`;
}

/** The row under a table's header: `|---|:---:|---:|`. */
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** A table row's cells: split at `|` outside code spans and not escaped, the outer pipes dropped. */
function cells(row: string): string[] {
  const out: string[] = [];
  let cell = '';
  let ticks = 0;
  const text = row.trim().replace(/^\|/, '');
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && text[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (ch === '`') {
      ticks = ticks === 0 ? 1 : 0;
      cell += ch;
    } else if (ch === '|' && ticks === 0) {
      out.push(cell.trim());
      cell = '';
    } else {
      cell += ch;
    }
  }
  if (cell.trim() !== '' || !text.endsWith('|')) out.push(cell.trim());
  return out;
}

function table(rows: string[], rule: string): string {
  const aligns = cells(rule).map((c) => (c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : ''));
  const width = aligns.length;
  const row = (line: string, tag: 'th' | 'td') => {
    const values = cells(line);
    let html = '<tr>';
    for (let i = 0; i < width; i++) {
      // A class, not a style attribute: the panel's CSP allows no inline style.
      const align = aligns[i] ? ` class="align-${aligns[i]}"` : '';
      html += `<${tag}${align}>${renderInline(values[i] ?? '')}</${tag}>`;
    }
    return `${html}</tr>`;
  };
  const [head, ...body] = rows;
  return `<table><thead>${row(head, 'th')}</thead><tbody>${body.map((line) => row(line, 'td')).join('')}</tbody></table>`;
}

/** What one piece of streamed text changes: blocks finished now, and the open rest. */
export interface StreamUpdate {
  /** HTML of the blocks that were finished by this piece, to append once. */
  committed: string[];
  /** HTML of the open last block, replacing the previous tail. */
  tail: string;
}

/**
 * Streamed markdown, rendered incrementally. A block ends at a blank line
 * outside a code fence, or at the line closing a fence; once ended it is
 * rendered and handed out in `committed`, and never looked at again. The
 * text after the last ended block is the tail, rendered on each push.
 */
export class MarkdownStream {
  /** The text of the blocks handed out, kept for `source()` only. */
  private done: string[] = [];
  /** The open block's text: only this is scanned and rendered again. */
  private open = '';
  /** Where the next unscanned line of `open` starts (always at a line start). */
  private scanned = 0;
  /** The open fence, while inside a code block. */
  private fence: string | undefined;
  /** The open block has a non-blank line. */
  private blockHasText = false;

  push(piece: string): StreamUpdate {
    this.open += piece.replace(/\r\n?/g, '\n');
    const committed: string[] = [];
    for (;;) {
      const end = this.open.indexOf('\n', this.scanned);
      if (end < 0) break;
      const line = this.open.slice(this.scanned, end);
      const next = end + 1;
      if (this.fence !== undefined) {
        if (isFenceClose(line, this.fence)) {
          this.fence = undefined;
          this.commit(next, committed);
          continue;
        }
      } else if (fenceOpen(line)) {
        // A fence starts a block of its own: what came before is finished.
        if (this.blockHasText) {
          this.commit(this.scanned, committed);
          continue;
        }
        this.fence = fenceOpen(line)?.fence;
        this.blockHasText = true;
      } else if (/^\s*$/.test(line)) {
        if (this.blockHasText) {
          this.commit(next, committed);
          continue;
        }
        // Blank lines before a block belong to no block.
        this.done.push(this.open.slice(0, next));
        this.open = this.open.slice(next);
        this.scanned = 0;
        continue;
      } else {
        this.blockHasText = true;
      }
      this.scanned = next;
    }
    return { committed, tail: renderMarkdown(this.open) };
  }

  /** All the text pushed so far. */
  source(): string {
    return this.done.join('') + this.open;
  }

  /** The open block's first `until` characters are a finished block. */
  private commit(until: number, committed: string[]): void {
    const block = this.open.slice(0, until);
    const html = renderMarkdown(block);
    if (html !== '') committed.push(html);
    this.done.push(block);
    this.open = this.open.slice(until);
    this.scanned = 0;
    this.blockHasText = false;
  }
}
