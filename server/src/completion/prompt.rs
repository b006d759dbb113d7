//! What is sent to the model and what is made of its answer.
//!
//! Fill-in-the-middle: the OpenAI-compatible `/completions` body with
//! `prompt` and `suffix`, llama.cpp's `/infill` body with `input_prefix`
//! and `input_suffix`, and for a chat model (Anthropic, OpenAI chat) a
//! prompt that marks the cursor and asks for the missing text only.
//!
//! The answer is cleaned before it becomes a suggestion: the model's
//! special tokens and a chat model's code fence go, text that repeats the
//! suffix is cut (models often write the closing `)` or the next line
//! again), whitespace alone is no suggestion, and a long answer is cut at
//! a line end ([`MAX_SUGGESTION_CHARS`], [`MAX_SUGGESTION_LINES`]).

use serde_json::{json, Value};

use super::window::Window;

/// The longest suggestion shown.
pub const MAX_SUGGESTION_CHARS: usize = 4000;
/// The most lines a suggestion has.
pub const MAX_SUGGESTION_LINES: usize = 40;

/// The system prompt of a chat model asked to fill in the middle.
pub const CHAT_FIM_SYSTEM: &str = "You are a code completion engine inside an editor. The user's file is given with the \
cursor marked as <CURSOR>. Reply with exactly the text to insert at the cursor: no explanation, no code fence, \
nothing that is already before or after the cursor. Prefer completing the current line or block; reply with \
nothing if nothing fits.";

/// Marks the cursor in a chat model's prompt.
pub const CURSOR_MARK: &str = "<CURSOR>";

/// The `/completions` body (OpenAI's legacy completions API, which
/// Ollama, vLLM and LM Studio serve): the prefix as `prompt`, the rest as
/// `suffix` (left out for a server that refused it).
pub fn completions_body(model: Option<&str>, window: &Window, max_tokens: u32, with_suffix: bool) -> Value {
    let mut body = json!({
        "prompt": window.prefix,
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": false,
    });
    if with_suffix {
        body["suffix"] = json!(window.suffix);
    }
    if let Some(model) = model {
        body["model"] = json!(model);
    }
    body
}

/// llama.cpp's `/infill` body: it wraps prefix and suffix in the model's
/// own fill-in-the-middle tokens.
pub fn infill_body(model: Option<&str>, window: &Window, max_tokens: u32) -> Value {
    let mut body = json!({
        "input_prefix": window.prefix,
        "input_suffix": window.suffix,
        "input_extra": [],
        "n_predict": max_tokens,
        "temperature": 0,
        "top_k": 1,
        "cache_prompt": true,
        "stream": false,
    });
    if let Some(model) = model {
        body["model"] = json!(model);
    }
    body
}

/// The user message of a chat model asked to fill in the middle.
pub fn chat_fim_user(window: &Window, file_name: &str) -> String {
    format!(
        "File: {file_name}\n```\n{}{CURSOR_MARK}{}\n```\nThe text to insert at {CURSOR_MARK}:",
        window.prefix, window.suffix
    )
}

/// Tokens some servers leave in the text (Qwen, StarCoder, CodeLlama, DeepSeek).
const SPECIAL_TOKENS: &[&str] = &[
    "<|endoftext|>", "<|fim_pad|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_prefix|>", "<|file_sep|>", "<|im_end|>",
    "<fim_middle>", "<fim_suffix>", "<fim_prefix>", "<EOT>", "<｜end▁of▁sentence｜>", "</s>",
];

/// What is left of a model's answer as a suggestion at `window`, or
/// `None` when nothing useful is (empty, whitespace only, or only what
/// the suffix already has).
pub fn clean(answer: &str, window: &Window) -> Option<String> {
    let mut text = answer.to_string();
    if let Some(at) = SPECIAL_TOKENS.iter().filter_map(|t| text.find(t)).min() {
        text.truncate(at);
    }
    text = text.replace(CURSOR_MARK, "");
    let text = bound(&text);
    let text = to_block_end(text, window);
    let text = trim_suffix_overlap(text, &window.suffix);
    // At the end of a line the suffix has the line break already; spaces
    // before it would be left behind.
    let at_line_end = window.line_suffix().trim().is_empty();
    let text = if at_line_end { text.trim_end() } else { text.trim_end_matches([' ', '\t']) };
    if text.trim().is_empty() {
        return None;
    }
    Some(text.to_string())
}

/// A chat model's answer without the code fence it was asked not to write.
pub fn strip_fence(answer: &str) -> &str {
    let trimmed = answer.trim_matches('\n');
    let Some(body) = trimmed.strip_prefix("```") else { return answer };
    let Some(newline) = body.find('\n') else { return answer };
    let body = &body[newline + 1..];
    body.strip_suffix("```").map(|b| b.strip_suffix('\n').unwrap_or(b)).unwrap_or(body)
}

/// At most [`MAX_SUGGESTION_LINES`] lines and about [`MAX_SUGGESTION_CHARS`]
/// chars, cut at a line end when there is one.
fn bound(text: &str) -> &str {
    let mut end = text.len();
    if let Some((at, _)) = text.match_indices('\n').nth(MAX_SUGGESTION_LINES - 1) {
        end = at + 1;
    }
    if end > MAX_SUGGESTION_CHARS {
        let mut cut = MAX_SUGGESTION_CHARS;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        end = text[..cut].rfind('\n').map_or(cut, |at| at + 1);
    }
    &text[..end]
}

/// One unit of code, not the rest of the file: a completion of a line that
/// has code before the cursor ends at its first blank line, and any
/// completion ends before a line indented less than the cursor's line (the
/// block it is in has ended). Small models go on to write the next
/// function; that is not what the user is typing.
fn to_block_end<'a>(text: &'a str, window: &Window) -> &'a str {
    let line_before = window.prefix.rsplit(['\n', '\r']).next().unwrap_or("");
    let indent = |line: &str| line.len() - line.trim_start_matches([' ', '\t']).len();
    let cursor_indent = indent(line_before);
    let mid_line = !line_before.trim().is_empty();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i > 0 {
            let blank = line.trim().is_empty();
            if (blank && mid_line) || (!blank && indent(line) < cursor_indent) {
                return &text[..offset];
            }
        }
        offset += line.len();
    }
    text
}

/// Cut what the suffix already has: from the first line of the answer that
/// repeats the suffix's next non-blank line, and an end of the answer that
/// the rest of the cursor's line starts with (`foo)` before `)`).
fn trim_suffix_overlap<'a>(text: &'a str, suffix: &str) -> &'a str {
    let mut text = text;
    let rest_of_line = suffix.split(['\n', '\r']).next().unwrap_or("");
    let next_line = suffix.lines().skip(1).map(str::trim).find(|l| !l.is_empty());
    if let Some(next) = next_line.filter(|l| l.len() >= 2) {
        let mut offset = 0;
        for (i, line) in text.split_inclusive('\n').enumerate() {
            if i > 0 && line.trim() == next {
                text = &text[..offset];
                break;
            }
            offset += line.len();
        }
    }
    // The answer's end against the start of the rest of the line.
    let rest = rest_of_line.trim_end();
    if !rest.is_empty() {
        let trimmed = text.trim_end();
        for k in (1..=rest.len().min(trimmed.len())).rev() {
            if rest.is_char_boundary(k) && trimmed.is_char_boundary(trimmed.len() - k) && trimmed.ends_with(&rest[..k]) {
                return &trimmed[..trimmed.len() - k];
            }
        }
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ropey::Rope;

    fn window(text: &str) -> Window {
        let cursor = text[..text.find('|').unwrap()].chars().count();
        Window::around(&Rope::from_str(&text.replace('|', "")), cursor, 10)
    }

    #[test]
    fn answers_are_cleaned() {
        let w = window("def add(a, b):\n    return |\n\nprint(add(1, 2))\n");
        let cases = [
            ("a + b", Some("a + b")),
            ("a + b<|endoftext|>junk", Some("a + b")),
            ("   \n\t\n", None),
            ("", None),
            // The model wrote the next line again.
            ("a + b\n\nprint(add(1, 2))\n", Some("a + b")),
            ("a + b\n    \n", Some("a + b")),
        ];
        for (answer, expected) in cases {
            assert_eq!(clean(answer, &w).as_deref(), expected, "{answer:?}");
        }
        let w = window("print(add(1, |))\n");
        assert_eq!(clean("2))", &w).as_deref(), Some("2"), "the closing parens the line has");
        assert_eq!(clean("))", &w), None, "only what the line has");
    }

    #[test]
    fn a_completion_ends_with_its_block() {
        // What Qwen2.5-Coder-0.5B answered here, through llama.cpp's /infill.
        let answer = "2 * math.pi * radius\n\n\ndef area_of_rectangle(length, width):\n    return length * width\n";
        let w = window("def perimeter(radius):\n    return |\n");
        assert_eq!(clean(answer, &w).as_deref(), Some("2 * math.pi * radius"));
        // From an empty line inside a block: the block's lines, up to its end.
        let w = window("def f(xs):\n    |\n");
        assert_eq!(clean("total = 0\n    for x in xs:\n        total += x\n\n    return total\nprint(f([1]))\n", &w).as_deref(), Some("total = 0\n    for x in xs:\n        total += x\n\n    return total"));
        // At the top level a blank line does not end it.
        let w = window("|");
        assert_eq!(clean("import os\n\nimport sys\n", &w).as_deref(), Some("import os\n\nimport sys"));
    }

    #[test]
    fn a_huge_answer_is_cut_at_a_line_end() {
        let w = window("x = |\n");
        let long = "y = 1\n".repeat(20_000);
        let cleaned = clean(&long, &w).unwrap();
        assert!(cleaned.len() <= MAX_SUGGESTION_CHARS && cleaned.ends_with("y = 1"), "{}", cleaned.len());
        assert_eq!(cleaned.lines().count(), MAX_SUGGESTION_LINES);
        let one_line = "é".repeat(100_000);
        assert!(clean(&one_line, &w).unwrap().len() <= MAX_SUGGESTION_CHARS);
    }

    #[test]
    fn fences_are_stripped() {
        assert_eq!(strip_fence("```python\na + b\n```"), "a + b");
        assert_eq!(strip_fence("a + b"), "a + b");
        assert_eq!(strip_fence("```\nx\n"), "x");
    }

    #[test]
    fn request_bodies() {
        let w = window("a|b");
        expect_test::expect![[r#"{"prompt":"a","max_tokens":16,"temperature":0,"stream":false,"suffix":"b","model":"m"}"#]]
            .assert_eq(&completions_body(Some("m"), &w, 16, true).to_string());
        expect_test::expect![[r#"{"prompt":"a","max_tokens":16,"temperature":0,"stream":false}"#]]
            .assert_eq(&completions_body(None, &w, 16, false).to_string());
        expect_test::expect![[r#"{"input_prefix":"a","input_suffix":"b","input_extra":[],"n_predict":16,"temperature":0,"top_k":1,"cache_prompt":true,"stream":false}"#]]
            .assert_eq(&infill_body(None, &w, 16).to_string());
    }
}
