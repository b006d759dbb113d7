//! A loopback mock of a fill-in-the-middle model server, for the inline
//! completion tests: plain threads, one per connection, that read one HTTP
//! request, record it (path and JSON body) and answer with the next
//! scripted [`Reply`] (or the default one). A held reply waits for the test
//! to release it and notices when the client closes the connection first
//! (a dropped or cancelled completion), which the test can wait for.
//!
//! A module of the shared kit (`crate::common::fim_mock`).
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a test waits on the mock before it fails.
pub const WAIT: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub enum Reply {
    /// 200 with this JSON body.
    Json(Value),
    /// This status and body.
    Status(u16, String),
    /// Wait until the test calls [`FimMock::release`] (or the client goes
    /// away), then answer with the JSON.
    Held(Value),
    /// A 200 body that never ends (bytes sent until the client goes away).
    Endless,
}

/// One request the mock received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub body: Value,
    pub headers: String,
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    default: Option<Reply>,
    /// Replies by request path, before the queue and the default.
    by_path: Vec<(String, Reply)>,
    received: Vec<Received>,
    /// Connections whose client hung up while their reply was held or streaming.
    closed_early: usize,
    released: usize,
}

pub struct FimMock {
    pub url: String,
    state: Arc<(Mutex<State>, Condvar)>,
}

impl FimMock {
    /// A mock that answers every request with `default` unless a reply is queued.
    pub fn start(default: Reply) -> FimMock {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new((Mutex::new(State { default: Some(default), ..State::default() }), Condvar::new()));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        FimMock { url, state }
    }

    /// The `/completions` answer of an OpenAI-compatible server.
    pub fn completion(text: &str) -> Value {
        serde_json::json!({"id": "cmpl-1", "object": "text_completion", "choices": [{"index": 0, "text": text, "finish_reason": "stop"}]})
    }

    /// llama.cpp's `/infill` answer.
    pub fn infill(text: &str) -> Value {
        serde_json::json!({"content": text, "stop": true, "tokens_predicted": 4})
    }

    /// An OpenAI chat answer.
    pub fn chat(text: &str) -> Value {
        serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
    }

    pub fn push(&self, reply: Reply) {
        self.state.0.lock().unwrap().replies.push_back(reply);
    }

    /// Answer every request to `path` with `reply`.
    pub fn route(&self, path: &str, reply: Reply) {
        self.state.0.lock().unwrap().by_path.push((path.to_string(), reply));
    }

    pub fn set_default(&self, reply: Reply) {
        self.state.0.lock().unwrap().default = Some(reply);
    }

    /// Let every held reply go.
    pub fn release(&self) {
        let (lock, condvar) = &*self.state;
        lock.lock().unwrap().released += 1;
        condvar.notify_all();
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.0.lock().unwrap().received.clone()
    }

    fn wait_until(&self, what: &str, done: impl Fn(&State) -> bool) {
        let (lock, condvar) = &*self.state;
        let deadline = Instant::now() + WAIT;
        let mut state = lock.lock().unwrap();
        while !done(&state) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "timed out waiting for the mock model: {what}");
            state = condvar.wait_timeout(state, left).unwrap().0;
        }
    }

    /// Wait until `n` requests have arrived in all.
    pub fn wait_for_requests(&self, n: usize) {
        self.wait_until(&format!("{n} requests"), |s| s.received.len() >= n);
    }

    /// Wait until `n` clients in all hung up before their answer was sent.
    pub fn wait_for_closed(&self, n: usize) {
        self.wait_until(&format!("{n} connections closed by the client"), |s| s.closed_early >= n);
    }

    pub fn closed_early(&self) -> usize {
        self.state.0.lock().unwrap().closed_early
    }
}

fn read_request(stream: &mut TcpStream) -> Option<(String, String, Vec<u8>)> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let header_end = loop {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..header_end]).to_string();
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let length: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    while data.len() < header_end + length {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    }
    Some((path, head, data[header_end..header_end + length].to_vec()))
}

fn respond(stream: &mut TcpStream, status: u16, body: &str) {
    let reason = if status == 200 { "OK" } else { "Error" };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

/// Has the client closed its side? (Polled with a short read timeout while a
/// reply is held: the mock's own loop, not the test's.)
fn client_closed(stream: &mut TcpStream) -> bool {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

fn serve(mut stream: TcpStream, shared: &Arc<(Mutex<State>, Condvar)>) {
    let Some((path, headers, body)) = read_request(&mut stream) else { return };
    let (lock, condvar) = &**shared;
    let reply = {
        let mut state = lock.lock().unwrap();
        let routed = state.by_path.iter().find(|(p, _)| *p == path).map(|(_, r)| r.clone());
        state.received.push(Received { path, body: serde_json::from_slice(&body).unwrap_or(Value::Null), headers });
        let reply = routed.or_else(|| state.replies.pop_front()).or_else(|| state.default.clone());
        condvar.notify_all();
        reply
    };
    let closed = |lock: &Mutex<State>| {
        lock.lock().unwrap().closed_early += 1;
        condvar.notify_all();
    };
    match reply {
        None => respond(&mut stream, 500, "{\"error\": \"no reply scripted\"}"),
        Some(Reply::Json(value)) => respond(&mut stream, 200, &value.to_string()),
        Some(Reply::Status(status, body)) => respond(&mut stream, status, &body),
        Some(Reply::Held(value)) => {
            let released_before = lock.lock().unwrap().released;
            let deadline = Instant::now() + WAIT;
            loop {
                if lock.lock().unwrap().released > released_before {
                    respond(&mut stream, 200, &value.to_string());
                    return;
                }
                if client_closed(&mut stream) {
                    closed(lock);
                    return;
                }
                if Instant::now() > deadline {
                    return;
                }
            }
        }
        Some(Reply::Endless) => {
            let _ = write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n");
            let chunk = format!("{:x}\r\n{}\r\n", 1024, "x".repeat(1024));
            let deadline = Instant::now() + WAIT;
            while Instant::now() < deadline {
                if stream.write_all(chunk.as_bytes()).is_err() {
                    closed(lock);
                    return;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}
