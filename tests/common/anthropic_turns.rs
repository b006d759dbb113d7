//! Whole Anthropic streaming responses for the mock model, built from what
//! the turn says: some text, then tool calls.

#![allow(dead_code, clippy::unwrap_used)]

use serde_json::{json, Value};

use super::mock_model::MockResponse;

fn event(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

/// One model turn: optional text, then `(id, name, input)` tool calls.
pub fn turn(text: &str, calls: &[(&str, &str, Value)]) -> MockResponse {
    let mut body = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_t", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    let mut index = 0;
    if !text.is_empty() {
        body += &event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}));
        body += &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}));
        body += &event("content_block_stop", json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    for (id, name, input) in calls {
        body += &event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
        body += &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}));
        body += &event("content_block_stop", json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    let stop = if calls.is_empty() { "end_turn" } else { "tool_use" };
    body += &event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}));
    body += &event("message_stop", json!({"type": "message_stop"}));
    MockResponse::sse(&body)
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
