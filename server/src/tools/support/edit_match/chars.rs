//! The character rungs: the texts compared after folding line endings,
//! then quotes, then dashes, ellipses, spaces and normalization form, on
//! whole units.

use std::borrow::Cow;
use std::ops::Range;

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::UnicodeNormalization;

use super::*;

/// `None` when this rung cannot see anything the rung before it did not.
pub(super) fn char_search(text: &str, old: &str, rung: MatchRung) -> Option<Matches> {
    match rung {
        MatchRung::LineEndings if !text.contains('\r') && !old.contains('\r') => return None,
        MatchRung::Quotes if !quotes_can_differ(text, old) => return None,
        MatchRung::Unicode if text.is_ascii() && old.is_ascii() => return None,
        _ => {}
    }
    let hay = Folded::new(text, rung);
    let needle = Folded::new(old, rung).text;
    if rung != MatchRung::Exact && needle.trim().is_empty() {
        return None;
    }
    let needle = needle.as_ref();
    let hay_text = hay.text.as_ref();
    // A match must start and end on unit boundaries of the original text,
    // and must not leave a combining mark to the letter after it.
    let valid = |start: usize| -> Option<Range<usize>> {
        let from = hay.original(start)?;
        let to = hay.original(start + needle.len())?;
        if continues_segment(&text[to..])
            || (rung != MatchRung::Exact && continues_segment(&text[from..]))
            || splits_crlf(text, from)
            || splits_crlf(text, to)
        {
            return None;
        }
        Some(from..to)
    };
    let next_char = |at: usize| at + hay_text[at..].chars().next().map_or(1, char::len_utf8);

    // A byte search: a UTF-8 needle found in UTF-8 text starts and ends on
    // char boundaries.
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let find_from = |pos: usize| hay_text.as_bytes().get(pos..).and_then(|rest| finder.find(rest));
    let mut ranges = Vec::new();
    let mut folded_first = None;
    let mut pos = 0;
    while let Some(found) = find_from(pos) {
        let at = pos + found;
        match valid(at) {
            Some(range) => {
                folded_first.get_or_insert(at);
                ranges.push(range);
                pos = at + needle.len();
            }
            None => pos = next_char(at),
        }
    }
    let mut count = ranges.len();
    // One non-overlapping match may still have an overlapping twin.
    if let (1, Some(first)) = (count, folded_first) {
        let end = first + needle.len();
        let mut pos = next_char(first);
        while let Some(found) = find_from(pos) {
            let at = pos + found;
            if at >= end {
                break;
            }
            if valid(at).is_some() {
                count = 2;
                break;
            }
            pos = next_char(at);
        }
    }
    Some(Matches { ranges, count })
}

/// A text as a character rung sees it, and where its folded units came from.
pub(super) struct Folded<'a> {
    pub(super) text: Cow<'a, str>,
    /// The units whose folded text differs from the original, in order.
    pub(super) changes: Vec<Change>,
}

pub(super) struct Change {
    pub(super) folded: Range<usize>,
    pub(super) original: Range<usize>,
}

impl<'a> Folded<'a> {
    pub(super) fn new(text: &'a str, rung: MatchRung) -> Self {
        if rung == MatchRung::Exact {
            return Folded { text: Cow::Borrowed(text), changes: Vec::new() };
        }
        let mut out = String::with_capacity(text.len());
        let mut changes = Vec::new();
        for (original, unit) in units(text, rung) {
            let start = out.len();
            match unit {
                Cow::Borrowed(same) => out.push_str(same),
                Cow::Owned(changed) => {
                    out.push_str(&changed);
                    changes.push(Change { folded: start..out.len(), original });
                }
            }
        }
        Folded { text: Cow::Owned(out), changes }
    }

    /// The original offset of folded offset `at`; `None` inside a unit.
    pub(super) fn original(&self, at: usize) -> Option<usize> {
        let before = self.changes.partition_point(|c| c.folded.start < at);
        match before.checked_sub(1).and_then(|i| self.changes.get(i)) {
            None => Some(at),
            Some(change) if at < change.folded.end => None,
            Some(change) => Some(at - change.folded.end + change.original.end),
        }
    }
}

/// The units of `text` a rung folds one by one, with their byte ranges:
/// `Borrowed` where the unit reads as itself, `Owned` with what it reads as.
/// On the Unicode rung a unit is a character with the combining marks that
/// follow it, so composing and decomposing stays inside one unit.
pub(super) fn units(text: &str, rung: MatchRung) -> impl Iterator<Item = (Range<usize>, Cow<'_, str>)> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let rest = text.get(pos..)?;
        let c = rest.chars().next()?;
        let start = pos;
        if c == '\r' && rung >= MatchRung::LineEndings && rest[1..].starts_with('\n') {
            pos += 2;
            return Some((start..pos, Cow::Owned("\n".to_string())));
        }
        let mut end = start + c.len_utf8();
        if rung >= MatchRung::Unicode {
            end += text[end..].chars().take_while(|&d| is_continuing(d)).map(char::len_utf8).sum::<usize>();
        }
        pos = end;
        let unit = &text[start..end];
        if unit.is_ascii() || rung < MatchRung::Quotes {
            return Some((start..end, Cow::Borrowed(unit)));
        }
        let folded = fold_unit(unit, rung);
        Some((start..end, if folded == unit { Cow::Borrowed(unit) } else { Cow::Owned(folded) }))
    })
}

pub(super) fn fold_unit(unit: &str, rung: MatchRung) -> String {
    if rung < MatchRung::Unicode {
        return unit.chars().map(straighten).collect();
    }
    let mut out = String::with_capacity(unit.len());
    for c in unit.chars() {
        match c {
            '\u{2026}' => out.push_str("..."),
            c if is_dash(c) => out.push('-'),
            c if is_space(c) => out.push(' '),
            c => out.push(straighten(c)),
        }
    }
    if out.is_ascii() { out } else { out.nfc().collect() }
}

/// A combining mark, or a Hangul vowel or final jamo: characters that
/// belong to the character before them.
pub(super) fn is_continuing(c: char) -> bool {
    !c.is_ascii() && (canonical_combining_class(c) != 0 || ('\u{1160}'..='\u{11FF}').contains(&c))
}

/// Is `at` between the `\r` and the `\n` of a line break? A match there
/// would write half a line break.
pub(super) fn splits_crlf(text: &str, at: usize) -> bool {
    at > 0 && text.as_bytes().get(at - 1) == Some(&b'\r') && text.as_bytes().get(at) == Some(&b'\n')
}

pub(super) fn continues_segment(text: &str) -> bool {
    text.chars().next().is_some_and(is_continuing)
}

pub(super) fn is_dash(c: char) -> bool {
    matches!(c, '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}')
}

pub(super) fn is_space(c: char) -> bool {
    matches!(c, '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}')
}

pub(super) const CURLY_QUOTES: [char; 4] = ['\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}'];

pub(super) fn quotes_can_differ(text: &str, old: &str) -> bool {
    old.contains(CURLY_QUOTES) || (old.contains(['"', '\'']) && text.contains(CURLY_QUOTES))
}

pub(super) fn straighten(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' => '\'',
        '\u{201C}' | '\u{201D}' => '"',
        other => other,
    }
}

pub(super) fn is_quote(c: char) -> bool {
    matches!(c, '"' | '\'') || CURLY_QUOTES.contains(&c)
}
