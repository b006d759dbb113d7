//! OpenAI's Responses API, streaming (`"provider": "openai-responses"`):
//! OpenAI's newest and Codex-class models, and the servers that speak the
//! same shape (Open Responses: vLLM, gateways, cloud providers).
//!
//! Stateless: every request carries the whole history as input items
//! (`store: false`), so nothing of the conversation is kept on the server.
//! Reasoning items come back with their `encrypted_content` (`include:
//! ["reasoning.encrypted_content"]`) and are replayed, as received, before
//! the calls they led to. Tools go out as `function` tools; a call comes
//! back as a `function_call` item and its result goes in as a
//! `function_call_output`. `prompt_cache_key` keeps one thread's requests
//! on one cache. A stream ends at `response.completed` (or
//! `response.incomplete`, at the token limit); a body that ends before is
//! cut off, and `response.failed` or an `error` event is the API's error.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::http::{self, Api, Endpoint, HttpProviderConfig};
use super::provider::{
    images_for_model, parse_tool_input, with_retries, ContentBlock, Message, ModelRequest, ModelResponse, Provider, ProviderError, ResponseBuilder,
    Role, StopReason, StreamEvent, ToolCall,
};
use super::sse::SseEvent;

const API: Api = Api {
    provider: "The Responses API server",
    key_var: "OPENAI_API_KEY",
    base_url_var: "OPENAI_BASE_URL",
    end_marker: "response.completed",
};

pub struct ResponsesProvider {
    config: HttpProviderConfig,
    client: reqwest::Client,
}

impl ResponsesProvider {
    pub fn new(config: HttpProviderConfig) -> Result<Self, ProviderError> {
        Ok(ResponsesProvider { client: http::client()?, config })
    }

    fn url(&self) -> String {
        format!("{}/responses", self.config.base_url.trim_end_matches('/'))
    }

    async fn attempt(&self, body: &Value, endpoint: &Endpoint<'_>, events: &mpsc::UnboundedSender<StreamEvent>) -> Result<ModelResponse, ProviderError> {
        let request = self.config.bearer_post(&self.client, self.url(), body);
        let mut stream = ResponseStream::new(events);
        http::stream_answer(request, endpoint, |event| stream.on_event(event)).await?;
        Ok(stream.builder.finish())
    }
}

#[async_trait]
impl Provider for ResponsesProvider {
    fn name(&self) -> &str {
        "openai-responses"
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
        let messages = images_for_model(request.messages, &info);
        let mut body = request_body(model, self.config.max_tokens, &ModelRequest { messages: &messages, ..request.clone() });
        // Without asking, a reasoning model's items come with no summary
        // to show; other models refuse the field.
        if info.reasoning_summaries {
            body["reasoning"] = json!({"summary": "auto"});
        }
        let endpoint = Endpoint::new(&API, &self.config, model, tokio::time::Instant::now() + self.config.limits.turn);
        with_retries(&self.config.retry, endpoint.deadline, events, || self.attempt(&body, &endpoint, events)).await
    }
}

/// One thread's requests share a prompt cache: the key is the system
/// prompt's, which a thread keeps byte-stable.
fn prompt_cache_key(system: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    system.hash(&mut hasher);
    format!("tandem-{:016x}", hasher.finish())
}

/// The JSON body of a streaming, stateless Responses request.
pub fn request_body(model: &str, max_tokens: u32, request: &ModelRequest<'_>) -> Value {
    let input: Vec<Value> = request.messages.iter().flat_map(input_items).collect();
    let mut body = json!({
        "model": model,
        "instructions": request.system,
        "input": input,
        "stream": true,
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": max_tokens,
        "prompt_cache_key": prompt_cache_key(request.system),
    });
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema}))
            .collect();
        body["tools"] = json!(tools);
    }
    body
}

/// One neutral message as input items, in its order: a user's text and
/// images and the results of calls (a result with images as an output of
/// `input_text` and `input_image` parts, as the Open Responses
/// specification has it); an assistant's reasoning items (replayed as
/// received), text and calls.
fn input_items(message: &Message) -> Vec<Value> {
    let mut items = Vec::new();
    let mut text = String::new();
    // The message's parts so far: its text, and a user's images.
    let mut parts: Vec<Value> = Vec::new();
    let flush = |items: &mut Vec<Value>, text: &mut String, parts: &mut Vec<Value>, role: Role| {
        if !text.is_empty() {
            parts.push(match role {
                Role::User => json!({"type": "input_text", "text": text}),
                Role::Assistant => json!({"type": "output_text", "text": text}),
            });
            text.clear();
        }
        if !parts.is_empty() {
            items.push(json!({"type": "message", "role": role, "content": std::mem::take(parts)}));
        }
    };
    for block in &message.content {
        match block {
            ContentBlock::Text { text: piece } => text.push_str(piece),
            ContentBlock::Image(image) => {
                if !text.is_empty() {
                    parts.push(json!({"type": "input_text", "text": std::mem::take(&mut text)}));
                }
                parts.push(input_image(image));
            }
            ContentBlock::ToolResult { tool_use_id, content, is_error, images } => {
                flush(&mut items, &mut text, &mut parts, message.role);
                // The format has no error flag: say it in the text.
                let output = if *is_error && !content.starts_with("Error") { format!("Error: {content}") } else { content.clone() };
                let output = if images.is_empty() {
                    json!(output)
                } else {
                    let mut output = vec![json!({"type": "input_text", "text": output})];
                    output.extend(images.iter().map(input_image));
                    json!(output)
                };
                items.push(json!({"type": "function_call_output", "call_id": tool_use_id, "output": output}));
            }
            ContentBlock::ToolUse { id, name, input } => {
                flush(&mut items, &mut text, &mut parts, message.role);
                items.push(json!({"type": "function_call", "call_id": id, "name": name, "arguments": input.to_string()}));
            }
            ContentBlock::ResponsesItem { item } => {
                flush(&mut items, &mut text, &mut parts, message.role);
                items.push(item.clone());
            }
            // Another provider's thinking is not this API's to read.
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } | ContentBlock::Reasoning { .. } => {}
        }
    }
    flush(&mut items, &mut text, &mut parts, message.role);
    items
}

/// An image as an input part: a data URL, the API choosing the detail.
fn input_image(image: &crate::model::Image) -> Value {
    json!({"type": "input_image", "image_url": image.data_url(), "detail": "auto"})
}

/// A function call still streaming its arguments.
#[derive(Default)]
struct PartialCall {
    call_id: String,
    name: String,
    arguments: String,
}

/// The state of one streamed response.
struct ResponseStream<'a> {
    builder: ResponseBuilder,
    calls: BTreeMap<u64, PartialCall>,
    events: &'a mpsc::UnboundedSender<StreamEvent>,
}

impl<'a> ResponseStream<'a> {
    fn new(events: &'a mpsc::UnboundedSender<StreamEvent>) -> Self {
        ResponseStream { builder: ResponseBuilder::default(), calls: BTreeMap::new(), events }
    }

    /// Handle one event; `Ok(true)` at the response's end.
    fn on_event(&mut self, event: SseEvent) -> Result<bool, ProviderError> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| ProviderError::Protocol(format!("a {} event is not JSON: {e}", event.event)))?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(event.event.as_str());
        let index = data.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "response.output_text.delta" => {
                if let Some(delta) = data.get("delta").and_then(Value::as_str) {
                    self.builder.push_text(delta, self.events);
                }
            }
            "response.output_item.added" => {
                let item = &data["item"];
                if item["type"] == "function_call" {
                    let text = |field: &str| item[field].as_str().unwrap_or_default().to_string();
                    self.calls.insert(index, PartialCall { call_id: text("call_id"), name: text("name"), arguments: String::new() });
                }
            }
            "response.function_call_arguments.delta" => {
                if let (Some(call), Some(delta)) = (self.calls.get_mut(&index), data.get("delta").and_then(Value::as_str)) {
                    call.arguments.push_str(delta);
                }
            }
            "response.output_item.done" => self.item_done(index, &data["item"]),
            "response.completed" | "response.incomplete" => {
                let response = &data["response"];
                self.read_usage(&response["usage"]);
                let cut_off = kind == "response.incomplete";
                if cut_off {
                    let reason = response.pointer("/incomplete_details/reason").and_then(Value::as_str).unwrap_or("incomplete");
                    self.builder.stop_reason =
                        Some(if reason == "max_output_tokens" { StopReason::MaxTokens } else { StopReason::Other(reason.to_string()) });
                }
                // Calls whose item never finished were cut off.
                for (_, call) in std::mem::take(&mut self.calls) {
                    self.push_call(call, true);
                }
                return Ok(true);
            }
            "response.failed" => {
                let error = &data["response"]["error"];
                return Err(api_error(error));
            }
            "error" => return Err(api_error(data.get("error").unwrap_or(&data))),
            // `response.created`, `…in_progress`, content parts, reasoning
            // summary deltas (the whole summary comes with its item), and
            // event types added after this was written.
            _ => {}
        }
        Ok(false)
    }

    fn item_done(&mut self, index: u64, item: &Value) {
        match item["type"].as_str() {
            Some("function_call") => {
                let mut call = self.calls.remove(&index).unwrap_or_default();
                // The done item carries the whole arguments.
                if let Some(arguments) = item["arguments"].as_str() {
                    call.arguments = arguments.to_string();
                }
                if let Some(id) = item["call_id"].as_str() {
                    call.call_id = id.to_string();
                }
                if let Some(name) = item["name"].as_str() {
                    call.name = name.to_string();
                }
                self.push_call(call, false);
            }
            Some("reasoning") => {
                let summary: Vec<&str> = item["summary"].as_array().into_iter().flatten().filter_map(|s| s["text"].as_str()).collect();
                let text = summary.join("\n\n");
                if !text.trim().is_empty() {
                    let _ = self.events.send(StreamEvent::Thinking(text));
                }
                // Replayed as received; the server's status field is not input.
                let mut kept = item.clone();
                if let Some(fields) = kept.as_object_mut() {
                    fields.remove("status");
                }
                self.builder.push_block(ContentBlock::ResponsesItem { item: kept }, self.events);
            }
            // Messages streamed their text already.
            _ => {}
        }
    }

    fn push_call(&mut self, call: PartialCall, cut_off: bool) {
        let max_tokens_hit = cut_off || self.builder.stop_reason == Some(StopReason::MaxTokens);
        let (input, input_error) = parse_tool_input(&call.name, &call.arguments, max_tokens_hit);
        self.builder.push_tool_use(ToolCall { id: call.call_id, name: call.name, input, input_error }, self.events);
    }

    fn read_usage(&mut self, usage: &Value) {
        let field = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        self.builder.usage.input_tokens = field("/input_tokens");
        self.builder.usage.output_tokens = field("/output_tokens");
        self.builder.usage.cache_read_input_tokens = field("/input_tokens_details/cached_tokens");
    }
}

fn api_error(error: &Value) -> ProviderError {
    let kind = error.get("code").or_else(|| error.get("type")).and_then(Value::as_str).unwrap_or("error").to_string();
    let message = error.get("message").and_then(Value::as_str).unwrap_or("").to_string();
    ProviderError::Api { kind, message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::sse::SseDecoder;

    fn decode(sse: &str) -> (Vec<StreamEvent>, Result<bool, ProviderError>, ModelResponse) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut stream = ResponseStream::new(&tx);
        let mut decoder = SseDecoder::default();
        let mut result = Ok(false);
        for event in decoder.push(sse.as_bytes()).unwrap() {
            result = stream.on_event(event);
            if !matches!(result, Ok(false)) {
                break;
            }
        }
        let mut seen = Vec::new();
        while let Ok(e) = rx.try_recv() {
            seen.push(e);
        }
        (seen, result, stream.builder.finish())
    }

    fn event(data: Value) -> String {
        format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap())
    }

    #[test]
    fn a_reasoning_item_and_a_call_are_kept_in_order_and_replayed() {
        let reasoning = json!({"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Read it."}], "encrypted_content": "gAAAA-enc", "status": "completed"});
        let sse = event(json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "status": "in_progress", "output": []}}))
            + &event(json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}}))
            + &event(json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning}))
            + &event(json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "", "status": "in_progress"}}))
            + &event(json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "{\"file_path\":"}))
            + &event(json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "\"a.txt\"}"}))
            + &event(json!({"type": "response.output_item.done", "output_index": 1, "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{\"file_path\":\"a.txt\"}", "status": "completed"}}))
            + &event(json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 64}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 120}}}));
        let (events, result, response) = decode(&sse);
        assert_eq!(result, Ok(true));
        assert_eq!(events[0], StreamEvent::Thinking("Read it.".into()));
        assert!(matches!(&events[1], StreamEvent::ToolUse(call) if call.id == "call_1" && call.input == json!({"file_path": "a.txt"})));
        assert_eq!((response.usage.input_tokens, response.usage.output_tokens, response.usage.cache_read_input_tokens), (100, 20, 64));
        let messages = vec![Message::user_text("go"), response.message, Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult { tool_use_id: "call_1".into(), content: "hi".into(), is_error: false, images: Vec::new() }],
        }];
        let body = request_body("gpt-5.5", 1000, &ModelRequest { model: None, system: "sys", messages: &messages, tools: &[] });
        expect_test::expect![[r#"[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Read it."}],"encrypted_content":"gAAAA-enc"},{"type":"function_call","call_id":"call_1","name":"read_file","arguments":"{\"file_path\":\"a.txt\"}"},{"type":"function_call_output","call_id":"call_1","output":"hi"}]"#]]
        .assert_eq(&body["input"].to_string());
        assert_eq!((body["store"].as_bool(), body["include"][0].as_str()), (Some(false), Some("reasoning.encrypted_content")));
    }

    #[test]
    fn a_failed_response_is_the_apis_error_and_the_token_limit_cuts_a_call() {
        let sse = event(json!({"type": "response.failed", "response": {"status": "failed", "error": {"code": "server_error", "message": "The model failed."}}}));
        let (_, result, _) = decode(&sse);
        assert_eq!(result, Err(ProviderError::Api { kind: "server_error".into(), message: "The model failed.".into() }));
        let sse = event(json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call", "call_id": "c", "name": "write_file", "arguments": ""}}))
            + &event(json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"content\": \"abc"}))
            + &event(json!({"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "usage": {"input_tokens": 5, "output_tokens": 9}}}));
        let (_, result, response) = decode(&sse);
        assert_eq!(result, Ok(true));
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
        assert!(response.tool_calls[0].input_error.as_deref().unwrap_or_default().contains("max_tokens"));
    }
}
