//! Model turns for the loopback model, in the Anthropic SSE wire format
//! (a text answer, or text and tool calls, or the events to build one),
//! and what to read back from the requests the agent sent.
#![allow(dead_code, clippy::unwrap_used)]

use serde_json::{json, Value};

use super::mock_model::MockResponse;

pub fn event(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

/// `message_start` with 10 input tokens.
pub fn message_start() -> String {
    event("message_start", json!({"type": "message_start", "message": {"id": "msg_t", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}))
}

/// `message_delta` (5 output tokens) and `message_stop`.
pub fn message_end(stop_reason: &str) -> String {
    event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 5}}))
        + &event("message_stop", json!({"type": "message_stop"}))
}

pub fn text_block(index: usize, text: &str) -> String {
    event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}))
        + &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}))
        + &event("content_block_stop", json!({"type": "content_block_stop", "index": index}))
}

/// A tool_use block whose input JSON arrives in one delta.
pub fn tool_block(index: usize, id: &str, name: &str, input: &Value) -> String {
    tool_block_in_pieces(index, id, name, input, usize::MAX)
}

/// A tool_use block whose input JSON arrives in deltas of `piece` characters.
pub fn tool_block_in_pieces(index: usize, id: &str, name: &str, input: &Value, piece: usize) -> String {
    let mut out = event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
    let text: Vec<char> = input.to_string().chars().collect();
    for chunk in text.chunks(piece.max(1)) {
        let partial: String = chunk.iter().collect();
        out += &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial}}));
    }
    out + &event("content_block_stop", json!({"type": "content_block_stop", "index": index}))
}

/// A final answer.
pub fn text(text: &str) -> MockResponse {
    MockResponse::sse(&(message_start() + &text_block(0, text) + &message_end("end_turn")))
}

/// Tool calls `(id, name, input)`, after an optional text.
pub fn tools(text: &str, calls: &[(&str, &str, Value)]) -> MockResponse {
    let mut body = message_start();
    let mut index = 0;
    if !text.is_empty() {
        body += &text_block(0, text);
        index = 1;
    }
    for (id, name, input) in calls {
        body += &tool_block(index, id, name, input);
        index += 1;
    }
    MockResponse::sse(&(body + &message_end("tool_use")))
}

/// The names in a recorded request's `tools`.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

/// The tool results in a recorded request's last message: `(tool_use_id, is_error, content)`.
pub fn last_results(body: &Value) -> Vec<(String, bool, String)> {
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let content = match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (b["tool_use_id"].as_str().unwrap().to_string(), b["is_error"].as_bool().unwrap_or(false), content)
        })
        .collect()
}
