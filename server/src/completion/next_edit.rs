//! Next-edit suggestions: a model rewrites a region around the cursor from
//! the user's recent edits and the file's diagnostics, and the difference
//! between the region and its rewrite becomes one range-replacing
//! suggestion (rename the other uses, fix the call just broken, finish the
//! pattern). The prompt marks the region and the cursor the way next-edit
//! models are trained (Zed's Zeta: an editable region and a cursor mark),
//! in words a general chat model follows too.

use ropey::Rope;

use super::history::RecentEdit;
use super::prompt::strip_fence;

/// Lines of the region before and after the cursor's line.
pub const LINES_BEFORE: usize = 5;
pub const LINES_AFTER: usize = 10;
/// The most characters the region has (a longer one is not asked about).
pub const MAX_REGION_CHARS: usize = 4000;
/// Lines of the file shown around the region (not to be rewritten).
const CONTEXT_LINES: usize = 20;
const MAX_CONTEXT_CHARS: usize = 6000;

pub const REGION_START: &str = "<|editable_region_start|>";
pub const REGION_END: &str = "<|editable_region_end|>";
pub const CURSOR: &str = "<|user_cursor_is_here|>";

pub const SYSTEM: &str = "You predict the next edit a programmer will make. You are shown their recent edits as \
diffs, the file's diagnostics, and an excerpt of the file in which the text between <|editable_region_start|> \
and <|editable_region_end|> may be rewritten; <|user_cursor_is_here|> marks the cursor. Reply with the region \
rewritten, between the same two markers and nothing else: make the change the recent edits call for next \
(update the other uses of what was renamed, fix what the edit broke, continue the pattern), and keep everything \
else exactly as it is. If no edit follows, reply with the region unchanged.";

/// The part of the file a model may rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// Char range of the region in the document.
    pub start: usize,
    pub end: usize,
    pub first_line: usize,
    pub last_line: usize,
    pub text: String,
    /// The cursor as a char offset into `text`.
    pub cursor: usize,
}

impl Region {
    /// The region around `cursor`; `None` when it would be too large.
    pub fn around(rope: &Rope, cursor: usize) -> Option<Region> {
        let cursor = cursor.min(rope.len_chars());
        let line = rope.char_to_line(cursor);
        let first_line = line.saturating_sub(LINES_BEFORE);
        let last_line = (line + LINES_AFTER).min(rope.len_lines().saturating_sub(1));
        let start = rope.line_to_char(first_line);
        let end = if last_line + 1 >= rope.len_lines() { rope.len_chars() } else { rope.line_to_char(last_line + 1) };
        if end - start > MAX_REGION_CHARS {
            return None;
        }
        Some(Region { start, end, first_line, last_line, text: rope.slice(start..end).to_string(), cursor: cursor - start })
    }
}

/// The user message: the recent edits, the diagnostics, and the excerpt.
pub fn prompt(rope: &Rope, region: &Region, file_name: &str, edits: &[RecentEdit], diagnostics: &[String]) -> String {
    let mut out = String::new();
    out.push_str("Recent edits, oldest first:\n");
    if edits.is_empty() {
        out.push_str("(none)\n");
    }
    for edit in edits {
        out.push_str(&format!("--- {file_name} line {}\n", edit.line + 1));
        for line in edit.before.lines() {
            out.push_str(&format!("-{line}\n"));
        }
        for line in edit.after.lines() {
            out.push_str(&format!("+{line}\n"));
        }
    }
    out.push_str("\nDiagnostics:\n");
    if diagnostics.is_empty() {
        out.push_str("(none)\n");
    }
    for diagnostic in diagnostics {
        out.push_str(diagnostic);
        out.push('\n');
    }
    let context_start = rope.line_to_char(region.first_line.saturating_sub(CONTEXT_LINES)).max(region.start.saturating_sub(MAX_CONTEXT_CHARS));
    let after_line = (region.last_line + 1 + CONTEXT_LINES).min(rope.len_lines());
    let context_end = rope.line_to_char(after_line).min(region.end + MAX_CONTEXT_CHARS).max(region.end);
    let (before_cursor, after_cursor) = region.text.split_at(char_to_byte(&region.text, region.cursor));
    out.push_str(&format!("\nThe excerpt of {file_name}:\n"));
    out.push_str(&rope.slice(context_start..region.start).to_string());
    out.push_str(REGION_START);
    out.push_str(before_cursor);
    out.push_str(CURSOR);
    out.push_str(after_cursor);
    out.push_str(REGION_END);
    out.push_str(&rope.slice(region.end..context_end).to_string());
    out.push_str("\n\nThe region rewritten:\n");
    out
}

fn char_to_byte(text: &str, chars: usize) -> usize {
    text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i)
}

/// The rewritten region in the model's answer, without the markers.
pub fn parse(answer: &str) -> Option<String> {
    let answer = strip_fence(answer.trim());
    let start = answer.find(REGION_START)? + REGION_START.len();
    let rest = &answer[start..];
    let end = rest.find(REGION_END)?;
    Some(rest[..end].replace(CURSOR, ""))
}

/// The smallest replacement that turns the region into `rewritten`:
/// chars `start..end` of the document become `text`. `None` when nothing
/// changes.
pub fn replacement(region: &Region, rewritten: &str) -> Option<(usize, usize, String)> {
    if rewritten == region.text {
        return None;
    }
    let old: Vec<char> = region.text.chars().collect();
    let new: Vec<char> = rewritten.chars().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old.iter().rev().zip(new.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    let text: String = new[prefix..new.len() - suffix].iter().collect();
    Some((region.start + prefix, region.start + old.len() - suffix, text))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_region_its_prompt_and_the_replacement() {
        let text = "def total(items):\n    return sum(items)\n\nprint(total(xs))\nprint(total(ys))\n";
        let rope = Rope::from_str(text);
        let cursor = text.find("(xs)").unwrap();
        let region = Region::around(&rope, cursor).unwrap();
        assert_eq!((region.first_line, region.last_line, region.start, region.end), (0, 5, 0, text.len()));
        let edits = [RecentEdit { line: 0, before: "def sum_up(items):\n".into(), after: "def total(items):\n".into(), version: 3 }];
        let prompt = prompt(&rope, &region, "a.py", &edits, &["line 4: error: name 'xs' is not defined".into()]);
        expect_test::expect![[r#"
            Recent edits, oldest first:
            --- a.py line 1
            -def sum_up(items):
            +def total(items):

            Diagnostics:
            line 4: error: name 'xs' is not defined

            The excerpt of a.py:
            <|editable_region_start|>def total(items):
                return sum(items)

            print(total<|user_cursor_is_here|>(xs))
            print(total(ys))
            <|editable_region_end|>

            The region rewritten:
        "#]]
        .assert_eq(&prompt);
        let answer = "```\n<|editable_region_start|>def total(items):\n    return sum(items)\n\nprint(total(xs))\nprint(total(zs))\n<|editable_region_end|>\n```";
        let rewritten = parse(answer).unwrap();
        let (start, end, new) = replacement(&region, &rewritten).unwrap();
        assert_eq!((&text[start..end], new.as_str()), ("y", "z"));
        assert_eq!(replacement(&region, &region.text), None);
        assert_eq!(parse("no markers here"), None);
    }

    #[test]
    fn a_huge_line_gives_no_region() {
        let rope = Rope::from_str(&"x".repeat(100_000));
        assert_eq!(Region::around(&rope, 10), None);
    }
}
