//! `edit_file`: replace an exact string in a file.
//!
//! String replacement fails loudly when the string is not in the file,
//! instead of writing somewhere wrong. The work is split by phase:
//!
//! 1. **find** — locate `old_string` with decreasing strictness and say which
//!    rung matched ([`MatchRung`]): the exact bytes; then with line endings
//!    normalized (a CRLF file edited with the `\n` the model sends); then also
//!    with curly quotes read as straight ones, in both directions.
//! 2. **plan** — compute each replacement so it fits where it lands: the
//!    file's line endings, and on the quote rung the file's quote style.
//!    `new_string` is inserted literally (`$1`, `$&`, `\n` are just text).
//! 3. **apply** — splice the replacements into the text and hand the whole
//!    new text to [`Workspace::write`], which reaches the editor for an open
//!    document and the disk otherwise.
//!
//! An empty `old_string` creates a file that does not exist yet, or fills an
//! empty one (as Claude Code allows); on a file with content it is refused,
//! since it would match everywhere.

use std::ops::Range;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::change::{fresh_existing, unsaved_note};
use super::text::{line_ending_of, render_diff, with_line_ending, LineEnding};
use super::{Tool, ToolContext, ToolError, ToolKind};
use crate::workspace::{FileChange, ReadStamp, Workspace};

/// Replace text in a file: `old_string` becomes `new_string`.
///
/// `old_string` must match the file's text exactly, including whitespace and
/// indentation, and without the line-number prefix (`  12 | `) that
/// read_file shows. It must occur exactly once, unless `replace_all` is true:
/// if it occurs several times, include more surrounding lines to make it
/// unique. Straight and curly quotes are matched against each other, and
/// the file's own quote style and line endings are kept.
///
/// Rules: read the file with `read_file` in this session before editing it,
/// and read it again if it changed since (the edit is refused otherwise).
/// Paths are relative to the workspace root. `new_string` is inserted
/// literally. An empty `old_string` creates a new file with `new_string` as
/// its content. If the file is open in the user's editor, the edit is made
/// in the editor. The result shows a diff of the change with line numbers.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditFileArgs {
    /// The file to change, relative to the workspace root.
    pub file_path: String,
    /// The exact text to replace (must be unique in the file unless
    /// replace_all is true).
    pub old_string: String,
    /// The text to put in its place (must differ from old_string).
    pub new_string: String,
    /// Replace every occurrence of old_string instead of exactly one.
    /// Default false.
    #[serde(default)]
    pub replace_all: bool,
}

pub struct EditFile;

#[async_trait]
impl Tool for EditFile {
    type Args = EditFileArgs;
    type Plan = EditPlan;
    const NAME: &'static str = "edit_file";

    fn kind(&self, args: &Self::Args, ctx: &ToolContext) -> ToolKind {
        ToolKind::Edit { path: ctx.workspace.resolve_lenient(&args.file_path) }
    }

    fn summary(&self, args: &Self::Args) -> String {
        args.file_path.clone()
    }

    /// Refuse before the permission prompt: no one should approve an edit
    /// that cannot apply.
    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<EditPlan, ToolError> {
        plan_edit(&ctx.workspace, args)
    }

    fn preview(&self, _args: &Self::Args, plan: &EditPlan) -> Option<String> {
        Some(render_diff(plan.old_text.as_deref().unwrap_or(""), &plan.new_text))
    }

    async fn call(&self, _args: Self::Args, plan: EditPlan, ctx: &ToolContext) -> Result<String, ToolError> {
        // The workspace checks again, at the moment of writing, that the
        // file is still what the plan was computed from.
        let display = ctx.workspace.display_path(&plan.path);
        let change = FileChange {
            path: plan.path.clone(),
            new_text: plan.new_text.clone(),
            base: plan.base,
            label: format!("edit_file {display}"),
            review: ctx.editor_review,
        };
        let outcome = ctx.workspace.write(change).await.map_err(|e| ToolError::model(e.message()))?;
        let mut out = match (plan.old_text.is_none(), plan.rung) {
            (true, _) => format!("Successfully created {display}"),
            (false, MatchRung::Quotes) => format!("Successfully edited {display} (matched via quote normalization)"),
            (false, _) => format!("Successfully edited {display}"),
        };
        if plan.replacements > 1 {
            out.push_str(&format!("\nReplaced {} occurrences.", plan.replacements));
        }
        if let Some(note) = unsaved_note(&outcome) {
            out.push('\n');
            out.push_str(note);
        }
        let diff = render_diff(plan.old_text.as_deref().unwrap_or(""), &plan.new_text);
        if !diff.is_empty() {
            out.push('\n');
            out.push_str(&diff);
        }
        Ok(out)
    }
}

/// Which rung of the matching ladder found `old_string`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchRung {
    /// The bytes as given.
    Exact,
    /// After reading `\r\n` as `\n` in both the file and `old_string`.
    LineEndings,
    /// After also reading curly quotes (‘ ’ “ ”) as straight ones.
    Quotes,
}

/// Where `old_string` matched: byte ranges in the file's text, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub rung: MatchRung,
    pub ranges: Vec<Range<usize>>,
}

/// Why `old_string` could not be placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindError {
    NotFound,
    NotUnique(usize),
}

/// Phase 1: find `old` in `text`, strictest rung first. The first rung with
/// any match decides: one match, or every match with `replace_all`.
pub fn find(text: &str, old: &str, replace_all: bool) -> Result<Found, FindError> {
    for rung in [MatchRung::Exact, MatchRung::LineEndings, MatchRung::Quotes] {
        let ranges = find_on_rung(text, old, rung);
        match ranges.len() {
            0 => continue,
            1 => return Ok(Found { rung, ranges }),
            _ if replace_all => return Ok(Found { rung, ranges }),
            n => return Err(FindError::NotUnique(n)),
        }
    }
    Err(FindError::NotFound)
}

fn find_on_rung(text: &str, old: &str, rung: MatchRung) -> Vec<Range<usize>> {
    if old.is_empty() {
        return Vec::new();
    }
    // Without a '\r' on either side this rung sees what the exact one saw.
    if rung == MatchRung::LineEndings && !text.contains('\r') && !old.contains('\r') {
        return Vec::new();
    }
    // Quotes can only make a difference where a curly quote is involved on
    // one side and a quote of any kind on the other.
    if rung == MatchRung::Quotes && !quotes_can_differ(text, old) {
        return Vec::new();
    }
    if rung == MatchRung::Exact {
        return text.match_indices(old).map(|(start, m)| start..start + m.len()).collect();
    }
    let haystack: String = normalized_chars(text, rung).map(|(c, _)| c).collect();
    let needle: String = normalized_chars(old, rung).map(|(c, _)| c).collect();
    let ranges: Vec<Range<usize>> =
        haystack.match_indices(&needle).map(|(start, m)| start..start + m.len()).collect();
    to_original_ranges(text, rung, &ranges)
}

/// The characters of `text` as a rung sees them, each with the byte range
/// of the original text it stands for (`\r\n` is one `\n` of two bytes; a
/// curly quote is one straight quote of three bytes).
fn normalized_chars(text: &str, rung: MatchRung) -> impl Iterator<Item = (char, Range<usize>)> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, c) = chars.next()?;
        if c == '\r' && rung != MatchRung::Exact {
            if let Some(&(newline, '\n')) = chars.peek() {
                chars.next();
                return Some(('\n', start..newline + 1));
            }
        }
        let seen = if rung == MatchRung::Quotes { straighten(c) } else { c };
        Some((seen, start..start + c.len_utf8()))
    })
}

/// Map byte ranges in a rung's normalized text back to the original text.
/// `ranges` must be sorted and not overlap (as `match_indices` gives them).
fn to_original_ranges(text: &str, rung: MatchRung, ranges: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut pending = ranges.iter();
    let Some(mut current) = pending.next() else { return out };
    let mut position = 0;
    let mut start = None;
    for (c, original) in normalized_chars(text, rung) {
        if position == current.start {
            start = Some(original.start);
        }
        position += c.len_utf8();
        if position == current.end {
            out.push(start.take().unwrap_or(original.start)..original.end);
            match pending.next() {
                Some(next) => current = next,
                None => break,
            }
        }
    }
    out
}

const CURLY_QUOTES: [char; 4] = ['\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}'];

fn quotes_can_differ(text: &str, old: &str) -> bool {
    old.contains(CURLY_QUOTES) || (old.contains(['"', '\'']) && text.contains(CURLY_QUOTES))
}

fn straighten(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' => '\'',
        '\u{201C}' | '\u{201D}' => '"',
        other => other,
    }
}

/// One planned change: replace `range` of the original text with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub range: Range<usize>,
    pub text: String,
}

/// Phase 2: what each match becomes. The replacement takes the line ending
/// of the text it replaces (or the file's), and on the quote rung the
/// quote style found there.
pub fn plan(text: &str, found: &Found, new: &str) -> Vec<Replacement> {
    let file_ending = line_ending_of(text).unwrap_or(LineEnding::Lf);
    found
        .ranges
        .iter()
        .map(|range| {
            let matched = &text[range.clone()];
            let ending = line_ending_of(matched).unwrap_or(file_ending);
            let mut replacement = with_line_ending(new, ending);
            if found.rung == MatchRung::Quotes {
                replacement = match_quote_style(&replacement, matched);
            }
            Replacement { range: range.clone(), text: replacement }
        })
        .collect()
}

/// Phase 3: splice the replacements (sorted, not overlapping) into `text`.
pub fn apply(text: &str, replacements: &[Replacement]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for replacement in replacements {
        out.push_str(&text[copied..replacement.range.start]);
        out.push_str(&replacement.text);
        copied = replacement.range.end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Write `new`'s quotes the way `matched` (the file's text) writes them:
/// curly where the file used curly quotes of that kind, straight where it
/// used straight ones. A kind the file's text does not show is left alone.
fn match_quote_style(new: &str, matched: &str) -> String {
    let double = quote_style(matched, '"', ['\u{201C}', '\u{201D}']);
    let single = quote_style(matched, '\'', ['\u{2018}', '\u{2019}']);
    let chars: Vec<char> = new.chars().collect();
    let mut out = String::with_capacity(new.len());
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
        let after = chars.get(i + 1).copied();
        let styled = match (straighten(c), c == '"' || c == '\'') {
            ('"', is_straight) => restyle(double, is_straight, c, '"', ['\u{201C}', '\u{201D}'], before, after),
            ('\'', is_straight) => restyle(single, is_straight, c, '\'', ['\u{2018}', '\u{2019}'], before, after),
            _ => c,
        };
        out.push(styled);
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuoteStyle {
    Curly,
    Straight,
    Unknown,
}

fn quote_style(matched: &str, straight: char, curly: [char; 2]) -> QuoteStyle {
    if matched.contains(curly) {
        QuoteStyle::Curly
    } else if matched.contains(straight) {
        QuoteStyle::Straight
    } else {
        QuoteStyle::Unknown
    }
}

fn restyle(
    style: QuoteStyle,
    is_straight: bool,
    c: char,
    straight: char,
    [open, close]: [char; 2],
    before: Option<char>,
    after: Option<char>,
) -> char {
    match style {
        QuoteStyle::Straight => straight,
        QuoteStyle::Unknown => c,
        QuoteStyle::Curly if !is_straight => c,
        QuoteStyle::Curly => {
            // An apostrophe inside a word (don't) is a closing single quote.
            let in_word = before.is_some_and(char::is_alphanumeric) && after.is_some_and(char::is_alphanumeric);
            let opens = !in_word && before.is_none_or(|b| b.is_whitespace() || "([{<—–-".contains(b));
            if opens { open } else { close }
        }
    }
}

/// Everything `call` needs, computed without side effects.
pub struct EditPlan {
    path: std::path::PathBuf,
    /// The text the edit starts from; `None` when the file is created.
    old_text: Option<String>,
    new_text: String,
    base: Option<ReadStamp>,
    rung: MatchRung,
    replacements: usize,
}

fn plan_edit(workspace: &Workspace, args: &EditFileArgs) -> Result<EditPlan, ToolError> {
    if args.old_string == args.new_string {
        return Err(ToolError::model(
            "Error: old_string and new_string are identical, so there is nothing to change. Put the new text in new_string.",
        ));
    }
    let path = workspace.resolve(&args.file_path).map_err(|e| ToolError::model(e.message()))?;
    let display = workspace.display_path(&path);
    let current = fresh_existing(workspace, &path, "editing")?;
    let Some(current) = current else {
        if args.old_string.is_empty() {
            return Ok(EditPlan {
                path,
                old_text: None,
                new_text: args.new_string.clone(),
                base: None,
                rung: MatchRung::Exact,
                replacements: 1,
            });
        }
        return Err(ToolError::model(format!(
            "Error: file not found: {display}. Check the path (relative to the workspace root), or create the file with write_file."
        )));
    };
    if args.old_string.is_empty() {
        if !current.text.is_empty() {
            return Err(ToolError::model(format!(
                "Error: old_string is empty, but {display} already has content. Give the exact text to replace, or use write_file to replace the whole file."
            )));
        }
        return Ok(EditPlan {
            path,
            old_text: Some(String::new()),
            new_text: args.new_string.clone(),
            base: Some(current.stamp),
            rung: MatchRung::Exact,
            replacements: 1,
        });
    }
    let found = find(&current.text, &args.old_string, args.replace_all)
        .map_err(|err| ToolError::model(find_error_message(err, &display, &args.old_string)))?;
    let replacements = plan(&current.text, &found, &args.new_string);
    let new_text = apply(&current.text, &replacements);
    if new_text == current.text {
        return Err(ToolError::model(format!(
            "Error: this edit would leave {display} unchanged: new_string differs from the matched text only in quote style or line endings, which the edit keeps as the file has them."
        )));
    }
    Ok(EditPlan {
        path,
        old_text: Some(current.text),
        new_text,
        base: Some(current.stamp),
        rung: found.rung,
        replacements: replacements.len(),
    })
}

fn find_error_message(err: FindError, display: &str, old: &str) -> String {
    match err {
        FindError::NotFound => {
            let mut message = format!(
                "Error: old_string not found in {display}. Read the file again with read_file and copy the text exactly, including whitespace and indentation."
            );
            if old.lines().any(looks_like_line_number_prefix) {
                message.push_str(
                    " old_string seems to include the line-number prefixes that read_file shows (\"  12 | \"); leave them out.",
                );
            }
            message
        }
        FindError::NotUnique(count) => format!(
            "Error: old_string found {count} times in {display}. Must be unique. Include more surrounding lines in old_string to pick one occurrence, or set replace_all to true to replace every one."
        ),
    }
}

/// `  12 | text`: a line copied from read_file's output with its number.
fn looks_like_line_number_prefix(line: &str) -> bool {
    let rest = line.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    digits > 0 && rest[digits..].starts_with(" | ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn edit(text: &str, old: &str, new: &str, replace_all: bool) -> Result<(MatchRung, String), FindError> {
        let found = find(text, old, replace_all)?;
        Ok((found.rung, apply(text, &plan(text, &found, new))))
    }

    #[test]
    fn exact_then_line_endings_then_quotes() {
        assert_eq!(edit("a b a", "b", "c", false), Ok((MatchRung::Exact, "a c a".into())));
        assert_eq!(edit("x\r\ny\r\nz\r\n", "x\ny\n", "1\n2\n3\n", false), Ok((MatchRung::LineEndings, "1\r\n2\r\n3\r\nz\r\n".into())));
        assert_eq!(edit("say “hi” now", "say \"hi\"", "say \"bye\"", false), Ok((MatchRung::Quotes, "say “bye” now".into())));
        assert_eq!(edit("say \"hi\" now", "say “hi”", "say “bye”", false), Ok((MatchRung::Quotes, "say \"bye\" now".into())));
        assert_eq!(edit("a a", "a", "b", false), Err(FindError::NotUnique(2)));
        assert_eq!(edit("a a", "a", "b", true), Ok((MatchRung::Exact, "b b".into())));
        assert_eq!(edit("abc", "x", "y", false), Err(FindError::NotFound));
    }

    #[test]
    fn a_match_ending_before_crlf_leaves_the_line_ending_whole() {
        assert_eq!(edit("a\r\nfoo\r\nb", "a\nfoo", "A\nFOO", false), Ok((MatchRung::LineEndings, "A\r\nFOO\r\nb".into())));
        // Matches that touch: both map back to the right bytes.
        assert_eq!(edit("“x”“x”", "\"x\"", "'y'", true), Ok((MatchRung::Quotes, "'y''y'".into())));
    }

    #[test]
    fn curly_style_follows_the_file() {
        assert_eq!(match_quote_style("\"don't\" he said, 'ok'", "“it’s” ‘x’"), "“don’t” he said, ‘ok’");
        assert_eq!(match_quote_style("(\"a\")", "“b”"), "(“a”)");
        assert_eq!(match_quote_style("“a” ‘b’", "\"c\" 'd'"), "\"a\" 'b'");
        assert_eq!(match_quote_style("\"a\"", "no quotes"), "\"a\"");
    }

    #[test]
    fn diff_of_a_small_edit_in_a_long_file_has_the_right_line_numbers() {
        let old: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 500\n", "line 500\ninserted\n").replace("line 502\n", "");
        expect_test::expect![[r#"
            @@ -498,8 +498,8 @@
             498   line 498
             499   line 499
             500   line 500
             501 + inserted
             502   line 501
             502 - line 502
             503   line 503
             504   line 504
             505   line 505"#]]
        .assert_eq(&render_diff(&old, &new));
        assert_eq!(render_diff("a\n", "a\n"), "");
        assert_eq!(render_diff("", "x\n"), "@@ -1,0 +1,1 @@\n   1 + x");
        assert_eq!(render_diff("x\ny\n", "x\nz\n"), "@@ -1,2 +1,2 @@\n   1   x\n   2 - y\n   2 + z");
        assert_eq!(render_diff("x\ny", "x\ny\n"), "@@ -1,2 +1,2 @@\n   1   x\n   2 - y [no newline at end of file]\n   2 + y");
    }

    #[test]
    fn line_number_prefix_detection() {
        assert!(looks_like_line_number_prefix("  12 | let x = 1;"));
        assert!(!looks_like_line_number_prefix("let x = a | b;"));
        assert!(!looks_like_line_number_prefix(" | x"));
    }
}
