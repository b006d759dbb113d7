//! Planning: `new_string` written in the file's style where it lands.

use std::ops::Range;

use crate::diff::DiffOp;
use unicode_normalization::{is_nfc, is_nfd, UnicodeNormalization};

use crate::tools::support::text::{line_ending_of, with_line_ending, LineEnding};
use super::*;
use crate::workspace::Splice;

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

/// A line-wise match: lines the model kept are written as the file has them;
/// the others get the file's indentation, characters and line endings.
pub(super) fn restyle_lines(
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
    // Bounded (crate::diff): past its deadline a coarser diff.
    let ops = crate::diff::slices(&n_refs, &r_refs);

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
pub(super) fn restyle_chars(old: &str, matched: &str, new: &str, ending: LineEnding) -> String {
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
    for op in crate::diff::slices(&old_chars, &new_chars) {
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
pub(super) fn indents_with_tabs(m_lines: &[HayLine<'_>], text: &str) -> bool {
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
pub(super) fn reindented(line: &str, offset: isize, tab_width: usize, tabs: bool) -> String {
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
pub(super) struct CharStyle {
    /// The model's quotes differ from the file's: restyle to `quote_sample`.
    pub(super) quotes_differ: bool,
    pub(super) quote_sample: String,
    /// The model's dash, ellipsis or space → the file's; `None` once the
    /// model's character stood for two different ones.
    pub(super) map: Vec<(String, Option<String>)>,
    pub(super) model_nfc: bool,
    pub(super) model_nfd: bool,
    pub(super) file_nfc: bool,
    pub(super) file_nfd: bool,
    pub(super) learned: bool,
}

impl CharStyle {
    pub(super) fn learn(&mut self, model: &str, file: &str) {
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

    pub(super) fn apply(&self, new: &str) -> String {
        let quoted = if self.quotes_differ { match_quote_style(new, &self.quote_sample) } else { new.to_string() };
        self.apply_chars_only(&quoted)
    }

    /// Everything but quotes: dashes, ellipses, spaces, normalization form.
    pub(super) fn apply_chars_only(&self, new: &str) -> String {
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
pub(super) fn is_styled(piece: &str) -> bool {
    let mut chars = piece.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => c == '-' || c == ' ' || c == '\u{2026}' || is_dash(c) || is_space(c),
        _ => piece == "...",
    }
}

/// Replace the model's characters by the file's. A plain `-` becomes the
/// file's dash only where it stands apart (`a - b`) or, for an en dash,
/// between digits (`3-5`); never inside a word (`well-known`).
pub(super) fn apply_map(text: &str, map: &[(&str, &str)]) -> String {
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
pub(super) fn aligned_pieces<'m, 'f>(model: &'m str, file: &'f str) -> Vec<(&'m str, &'f str)> {
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
pub(super) enum QuoteStyle {
    Curly,
    Straight,
    Unknown,
}

pub(super) fn quote_style(matched: &str, straight: char, curly: [char; 2]) -> QuoteStyle {
    if matched.contains(curly) {
        QuoteStyle::Curly
    } else if matched.contains(straight) {
        QuoteStyle::Straight
    } else {
        QuoteStyle::Unknown
    }
}

pub(super) fn restyle(
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

pub(super) fn ending_str(ending: LineEnding) -> &'static str {
    match ending {
        LineEnding::Lf => "\n",
        LineEnding::CrLf => "\r\n",
    }
}
