//! Turning a whole-text change into the few `TextEdit`s that make it: only
//! the changed ranges, never the whole document (the user's cursor, folds and
//! undo history survive a small edit).
//!
//! The trap (helix's `changeset_to_changes` comment): all edits of one
//! `TextDocumentEdit` refer to the *original* text, while `didChange` content
//! changes apply in sequence. Every range here is computed against the
//! original, and the ranges never overlap.

use ropey::Rope;
use tower_lsp_server::ls_types::{Range, TextEdit};

use super::position::{byte_to_position, PositionEncoding};
pub use crate::workspace::replacements;
use crate::workspace::Splice;

/// The replacements as LSP `TextEdit`s against `old`, in `encoding`.
pub fn text_edits(old: &str, new: &str, encoding: PositionEncoding) -> Vec<TextEdit> {
    splices_to_text_edits(old, &replacements(old, new), encoding)
}

/// `splices` of `old` as LSP `TextEdit`s against it, in `encoding`.
pub fn splices_to_text_edits(old: &str, splices: &[Splice], encoding: PositionEncoding) -> Vec<TextEdit> {
    let rope = Rope::from_str(old);
    splices
        .iter()
        .cloned()
        .map(|r| TextEdit {
            range: Range {
                start: byte_to_position(&rope, r.range.start, encoding),
                end: byte_to_position(&rope, r.range.end, encoding),
            },
            new_text: r.text,
        })
        .collect()
}

/// Apply edits that all refer to the original text of `rope` (as a client
/// applies one `TextDocumentEdit`): back to front, so earlier ranges stay
/// valid. Used by tests and by the demo's in-process client.
pub fn apply_text_edits(rope: &mut Rope, edits: &[TextEdit], encoding: PositionEncoding) {
    use super::position::position_to_char;
    let mut resolved: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            let start = position_to_char(rope, e.range.start, encoding).char_idx;
            let end = position_to_char(rope, e.range.end, encoding).char_idx.max(start);
            (start, end, e.new_text.as_str())
        })
        .collect();
    resolved.sort_by_key(|&(start, end, _)| (start, end));
    for (start, end, text) in resolved.into_iter().rev() {
        rope.remove(start..end);
        rope.insert(start, text);
    }
}

/// A `workspace/applyEdit` handled the way a version-checking editor
/// handles it: the first `TextDocumentEdit` of the request's `params`,
/// applied to `text` when `version` is the version it names. The one
/// implementation the in-process demo editor and the test clients share.
#[derive(Debug, Clone)]
pub struct EditorApply {
    pub uri: String,
    /// The document's version after the edit.
    pub version: i32,
    pub text: String,
    pub edits: Vec<TextEdit>,
}

impl EditorApply {
    /// The `textDocument/didChange` params that report the edit (whole text).
    pub fn did_change(&self) -> serde_json::Value {
        serde_json::json!({
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [{"text": self.text}],
        })
    }
}

/// Apply `params`' first `TextDocumentEdit` to `text` at `version`. `Err`
/// says why an editor would refuse: another version, or a malformed edit.
pub fn apply_as_editor(params: &serde_json::Value, text: &str, version: i32, encoding: PositionEncoding) -> Result<EditorApply, String> {
    let change = &params["edit"]["documentChanges"][0];
    let uri = change["textDocument"]["uri"].as_str().ok_or("no TextDocumentEdit with a uri")?.to_string();
    let asked = change["textDocument"]["version"].as_i64().ok_or("no version in the TextDocumentEdit")?;
    if asked != i64::from(version) {
        return Err(format!("version mismatch: the edit is for version {asked}, the document is at {version}"));
    }
    let edits: Vec<TextEdit> = serde_json::from_value(change["edits"].clone()).map_err(|e| format!("malformed edits: {e}"))?;
    let mut rope = Rope::from_str(text);
    apply_text_edits(&mut rope, &edits, encoding);
    Ok(EditorApply { uri, version: version + 1, text: rope.to_string(), edits })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn render(old: &str, new: &str) -> String {
        text_edits(old, new, PositionEncoding::Utf16)
            .iter()
            .map(|e| {
                format!(
                    "{}:{}-{}:{} {:?}",
                    e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character, e.new_text
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn one_word_changed_is_one_small_edit() {
        let old = "fn main() {\n    println!(\"hello\");\n}\n";
        let new = "fn main() {\n    println!(\"world\");\n}\n";
        expect_test::expect![[r#"1:14-1:19 "world""#]].assert_eq(&render(old, new));
    }

    #[test]
    fn distant_changes_are_separate_edits_against_the_original() {
        let old = "a\nb\nc\nd\ne\nf\n";
        let new = "A\nb\nc\nd\nf\nF\n";
        // e then f becomes f then F: e removed and F added, each whole
        // lines (not "e\nf" becoming "f\nF", which declined alone next to
        // another hunk would join lines).
        expect_test::expect![[r#"
            0:0-0:1 "A"
            4:0-5:0 ""
            6:0-6:0 "F\n""#]]
        .assert_eq(&render(old, new));
    }

    #[test]
    fn crlf_and_emoji() {
        expect_test::expect![[r#"0:3-0:3 "x""#]].assert_eq(&render("a😀\r\nb\r\n", "a😀x\r\nb\r\n"));
        // A new line inserted before a CRLF never splits the pair.
        expect_test::expect![[r#"1:0-1:0 "z\r\n""#]].assert_eq(&render("a\r\nb", "a\r\nz\r\nb"));
    }

    fn texty() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop_oneof!["a", "b", "\n", "\r\n", "\r", "😀", "é", "e\u{301}", " "], 0..24)
            .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn edits_applied_to_the_original_give_the_new_text(old in texty(), new in texty()) {
            for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
                let edits = text_edits(&old, &new, encoding);
                let mut rope = Rope::from_str(&old);
                apply_text_edits(&mut rope, &edits, encoding);
                prop_assert_eq!(rope.to_string(), new.clone());
                // Minimal: every edit stays inside the lines of the differing
                // middle, the common prefix and suffix counted here
                // independently (edits are whole lines or within one line,
                // and a `\r\n` pair is never split).
                let prefix: usize = old.chars().zip(new.chars()).take_while(|(a, b)| a == b).map(|(a, _)| a.len_utf8()).sum();
                let suffix: usize = old[prefix..].chars().rev().zip(new[prefix..].chars().rev()).take_while(|(a, b)| a == b).map(|(a, _)| a.len_utf8()).sum();
                let first_line = old[..prefix].trim_end_matches('\r').rfind(['\n', '\r']).map_or(0, |i| i + 1);
                let suffix_at = old.len() - suffix;
                let last_line_end = old[suffix_at..].find(['\n', '\r']).map_or(old.len(), |i| (suffix_at + i + 2).min(old.len()));
                for r in replacements(&old, &new) {
                    prop_assert!(r.range.start >= first_line, "{r:?} starts before the line where the texts first differ ({first_line})");
                    prop_assert!(r.range.end <= last_line_end, "{r:?} ends after the line where they last differ ({last_line_end})");
                }
            }
        }
    }
}
