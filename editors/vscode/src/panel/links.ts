// Which link targets the panel opens, apart from the markdown renderer:
// the extension host imports this, and the renderer's highlighter (a
// development dependency bundled into the webview only) stays out of it.

/** The target a link may keep, or undefined (javascript:, data:, relative…). */
export function safeUrl(url: string): string | undefined {
  const trimmed = url.trim();
  return /^(https?:\/\/|mailto:)/i.test(trimmed) ? trimmed : undefined;
}
