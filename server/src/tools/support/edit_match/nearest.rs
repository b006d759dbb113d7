//! The nearest candidate, for refusals: the window of lines most like
//! `old_string` when nothing matched.

use std::ops::Range;

use crate::tools::support::text::{digits, numbered_line};
use super::*;

/// The lines of the file most like `old_string`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// 0-based line indices.
    pub lines: Range<usize>,
    /// How many of those lines differ from old_string's (beyond spacing).
    pub differing: usize,
    /// The lines, numbered as read_file shows them.
    pub shown: String,
}

/// Lines of a candidate shown in a refusal.
pub(super) const MAX_CANDIDATE_LINES: usize = 30;
/// Characters of one shown line before it is cut.
pub(super) const MAX_CANDIDATE_LINE_CHARS: usize = 300;
/// A needle line found in more places than this casts no votes: it says
/// little about where the block is (`}`, blank lines).
pub(super) const MAX_VOTES_PER_LINE: usize = 16;
/// How alike (Dice on character pairs, 0–1) a line must be to be offered
/// when no line of old_string is in the file.
pub(super) const MIN_LINE_SIMILARITY: f64 = 0.6;

/// Find the window of lines most like `old`: each of old_string's lines
/// found in the file (ignoring spacing and the folds of the ladder) votes
/// for the window it would start; with no votes, the file line most like
/// old_string's longest line anchors the window. Linear in the file's size.
pub fn nearest(text: &str, old: &str) -> Option<Candidate> {
    let (plain, _) = split_lines(old);
    let needle_lines = strip_numbered(&plain).unwrap_or(plain);
    let needle_hashes: Vec<Option<u64>> = needle_lines.iter().map(|l| lenient_hash(l)).collect();
    let hay: Vec<&str> = text.lines().collect();
    if hay.is_empty() || needle_hashes.iter().all(Option::is_none) {
        return None;
    }
    let hay_hashes: Vec<Option<u64>> = hay.iter().map(|l| lenient_hash(l)).collect();
    let k = needle_lines.len();

    // needle hash → the needle lines that have it (few lines: a sorted vec).
    let mut index: Vec<(u64, usize)> =
        needle_hashes.iter().enumerate().filter_map(|(j, h)| Some(((*h)?, j))).collect();
    index.sort_unstable();
    let mut votes = vec![0u32; hay.len()];
    for (p, hash) in hay_hashes.iter().enumerate() {
        let Some(hash) = hash else { continue };
        let from = index.partition_point(|(h, _)| h < hash);
        let to = index.partition_point(|(h, _)| h <= hash);
        if to - from > MAX_VOTES_PER_LINE {
            continue;
        }
        for &(_, j) in &index[from..to] {
            if let Some(start) = p.checked_sub(j) {
                votes[start] += 1;
            }
        }
    }
    let best = votes.iter().enumerate().max_by_key(|(i, v)| (**v, std::cmp::Reverse(*i)));
    let start = match best {
        Some((start, &v)) if v > 0 => start,
        _ => similar_line_window(&hay, &needle_lines)?,
    };
    let end = (start + k).min(hay.len());
    let differing = (start..end)
        .zip(&needle_hashes)
        .filter(|(p, h)| hay_hashes[*p] != **h)
        .count()
        + (start + k - end);
    let width = digits(end).max(4);
    let mut shown: Vec<String> = hay[start..end]
        .iter()
        .take(MAX_CANDIDATE_LINES)
        .enumerate()
        .map(|(i, line)| {
            let text = match line.char_indices().nth(MAX_CANDIDATE_LINE_CHARS) {
                Some((cut, _)) => format!("{} [...]", &line[..cut]),
                None => line.to_string(),
            };
            numbered_line(start + i + 1, width, text.trim_end_matches('\r'))
        })
        .collect();
    if end - start > MAX_CANDIDATE_LINES {
        shown.push(format!("... ({} more lines)", end - start - MAX_CANDIDATE_LINES));
    }
    Some(Candidate { lines: start..end, differing, shown: shown.join("\n") })
}

/// A line's hash ignoring what the ladder folds and all spacing; `None`
/// for a blank line.
pub(super) fn lenient_hash(line: &str) -> Option<u64> {
    let line = split_number_prefix(line).map_or(line, |(_, rest)| rest);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut any = false;
    let mut space = false;
    let feed = |c: char, hash: &mut u64| {
        *hash = (*hash ^ c as u64).wrapping_mul(0x0000_0100_0000_01b3);
    };
    for (_, unit) in units(line, MatchRung::Unicode) {
        for c in unit.chars() {
            if c.is_whitespace() {
                space = any;
                continue;
            }
            if space {
                feed(' ', &mut hash);
                space = false;
            }
            feed(c, &mut hash);
            any = true;
        }
    }
    any.then_some(hash)
}

/// Where the window starts if it is anchored on the file line most like
/// the needle's longest line.
pub(super) fn similar_line_window(hay: &[&str], needle_lines: &[String]) -> Option<usize> {
    let (j, longest) = needle_lines.iter().enumerate().max_by_key(|(_, l)| l.trim().len())?;
    let pairs = char_pairs(longest.trim());
    if pairs.is_empty() {
        return None;
    }
    // A 64 Ki-bit set of the needle line's character pairs.
    let mut set = vec![0u64; 1024];
    for &p in &pairs {
        set[(p >> 6) as usize & 1023] |= 1 << (p & 63);
    }
    let mut best: Option<(f64, usize)> = None;
    for (p, line) in hay.iter().enumerate() {
        let line_pairs = char_pairs(line.trim());
        if line_pairs.is_empty() {
            continue;
        }
        let hits = line_pairs.iter().filter(|&&q| set[(q >> 6) as usize & 1023] & (1 << (q & 63)) != 0).count();
        let score = 2.0 * hits as f64 / (pairs.len() + line_pairs.len()) as f64;
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, p));
        }
    }
    let (score, p) = best?;
    (score >= MIN_LINE_SIMILARITY).then(|| p.saturating_sub(j))
}

/// Adjacent character pairs, hashed to 16 bits.
pub(super) fn char_pairs(line: &str) -> Vec<u16> {
    let mut out = Vec::with_capacity(line.len());
    let mut previous: Option<char> = None;
    for c in line.chars() {
        if let Some(b) = previous {
            let h = (b as u32).wrapping_mul(31).wrapping_add(c as u32).wrapping_mul(0x9E37_79B1);
            out.push((h >> 16) as u16);
        }
        previous = Some(c);
    }
    out
}
