//! Model turns for the loopback model, in the Anthropic SSE wire format:
//! a text answer, or text and tool calls.
#![allow(dead_code, clippy::unwrap_used)]

use serde_json::{json, Value};

use super::mock_model::MockResponse;

fn event(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

fn message_start() -> String {
    event("message_start", json!({"type": "message_start", "message": {"id": "msg_t", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}))
}

fn message_end(stop_reason: &str) -> String {
    event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 5}}))
        + &event("message_stop", json!({"type": "message_stop"}))
}

fn text_block(index: usize, text: &str) -> String {
    event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}))
        + &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}))
        + &event("content_block_stop", json!({"type": "content_block_stop", "index": index}))
}

fn tool_block(index: usize, id: &str, name: &str, input: &Value) -> String {
    event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}))
        + &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}))
        + &event("content_block_stop", json!({"type": "content_block_stop", "index": index}))
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
