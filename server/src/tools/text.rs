//! Text helpers the tools share: line endings, numbered lines, and the
//! unified diff shown after an edit (and in edit reviews).

use std::time::Duration;

/// Diff lines shown after a successful edit before the rest is summarised.
const MAX_DIFF_LINES: usize = 200;

/// Characters of one diff line before it is cut.
const MAX_DIFF_LINE_CHARS: usize = 500;

/// How a text ends its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnding {
    Lf,
    CrLf,
}

/// The line ending most of `text`'s lines use; `None` for text without a
/// line break (nothing to follow).
pub(crate) fn line_ending_of(text: &str) -> Option<LineEnding> {
    let breaks = text.matches('\n').count();
    if breaks == 0 {
        return None;
    }
    let crlf = text.matches("\r\n").count();
    Some(if crlf * 2 > breaks { LineEnding::CrLf } else { LineEnding::Lf })
}

/// `text` with every line break written as `ending`.
pub(crate) fn with_line_ending(text: &str, ending: LineEnding) -> String {
    let lf = text.replace("\r\n", "\n");
    match ending {
        LineEnding::Lf => lf,
        LineEnding::CrLf => lf.replace('\n', "\r\n"),
    }
}

/// `  12 | text`: the number right-aligned in `width` columns.
pub(crate) fn numbered_line(number: usize, width: usize, text: &str) -> String {
    format!("{number:>width$} | {text}")
}

/// The number of decimal digits in `n`.
pub(crate) fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Lines of unchanged context around each change in the diff.
const DIFF_CONTEXT: usize = 3;

/// A unified diff with line numbers: `-` lines carry their old number,
/// context and `+` lines their new one (what read_file will show next).
pub(crate) fn render_diff(old: &str, new: &str) -> String {
    use similar::{ChangeTag, TextDiff};
    // Only the region between the common first and last lines can differ:
    // diffing just that (plus context) keeps a small edit to a big file as
    // cheap as the edit itself.
    let window = DiffWindow::new(old, new);
    // A deadline keeps a pathological diff bounded; similar then falls back
    // to a coarser (still correct) diff.
    let diff = TextDiff::configure().timeout(Duration::from_millis(500)).diff_lines(window.old, window.new);
    let groups = diff.grouped_ops(DIFF_CONTEXT);
    let skipped = window.skipped_lines;
    let width = digits(skipped + window.old.lines().count().max(window.new.lines().count())).max(4);
    let mut lines: Vec<String> = Vec::new();
    for group in &groups {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let old_start = first.old_range().start;
        let new_start = first.new_range().start;
        let old_len = last.old_range().end - old_start;
        let new_len = last.new_range().end - new_start;
        lines.push(format!("@@ -{},{old_len} +{},{new_len} @@", skipped + old_start + 1, skipped + new_start + 1));
        for op in group {
            for change in diff.iter_changes(op) {
                let (sign, number) = match change.tag() {
                    ChangeTag::Delete => ('-', change.old_index()),
                    ChangeTag::Insert => ('+', change.new_index()),
                    ChangeTag::Equal => (' ', change.new_index()),
                };
                let number = number.map_or(0, |n| skipped + n + 1);
                let text = change.value().trim_end_matches(['\n', '\r']);
                let mut text = match text.char_indices().nth(MAX_DIFF_LINE_CHARS) {
                    Some((end, _)) => format!("{} [...]", &text[..end]),
                    None => text.to_string(),
                };
                // Else "- b" / "+ b" would look like a change to nothing.
                if change.tag() != ChangeTag::Equal && !change.value().ends_with('\n') {
                    text.push_str(" [no newline at end of file]");
                }
                lines.push(format!("{number:>width$} {sign} {text}").trim_end().to_string());
            }
        }
    }
    if lines.len() > MAX_DIFF_LINES {
        let more = lines.len() - MAX_DIFF_LINES;
        lines.truncate(MAX_DIFF_LINES);
        lines.push(format!("... (diff cut: {more} more lines; read the file to see the rest)"));
    }
    lines.join("\n")
}

/// The parts of two texts a diff needs to look at: everything but their
/// common leading and trailing lines, keeping [`DIFF_CONTEXT`] of each.
struct DiffWindow<'a> {
    old: &'a str,
    new: &'a str,
    /// Whole lines cut from the front of both texts.
    skipped_lines: usize,
}

impl<'a> DiffWindow<'a> {
    fn new(old: &'a str, new: &'a str) -> Self {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        let common_prefix = old_lines.iter().zip(&new_lines).take_while(|(a, b)| a == b).count();
        let max_suffix = old_lines.len().min(new_lines.len()) - common_prefix;
        let common_suffix =
            old_lines.iter().rev().zip(new_lines.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
        let skipped_lines = common_prefix.saturating_sub(DIFF_CONTEXT);
        let tail_cut = common_suffix.saturating_sub(DIFF_CONTEXT);
        let slice = |text: &'a str, lines: &[&str]| -> &'a str {
            let start: usize = lines[..skipped_lines].iter().map(|l| l.len()).sum();
            let end: usize = text.len() - lines[lines.len() - tail_cut..].iter().map(|l| l.len()).sum::<usize>();
            &text[start..end]
        };
        DiffWindow { old: slice(old, &old_lines), new: slice(new, &new_lines), skipped_lines }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings() {
        assert_eq!(line_ending_of("a"), None);
        assert_eq!(line_ending_of("a\r\nb\r\nc\n"), Some(LineEnding::CrLf));
        assert_eq!(line_ending_of("a\r\nb\nc\n"), Some(LineEnding::Lf));
        assert_eq!(with_line_ending("a\nb\r\n", LineEnding::CrLf), "a\r\nb\r\n");
        assert_eq!(with_line_ending("a\r\nb\n", LineEnding::Lf), "a\nb\n");
    }
}
