//! The text a model sees around the cursor: up to `contextLines` lines
//! before and after it, and never more than [`MAX_PREFIX_CHARS`] /
//! [`MAX_SUFFIX_CHARS`] (a 1 MB document, or one minified line, sends a
//! window, not the file). Cut from the rope directly: the cost is the
//! window's, not the document's.

use ropey::Rope;

/// The most characters of text before the cursor a prompt carries.
pub const MAX_PREFIX_CHARS: usize = 12 * 1024;
/// The most characters of text after the cursor a prompt carries.
pub const MAX_SUFFIX_CHARS: usize = 4 * 1024;
/// The part of the cursor's line before it that an item repeats in its
/// `insertText` (so its range can start at the line's start); a longer
/// line prefix makes a plain insertion at the cursor instead.
pub const MAX_LINE_PREFIX_CHARS: usize = 512;

/// The window around one cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The text before the cursor, from the start of a line when the
    /// bounds allow.
    pub prefix: String,
    /// The text after the cursor.
    pub suffix: String,
    /// The cursor as a char index into the document.
    pub cursor: usize,
    /// The cursor's line (0-based).
    pub line: usize,
    /// The cursor's column in chars.
    pub column: usize,
}

impl Window {
    /// Cut the window around `cursor` (a char index, clamped to the text).
    pub fn around(rope: &Rope, cursor: usize, context_lines: usize) -> Window {
        let cursor = cursor.min(rope.len_chars());
        let line = rope.char_to_line(cursor);
        let line_start = rope.line_to_char(line);
        let first_line = line.saturating_sub(context_lines);
        let start = rope.line_to_char(first_line).max(cursor.saturating_sub(MAX_PREFIX_CHARS));
        // The last line of the window is `context_lines` after the cursor's
        // (its end included), bounded in chars.
        let last_line = line.saturating_add(context_lines).saturating_add(1).min(rope.len_lines());
        let end = rope.line_to_char(last_line).min(cursor.saturating_add(MAX_SUFFIX_CHARS)).max(cursor);
        Window {
            prefix: rope.slice(start..cursor).to_string(),
            suffix: rope.slice(cursor..end).to_string(),
            cursor,
            line,
            column: cursor - line_start,
        }
    }

    /// The cursor's line before the cursor, when it is short enough to be
    /// repeated in an item (see [`MAX_LINE_PREFIX_CHARS`]).
    pub fn line_prefix(&self) -> Option<&str> {
        if self.column > MAX_LINE_PREFIX_CHARS {
            return None;
        }
        if self.column == 0 {
            return Some("");
        }
        // `None` when the window's prefix was cut inside the line.
        let start = self.prefix.char_indices().rev().nth(self.column - 1)?.0;
        Some(&self.prefix[start..])
    }

    /// The cursor's line after the cursor.
    pub fn line_suffix(&self) -> &str {
        let end = self.suffix.find(['\n', '\r']).unwrap_or(self.suffix.len());
        &self.suffix[..end]
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn at(text: &str, marker: &str, lines: usize) -> Window {
        let cursor = text[..text.find(marker).unwrap()].chars().count();
        let text = text.replace(marker, "");
        Window::around(&Rope::from_str(&text), cursor, lines)
    }

    #[test]
    fn the_window_holds_the_lines_around_the_cursor() {
        let w = at("a\nb\nc\nde|fg\nh\ni\nj\n", "|", 1);
        assert_eq!((w.prefix.as_str(), w.suffix.as_str()), ("c\nde", "fg\nh\n"));
        assert_eq!((w.line, w.column, w.line_prefix(), w.line_suffix()), (3, 2, Some("de"), "fg"));
        let w = at("|x", "|", 5);
        assert_eq!((w.prefix.as_str(), w.suffix.as_str(), w.line_prefix()), ("", "x", Some("")));
        let w = at("x\r\ny|", "|", 0);
        assert_eq!((w.prefix.as_str(), w.suffix.as_str(), w.line), ("y", "", 1));
        // Astral-plane characters count as one char each.
        let w = at("😀é|😀\n", "|", 0);
        assert_eq!((w.prefix.as_str(), w.line_suffix(), w.column, w.line_prefix()), ("😀é", "😀", 2, Some("😀é")));
    }

    #[test]
    fn a_huge_document_or_line_gives_a_bounded_window() {
        let line = "x".repeat(100);
        let big: String = (0..10_000).map(|_| format!("{line}\n")).collect();
        let rope = Rope::from_str(&big);
        let w = Window::around(&rope, rope.len_chars() / 2, 1_000_000);
        assert!(w.prefix.len() <= MAX_PREFIX_CHARS && w.suffix.len() <= MAX_SUFFIX_CHARS);
        let one_line = "y".repeat(1 << 20);
        let rope = Rope::from_str(&one_line);
        let w = Window::around(&rope, 1 << 19, 50);
        assert_eq!((w.prefix.len(), w.suffix.len()), (MAX_PREFIX_CHARS, MAX_SUFFIX_CHARS));
        assert_eq!(w.line_prefix(), None, "a long line is not repeated");
        // Past the end clamps.
        let w = Window::around(&Rope::from_str("ab"), 99, 3);
        assert_eq!((w.prefix.as_str(), w.cursor), ("ab", 2));
    }
}
