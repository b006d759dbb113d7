//! Text helpers the tools share: line endings, numbered lines, and the
//! unified diff shown after an edit (and in edit reviews).


use crate::workspace::Splice;

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
    // Only the region between the common first and last lines can differ:
    // diffing just that (plus context) keeps a small edit to a big file as
    // cheap as the edit itself.
    let window = DiffWindow::new(old, new);
    render_window(window.old, window.new, window.skipped_lines)
}

/// [`render_diff`] of `old` and `old` with `splices` applied (in order,
/// not overlapping), without building or comparing the whole new text:
/// only the lines the splices touch, with their context, are looked at,
/// plus one count of the line breaks before them. This is how an edit of
/// a few lines in a 10 MB document stays cheap.
pub(crate) fn render_splice_diff(old: &str, splices: &[Splice]) -> String {
    let (Some(first), Some(last)) = (splices.first(), splices.last()) else { return String::new() };
    let (first, last_end) = (first.range.start.min(old.len()), last.range.end.min(old.len()));
    // From DIFF_CONTEXT lines before the first touched line...
    let mut start = old[..first].rfind('\n').map_or(0, |i| i + 1);
    for _ in 0..DIFF_CONTEXT {
        if start == 0 {
            break;
        }
        start = old[..start - 1].rfind('\n').map_or(0, |i| i + 1);
    }
    // ...to DIFF_CONTEXT lines after the last one.
    let mut end = old[last_end..].find('\n').map_or(old.len(), |i| last_end + i + 1);
    for _ in 0..DIFF_CONTEXT {
        if end == old.len() {
            break;
        }
        end = old[end..].find('\n').map_or(old.len(), |i| end + i + 1);
    }
    let mut new_window = String::with_capacity(end - start);
    let mut copied = start;
    for splice in splices {
        let (from, to) = (splice.range.start.clamp(copied, end), splice.range.end.clamp(copied, end));
        new_window.push_str(&old[copied..from]);
        new_window.push_str(&splice.text);
        copied = to;
    }
    new_window.push_str(&old[copied..end]);
    let skipped = old.as_bytes()[..start].iter().filter(|&&b| b == b'\n').count();
    render_window(&old[start..end], &new_window, skipped)
}

/// The diff of two windows of texts that agree on their first `skipped` lines.
fn render_window(old: &str, new: &str, skipped: usize) -> String {
    use crate::diff::Row;
    // Bounded (crate::diff): a pathological diff ends at its deadline with
    // a coarser (still exact) script.
    let diff = crate::diff::lines(old, new);
    // (line number, sign and text); no number for a hunk header.
    let mut rows: Vec<(Option<usize>, String)> = Vec::new();
    for group in diff.groups(DIFF_CONTEXT) {
        let changes = diff.rows(&group);
        // The header counts the rows below it.
        let old_index = |row: &Row| match *row {
            Row::Same(o, _, _) | Row::Removed(o, _) => Some(o),
            Row::Added(..) => None,
        };
        let new_index = |row: &Row| match *row {
            Row::Same(_, n, _) | Row::Added(n, _) => Some(n),
            Row::Removed(..) => None,
        };
        let Some(first) = group.first() else { continue };
        let old_start = changes.iter().find_map(old_index).unwrap_or(first.old_range().start);
        let new_start = changes.iter().find_map(new_index).unwrap_or(first.new_range().start);
        let old_len = changes.iter().filter(|c| old_index(c).is_some()).count();
        let new_len = changes.iter().filter(|c| new_index(c).is_some()).count();
        rows.push((None, format!("@@ -{},{old_len} +{},{new_len} @@", skipped + old_start + 1, skipped + new_start + 1)));
        for change in changes {
            let (sign, number, value) = match change {
                Row::Removed(o, value) => ('-', o, value),
                Row::Added(n, value) => ('+', n, value),
                Row::Same(_, n, value) => (' ', n, value),
            };
            let number = skipped + number + 1;
            let text = value.trim_end_matches(['\n', '\r']);
            let mut text = match text.char_indices().nth(MAX_DIFF_LINE_CHARS) {
                Some((end, _)) => format!("{} [...]", &text[..end]),
                None => text.to_string(),
            };
            // Else "- b" / "+ b" would look like a change to nothing.
            if sign != ' ' && !value.ends_with('\n') {
                text.push_str(" [no newline at end of file]");
            }
            rows.push((Some(number), format!("{sign} {text}")));
        }
    }
    let more = rows.len().saturating_sub(MAX_DIFF_LINES);
    rows.truncate(MAX_DIFF_LINES);
    // As wide as the largest number shown, and at least four columns.
    let width = digits(rows.iter().filter_map(|(n, _)| *n).max().unwrap_or(0)).max(4);
    let mut lines: Vec<String> = rows
        .into_iter()
        .map(|(number, row)| match number {
            None => row,
            Some(number) => format!("{number:>width$} {row}").trim_end().to_string(),
        })
        .collect();
    if more > 0 {
        lines.push(format!("... (diff cut: {more} more lines; read the file to see the rest)"));
    }
    lines.join("\n")
}

/// `old` with only the hunks of the change to `new` that `keep` marks
/// applied, the others left as they were. The hunks are those
/// [`render_diff`] and [`render_splice_diff`] show (changes with
/// [`DIFF_CONTEXT`] lines around them, closer ones joined), in order; a
/// hunk the user reviewed at the terminal is kept or declined by its
/// place. `None` when the change does not have `keep.len()` hunks.
pub(crate) fn select_hunks(old: &str, new: &str, keep: &[bool]) -> Option<String> {
    let window = DiffWindow::new(old, new);
    let diff = crate::diff::lines(window.old, window.new);
    let groups = diff.groups(DIFF_CONTEXT);
    if groups.len() != keep.len() {
        return None;
    }
    // Each change (not its context) belongs to one hunk.
    let mut taken = std::collections::HashMap::new();
    for (group, &kept) in groups.iter().zip(keep) {
        for op in group.iter().filter(|op| !matches!(op, crate::diff::DiffOp::Equal { .. })) {
            taken.insert((op.old_range().start, op.new_range().start), kept);
        }
    }
    // The window is a slice of `old`: where it starts and ends there.
    let start = window.old.as_ptr() as usize - old.as_ptr() as usize;
    let end = start + window.old.len();
    let mut out = String::with_capacity(old.len().max(new.len()));
    out.push_str(&old[..start]);
    for op in &diff.ops {
        let kept = !matches!(op, crate::diff::DiffOp::Equal { .. })
            && taken.get(&(op.old_range().start, op.new_range().start)).copied().unwrap_or(false);
        if kept {
            op.new_range().for_each(|n| out.push_str(diff.new[n]));
        } else {
            op.old_range().for_each(|o| out.push_str(diff.old[o]));
        }
    }
    out.push_str(&old[end..]);
    Some(out)
}

/// How many hunks [`render_diff`] shows for the change from `old` to `new`.
#[cfg(test)]
pub(crate) fn hunk_count(old: &str, new: &str) -> usize {
    let window = DiffWindow::new(old, new);
    crate::diff::lines(window.old, window.new).groups(DIFF_CONTEXT).len()
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `text` with `splices` applied (the slow, obvious way).
    fn spliced(text: &str, splices: &[Splice]) -> String {
        let mut out = String::new();
        let mut copied = 0;
        for splice in splices {
            out.push_str(&text[copied..splice.range.start]);
            out.push_str(&splice.text);
            copied = splice.range.end;
        }
        out.push_str(&text[copied..]);
        out
    }

    fn lines_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop_oneof!["a", "b", "c\n", "\n", "\r\n", "d\n", "é"], 0..60).prop_map(|p| p.concat())
    }

    /// Checks a rendered diff against the two texts it claims to show:
    /// every numbered line is the text at that number (old for `-`, new
    /// for context and `+`), the hunk headers count them, and replaying the
    /// hunks on the old lines gives the new lines. Returns what is wrong.
    fn diff_is_faithful(diff: &str, old: &str, new: &str) -> Result<(), String> {
        let shown = |line: &str| line.trim_end_matches(['\n', '\r']).trim_end().to_string();
        let old_lines: Vec<String> = old.split_inclusive('\n').map(shown).collect();
        let new_lines: Vec<String> = new.split_inclusive('\n').map(shown).collect();
        let mut replayed: Vec<String> = Vec::new();
        let mut old_at = 0;
        let mut rows = diff.lines().peekable();
        while let Some(header) = rows.next() {
            let numbers: Vec<usize> = header
                .trim_start_matches("@@ -")
                .trim_end_matches(" @@")
                .split([',', ' ', '+'])
                .filter_map(|n| n.parse().ok())
                .collect();
            let [old_start, old_len, new_start, new_len] = numbers[..] else { return Err(format!("bad header {header:?}")) };
            replayed.extend(old_lines[old_at..old_start - 1].iter().cloned());
            old_at = old_start - 1;
            if replayed.len() != new_start - 1 {
                return Err(format!("{header}: the new text is at line {} here", replayed.len() + 1));
            }
            let (mut olds, mut news) = (0, 0);
            while let Some(row) = rows.next_if(|r| !r.starts_with("@@")) {
                let row = row.trim_start();
                let (number, rest) = row.split_once(' ').unwrap_or((row, ""));
                let number: usize = number.parse().map_err(|_| format!("bad row {row:?}"))?;
                let (sign, text) = match rest.split_at_checked(1) {
                    Some((sign, text)) if sign == "+" || sign == "-" => (sign, text.trim_start_matches(' ')),
                    _ => (" ", rest.trim_start_matches(' ')),
                };
                let text = text.trim_end_matches(" [no newline at end of file]").to_string();
                let (lines, count) = if sign == "-" { (&old_lines, &mut olds) } else { (&new_lines, &mut news) };
                if lines.get(number - 1) != Some(&text) {
                    return Err(format!("row {row:?}: line {number} is {:?}", lines.get(number - 1)));
                }
                *count += 1;
                match sign {
                    "-" => old_at += 1,
                    "+" => replayed.push(text),
                    _ => {
                        olds += 1;
                        old_at += 1;
                        replayed.push(text);
                    }
                }
            }
            if (olds, news) != (old_len, new_len) || old_start - 1 + old_len != old_at {
                return Err(format!("{header} counts {olds} old and {news} new lines"));
            }
        }
        replayed.extend(old_lines[old_at..].iter().cloned());
        if replayed != new_lines {
            return Err(format!("replaying the diff gives {replayed:?}"));
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// The diff rendered from the splices alone is a faithful diff of
        /// the whole old and new texts, line numbers and all. (It may place
        /// a change among equal lines differently from a diff of the whole
        /// texts: both are right.)
        #[test]
        fn splice_diff_is_a_diff_of_the_whole_texts(
            text in lines_text(),
            cuts in proptest::collection::vec((0usize..200, 0usize..4, "[xy\n]{0,3}"), 0..4),
        ) {
            // Char boundaries that do not split a "\r\n" (an edit never does).
            let boundaries: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i) && !(i > 0 && text[..i].ends_with('\r') && text[i..].starts_with('\n')))
                .collect();
            let mut splices: Vec<Splice> = Vec::new();
            let mut from = 0;
            for (at, len, new) in cuts {
                let start = boundaries.iter().copied().filter(|&b| b >= from).nth(at % boundaries.len());
                let Some(start) = start else { break };
                let end = boundaries.iter().copied().filter(|&b| b >= start).nth(len).unwrap_or(start);
                splices.push(Splice { range: start..end, text: new });
                from = end;
            }
            let new = spliced(&text, &splices);
            let diff = render_splice_diff(&text, &splices);
            prop_assert!(diff_is_faithful(&diff, &text, &new).is_ok(), "{:?}\n{diff}", diff_is_faithful(&diff, &text, &new));
            prop_assert_eq!(diff.is_empty(), text == new);
            // The checker catches a wrong diff: the whole-text one of other texts.
            if text != new {
                let other = format!("{new}z\n");
                prop_assert!(diff_is_faithful(&render_diff(&text, &other), &text, &new).is_err());
            }
        }
    }

    #[test]
    fn splice_diff_of_a_small_edit_in_a_long_file() {
        let old: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let at = old.find("line 500\n").unwrap() + "line 500\n".len();
        let removed = old.find("line 502\n").unwrap();
        let splices = [
            Splice { range: at..at, text: "inserted\n".into() },
            Splice { range: removed..removed + "line 502\n".len(), text: String::new() },
        ];
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
        .assert_eq(&render_splice_diff(&old, &splices));
        assert_eq!(render_splice_diff("a\n", &[]), "");
    }

    #[test]
    fn line_endings() {
        assert_eq!(line_ending_of("a"), None);
        assert_eq!(line_ending_of("a\r\nb\r\nc\n"), Some(LineEnding::CrLf));
        assert_eq!(line_ending_of("a\r\nb\nc\n"), Some(LineEnding::Lf));
        assert_eq!(with_line_ending("a\nb\r\n", LineEnding::CrLf), "a\r\nb\r\n");
        assert_eq!(with_line_ending("a\r\nb\n", LineEnding::Lf), "a\nb\n");
    }

    #[test]
    fn chosen_hunks_apply_and_the_others_stay() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 2\n", "LINE 2\n").replace("line 15\n", "").replace("line 28\n", "line 28\nadded\n");
        let shown = render_diff(&old, &new);
        assert_eq!(shown.lines().filter(|l| l.starts_with("@@")).count(), 3, "{shown}");
        assert_eq!(hunk_count(&old, &new), 3);
        assert_eq!(select_hunks(&old, &new, &[true, true, true]).as_deref(), Some(new.as_str()));
        assert_eq!(select_hunks(&old, &new, &[false, false, false]).as_deref(), Some(old.as_str()));
        let middle = old.replace("line 15\n", "");
        assert_eq!(select_hunks(&old, &new, &[false, true, false]).as_deref(), Some(middle.as_str()));
        assert_eq!(select_hunks(&old, &new, &[true, false]), None, "a selection for another number of hunks");
        // The splice diff edit_file shows has the same hunks.
        let at = old.find("line 2\n").unwrap();
        let gone = old.find("line 15\n").unwrap();
        let splices = [
            Splice { range: at..at + "line 2\n".len(), text: "LINE 2\n".into() },
            Splice { range: gone..gone + "line 15\n".len(), text: String::new() },
        ];
        let spliced_new = spliced(&old, &splices);
        assert_eq!(render_splice_diff(&old, &splices).lines().filter(|l| l.starts_with("@@")).count(), hunk_count(&old, &spliced_new));
    }

    proptest! {
        #[test]
        fn every_selection_is_the_old_text_with_those_hunks(
            old in proptest::collection::vec(0u8..4, 0..40),
            new in proptest::collection::vec(0u8..4, 0..40),
            picks in proptest::collection::vec(any::<bool>(), 0..16),
        ) {
            let text = |v: &[u8]| v.iter().map(|n| format!("l{n}\n")).collect::<String>();
            let (old, new) = (text(&old), text(&new));
            let count = hunk_count(&old, &new);
            let keep: Vec<bool> = (0..count).map(|i| picks.get(i).copied().unwrap_or(true)).collect();
            let chosen = select_hunks(&old, &new, &keep).unwrap();
            let all = vec![true; count];
            let none = vec![false; count];
            prop_assert_eq!(select_hunks(&old, &new, &all).unwrap(), new.clone());
            prop_assert_eq!(select_hunks(&old, &new, &none).unwrap(), old.clone());
            // Each kept hunk adds its lines and takes its old ones away.
            let diff = crate::diff::lines(&old, &new);
            let change: isize = diff.groups(DIFF_CONTEXT).iter().zip(&keep).filter(|(_, k)| **k)
                .flat_map(|(group, _)| group.iter())
                .map(|op| op.new_range().len() as isize - op.old_range().len() as isize)
                .sum();
            prop_assert_eq!(chosen.lines().count() as isize, old.lines().count() as isize + change);
        }
    }
}
