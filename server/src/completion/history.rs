//! A document's recent edits, for next-edit suggestions: the language
//! server sees every `didChange`, and what the user just changed is the
//! best hint of what they will change next (Zed's Zeta and Copilot's next
//! edit suggestions are prompted the same way).
//!
//! Each edit is kept as whole lines, before and after; keystrokes on the
//! same lines merge into one edit, so typing a word is one entry, not one
//! per letter. Bounded: [`MAX_EDITS`] entries, each at most
//! [`MAX_EDIT_CHARS`] per side (a huge paste is kept as "too large").

use std::collections::VecDeque;

use ropey::Rope;

/// Edits remembered per document.
pub const MAX_EDITS: usize = 16;
/// The most characters one side of an edit keeps.
pub const MAX_EDIT_CHARS: usize = 2000;

/// One edit: lines `line..line + before.lines` became `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentEdit {
    /// The first changed line (0-based), in the text after the edit.
    pub line: usize,
    /// The changed lines before, with their line ends.
    pub before: String,
    /// The same lines after.
    pub after: String,
    /// The document version the edit made.
    pub version: i32,
}

impl RecentEdit {
    /// Lines of `after`.
    fn after_lines(&self) -> usize {
        self.after.lines().count().max(1)
    }
}

/// The edits of one document, newest last.
#[derive(Debug, Default, Clone)]
pub struct EditHistory {
    edits: VecDeque<RecentEdit>,
}

/// The lines an edit is about to change, captured before it is applied.
#[derive(Debug)]
pub struct Before {
    first_line: usize,
    text: Option<String>,
}

fn lines_text(rope: &Rope, first: usize, last: usize) -> Option<String> {
    let last = last.min(rope.len_lines().saturating_sub(1));
    let start = rope.line_to_char(first);
    let end = rope.line_to_char((last + 1).min(rope.len_lines()));
    let end = if last + 1 >= rope.len_lines() { rope.len_chars() } else { end };
    (end - start <= MAX_EDIT_CHARS).then(|| rope.slice(start..end).to_string())
}

impl EditHistory {
    /// Capture the lines the change of chars `start..end` touches.
    pub fn before(rope: &Rope, start: usize, end: usize) -> Before {
        let first_line = rope.char_to_line(start.min(rope.len_chars()));
        let last_line = rope.char_to_line(end.min(rope.len_chars()));
        Before { first_line, text: lines_text(rope, first_line, last_line) }
    }

    /// Record the change after it was applied: `inserted` chars now stand
    /// at `start`.
    pub fn record(&mut self, before: Before, rope: &Rope, start: usize, inserted: usize, version: i32) {
        let end = start.saturating_add(inserted).min(rope.len_chars());
        let last_line = rope.char_to_line(end);
        let after = lines_text(rope, before.first_line, last_line);
        let (Some(old), Some(new)) = (before.text, after) else {
            self.push(RecentEdit { line: before.first_line, before: "(too large to show)".into(), after: "(too large to show)".into(), version });
            return;
        };
        if old == new {
            return;
        }
        // Typing on the lines the last edit left: one edit, grown.
        if let Some(last) = self.edits.back_mut() {
            let same_lines = last.line == before.first_line && last.after_lines() == old.lines().count().max(1);
            if same_lines && last.after == old {
                last.after = new;
                last.version = version;
                if last.after == last.before {
                    self.edits.pop_back();
                }
                return;
            }
        }
        self.push(RecentEdit { line: before.first_line, before: old, after: new, version });
    }

    fn push(&mut self, edit: RecentEdit) {
        if self.edits.len() == MAX_EDITS {
            self.edits.pop_front();
        }
        self.edits.push_back(edit);
    }

    /// The edits, oldest first.
    pub fn edits(&self) -> Vec<RecentEdit> {
        self.edits.iter().cloned().collect()
    }

    /// The newest edit.
    pub fn last(&self) -> Option<&RecentEdit> {
        self.edits.back()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Apply `replace chars start..end with text` to `rope`, recording it.
    fn edit(history: &mut EditHistory, rope: &mut Rope, start: usize, end: usize, text: &str, version: i32) {
        let before = EditHistory::before(rope, start, end);
        rope.remove(start..end);
        rope.insert(start, text);
        history.record(before, rope, start, text.chars().count(), version);
    }

    #[test]
    fn keystrokes_on_one_line_merge_and_other_lines_make_new_edits() {
        let mut rope = Rope::from_str("def f(x):\n    return x\n\nf(1)\n");
        let mut history = EditHistory::default();
        // Rename x to value, letter by letter.
        let at = "def f(".len();
        edit(&mut history, &mut rope, at, at + 1, "", 1);
        for (i, c) in "value".chars().enumerate() {
            edit(&mut history, &mut rope, at + i, at + i, &c.to_string(), 2 + i as i32);
        }
        let edits = history.edits();
        assert_eq!(edits.len(), 1, "{edits:?}");
        assert_eq!((edits[0].line, edits[0].before.as_str(), edits[0].after.as_str(), edits[0].version), (0, "def f(x):\n", "def f(value):\n", 6));
        // An edit on another line is another entry.
        let at = rope.to_string().find("f(1)").unwrap() + 2;
        edit(&mut history, &mut rope, at, at + 1, "2", 7);
        assert_eq!(history.edits().len(), 2);
        assert_eq!(history.last().unwrap().after, "f(2)\n");
        // More typing on that line grows its edit.
        let end = rope.len_chars();
        edit(&mut history, &mut rope, end - 1, end - 1, "  # two", 8);
        assert_eq!(history.last().unwrap().after, "f(2)  # two\n");
        assert_eq!(history.edits().len(), 2);
    }

    #[test]
    fn a_huge_paste_is_bounded_and_the_count_is_too() {
        let mut rope = Rope::from_str("a\n");
        let mut history = EditHistory::default();
        edit(&mut history, &mut rope, 0, 0, &"x\n".repeat(10_000), 1);
        assert_eq!(history.last().unwrap().after, "(too large to show)");
        for i in 0..40 {
            let end = rope.len_chars();
            edit(&mut history, &mut rope, end, end, &format!("\nline{i}\n\n"), 2 + i);
        }
        assert_eq!(history.edits().len(), MAX_EDITS);
    }
}
