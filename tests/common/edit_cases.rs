//! Random edit cases for the edit ladder, shared by the property test
//! (`tests/integration/edit_ladder_props.rs`) and the benchmark
//! (`examples/edit_ladder.rs`): a file, a span, the span's text perturbed by
//! the folds the ladder forgives (sometimes also damaged beyond them), and an
//! independent, slow statement of what each rung accepts.
#![allow(dead_code, clippy::unwrap_used)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tandem::tools::support::edit_match::MatchRung;
use unicode_normalization::UnicodeNormalization;

const WORDS: &[&str] = &[
    "x", "foo", "bar", "=", "-", "\u{2014}", "\u{2013}", "...", "\u{2026}", "\"a\"", "\u{201C}a\u{201D}", "'b'",
    "\u{2018}b\u{2019}", "caf\u{e9}", "cafe\u{301}", "10\u{a0}km", "10 km", "n", "{", "}", "()", "don't",
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Indent {
    Tabs,
    Spaces(usize),
}

#[derive(Debug)]
struct File {
    text: String,
    indent: Indent,
    crlf: bool,
}

fn random_file(rng: &mut StdRng) -> File {
    let indent = match rng.random_range(0..3) {
        0 => Indent::Tabs,
        1 => Indent::Spaces(4),
        _ => Indent::Spaces(2),
    };
    let crlf = rng.random_bool(0.3);
    let unique_ids = rng.random_bool(0.5);
    let line_count = rng.random_range(1..14);
    let mut lines: Vec<String> = Vec::new();
    for i in 0..line_count {
        // Repeat an earlier line now and then: the same text in two places.
        if i > 0 && rng.random_bool(0.25) {
            let earlier = lines[rng.random_range(0..lines.len())].clone();
            lines.push(earlier);
            continue;
        }
        let level = rng.random_range(0..4);
        let mut line = match indent {
            Indent::Tabs => "\t".repeat(level),
            Indent::Spaces(unit) => " ".repeat(unit * level),
        };
        if rng.random_bool(0.1) {
            lines.push(String::new());
            continue;
        }
        let words = rng.random_range(1..5);
        for w in 0..words {
            if w > 0 {
                line.push(' ');
            }
            line.push_str(WORDS[rng.random_range(0..WORDS.len())]);
        }
        if unique_ids && rng.random_bool(0.7) {
            line.push_str(&format!(" id{i:03}"));
        }
        if rng.random_bool(0.15) {
            line.push_str(["  ", "\t", " "][rng.random_range(0..3)]);
        }
        lines.push(line);
    }
    let ending = if crlf { "\r\n" } else { "\n" };
    let mut text = lines.join(ending);
    if rng.random_bool(0.7) {
        text.push_str(ending);
    }
    File { text, indent, crlf }
}

/// Character folds, each applied to a random part of the occurrences.
fn char_folds(rng: &mut StdRng, span: &str, rung: &mut MatchRung) -> String {
    let mut out = span.to_string();
    if out.contains("\r\n") && rng.random_bool(0.5) {
        out = out.replace("\r\n", "\n");
        *rung = (*rung).max(MatchRung::LineEndings);
    }
    if rng.random_bool(0.5) {
        let mut changed = false;
        out = out
            .chars()
            .map(|c| {
                let swapped = match c {
                    '"' => '\u{201C}',
                    '\'' => '\u{2019}',
                    '\u{201C}' | '\u{201D}' => '"',
                    '\u{2018}' | '\u{2019}' => '\'',
                    _ => return c,
                };
                if rng.random_bool(0.6) {
                    changed = true;
                    swapped
                } else {
                    c
                }
            })
            .collect();
        if changed {
            *rung = (*rung).max(MatchRung::Quotes);
        }
    }
    if rng.random_bool(0.5) {
        let before = out.clone();
        let mut s = String::with_capacity(out.len());
        for c in out.chars() {
            let swapped = match c {
                '-' => Some("\u{2014}"),
                '\u{2014}' | '\u{2013}' => Some("-"),
                '\u{2026}' => Some("..."),
                '\u{a0}' => Some(" "),
                ' ' => Some("\u{a0}"),
                _ => None,
            };
            match swapped {
                Some(to) if rng.random_bool(0.5) => s.push_str(to),
                _ => s.push(c),
            }
        }
        out = s;
        if rng.random_bool(0.3) {
            out = out.replace("...", "\u{2026}");
        }
        if rng.random_bool(0.3) {
            out = if rng.random_bool(0.5) { out.nfd().collect() } else { out.nfc().collect() };
        }
        if out != before {
            *rung = (*rung).max(MatchRung::Unicode);
        }
    }
    out
}

/// A span of whole lines, `first..=last` (0-based), and whether it takes the
/// last line's line break.
fn line_span(text: &str, first: usize, last: usize, with_break: bool) -> std::ops::Range<usize> {
    let mut starts = vec![0];
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            starts.push(i + 1);
        }
    }
    let start = starts[first];
    let next = starts.get(last + 1).copied().unwrap_or(text.len());
    let content_end = {
        let body = &text[starts[last]..next];
        let body = body.strip_suffix('\n').unwrap_or(body);
        starts[last] + body.strip_suffix('\r').unwrap_or(body).len()
    };
    start..if with_break { next } else { content_end }
}

fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

fn is_continuing(c: char) -> bool {
    !c.is_ascii() && unicode_normalization::char::canonical_combining_class(c) != 0
}

/// Move `at` back to a boundary the ladder can match at: not inside a
/// `\r\n`, not before a combining mark.
fn unit_boundary(text: &str, mut at: usize) -> usize {
    loop {
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let splits_crlf = at > 0 && text.as_bytes()[at - 1] == b'\r' && text.as_bytes().get(at) == Some(&b'\n');
        let before_mark = text[at..].chars().next().is_some_and(is_continuing);
        if at == 0 || !(splits_crlf || before_mark) {
            return at;
        }
        at -= 1;
    }
}

#[derive(Debug)]
pub struct Case {
    pub file: String,
    pub span: std::ops::Range<usize>,
    pub old: String,
    /// The loosest rung the perturbation needs.
    pub rung: MatchRung,
    /// Also changed in a way no rung forgives (a word, one line's
    /// indentation, a line break): the span itself may no longer match.
    pub damaged: bool,
}

pub fn random_case(seed: u64) -> Option<Case> {
    let mut rng = StdRng::seed_from_u64(seed);
    let file = random_file(&mut rng);
    let text = &file.text;
    if text.trim().is_empty() {
        return None;
    }
    let mut rung = MatchRung::Exact;
    if rng.random_bool(0.4) {
        // A span anywhere, with character folds only.
        let a = unit_boundary(text, rng.random_range(0..text.len()));
        let b = unit_boundary(text, rng.random_range(0..=text.len()));
        let span = a.min(b)..a.max(b);
        if span.is_empty() {
            return None;
        }
        let old = char_folds(&mut rng, &text[span.clone()], &mut rung);
        let (old, damaged) = damage(&mut rng, old);
        return Some(Case { file: file.text.clone(), span, old, rung, damaged });
    }
    // Whole lines, with line folds too.
    let lines = line_count(text);
    let first = rng.random_range(0..lines);
    let last = rng.random_range(first..lines.min(first + 4));
    let with_break = rng.random_bool(0.7);
    let span = line_span(text, first, last, with_break);
    let original = &text[span.clone()];
    let (body, had_break) = match original.strip_suffix('\n') {
        Some(body) => (body.strip_suffix('\r').unwrap_or(body), true),
        None => (original, false),
    };
    let mut old_lines: Vec<String> = body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect();
    let mut ends_with_newline = had_break;
    // The end of a file without a final newline, sent with one.
    if with_break && !had_break && span.end == text.len() && rng.random_bool(0.5) {
        ends_with_newline = true;
        rung = rung.max(MatchRung::TrailingWhitespace);
    }
    if rng.random_bool(0.4) {
        for line in &mut old_lines {
            if rng.random_bool(0.5) {
                let trimmed = line.trim_end().len();
                if trimmed < line.len() {
                    line.truncate(trimmed);
                } else {
                    line.push_str([" ", "  ", "\t"][rng.random_range(0..3)]);
                }
                rung = rung.max(MatchRung::TrailingWhitespace);
            }
        }
    }
    let non_blank: Vec<usize> = (0..old_lines.len()).filter(|&i| !old_lines[i].trim().is_empty()).collect();
    match rng.random_range(0..3) {
        // Tabs for spaces or spaces for tabs, one tab for four columns.
        0 if file.indent != Indent::Spaces(2) => {
            for line in &mut old_lines {
                let body = line.trim_start_matches([' ', '\t']).to_string();
                let lead = &line[..line.len() - body.len()];
                let new_lead = match file.indent {
                    Indent::Tabs => lead.replace('\t', "    "),
                    _ => lead.replace("    ", "\t"),
                };
                if new_lead != lead {
                    rung = rung.max(MatchRung::Tabs);
                }
                *line = format!("{new_lead}{body}");
            }
        }
        // The whole block indented one step further or less.
        1 if !non_blank.is_empty() => {
            let step = match file.indent {
                Indent::Tabs => "\t".to_string(),
                Indent::Spaces(_) => " ".repeat(rng.random_range(1..5)),
            };
            let deeper = rng.random_bool(0.5) || !non_blank.iter().all(|&i| old_lines[i].starts_with(&step));
            for &i in &non_blank {
                let line = &mut old_lines[i];
                if deeper {
                    line.insert_str(0, &step);
                } else {
                    line.replace_range(..step.len(), "");
                }
            }
            rung = rung.max(MatchRung::Indentation);
        }
        _ => {}
    }
    let mut old = old_lines.join("\n");
    if ends_with_newline {
        old.push('\n');
    }
    if file.crlf && old.contains('\n') {
        if rng.random_bool(0.5) {
            old = old.replace('\n', "\r\n");
        } else {
            rung = rung.max(MatchRung::LineEndings);
        }
    }
    old = char_folds(&mut rng, &old, &mut rung);
    if rng.random_bool(0.25) {
        let (body, newline) = match old.strip_suffix('\n') {
            Some(body) => (body.to_string(), "\n"),
            None => (old.clone(), ""),
        };
        let numbered: Vec<String> =
            body.split('\n').enumerate().map(|(i, l)| format!("{:>4} | {l}", first + i + 1)).collect();
        old = numbered.join("\n") + newline;
        rung = rung.max(MatchRung::LineNumbers);
    }
    let (old, damaged) = damage(&mut rng, old);
    Some(Case { file: file.text, span, old, rung, damaged })
}


/// Now and then, a change no rung forgives: one line's indentation alone,
/// a word, a line break removed or added.
fn damage(rng: &mut StdRng, old: String) -> (String, bool) {
    if !rng.random_bool(0.3) {
        return (old, false);
    }
    let mut lines: Vec<String> = old.split('\n').map(str::to_string).collect();
    let i = rng.random_range(0..lines.len());
    match rng.random_range(0..4) {
        0 => lines[i].insert(0, if rng.random_bool(0.5) { '\t' } else { ' ' }),
        1 => lines[i] = lines[i].replacen("x", "y", 1).replacen("foo", "fooo", 1),
        2 if lines.len() > 1 && i + 1 < lines.len() => {
            let next = lines.remove(i + 1);
            lines[i].push_str(&next);
        }
        _ => lines.insert(i, String::new()),
    }
    let damaged = lines.join("\n");
    let changed = damaged != old;
    (damaged, changed)
}

// An independent statement of what each rung accepts, written for clarity
// rather than speed, to judge every match the ladder makes.

fn fold_chars(text: &str, rung: MatchRung) -> String {
    let mut out = if rung >= MatchRung::LineEndings { text.replace("\r\n", "\n") } else { text.to_string() };
    if rung >= MatchRung::Quotes {
        out = out.replace(['\u{2018}', '\u{2019}'], "'").replace(['\u{201C}', '\u{201D}'], "\"");
    }
    if rung >= MatchRung::Unicode {
        out = out
            .replace('\u{2026}', "...")
            .replace(['\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}'], "-")
            .replace(['\u{a0}', '\u{2002}', '\u{2003}', '\u{2009}', '\u{202F}'], " ")
            .nfc()
            .collect();
    }
    out
}

fn columns(lead: &str, tab_width: usize) -> usize {
    lead.chars().fold(0, |col, c| if c == '\t' { (col / tab_width + 1) * tab_width } else { col + 1 })
}

fn strip_prefixes(lines: &[String]) -> Option<Vec<String>> {
    lines
        .iter()
        .map(|l| {
            let t = l.trim_start_matches(' ');
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits == 0 {
                return None;
            }
            let rest = &t[digits..];
            rest.strip_prefix(" | ").or(if rest == " |" { Some("") } else { None }).map(str::to_string)
        })
        .collect()
}

/// Does the file's `range` match `old` by the definition of `rung`?
pub fn justified(file: &str, range: std::ops::Range<usize>, old: &str, rung: MatchRung) -> bool {
    let landed = &file[range.clone()];
    // Never a split line break or a letter cut from its accent.
    let splits_crlf = |at: usize| at > 0 && file.as_bytes()[at - 1] == b'\r' && file.as_bytes().get(at) == Some(&b'\n');
    if file[range.end..].chars().next().is_some_and(is_continuing) || splits_crlf(range.start) || splits_crlf(range.end) {
        return false;
    }
    if rung < MatchRung::TrailingWhitespace {
        return rung == MatchRung::Exact && landed == old
            || rung > MatchRung::Exact && !fold_chars(old, rung).trim().is_empty() && fold_chars(landed, rung) == fold_chars(old, rung);
    }
    // Whole lines only.
    let starts_line = range.start == 0 || file.as_bytes()[range.start - 1] == b'\n';
    let rest = &file[range.end..];
    let ends_line = landed.ends_with('\n') || rest.is_empty() || rest.starts_with('\n') || rest.starts_with("\r\n");
    let takes_break = landed.ends_with('\n') || rest.is_empty();
    if !starts_line || !ends_line || (old.ends_with('\n') && !takes_break) {
        return false;
    }
    // A needle without a final line break ends inside its last line, which
    // may be an empty one.
    let split = |t: &str, whole_last_line: bool| -> Vec<String> {
        let t = if whole_last_line { t.strip_suffix('\n').unwrap_or(t) } else { t };
        t.split('\n').map(|l| fold_chars(l.strip_suffix('\r').unwrap_or(l), MatchRung::Unicode)).collect()
    };
    let file_lines = split(landed, old.ends_with('\n'));
    let mut old_lines = split(old, true);
    if rung >= MatchRung::LineNumbers {
        if let Some(stripped) = strip_prefixes(&old_lines) {
            old_lines = stripped;
        } else if rung == MatchRung::LineNumbers {
            return false;
        }
    }
    if file_lines.len() != old_lines.len() || old_lines.iter().all(|l| l.trim().is_empty()) {
        return false;
    }
    // Some tab width makes the indentation agree (the ladder picks one).
    [2, 3, 4, 8].iter().any(|&w| {
        let mut offset = None;
        file_lines.iter().zip(&old_lines).all(|(f, o)| {
            if f.trim().is_empty() || o.trim().is_empty() {
                return f.trim().is_empty() && o.trim().is_empty();
            }
            let (f, o) = (f.trim_end(), o.trim_end());
            let (f_body, o_body) = (f.trim_start(), o.trim_start());
            let (f_lead, o_lead) = (&f[..f.len() - f_body.len()], &o[..o.len() - o_body.len()]);
            f_body == o_body
                && match rung {
                    MatchRung::TrailingWhitespace | MatchRung::LineNumbers => f_lead == o_lead,
                    MatchRung::Tabs => columns(f_lead, w) == columns(o_lead, w),
                    _ => {
                        let this = columns(f_lead, w) as isize - columns(o_lead, w) as isize;
                        *offset.get_or_insert(this) == this
                    }
                }
        })
    })
}

