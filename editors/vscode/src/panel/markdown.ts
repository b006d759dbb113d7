// The panel's markdown: a small renderer of the subset models write
// (paragraphs, headings, fenced code, lists, quotes, rules, inline code,
// bold, italics, links), free of the DOM and of `vscode` so mocha tests it
// and the webview bundles it. Everything from the model is escaped first:
// HTML and scripts in the text come out as text, and the only tags in the
// output are the ones this file writes. Links keep only http(s) and mailto
// targets; a relative path in inline code becomes a file link the panel
// opens in the editor.
//
// `MarkdownStream` renders streamed text in O(new text): the text is cut
// into blocks at blank lines outside code fences, a finished block is
// rendered once and never again, and only the open last block is rendered
// anew on each piece.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A path-looking inline code span: `src/a.ts`, `notes.txt:12`, no spaces or scheme. */
const FILE_PATH = /^(?![a-z][a-z0-9+.-]*:\/\/)(?:\.{0,2}\/)?[\w.@-]+(?:\/[\w.@-]+)*\.[A-Za-z0-9]{1,8}(?::\d+)?$/;

/** The target a link may keep, or undefined (javascript:, data:, relative…). */
export function safeUrl(url: string): string | undefined {
  const trimmed = url.trim();
  return /^(https?:\/\/|mailto:)/i.test(trimmed) ? trimmed : undefined;
}

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
      const lang = open.lang ? ` data-lang="${escapeHtml(open.lang)}"` : '';
      out.push(`<pre${lang}><code>${escapeHtml(code.join('\n'))}</code></pre>`);
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
    flushList();
    paragraph.push(line);
  }
  flushAll();
  return out.join('');
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
