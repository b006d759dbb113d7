//! Keeping a thread inside the model's context window.
//!
//! The window comes from the model table ([`crate::model::table`], with
//! the `models` setting over it), `TANDEM_CONTEXT_WINDOW` (setting
//! `contextWindow`, for any model), or a safe default. The context
//! size is the provider's own count: the last response's input plus output
//! tokens. Past [`STUB_AT`] of the window, old tool results the model has
//! already acted on become one-line stubs (the most recent
//! [`KEEP_RECENT_RESULTS`] stay); past [`COMPACT_AT`], the loop asks the
//! model, in a separate request without tools, for a summary and replaces
//! the history with it plus the latest prompt.
//!
//! Images stay in the thread (saved, resumed) as they came, but a request
//! carries only the most recent [`KEEP_RECENT_IMAGES`]; older ones go as a
//! one-line placeholder ([`keep_recent_images`]). The summary request is
//! text: an image is named in it, never sent.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::loops::DEFAULT_LOOP_THRESHOLD;
use super::pricing::PriceTable;
use crate::model::{ContentBlock, Message, Role};

/// Share of the window past which old tool results are stubbed.
pub const STUB_AT: f64 = 0.60;
/// Share of the window past which the history is compacted.
pub const COMPACT_AT: f64 = 0.80;
/// Tool results never stubbed: the most recent ones.
pub const KEEP_RECENT_RESULTS: usize = 4;
/// Files a compaction names as needing a re-read: the most recently read
/// (or written) ones. Ten is the working set of a typical task (the file
/// being changed, its tests, a few callers) and costs about a hundred
/// tokens; naming every file a long thread ever read would invite the model
/// to read back, into the context just freed, files it has finished with.
/// Every file must be read again before an edit either way.
pub const REREAD_RECENT_FILES: usize = 10;
/// Images sent in one request, at most: the most recent ones. Four at
/// Anthropic's 5 MB of base64 each stay under its 32 MB request limit
/// with room for the text, and cost about 6,400 tokens; a screenshot the
/// model saw four images ago is rarely what it works from now (it can
/// read the file again).
pub const KEEP_RECENT_IMAGES: usize = 4;
/// Results shorter than this stay: a stub would save nothing.
const STUB_MIN_CHARS: usize = 400;
/// For models not in the table: small enough for most local servers' default.
pub use crate::model::table::DEFAULT_CONTEXT_WINDOW;

/// The window of `model`: the model table's (with the `models` setting,
/// `TANDEM_MODELS`, read through `lookup`), or the default.
fn window(model: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<u64, String> {
    Ok(crate::model::table::ModelTable::from_lookup(lookup)?.info(model).context_window)
}

/// What the session layer needs to know besides the thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextConfig {
    pub model: String,
    pub context_window: u64,
    pub prices: PriceTable,
    pub loop_threshold: usize,
}

impl ContextConfig {
    /// The defaults for a model: its known window, the built-in prices.
    pub fn for_model(model: &str) -> Self {
        ContextConfig {
            model: model.to_string(),
            context_window: crate::model::table::ModelTable::default().info(model).context_window,
            prices: PriceTable::default(),
            loop_threshold: DEFAULT_LOOP_THRESHOLD,
        }
    }

    /// Read `TANDEM_CONTEXT_WINDOW` and `TANDEM_PRICES` (JSON) through
    /// `lookup` (the environment, or settings first: see
    /// `lsp::config::Settings::lookup`).
    pub fn from_lookup(model: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let mut config = Self::for_model(model);
        config.context_window = window(model, &get)?;
        if let Some(window) = get("TANDEM_CONTEXT_WINDOW") {
            config.context_window = window
                .parse::<u64>()
                .ok()
                .filter(|n| *n >= 1000)
                .ok_or_else(|| format!("TANDEM_CONTEXT_WINDOW={window} is not a context window: use a number of tokens (at least 1000)"))?;
        }
        if let Some(prices) = get("TANDEM_PRICES") {
            let value: Value = serde_json::from_str(&prices).map_err(|e| format!("TANDEM_PRICES is not JSON: {e}"))?;
            config.prices = PriceTable::from_json(&value)?;
        }
        Ok(config)
    }

    pub fn stub_threshold(&self) -> u64 {
        (self.context_window as f64 * STUB_AT) as u64
    }

    pub fn compact_threshold(&self) -> u64 {
        (self.context_window as f64 * COMPACT_AT) as u64
    }
}

/// A rough token count for text we have no usage for: 4 bytes a token.
pub fn estimate_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// An image counts as what the model is billed for it
/// ([`IMAGE_TOKENS`](crate::model::image::IMAGE_TOKENS)), not as its base64:
/// a screenshot's megabytes would otherwise look like a full window.
pub fn estimate_messages(messages: &[Message]) -> u64 {
    let mut image_bytes = 0;
    let mut images = 0;
    for block in messages.iter().flat_map(|m| &m.content) {
        let found: &[crate::model::Image] = match block {
            ContentBlock::Image(image) => std::slice::from_ref(image),
            ContentBlock::ToolResult { images, .. } => images,
            _ => &[],
        };
        images += found.len() as u64;
        image_bytes += found.iter().map(|i| i.data.len()).sum::<usize>();
    }
    let bytes = serde_json::to_string(messages).map(|s| s.len()).unwrap_or(0);
    estimate_tokens(bytes.saturating_sub(image_bytes)) + images * crate::model::image::IMAGE_TOKENS
}

/// The history as a request sends it: every image but the most recent
/// `keep` replaced by a line saying it was left out (a prompt image by a
/// text block, a tool result's image by a line of its text). Unchanged,
/// and not copied, when there are no more than `keep`.
pub fn keep_recent_images(messages: &[Message], keep: usize) -> Cow<'_, [Message]> {
    let count = |block: &ContentBlock| match block {
        ContentBlock::Image(_) => 1,
        ContentBlock::ToolResult { images, .. } => images.len(),
        _ => 0,
    };
    let total: usize = messages.iter().flat_map(|m| &m.content).map(count).sum();
    let Some(mut to_drop) = total.checked_sub(keep).filter(|n| *n > 0) else { return Cow::Borrowed(messages) };
    const LEFT_OUT: &str = "an earlier image, left out to save context (read the file again to see it)";
    let mut out = messages.to_vec();
    // Oldest first.
    for block in out.iter_mut().flat_map(|m| m.content.iter_mut()) {
        if to_drop == 0 {
            break;
        }
        match block {
            ContentBlock::Image(image) => {
                *block = ContentBlock::Text { text: image.placeholder(LEFT_OUT) };
                to_drop -= 1;
            }
            ContentBlock::ToolResult { content, images, .. } => {
                let dropped = images.len().min(to_drop);
                for image in images.drain(..dropped) {
                    content.push('\n');
                    content.push_str(&image.placeholder(LEFT_OUT));
                }
                to_drop -= dropped;
            }
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// `[result of read_file src/x.rs cleared to save context; call again if needed]`
pub fn stub_text(name: &str, input: &Value) -> String {
    match call_target(input) {
        Some(target) => format!("[result of {name} {target} cleared to save context; call again if needed]"),
        None => format!("[result of {name} cleared to save context; call again if needed]"),
    }
}

/// What a call was about, in a few words: its path, pattern or command.
fn call_target(input: &Value) -> Option<String> {
    let value = ["file_path", "path", "pattern", "command", "url", "query"].iter().find_map(|k| input.get(*k).and_then(Value::as_str))?;
    let one_line: String = value.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(if one_line.chars().count() > 80 { format!("{}…", one_line.chars().take(79).collect::<String>()) } else { one_line })
}

/// The stubs to apply: `(tool_use_id, stub text, bytes saved)` for every
/// tool result except the most recent `keep_recent`, skipping short ones
/// and those already stubbed.
pub fn plan_stubs(messages: &[Message], keep_recent: usize) -> Vec<(String, String, usize)> {
    let mut calls: HashMap<&str, (&str, &Value)> = HashMap::new();
    for message in messages.iter().filter(|m| m.role == Role::Assistant) {
        for block in &message.content {
            if let ContentBlock::ToolUse { id, name, input } = block {
                calls.insert(id.as_str(), (name.as_str(), input));
            }
        }
    }
    let results: Vec<(&str, &str)> = messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, content, .. } => Some((tool_use_id.as_str(), content.as_str())),
            _ => None,
        })
        .collect();
    let old = results.len().saturating_sub(keep_recent);
    results[..old]
        .iter()
        .filter(|(_, content)| content.len() >= STUB_MIN_CHARS && !is_stub(content))
        .map(|(id, content)| {
            let stub = match calls.get(id) {
                Some((name, input)) => stub_text(name, input),
                None => "[tool result cleared to save context; call again if needed]".to_string(),
            };
            let saved = content.len().saturating_sub(stub.len());
            (id.to_string(), stub, saved)
        })
        .collect()
}

fn is_stub(content: &str) -> bool {
    content.starts_with('[') && content.ends_with("cleared to save context; call again if needed]")
}

/// The system prompt of the summary request.
pub const SUMMARY_SYSTEM: &str = "You summarise a coding agent's work so that it can continue in a fresh context. Write plain text, no preamble.";

/// What the summary must hold.
const SUMMARY_INSTRUCTIONS: &str = "Summarise the conversation above so the agent can continue the task without it. Include:
1. The user's goal, in their words where possible.
2. The decisions made and why.
3. The files read, created or changed, with what changed in each.
4. What is left to do, and the next step.
Be specific (paths, names, commands); leave out what no longer matters.";

/// Longest tool result quoted in the transcript sent for summarising.
const TRANSCRIPT_RESULT_CHARS: usize = 2_000;

/// The summary request: the history as a plain transcript in one user
/// message (a request without tools may not carry tool_use blocks), cut
/// from the front to fit `max_chars`, then the instructions.
pub fn summary_request(messages: &[Message], max_chars: usize) -> Vec<Message> {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        for block in &message.content {
            let part = match (message.role, block) {
                (Role::User, ContentBlock::Text { text }) => format!("User: {text}"),
                // Pixels do not go to the summary; that there was an image does.
                (_, ContentBlock::Image(image)) => format!("User attached an image ({})", image.media_type),
                (Role::Assistant, ContentBlock::Text { text }) if !text.trim().is_empty() => format!("Assistant: {text}"),
                (_, ContentBlock::ToolUse { id, name, input }) => {
                    names.insert(id.as_str(), name.as_str());
                    format!("Assistant called {name} {input}")
                }
                (_, ContentBlock::ToolResult { tool_use_id, content, is_error, images }) => {
                    let name = names.get(tool_use_id.as_str()).copied().unwrap_or("tool");
                    let kind = if *is_error { "error" } else { "result" };
                    let shown = if images.is_empty() { String::new() } else { format!(" [{} image(s) shown to the assistant, not included here]", images.len()) };
                    format!("{name} {kind}: {}{shown}", cut(content, TRANSCRIPT_RESULT_CHARS))
                }
                _ => continue,
            };
            parts.push(part);
        }
    }
    // Keep the first part (the original request) and as much of the end as fits.
    let mut total: usize = parts.iter().map(|p| p.len() + 2).sum();
    let mut dropped = 0;
    while total > max_chars && parts.len() > 2 {
        total -= parts[1].len() + 2;
        parts.remove(1);
        dropped += 1;
    }
    if dropped > 0 {
        parts.insert(1, format!("[{dropped} earlier steps left out]"));
    }
    let transcript = parts.join("\n\n");
    vec![Message::user_text(format!("<conversation>\n{transcript}\n</conversation>\n\n{SUMMARY_INSTRUCTIONS}"))]
}

fn cut(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let head: String = text.chars().take(max_chars).collect();
    format!("{head}[… cut]")
}

/// The history after compaction: the summary, the files to read again,
/// then the latest prompt.
/// `kept` are what the summary must not lose, said as they stand now (the
/// todo list, the background tasks).
pub fn compacted_history(summary: &str, reread: &[String], kept: &[String], last_prompt: Option<&Message>) -> Vec<Message> {
    let mut text = format!("[This conversation was compacted to save context. Summary of the work so far:]\n\n{}", summary.trim());
    if !reread.is_empty() {
        text.push_str(&format!(
            "\n\nFiles read before the compaction (their contents are gone from this context; read them again before editing): {}",
            reread.join(", ")
        ));
    }
    let mut content = vec![ContentBlock::Text { text }];
    content.extend(kept.iter().map(|text| ContentBlock::Text { text: text.clone() }));
    if let Some(prompt) = last_prompt {
        content.push(ContentBlock::Text { text: format!("The user's latest request:\n{}", prompt.text()) });
    }
    vec![Message { role: Role::User, content }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str, input: Value) -> Message {
        Message { role: Role::Assistant, content: vec![ContentBlock::ToolUse { id: id.into(), name: name.into(), input }] }
    }

    fn result(id: &str, content: &str) -> Message {
        Message { role: Role::User, content: vec![ContentBlock::ToolResult { tool_use_id: id.into(), content: content.into(), is_error: false, images: Vec::new() }] }
    }

    #[test]
    fn old_long_results_become_stubs_and_recent_ones_stay() {
        let long = "x".repeat(1000);
        let mut messages = vec![Message::user_text("go")];
        for (i, path) in ["src/x.rs", "src/y.rs", "src/z.rs"].iter().enumerate() {
            messages.push(call(&format!("t{i}"), "read_file", json!({"file_path": path})));
            messages.push(result(&format!("t{i}"), &long));
        }
        messages.push(call("s", "run_shell", json!({"command": "cargo\n test"})));
        messages.push(result("s", &long));
        messages.push(call("short", "list_files", json!({"path": "."})));
        messages.push(result("short", "a\nb"));
        let stubs = plan_stubs(&messages, 2);
        let rendered: Vec<String> = stubs.iter().map(|(id, stub, _)| format!("{id} {stub}")).collect();
        expect_test::expect![[r#"
            t0 [result of read_file src/x.rs cleared to save context; call again if needed]
            t1 [result of read_file src/y.rs cleared to save context; call again if needed]
            t2 [result of read_file src/z.rs cleared to save context; call again if needed]"#]]
        .assert_eq(&rendered.join("\n"));
        assert_eq!(stub_text("run_shell", &json!({"command": "cargo\n test"})), "[result of run_shell cargo test cleared to save context; call again if needed]");
        // Already stubbed results are left alone.
        assert!(plan_stubs(&[call("a", "read_file", json!({})), result("a", &stub_text("read_file", &json!({}))), result("b", "x")], 0).is_empty());
    }

    fn image(n: u8) -> crate::model::Image {
        crate::model::Image { media_type: "image/png".into(), data: format!("QUJD{n}A==") }
    }

    /// Six images in a thread: the request carries the last four, the two
    /// oldest as placeholders (a prompt image and a result's); the thread
    /// itself keeps them all; the summary request carries none.
    #[test]
    fn a_long_thread_sends_its_last_images_and_summarises_none() {
        let shot = |id: &str, n: u8| Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult { tool_use_id: id.into(), content: format!("shot{n}.png is a PNG image"), is_error: false, images: vec![image(n)] }],
        };
        let mut messages = vec![Message { role: Role::User, content: vec![ContentBlock::Text { text: "compare these".into() }, ContentBlock::Image(image(0))] }];
        for n in 1..=5u8 {
            let id = format!("t{n}");
            messages.push(call(&id, "read_file", json!({"file_path": format!("shot{n}.png")})));
            messages.push(shot(&id, n));
        }
        let sent = keep_recent_images(&messages, KEEP_RECENT_IMAGES);
        let kept: Vec<String> = sent
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|b| match b {
                ContentBlock::Image(i) => Some(format!("prompt image {}", i.data)),
                ContentBlock::ToolResult { content, images, .. } => Some(format!("{content} | {} image(s)", images.len())),
                ContentBlock::Text { text } if text.starts_with("[image") => Some(text.clone()),
                _ => None,
            })
            .collect();
        expect_test::expect![[r#"
            [image image/png, 1 KB: an earlier image, left out to save context (read the file again to see it)]
            shot1.png is a PNG image
            [image image/png, 1 KB: an earlier image, left out to save context (read the file again to see it)] | 0 image(s)
            shot2.png is a PNG image | 1 image(s)
            shot3.png is a PNG image | 1 image(s)
            shot4.png is a PNG image | 1 image(s)
            shot5.png is a PNG image | 1 image(s)"#]]
        .assert_eq(&kept.join("\n"));
        assert!(matches!(keep_recent_images(&messages, 6), Cow::Borrowed(_)));
        // The thread is not changed.
        assert!(matches!(&messages[0].content[1], ContentBlock::Image(_)));
        let summary = summary_request(&messages, 100_000)[0].text();
        assert!(!summary.contains("QUJD"), "{summary}");
        assert!(summary.contains("User attached an image (image/png)") && summary.contains("read_file result: shot5.png is a PNG image [1 image(s) shown to the assistant, not included here]"), "{summary}");
        // An image counts as its tokens, not its base64.
        let big = Message { role: Role::User, content: vec![ContentBlock::Image(crate::model::Image { media_type: "image/png".into(), data: "A".repeat(4_000_000) })] };
        assert!(estimate_messages(&[big]) < 2_000);
    }

    #[test]
    fn windows_and_overrides() {
        assert_eq!(ContextConfig::for_model("claude-sonnet-4-5").context_window, 200_000);
        // A 1M-window model is not compacted at 160k.
        assert_eq!(ContextConfig::for_model("anthropic/claude-opus-4-7").compact_threshold(), 800_000);
        let described = |n: &str| (n == "TANDEM_MODELS").then(|| r#"{"qwen2.5-coder": {"contextWindow": 65536}}"#.to_string());
        assert_eq!(ContextConfig::from_lookup("qwen2.5-coder", described).unwrap().context_window, 65_536);
        assert_eq!(ContextConfig::for_model("gpt-4o-mini").context_window, 128_000);
        assert_eq!(ContextConfig::for_model("qwen2.5-coder").context_window, DEFAULT_CONTEXT_WINDOW);
        let config = ContextConfig::from_lookup("qwen", |n| (n == "TANDEM_CONTEXT_WINDOW").then(|| "20000".to_string())).unwrap();
        assert_eq!((config.context_window, config.stub_threshold(), config.compact_threshold()), (20_000, 12_000, 16_000));
        assert!(ContextConfig::from_lookup("m", |n| (n == "TANDEM_CONTEXT_WINDOW").then(|| "big".to_string())).unwrap_err().contains("TANDEM_CONTEXT_WINDOW=big"));
    }

    #[test]
    fn summary_request_is_one_bounded_user_message() {
        let messages = vec![
            Message::user_text("fix the bug"),
            call("t0", "read_file", json!({"file_path": "a.rs"})),
            result("t0", &"y".repeat(10_000)),
            Message { role: Role::Assistant, content: vec![ContentBlock::Text { text: "Fixed.".into() }] },
        ];
        let request = summary_request(&messages, 100_000);
        assert_eq!(request.len(), 1);
        let text = request[0].text();
        assert!(text.starts_with("<conversation>\nUser: fix the bug\n\nAssistant called read_file {\"file_path\":\"a.rs\"}\n\nread_file result: yyy"));
        assert!(text.contains("[… cut]") && text.contains("Assistant: Fixed.") && text.contains("What is left to do"));
        let small = summary_request(&messages, 200)[0].text();
        assert!(small.contains("User: fix the bug") && small.contains("earlier steps left out") && small.len() < 1500, "{small}");
    }
}
