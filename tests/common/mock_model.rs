//! A loopback mock of a model API: a tokio HTTP/1.1 server that answers
//! each request with the next scripted response (status, headers, an SSE
//! body sent in parts) and records every request for assertions on what the
//! agent sent. Parts can wait for a signal from the test (to hold the stream
//! open until a tool has run) or hang until the client goes away.

#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// How long a `WaitFor` part waits before giving up (and saying so in the log).
pub const WAIT_LIMIT: Duration = Duration::from_secs(5);

pub enum Part {
    Bytes(Vec<u8>),
    /// Wait until the notify fires (or [`WAIT_LIMIT`]); logs `label` and the outcome.
    WaitFor(Arc<Notify>, &'static str),
    /// Send nothing more until the client closes the connection (bounded).
    Hang,
    /// Close the connection at once, before any response (a reset).
    Close,
    /// Send these bytes again and again, `every` apart, until the client
    /// goes away (bounded): a stream of pings, or one that never ends.
    Repeat { every: Duration, bytes: Vec<u8> },
    /// Wait until the mock has received this many requests in all (or
    /// [`WAIT_LIMIT`]); logs `label` and the outcome.
    WaitForRequests(usize, &'static str),
}

pub struct MockResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub parts: Vec<Part>,
    /// Write bodies in pieces of this many bytes (0: whole parts).
    pub piece: usize,
}

impl MockResponse {
    /// A 200 SSE response with this body, sent as is.
    pub fn sse(body: &str) -> Self {
        Self::sse_parts(vec![Part::Bytes(body.as_bytes().to_vec())])
    }

    pub fn sse_parts(parts: Vec<Part>) -> Self {
        MockResponse { status: 200, headers: vec![("content-type".into(), "text/event-stream".into())], parts, piece: 0 }
    }

    /// An error status with a JSON body.
    pub fn error(status: u16, body: &str) -> Self {
        MockResponse {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            parts: vec![Part::Bytes(body.as_bytes().to_vec())],
            piece: 0,
        }
    }

    /// No response at all: the connection closes as soon as the request is read.
    pub fn connection_reset() -> Self {
        MockResponse { status: 0, headers: Vec::new(), parts: vec![Part::Close], piece: 0 }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Send the body a few bytes at a time, so events and even UTF-8
    /// characters straddle reads.
    pub fn in_pieces(mut self, bytes: usize) -> Self {
        self.piece = bytes;
        self
    }
}

#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The body as sent, byte for byte.
    pub raw: String,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// The API's own checks on a request, before any scripted answer: `Some`
/// is the error the real API answers for a body it refuses (a thinking
/// shape the model does not take, reasoning not sent back).
pub type Rule = fn(&RecordedRequest) -> Option<MockResponse>;

#[derive(Default)]
struct State {
    responses: VecDeque<MockResponse>,
    rules: Vec<Rule>,
    requests: Vec<RecordedRequest>,
    /// Tells `WaitForRequests` parts that a request arrived.
    arrived: Arc<tokio::sync::Notify>,
}

pub struct MockModel {
    pub url: String,
    state: Arc<Mutex<State>>,
    /// What happened, in order; tests may push their own entries (tools do).
    pub log: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockModel {
    pub async fn start(responses: Vec<MockResponse>) -> Self {
        Self::start_with_log(responses, Arc::new(Mutex::new(Vec::new()))).await
    }

    pub async fn start_with_log(responses: Vec<MockResponse>, log: Arc<Mutex<Vec<String>>>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let state = Arc::new(Mutex::new(State { responses: responses.into(), ..State::default() }));
        let task = {
            let state = Arc::clone(&state);
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                while let Ok((socket, _)) = listener.accept().await {
                    let state = Arc::clone(&state);
                    let log = Arc::clone(&log);
                    tokio::spawn(async move {
                        let _ = serve(socket, state, log).await;
                    });
                }
            })
        };
        MockModel { url, state, log, task }
    }

    /// A mock that answers like the real API: each request first passes
    /// `rules` (the first that refuses it answers), then gets the next
    /// scripted response.
    pub async fn start_with_rules(responses: Vec<MockResponse>, rules: Vec<Rule>) -> Self {
        let mock = Self::start(responses).await;
        mock.state.lock().unwrap().rules = rules;
        mock
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.lock().unwrap().requests.clone()
    }

    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

async fn serve(mut socket: TcpStream, state: Arc<Mutex<State>>, log: Arc<Mutex<Vec<String>>>) -> std::io::Result<()> {
    let Some(request) = read_request(&mut socket).await? else { return Ok(()) };
    let response = {
        let mut state = state.lock().unwrap();
        let refused = state.rules.iter().find_map(|rule| rule(&request));
        state.requests.push(request);
        let n = state.requests.len();
        log.lock().unwrap().push(format!("mock: request {n}{}", if refused.is_some() { " refused" } else { "" }));
        state.arrived.notify_waiters();
        refused.or_else(|| state.responses.pop_front())
    };
    let response = response.unwrap_or_else(|| MockResponse::error(500, r#"{"error": {"message": "mock: no response scripted"}}"#));
    if matches!(response.parts.first(), Some(Part::Close)) {
        return Ok(());
    }
    let mut head = format!("HTTP/1.1 {} Mock\r\n", response.status);
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    // No content-length: the body ends when the connection closes, so a
    // body cut short looks exactly like a truncated stream.
    head.push_str("connection: close\r\n\r\n");
    socket.write_all(head.as_bytes()).await?;
    for part in response.parts {
        match part {
            Part::Bytes(bytes) => {
                let piece = if response.piece == 0 { bytes.len().max(1) } else { response.piece };
                for chunk in bytes.chunks(piece) {
                    socket.write_all(chunk).await?;
                    socket.flush().await?;
                }
            }
            Part::WaitFor(notify, label) => {
                let outcome = match tokio::time::timeout(WAIT_LIMIT, notify.notified()).await {
                    Ok(()) => "released",
                    Err(_) => "gave up waiting",
                };
                log.lock().unwrap().push(format!("mock: {label} {outcome}"));
            }
            Part::Hang => {
                let mut buf = [0u8; 256];
                let closed = tokio::time::timeout(Duration::from_secs(30), async {
                    loop {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {}
                        }
                    }
                })
                .await
                .is_ok();
                log.lock().unwrap().push(if closed { "mock: client closed".into() } else { "mock: hang timed out".into() });
                return Ok(());
            }
            Part::Close => return Ok(()),
            Part::WaitForRequests(count, label) => {
                let arrived = Arc::clone(&state.lock().unwrap().arrived);
                let reached = tokio::time::timeout(WAIT_LIMIT, async {
                    loop {
                        let notified = arrived.notified();
                        if state.lock().unwrap().requests.len() >= count {
                            return;
                        }
                        notified.await;
                    }
                })
                .await
                .is_ok();
                log.lock().unwrap().push(format!("mock: {label} {}", if reached { "released" } else { "gave up waiting" }));
            }
            Part::Repeat { every, bytes } => {
                let until = tokio::time::Instant::now() + Duration::from_secs(30);
                while tokio::time::Instant::now() < until {
                    if socket.write_all(&bytes).await.is_err() || socket.flush().await.is_err() {
                        log.lock().unwrap().push("mock: client closed".into());
                        return Ok(());
                    }
                    tokio::time::sleep(every).await;
                }
                log.lock().unwrap().push("mock: repeat timed out".into());
                return Ok(());
            }
        }
    }
    socket.shutdown().await
}

pub async fn read_request(socket: &mut TcpStream) -> std::io::Result<Option<RecordedRequest>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_string();
    let path = first.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())).collect();
    let length: usize = headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let raw = String::from_utf8_lossy(&body).into_owned();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok(Some(RecordedRequest { method, path, headers, body, raw }))
}
