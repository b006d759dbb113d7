//! The Anthropic Messages API, streaming: the request body, and the event
//! stream (`message_start`, `content_block_start/delta/stop`,
//! `message_delta`, `message_stop`, `ping`, `error`) turned into neutral
//! stream events and a [`ModelResponse`].
//!
//! Tool inputs arrive as `input_json_delta` pieces that are only valid JSON
//! together; a tool block is complete at its `content_block_stop`, which is
//! when the loop may start it. A response that ends without `message_stop`
//! is truncated (and retried); a tool input still open when `max_tokens`
//! stopped the model becomes an error result for the model, not a crash.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::http::{self, Api, Endpoint, HttpProviderConfig};
use super::provider::{
    images_for_model, parse_tool_input, with_retries, ContentBlock, Message, ModelRequest, ModelResponse, Provider, ProviderError, ResponseBuilder,
    StopReason, StreamEvent, ToolCall,
};
use super::sse::SseEvent;
use crate::model::table::{Effort, ModelInfo, Thinking};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const API_VERSION: &str = "2023-06-01";

const API: Api = Api {
    provider: "Anthropic",
    key_var: "ANTHROPIC_API_KEY",
    base_url_var: "ANTHROPIC_BASE_URL",
    end_marker: "message_stop",
};

pub struct AnthropicProvider {
    config: HttpProviderConfig,
    client: reqwest::Client,
}

/// A JSON POST as the Messages API takes it: the version, the key as
/// `x-api-key`, the bearer token (`ANTHROPIC_AUTH_TOKEN`) where one is set,
/// and the custom headers. The agent's requests and inline completions'.
pub fn post(config: &HttpProviderConfig, client: &reqwest::Client, url: String, body: &Value) -> reqwest::RequestBuilder {
    let mut request = client.post(url).header("anthropic-version", API_VERSION).json(body);
    if let Some(key) = &config.api_key {
        request = request.header("x-api-key", key);
    }
    // Gateways (LiteLLM, Bedrock API keys behind a proxy) take a bearer
    // token instead of, or beside, the key.
    if let Some(token) = &config.auth_token {
        request = request.bearer_auth(token);
    }
    config.with_custom_headers(request)
}

impl AnthropicProvider {
    pub fn new(config: HttpProviderConfig) -> Result<Self, ProviderError> {
        Ok(AnthropicProvider { client: http::client()?, config })
    }

    fn url(&self) -> String {
        format!("{}/v1/messages", self.config.base_url.trim_end_matches('/'))
    }

    async fn attempt(&self, body: &Value, endpoint: &Endpoint<'_>, events: &mpsc::UnboundedSender<StreamEvent>) -> Result<ModelResponse, ProviderError> {
        let request = post(&self.config, &self.client, self.url(), body);
        let mut stream = MessageStream::new(events);
        http::stream_answer(request, endpoint, |event| stream.on_event(event)).await?;
        Ok(stream.builder.finish())
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn model_info(&self, model: &str) -> Option<crate::model::table::ModelInfo> {
        Some(self.config.info(model))
    }

    fn small_model(&self) -> Option<&str> {
        self.config.small_model.as_deref()
    }

    async fn stream(&self, request: &ModelRequest<'_>, events: &mpsc::UnboundedSender<StreamEvent>) -> Result<ModelResponse, ProviderError> {
        let model = request.model.unwrap_or(&self.config.model);
        let info = self.config.info(model);
        let mut effort = self.config.effort;
        let mut max_tokens = self.config.max_tokens;
        // The small jobs' model runs them without an effort it does not
        // take, and within its own output limit: the effort and the limit
        // were chosen for the main model.
        let small_job = model != self.config.model && self.config.small_model.as_deref() == Some(model);
        if small_job {
            max_tokens = max_tokens.min(info.max_output);
        }
        if let (Some(asked), true) = (effort, info.assumed.is_empty()) {
            match info.check_effort(asked) {
                Ok(()) => {}
                Err(_) if small_job => effort = None,
                // A sub-agent's model may take other efforts than the session's.
                Err(e) => return Err(ProviderError::Config(format!("{e} (setting effort, TANDEM_EFFORT or --effort)"))),
            }
        }
        let options = BodyOptions { model, max_tokens, thinking_budget: self.config.thinking_budget, effort, info: &info };
        let messages = images_for_model(request.messages, &info);
        let body = request_body(&options, &ModelRequest { messages: &messages, ..request.clone() });
        let endpoint = Endpoint::new(&API, &self.config, model, tokio::time::Instant::now() + self.config.limits.turn);
        with_retries(&self.config.retry, endpoint.deadline, events, || self.attempt(&body, &endpoint, events)).await
    }
}

/// Room for the answer itself beside a thinking budget: the API wants
/// `max_tokens` above `budget_tokens`.
const ANSWER_TOKENS_BESIDE_THINKING: u32 = 4096;

/// What shapes a request body besides the request itself.
#[derive(Debug, Clone, Copy)]
pub struct BodyOptions<'a> {
    pub model: &'a str,
    pub max_tokens: u32,
    /// Extended thinking with this many tokens, when set (and the model
    /// takes a budget).
    pub thinking_budget: Option<u32>,
    /// `output_config.effort`, with adaptive thinking where the model takes it.
    pub effort: Option<Effort>,
    /// What the table knows of the model: its thinking shape.
    pub info: &'a ModelInfo,
}

/// Adaptive thinking, asking for the thinking text: the newest models
/// send it only when asked (`display`), and every front end shows it.
fn adaptive() -> Value {
    json!({"type": "adaptive", "display": "summarized"})
}

/// The prompt-cache breakpoint Anthropic's API takes on a block.
fn cache_breakpoint() -> Value {
    json!({"type": "ephemeral"})
}

/// The JSON body of a streaming Messages request.
///
/// Prompt caching the way Claude Code does it: a breakpoint on the last
/// tool and on the system prompt (the stable prefix of a thread), and one on
/// the last block of the last message, so the next turn reads this turn's
/// whole prefix from the cache. The prefix stays byte-stable because the
/// thread keeps its system prompt and tools fixed (activated tools are
/// appended at the end).
pub fn request_body(options: &BodyOptions<'_>, request: &ModelRequest<'_>) -> Value {
    let mut messages: Vec<Value> = request.messages.iter().map(message_json).collect();
    if let Some(last) = messages.last_mut().and_then(|m| m["content"].as_array_mut()) {
        // Thinking blocks take no breakpoint.
        if let Some(block) = last.iter_mut().rev().find(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking"))) {
            block["cache_control"] = cache_breakpoint();
        }
    }
    let mut body = json!({
        "model": options.model,
        "max_tokens": options.max_tokens,
        "system": [{"type": "text", "text": request.system, "cache_control": cache_breakpoint()}],
        "messages": messages,
        "stream": true,
    });
    if !request.tools.is_empty() {
        let mut tools = json!(request.tools);
        if let Some(last) = tools.as_array_mut().and_then(|t| t.last_mut()) {
            last["cache_control"] = cache_breakpoint();
        }
        body["tools"] = tools;
    }
    // The shape the model takes (see `crate::model::table::Thinking`); a
    // model the table does not know gets what the settings ask for.
    let thinking = options.info.thinking;
    let unknown = !options.info.assumed.is_empty();
    let adaptive_thinking = match (options.effort, options.thinking_budget) {
        (Some(_), _) => thinking.takes_adaptive() || unknown,
        // A budget on a model that thinks adaptively only.
        (None, Some(_)) => matches!(thinking, Thinking::Adaptive { .. }),
        // It thinks whatever the request says: ask to see it.
        (None, None) => thinking == Thinking::Adaptive { always_on: true },
    };
    if adaptive_thinking {
        body["thinking"] = adaptive();
    } else if let Some(budget) = options.thinking_budget.filter(|_| thinking.takes_budget() || unknown) {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        body["max_tokens"] = json!(options.max_tokens.max(budget.saturating_add(ANSWER_TOKENS_BESIDE_THINKING)));
    }
    if let Some(effort) = options.effort {
        body["output_config"] = json!({"effort": effort.as_str()});
    }
    body
}

fn message_json(message: &Message) -> Value {
    // The API rejects empty text blocks; the neutral types can hold one when
    // a response had no text. Another API's reasoning (a thread that
    // changed provider) is not Anthropic's to read.
    let content: Vec<&ContentBlock> = message
        .content
        .iter()
        .filter(|b| match b {
            ContentBlock::Text { text } => !text.is_empty(),
            ContentBlock::Reasoning { .. } | ContentBlock::ResponsesItem { .. } => false,
            _ => true,
        })
        .collect();
    let content: Vec<Value> = content.into_iter().map(block_json).collect();
    json!({ "role": message.role, "content": content })
}

/// One block as the Messages API takes it: an image as a base64 `image`
/// block, a tool result with images as a `tool_result` whose content is
/// its text then its `image` blocks; every other block as the neutral
/// type spells it (the same names).
fn block_json(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Image(image) => image_json(image),
        ContentBlock::ToolResult { tool_use_id, content, is_error, images } if !images.is_empty() => {
            let mut parts = Vec::with_capacity(images.len() + 1);
            // Text blocks may not be empty.
            if !content.is_empty() {
                parts.push(json!({"type": "text", "text": content}));
            }
            parts.extend(images.iter().map(image_json));
            json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": parts, "is_error": is_error})
        }
        other => json!(other),
    }
}

fn image_json(image: &crate::model::Image) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}})
}

/// A content block still streaming.
enum OpenBlock {
    Text,
    ToolUse { id: String, name: String, json: String, start_input: Value },
    /// Extended thinking: its text and signature, assembled exactly.
    Thinking { thinking: String, signature: String },
    RedactedThinking { data: String },
    /// Server tools, future block types: skipped.
    Other,
}

/// The state of one streamed message.
struct MessageStream<'a> {
    builder: ResponseBuilder,
    open: BTreeMap<u64, OpenBlock>,
    events: &'a mpsc::UnboundedSender<StreamEvent>,
}

impl<'a> MessageStream<'a> {
    fn new(events: &'a mpsc::UnboundedSender<StreamEvent>) -> Self {
        MessageStream { builder: ResponseBuilder::default(), open: BTreeMap::new(), events }
    }

    /// Handle one event; `Ok(true)` at `message_stop`.
    fn on_event(&mut self, event: SseEvent) -> Result<bool, ProviderError> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| ProviderError::Protocol(format!("a {} event is not JSON: {e}", event.event)))?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(event.event.as_str());
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.read_usage(usage);
                }
            }
            "content_block_start" => self.block_start(&data),
            "content_block_delta" => self.block_delta(&data),
            "content_block_stop" => {
                let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
                if let Some(block) = self.open.remove(&index) {
                    self.close_block(block);
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.builder.stop_reason = Some(StopReason::parse(reason));
                }
                if let Some(usage) = data.get("usage") {
                    self.read_usage(usage);
                }
            }
            "message_stop" => {
                // Blocks still open here were cut off (max_tokens): close them
                // so their calls are answered with an error, in index order.
                for (_, block) in std::mem::take(&mut self.open) {
                    self.close_block(block);
                }
                return Ok(true);
            }
            "error" => {
                let kind = data.pointer("/error/type").and_then(Value::as_str).unwrap_or("error").to_string();
                let message = data.pointer("/error/message").and_then(Value::as_str).unwrap_or("").to_string();
                return Err(ProviderError::Api { kind, message });
            }
            // `ping`, and event types added after this was written.
            _ => {}
        }
        Ok(false)
    }

    fn block_start(&mut self, data: &Value) {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        let block = data.get("content_block").cloned().unwrap_or(Value::Null);
        let open = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str) {
                    self.builder.push_text(text, self.events);
                }
                OpenBlock::Text
            }
            Some("tool_use") => OpenBlock::ToolUse {
                id: block.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                name: block.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                json: String::new(),
                start_input: block.get("input").cloned().unwrap_or(Value::Null),
            },
            Some("thinking") => OpenBlock::Thinking {
                thinking: block.get("thinking").and_then(Value::as_str).unwrap_or_default().to_string(),
                signature: block.get("signature").and_then(Value::as_str).unwrap_or_default().to_string(),
            },
            Some("redacted_thinking") => {
                OpenBlock::RedactedThinking { data: block.get("data").and_then(Value::as_str).unwrap_or_default().to_string() }
            }
            _ => OpenBlock::Other,
        };
        self.open.insert(index, open);
    }

    fn block_delta(&mut self, data: &Value) {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        let delta = data.get("delta").cloned().unwrap_or(Value::Null);
        match (delta.get("type").and_then(Value::as_str), self.open.get_mut(&index)) {
            (Some("text_delta"), Some(OpenBlock::Text)) => {
                if let Some(text) = delta.get("text").and_then(Value::as_str) {
                    self.builder.push_text(text, self.events);
                }
            }
            (Some("input_json_delta"), Some(OpenBlock::ToolUse { json, .. })) => {
                if let Some(piece) = delta.get("partial_json").and_then(Value::as_str) {
                    json.push_str(piece);
                }
            }
            (Some("thinking_delta"), Some(OpenBlock::Thinking { thinking, .. })) => {
                if let Some(piece) = delta.get("thinking").and_then(Value::as_str) {
                    thinking.push_str(piece);
                }
            }
            (Some("signature_delta"), Some(OpenBlock::Thinking { signature, .. })) => {
                if let Some(piece) = delta.get("signature").and_then(Value::as_str) {
                    signature.push_str(piece);
                }
            }
            _ => {}
        }
    }

    fn close_block(&mut self, block: OpenBlock) {
        let (id, name, json, start_input) = match block {
            OpenBlock::ToolUse { id, name, json, start_input } => (id, name, json, start_input),
            OpenBlock::Thinking { thinking, signature } => {
                return self.builder.push_block(ContentBlock::Thinking { thinking, signature }, self.events);
            }
            OpenBlock::RedactedThinking { data } => {
                return self.builder.push_block(ContentBlock::RedactedThinking { data }, self.events);
            }
            OpenBlock::Text | OpenBlock::Other => return,
        };
        let max_tokens_hit = self.builder.stop_reason == Some(StopReason::MaxTokens);
        let (input, input_error) = if json.trim().is_empty() && start_input.is_object() {
            (start_input, None)
        } else {
            parse_tool_input(&name, &json, max_tokens_hit)
        };
        self.builder.push_tool_use(ToolCall { id, name, input, input_error }, self.events);
    }

    fn read_usage(&mut self, usage: &Value) {
        let field = |name: &str| usage.get(name).and_then(Value::as_u64);
        // Cached input is still input the model read; the summary counts it.
        let input = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"].iter().filter_map(|n| field(n)).sum::<u64>();
        if input > 0 {
            self.builder.usage.input_tokens = input;
            self.builder.usage.cache_read_input_tokens = field("cache_read_input_tokens").unwrap_or(0);
            self.builder.usage.cache_creation_input_tokens = field("cache_creation_input_tokens").unwrap_or(0);
        }
        // `message_delta` carries the running total of output tokens.
        if let Some(output) = field("output_tokens") {
            self.builder.usage.output_tokens = output;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::sse::SseDecoder;

    fn decode(sse: &str) -> (Vec<StreamEvent>, Result<(bool, ModelResponse), ProviderError>) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut stream = MessageStream::new(&tx);
        let mut decoder = SseDecoder::default();
        let mut events = decoder.push(sse.as_bytes()).unwrap();
        events.extend(decoder.finish().unwrap());
        let mut finished = false;
        let mut result = Ok(());
        for event in events {
            match stream.on_event(event) {
                Ok(true) => {
                    finished = true;
                    break;
                }
                Ok(false) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let mut seen = Vec::new();
        while let Ok(e) = rx.try_recv() {
            seen.push(e);
        }
        (seen, result.map(|()| (finished, stream.builder.finish())))
    }

    #[test]
    fn cut_off_tool_input_becomes_an_input_error() {
        let sse = include_str!("../../../tests/data/sse/anthropic/verbatim_incomplete_partial_json.sse");
        let (_, result) = decode(sse);
        let (finished, response) = result.unwrap();
        assert!(finished);
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
        assert_eq!(response.tool_calls.len(), 1);
        let call = &response.tool_calls[0];
        assert_eq!(call.name, "make_file");
        assert!(call.input_error.as_deref().unwrap_or_default().contains("max_tokens"));
        // The history keeps a valid tool_use block so the result can answer it.
        assert_eq!(
            response.message.content.last(),
            Some(&ContentBlock::ToolUse { id: call.id.clone(), name: "make_file".into(), input: json!({}) })
        );
    }

    /// The thinking shape each kind of model gets, for each setting.
    #[test]
    fn the_thinking_shape_follows_the_model() {
        let table = crate::model::table::ModelTable::default();
        let messages = [Message::user_text("hi")];
        let request = ModelRequest { model: None, system: "s", messages: &messages, tools: &[] };
        let mut lines = Vec::new();
        for (model, effort, budget) in [
            ("claude-opus-4-7", Some(Effort::High), None),
            ("claude-opus-4-7", None, Some(2048)),
            ("claude-opus-4-7", None, None),
            ("claude-opus-5-5", None, None),
            ("claude-sonnet-4-6", Some(Effort::Max), Some(2048)),
            ("claude-sonnet-4-6", None, Some(2048)),
            ("claude-opus-4-5", Some(Effort::Low), Some(2048)),
            ("claude-sonnet-4-5", None, Some(2048)),
            ("claude-3-5-haiku", None, Some(2048)),
            ("gateway-model", Some(Effort::Medium), None),
            ("gateway-model", None, Some(2048)),
        ] {
            let info = table.info(model);
            let body = request_body(&BodyOptions { model, max_tokens: 1000, thinking_budget: budget, effort, info: &info }, &request);
            lines.push(format!("{model} {effort:?} {budget:?} → thinking {} output_config {} max_tokens {}", body["thinking"], body["output_config"], body["max_tokens"]));
        }
        expect_test::expect![[r#"
            claude-opus-4-7 Some(High) None → thinking {"type":"adaptive","display":"summarized"} output_config {"effort":"high"} max_tokens 1000
            claude-opus-4-7 None Some(2048) → thinking {"type":"adaptive","display":"summarized"} output_config null max_tokens 1000
            claude-opus-4-7 None None → thinking null output_config null max_tokens 1000
            claude-opus-5-5 None None → thinking {"type":"adaptive","display":"summarized"} output_config null max_tokens 1000
            claude-sonnet-4-6 Some(Max) Some(2048) → thinking {"type":"adaptive","display":"summarized"} output_config {"effort":"max"} max_tokens 1000
            claude-sonnet-4-6 None Some(2048) → thinking {"type":"enabled","budget_tokens":2048} output_config null max_tokens 6144
            claude-opus-4-5 Some(Low) Some(2048) → thinking {"type":"enabled","budget_tokens":2048} output_config {"effort":"low"} max_tokens 6144
            claude-sonnet-4-5 None Some(2048) → thinking {"type":"enabled","budget_tokens":2048} output_config null max_tokens 6144
            claude-3-5-haiku None Some(2048) → thinking null output_config null max_tokens 1000
            gateway-model Some(Medium) None → thinking {"type":"adaptive","display":"summarized"} output_config {"effort":"medium"} max_tokens 1000
            gateway-model None Some(2048) → thinking {"type":"enabled","budget_tokens":2048} output_config null max_tokens 6144"#]]
        .assert_eq(&lines.join("\n"));
    }

    /// An OpenAI-compatible server's reasoning (a thread that changed
    /// provider) never reaches Anthropic.
    #[test]
    fn reasoning_blocks_are_not_sent() {
        let messages = [Message {
            role: crate::model::Role::Assistant,
            content: vec![ContentBlock::Reasoning { text: "hmm".into(), field: "reasoning_content".into() }, ContentBlock::Text { text: "hi".into() }],
        }];
        let request = ModelRequest { model: None, system: "s", messages: &messages, tools: &[] };
        let info = crate::model::table::ModelTable::default().info("claude-sonnet-4-5");
        let body = request_body(&BodyOptions { model: "m", max_tokens: 10, thinking_budget: None, effort: None, info: &info }, &request);
        assert_eq!(body["messages"][0]["content"].as_array().unwrap().len(), 1, "{body}");
    }

    #[test]
    fn error_event_is_an_api_error() {
        let sse = include_str!("../../../tests/data/sse/anthropic/SYNTHESIZED_mid_stream_overloaded.sse");
        let (events, result) = decode(sse);
        assert_eq!(events, vec![StreamEvent::TextDelta("Let me".into())]);
        let err = result.unwrap_err();
        assert_eq!(err, ProviderError::Api { kind: "overloaded_error".into(), message: "Overloaded".into() });
        assert!(err.is_retryable());
    }
}
