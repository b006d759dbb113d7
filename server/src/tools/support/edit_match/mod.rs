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
//! The phases have a file each: `chars.rs` and `lines.rs` (find's
//! character and line-wise rungs), `restyle.rs` (plan), `nearest.rs`.
//!
//! Architecture invariant: a match found past the exact rung maps back to
//! byte ranges of the original text on unit boundaries; nothing outside those
//! ranges is ever rewritten.

use std::ops::Range;

mod chars;
mod lines;
mod nearest;
mod restyle;

use chars::*;
use lines::*;
pub(crate) use lines::split_number_prefix;
pub use nearest::*;
pub use restyle::*;

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
