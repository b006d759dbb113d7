/**
 * Showing text that came from the model, a file or a command: every
 * character that would act instead of showing becomes a visible escape.
 * One function for the panel's webview and the extension host's own
 * dialogs and notifications (permission and hook consent questions), so
 * what VS Code shows is what runs.
 */

/**
 * Characters that act instead of showing, or show nothing: C0 controls but
 * the newline and the tab, DEL, C1 controls, bidi embeddings, overrides,
 * isolates and marks, zero-width and other invisible format characters,
 * the line and paragraph separators, and the tag characters. In a page a
 * bidi override reorders what follows it and a zero-width space makes two
 * paths look the same, so what the panel shows would not be what runs.
 * (The zero-width joiner and non-joiner are kept: emoji are built with them;
 * so is a carriage return ending a line, CRLF, which hides nothing.)
 */
const INVISIBLE = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

/** `text` with each such character written as a visible escape: `\x1b`, `\r`, `\u{202e}`. */
export function visibleControls(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    const code = c.codePointAt(0) ?? 0;
    if (c === '\r') return '\\r';
    return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

