//! OpenAI-compatible chat completions, streaming (OpenAI, Ollama,
//! llama.cpp server, vLLM, LM Studio): tools in the `function` format,
//! `tool_calls` deltas assembled by their `index`, tool results sent back as
//! `role: "tool"` messages, usage from `stream_options.include_usage`, and
//! `data: [DONE]` as the end marker (a body ending without it is truncated).
//!
//! A tool call is complete when a call with a higher index starts or the
//! choice finishes; that is when the loop may start it early.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::http::{self, Api, Endpoint, HttpProviderConfig};
use super::provider::{
    images_for_model, parse_tool_input, with_retries, ContentBlock, Message, ModelRequest, ModelResponse, Provider, ProviderError, ResponseBuilder,
    Role, StopReason, StreamEvent, ToolCall,
};
use super::sse::SseEvent;

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

const API: Api = Api {
    provider: "The OpenAI-compatible server",
    key_var: "OPENAI_API_KEY",
    base_url_var: "OPENAI_BASE_URL",
    end_marker: "data: [DONE]",
};

pub struct OpenAiProvider {
    config: HttpProviderConfig,
    client: reqwest::Client,
}

impl OpenAiProvider {
    pub fn new(config: HttpProviderConfig) -> Result<Self, ProviderError> {
        Ok(OpenAiProvider { client: http::client()?, config })
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.config.base_url.trim_end_matches('/'))
    }

    async fn attempt(&self, body: &Value, endpoint: &Endpoint<'_>, events: &mpsc::UnboundedSender<StreamEvent>) -> Result<ModelResponse, ProviderError> {
        let request = self.config.bearer_post(&self.client, self.url(), body);
        let mut stream = CompletionStream::new(events);
        http::stream_answer(request, endpoint, |event| stream.on_event(event)).await?;
        Ok(stream.builder.finish())
    }
}

#[async_trait]
impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
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
        let messages = images_for_model(request.messages, &self.config.info(model));
        let body = request_body(model, self.config.max_tokens, &self.config.base_url, &ModelRequest { messages: &messages, ..request.clone() });
        let endpoint = Endpoint::new(&API, &self.config, model, tokio::time::Instant::now() + self.config.limits.turn);
        with_retries(&self.config.retry, endpoint.deadline, events, || self.attempt(&body, &endpoint, events)).await
    }
}

/// The fields a server streams its reasoning in, in the order they are
/// looked for.
const REASONING_FIELDS: [&str; 2] = ["reasoning_content", "reasoning"];

/// The JSON body of a streaming chat completion request.
pub fn request_body(model: &str, max_tokens: u32, base_url: &str, request: &ModelRequest<'_>) -> Value {
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    // The field this server streamed its reasoning in, if it ever did: a
    // turn with tool calls carries it back even when it thought nothing
    // (DeepSeek's thinking mode refuses the request otherwise).
    let reasoning_field = request.messages.iter().flat_map(|m| &m.content).find_map(|b| match b {
        ContentBlock::Reasoning { field, .. } => Some(field.as_str()),
        _ => None,
    });
    for message in request.messages {
        messages.extend(message_json(message, reasoning_field));
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    // OpenAI's newer models refuse `max_tokens` and want
    // `max_completion_tokens`; the local servers know only `max_tokens`.
    let limit_field = if base_url.contains("api.openai.com") { "max_completion_tokens" } else { "max_tokens" };
    body[limit_field] = json!(max_tokens);
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
            .collect();
        body["tools"] = json!(tools);
    }
    body
}

/// One neutral message becomes one or more chat messages: tool results are
/// separate `tool` messages, placed before any text of the same user turn
/// because they must directly follow the assistant's `tool_calls`. A tool
/// message carries text only, so the images of the results (`read_file` of
/// a PNG) go in one user message right after the tool messages, each
/// labelled with its call, beside the turn's own text and images.
fn message_json(message: &Message, reasoning_field: Option<&str>) -> Vec<Value> {
    let text = message.text();
    match message.role {
        Role::Assistant => {
            let calls: Vec<Value> = message
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => Some(json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": name, "arguments": input.to_string()},
                    })),
                    _ => None,
                })
                .collect();
            let mut out = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            // The reasoning goes back in the field the server used.
            let mut reasoning: Option<(&str, String)> = None;
            for block in &message.content {
                if let ContentBlock::Reasoning { text, field } = block {
                    reasoning.get_or_insert_with(|| (field.as_str(), String::new())).1.push_str(text);
                }
            }
            match (reasoning, reasoning_field) {
                (Some((field, text)), _) => out[field] = json!(text),
                (None, Some(field)) if !calls.is_empty() => out[field] = json!(""),
                (None, _) => {}
            }
            if !calls.is_empty() {
                out["tool_calls"] = json!(calls);
            }
            vec![out]
        }
        Role::User => {
            let mut out: Vec<Value> = message
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult { tool_use_id, content, is_error, .. } => {
                        // The format has no error flag: say it in the text.
                        let content = if *is_error && !content.starts_with("Error") { format!("Error: {content}") } else { content.clone() };
                        Some(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}))
                    }
                    _ => None,
                })
                .collect();
            let mut parts: Vec<Value> = Vec::new();
            for block in &message.content {
                match block {
                    ContentBlock::Text { text } if !text.is_empty() => parts.push(json!({"type": "text", "text": text})),
                    ContentBlock::Image(image) => parts.push(image_url_part(image)),
                    ContentBlock::ToolResult { tool_use_id, images, .. } if !images.is_empty() => {
                        let label = if images.len() == 1 { "The image" } else { "The images" };
                        parts.push(json!({"type": "text", "text": format!("{label} from tool call {tool_use_id}:")}));
                        parts.extend(images.iter().map(image_url_part));
                    }
                    _ => {}
                }
            }
            let has_image = parts.iter().any(|p| p["type"] == "image_url");
            if has_image {
                out.push(json!({"role": "user", "content": parts}));
            } else if !text.is_empty() {
                // Plain text stays a string: every server takes that.
                out.push(json!({"role": "user", "content": text}));
            }
            out
        }
    }
}

fn image_url_part(image: &crate::model::Image) -> Value {
    json!({"type": "image_url", "image_url": {"url": image.data_url()}})
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// The state of one streamed completion.
struct CompletionStream<'a> {
    builder: ResponseBuilder,
    calls: BTreeMap<u64, PartialCall>,
    /// Reasoning streamed since the last text or tool call, and the field
    /// it came in (one of [`REASONING_FIELDS`]).
    reasoning: String,
    reasoning_field: Option<&'static str>,
    /// The field came since the last flush, empty or not: a turn that
    /// thought nothing still carries it back (DeepSeek wants it).
    reasoning_pending: bool,
    events: &'a mpsc::UnboundedSender<StreamEvent>,
}

impl<'a> CompletionStream<'a> {
    fn new(events: &'a mpsc::UnboundedSender<StreamEvent>) -> Self {
        CompletionStream {
            builder: ResponseBuilder::default(),
            calls: BTreeMap::new(),
            reasoning: String::new(),
            reasoning_field: None,
            reasoning_pending: false,
            events,
        }
    }

    /// The reasoning so far becomes a block (and a thinking event), before
    /// the text or call that follows it.
    fn flush_reasoning(&mut self) {
        let (Some(field), true) = (self.reasoning_field, std::mem::take(&mut self.reasoning_pending)) else { return };
        let text = std::mem::take(&mut self.reasoning);
        self.builder.push_block(ContentBlock::Reasoning { text, field: field.to_string() }, self.events);
    }

    /// At the end: reasoning with no answer after it, from a server whose
    /// reasoning parser took the whole answer (vLLM can), is the answer —
    /// shown, not lost. Reasoning cut off by the token limit stays reasoning.
    fn finish_reasoning(&mut self) {
        let all_reasoning = !self.builder.has_answer() && self.calls.is_empty() && self.builder.stop_reason != Some(StopReason::MaxTokens);
        if all_reasoning && !self.reasoning.trim().is_empty() {
            let text = std::mem::take(&mut self.reasoning);
            self.builder.push_text(text.trim_start(), self.events);
        } else {
            self.flush_reasoning();
        }
    }

    /// Handle one event; `Ok(true)` at `[DONE]`.
    fn on_event(&mut self, event: SseEvent) -> Result<bool, ProviderError> {
        if event.data.trim() == "[DONE]" {
            if !self.calls.is_empty() {
                self.flush_reasoning();
            }
            self.close_calls_below(u64::MAX);
            self.finish_reasoning();
            return Ok(true);
        }
        let chunk: Value =
            serde_json::from_str(&event.data).map_err(|e| ProviderError::Protocol(format!("a stream chunk is not JSON: {e}")))?;
        if let Some(error) = chunk.get("error") {
            let kind = error.get("type").or_else(|| error.get("code")).and_then(Value::as_str).unwrap_or("error").to_string();
            let message = error.get("message").and_then(Value::as_str).unwrap_or("").to_string();
            return Err(ProviderError::Api { kind, message });
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
            self.builder.usage.input_tokens = field("prompt_tokens");
            self.builder.usage.output_tokens = field("completion_tokens");
            // OpenAI and llama.cpp report the prefix they reused from cache.
            self.builder.usage.cache_read_input_tokens =
                usage.pointer("/prompt_tokens_details/cached_tokens").and_then(Value::as_u64).unwrap_or(0);
        }
        // Tandem asks for one choice; others, if a server sends them, are ignored.
        let Some(choice) = chunk.get("choices").and_then(Value::as_array).and_then(|c| c.first()) else { return Ok(false) };
        if let Some(delta) = choice.get("delta") {
            // The field with text (the one in use when both have it: a
            // server that sends both sends the same text twice), else the
            // one present at all (a turn that thinks nothing still names it).
            let present: Vec<(&'static str, &str)> =
                REASONING_FIELDS.iter().filter_map(|f| delta.get(*f).and_then(Value::as_str).map(|p| (*f, p))).collect();
            let in_use = |(f, _): &&(&'static str, &str)| Some(*f) == self.reasoning_field;
            let pick = present
                .iter()
                .filter(|(_, p)| !p.is_empty())
                .find(in_use)
                .or_else(|| present.iter().find(|(_, p)| !p.is_empty()))
                .or_else(|| present.iter().find(in_use))
                .or(present.first());
            if let Some(&(field, piece)) = pick {
                self.reasoning_field = Some(field);
                self.reasoning_pending = true;
                self.reasoning.push_str(piece);
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                self.flush_reasoning();
                self.builder.push_text(text, self.events);
            }
            for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                self.flush_reasoning();
                self.call_delta(call);
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.builder.stop_reason = Some(StopReason::parse(reason));
            self.close_calls_below(u64::MAX);
        }
        Ok(false)
    }

    fn call_delta(&mut self, delta: &Value) {
        let index = delta.get("index").and_then(Value::as_u64).unwrap_or(0);
        // A new index means every call before it is complete.
        self.close_calls_below(index);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = delta.get("id").and_then(Value::as_str) {
            call.id = id.to_string();
        }
        if let Some(function) = delta.get("function") {
            if let Some(name) = function.get("name").and_then(Value::as_str) {
                call.name.push_str(name);
            }
            if let Some(arguments) = function.get("arguments").and_then(Value::as_str) {
                call.arguments.push_str(arguments);
            }
        }
    }

    fn close_calls_below(&mut self, index: u64) {
        let done: Vec<u64> = self.calls.range(..index).map(|(i, _)| *i).collect();
        let max_tokens_hit = self.builder.stop_reason == Some(StopReason::MaxTokens);
        for i in done {
            let Some(call) = self.calls.remove(&i) else { continue };
            let (input, input_error) = parse_tool_input(&call.name, &call.arguments, max_tokens_hit);
            // Some local servers send no id; the history needs one to pair results.
            let id = if call.id.is_empty() { format!("call_{i}") } else { call.id };
            self.builder.push_tool_use(ToolCall { id, name: call.name, input, input_error }, self.events);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::sse::SseDecoder;

    fn decode(sse: &str) -> (Vec<StreamEvent>, bool, ModelResponse) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut stream = CompletionStream::new(&tx);
        let mut decoder = SseDecoder::default();
        let mut finished = false;
        for event in decoder.push(sse.as_bytes()).unwrap() {
            if stream.on_event(event).unwrap() {
                finished = true;
                break;
            }
        }
        let mut seen = Vec::new();
        while let Ok(e) = rx.try_recv() {
            seen.push(e);
        }
        (seen, finished, stream.builder.finish())
    }

    #[test]
    fn two_parallel_tool_calls_are_assembled_by_index() {
        let (events, finished, response) = decode(include_str!("../../../tests/data/sse/openai/verbatim_two_parallel_tool_calls.sse"));
        assert!(finished);
        let rendered: Vec<String> = events
            .iter()
            .map(|e| match e {
                StreamEvent::ToolUse(c) => format!("{} {} {}", c.id, c.name, c.input),
                other => format!("{other:?}"),
            })
            .collect();
        expect_test::expect![[r#"
            call_JMW1whyEaYG438VE1OIflxA2 GetWeatherArgs {"city":"Edinburgh","country":"GB","units":"c"}
            call_DNYTawLBoN8fj3KN6qU9N1Ou get_stock_price {"ticker":"AAPL","exchange":"NASDAQ"}"#]]
        .assert_eq(&rendered.join("\n"));
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!((response.usage.input_tokens, response.usage.output_tokens), (149, 60));
    }

    #[test]
    fn a_call_is_complete_when_the_next_index_starts() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut stream = CompletionStream::new(&tx);
        let mut decoder = SseDecoder::default();
        let sse = include_str!("../../../tests/data/sse/openai/verbatim_two_parallel_tool_calls.sse");
        for event in decoder.push(sse.as_bytes()).unwrap() {
            let starts_second = event.data.contains("\"index\":1,\"id\"");
            stream.on_event(event).unwrap();
            if starts_second {
                // The first call went out before the rest of the stream.
                let Ok(StreamEvent::ToolUse(first)) = rx.try_recv() else { panic!("first call not complete") };
                assert_eq!(first.name, "GetWeatherArgs");
                assert!(rx.try_recv().is_err());
                return;
            }
        }
        panic!("the second call never started");
    }

    fn chunk(delta: serde_json::Value, finish: Option<&str>) -> String {
        format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
    }

    /// Reasoning before a tool call is a block before the call (and a
    /// thinking event); it goes back in the field it came in; a later tool
    /// turn with no reasoning still carries the field, empty.
    #[test]
    fn reasoning_is_read_shown_and_sent_back_in_its_field() {
        let sse = chunk(json!({"reasoning_content": "Look "}), None)
            + &chunk(json!({"reasoning_content": "first.", "reasoning": "Look first."}), None)
            + &chunk(json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": "{}"}}]}), Some("tool_calls"))
            + "data: [DONE]\n\n";
        let (events, finished, response) = decode(&sse);
        assert!(finished);
        assert!(matches!(&events[0], StreamEvent::Thinking(t) if t == "Look first."), "{events:?}");
        assert!(matches!(&events[1], StreamEvent::ToolUse(_)), "{events:?}");
        assert_eq!(response.message.content[0], ContentBlock::Reasoning { text: "Look first.".into(), field: "reasoning_content".into() });
        let silent_call = Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse { id: "c2".into(), name: "read_file".into(), input: json!({}) }],
        };
        let messages = vec![Message::user_text("go"), response.message, silent_call];
        let body = request_body("m", 10, "http://x", &ModelRequest { model: None, system: "s", messages: &messages, tools: &[] });
        assert_eq!(body["messages"][2]["reasoning_content"], "Look first.");
        assert_eq!(body["messages"][3]["reasoning_content"], "", "{body}");
        assert!(body["messages"][2].get("reasoning").is_none());
    }

    /// DeepSeek's tool turn that thought nothing (the field sent empty)
    /// still carries the field back, empty.
    #[test]
    fn an_empty_reasoning_field_still_goes_back_on_a_tool_turn() {
        let sse = chunk(json!({"role": "assistant", "content": null, "reasoning_content": ""}), None)
            + &chunk(json!({"reasoning_content": "", "reasoning": null}), None)
            + &chunk(json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": "{}"}}]}), Some("tool_calls"))
            + "data: [DONE]\n\n";
        let (events, _, response) = decode(&sse);
        assert!(!events.iter().any(|e| matches!(e, StreamEvent::Thinking(_))), "nothing to show: {events:?}");
        let messages = vec![Message::user_text("go"), response.message];
        let body = request_body("m", 10, "http://x", &ModelRequest { model: None, system: "s", messages: &messages, tools: &[] });
        assert_eq!(body["messages"][2]["reasoning_content"], "", "{body}");
    }

    /// All reasoning and no answer: the reasoning is the answer. Cut off
    /// by the token limit: it stays reasoning.
    #[test]
    fn an_answer_all_in_reasoning_is_the_answer_unless_cut_off() {
        let sse = chunk(json!({"reasoning_content": "", "reasoning": "It is 4."}), None) + &chunk(json!({}), Some("stop")) + "data: [DONE]\n\n";
        let (_, _, response) = decode(&sse);
        assert_eq!(response.message.text(), "It is 4.");
        // An empty field first, the text in the other one after: the text is kept.
        let sse = chunk(json!({"reasoning_content": ""}), None) + &chunk(json!({"reasoning": "Hi."}), None) + &chunk(json!({}), Some("stop")) + "data: [DONE]\n\n";
        assert_eq!(decode(&sse).2.message.text(), "Hi.");
        let sse = chunk(json!({"reasoning": "Let me think"}), None) + &chunk(json!({}), Some("length")) + "data: [DONE]\n\n";
        let (events, _, response) = decode(&sse);
        assert_eq!(response.message.text(), "");
        assert_eq!(events, vec![StreamEvent::Thinking("Let me think".into())]);
        // A server that never reasons: nothing added.
        let plain = vec![Message::user_text("go"), Message { role: Role::Assistant, content: vec![ContentBlock::ToolUse { id: "c".into(), name: "t".into(), input: json!({}) }] }];
        let body = request_body("m", 10, "http://x", &ModelRequest { model: None, system: "s", messages: &plain, tools: &[] });
        assert!(body["messages"][2].get("reasoning_content").is_none(), "{body}");
    }

    #[test]
    fn history_becomes_assistant_tool_calls_and_tool_messages() {
        let messages = vec![
            Message::user_text("go"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Text { text: "Reading.".into() },
                    ContentBlock::ToolUse { id: "call_1".into(), name: "read_file".into(), input: json!({"file_path": "a"}) },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult { tool_use_id: "call_1".into(), content: "file not found".into(), is_error: true, images: Vec::new() }],
            },
        ];
        let request = ModelRequest { model: None, system: "sys", messages: &messages, tools: &[] };
        let body = request_body("m", 100, "http://localhost:11434/v1", &request);
        expect_test::expect![[r#"
            {
              "model": "m",
              "messages": [
                {
                  "role": "system",
                  "content": "sys"
                },
                {
                  "role": "user",
                  "content": "go"
                },
                {
                  "role": "assistant",
                  "content": "Reading.",
                  "tool_calls": [
                    {
                      "id": "call_1",
                      "type": "function",
                      "function": {
                        "name": "read_file",
                        "arguments": "{\"file_path\":\"a\"}"
                      }
                    }
                  ]
                },
                {
                  "role": "tool",
                  "tool_call_id": "call_1",
                  "content": "Error: file not found"
                }
              ],
              "stream": true,
              "stream_options": {
                "include_usage": true
              },
              "max_tokens": 100
            }"#]]
        .assert_eq(&serde_json::to_string_pretty(&body).unwrap());
    }
}
