//! Turning a whole-text change into the few `TextEdit`s that make it: only
//! the changed ranges, never the whole document (the user's cursor, folds and
//! undo history survive a small edit).
//!
//! The trap (helix's `changeset_to_changes` comment): all edits of one
//! `TextDocumentEdit` refer to the *original* text, while `didChange` content
//! changes apply in sequence. Every range here is computed against the
//! original, and the ranges never overlap.

use ropey::Rope;
use similar::{DiffOp, TextDiff};
use tower_lsp_server::ls_types::{Range, TextEdit};

use super::position::{byte_to_position, PositionEncoding};
use crate::workspace::Splice;

/// The replacements that turn `old` into `new`, in order, non-overlapping:
/// a line diff of the region between the common prefix and suffix, each
/// hunk then trimmed to the characters that really differ.
pub fn replacements(old: &str, new: &str) -> Vec<Splice> {
    if old == new {
        return Vec::new();
    }
    let (prefix, suffix) = common_affixes(old, new);
    let old_mid = &old[prefix..old.len() - suffix];
    let new_mid = &new[prefix..new.len() - suffix];
    let diff = TextDiff::from_lines(old_mid, new_mid);
    let old_tokens = diff.old_slices();
    let new_tokens = diff.new_slices();
    let old_offsets = offsets(old_tokens);
    let new_offsets = offsets(new_tokens);
    let mut hunks: Vec<(usize, usize, usize, usize)> = Vec::new();
    // Walk the ops with our own cursors: the `old_index` similar reports
    // for an insertion is not always where it goes (seen with CR lines).
    let (mut old_at, mut new_at) = (0, 0);
    for op in diff.ops() {
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
            let (p, s) = common_affixes(old_hunk, new_hunk);
            let splice = Splice {
                range: prefix + old_start + p..prefix + old_end - s,
                text: new_hunk[p..new_hunk.len() - s].to_string(),
            };
            (!splice.range.is_empty() || !splice.text.is_empty()).then_some(splice)
        })
        .collect()
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
        expect_test::expect![[r#"
            0:0-0:1 "A"
            4:0-5:1 "f\nF""#]]
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
                // Minimal: every edit stays inside the differing middle, the
                // common prefix and suffix counted here independently (one
                // byte of slack for a `\r\n` pair, which is never split).
                let prefix: usize = old.chars().zip(new.chars()).take_while(|(a, b)| a == b).map(|(a, _)| a.len_utf8()).sum();
                let suffix: usize = old[prefix..].chars().rev().zip(new[prefix..].chars().rev()).take_while(|(a, b)| a == b).map(|(a, _)| a.len_utf8()).sum();
                for r in replacements(&old, &new) {
                    prop_assert!(r.range.start + 1 >= prefix, "{r:?} starts inside the common prefix of {prefix} bytes");
                    prop_assert!(r.range.end <= old.len() - suffix + 1, "{r:?} ends inside the common suffix of {suffix} bytes");
                }
            }
        }
    }
}
