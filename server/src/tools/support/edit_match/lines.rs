//! The line-wise rungs: whole lines compared, trailing whitespace ignored,
//! then line-number prefixes stripped, then leading whitespace in columns,
//! then one indentation offset shared by the block.

use std::borrow::Cow;
use std::ops::Range;

use super::*;

/// One line of the file: where it starts, where its text ends (before
/// `\r\n` or `\n`) and where the next line starts.
pub(super) struct HayLine<'a> {
    pub(super) start: usize,
    pub(super) content_end: usize,
    pub(super) end: usize,
    pub(super) key: LineKey<'a>,
}

pub(super) struct HayLines<'a> {
    pub(super) lines: Vec<HayLine<'a>>,
    pub(super) has_leading_tab: bool,
}

impl<'a> HayLines<'a> {
    pub(super) fn new(text: &'a str) -> Self {
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
pub(super) struct LineKey<'a> {
    pub(super) folded: Cow<'a, str>,
    pub(super) lead_len: usize,
    pub(super) rest_end: usize,
    /// Did the line end in whitespace (before folding)?
    pub(super) trailing: bool,
}

impl<'a> LineKey<'a> {
    pub(super) fn new(line: &'a str) -> Self {
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

    pub(super) fn lead(&self) -> &str {
        &self.folded[..self.lead_len]
    }

    pub(super) fn rest(&self) -> &str {
        &self.folded[self.lead_len..self.rest_end]
    }

    pub(super) fn blank(&self) -> bool {
        self.rest_end == 0
    }

    pub(super) fn columns(&self, tab_width: usize) -> usize {
        columns(self.lead(), tab_width)
    }
}

impl HayLine<'_> {
    pub(super) fn lead(&self) -> &str {
        self.key.lead()
    }
}

/// `old_string` as lines, read plainly and (if it carries them) without
/// `read_file`'s line-number prefixes.
pub(super) struct Needle {
    pub(super) plain: Vec<String>,
    pub(super) unnumbered: Option<Vec<String>>,
    pub(super) ends_with_newline: bool,
}

impl Needle {
    pub(super) fn new(old: &str) -> Self {
        let (plain, ends_with_newline) = split_lines(old);
        let unnumbered = strip_numbered(&plain);
        Needle { plain, unnumbered, ends_with_newline }
    }

    pub(super) fn lines(&self, rung: MatchRung) -> Option<&[String]> {
        match (rung, &self.unnumbered) {
            (MatchRung::LineNumbers, None) => None,
            (rung, Some(unnumbered)) if rung >= MatchRung::LineNumbers => Some(unnumbered),
            _ => Some(&self.plain),
        }
    }
}

/// `text` split at `\n` (a `\r` before it dropped), and whether it ended
/// with a line break (then there is no empty last line).
pub(super) fn split_lines(text: &str) -> (Vec<String>, bool) {
    let ends_with_newline = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines = body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect();
    (lines, ends_with_newline)
}

/// The lines without their `  12 | ` prefixes, if every line has one in
/// `read_file`'s format and the numbers count up by one.
pub(super) fn strip_numbered(lines: &[String]) -> Option<Vec<String>> {
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
pub(super) fn line_search(hay: &HayLines<'_>, needle: &Needle, rung: MatchRung, tab_width: usize) -> Option<Matches> {
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

pub(super) fn block_matches(block: &[HayLine<'_>], keys: &[LineKey<'_>], rung: MatchRung, tab_width: usize) -> bool {
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
pub(super) fn columns(lead: &str, tab_width: usize) -> usize {
    lead.chars().fold(0, |col, c| if c == '\t' { (col / tab_width + 1) * tab_width } else { col + 1 })
}

/// The tab width the Tabs and Indentation rungs use: the indentation unit
/// of whichever side indents with spaces (the model's if both do), as one
/// tab stands for one level; 4 when neither shows one.
pub(super) fn tab_width(hay: &HayLines<'_>, needle: &Needle) -> usize {
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
pub(super) fn indent_unit(widths: impl Iterator<Item = usize>) -> Option<usize> {
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
