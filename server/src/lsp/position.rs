//! The one bridge between ropey char indices and LSP positions.
//!
//! An LSP position is a zero-based line and a `character` offset counted in
//! the negotiated encoding's code units: UTF-8 bytes, UTF-16 code units (the
//! default every client must support) or UTF-32 code points. Lines end at
//! `\n`, `\r\n` or `\r` ("To ensure that both client and server split the
//! string into the same line representation the protocol specifies the
//! following end-of-line sequences: '\n', '\r\n' and '\r'"); ropey is built
//! with only its `cr_lines` feature so its line index splits exactly there
//! (its default `unicode_lines` would also split at U+2028 and friends).
//!
//! Clamping follows the spec: "If the character value is greater than the
//! line length it defaults back to the line length". A line past the end of
//! the document clamps to the end of the document, and the caller is told
//! (so a `didChange` from an out-of-sync client is logged). An offset that
//! falls inside a character (half a surrogate pair, the middle of a UTF-8
//! sequence) rounds down to the character's start: never split a char.

use ropey::{Rope, RopeSlice};
use tower_lsp_server::ls_types::{Position, PositionEncodingKind};

/// The unit of `Position.character`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl PositionEncoding {
    /// Choose from the client's `general.positionEncodings`: UTF-8 when
    /// offered (no conversion cost for us), else UTF-16, which every client
    /// must support. UTF-32 is never preferred: it saves nothing over UTF-8.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Self {
        let offered = offered.unwrap_or_default();
        if offered.iter().any(|kind| kind.as_str() == PositionEncodingKind::UTF8.as_str()) {
            PositionEncoding::Utf8
        } else {
            PositionEncoding::Utf16
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
            PositionEncoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    fn units(self, c: char) -> usize {
        match self {
            PositionEncoding::Utf8 => c.len_utf8(),
            PositionEncoding::Utf16 => c.len_utf16(),
            PositionEncoding::Utf32 => 1,
        }
    }
}

/// A position converted to a char index, and whether it had to be clamped
/// because its line lies past the end of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CharIndex {
    pub char_idx: usize,
    pub line_past_end: bool,
}

/// The line's content without its terminator (`\n`, `\r\n` or `\r`).
fn line_content(line: RopeSlice<'_>) -> RopeSlice<'_> {
    let len = line.len_chars();
    let mut end = len;
    if end > 0 && line.char(end - 1) == '\n' {
        end -= 1;
    }
    if end > 0 && line.char(end - 1) == '\r' {
        end -= 1;
    }
    line.slice(..end)
}

/// The char index of an LSP position in `rope`, clamped as the spec says.
pub fn position_to_char(rope: &Rope, position: Position, encoding: PositionEncoding) -> CharIndex {
    let line_idx = position.line as usize;
    if line_idx >= rope.len_lines() {
        return CharIndex { char_idx: rope.len_chars(), line_past_end: true };
    }
    let line_start = rope.line_to_char(line_idx);
    let content = line_content(rope.line(line_idx));
    let wanted = position.character as usize;
    let mut units = 0;
    let mut chars = 0;
    for c in content.chars() {
        let next = units + encoding.units(c);
        if next > wanted {
            break;
        }
        units = next;
        chars += 1;
    }
    CharIndex { char_idx: line_start + chars, line_past_end: false }
}

/// The LSP position of a char index (clamped to the end of the document).
pub fn char_to_position(rope: &Rope, char_idx: usize, encoding: PositionEncoding) -> Position {
    let char_idx = char_idx.min(rope.len_chars());
    let line_idx = rope.char_to_line(char_idx);
    let line_start = rope.line_to_char(line_idx);
    let character: usize = rope.slice(line_start..char_idx).chars().map(|c| encoding.units(c)).sum();
    Position { line: saturating_u32(line_idx), character: saturating_u32(character) }
}

/// The LSP position of a byte offset in `rope`'s text (rounded down to a
/// char boundary; clamped to the end).
pub fn byte_to_position(rope: &Rope, byte_idx: usize, encoding: PositionEncoding) -> Position {
    let byte_idx = byte_idx.min(rope.len_bytes());
    char_to_position(rope, rope.byte_to_char(byte_idx), encoding)
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    /// (text, position, encoding, expected char index, line past end)
    type Row = (&'static str, (u32, u32), PositionEncoding, usize, bool);
    const TABLE: &[Row] = &[
        // Plain ASCII, and clamping past the end of a line.
        ("abc\ndef", (1, 1), Utf16, 5, false),
        ("abc\ndef", (0, 99), Utf16, 3, false),
        // CRLF: the line's length excludes "\r\n"; clamping stops before "\r".
        ("ab\r\ncd", (0, 5), Utf16, 2, false),
        ("ab\r\ncd", (1, 0), Utf16, 4, false),
        // A lone CR is a line break too.
        ("ab\rcd", (1, 1), Utf8, 4, false),
        // Astral-plane emoji: 4 UTF-8 bytes, 2 UTF-16 units, 1 char.
        ("a😀b", (0, 3), Utf16, 2, false),
        ("a😀b", (0, 5), Utf8, 2, false),
        ("a😀b", (0, 2), Utf32, 2, false),
        // Inside a surrogate pair / a UTF-8 sequence: round down.
        ("a😀b", (0, 2), Utf16, 1, false),
        ("a😀b", (0, 3), Utf8, 1, false),
        // Combining marks are chars of their own ("e" + U+0301).
        ("e\u{301}x", (0, 2), Utf16, 2, false),
        ("e\u{301}x", (0, 3), Utf8, 2, false),
        // Empty last line after a final newline.
        ("abc\n", (1, 0), Utf16, 4, false),
        ("abc\n", (1, 7), Utf16, 4, false),
        // Past the end of the document.
        ("abc\n", (2, 0), Utf16, 4, true),
        ("", (0, 3), Utf16, 0, false),
        ("", (5, 0), Utf8, 0, true),
    ];

    #[test]
    fn positions_to_chars() {
        for &(text, (line, character), encoding, expected, past_end) in TABLE {
            let rope = Rope::from_str(text);
            let got = position_to_char(&rope, pos(line, character), encoding);
            assert_eq!(
                got,
                CharIndex { char_idx: expected, line_past_end: past_end },
                "{text:?} at {line}:{character} in {encoding:?}"
            );
        }
    }

    #[test]
    fn chars_to_positions_round_trip() {
        let texts = ["abc\r\ndéf\r\n", "a😀b\n\nx\ry", "e\u{301}\u{301}z\n", "", "\n", "last line without newline"];
        for text in texts {
            let rope = Rope::from_str(text);
            for encoding in [Utf8, Utf16, Utf32] {
                for char_idx in 0..=rope.len_chars() {
                    let position = char_to_position(&rope, char_idx, encoding);
                    let back = position_to_char(&rope, position, encoding);
                    // The one index that cannot round-trip is between "\r"
                    // and "\n": no LSP position names it.
                    let between_crlf = char_idx > 0
                        && char_idx < rope.len_chars()
                        && rope.char(char_idx - 1) == '\r'
                        && rope.char(char_idx) == '\n';
                    if !between_crlf {
                        assert_eq!(back.char_idx, char_idx, "{text:?} char {char_idx} {encoding:?} -> {position:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn positions_of_chars() {
        let rope = Rope::from_str("a😀b\r\nxé");
        let rendered: Vec<String> = (0..=rope.len_chars())
            .map(|i| {
                let p16 = char_to_position(&rope, i, Utf16);
                let p8 = char_to_position(&rope, i, Utf8);
                format!("{i}: utf16 {}:{} utf8 {}:{}", p16.line, p16.character, p8.line, p8.character)
            })
            .collect();
        expect_test::expect![[r#"
            0: utf16 0:0 utf8 0:0
            1: utf16 0:1 utf8 0:1
            2: utf16 0:3 utf8 0:5
            3: utf16 0:4 utf8 0:6
            4: utf16 0:5 utf8 0:7
            5: utf16 1:0 utf8 1:0
            6: utf16 1:1 utf8 1:1
            7: utf16 1:2 utf8 1:3"#]]
        .assert_eq(&rendered.join("\n"));
    }

    #[test]
    fn negotiation_prefers_utf8_then_utf16() {
        let offered = [PositionEncodingKind::UTF32, PositionEncodingKind::UTF8];
        assert_eq!(PositionEncoding::negotiate(Some(&offered)), Utf8);
        assert_eq!(PositionEncoding::negotiate(Some(&[PositionEncodingKind::UTF32])), Utf16);
        assert_eq!(PositionEncoding::negotiate(None), Utf16);
    }
}
