//! Every diff Tandem computes goes through here (the review's hunks, the
//! editor's replacements, the freshness refusal's "lines 3-4 changed",
//! checkpoints' previews, merges, edit_file's restyling): its cost follows
//! the change, not the text.
//!
//! Myers' algorithm costs O((N+M)·D), where D is the size of the change: a
//! whole-file rewrite of a 12 MB file (120,000 changed lines) is about
//! 10¹⁰ steps, a minute and a half of CPU. So a diff here first trims the
//! common prefix and suffix (one linear pass), then runs Myers on the middle
//! only, with a [`DEADLINE`]; once it passes, each part of the middle not
//! yet split is replaced whole, by lines (for a line diff) — a coarser
//! script, still exact: applying it gives the new text. A rewrite of a file
//! of any size costs the deadline plus linear time.
//!
//! CPU-heavy callers run these off the async runtime (see
//! [`off_runtime`]), so the server keeps answering while a diff runs.

use std::time::{Duration, Instant};

pub use similar::DiffOp;

/// How long one diff may search for the smallest script before it falls
/// back to replacing what is left whole. Small and scattered changes finish
/// far below it (a 10,000-line file with 100 changed places takes a few
/// milliseconds); only a change of most of a large text reaches it.
pub const DEADLINE: Duration = Duration::from_millis(200);

/// The ops that turn `old` into `new`, in order, covering both slices
/// (indices into the whole slices): the common prefix and suffix as
/// `Equal`, the middle diffed with Myers within [`DEADLINE`].
pub fn slices<T: Eq + Ord + std::hash::Hash>(old: &[T], new: &[T]) -> Vec<DiffOp> {
    slices_within(old, new, DEADLINE)
}

/// [`slices`] with another budget (tests use zero to see the fallback).
pub fn slices_within<T: Eq + Ord + std::hash::Hash>(old: &[T], new: &[T], budget: Duration) -> Vec<DiffOp> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let old_mid = &old[prefix..old.len() - suffix];
    let new_mid = &new[prefix..new.len() - suffix];
    let mut ops = Vec::new();
    if prefix > 0 {
        ops.push(DiffOp::Equal { old_index: 0, new_index: 0, len: prefix });
    }
    match (old_mid.is_empty(), new_mid.is_empty()) {
        (true, true) => {}
        (false, true) => ops.push(DiffOp::Delete { old_index: prefix, old_len: old_mid.len(), new_index: prefix }),
        (true, false) => ops.push(DiffOp::Insert { old_index: prefix, new_index: prefix, new_len: new_mid.len() }),
        (false, false) if budget.is_zero() => {
            ops.push(DiffOp::Replace { old_index: prefix, old_len: old_mid.len(), new_index: prefix, new_len: new_mid.len() });
        }
        (false, false) => {
            let deadline = Instant::now().checked_add(budget).unwrap_or_else(Instant::now);
            let middle = similar::capture_diff_slices_deadline(similar::Algorithm::Myers, old_mid, new_mid, Some(deadline));
            // Placed by our own cursors: the index `similar` gives for the
            // side an op does not touch is not always where it is (a
            // deletion may name a neighbouring new index).
            let (mut at_old, mut at_new) = (prefix, prefix);
            for op in middle {
                let (old_len, new_len) = (op.old_range().len(), op.new_range().len());
                ops.push(match op {
                    DiffOp::Equal { len, .. } => DiffOp::Equal { old_index: at_old, new_index: at_new, len },
                    DiffOp::Delete { .. } => DiffOp::Delete { old_index: at_old, old_len, new_index: at_new },
                    DiffOp::Insert { .. } => DiffOp::Insert { old_index: at_old, new_index: at_new, new_len },
                    DiffOp::Replace { .. } => DiffOp::Replace { old_index: at_old, old_len, new_index: at_new, new_len },
                });
                at_old += old_len;
                at_new += new_len;
            }
        }
    }
    if suffix > 0 {
        ops.push(DiffOp::Equal { old_index: old.len() - suffix, new_index: new.len() - suffix, len: suffix });
    }
    ops
}

/// The lines of a text, each with its line break (`\n`, `\r\n` or a lone
/// `\r`, as `similar` splits them); a last line without one too.
pub fn split_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(memchr::memchr_iter(b'\n', bytes).count() + 1);
    let mut start = 0;
    let mut at = 0;
    while let Some(found) = memchr::memchr2(b'\n', b'\r', &bytes[at..]) {
        let mut end = at + found + 1;
        if bytes[end - 1] == b'\r' && bytes.get(end) == Some(&b'\n') {
            end += 1;
        }
        lines.push(&text[start..end]);
        start = end;
        at = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// A line diff of two texts: their lines and the ops between them.
#[derive(Debug)]
pub struct LineDiff<'a> {
    pub old: Vec<&'a str>,
    pub new: Vec<&'a str>,
    pub ops: Vec<DiffOp>,
}

/// The line diff of `old` and `new` (see [`slices`]).
pub fn lines<'a>(old: &'a str, new: &'a str) -> LineDiff<'a> {
    let (old, new) = (split_lines(old), split_lines(new));
    let ops = slices(&old, &new);
    LineDiff { old, new, ops }
}

/// One line of a rendered diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row<'a> {
    /// Unchanged: its index in the old and the new text.
    Same(usize, usize, &'a str),
    /// Only in the old text, at this index.
    Removed(usize, &'a str),
    /// Only in the new text, at this index.
    Added(usize, &'a str),
}

impl<'a> LineDiff<'a> {
    /// The rows of the ops, removals before additions within a replacement.
    pub fn rows(&self, ops: &[DiffOp]) -> Vec<Row<'a>> {
        let mut rows = Vec::new();
        for op in ops {
            let (old, new) = (op.old_range(), op.new_range());
            if let DiffOp::Equal { .. } = op {
                rows.extend(old.zip(new).map(|(o, n)| Row::Same(o, n, self.old[o])));
                continue;
            }
            rows.extend(old.map(|o| Row::Removed(o, self.old[o])));
            rows.extend(new.map(|n| Row::Added(n, self.new[n])));
        }
        rows
    }

    /// The changes, each with up to `context` unchanged lines around it;
    /// groups closer than twice that are one.
    pub fn groups(&self, context: usize) -> Vec<Vec<DiffOp>> {
        similar::group_diff_ops(self.ops.clone(), context)
    }
}

/// A unified diff (`@@ -a,b +c,d @@` hunks, `context` lines around each
/// change), for previews.
pub fn unified(old: &str, new: &str, context: usize) -> String {
    let diff = lines(old, new);
    let mut out = String::new();
    for group in diff.groups(context) {
        let rows = diff.rows(&group);
        let old_start = rows.iter().find_map(|r| match r {
            Row::Same(o, _, _) | Row::Removed(o, _) => Some(*o),
            Row::Added(..) => None,
        });
        let new_start = rows.iter().find_map(|r| match r {
            Row::Same(_, n, _) | Row::Added(n, _) => Some(*n),
            Row::Removed(..) => None,
        });
        let old_len = rows.iter().filter(|r| !matches!(r, Row::Added(..))).count();
        let new_len = rows.iter().filter(|r| !matches!(r, Row::Removed(..))).count();
        // An empty side names the line before it, as diff(1) does.
        let start = |at: Option<usize>, len: usize, fallback: usize| if len == 0 { fallback } else { at.map_or(0, |a| a + 1) };
        let fallback_old = group.first().map_or(0, |op| op.old_range().start);
        let fallback_new = group.first().map_or(0, |op| op.new_range().start);
        out.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            start(old_start, old_len, fallback_old),
            start(new_start, new_len, fallback_new)
        ));
        for row in rows {
            let (sign, text) = match row {
                Row::Same(_, _, t) => (' ', t),
                Row::Removed(_, t) => ('-', t),
                Row::Added(_, t) => ('+', t),
            };
            out.push(sign);
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// Run CPU-heavy work (a diff, hashing a large text) off the async
/// runtime's worker threads, so the tasks that answer the editor keep
/// running meanwhile; inline where there is no multi-thread runtime to
/// protect (a current-thread runtime, as `tandem tool` uses, would only
/// pay for the hand-over).
pub async fn off_runtime<R: Send + 'static>(work: impl FnOnce() -> R + Send + 'static) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() != RuntimeFlavor::CurrentThread => {
            match handle.spawn_blocking(work).await {
                Ok(done) => done,
                Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
                // Cancelled: the runtime is shutting down, and this task with it.
                Err(_) => std::future::pending().await,
            }
        }
        _ => work(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Apply ops to `old`, checking they cover both sides in order and that
    /// `Equal` runs really are equal; returns the new slice and the number
    /// of unchanged items.
    fn apply<'a>(old: &[&'a str], new: &[&'a str], ops: &[DiffOp]) -> (Vec<&'a str>, usize) {
        let (mut at_old, mut at_new, mut same) = (0, 0, 0);
        let mut out = Vec::new();
        for op in ops {
            assert_eq!(op.old_range().start, at_old, "{ops:?}");
            assert_eq!(op.new_range().start, at_new, "{ops:?}");
            if let DiffOp::Equal { .. } = op {
                assert_eq!(&old[op.old_range()], &new[op.new_range()], "{ops:?}");
                out.extend(&old[op.old_range()]);
                same += op.old_range().len();
            } else {
                out.extend(&new[op.new_range()]);
            }
            at_old = op.old_range().end;
            at_new = op.new_range().end;
        }
        assert_eq!((at_old, at_new), (old.len(), new.len()), "{ops:?}");
        (out, same)
    }

    fn text() -> impl Strategy<Value = String> {
        // Few distinct lines, so texts share many: the diff has work to do.
        proptest::collection::vec(prop_oneof!["a\n", "b\n", "c\r\n", "d", "\r", "\n", "é\n"], 0..40)
            .prop_map(|lines| lines.concat())
    }

    proptest! {
        /// The trimmed diff is as small as the plain Myers diff of the whole
        /// texts (trimming a common prefix or suffix never costs a line of
        /// the longest common subsequence), and applying it gives the new text.
        #[test]
        fn the_trimmed_diff_is_exact_and_as_small_as_the_plain_one(old in text(), new in text()) {
            let diff = lines(&old, &new);
            let (out, same) = apply(&diff.old, &diff.new, &diff.ops);
            prop_assert_eq!(out.concat(), new.clone());
            let plain = similar::capture_diff_slices(similar::Algorithm::Myers, &diff.old, &diff.new);
            let plain_same: usize = plain.iter().filter(|op| matches!(op, DiffOp::Equal { .. })).map(|op| op.old_range().len()).sum();
            prop_assert_eq!(same, plain_same);
        }

        /// Past the deadline the middle is replaced whole, by lines: still
        /// exact, and the common prefix and suffix stay unchanged.
        #[test]
        fn past_the_deadline_the_middle_is_replaced_whole(old in text(), new in text()) {
            let (old_lines, new_lines) = (split_lines(&old), split_lines(&new));
            let ops = slices_within(&old_lines, &new_lines, Duration::ZERO);
            let (out, same) = apply(&old_lines, &new_lines, &ops);
            prop_assert_eq!(out.concat(), new.clone());
            let prefix = old_lines.iter().zip(&new_lines).take_while(|(a, b)| a == b).count();
            prop_assert!(same >= prefix.min(old_lines.len()));
            prop_assert!(ops.iter().filter(|op| !matches!(op, DiffOp::Equal { .. })).count() <= 1, "{:?}", ops);
        }

        #[test]
        fn lines_split_as_similar_splits_them(text in text()) {
            let ours = split_lines(&text);
            let theirs = similar::TextDiff::from_lines(text.as_str(), "").old_slices().to_vec();
            prop_assert_eq!(ours, theirs);
        }
    }

    /// Every line of a large text changed: the diff ends, replacing the
    /// rest whole once the deadline passes, and stays exact.
    #[test]
    fn a_rewrite_of_every_line_of_a_large_text_is_exact() {
        let old: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..50_000).map(|i| format!("LINE {i}\n")).collect();
        let diff = lines(&old, &new);
        let (out, same) = apply(&diff.old, &diff.new, &diff.ops);
        assert_eq!(out.concat(), new);
        assert_eq!(same, 0);
    }

    #[test]
    fn a_unified_diff_names_its_lines() {
        let old = "a\nb\nc\nd\ne\nf\ng\n";
        let new = "a\nb\nC\nd\ne\nf\ng\nh";
        expect_test::expect![[r#"
            @@ -2,3 +2,3 @@
             b
            -c
            +C
             d
            @@ -7,1 +7,2 @@
             g
            +h
            \ No newline at end of file
        "#]]
        .assert_eq(&unified(old, new, 1));
    }
}
