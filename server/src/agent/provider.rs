//! The provider contract: neutral message types, the stream events a
//! provider reports while a response arrives, provider errors (retryable or
//! not, by HTTP status and API error type), and the retry loop with
//! exponential backoff that the HTTP providers share.
//!
//! The agent loop only speaks these types; `anthropic.rs`, `openai.rs` and
//! `scripted.rs` translate them to and from each wire format.

use std::borrow::Cow;
use std::time::Duration;

use async_trait::async_trait;

use serde_json::Value;
use tokio::sync::mpsc;

pub use crate::model::{ContentBlock, Message, Role, Usage};
use crate::model::table::ModelInfo;
use crate::tools::ToolDefinition;

/// A tool call as the model sent it: one type from the stream to the
/// executor. `input_error` is set when the input could not be used (cut off
/// by `max_tokens`, or not valid JSON): the call is then answered with that
/// error instead of being run.
pub use crate::tools::ToolCall;

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    Other(String),
}

impl StopReason {
    /// From Anthropic's `stop_reason` or OpenAI's `finish_reason`.
    pub fn parse(reason: &str) -> Self {
        match reason {
            "end_turn" | "stop" => StopReason::EndTurn,
            "tool_use" | "tool_calls" | "function_call" => StopReason::ToolUse,
            "max_tokens" | "length" => StopReason::MaxTokens,
            "stop_sequence" => StopReason::StopSequence,
            other => StopReason::Other(other.to_string()),
        }
    }
}

/// What a provider reports while a response streams in.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of answer text.
    TextDelta(String),
    /// A tool call whose block is complete: it may start before the rest of
    /// the message arrives.
    ToolUse(ToolCall),
    /// An attempt failed and the request is being sent again: whatever this
    /// response streamed so far is void.
    Retrying { attempt: u32, delay: Duration, reason: String },
    /// A complete thinking block's text.
    Thinking(String),
}

/// Everything the model is sent in one request.
#[derive(Debug, Clone)]
pub struct ModelRequest<'a> {
    /// The model to ask for instead of the provider's own (a custom
    /// sub-agent's `model`); `None`: the provider's configured model.
    pub model: Option<&'a str>,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolDefinition],
}

/// A complete response.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// The assistant message to append to the history (text and tool_use blocks).
    pub message: Message,
    /// The tool calls in the order the model sent them.
    pub tool_calls: Vec<ToolCall>,
    pub stop_reason: StopReason,
    pub usage: Usage,
}

/// A model provider: sends a request and streams the answer.
#[async_trait]
pub trait Provider: Send + Sync {
    /// "anthropic", "openai", "scripted".
    fn name(&self) -> &str;
    fn model(&self) -> &str;
    /// What the model table (with the `models` setting) knows of `model`;
    /// `None`: the provider has no table (the scripted model).
    fn model_info(&self, _model: &str) -> Option<ModelInfo> {
        None
    }
    /// The model for the small jobs (`smallModel`): compaction summaries
    /// and sub-agents that name no model. `None`: [`Provider::model`].
    fn small_model(&self) -> Option<&str> {
        None
    }
    /// Send one request (retrying where that is safe) and stream the
    /// response. Events go to `events` as they arrive; the full response is
    /// returned at the end. Dropping the future cancels the request.
    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        events: &mpsc::UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError>;
}

/// A failed model request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderError {
    /// Nothing is configured, or the configuration is wrong.
    Config(String),
    /// The server answered with an error status.
    Http { status: u16, message: String, retry_after: Option<Duration> },
    /// An `error` event (or error object) inside the stream.
    Api { kind: String, message: String },
    /// The connection failed or broke.
    Connection(String),
    /// The stream ended before the end-of-message marker.
    Truncated(String),
    /// The stream was not in the expected format.
    Protocol(String),
    /// The scripted model has no turn left.
    ScriptExhausted(String),
    /// No content arrived within the idle timeout.
    Stalled(String),
    /// The turn's deadline passed.
    Deadline(String),
    /// A success status with a body that is not an event stream (a wrong
    /// base URL serving a web page, a proxy's JSON).
    NotEventStream(String),
}

impl ProviderError {
    /// The request was too long for the model's context window (HTTP 400
    /// or an error event, from either API, and llama.cpp's wording).
    pub fn is_context_length(&self) -> bool {
        let message = match self {
            ProviderError::Http { status: 400 | 413, message, .. } => message,
            ProviderError::Api { message, .. } => message,
            _ => return false,
        };
        let message = message.to_ascii_lowercase();
        ["prompt is too long", "context length", "context_length_exceeded", "maximum context", "context window", "context size", "too many tokens"]
            .iter()
            .any(|needle| message.contains(needle))
    }

    /// Worth sending again: overload, rate limits, server errors, broken
    /// connections and cut-off streams. Client errors (bad request, bad key,
    /// unknown model) are not: the same request fails the same way.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Http { status, .. } => matches!(status, 408 | 409 | 429) || *status >= 500,
            ProviderError::Api { kind, .. } => {
                matches!(kind.as_str(), "overloaded_error" | "api_error" | "rate_limit_error" | "timeout_error" | "server_error")
            }
            ProviderError::Connection(_) | ProviderError::Truncated(_) | ProviderError::Stalled(_) => true,
            ProviderError::Config(_)
            | ProviderError::Protocol(_)
            | ProviderError::ScriptExhausted(_)
            | ProviderError::Deadline(_)
            | ProviderError::NotEventStream(_) => false,
        }
    }

    /// The same error, saying the retries ran out.
    fn gave_up_after(self, attempts: u32) -> Self {
        let note = |m: String| format!("{m} (gave up after {attempts} attempts)");
        match self {
            ProviderError::Http { status, message, retry_after } => ProviderError::Http { status, message: note(message), retry_after },
            ProviderError::Api { kind, message } => ProviderError::Api { kind, message: note(message) },
            ProviderError::Connection(m) => ProviderError::Connection(note(m)),
            ProviderError::Truncated(m) => ProviderError::Truncated(note(m)),
            ProviderError::Stalled(m) => ProviderError::Stalled(note(m)),
            other => other,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

impl std::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProviderError::Config(m)
            | ProviderError::ScriptExhausted(m)
            | ProviderError::Deadline(m)
            | ProviderError::NotEventStream(m) => f.write_str(m),
            ProviderError::Stalled(m) => write!(f, "the model's stream stalled: {m}"),
            ProviderError::Http { message, .. } => f.write_str(message),
            ProviderError::Api { kind, message } => write!(f, "the model API reported an error ({kind}): {message}"),
            ProviderError::Connection(m) => write!(f, "cannot reach the model API: {m}"),
            ProviderError::Truncated(m) => write!(f, "the model's response was cut off: {m}"),
            ProviderError::Protocol(m) => write!(f, "unexpected data from the model API: {m}"),
        }
    }
}

impl std::error::Error for ProviderError {}

/// Describe an HTTP error status for the user, naming the likely cause.
/// `api_message` is the server's own message, if it sent one.
pub fn http_error(provider: &str, status: u16, api_message: &str, key_var: &str, model: &str, retry_after: Option<Duration>) -> ProviderError {
    let detail = if api_message.is_empty() { String::new() } else { format!(" The server said: {api_message}") };
    let message = match status {
        401 => format!("{provider} rejected the API key (401 Unauthorized). Check {key_var}.{detail}"),
        403 => format!("{provider} refused the request (403 Forbidden): the key may lack access to model \"{model}\". Check {key_var} and TANDEM_MODEL.{detail}"),
        404 => format!("{provider} answered 404 Not Found: unknown model \"{model}\" or a wrong base URL. Check TANDEM_MODEL and the base URL.{detail}"),
        400 => format!("{provider} rejected the request (400 Bad Request).{detail}{}", fix_for_bad_request(api_message)),
        413 => format!("{provider} rejected the request as too large (413).{detail}"),
        429 => format!("{provider} is rate limiting requests (429).{detail}"),
        529 => format!("{provider} is overloaded (529).{detail}"),
        s if s >= 500 => format!("{provider} had a server error ({s}).{detail}"),
        s => format!("{provider} answered HTTP {s}.{detail}"),
    };
    ProviderError::Http { status, message, retry_after }
}

/// The setting that would fix a 400, from the API's own words: a thinking
/// shape the model does not take, an effort it does not take, reasoning a
/// server wants back. Empty when the message names none of these.
fn fix_for_bad_request(api_message: &str) -> String {
    let message = api_message.to_ascii_lowercase();
    let hint = if message.contains("thinking.type.enabled") {
        "This model takes adaptive thinking only: remove thinkingBudget (TANDEM_THINKING) and set effort (low, medium, high, xhigh or max) instead, or describe the model in the models setting with \"thinking\": \"adaptive\"."
    } else if message.contains("adaptive") && message.contains("thinking") {
        "This model does not take adaptive thinking: remove effort (TANDEM_EFFORT, --effort) and use thinkingBudget, or describe the model in the models setting with \"thinking\": \"budget\"."
    } else if message.contains("effort") {
        "Remove effort (TANDEM_EFFORT, --effort) or choose a level this model takes; the models setting can list the efforts it takes."
    } else if message.contains("reasoning_content") {
        "The server wants the model's reasoning sent back; this is a bug in Tandem's round trip, please report it."
    } else {
        return String::new();
    };
    format!(" {hint}")
}

/// Parse a `retry-after` (seconds, possibly fractional) or `retry-after-ms` header.
pub fn parse_retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    // The HTTP-date form is rare from model APIs; it falls back to backoff.
    header("retry-after").and_then(|v| v.parse::<f64>().ok()).and_then(|s| Duration::try_from_secs_f64(s).ok())
}

/// How failed requests are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; each retry doubles it.
    pub base_delay: Duration,
    /// No wait is longer than this, `retry-after` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 4, base_delay: Duration::from_millis(500), max_delay: Duration::from_secs(30) }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based): the server's
    /// `retry-after` when it gave one, else exponential backoff with jitter
    /// (between half and all of `base * 2^(retry-1)`), never past `max_delay`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_delay);
        }
        let exponential = self.base_delay.saturating_mul(1u32 << retry.saturating_sub(1).min(16));
        let capped = exponential.min(self.max_delay);
        let jitter: f64 = rand::random_range(0.5..=1.0);
        capped.mul_f64(jitter)
    }
}

/// Run `attempt` until it succeeds, fails for good, or the retries run out.
/// Each retry is announced on `events` so the loop can drop what the failed
/// attempt streamed.
/// No retry starts when its wait would end past `deadline`.
pub async fn with_retries<F, Fut>(
    policy: &RetryPolicy,
    deadline: tokio::time::Instant,
    events: &mpsc::UnboundedSender<StreamEvent>,
    mut attempt: F,
) -> Result<ModelResponse, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<ModelResponse, ProviderError>>,
{
    let mut retry = 0;
    loop {
        let err = match attempt().await {
            Ok(response) => return Ok(response),
            Err(err) if !err.is_retryable() => return Err(err),
            Err(err) => err,
        };
        let delay = policy.delay(retry + 1, err.retry_after());
        if retry >= policy.max_retries || tokio::time::Instant::now() + delay >= deadline {
            return Err(err.gave_up_after(retry + 1));
        }
        retry += 1;
        tracing::warn!(%err, retry, ?delay, "model request failed; retrying");
        let _ = events.send(StreamEvent::Retrying { attempt: retry + 1, delay, reason: err.to_string() });
        tokio::time::sleep(delay).await;
    }
}

/// Assembles the blocks of one streamed response, whatever the wire format.
#[derive(Debug, Default)]
pub struct ResponseBuilder {
    content: Vec<ContentBlock>,
    tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub stop_reason: Option<StopReason>,
}

impl ResponseBuilder {
    pub fn push_text(&mut self, text: &str, events: &mpsc::UnboundedSender<StreamEvent>) {
        if text.is_empty() {
            return;
        }
        let _ = events.send(StreamEvent::TextDelta(text.to_string()));
        if let Some(ContentBlock::Text { text: last }) = self.content.last_mut() {
            last.push_str(text);
        } else {
            self.content.push(ContentBlock::Text { text: text.to_string() });
        }
    }

    /// A complete thinking block, kept byte for byte (one whose text the
    /// API left out, signature only, is kept and not shown).
    pub fn push_block(&mut self, block: ContentBlock, events: &mpsc::UnboundedSender<StreamEvent>) {
        if let ContentBlock::Thinking { thinking: text, .. } | ContentBlock::Reasoning { text, .. } = &block {
            if !text.trim().is_empty() {
                let _ = events.send(StreamEvent::Thinking(text.clone()));
            }
        }
        self.content.push(block);
    }

    /// A tool call whose arguments are complete (or known to be unusable).
    pub fn push_tool_use(&mut self, call: ToolCall, events: &mpsc::UnboundedSender<StreamEvent>) {
        let _ = events.send(StreamEvent::ToolUse(call.clone()));
        // The history must carry an object input even when the real one was
        // cut off: the API rejects a tool_use block without one.
        let input = if call.input_error.is_some() || !call.input.is_object() { Value::Object(Default::default()) } else { call.input.clone() };
        self.content.push(ContentBlock::ToolUse { id: call.id.clone(), name: call.name.clone(), input });
        self.tool_calls.push(call);
    }

    /// Text or tool calls came (the answer is not all reasoning).
    pub fn has_answer(&self) -> bool {
        !self.tool_calls.is_empty() || self.content.iter().any(|b| matches!(b, ContentBlock::Text { text } if !text.trim().is_empty()))
    }

    pub fn finish(self) -> ModelResponse {
        let stop_reason = self.stop_reason.unwrap_or(if self.tool_calls.is_empty() { StopReason::EndTurn } else { StopReason::ToolUse });
        ModelResponse {
            message: Message { role: Role::Assistant, content: self.content },
            tool_calls: self.tool_calls,
            stop_reason,
            usage: self.usage,
        }
    }
}

/// The history as a model that sees no images ([`ModelInfo::images`]) is
/// sent it: each image replaced by a line saying it was not sent and why,
/// so the model can tell the user instead of guessing. Unchanged (and not
/// copied) for a model that sees images, or a history without any.
pub fn images_for_model<'m>(messages: &'m [Message], info: &ModelInfo) -> Cow<'m, [Message]> {
    let has_images = |m: &Message| {
        m.content.iter().any(|b| matches!(b, ContentBlock::Image(_)) || matches!(b, ContentBlock::ToolResult { images, .. } if !images.is_empty()))
    };
    if info.images || !messages.iter().any(has_images) {
        return Cow::Borrowed(messages);
    }
    let because = format!(
        "not sent, because the model {} does not take image input (if it does, say so in the models setting: {{\"{}\": {{\"images\": true}}}})",
        info.name, info.name
    );
    let blind = |block: &ContentBlock| match block {
        ContentBlock::Image(image) => ContentBlock::Text { text: image.placeholder(&because) },
        ContentBlock::ToolResult { tool_use_id, content, is_error, images } if !images.is_empty() => {
            let mut content = content.clone();
            for image in images {
                content.push('\n');
                content.push_str(&image.placeholder(&because));
            }
            ContentBlock::ToolResult { tool_use_id: tool_use_id.clone(), content, is_error: *is_error, images: Vec::new() }
        }
        other => other.clone(),
    };
    Cow::Owned(messages.iter().map(|m| Message { role: m.role, content: m.content.iter().map(blind).collect() }).collect())
}

/// Parse a tool call's assembled argument text. Empty means no arguments.
/// `max_tokens_hit` turns a parse failure into the "cut off" explanation.
pub fn parse_tool_input(name: &str, raw: &str, max_tokens_hit: bool) -> (Value, Option<String>) {
    if raw.trim().is_empty() {
        return (Value::Object(Default::default()), None);
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value) if value.is_object() => (value, None),
        Ok(_) => (Value::Object(Default::default()), Some(format!("Tool call not executed: the input for {name} must be a JSON object."))),
        Err(_) if max_tokens_hit => (Value::Object(Default::default()), Some(cut_off_message(name, raw.len()))),
        Err(err) => (Value::Object(Default::default()), Some(format!("Tool call not executed: the input for {name} is not valid JSON ({err}). Send the call again with a complete JSON object."))),
    }
}

/// The result for a call whose input the output limit cut off.
pub fn cut_off_message(name: &str, received_bytes: usize) -> String {
    format!(
        "Tool call not executed: your response hit the max_tokens limit while writing the input for {name} ({received_bytes} bytes received, incomplete JSON). Send the call again with a smaller input: for a large file, write a first part with write_file and add the rest with edit_file."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_statuses_and_api_errors() {
        let http = |status| ProviderError::Http { status, message: String::new(), retry_after: None };
        let retried: Vec<u16> = [400, 401, 403, 404, 408, 413, 429, 500, 502, 503, 529].into_iter().filter(|s| http(*s).is_retryable()).collect();
        assert_eq!(retried, vec![408, 429, 500, 502, 503, 529]);
        assert!(ProviderError::Api { kind: "overloaded_error".into(), message: String::new() }.is_retryable());
        assert!(!ProviderError::Api { kind: "invalid_request_error".into(), message: String::new() }.is_retryable());
        assert!(ProviderError::Truncated(String::new()).is_retryable());
        assert!(!ProviderError::ScriptExhausted(String::new()).is_retryable());
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy { max_retries: 4, base_delay: Duration::from_millis(100), max_delay: Duration::from_millis(500) };
        for _ in 0..50 {
            let d1 = policy.delay(1, None);
            let d3 = policy.delay(3, None);
            let d9 = policy.delay(9, None);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100), "{d1:?}");
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400), "{d3:?}");
            assert!(d9 <= Duration::from_millis(500), "{d9:?}");
        }
        assert_eq!(policy.delay(1, Some(Duration::from_millis(300))), Duration::from_millis(300));
        assert_eq!(policy.delay(1, Some(Duration::from_secs(60))), Duration::from_millis(500));
    }

    #[test]
    fn context_length_errors_from_both_apis() {
        let http = |status, message: &str| ProviderError::Http { status, message: message.into(), retry_after: None };
        assert!(http(400, "Anthropic rejected the request (400 Bad Request). The server said: prompt is too long: 210000 tokens > 200000 maximum").is_context_length());
        assert!(http(400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.").is_context_length());
        assert!(http(400, "the request exceeds the available context size, try increasing it").is_context_length());
        assert!(!http(400, "messages: text content blocks must be non-empty").is_context_length());
        assert!(!http(500, "prompt is too long").is_context_length());
    }

    /// A 400 names the setting that would fix it, where the API's words say which.
    #[test]
    fn a_bad_request_names_the_setting_that_fixes_it() {
        let message = |api: &str| http_error("Anthropic", 400, api, "ANTHROPIC_API_KEY", "m", None).to_string();
        let adaptive_only = message("\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior.");
        assert!(adaptive_only.contains("The server said: \"thinking.type.enabled\" is not supported") && adaptive_only.contains("remove thinkingBudget"), "{adaptive_only}");
        assert!(message("adaptive thinking is not supported on this model").contains("remove effort"));
        assert!(message("output_config.effort: \"xhigh\" is not supported").contains("choose a level this model takes"));
        assert_eq!(message("messages: text content blocks must be non-empty"), "Anthropic rejected the request (400 Bad Request). The server said: messages: text content blocks must be non-empty");
    }

    /// A model that sees no images gets a line for each instead; one that
    /// sees them gets the history as it is.
    #[test]
    fn a_model_without_image_input_is_told_what_was_not_sent() {
        let image = crate::model::Image { media_type: "image/png".into(), data: "AAAA".into() };
        let messages = vec![
            Message { role: Role::User, content: vec![ContentBlock::Text { text: "look".into() }, ContentBlock::Image(image.clone())] },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult { tool_use_id: "t".into(), content: "shot.png is a PNG image".into(), is_error: false, images: vec![image] }],
            },
        ];
        let table = crate::model::table::ModelTable::default();
        assert!(matches!(images_for_model(&messages, &table.info("claude-sonnet-4-5")), Cow::Borrowed(_)));
        let blind = images_for_model(&messages, &table.info("claude-3-5-haiku"));
        expect_test::expect![[r#"
            [{"role":"user","content":[{"type":"text","text":"look"},{"type":"text","text":"[image image/png, 1 KB: not sent, because the model claude-3-5-haiku does not take image input (if it does, say so in the models setting: {\"claude-3-5-haiku\": {\"images\": true}})]"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"shot.png is a PNG image\n[image image/png, 1 KB: not sent, because the model claude-3-5-haiku does not take image input (if it does, say so in the models setting: {\"claude-3-5-haiku\": {\"images\": true}})]","is_error":false}]}]"#]]
        .assert_eq(&serde_json::to_string(&*blind).unwrap());
    }

    #[test]
    fn tool_input_parsing() {
        assert_eq!(parse_tool_input("t", "", false), (serde_json::json!({}), None));
        assert_eq!(parse_tool_input("t", "{\"a\":1}", false).0, serde_json::json!({"a": 1}));
        let (_, err) = parse_tool_input("make_file", "{\"filename\": \"tax", true);
        assert!(err.unwrap().contains("max_tokens"));
        let (_, err) = parse_tool_input("t", "[1]", false);
        assert!(err.unwrap().contains("JSON object"));
    }
}
