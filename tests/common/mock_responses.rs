//! A loopback mock of OpenAI's Responses API (`POST /responses`) that
//! serves scripted turns (an SSE body, possibly cut short, or an error
//! status) and, like the real API, refuses a malformed request with a 400
//! and the API's own words before serving anything:
//! - a `function_call_output` whose `call_id` has no `function_call`
//!   before it in `input` ("No tool call found for function call output
//!   with call_id …");
//! - a `function_call` this mock served after a reasoning item, sent back
//!   without that reasoning item (same id, same `encrypted_content`) before
//!   it. OpenAI's reasoning guide says that without `previous_response_id`
//!   (and with `store: false` there is none) the reasoning items that led
//!   to a call must be passed back with its output; the API answers their
//!   absence with "Item 'fc_…' of type 'function_call' was provided without
//!   its required 'reasoning' item: 'rs_…'".
//!
//! As the real API does, reasoning items carry `encrypted_content` only
//! when the request's `include` asks for `reasoning.encrypted_content`.

#![allow(clippy::unwrap_used)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use super::mock_model::{read_request, RecordedRequest};

/// One scripted answer.
pub enum Turn {
    /// A 200 event stream with this body (cut wherever the test cut it).
    Stream(String),
    /// An error status with this JSON body.
    Error(u16, String),
}

/// A function call this mock served after a reasoning item.
#[derive(Clone)]
struct Served {
    /// The call's own item id (`fc_…`).
    item_id: String,
    reasoning_id: String,
    encrypted_content: Option<String>,
}

#[derive(Default)]
struct State {
    turns: VecDeque<Turn>,
    requests: Vec<RecordedRequest>,
    /// By call id, each call this mock served after a reasoning item.
    reasoning_before_call: HashMap<String, Served>,
}

pub struct ResponsesMock {
    pub url: String,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ResponsesMock {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ResponsesMock {
    pub async fn start(turns: Vec<Turn>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let state = Arc::new(Mutex::new(State { turns: turns.into(), ..State::default() }));
        let task = {
            let state = Arc::clone(&state);
            tokio::spawn(async move {
                while let Ok((socket, _)) = listener.accept().await {
                    let state = Arc::clone(&state);
                    tokio::spawn(async move {
                        let _ = serve(socket, state).await;
                    });
                }
            })
        };
        ResponsesMock { url, state, task }
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.lock().unwrap().requests.clone()
    }
}

/// The real API's error body.
pub fn invalid_request(message: &str, param: Option<&str>) -> String {
    json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": Value::Null}}).to_string()
}

/// Why the real API would refuse this request body (400), if it would.
fn refusal(body: &Value, served: &HashMap<String, Served>) -> Option<String> {
    let Some(input) = body.get("input").and_then(Value::as_array) else {
        return Some(invalid_request("Missing required parameter: 'input'.", Some("input")));
    };
    let mut calls_seen: Vec<&str> = Vec::new();
    let mut reasoning_seen: Vec<(&str, Option<&str>)> = Vec::new();
    for item in input {
        let field = |name: &str| item.get(name).and_then(Value::as_str);
        match field("type") {
            Some("reasoning") => reasoning_seen.push((field("id").unwrap_or_default(), field("encrypted_content"))),
            Some("function_call") => {
                let call_id = field("call_id").unwrap_or_default();
                if let Some(call) = served.get(call_id) {
                    let replayed =
                        reasoning_seen.iter().any(|(id, content)| *id == call.reasoning_id && *content == call.encrypted_content.as_deref());
                    if !replayed {
                        return Some(invalid_request(
                            &format!(
                                "Item '{}' of type 'function_call' was provided without its required 'reasoning' item: '{}'.",
                                call.item_id, call.reasoning_id
                            ),
                            Some("input"),
                        ));
                    }
                }
                calls_seen.push(call_id);
            }
            Some("function_call_output") => {
                let call_id = field("call_id").unwrap_or_default();
                if !calls_seen.contains(&call_id) {
                    return Some(invalid_request(&format!("No tool call found for function call output with call_id {call_id}."), Some("input")));
                }
            }
            _ => {}
        }
    }
    None
}

/// The body as the real API would send it for this request: without
/// `encrypted_content` unless `include` asked for it.
fn as_served(sse: &str, body: &Value) -> String {
    let included = body.get("include").and_then(Value::as_array).is_some_and(|i| i.iter().any(|v| v == "reasoning.encrypted_content"));
    if included {
        return sse.to_string();
    }
    sse.split_inclusive('\n')
        .map(|line| match line.strip_prefix("data: ").and_then(|d| serde_json::from_str::<Value>(d.trim_end()).ok()) {
            Some(mut data) => {
                strip_encrypted(&mut data);
                format!("data: {data}\n")
            }
            None => line.to_string(),
        })
        .collect()
}

fn strip_encrypted(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("encrypted_content");
            map.values_mut().for_each(strip_encrypted);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_encrypted),
        _ => {}
    }
}

/// Remember which reasoning item came before each function call served.
fn remember_served(sse: &str, served: &mut HashMap<String, Served>) {
    let mut last_reasoning: Option<(String, Option<String>)> = None;
    for line in sse.lines() {
        let Some(data) = line.strip_prefix("data: ").and_then(|d| serde_json::from_str::<Value>(d).ok()) else { continue };
        if data["type"] != "response.output_item.done" {
            continue;
        }
        let item = &data["item"];
        let text = |name: &str| item[name].as_str().map(str::to_string);
        match item["type"].as_str() {
            Some("reasoning") => last_reasoning = Some((text("id").unwrap_or_default(), text("encrypted_content"))),
            Some("function_call") => {
                if let (Some(call_id), Some((reasoning_id, encrypted_content))) = (text("call_id"), last_reasoning.clone()) {
                    served.insert(call_id, Served { item_id: text("id").unwrap_or_default(), reasoning_id, encrypted_content });
                }
            }
            _ => {}
        }
    }
}

async fn serve(mut socket: TcpStream, state: Arc<Mutex<State>>) -> std::io::Result<()> {
    let Some(request) = read_request(&mut socket).await? else { return Ok(()) };
    let (status, content_type, body) = {
        let mut state = state.lock().unwrap();
        let answer = if request.method != "POST" || request.path != "/responses" {
            (404, "application/json", invalid_request(&format!("Invalid URL ({} {})", request.method, request.path), None))
        } else if let Some(error) = refusal(&request.body, &state.reasoning_before_call) {
            (400, "application/json", error)
        } else {
            match state.turns.pop_front() {
                Some(Turn::Stream(sse)) => {
                    let sse = as_served(&sse, &request.body);
                    remember_served(&sse, &mut state.reasoning_before_call);
                    (200, "text/event-stream", sse)
                }
                Some(Turn::Error(status, body)) => (status, "application/json", body),
                None => (500, "application/json", json!({"error": {"message": "mock: no turn scripted", "type": "server_error"}}).to_string()),
            }
        };
        state.requests.push(request);
        answer
    };
    // No content-length: the body ends when the connection closes, so a
    // body cut short looks exactly like a truncated stream.
    let head = format!("HTTP/1.1 {status} Mock\r\ncontent-type: {content_type}\r\nconnection: close\r\n\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.shutdown().await
}
