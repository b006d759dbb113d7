//! The three-way line merge of one file: what a worktree run changed
//! (start → run) laid over what the user has now (start → yours). A run's
//! hunk lands when the user left its lines (and the lines it inserts
//! between) as they were at the start; a hunk that meets a change of the
//! user's is a conflict, reported with both sides and never applied.

use crate::diff::{self, DiffOp};
use std::ops::Range;

/// What became of one of the run's hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkStatus {
    /// Applied to the user's text.
    Landed,
    /// The user changed the same lines since the run started: not applied.
    /// `yours` is the user's text there now, `run` the run's.
    Conflict { yours: String, run: String },
}

/// One hunk of the run's change to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The lines it replaces in the start text, 0-based, end exclusive
    /// (empty for an insertion before `start`).
    pub start_lines: Range<usize>,
    /// The lines the run put there.
    pub run_text: String,
    pub status: HunkStatus,
}

/// A file merged: the user's text with every landing hunk applied, and
/// what became of each hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub text: String,
    pub hunks: Vec<Hunk>,
}

/// The changed base ranges of a diff with the new lines each one became.
fn changes(ops: &[DiffOp]) -> Vec<(Range<usize>, Range<usize>)> {
    let mut out: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    for op in ops {
        if let DiffOp::Equal { .. } = op {
            continue;
        }
        let (old, new) = (op.old_range(), op.new_range());
        match out.last_mut() {
            // Adjacent non-equal ops (a delete next to an insert) are one hunk.
            Some((o, n)) if o.end == old.start && n.end == new.start => {
                o.end = old.end;
                n.end = new.end;
            }
            _ => out.push((old, new)),
        }
    }
    out
}

/// Whether two changed base ranges meet: they share a line, or one is an
/// insertion at or inside the other's edges. Two replacements that only
/// touch (one ends where the other starts) do not meet.
fn meet(a: &Range<usize>, b: &Range<usize>) -> bool {
    if a.is_empty() || b.is_empty() {
        a.start <= b.end && b.start <= a.end
    } else {
        a.start < b.end && b.start < a.end
    }
}

/// Where start line `at` is in the user's text, when the user left it (or,
/// at the very end, the end) where it was.
fn map_line(ours_ops: &[DiffOp], at: usize, base_len: usize, ours_len: usize) -> Option<usize> {
    if at == base_len {
        return Some(ours_len);
    }
    ours_ops.iter().find_map(|op| match op {
        DiffOp::Equal { old_index, new_index, len } if *old_index <= at && at < old_index + len => Some(new_index + (at - old_index)),
        _ => None,
    })
}

/// Merge `run` (the run's text of a file that was `base` when it started)
/// into `yours` (the user's text now).
pub fn merge3(base: &str, yours: &str, run: &str) -> Merged {
    let base_lines = diff::split_lines(base);
    let your_lines = diff::split_lines(yours);
    let run_lines = diff::split_lines(run);
    let ours_ops = diff::slices(&base_lines, &your_lines);
    let theirs_ops = diff::slices(&base_lines, &run_lines);
    let ours = changes(&ours_ops);
    let mut hunks = Vec::new();
    // Replacements in the user's lines, applied back to front below.
    let mut splices: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    for (base_range, run_range) in changes(&theirs_ops) {
        let run_text: String = run_lines[run_range.clone()].concat();
        let met: Vec<&(Range<usize>, Range<usize>)> = ours.iter().filter(|(o, _)| meet(o, &base_range)).collect();
        let mapped = map_line(&ours_ops, base_range.start, base_lines.len(), your_lines.len());
        let status = match (met.first(), met.last(), mapped) {
            (None, None, Some(at)) => {
                splices.push((at..at + base_range.len(), run_range.clone()));
                HunkStatus::Landed
            }
            (Some(first), Some(last), _) => {
                // The user's side: from the first change that meets the hunk
                // to the last, with the unchanged lines of the hunk's own
                // range around them.
                let lo = base_range.start.min(first.0.start);
                let hi = base_range.end.max(last.0.end);
                let from = map_line(&ours_ops, lo, base_lines.len(), your_lines.len()).unwrap_or(first.1.start).min(first.1.start);
                let to = if hi >= base_lines.len() {
                    your_lines.len()
                } else {
                    map_line(&ours_ops, hi, base_lines.len(), your_lines.len()).unwrap_or(last.1.end).max(last.1.end)
                };
                HunkStatus::Conflict { yours: your_lines[from..to.max(from)].concat(), run: run_text.clone() }
            }
            // Not met, yet its place is gone: cannot happen with `meet`'s
            // rule, but a conflict is the safe answer.
            _ => HunkStatus::Conflict { yours: String::new(), run: run_text.clone() },
        };
        hunks.push(Hunk { start_lines: base_range, run_text, status });
    }
    let mut lines: Vec<&str> = your_lines.clone();
    for (ours_range, run_range) in splices.into_iter().rev() {
        lines.splice(ours_range, run_lines[run_range].iter().copied());
    }
    Merged { text: lines.concat(), hunks }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn far_apart_changes_both_stay() {
        let base = "a\nb\nc\nd\ne\nf\n";
        let yours = "A\nb\nc\nd\ne\nf\n";
        let run = "a\nb\nc\nd\ne\nF\n";
        let m = merge3(base, yours, run);
        assert_eq!(m.text, "A\nb\nc\nd\ne\nF\n");
        assert_eq!(m.hunks.len(), 1);
        assert_eq!(m.hunks[0].status, HunkStatus::Landed);
    }

    #[test]
    fn same_line_is_a_conflict_and_yours_is_kept() {
        let base = "a\nb\nc\n";
        let yours = "a\nB typed\nc\n";
        let run = "a\nb run\nc\n";
        let m = merge3(base, yours, run);
        assert_eq!(m.text, yours);
        assert_eq!(m.hunks[0].status, HunkStatus::Conflict { yours: "B typed\n".into(), run: "b run\n".into() });
    }

    #[test]
    fn user_insertions_shift_the_run_hunk() {
        let base = "1\n2\n3\n4\n5\n";
        let yours = "0\n0\n1\n2\n3\n4\n5\n";
        let run = "1\n2\n3\nfour\n5\nsix\n";
        let m = merge3(base, yours, run);
        assert_eq!(m.text, "0\n0\n1\n2\n3\nfour\n5\nsix\n");
        assert!(m.hunks.iter().all(|h| h.status == HunkStatus::Landed));
    }

    #[test]
    fn insertion_at_the_users_insertion_point_conflicts() {
        let base = "a\nb\n";
        let yours = "a\nmine\nb\n";
        let run = "a\ntheirs\nb\n";
        let m = merge3(base, yours, run);
        assert_eq!(m.text, yours);
        assert!(matches!(m.hunks[0].status, HunkStatus::Conflict { .. }));
    }

    #[test]
    fn one_landed_one_conflicted() {
        let base = "a\nb\nc\nd\ne\n";
        let yours = "a\nB\nc\nd\ne\n";
        let run = "a\nbb\nc\nd\nee\n";
        let m = merge3(base, yours, run);
        assert_eq!(m.text, "a\nB\nc\nd\nee\n");
        assert!(matches!(m.hunks[0].status, HunkStatus::Conflict { .. }));
        assert_eq!(m.hunks[1].status, HunkStatus::Landed);
    }
}
