//! Three-way merge by lines, for changes made at once to one text: an
//! undo taking a run's lines back around the user's later changes
//! (`checkpoint::restore`), and an agent edit rebased onto a buffer the user
//! typed into while the edit waited for its review ([`super::Workspace::write`]).
//!
//! Both sides are diffed against their common base by lines; the result
//! takes each side's changes where they are apart. Changes to the same
//! lines, or to lines right beside each other, are a conflict: no guess
//! at what either side meant there.

/// Three-way merge by lines: `base` is what both sides started from,
/// `ours` and `theirs` each side's text (for an undo: what the run left,
/// the text now, the text to go back to; for a rebased edit: the text the
/// agent read, the buffer now, the agent's new text). `None` when the two
/// sides changed the same or adjacent lines.
pub fn merge3(base: &str, ours: &str, theirs: &str) -> Option<String> {
    let (merged, _, left_out) = merge3_keeping_ours(base, ours, theirs);
    (left_out == 0).then_some(merged)
}

/// [`merge3`], keeping `ours` where the sides meet: each of `theirs`'
/// changes that touches (or is beside) a change of `ours` is left out.
/// Returns the text, how many of `theirs`' changes went in and how many
/// were left out. For an undo asked hunk by hunk: the run's changes the
/// user has not touched since are taken back, the others are kept.
pub fn merge3_keeping_ours(base: &str, ours: &str, theirs: &str) -> (String, usize, usize) {
    let base_lines: Vec<&str> = base.split_inclusive('\n').collect();
    let ours_hunks = hunks(&base_lines, ours);
    let theirs_hunks = hunks(&base_lines, theirs);
    let (mut taken, mut left_out) = (0, 0);
    let mut all: Vec<&Hunk> = Vec::with_capacity(ours_hunks.len() + theirs_hunks.len());
    for hunk in &theirs_hunks {
        if ours_hunks.contains(hunk) {
            taken += 1;
            continue; // the same change on both sides: once.
        }
        if ours_hunks.iter().any(|ours| ours.start <= hunk.end && hunk.start <= ours.end) {
            left_out += 1;
            continue;
        }
        taken += 1;
        all.push(hunk);
    }
    all.extend(ours_hunks.iter());
    all.sort_by_key(|h| (h.start, h.end));
    let mut out = String::with_capacity(ours.len().max(theirs.len()));
    let mut at = 0;
    for hunk in all {
        for line in &base_lines[at..hunk.start] {
            out.push_str(line);
        }
        for line in &hunk.lines {
            out.push_str(line);
        }
        at = hunk.end;
    }
    for line in &base_lines[at..] {
        out.push_str(line);
    }
    (out, taken, left_out)
}

/// `now` holds the change from `base` to `changed`, with other changes
/// around it: the lines `changed` has that `base` has not are all in `now`,
/// none of them touched (lines added right before or after them are
/// fine). An editor that applied an edit and let the user type before it
/// reported the change gives such a text.
pub fn holds_change(base: &str, changed: &str, now: &str) -> bool {
    let changed_lines: Vec<&str> = changed.split_inclusive('\n').collect();
    // The lines of `changed` the change made (ranges in `changed`).
    let base_lines: Vec<&str> = base.split_inclusive('\n').collect();
    // Bounded like every diff: past the deadline the rest of the middle
    // counts as made, which may refuse typing that was apart (never accept
    // typing into the change).
    let made: Vec<std::ops::Range<usize>> = crate::diff::slices(&base_lines, &changed_lines)
        .into_iter()
        .filter(|op| !matches!(op, crate::diff::DiffOp::Equal { .. }))
        .map(|op| op.new_range())
        .collect();
    // What else `now` changed, against `changed`, must stay clear of them.
    hunks(&changed_lines, now).iter().all(|other| {
        made.iter().all(|ours| {
            let inserted_at_edge = other.start == other.end && (other.start <= ours.start || other.start >= ours.end);
            inserted_at_edge || other.end <= ours.start || other.start >= ours.end
        })
    })
}

/// A change of `base[start..end]` into `lines`.
#[derive(Debug, PartialEq, Eq)]
struct Hunk<'a> {
    start: usize,
    end: usize,
    lines: Vec<&'a str>,
}

fn hunks<'a>(base: &[&str], other: &'a str) -> Vec<Hunk<'a>> {
    let other_lines: Vec<&str> = other.split_inclusive('\n').collect();
    // Bounded like every diff: past the deadline the rest is one hunk, which
    // may make a conflict of changes that were apart (never a wrong merge).
    let ops = crate::diff::slices(base, &other_lines);
    let mut out: Vec<Hunk<'a>> = Vec::new();
    for op in ops {
        if matches!(op, crate::diff::DiffOp::Equal { .. }) {
            continue;
        }
        let (old, new) = (op.old_range(), op.new_range());
        match out.last_mut() {
            Some(last) if last.end == old.start => {
                last.end = old.end;
                last.lines.extend(&other_lines[new]);
            }
            _ => out.push(Hunk { start: old.start, end: old.end, lines: other_lines[new].to_vec() }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::merge3;

    #[test]
    fn changes_apart_are_merged_and_changes_together_are_a_conflict() {
        // An undo: base = what the run left, ours = now, theirs = before the run.
        assert_eq!(merge3("1\nR\n3\n", "1\nR\n3\nU\n", "1\n2\n3\n").as_deref(), Some("1\n2\n3\nU\n"));
        assert_eq!(merge3("U0\n1\nR\n3\n", "1\nR\n3\n", "U0\n1\n2\n3\n").as_deref(), Some("1\n2\n3\n"));
        assert_eq!(merge3("1\nR\n3\n", "1\nU\n3\n", "1\n2\n3\n"), None, "the same line");
        assert_eq!(merge3("1\nR\n3\n", "1\nR\nU\n3\n", "1\n2\n3\n"), None, "right beside the run's line");
        assert_eq!(merge3("1\nR\n", "1\nR\n", "1\n2\n").as_deref(), Some("1\n2\n"));
        assert_eq!(merge3("a\nb\nc", "a\nb\nc!", "A\nb\nc").as_deref(), Some("A\nb\nc!"), "no newline at the end");
        // A rebased edit: the user typed a line at the top while the edit of
        // line 3 waited; the whole buffer deleted is a conflict.
        assert_eq!(merge3("a\nb\nc\nd\n", "top\na\nb\nc\nd\n", "a\nb\nC\nd\n").as_deref(), Some("top\na\nb\nC\nd\n"));
        assert_eq!(merge3("a\nb\nc\nd\n", "", "a\nb\nC\nd\n"), None);
    }

    #[test]
    fn a_text_holds_a_change_with_other_lines_changed_around_it() {
        use super::holds_change;
        let (base, changed) = ("a\nb\nc\n", "a\nB\nc\n");
        assert!(holds_change(base, changed, changed));
        assert!(holds_change(base, changed, "a\nB\nc\ntyped after\n"), "a line added after it");
        assert!(holds_change(base, changed, "a\nB\ntyped right after\nc\n"), "a line added right beside it");
        assert!(holds_change(base, changed, "typed\na\nB\nc!\n"));
        assert!(!holds_change(base, changed, base), "not applied");
        assert!(!holds_change(base, changed, "a\nb\nc\ntyped after\n"), "not applied, typed elsewhere");
        assert!(!holds_change(base, changed, "a\nBx\nc\n"), "typed into the changed line");
        assert!(!holds_change(base, changed, ""), "deleted");
    }
}
