//! The replacements that turn one text into another: only the changed
//! ranges, never the whole text. The editor sink sends them as the
//! `TextEdit`s of an edit (the user's cursor, folds and undo history
//! survive a small edit), and they are the hunks a review shows and the
//! lines a run reports as changed.

use crate::diff::{self, DiffOp};

use super::overlay::Splice;

/// The replacements that turn `old` into `new`, in order, non-overlapping:
/// a line diff of the region between the common prefix and suffix (bounded:
/// [`diff::lines`]), each hunk then trimmed to the characters that really
/// differ. Linear in the texts' size plus the diff's deadline: run it off
/// the async runtime for large texts ([`diff::off_runtime`]).
pub fn replacements(old: &str, new: &str) -> Vec<Splice> {
    if old == new {
        return Vec::new();
    }
    let (prefix, suffix) = common_affixes(old, new);
    let old_mid = &old[prefix..old.len() - suffix];
    let new_mid = &new[prefix..new.len() - suffix];
    let diff = diff::lines(old_mid, new_mid);
    let old_offsets = offsets(&diff.old);
    let new_offsets = offsets(&diff.new);
    let mut hunks: Vec<(usize, usize, usize, usize)> = Vec::new();
    // Walk the ops with our own cursors: the `old_index` similar reports
    // for an insertion is not always where it goes (seen with CR lines).
    let (mut old_at, mut new_at) = (0, 0);
    for op in &diff.ops {
        let (old_len, new_len, equal) = match *op {
            DiffOp::Equal { len, .. } => (len, len, true),
            DiffOp::Delete { old_len, .. } => (old_len, 0, false),
            DiffOp::Insert { new_len, .. } => (0, new_len, false),
            DiffOp::Replace { old_len, new_len, .. } => (old_len, new_len, false),
        };
        let (old_range, new_range) = (old_at..old_at + old_len, new_at..new_at + new_len);
        old_at += old_len;
        new_at += new_len;
        if equal {
            continue;
        }
        let at = |offsets: &[usize], i: usize| offsets.get(i).or(offsets.last()).copied().unwrap_or(0);
        let hunk = (
            at(&old_offsets, old_range.start),
            at(&old_offsets, old_range.end),
            at(&new_offsets, new_range.start),
            at(&new_offsets, new_range.end),
        );
        // Adjacent ops (a delete then an insert) make one replacement.
        match hunks.last_mut() {
            Some(last) if last.1 == hunk.0 && last.3 == hunk.2 => {
                last.1 = hunk.1;
                last.3 = hunk.3;
            }
            _ => hunks.push(hunk),
        }
    }
    hunks
        .into_iter()
        .filter_map(|(old_start, old_end, new_start, new_end)| {
            let old_hunk = &old_mid[old_start..old_end];
            let new_hunk = &new_mid[new_start..new_end];
            let (p, s) = common_affixes(old_hunk, new_hunk);
            let splice = Splice {
                range: prefix + old_start + p..prefix + old_end - s,
                text: new_hunk[p..new_hunk.len() - s].to_string(),
            };
            (!splice.range.is_empty() || !splice.text.is_empty()).then_some(splice)
        })
        .collect()
}

/// Byte offsets of token boundaries: `[0, len(t0), len(t0)+len(t1), …]`.
fn offsets(tokens: &[&str]) -> Vec<usize> {
    let mut out = Vec::with_capacity(tokens.len() + 1);
    let mut at = 0;
    out.push(0);
    for token in tokens {
        at += token.len();
        out.push(at);
    }
    out
}

/// The byte lengths of the longest common prefix and suffix (not
/// overlapping), on char boundaries, and never splitting a `\r\n` pair: no
/// LSP position names the point between `\r` and `\n`.
fn common_affixes(a: &str, b: &str) -> (usize, usize) {
    let mut prefix = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).map(|(x, _)| x.len_utf8()).sum::<usize>();
    if prefix > 0 && a.as_bytes()[prefix - 1] == b'\r' {
        prefix -= 1;
    }
    // Counted on what follows the prefix, so prefix and suffix never overlap;
    // equal chars end on a char boundary in both strings.
    let mut suffix = a[prefix..]
        .chars()
        .rev()
        .zip(b[prefix..].chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum::<usize>();
    let suffix_start = a.len() - suffix;
    if suffix > 0 && a.as_bytes()[suffix_start] == b'\n' && suffix_start > 0 && a.as_bytes()[suffix_start - 1] == b'\r' {
        suffix -= 1;
    }
    (prefix, suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spliced(old: &str, splices: &[Splice]) -> String {
        let mut out = String::new();
        let mut at = 0;
        for splice in splices {
            assert!(splice.range.start >= at, "in order, not overlapping: {splice:?}");
            out.push_str(&old[at..splice.range.start]);
            out.push_str(&splice.text);
            at = splice.range.end;
        }
        out.push_str(&old[at..]);
        out
    }

    /// The bad inputs (issue 31): each ends (bounded) and is exact.
    #[test]
    fn large_rewrites_are_exact() {
        let lines = |n: usize, f: &dyn Fn(usize) -> String| -> String { (0..n).map(f).collect() };
        let old = lines(30_000, &|i| format!("line {i}\n"));
        let cases = [
            ("every line", lines(30_000, &|i| format!("LINE {i}\n"))),
            ("every other line", lines(30_000, &|i| if i % 2 == 0 { format!("LINE {i}\n") } else { format!("line {i}\n") })),
            ("CRLF for LF", old.replace('\n', "\r\n")),
        ];
        for (what, new) in &cases {
            let splices = replacements(&old, new);
            assert!(spliced(&old, &splices) == *new, "{what}: the replacements do not give the new text");
        }
        // One 2 MB line with one changed character: the replacement is
        // that character, not the line.
        let long = "x".repeat(2_000_000);
        let mut changed = long.clone();
        changed.replace_range(1_000_000..1_000_001, "y");
        let splices = replacements(&long, &changed);
        assert_eq!(splices, vec![Splice { range: 1_000_000..1_000_001, text: "y".into() }]);
    }
}
