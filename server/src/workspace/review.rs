//! What became of an edit after the editor's review: its status (the one
//! list of status strings every front end reports), the lines it changed,
//! and — when the editor applied only some of its hunks (VS Code's refactor
//! preview with a box unticked, the Neovim plugin's per-hunk answers) —
//! which hunks landed and which were declined, worked out from the buffer.
//!
//! The editor answers `applied: true` for a partly applied edit; only the
//! buffer tells which hunks it holds. [`landed_hunks`] reads the buffer as
//! "the old text with some of the hunks applied" and says which, or that it
//! is something else (a user edit in between).

use super::overlay::{HunkInBuffer, PartialEdit, Splice};

pub use crate::protocol::{EditStatus, LineSpan};
use crate::protocol::FileEffect;

/// The words that mark, in an edit tool's result, an edit the user took in
/// part at the terminal's per-hunk review (the CLI's edit status reads them).
pub const DECLINED_HUNKS: &str = "the user declined hunk";

/// States [`landed_hunks`] looks at before giving up: each costs at most
/// one comparison of a stretch of text, and ambiguous hunks (one's new text
/// a prefix of its old) are rare.
const MAX_SEARCH_STATES: usize = 20_000;

/// Which of `hunks` (replacements of byte ranges of `old`, in order, not
/// overlapping) `current` holds, when `current` is exactly `old` with some
/// of them applied: `Some(landed)` with one flag per hunk. `None` when
/// `current` is anything else (a user edit, another change), or when the
/// search would take too long.
pub fn landed_hunks(old: &str, hunks: &[Splice], current: &str) -> Option<Vec<bool>> {
    if hunks.windows(2).any(|w| w[0].range.end > w[1].range.start) || hunks.iter().any(|h| h.range.end > old.len()) {
        return None;
    }
    let mut search = Search { old, hunks, current, failed: std::collections::HashSet::new(), states: 0 };
    let mut choice = Vec::with_capacity(hunks.len());
    // The text before the first hunk is old text in every outcome.
    let first_gap = &old[..hunks.first().map_or(old.len(), |h| h.range.start)];
    if !current.starts_with(first_gap) {
        return None;
    }
    search.from(0, first_gap.len(), &mut choice).then_some(choice)
}

struct Search<'a> {
    old: &'a str,
    hunks: &'a [Splice],
    current: &'a str,
    /// `(hunk, offset in current)` pairs known not to lead to a match.
    failed: std::collections::HashSet<(usize, usize)>,
    states: usize,
}

impl Search<'_> {
    /// Can hunks `index..` be matched from byte `at` of `current`, each
    /// either applied or not, each followed by its stretch of old text?
    fn from(&mut self, index: usize, at: usize, choice: &mut Vec<bool>) -> bool {
        let Some(hunk) = self.hunks.get(index) else { return at == self.current.len() };
        if self.failed.contains(&(index, at)) {
            return false;
        }
        self.states += 1;
        if self.states > MAX_SEARCH_STATES {
            return false;
        }
        let gap_end = self.hunks.get(index + 1).map_or(self.old.len(), |next| next.range.start);
        let gap = &self.old[hunk.range.end..gap_end];
        let rest = &self.current[at..];
        // Try "applied" first: a reviewed edit is usually accepted.
        for (applied, text) in [(true, hunk.text.as_str()), (false, &self.old[hunk.range.clone()])] {
            if rest.starts_with(text) && rest[text.len()..].starts_with(gap) {
                choice.push(applied);
                if self.from(index + 1, at + text.len() + gap.len(), choice) {
                    return true;
                }
                choice.pop();
            }
        }
        self.failed.insert((index, at));
        false
    }
}

/// The hunks of a partly applied edit, placed in the buffer's `current`
/// text: `landed` holds one flag per hunk (see [`landed_hunks`]).
pub fn place_hunks(old: &str, hunks: &[Splice], landed: &[bool], current: &str, version: i32) -> PartialEdit {
    let mut out = PartialEdit { version, landed: Vec::new(), declined: Vec::new() };
    // How far the current text has moved from the old one so far.
    let mut shift: isize = 0;
    for (hunk, &applied) in hunks.iter().zip(landed) {
        let start = hunk.range.start.saturating_add_signed(shift);
        let old_text = &old[hunk.range.clone()];
        let len = if applied { hunk.text.len() } else { old_text.len() };
        let placed = HunkInBuffer { lines: LineSpan::of(current, start, start + len), old: old_text.to_string(), new: hunk.text.clone() };
        if applied {
            shift += hunk.text.len() as isize - old_text.len() as isize;
            out.landed.push(placed);
        } else {
            out.declined.push(placed);
        }
    }
    out
}

/// The lines of `new` (the text after `hunks` of `old`) that each hunk
/// changed, in order.
pub fn changed_lines(hunks: &[Splice], new: &str) -> Vec<LineSpan> {
    let mut shift: isize = 0;
    hunks
        .iter()
        .map(|hunk| {
            let start = hunk.range.start.saturating_add_signed(shift);
            shift += hunk.text.len() as isize - hunk.range.len() as isize;
            LineSpan::of(new, start, start + hunk.text.len())
        })
        .collect()
}

/// One edit of a run as an end message lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditSummaryItem {
    /// The file as the user sees it (relative to the workspace).
    pub display: String,
    pub status: EditStatus,
    /// The lines it changed (the landed hunks of a partial edit).
    pub ranges: Vec<LineSpan>,
    /// A partial edit's declined hunks.
    pub declined: Vec<LineSpan>,
    /// A file a shell command changed rather than an edit tool: whether it
    /// deleted it (`None`: an edit tool's change).
    pub by_command: Option<CommandEffect>,
}

impl EditSummaryItem {
    /// `effect` in the summary, its file shown as `display`.
    pub fn of_effect(effect: &FileEffect, display: String) -> Self {
        EditSummaryItem {
            display,
            status: effect.status,
            ranges: effect.ranges.clone(),
            declined: effect.declined.clone(),
            by_command: effect.by_command.as_ref().map(|_| if effect.deleted { CommandEffect::Deleted } else { CommandEffect::Written }),
        }
    }
}

/// What a shell command did to a file it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandEffect {
    Written,
    Deleted,
}

/// Files one command changed in one folder that are named one by one; more
/// are folded into the folder's name.
const MAX_FILES_UNFOLDED: usize = 3;

fn line_list(spans: &[LineSpan]) -> String {
    spans
        .iter()
        .map(|s| if s.start == s.end { s.start.to_string() } else { format!("{}-{}", s.start, s.end) })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A run's edits counted by status, and every changed range, as every
/// front end words them: "2 edits: 1 applied, 1 declined. Changed: a.txt
/// lines 3-4, 10. Not applied: b.txt (declined)." `None` for no edits.
pub fn edits_summary(edits: &[EditSummaryItem]) -> Option<String> {
    if edits.is_empty() {
        return None;
    }
    // `written` is `applied` to the user: the file has the change.
    let words = EditStatus::label;
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for status in EditStatus::ALL {
        let n = edits.iter().filter(|e| e.by_command.is_none() && words(e.status) == words(status)).count();
        if n > 0 && !counts.iter().any(|(w, _)| *w == words(status)) {
            counts.push((words(status), n));
        }
    }
    // Files shell commands changed are counted apart: no edit tool made them.
    let by_commands = edits.iter().filter(|e| e.by_command.is_some()).count();
    if by_commands > 0 {
        counts.push((if by_commands == 1 { "changed by a command" } else { "changed by commands" }, by_commands));
    }
    let counted = counts.iter().map(|(w, n)| format!("{n} {w}")).collect::<Vec<_>>().join(", ");
    let plural = if edits.len() == 1 { "" } else { "s" };
    let mut out = format!("{} edit{plural}: {counted}.", edits.len());
    // A command's byproducts (a folder of `__pycache__/*.pyc`, build
    // output) are folded: a folder holding more than a few files commands
    // changed is named once, with the count.
    let folder = |display: &str| display.rsplit_once('/').map(|(dir, _)| dir.to_string());
    let mut by_folder: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for e in edits.iter().filter(|e| e.by_command.is_some()) {
        if let Some(dir) = folder(&e.display) {
            *by_folder.entry(dir).or_default() += 1;
        }
    }
    let folded = |e: &EditSummaryItem| e.by_command.is_some() && folder(&e.display).is_some_and(|dir| by_folder.get(&dir).is_some_and(|n| *n > MAX_FILES_UNFOLDED));
    let mut folded_shown: Vec<String> = Vec::new();
    let changed: Vec<String> = edits
        .iter()
        .filter(|e| e.status.landed())
        .filter_map(|e| {
            if folded(e) {
                let dir = folder(&e.display).unwrap_or_default();
                if folded_shown.contains(&dir) {
                    return None;
                }
                let n = by_folder.get(&dir).copied().unwrap_or_default();
                folded_shown.push(dir.clone());
                return Some(format!("{dir}/ ({n} files)"));
            }
            Some(e)
                .map(|e| {
            let lines = line_list(&e.ranges);
            let mut place = match (lines.is_empty(), e.ranges.len() == 1 && e.ranges[0].start == e.ranges[0].end) {
                (true, _) => e.display.clone(),
                (false, true) => format!("{} line {lines}", e.display),
                (false, false) => format!("{} lines {lines}", e.display),
            };
            if e.status == EditStatus::Partial {
                let declined = line_list(&e.declined);
                place.push_str(&format!(" (partly applied; declined: {})", if declined.is_empty() { "the rest" } else { &declined }));
            }
            match e.by_command {
                Some(CommandEffect::Deleted) => place.push_str(" (deleted)"),
                Some(CommandEffect::Written) | None => {}
            }
            place
                })
        })
        .collect();
    if !changed.is_empty() {
        out.push_str(&format!(" Changed: {}.", changed.join("; ")));
    }
    let other: Vec<String> =
        edits.iter().filter(|e| !e.status.landed() && e.status != EditStatus::Unknown).map(|e| format!("{} ({})", e.display, words(e.status))).collect();
    if !other.is_empty() {
        out.push_str(&format!(" Not applied: {}.", other.join(", ")));
    }
    let unknown: Vec<&str> = edits.iter().filter(|e| e.status == EditStatus::Unknown).map(|e| e.display.as_str()).collect();
    if !unknown.is_empty() {
        out.push_str(&format!(" Unknown whether applied: {} (look at the file).", unknown.join(", ")));
    }
    Some(out)
}

/// Characters of a line a hunk's label quotes, at most.
const MAX_LABEL_QUOTE: usize = 60;

/// A line of a hunk quoted in its label: the first non-blank line of
/// `text`, trimmed, cut to [`MAX_LABEL_QUOTE`] characters, with control,
/// bidi and zero-width characters written as escapes (a label is one line
/// of an editor's list, and a right-to-left override in the file must not
/// reorder it).
fn label_quote(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let mut out = String::new();
    for (n, c) in line.chars().enumerate() {
        if n == MAX_LABEL_QUOTE {
            out.push('…');
            break;
        }
        let hidden = c.is_control() || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}');
        if hidden {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    format!("\"{out}\"")
}

/// Each of `hunks` (replacements of byte ranges of `old`, in order) in a
/// few words, for the entry a review lists it as (VS Code's Refactor
/// Preview shows it with the entry): where it is in `old`, the text the
/// editor shows while it is reviewed, and what it does there: `line 1:
/// "greet" → "welcome"`, `lines 3-4 replaced by 3 lines ("x = 1")`, `line 7
/// deleted ("pass")`, `2 lines added after line 4 ("y = 2")`. One pass over
/// `old` up to the last hunk. A hunk that does not fit `old` is named by its
/// byte range (never a panic).
pub fn hunk_labels(old: &str, hunks: &[Splice]) -> Vec<String> {
    let (mut line, mut counted) = (1, 0);
    hunks
        .iter()
        .map(|hunk| {
            let (Some(removed), Some(before)) = (old.get(hunk.range.clone()), old.get(counted.min(hunk.range.start)..hunk.range.start)) else {
                return format!("bytes {}-{}", hunk.range.start, hunk.range.end);
            };
            line += before.matches('\n').count();
            counted = hunk.range.start;
            let line_start = hunk.range.start == 0 || old[..hunk.range.start].ends_with(['\n', '\r']);
            // A change within a short line reads best as the whole line
            // before and after it.
            if let Some((head, tail)) = short_line_around(old, hunk.range.clone()).filter(|_| !removed.contains(['\n', '\r']) && !hunk.text.contains(['\n', '\r'])) {
                return format!("line {line}: {} → {}", label_quote(&format!("{head}{removed}{tail}")), label_quote(&format!("{head}{}{tail}", hunk.text)));
            }
            hunk_words(line, line_start, removed, &hunk.text)
        })
        .collect()
}

/// The rest of the line around `range` of `old` (before it, after it),
/// when that line is at most [`MAX_LABEL_QUOTE`] bytes long: looks no
/// further, so a hunk in a long line costs no more than a short one.
fn short_line_around(old: &str, range: std::ops::Range<usize>) -> Option<(&str, &str)> {
    let mut from = range.start.saturating_sub(MAX_LABEL_QUOTE);
    while !old.is_char_boundary(from) {
        from += 1;
    }
    let mut to = range.end.saturating_add(MAX_LABEL_QUOTE).min(old.len());
    while !old.is_char_boundary(to) {
        to -= 1;
    }
    let (before, after) = (old.get(from..range.start)?, old.get(range.end..to)?);
    let head = match before.rfind(['\n', '\r']) {
        Some(i) => &before[i + 1..],
        None if from == 0 => before,
        None => return None,
    };
    let tail = match after.find(['\n', '\r']) {
        Some(i) => &after[..i],
        None if to == old.len() => after,
        None => return None,
    };
    (head.len() + range.len() + tail.len() <= MAX_LABEL_QUOTE).then_some((head, tail))
}

/// [`hunk_labels`] of one hunk replacing `removed` with `added`, starting
/// on line `at` (at a line's start when `line_start`).
fn hunk_words(at: usize, line_start: bool, removed: &str, added: &str) -> String {
    let plural = |n: usize| if n == 1 { "line" } else { "lines" };
    if !removed.contains(['\n', '\r']) && !added.contains(['\n', '\r']) {
        return match (removed.is_empty(), added.is_empty()) {
            (true, _) => format!("line {at}: {} inserted", label_quote(added)),
            (_, true) => format!("line {at}: {} deleted", label_quote(removed)),
            _ => format!("line {at}: {} → {}", label_quote(removed), label_quote(added)),
        };
    }
    if removed.is_empty() {
        // Lines put in at a line's start ("b\n") or at the end of a last
        // line without its break ("\nb"): one line per break, and the
        // text after the last break is a line of its own at a line start.
        let breaks = added.matches('\n').count() + added.matches('\r').count() - added.matches("\r\n").count();
        let new = breaks + usize::from(line_start && !added.ends_with(['\n', '\r']));
        return match (line_start, at) {
            (true, 1) => format!("{new} {} added at the top ({})", plural(new), label_quote(added)),
            (true, _) => format!("{new} {} added after line {} ({})", plural(new), at - 1, label_quote(added)),
            (false, _) => format!("{new} {} added after line {at} ({})", plural(new), label_quote(added)),
        };
    }
    // The last byte of the range, not the one after it: lines that end
    // with their break end on their own line.
    let last = at + removed[..removed.len() - 1].matches('\n').count();
    let lines = LineSpan { start: at, end: last };
    if added.is_empty() {
        return format!("{lines} deleted ({})", label_quote(removed));
    }
    let new = added.lines().count();
    format!("{lines} replaced by {new} {} ({})", plural(new), label_quote(added))
}

/// Lines of a declined hunk's text quoted for the model, at most.
const MAX_QUOTED_LINES: usize = 12;

fn quote(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines.iter().take(MAX_QUOTED_LINES).map(|l| format!("    {l}")).collect();
    if lines.len() > MAX_QUOTED_LINES {
        out.push(format!("    ... ({} more lines)", lines.len() - MAX_QUOTED_LINES));
    }
    if out.is_empty() {
        out.push("    (nothing)".into());
    }
    out.join("\n")
}

impl PartialEdit {
    /// What the user is told of a restore (`did`: "undid", "redid") they
    /// took in part in the editor's review: "undid 1 of its 2 changes;
    /// kept line 3 as it was (declined in the review)".
    pub fn restore_words(&self, did: &str) -> String {
        let total = self.landed.len() + self.declined.len();
        let kept: Vec<LineSpan> = self.declined.iter().map(|h| h.lines).collect();
        let lines = match kept.as_slice() {
            [one] => one.to_string(),
            _ => format!("lines {}", line_list(&kept)),
        };
        let were = if matches!(kept.as_slice(), [one] if one.start == one.end) { "it was" } else { "they were" };
        format!("{did} {} of its {total} changes; kept {lines} as {were} (declined in the review)", self.landed.len())
    }

    /// What the model is told: which hunks landed, which were declined and
    /// where they are now, and that the file may be inconsistent.
    pub fn message(&self, display: &str) -> String {
        let total = self.landed.len() + self.declined.len();
        let mut out = format!(
            "Partly applied: the user accepted {} of the {total} hunks of the edit to {display} in the editor's review and declined the rest.",
            self.landed.len()
        );
        for (n, hunk) in self.landed.iter().enumerate() {
            out.push_str(&format!("\nApplied {}: now at {} of {display}.", n + 1, hunk.lines));
        }
        for (n, hunk) in self.declined.iter().enumerate() {
            out.push_str(&format!(
                "\nDeclined {} (at {} of {display}): kept\n{}\n  instead of\n{}",
                n + 1,
                hunk.lines,
                quote(&hunk.old),
                quote(&hunk.new)
            ));
        }
        out.push_str(&format!(
            "\nThe file may now be inconsistent (for example a rename made in one place and not the other). Do not redo the declined hunks unless the user asks; read {display} again and make sure what landed still fits."
        ));
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn splice(old: &str, from: &str, to: &str) -> Splice {
        let start = old.find(from).unwrap();
        Splice { range: start..start + from.len(), text: to.to_string() }
    }

    fn apply(old: &str, hunks: &[Splice], which: &[bool]) -> String {
        let mut out = old.to_string();
        for (hunk, _) in hunks.iter().zip(which).rev().filter(|(_, on)| **on) {
            out.replace_range(hunk.range.clone(), &hunk.text);
        }
        out
    }

    const APP: &str = "def greet(name):\n    return 'hi ' + name\n\n\nprint(greet('you'))\n";

    fn rename() -> Vec<Splice> {
        let call = APP.rfind("greet").unwrap();
        vec![splice(APP, "greet", "welcome"), Splice { range: call..call + 5, text: "welcome".into() }]
    }

    #[test]
    fn every_subset_of_hunks_is_told_apart() {
        let hunks = rename();
        for which in [[true, true], [true, false], [false, true], [false, false]] {
            let current = apply(APP, &hunks, &which);
            assert_eq!(landed_hunks(APP, &hunks, &current), Some(which.to_vec()), "{current}");
        }
    }

    #[test]
    fn a_user_edit_is_no_subset() {
        let hunks = rename();
        let current = apply(APP, &hunks, &[true, false]).replace("hi ", "hello ");
        assert_eq!(landed_hunks(APP, &hunks, &current), None);
    }

    #[test]
    fn a_hunk_whose_new_text_starts_like_its_old_one_backtracks() {
        // "ab" → "abab": "applied" matches a prefix of the declined text too.
        let old = "ab\nab\n";
        let hunks = vec![Splice { range: 0..2, text: "abab".into() }, Splice { range: 3..5, text: "x".into() }];
        for which in [[true, true], [true, false], [false, true], [false, false]] {
            let current = apply(old, &hunks, &which);
            assert_eq!(landed_hunks(old, &hunks, &current), Some(which.to_vec()), "{current:?}");
        }
    }

    #[test]
    fn the_model_is_told_what_landed_and_what_was_declined() {
        let hunks = rename();
        let current = apply(APP, &hunks, &[true, false]);
        let landed = landed_hunks(APP, &hunks, &current).unwrap();
        let partial = place_hunks(APP, &hunks, &landed, &current, 7);
        expect_test::expect![[r#"
            Partly applied: the user accepted 1 of the 2 hunks of the edit to app.py in the editor's review and declined the rest.
            Applied 1: now at line 1 of app.py.
            Declined 1 (at line 5 of app.py): kept
                greet
              instead of
                welcome
            The file may now be inconsistent (for example a rename made in one place and not the other). Do not redo the declined hunks unless the user asks; read app.py again and make sure what landed still fits."#]]
        .assert_eq(&partial.message("app.py"));
    }

    #[test]
    fn changed_lines_are_counted_in_the_new_text() {
        let old = "a\nb\nc\nd\n";
        let hunks = vec![splice(old, "a\n", "A\nA2\n"), splice(old, "d\n", "")];
        let new = apply(old, &hunks, &[true, true]);
        assert_eq!(changed_lines(&hunks, &new), vec![LineSpan { start: 1, end: 2 }, LineSpan { start: 5, end: 5 }]);
    }

    #[test]
    fn end_messages_count_edits_by_status_and_list_every_range() {
        let item = |display: &str, status, ranges: &[(usize, usize)], declined: &[(usize, usize)]| EditSummaryItem {
            by_command: None,
            display: display.into(),
            status,
            ranges: ranges.iter().map(|&(start, end)| LineSpan { start, end }).collect(),
            declined: declined.iter().map(|&(start, end)| LineSpan { start, end }).collect(),
        };
        let edits = [
            item("a.txt", EditStatus::Applied, &[(3, 4), (10, 10)], &[]),
            item("app.py", EditStatus::Partial, &[(1, 1)], &[(5, 5)]),
            item("new.txt", EditStatus::Written, &[(1, 2)], &[]),
            item("b.txt", EditStatus::Rejected, &[], &[]),
        ];
        expect_test::expect!["4 edits: 2 applied, 1 partly applied, 1 declined. Changed: a.txt lines 3-4, 10; app.py line 1 (partly applied; declined: 5); new.txt lines 1-2. Not applied: b.txt (declined)."]
            .assert_eq(&edits_summary(&edits).unwrap());
        let by_command = |display: &str, effect| EditSummaryItem { by_command: Some(effect), ..item(display, EditStatus::Written, &[], &[]) };
        let edits = [item("a.txt", EditStatus::Applied, &[(1, 1)], &[]), by_command("out.txt", CommandEffect::Written), by_command("old.log", CommandEffect::Deleted)];
        expect_test::expect!["3 edits: 1 applied, 2 changed by commands. Changed: a.txt line 1; out.txt; old.log (deleted)."]
            .assert_eq(&edits_summary(&edits).unwrap());
        // A folder of byproducts is named once.
        let pyc = ["a", "b", "c", "d"].map(|name| by_command(&format!("src/__pycache__/{name}.pyc"), CommandEffect::Written));
        let edits: Vec<EditSummaryItem> = [item("src/a.py", EditStatus::Partial, &[(1, 1)], &[(4, 4)]), item("b.txt", EditStatus::Unknown, &[], &[])].into_iter().chain(pyc).collect();
        expect_test::expect!["6 edits: 1 partly applied, 1 unknown, 4 changed by commands. Changed: src/a.py line 1 (partly applied; declined: 4); src/__pycache__/ (4 files). Unknown whether applied: b.txt (look at the file)."]
            .assert_eq(&edits_summary(&edits).unwrap());
        assert_eq!(edits_summary(&[]), None);
    }

    #[test]
    fn status_strings_are_distinct() {
        let names: std::collections::HashSet<&str> = EditStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names.len(), EditStatus::ALL.len());
    }

    #[test]
    fn each_hunk_is_named_by_its_lines_and_what_it_does_there() {
        let words = |old: &str, new: &str| {
            hunk_labels(old, &crate::workspace::replacements(old, new)).join("\n")
        };
        // A within-line change, at both ends of the file: two hunks.
        expect_test::expect![[r#"
            line 1: "def greet(name):" → "def welcome(name):"
            line 5: "print(greet('you'))" → "print(welcome('you'))""#]]
        .assert_eq(&words(APP, &APP.replace("greet", "welcome")));
        expect_test::expect![[r#"
            1 line added at the top ("top")
            lines 2-3 replaced by 1 line ("b = 2")
            line 5 deleted ("e")
            2 lines added after line 6 ("g")"#]]
        .assert_eq(&{
            let old = "a\nb\nc\nd\ne\nf\n";
            let mut hunks = crate::workspace::replacements(old, "a\nb = 2\nd\nf\ng\nh\n");
            hunks.insert(0, Splice { range: 0..0, text: "top\n".into() });
            hunk_labels(old, &hunks).join("\n")
        });
        // A line added at the end of a last line without its break, CRLF, a
        // long line cut, hidden characters shown, a hunk that does not fit.
        expect_test::expect![[r#"line 1 replaced by 2 lines ("a")"#]].assert_eq(&words("a", "a\nb"));
        expect_test::expect![[r#"1 line added after line 1 ("b")"#]].assert_eq(&hunk_labels("a", &[Splice { range: 1..1, text: "\nb".into() }]).join(""));
        expect_test::expect![[r#"line 2: "y = 1" → "y = 2""#]].assert_eq(&words("x\r\ny = 1\r\n", "x\r\ny = 2\r\n"));
        // In a long line, only what changes, cut.
        let long = "x".repeat(70);
        expect_test::expect![[r#"line 1: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" deleted"#]].assert_eq(&words(&format!("{long}!"), "!"));
        expect_test::expect![[r#"line 1: "é" → "e""#]].assert_eq(&words(&format!("{long}é{long}"), &format!("{long}e{long}")));
        expect_test::expect![[r#"line 1: "(é)" → "(a\u{202e}b)""#]].assert_eq(&words("(é)", "(a\u{202e}b)"));
        assert_eq!(hunk_labels("ab", &[Splice { range: 1..9, text: String::new() }]), ["bytes 1-9"]);
    }
}
