//! The matcher behind `edit_file`: where `old_string` is in the file, and
//! what `new_string` becomes where it lands.
//!
//! **find** climbs a ladder of [`MatchRung`]s, strictest first; the first
//! rung with any match decides. The character rungs compare the texts after
//! folding them (line endings, then also quotes, then also Unicode dashes,
//! ellipses, spaces and NFC/NFD); a match on any rung must start and end on
//! whole units, so it never splits a `\r\n` or a letter from its accent. The
//! line-wise rungs compare whole lines: trailing whitespace ignored, then
//! also `read_file`'s line-number prefixes stripped, then leading whitespace
//! compared in columns at the file's tab width, then one indentation offset
//! shared by every line of the block. A line-wise rung never matches half a
//! line. On every rung the match must be unique, unless the caller asked for
//! every match; a rung whose folding leaves `old_string` blank never matches.
//!
//! **plan** writes `new_string` in the file's style where it lands: its line
//! endings, quote and dash style and normalization form; on line-wise rungs
//! also its indentation (the offset found and the file's tabs or spaces), no
//! copied line-number prefixes, and the file's own bytes for every line the
//! model did not change.
//!
//! **nearest** finds, when nothing matched, the window of lines most like
//! `old_string`, so the refusal can show the model what is really there.
//!
//! Architecture invariant: a match found past the exact rung maps back to
//! byte ranges of the original text on unit boundaries; nothing outside those
//! ranges is ever rewritten.

use std::borrow::Cow;
use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{capture_diff_slices_deadline, Algorithm, DiffOp};
use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfc, is_nfd, UnicodeNormalization};

use super::text::{digits, line_ending_of, numbered_line, with_line_ending, LineEnding};
use crate::workspace::Splice;

/// Which rung of the matching ladder found `old_string`. Ordered from the
/// strictest to the most lenient; each rung includes the folds of the
/// character rungs before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MatchRung {
    /// The bytes as given.
    Exact,
    /// `\r\n` read as `\n` in both the file and `old_string`.
    LineEndings,
    /// Also curly quotes (‘ ’ “ ”) read as straight ones.
    Quotes,
    /// Also dashes and minus signs as `-`, `…` as `...`, non-breaking and
    /// other Unicode spaces as ` `, and both texts in NFC.
    Unicode,
    /// Whole lines, each compared without its trailing whitespace; the end
    /// of the file counts as a line break.
    TrailingWhitespace,
    /// Also `read_file`'s `  12 | ` prefixes stripped from `old_string`,
    /// when every line carries one and the numbers follow each other.
    LineNumbers,
    /// Also leading whitespace compared in columns, tabs expanded at the
    /// file's tab width.
    Tabs,
    /// Also every line of the block indented by the same offset.
    Indentation,
}

impl MatchRung {
    /// Every rung, in the order they are tried.
    pub const LADDER: [MatchRung; 8] = [
        MatchRung::Exact,
        MatchRung::LineEndings,
        MatchRung::Quotes,
        MatchRung::Unicode,
        MatchRung::TrailingWhitespace,
        MatchRung::LineNumbers,
        MatchRung::Tabs,
        MatchRung::Indentation,
    ];

    /// How messages name the rung, after "matched". `None` when the model
    /// copied the text right: exactly, or with line endings it cannot see.
    pub fn describe(self) -> Option<&'static str> {
        match self {
            MatchRung::Exact | MatchRung::LineEndings => None,
            MatchRung::Quotes => Some("via quote normalization"),
            MatchRung::Unicode => Some("via Unicode normalization of dashes, ellipses, spaces and accents"),
            MatchRung::TrailingWhitespace => Some("ignoring trailing whitespace"),
            MatchRung::LineNumbers => Some("after removing the line-number prefixes copied from read_file"),
            MatchRung::Tabs => Some("comparing indentation with tabs expanded"),
            MatchRung::Indentation => Some("ignoring a uniform indentation offset"),
        }
    }

    fn line_wise(self) -> bool {
        self >= MatchRung::TrailingWhitespace
    }
}

/// Where `old_string` matched: byte ranges in the file's text, in order and
/// not overlapping, and how the needle was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub rung: MatchRung,
    pub ranges: Vec<Range<usize>>,
    /// Columns per tab on the line-wise rungs.
    tab_width: usize,
}

/// Why `old_string` could not be placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindError {
    NotFound,
    /// Found `count` times on `rung`; `lines` are the 1-based first lines of
    /// the first few matches.
    NotUnique { count: usize, rung: MatchRung, lines: Vec<usize> },
}

/// Matches listed in an ambiguity error.
const MAX_LISTED_MATCHES: usize = 10;

/// Phase 1: find `old` in `text`, strictest rung first. The first rung with
/// any match decides: one match, or every match with `replace_all`.
pub fn find(text: &str, old: &str, replace_all: bool) -> Result<Found, FindError> {
    if old.is_empty() {
        return Err(FindError::NotFound);
    }
    let mut lines: Option<(HayLines<'_>, Needle)> = None;
    for rung in MatchRung::LADDER {
        let (matches, tab_width) = if rung.line_wise() {
            let (hay, needle) = lines.get_or_insert_with(|| (HayLines::new(text), Needle::new(old)));
            let tab_width = tab_width(hay, needle);
            match line_search(hay, needle, rung, tab_width) {
                Some(matches) => (matches, tab_width),
                None => continue,
            }
        } else {
            match char_search(text, old, rung) {
                Some(matches) => (matches, 0),
                None => continue,
            }
        };
        match matches.count {
            0 => continue,
            1 => return Ok(Found { rung, ranges: matches.ranges, tab_width }),
            _ if replace_all => return Ok(Found { rung, ranges: matches.ranges, tab_width }),
            count => {
                let lines = matches
                    .ranges
                    .iter()
                    .take(MAX_LISTED_MATCHES)
                    .map(|r| text[..r.start].matches('\n').count() + 1)
                    .collect();
                return Err(FindError::NotUnique { count, rung, lines });
            }
        }
    }
    Err(FindError::NotFound)
}

/// What one rung found: the leftmost non-overlapping matches, and how many
/// occurrences there are counting overlapping ones (`aa` is twice in `aaa`).
struct Matches {
    ranges: Vec<Range<usize>>,
    count: usize,
}

// ---------------------------------------------------------------------------
// Character rungs
// ---------------------------------------------------------------------------

/// `None` when this rung cannot see anything the rung before it did not.
fn char_search(text: &str, old: &str, rung: MatchRung) -> Option<Matches> {
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
struct Folded<'a> {
    text: Cow<'a, str>,
    /// The units whose folded text differs from the original, in order.
    changes: Vec<Change>,
}

struct Change {
    folded: Range<usize>,
    original: Range<usize>,
}

impl<'a> Folded<'a> {
    fn new(text: &'a str, rung: MatchRung) -> Self {
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
    fn original(&self, at: usize) -> Option<usize> {
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
fn units(text: &str, rung: MatchRung) -> impl Iterator<Item = (Range<usize>, Cow<'_, str>)> + '_ {
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

fn fold_unit(unit: &str, rung: MatchRung) -> String {
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
fn is_continuing(c: char) -> bool {
    !c.is_ascii() && (canonical_combining_class(c) != 0 || ('\u{1160}'..='\u{11FF}').contains(&c))
}

/// Is `at` between the `\r` and the `\n` of a line break? A match there
/// would write half a line break.
fn splits_crlf(text: &str, at: usize) -> bool {
    at > 0 && text.as_bytes().get(at - 1) == Some(&b'\r') && text.as_bytes().get(at) == Some(&b'\n')
}

fn continues_segment(text: &str) -> bool {
    text.chars().next().is_some_and(is_continuing)
}

fn is_dash(c: char) -> bool {
    matches!(c, '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}')
}

fn is_space(c: char) -> bool {
    matches!(c, '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}')
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

fn is_quote(c: char) -> bool {
    matches!(c, '"' | '\'') || CURLY_QUOTES.contains(&c)
}

// ---------------------------------------------------------------------------
// Line-wise rungs
// ---------------------------------------------------------------------------

/// One line of the file: where it starts, where its text ends (before
/// `\r\n` or `\n`) and where the next line starts.
struct HayLine<'a> {
    start: usize,
    content_end: usize,
    end: usize,
    key: LineKey<'a>,
}

struct HayLines<'a> {
    lines: Vec<HayLine<'a>>,
    has_leading_tab: bool,
}

impl<'a> HayLines<'a> {
    fn new(text: &'a str) -> Self {
        let mut lines = Vec::new();
        let mut start = 0;
        for piece in text.split_inclusive('\n') {
            let end = start + piece.len();
            let body = piece.strip_suffix('\n').unwrap_or(piece);
            let body = body.strip_suffix('\r').unwrap_or(body);
            lines.push(HayLine { start, content_end: start + body.len(), end, key: LineKey::new(body) });
            start = end;
        }
        let has_leading_tab = lines.iter().any(|l| l.key.lead().contains('\t'));
        HayLines { lines, has_leading_tab }
    }
}

/// A line as the line-wise rungs compare it: folded like the Unicode rung,
/// split into leading whitespace and the rest without trailing whitespace.
/// A blank line has neither.
#[derive(Debug, Clone)]
struct LineKey<'a> {
    folded: Cow<'a, str>,
    lead_len: usize,
    rest_end: usize,
    /// Did the line end in whitespace (before folding)?
    trailing: bool,
}

impl<'a> LineKey<'a> {
    fn new(line: &'a str) -> Self {
        let folded = if line.is_ascii() {
            Cow::Borrowed(line)
        } else {
            let mut out = String::with_capacity(line.len());
            for (_, unit) in units(line, MatchRung::Unicode) {
                out.push_str(&unit);
            }
            Cow::Owned(out)
        };
        let trimmed = folded.trim_end();
        let rest_end = trimmed.len();
        let lead_len = rest_end - trimmed.trim_start().len();
        let trailing = line.ends_with(char::is_whitespace);
        LineKey { folded, lead_len, rest_end, trailing }
    }

    fn lead(&self) -> &str {
        &self.folded[..self.lead_len]
    }

    fn rest(&self) -> &str {
        &self.folded[self.lead_len..self.rest_end]
    }

    fn blank(&self) -> bool {
        self.rest_end == 0
    }

    fn columns(&self, tab_width: usize) -> usize {
        columns(self.lead(), tab_width)
    }
}

impl HayLine<'_> {
    fn lead(&self) -> &str {
        self.key.lead()
    }
}

/// `old_string` as lines, read plainly and (if it carries them) without
/// `read_file`'s line-number prefixes.
struct Needle {
    plain: Vec<String>,
    unnumbered: Option<Vec<String>>,
    ends_with_newline: bool,
}

impl Needle {
    fn new(old: &str) -> Self {
        let (plain, ends_with_newline) = split_lines(old);
        let unnumbered = strip_numbered(&plain);
        Needle { plain, unnumbered, ends_with_newline }
    }

    fn lines(&self, rung: MatchRung) -> Option<&[String]> {
        match (rung, &self.unnumbered) {
            (MatchRung::LineNumbers, None) => None,
            (rung, Some(unnumbered)) if rung >= MatchRung::LineNumbers => Some(unnumbered),
            _ => Some(&self.plain),
        }
    }
}

/// `text` split at `\n` (a `\r` before it dropped), and whether it ended
/// with a line break (then there is no empty last line).
fn split_lines(text: &str) -> (Vec<String>, bool) {
    let ends_with_newline = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines = body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect();
    (lines, ends_with_newline)
}

/// The lines without their `  12 | ` prefixes, if every line has one in
/// `read_file`'s format and the numbers count up by one.
fn strip_numbered(lines: &[String]) -> Option<Vec<String>> {
    let mut expected = None;
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let (number, rest) = split_number_prefix(line)?;
        if expected.is_some_and(|e| e != number) {
            return None;
        }
        expected = number.checked_add(1);
        out.push(rest.to_string());
    }
    Some(out)
}

/// `  12 | text` → `(12, "text")`; `  12 |` (an empty line whose trailing
/// space was trimmed) → `(12, "")`.
pub(crate) fn split_number_prefix(line: &str) -> Option<(usize, &str)> {
    let rest = line.trim_start_matches(' ');
    let digit_count = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digit_count == 0 || digit_count > 12 {
        return None;
    }
    let number = rest[..digit_count].parse().ok()?;
    let after = &rest[digit_count..];
    if let Some(text) = after.strip_prefix(" | ") {
        Some((number, text))
    } else if after == " |" {
        Some((number, ""))
    } else {
        None
    }
}

/// `None` when this rung cannot see anything the rung before it did not.
fn line_search(hay: &HayLines<'_>, needle: &Needle, rung: MatchRung, tab_width: usize) -> Option<Matches> {
    if rung == MatchRung::LineNumbers && needle.unnumbered.is_none() {
        return None;
    }
    let lines = needle.lines(rung)?;
    let keys: Vec<LineKey<'_>> = lines.iter().map(|l| LineKey::new(l)).collect();
    if rung == MatchRung::Tabs && !hay.has_leading_tab && !keys.iter().any(|k| k.lead().contains('\t')) {
        return None;
    }
    // A needle that folds to blank lines never matches.
    let anchor = keys.iter().position(|k| !k.blank())?;
    let k = keys.len();
    let n = hay.lines.len();
    let mut starts = Vec::new();
    if k <= n {
        for i in 0..=n - k {
            if hay.lines[i + anchor].key.rest() != keys[anchor].rest() {
                continue;
            }
            if block_matches(&hay.lines[i..i + k], &keys, rung, tab_width) {
                starts.push(i);
            }
        }
    }
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut last_end_line = 0;
    for &i in &starts {
        if !ranges.is_empty() && i < last_end_line {
            continue;
        }
        let last = &hay.lines[i + k - 1];
        let end = if needle.ends_with_newline { last.end } else { last.content_end };
        ranges.push(hay.lines[i].start..end);
        last_end_line = i + k;
    }
    Some(Matches { ranges, count: starts.len() })
}

fn block_matches(block: &[HayLine<'_>], keys: &[LineKey<'_>], rung: MatchRung, tab_width: usize) -> bool {
    let mut offset: Option<isize> = None;
    for (line, key) in block.iter().zip(keys) {
        let hay = &line.key;
        if hay.blank() || key.blank() {
            if hay.blank() && key.blank() {
                continue;
            }
            return false;
        }
        if hay.rest() != key.rest() {
            return false;
        }
        let same_indent = match rung {
            MatchRung::TrailingWhitespace | MatchRung::LineNumbers => hay.lead() == key.lead(),
            MatchRung::Tabs => hay.columns(tab_width) == key.columns(tab_width),
            _ => {
                let this = hay.columns(tab_width) as isize - key.columns(tab_width) as isize;
                *offset.get_or_insert(this) == this
            }
        };
        if !same_indent {
            return false;
        }
    }
    true
}

/// Columns of leading whitespace, a tab reaching the next multiple of
/// `tab_width`.
fn columns(lead: &str, tab_width: usize) -> usize {
    lead.chars().fold(0, |col, c| if c == '\t' { (col / tab_width + 1) * tab_width } else { col + 1 })
}

/// The tab width the Tabs and Indentation rungs use: the indentation unit
/// of whichever side indents with spaces (the model's if both do), as one
/// tab stands for one level; 4 when neither shows one.
fn tab_width(hay: &HayLines<'_>, needle: &Needle) -> usize {
    let needle_lines = needle.unnumbered.as_ref().unwrap_or(&needle.plain);
    let space_widths = |leads: &mut dyn Iterator<Item = &str>| {
        indent_unit(leads.filter(|l| !l.is_empty() && !l.contains('\t')).map(str::len))
    };
    let needle_keys: Vec<LineKey<'_>> = needle_lines.iter().map(|l| LineKey::new(l)).collect();
    space_widths(&mut needle_keys.iter().map(|k| k.lead()))
        .or_else(|| space_widths(&mut hay.lines.iter().map(HayLine::lead)))
        .unwrap_or(4)
}

/// One indentation level from the widths of space-indented lines: their
/// greatest common divisor, read as 4 when it is a multiple of 4.
fn indent_unit(widths: impl Iterator<Item = usize>) -> Option<usize> {
    let gcd = widths.fold(0, |g, w| {
        let (mut a, mut b) = (g, w);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    });
    match gcd {
        2 | 3 => Some(gcd),
        g if g > 0 && g % 4 == 0 => Some(4),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Planning: new_string in the file's style
// ---------------------------------------------------------------------------

/// Phase 2: what each match becomes, written in the file's style where it
/// lands (see the module doc).
pub fn plan(text: &str, found: &Found, old: &str, new: &str) -> Vec<Splice> {
    // The file's line ending costs two passes over the whole file: it is
    // looked at only when the replacement has line breaks to write.
    let file_ending = std::cell::OnceCell::new();
    let file_ending = || *file_ending.get_or_init(|| line_ending_of(text).unwrap_or(LineEnding::Lf));
    found
        .ranges
        .iter()
        .map(|range| {
            let replacement = if found.rung.line_wise() {
                restyle_lines(text, range.clone(), found, old, new, file_ending())
            } else {
                let matched = &text[range.clone()];
                // Without a line break in new_string, the ending is not used.
                let ending = match line_ending_of(matched) {
                    Some(ending) => ending,
                    None if new.contains('\n') => file_ending(),
                    None => LineEnding::Lf,
                };
                if found.rung >= MatchRung::Quotes {
                    restyle_chars(old, matched, new, ending)
                } else {
                    with_line_ending(new, ending)
                }
            };
            Splice { range: range.clone(), text: replacement }
        })
        .collect()
}

/// Phase 3: splice the replacements (sorted, not overlapping) into `text`.
pub fn apply(text: &str, replacements: &[Splice]) -> String {
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

/// How long restyling may spend diffing old_string's lines against
/// new_string's before it settles for a coarser diff.
const RESTYLE_DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// A line-wise match: lines the model kept are written as the file has them;
/// the others get the file's indentation, characters and line endings.
fn restyle_lines(
    text: &str,
    range: Range<usize>,
    found: &Found,
    old: &str,
    new: &str,
    file_ending: LineEnding,
) -> String {
    let needle = Needle::new(old);
    let numbered = found.rung >= MatchRung::LineNumbers && needle.unnumbered.is_some();
    let n_lines: &[String] = if numbered { needle.unnumbered.as_deref().unwrap_or(&needle.plain) } else { &needle.plain };
    let matched = &text[range.clone()];
    let mut hay = HayLines::new(matched);
    // A needle without a final line break whose last line matched an empty
    // line: that line is in the match, with no text.
    if !needle.ends_with_newline && (matched.is_empty() || matched.ends_with('\n')) {
        let end = matched.len();
        hay.lines.push(HayLine { start: end, content_end: end, end, key: LineKey::new("") });
    }
    let m_lines = &hay.lines;

    let (mut r_lines, r_ends_with_newline) = split_lines(new);
    if numbered {
        for line in &mut r_lines {
            if let Some((_, rest)) = split_number_prefix(line) {
                *line = rest.to_string();
            }
        }
    }

    // What the model wrote differently from the file, learned from the
    // lines that matched.
    let tab_width = found.tab_width.max(1);
    let mut style = CharStyle::default();
    let mut offset: isize = 0;
    let mut offset_known = false;
    let mut strip_trailing = false;
    for (n_line, m_line) in n_lines.iter().zip(m_lines) {
        let n_key = LineKey::new(n_line);
        let m_key = &m_line.key;
        let m_body = &matched[m_line.start..m_line.content_end];
        if n_key.blank() || m_key.blank() {
            strip_trailing |= n_key.trailing && !m_key.trailing;
            continue;
        }
        let n_rest = n_line.trim();
        let m_rest = m_body.trim();
        style.learn(n_rest, m_rest);
        strip_trailing |= n_key.trailing && !m_key.trailing;
        if !offset_known {
            offset = m_key.columns(tab_width) as isize - n_key.columns(tab_width) as isize;
            offset_known = true;
        }
    }
    let reindent = found.rung >= MatchRung::Tabs;
    let file_tabs = indents_with_tabs(m_lines, text);
    let ending = ending_str(file_ending);

    let n_refs: Vec<&str> = n_lines.iter().map(String::as_str).collect();
    let r_refs: Vec<&str> = r_lines.iter().map(String::as_str).collect();
    let deadline = Instant::now().checked_add(RESTYLE_DIFF_DEADLINE);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &n_refs, &r_refs, deadline);

    // Each output line with the line break that follows it inside the file.
    let mut out_lines: Vec<(String, Option<&str>)> = Vec::with_capacity(r_lines.len());
    for op in ops {
        match op {
            DiffOp::Equal { old_index, new_index, len } => {
                for t in 0..len {
                    match m_lines.get(old_index + t) {
                        Some(m_line) => {
                            let body = &matched[m_line.start..m_line.content_end];
                            let terminator = &matched[m_line.content_end..m_line.end];
                            let terminator = if terminator.is_empty() { None } else { Some(terminator) };
                            out_lines.push((body.to_string(), terminator));
                        }
                        None => out_lines.push((r_lines[new_index + t].clone(), None)),
                    }
                }
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert { new_index, new_len, .. } | DiffOp::Replace { new_index, new_len, .. } => {
                for line in &r_lines[new_index..new_index + new_len] {
                    let mut line = line.clone();
                    if strip_trailing {
                        line.truncate(line.trim_end().len());
                    }
                    if reindent && !line.trim().is_empty() {
                        line = reindented(&line, offset, tab_width, file_tabs);
                    }
                    out_lines.push((style.apply(&line), None));
                }
            }
        }
    }

    let mut out = String::with_capacity(new.len() + 16);
    let last = out_lines.len().saturating_sub(1);
    for (i, (line, terminator)) in out_lines.iter().enumerate() {
        out.push_str(line);
        if i < last {
            out.push_str(terminator.unwrap_or(ending));
        }
    }
    if r_ends_with_newline {
        // The line break the match ended with (none at the end of a file
        // without one), or the file's own.
        let matched_break = m_lines.last().map(|l| &matched[l.content_end..l.end]);
        match (needle.ends_with_newline, matched_break) {
            (true, Some(kept)) => out.push_str(kept),
            _ => out.push_str(ending),
        }
    }
    out
}

/// A character-rung match: the stretches of new_string the model copied
/// from old_string are written as the file has them (its quotes, dashes,
/// spaces, accents, line breaks); the rest gets the file's style as learned
/// from the match.
fn restyle_chars(old: &str, matched: &str, new: &str, ending: LineEnding) -> String {
    let old = with_line_ending(old, LineEnding::Lf);
    let new = with_line_ending(new, LineEnding::Lf);
    let mut style = CharStyle::default();
    style.learn(&old, matched);
    // Quote style looks at each quote's neighbours, so it is decided on the
    // whole of new_string (one character for one).
    let styled: Vec<char> =
        if style.quotes_differ { match_quote_style(&new, &style.quote_sample) } else { new.clone() }.chars().collect();
    let new_chars: Vec<char> = new.chars().collect();
    let old_chars: Vec<char> = old.chars().collect();
    if styled.len() != new_chars.len() {
        return with_line_ending(&style.apply(&new), ending);
    }
    // Byte offset of every character of old_string, and the file's text for
    // each piece old_string aligned with.
    let old_offsets: Vec<usize> = old.char_indices().map(|(i, _)| i).chain(std::iter::once(old.len())).collect();
    let pieces = aligned_pieces(&old, matched);
    let mut piece_at = Vec::with_capacity(pieces.len());
    let mut offset = 0;
    for (model, file) in &pieces {
        piece_at.push((offset, offset + model.len(), *file));
        offset += model.len();
    }
    let mut out = String::with_capacity(new.len() + 16);
    let restyled = |chars: &[char], out: &mut String| {
        let piece: String = chars.iter().collect();
        out.push_str(&with_line_ending(&style.apply_chars_only(&piece), ending));
    };
    let deadline = Instant::now().checked_add(RESTYLE_DIFF_DEADLINE);
    for op in capture_diff_slices_deadline(Algorithm::Myers, &old_chars, &new_chars, deadline) {
        match op {
            DiffOp::Equal { old_index, new_index, len } => {
                let (from, to) = (old_offsets[old_index], old_offsets[old_index + len]);
                // Whole aligned pieces inside the run are the file's bytes;
                // a piece cut by the run's ends is written as the model did.
                let mut cursor = from;
                let mut new_cursor = new_index;
                for &(start, end, file) in piece_at.iter().filter(|(start, end, _)| *end > from && *start < to) {
                    if start >= cursor && end <= to {
                        let skipped = old[cursor..start].chars().count();
                        restyled(&styled[new_cursor..new_cursor + skipped], &mut out);
                        new_cursor += skipped;
                        out.push_str(file);
                        new_cursor += old[start..end].chars().count();
                        cursor = end;
                    }
                }
                let rest = old[cursor..to].chars().count();
                restyled(&styled[new_cursor..new_cursor + rest], &mut out);
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert { new_index, new_len, .. } | DiffOp::Replace { new_index, new_len, .. } => {
                restyled(&styled[new_index..new_index + new_len], &mut out);
            }
        }
    }
    out
}

/// Does the file indent with tabs here? The matched lines decide; if none
/// of them is indented, the file's lines do.
fn indents_with_tabs(m_lines: &[HayLine<'_>], text: &str) -> bool {
    let first_indented = |lead: &str| lead.starts_with('\t');
    if let Some(line) = m_lines.iter().find(|l| !l.key.blank() && !l.lead().is_empty()) {
        return first_indented(line.lead());
    }
    let (mut tabs, mut spaces) = (0usize, 0usize);
    for line in text.lines().take(10_000) {
        if line.starts_with('\t') {
            tabs += 1;
        } else if line.starts_with("  ") {
            spaces += 1;
        }
    }
    tabs > spaces
}

/// `line` indented `offset` columns further, in the file's tabs or spaces.
fn reindented(line: &str, offset: isize, tab_width: usize, tabs: bool) -> String {
    let body = line.trim_start_matches([' ', '\t']);
    let lead = &line[..line.len() - body.len()];
    let cols = (columns(lead, tab_width) as isize + offset).max(0) as usize;
    let mut out = String::with_capacity(cols + body.len());
    if tabs {
        out.extend(std::iter::repeat_n('\t', cols / tab_width));
        out.extend(std::iter::repeat_n(' ', cols % tab_width));
    } else {
        out.extend(std::iter::repeat_n(' ', cols));
    }
    out.push_str(body);
    out
}

/// What the model's text does differently from the file's, learned from
/// pieces that matched, and applied to the model's new text.
#[derive(Default)]
struct CharStyle {
    /// The model's quotes differ from the file's: restyle to `quote_sample`.
    quotes_differ: bool,
    quote_sample: String,
    /// The model's dash, ellipsis or space → the file's; `None` once the
    /// model's character stood for two different ones.
    map: Vec<(String, Option<String>)>,
    model_nfc: bool,
    model_nfd: bool,
    file_nfc: bool,
    file_nfd: bool,
    learned: bool,
}

impl CharStyle {
    fn learn(&mut self, model: &str, file: &str) {
        if !self.learned {
            self.learned = true;
            (self.model_nfc, self.model_nfd, self.file_nfc, self.file_nfd) = (true, true, true, true);
        }
        let model_quotes = model.chars().filter(|&c| is_quote(c));
        if !model_quotes.eq(file.chars().filter(|&c| is_quote(c))) {
            self.quotes_differ = true;
        }
        self.quote_sample.push_str(file);
        self.quote_sample.push('\n');
        self.model_nfc &= is_nfc(model);
        self.model_nfd &= is_nfd(model);
        self.file_nfc &= is_nfc(file);
        self.file_nfd &= is_nfd(file);
        for (from, to) in aligned_pieces(model, file) {
            if !is_styled(from) && !is_styled(to) {
                continue;
            }
            match self.map.iter_mut().find(|(key, _)| key == from) {
                Some((_, target)) => {
                    if target.as_deref() != Some(to) {
                        *target = None;
                    }
                }
                None => self.map.push((from.to_string(), Some(to.to_string()))),
            }
        }
    }

    fn apply(&self, new: &str) -> String {
        let quoted = if self.quotes_differ { match_quote_style(new, &self.quote_sample) } else { new.to_string() };
        self.apply_chars_only(&quoted)
    }

    /// Everything but quotes: dashes, ellipses, spaces, normalization form.
    fn apply_chars_only(&self, new: &str) -> String {
        let mut out = new.to_string();
        let map: Vec<(&str, &str)> = self
            .map
            .iter()
            .filter_map(|(from, to)| Some((from.as_str(), to.as_deref()?)))
            .filter(|(from, to)| from != to)
            .collect();
        if !map.is_empty() {
            out = apply_map(&out, &map);
        }
        if !self.learned {
            return out;
        }
        if self.file_nfc && !self.model_nfc {
            out = out.nfc().collect();
        } else if self.file_nfd && !self.model_nfd {
            out = out.nfd().collect();
        }
        out
    }
}

/// Characters whose style is learned: dashes, spaces and ellipses, plain
/// or typographic.
fn is_styled(piece: &str) -> bool {
    let mut chars = piece.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => c == '-' || c == ' ' || c == '\u{2026}' || is_dash(c) || is_space(c),
        _ => piece == "...",
    }
}

/// Replace the model's characters by the file's. A plain `-` becomes the
/// file's dash only where it stands apart (`a - b`) or, for an en dash,
/// between digits (`3-5`); never inside a word (`well-known`).
fn apply_map(text: &str, map: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    let mut previous: Option<char> = None;
    while let Some(c) = text[pos..].chars().next() {
        let rest = &text[pos..];
        let hit = map.iter().find(|(from, _)| rest.starts_with(from));
        match hit {
            Some((from, to)) => {
                let next = rest[from.len()..].chars().next();
                let apart = previous.is_none_or(char::is_whitespace) || next.is_none_or(char::is_whitespace);
                let range = *to == "\u{2013}" && previous.is_some_and(|c| c.is_ascii_digit()) && next.is_some_and(|c| c.is_ascii_digit());
                if *from == "-" && !apart && !range {
                    out.push('-');
                } else {
                    out.push_str(to);
                }
                previous = from.chars().last();
                pos += from.len();
            }
            None => {
                out.push(c);
                previous = Some(c);
                pos += c.len_utf8();
            }
        }
    }
    out
}

/// The model's and the file's text cut at every boundary the two share
/// after Unicode folding: `("...", "…")`, `("-", "—")`, `("x", "x")`.
fn aligned_pieces<'m, 'f>(model: &'m str, file: &'f str) -> Vec<(&'m str, &'f str)> {
    let model_units: Vec<(Range<usize>, usize)> =
        units(model, MatchRung::Unicode).map(|(r, folded)| (r, folded.len())).collect();
    let file_units: Vec<(Range<usize>, usize)> =
        units(file, MatchRung::Unicode).map(|(r, folded)| (r, folded.len())).collect();
    let mut pieces = Vec::new();
    let (mut i, mut j) = (0, 0);
    let (mut model_folded, mut file_folded) = (0, 0);
    let (mut model_start, mut file_start) = (0, 0);
    while i < model_units.len() || j < file_units.len() {
        if (model_folded <= file_folded && i < model_units.len()) || j >= file_units.len() {
            model_folded += model_units[i].1;
            i += 1;
        } else {
            file_folded += file_units[j].1;
            j += 1;
        }
        // Catch up the other side to the same folded length.
        while model_folded < file_folded && i < model_units.len() {
            model_folded += model_units[i].1;
            i += 1;
        }
        while file_folded < model_folded && j < file_units.len() {
            file_folded += file_units[j].1;
            j += 1;
        }
        if model_folded == file_folded {
            let model_end = model_units[i - 1].0.end;
            let file_end = file_units[j - 1].0.end;
            pieces.push((&model[model_start..model_end], &file[file_start..file_end]));
            model_start = model_end;
            file_start = file_end;
        }
    }
    pieces
}

/// Write `new`'s quotes the way `matched` (the file's text) writes them:
/// curly where the file used curly quotes of that kind, straight where it
/// used straight ones. A kind the file's text does not show is left alone.
pub(crate) fn match_quote_style(new: &str, matched: &str) -> String {
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

// ---------------------------------------------------------------------------
// The nearest candidate, for refusals
// ---------------------------------------------------------------------------

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
const MAX_CANDIDATE_LINES: usize = 30;
/// Characters of one shown line before it is cut.
const MAX_CANDIDATE_LINE_CHARS: usize = 300;
/// A needle line found in more places than this casts no votes: it says
/// little about where the block is (`}`, blank lines).
const MAX_VOTES_PER_LINE: usize = 16;
/// How alike (Dice on character pairs, 0–1) a line must be to be offered
/// when no line of old_string is in the file.
const MIN_LINE_SIMILARITY: f64 = 0.6;

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
fn lenient_hash(line: &str) -> Option<u64> {
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
fn similar_line_window(hay: &[&str], needle_lines: &[String]) -> Option<usize> {
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
fn char_pairs(line: &str) -> Vec<u16> {
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

fn ending_str(ending: LineEnding) -> &'static str {
    match ending {
        LineEnding::Lf => "\n",
        LineEnding::CrLf => "\r\n",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn edit(text: &str, old: &str, new: &str, replace_all: bool) -> Result<(MatchRung, String), FindError> {
        let found = find(text, old, replace_all)?;
        Ok((found.rung, apply(text, &plan(text, &found, old, new))))
    }

    fn not_unique(count: usize, rung: MatchRung, lines: &[usize]) -> Result<(MatchRung, String), FindError> {
        Err(FindError::NotUnique { count, rung, lines: lines.to_vec() })
    }

    #[test]
    fn exact_then_line_endings_then_quotes() {
        assert_eq!(edit("a b a", "b", "c", false), Ok((MatchRung::Exact, "a c a".into())));
        assert_eq!(edit("x\r\ny\r\nz\r\n", "x\ny\n", "1\n2\n3\n", false), Ok((MatchRung::LineEndings, "1\r\n2\r\n3\r\nz\r\n".into())));
        assert_eq!(edit("say “hi” now", "say \"hi\"", "say \"bye\"", false), Ok((MatchRung::Quotes, "say “bye” now".into())));
        assert_eq!(edit("say \"hi\" now", "say “hi”", "say “bye”", false), Ok((MatchRung::Quotes, "say \"bye\" now".into())));
        assert_eq!(edit("a a", "a", "b", false), not_unique(2, MatchRung::Exact, &[1, 1]));
        assert_eq!(edit("a a", "a", "b", true), Ok((MatchRung::Exact, "b b".into())));
        assert_eq!(edit("abc", "x", "y", false), Err(FindError::NotFound));
    }

    #[test]
    fn overlapping_occurrences_are_not_unique() {
        assert_eq!(edit("aaa", "aa", "b", false), not_unique(2, MatchRung::Exact, &[1]));
        assert_eq!(edit("aaa", "aa", "b", true), Ok((MatchRung::Exact, "ba".into())));
        assert_eq!(edit("}\n}\n}\n", "}  \n}\n", "]\n", false), not_unique(2, MatchRung::TrailingWhitespace, &[1]));
    }

    #[test]
    fn no_match_splits_a_crlf() {
        // Exactly, "\nb" is in "a\r\nb"; it starts inside the line break, so
        // the line-ending rung takes the whole break (found by the property test).
        assert_eq!(edit("a\r\nb\r\n", "\nb", "\nc", false), Ok((MatchRung::LineEndings, "a\r\nc\r\n".into())));
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
    fn unicode_rung_folds_dashes_ellipses_spaces_and_forms() {
        // The model's em dash for the file's hyphen; its new text follows the file.
        assert_eq!(edit("x = a - b\n", "a \u{2014} b", "a \u{2014} c", false), Ok((MatchRung::Unicode, "x = a - c\n".into())));
        // The file's en dash for the model's hyphen: only a free-standing hyphen becomes one.
        assert_eq!(
            edit("pages 3\u{2013}5 \u{2013} see\n", "3-5 - see", "3-6 - well-known", false),
            Ok((MatchRung::Unicode, "pages 3\u{2013}6 \u{2013} well-known\n".into()))
        );
        assert_eq!(edit("wait\u{2026} ok", "wait... ok", "wait... no", false), Ok((MatchRung::Unicode, "wait\u{2026} no".into())));
        // A fold at the very end of the match (found by the property test).
        assert_eq!(edit("a \u{2014} b\u{2026}", "a - b...", "a - c...", false), Ok((MatchRung::Unicode, "a \u{2014} c\u{2026}".into())));
        assert_eq!(edit("10\u{a0}km", "10 km", "12 km", false), Ok((MatchRung::Unicode, "12\u{a0}km".into())));
        // Copied stretches keep the file's characters, new ones are the model's.
        assert_eq!(
            edit("Price: 10\u{a0}\u{20ac} per seat\n", "10 \u{20ac} per seat", "12 \u{20ac} per seat, per month", false),
            Ok((MatchRung::Unicode, "Price: 12\u{a0}\u{20ac} per seat, per month\n".into()))
        );
        // NFD in the model, NFC in the file, and the reverse.
        assert_eq!(edit("caf\u{e9} au lait", "cafe\u{301} au", "cafe\u{301} noir au", false), Ok((MatchRung::Unicode, "caf\u{e9} noir au lait".into())));
        assert_eq!(edit("cafe\u{301} au lait", "caf\u{e9} au", "th\u{e9} au", false), Ok((MatchRung::Unicode, "the\u{301} au lait".into())));
    }

    #[test]
    fn no_match_splits_a_letter_from_its_accent() {
        // "cafe" is not in "cafe\u{301}": the accent belongs to the e.
        assert_eq!(edit("cafe\u{301}\n", "cafe", "cafes", false), Err(FindError::NotFound));
        assert_eq!(edit("cafe\u{301}\n", "caf\u{e9}", "cafes", false), Ok((MatchRung::Unicode, "cafes\n".into())));
    }

    #[test]
    fn a_rung_that_folds_old_string_to_blank_never_matches() {
        assert_eq!(edit("a\r\n\r\nb", "\n\n", "x", false), Err(FindError::NotFound));
        assert_eq!(edit("a\u{a0}b", "\u{2002}", "x", false), Err(FindError::NotFound));
        assert_eq!(edit("a  \n\nb\n", "\t\n \n", "x", false), Err(FindError::NotFound));
    }

    #[test]
    fn line_rungs_match_whole_lines_only() {
        // Trailing spaces, and the end of the file as a line break.
        assert_eq!(edit("if x:\n    y()\n", "if x:  \n    y()\n", "if x:\n    z()\n", false), Ok((MatchRung::TrailingWhitespace, "if x:\n    z()\n".into())));
        assert_eq!(edit("a\nb", "a\nb\n", "a\nc\n", false), Ok((MatchRung::TrailingWhitespace, "a\nc".into())));
        // old_string ending in an empty line (found by the property test).
        assert_eq!(edit("a\n\nb\n", "a  \n ", "c\n ", false), Ok((MatchRung::TrailingWhitespace, "c\n\nb\n".into())));
        // A line-wise rung never takes half a line.
        assert_eq!(edit("let ab = 1;\nx\n", "ab = 1;  \nx\n", "ab = 2;\nx\n", false), Err(FindError::NotFound));
    }

    #[test]
    fn line_number_prefixes_are_stripped_from_old_and_new() {
        let text = "def f():\n    return 1\n";
        assert_eq!(
            edit(text, "   1 | def f():\n   2 |     return 1\n", "   1 | def f():\n   2 |     return 2\n", false),
            Ok((MatchRung::LineNumbers, "def f():\n    return 2\n".into()))
        );
        // Numbers that do not count up are not read_file's prefixes.
        assert_eq!(edit(text, "   1 | def f():\n   3 |     return 1\n", "x", false), Err(FindError::NotFound));
        // A new_string that only looks numbered is kept when old_string was not numbered.
        assert_eq!(
            edit("| a |\n", "| a |  \n", "  1 | a |\n", false),
            Ok((MatchRung::TrailingWhitespace, "  1 | a |\n".into()))
        );
    }

    #[test]
    fn tabs_and_indentation_follow_the_file() {
        let text = "def f():\n\tif x:\n\t\treturn 1\n";
        assert_eq!(
            edit(text, "    if x:\n        return 1\n", "    if x:\n        log()\n        return 2\n", false),
            Ok((MatchRung::Tabs, "def f():\n\tif x:\n\t\tlog()\n\t\treturn 2\n".into()))
        );
        let text = "class A:\n    def f(self):\n        return 1\n";
        assert_eq!(
            edit(text, "def f(self):\n    return 1\n", "def f(self):\n    x = 1\n    return x\n", false),
            Ok((MatchRung::Indentation, "class A:\n    def f(self):\n        x = 1\n        return x\n".into()))
        );
        // Two halves indented differently are not one block.
        assert_eq!(edit(text, "def f(self):\n            return 1\n", "x", false), Err(FindError::NotFound));
    }

    #[test]
    fn ambiguity_after_folding_names_the_rung() {
        let text = "a:\n  x: 1\nb:\n    x: 1\n";
        assert_eq!(edit(text, "x: 1  \n", "x: 2\n", false), not_unique(2, MatchRung::Indentation, &[2, 4]));
        assert_eq!(edit(text, "x: 1  \n", "x: 2\n", true), Ok((MatchRung::Indentation, "a:\n  x: 2\nb:\n    x: 2\n".into())));
    }

    #[test]
    fn nearest_candidate_names_the_window_and_the_differing_lines() {
        let text: String = (1..=60).map(|i| format!("line {i}\n")).collect();
        let candidate = nearest(&text, "line 40\nline 41\nLINE 42\nline 43\nline x\n").unwrap();
        assert_eq!((candidate.lines, candidate.differing), (39..44, 2));
        assert!(candidate.shown.starts_with("  40 | line 40\n  41 | line 41"), "{}", candidate.shown);
        // No equal line: the most similar line anchors the window.
        let candidate = nearest("fn main() {\n    let total = compute(a, b);\n}\n", "let totl = compute(a, b);").unwrap();
        assert_eq!((candidate.lines, candidate.differing), (1..2, 1));
        assert_eq!(nearest("abc\n", "zzzz qqqq"), None);
    }
}
