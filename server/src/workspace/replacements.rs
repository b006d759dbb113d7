//! The replacements that turn one text into another: only the changed
//! ranges, never the whole text. The editor sink sends them as the
//! `TextEdit`s of an edit (the user's cursor, folds and undo history
//! survive a small edit), and they are the hunks a review shows and the
//! lines a run reports as changed.
//!
//! Each replacement is one hunk of the line diff, and each is either whole
//! lines (it starts at a line start and ends at one or at the end of the
//! text, and puts whole lines in their place) or a change within one line
//! (no line break in what it removes or what it puts): so an editor's
//! review that takes some hunks and declines others never joins or splits
//! a line, and two hunks never touch the same line.

use crate::diff::{self, DiffOp};

use super::overlay::Splice;

/// The replacements that turn `old` into `new`, in order, non-overlapping,
/// one per hunk of the line diff (see the module's doc for their shape):
/// a line diff of the region between the common prefix and suffix of
/// whole lines (bounded: [`diff::lines`]), a hunk of one changed line
/// then trimmed to the characters that really differ. Linear in the texts'
/// size plus the diff's deadline: run it off the async runtime for large
/// texts ([`diff::off_runtime`]).
pub fn replacements(old: &str, new: &str) -> Vec<Splice> {
    if old == new {
        return Vec::new();
    }
    let (prefix, suffix) = line_affixes(old, new);
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
            // Whole lines, unless what differs lies within one line: then
            // only that (a changed character of a 2 MB line is one
            // character). Trimmed any other way, a hunk could take the line
            // break after it, and declining the next one would join lines.
            let (p, s) = common_affixes(old_hunk, new_hunk);
            let (old_part, new_part) = (&old_hunk[p..old_hunk.len() - s], &new_hunk[p..new_hunk.len() - s]);
            let (p, s) = if has_break(old_part) || has_break(new_part) { (0, 0) } else { (p, s) };
            let splice = Splice {
                range: prefix + old_start + p..prefix + old_end - s,
                text: new_hunk[p..new_hunk.len() - s].to_string(),
            };
            (!splice.range.is_empty() || !splice.text.is_empty()).then_some(splice)
        })
        .collect()
}

/// The same change as `splices` (replacements of byte ranges of `old`, in
/// order, not overlapping, on character boundaries: an edit tool's
/// matches), as [`replacements`] gives it: one replacement per hunk, each
/// whole lines or within one line. Only the lines the splices touch are
/// diffed (each splice with the rest of its first and last line, splices
/// sharing a line together), so it costs what the edit does, not the text.
pub fn minimal_splices(old: &str, splices: &[Splice]) -> Vec<Splice> {
    let mut out = Vec::with_capacity(splices.len());
    let mut rest = splices;
    while let Some(first) = rest.first() {
        let start = group_start(old, first.range.start);
        let mut end = group_end(old, first.range.end);
        let mut taken = 1;
        // A splice on a line this group already covers belongs to it; one
        // that starts on a later line is the next group's. (`end` is a line
        // start or the end of the text, so comparing offsets is enough, and
        // each line is scanned for its breaks once: many matches on one
        // long line stay linear.)
        while let Some(next) = rest.get(taken) {
            if next.range.start >= end && end < old.len() {
                break;
            }
            if next.range.end >= end {
                end = group_end(old, next.range.end);
            }
            taken += 1;
        }
        let (group, after) = rest.split_at(taken);
        rest = after;
        let mut new = String::with_capacity(crate::workspace::len_after(end - start, group));
        let mut copied = start;
        for splice in group {
            new.push_str(&old[copied..splice.range.start]);
            new.push_str(&splice.text);
            copied = splice.range.end;
        }
        new.push_str(&old[copied..end]);
        out.extend(
            replacements(&old[start..end], &new)
                .into_iter()
                .map(|hunk| Splice { range: start + hunk.range.start..start + hunk.range.end, text: hunk.text }),
        );
    }
    out
}

/// Where a group of [`minimal_splices`] that touches byte `at` starts:
/// the start of its line, or of the line before when that ends in a lone
/// `\r` (a new text starting with `\n` would make it `\r\n`).
fn group_start(text: &str, at: usize) -> usize {
    let mut start = line_start(text, at);
    while start > 0 && text.as_bytes()[start - 1] == b'\r' {
        start = line_start(text, start - 1);
    }
    start
}

/// Where such a group ends: the end of the line byte `at` is on, or of a
/// later line, so that it never ends in a lone `\r` (see [`group_start`]).
fn group_end(text: &str, at: usize) -> usize {
    let mut end = line_end(text, at);
    while end < text.len() && text.as_bytes()[end - 1] == b'\r' {
        end = line_end(text, end);
    }
    end
}

/// True when `text` holds a line break (`\n`, or `\r`, alone or in `\r\n`:
/// the breaks LSP and the line diff count).
fn has_break(text: &str) -> bool {
    memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_some()
}

/// True when byte `at` of `text` starts a line: the start, or right after a
/// line break (not between the `\r` and `\n` of a pair). The end of the
/// text counts too.
fn at_line_start(text: &str, at: usize) -> bool {
    let bytes = text.as_bytes();
    at == 0
        || at >= bytes.len()
        || bytes[at - 1] == b'\n'
        || (bytes[at - 1] == b'\r' && bytes[at] != b'\n')
}

/// The start of the line byte `at` of `text` is on.
fn line_start(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let mut at = at.min(bytes.len());
    // Between the `\r` and `\n` of a pair: on the line the pair ends.
    if at > 0 && at < bytes.len() && bytes[at - 1] == b'\r' && bytes[at] == b'\n' {
        at -= 1;
    }
    memchr::memrchr2(b'\n', b'\r', &bytes[..at]).map_or(0, |found| found + 1)
}

/// The end of the line byte `at` of `text` is on, its line break included
/// (the end of the text for the last line). A line start is on the line it
/// starts, so the result is past `at` unless `at` is the end of the text.
fn line_end(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let at = at.min(bytes.len());
    match memchr::memchr2(b'\n', b'\r', &bytes[at..]) {
        None => bytes.len(),
        Some(found) => {
            let found = at + found;
            if bytes[found] == b'\r' && bytes.get(found + 1) == Some(&b'\n') {
                found + 2
            } else {
                found + 1
            }
        }
    }
}

/// The byte lengths of the longest common prefix and suffix of whole lines
/// (not overlapping): each ends (or starts) at a line start in both texts,
/// so the middle between them is whole lines of each.
fn line_affixes(a: &str, b: &str) -> (usize, usize) {
    let (prefix, suffix) = common_affixes(a, b);
    // The prefix is the same bytes in both, and never ends inside a pair.
    let prefix = line_start(a, prefix);
    let suffix = suffix.min(a.len() - prefix).min(b.len() - prefix);
    let (a_start, b_start) = (a.len() - suffix, b.len() - suffix);
    if at_line_start(a, a_start) && at_line_start(b, b_start) {
        return (prefix, suffix);
    }
    // Past the suffix's first line break, both texts are at a line start
    // (the break is the same bytes in both).
    let end = line_end(a, a_start);
    (prefix, a.len() - end)
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

    /// The issue's bad inputs (issue 31): each ends (bounded) and is exact.
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
        // The same through an edit's splices: the one character, though
        // the line it is on is the whole text.
        let splices = minimal_splices(&long, &[Splice { range: 999_990..1_000_010, text: changed[999_990..1_000_010].to_string() }]);
        assert_eq!(splices, vec![Splice { range: 1_000_000..1_000_001, text: "y".into() }]);
    }

    /// Lines before the line byte `at` of `text` is on.
    fn line_index(text: &str, at: usize) -> usize {
        diff::split_lines(&text[..line_start(text, at)]).len()
    }

    /// Lines before byte `end`, a line start or the end of `text`.
    fn lines_to(text: &str, end: usize) -> usize {
        if end >= text.len() {
            diff::split_lines(text).len()
        } else {
            line_index(text, end)
        }
    }

    /// The module's promise for `hunks` of `old` giving `new`: exact; each
    /// hunk whole lines or within one line, no two on one line; and the
    /// old text with any subset of them applied is, line for line, the old
    /// lines with the chosen hunks' lines replaced by their new lines —
    /// never a line joined to the next or split in two.
    fn check_hunks(old: &str, new: &str, hunks: &[Splice]) -> Result<(), String> {
        if spliced(old, hunks) != new {
            return Err(format!("{hunks:?} do not give the new text"));
        }
        let (old_lines, new_lines) = (diff::split_lines(old), diff::split_lines(new));
        // Per hunk: its lines in the old text and in the new one.
        let mut spans: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = Vec::new();
        let mut shift: isize = 0;
        for hunk in hunks {
            let (start, end) = (hunk.range.start, hunk.range.end);
            let new_start = start.saturating_add_signed(shift);
            let new_end = new_start + hunk.text.len();
            shift += hunk.text.len() as isize - hunk.range.len() as isize;
            let whole = at_line_start(old, start)
                && at_line_start(old, end)
                && at_line_start(new, new_start)
                && at_line_start(new, new_end);
            let span = if whole {
                (line_index(old, start)..lines_to(old, end), line_index(new, new_start)..lines_to(new, new_end))
            } else if !has_break(&old[start..end]) && !has_break(&hunk.text) {
                let (o, n) = (line_index(old, start), line_index(new, new_start));
                (o..o + 1, n..n + 1)
            } else {
                return Err(format!("{hunk:?} is neither whole lines nor within one line of {old:?}"));
            };
            if spans.last().is_some_and(|(last, _)| span.0.start < last.end) {
                return Err(format!("{hunk:?} shares a line with the hunk before it in {hunks:?}"));
            }
            spans.push(span);
        }
        let n = spans.len();
        let subsets: Vec<u64> = if n <= 8 {
            (0..1u64 << n).collect()
        } else {
            // Each alone, each left out, and a spread of others.
            let all = (1u64 << n.min(63)) - 1;
            (0..n.min(63)).flat_map(|i| [1 << i, all & !(1 << i)]).chain((0..64u64).map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15) & all)).collect()
        };
        for mask in subsets {
            let chosen: Vec<Splice> = hunks.iter().enumerate().filter(|(i, _)| *i < 64 && mask >> i & 1 == 1).map(|(_, h)| h.clone()).collect();
            let mut expected = String::new();
            let mut at = 0;
            for (i, (old_span, new_span)) in spans.iter().enumerate() {
                expected.extend(old_lines[at..old_span.start].iter().copied());
                if i < 64 && mask >> i & 1 == 1 {
                    expected.extend(new_lines[new_span.clone()].iter().copied());
                } else {
                    expected.extend(old_lines[old_span.clone()].iter().copied());
                }
                at = old_span.end;
            }
            expected.extend(old_lines[at..].iter().copied());
            let got = spliced(old, &chosen);
            if got != expected {
                return Err(format!("hunks {mask:b} of {hunks:?} on {old:?} give {got:?}, not the lines {expected:?}"));
            }
        }
        Ok(())
    }

    /// The issue's case (issue 53): an old_string covering lines 1-21 that
    /// changes lines 1 and 21 is two hunks, each within its line.
    #[test]
    fn a_large_old_string_with_two_changes_is_two_hunks() {
        let old: String = (1..=21).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 1\n", "LINE 1\n").replace("line 21\n", "line 21 changed\n");
        let splices = minimal_splices(&old, &[Splice { range: 0..old.len(), text: new.clone() }]);
        assert_eq!(splices.len(), 2, "{splices:?}");
        check_hunks(&old, &new, &splices).unwrap();
        assert_eq!(splices, replacements(&old, &new));
    }

    /// Undoing a two-line change once gave three hunks, one a deletion
    /// that took the line break after it and one a lone blank line; one
    /// declined alone joined two lines. Whole lines now.
    #[test]
    fn a_deletion_never_takes_the_next_line_s_break() {
        let cases = [
            ("a\nb\nc\nd\ne\nf\n", "A\nb\nc\nd\nf\nF\n"),
            ("x = 1\ny = 2\n\nz = 3\n", "x = 1\n\nz = 30\n"),
            ("keep\nold one\nold two\nkeep\n", "keep\nnew\nkeep\n"),
            ("a\r\nb\r\nc", "a\r\nc\r\nb"),
            ("x\n", "y\r\n"),
            ("b\n", "ab\n"),
        ];
        for (old, new) in cases {
            let hunks = replacements(old, new);
            check_hunks(old, new, &hunks).unwrap_or_else(|e| panic!("{old:?} -> {new:?}: {e}"));
        }
        // e then f becomes f then F: e deleted, F added, f kept between.
        assert_eq!(
            replacements("a\nb\nc\nd\ne\nf\n", "A\nb\nc\nd\nf\nF\n"),
            vec![
                Splice { range: 0..1, text: "A".into() },
                Splice { range: 8..10, text: String::new() },
                Splice { range: 12..12, text: "F\n".into() },
            ]
        );
    }

    /// Texts of a few short lines, with every kind of line break and a
    /// last line with or without one.
    fn texty() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop_oneof!["a", "b", "ab", "é", " ", "\n", "\n", "\r\n", "\r", "a\n", "b\n"], 0..20).prop_map(|parts| parts.concat())
    }

    /// `old` and a text made of it line by line: lines kept, changed,
    /// dropped, added, split and joined, as edits and undos do.
    fn edited() -> impl Strategy<Value = (String, String)> {
        let line = prop_oneof!["alpha", "beta", "gamma", "", "x = 1", "é"];
        let lines = proptest::collection::vec((line, prop_oneof!["\n", "\r\n"]), 0..16);
        (lines, proptest::collection::vec(0u8..8, 16), any::<bool>()).prop_map(|(lines, moves, last_break)| {
            let mut old = String::new();
            let mut new = String::new();
            let count = lines.len();
            for (i, ((line, brk), step)) in lines.into_iter().zip(moves).enumerate() {
                let brk = if i + 1 == count && !last_break { "" } else { brk.as_str() };
                old.push_str(&line);
                old.push_str(brk);
                match step {
                    0 => new.push_str(&format!("{line}{brk}")),
                    1 => new.push_str(&format!("{line}!{brk}")),
                    2 => new.push_str(&format!("added{brk}{line}{brk}")),
                    3 => new.push_str(&format!("{line}{brk}added{brk}")),
                    4 => new.push_str(&format!("{}{brk}", line.chars().rev().collect::<String>())),
                    5 => new.push_str(&format!("{line}{brk}{line}{brk}")),
                    // Dropped, or joined to the next line.
                    6 => {}
                    _ => new.push_str(&line),
                }
            }
            (old, new)
        })
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any two texts: the hunks are line-aligned and any subset of
        /// them accepted leaves whole lines.
        #[test]
        fn any_subset_of_hunks_keeps_lines_whole(old in texty(), new in texty()) {
            let hunks = replacements(&old, &new);
            prop_assert!(check_hunks(&old, &new, &hunks).is_ok(), "{}", check_hunks(&old, &new, &hunks).unwrap_err());
        }

        /// The same for a text edited line by line (many hunks).
        #[test]
        fn any_subset_of_hunks_of_an_edit_keeps_lines_whole((old, new) in edited()) {
            let hunks = replacements(&old, &new);
            prop_assert!(check_hunks(&old, &new, &hunks).is_ok(), "{}", check_hunks(&old, &new, &hunks).unwrap_err());
        }

        /// An edit tool's splices (anywhere, any size, several on a line)
        /// become the same line-aligned hunks.
        #[test]
        fn an_edit_s_splices_become_line_aligned_hunks(
            old in texty(),
            cuts in proptest::collection::vec((0usize..12, 0usize..8, prop_oneof!["", "x", "\n", "y\n", "\r\nz", "a"]), 0..5),
        ) {
            let mut splices = Vec::new();
            let mut from = 0;
            for (gap, len, text) in cuts {
                let (start, end) = (from + gap, from + gap + len);
                if end > old.len() || !old.is_char_boundary(start) || !old.is_char_boundary(end) {
                    continue;
                }
                splices.push(Splice { range: start..end, text: text.to_string() });
                from = end;
            }
            let new = spliced(&old, &splices);
            let hunks = minimal_splices(&old, &splices);
            prop_assert!(check_hunks(&old, &new, &hunks).is_ok(), "{}", check_hunks(&old, &new, &hunks).unwrap_err());
        }
    }
}