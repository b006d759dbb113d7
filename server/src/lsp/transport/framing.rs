//! Framing: `Content-Length` messages read from the editor's stream, and
//! the resynchronisation after a broken one (see the module doc of
//! `transport`).

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Larger messages are refused (and skipped) instead of buffered.
pub(super) const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// A header line longer than this is garbage.
pub(super) const MAX_HEADER_LINE_BYTES: usize = 8 * 1024;

/// A body still short of its `Content-Length` after the input paused this
/// long is checked: if what arrived is a complete JSON value, the length
/// was too long.
pub(super) const BODY_PAUSE: Duration = Duration::from_millis(500);

pub(super) const CONTENT_LENGTH: &[u8] = b"content-length:";

/// One frame read from a stream.
#[derive(Debug, PartialEq)]
pub(super) enum Frame {
    Body(Vec<u8>),
    /// A frame we could not take; the string says why, the id is the
    /// request's when it could be read.
    Bad(String, Value),
}

/// Reads `Content-Length` framed messages and recovers from broken ones.
pub(super) struct FrameReader<R> {
    pub(super) input: R,
    pub(super) buffer: Vec<u8>,
    /// Skip to the next `Content-Length:` before reading headers.
    pub(super) resync: bool,
}

pub(super) fn find_content_length(haystack: &[u8], from: usize) -> Option<usize> {
    let last = haystack.len().checked_sub(CONTENT_LENGTH.len())?;
    // Jump between the places a `c` or `C` is (memchr), not byte by byte:
    // every body is searched once for a header inside it.
    let mut at = from;
    while at <= last {
        let i = at + memchr::memchr2(b'c', b'C', &haystack[at..=last])?;
        if haystack[i..i + CONTENT_LENGTH.len()].eq_ignore_ascii_case(CONTENT_LENGTH) {
            return Some(i);
        }
        at = i + 1;
    }
    None
}

/// The id of a JSON-RPC request in `bytes`, when they hold one.
pub(super) fn request_id(value: &Value) -> Value {
    value.get("id").filter(|id| id.is_number() || id.is_string()).cloned().unwrap_or(Value::Null)
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub(super) fn new(input: R) -> Self {
        FrameReader { input, buffer: Vec::new(), resync: false }
    }

    /// Read more input; false at the end.
    pub(super) async fn fill(&mut self) -> std::io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.input.read(&mut chunk).await?;
        self.buffer.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    /// Read more input, or `None` when none came within `pause`.
    pub(super) async fn fill_within(&mut self, pause: Duration) -> std::io::Result<Option<bool>> {
        let mut chunk = [0u8; 16 * 1024];
        match tokio::time::timeout(pause, self.input.read(&mut chunk)).await {
            Ok(read) => {
                let n = read?;
                self.buffer.extend_from_slice(&chunk[..n]);
                Ok(Some(n > 0))
            }
            Err(_) => Ok(None),
        }
    }

    pub(super) fn bad(&mut self, why: impl Into<String>) -> Frame {
        self.resync = true;
        Frame::Bad(why.into(), Value::Null)
    }

    /// Skip input up to the next `Content-Length:`. False at the end.
    pub(super) async fn skip_to_header(&mut self) -> std::io::Result<bool> {
        loop {
            if let Some(at) = find_content_length(&self.buffer, 0) {
                if at > 0 {
                    tracing::warn!(bytes = at, "skipped bytes to find the next message");
                }
                self.buffer.drain(..at);
                self.resync = false;
                return Ok(true);
            }
            // Keep a tail that may be the start of the marker.
            let keep = self.buffer.len().min(CONTENT_LENGTH.len() - 1);
            self.buffer.drain(..self.buffer.len() - keep);
            if !self.fill().await? {
                return Ok(false);
            }
        }
    }

    /// The next header line without its line end; `None` at the end.
    pub(super) async fn header_line(&mut self) -> std::io::Result<Option<Result<Vec<u8>, Frame>>> {
        loop {
            if let Some(newline) = self.buffer.iter().position(|b| *b == b'\n') {
                let mut line: Vec<u8> = self.buffer.drain(..=newline).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(Ok(line)));
            }
            if self.buffer.len() > MAX_HEADER_LINE_BYTES {
                self.buffer.clear();
                return Ok(Some(Err(self.bad(format!("a header line longer than {MAX_HEADER_LINE_BYTES} bytes")))));
            }
            if !self.fill().await? {
                return Ok(None);
            }
        }
    }

    /// Read one message. `None` at the end of input.
    pub(super) async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        if self.resync && !self.skip_to_header().await? {
            return Ok(None);
        }
        let mut length: Option<usize> = None;
        let mut saw_header = false;
        loop {
            let line = match self.header_line().await? {
                None => return Ok(None),
                Some(Err(frame)) => return Ok(Some(frame)),
                Some(Ok(line)) => line,
            };
            if line.is_empty() {
                if saw_header {
                    break;
                }
                continue;
            }
            saw_header = true;
            let Ok(line) = String::from_utf8(line) else {
                return Ok(Some(self.bad("a header line that is not UTF-8")));
            };
            let Some((name, value)) = line.split_once(':') else {
                return Ok(Some(self.bad(format!("a header line that is not `Name: value`: {:?}", preview(&line)))));
            };
            if name.trim().eq_ignore_ascii_case("content-length") {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(e) => return Ok(Some(self.bad(format!("bad Content-Length {:?}: {e}", preview(value))))),
                }
            }
        }
        let Some(length) = length else {
            return Ok(Some(self.bad("a message without Content-Length")));
        };
        if length > MAX_MESSAGE_BYTES {
            // Skip the body to stay in step with the stream.
            let mut left = length;
            while left > 0 {
                if self.buffer.is_empty() && !self.fill().await? {
                    return Ok(None);
                }
                let take = left.min(self.buffer.len());
                self.buffer.drain(..take);
                left -= take;
            }
            return Ok(Some(Frame::Bad(format!("a {length}-byte message (the limit is {MAX_MESSAGE_BYTES})"), Value::Null)));
        }
        self.body(length).await
    }

    /// Read a body of `length` bytes, noticing when the length was too long.
    pub(super) async fn body(&mut self, length: usize) -> std::io::Result<Option<Frame>> {
        let mut searched = 1;
        loop {
            // A header inside the declared body, right after a complete
            // JSON value: the length was too long, and a new message starts.
            while let Some(at) = find_content_length(&self.buffer, searched).filter(|at| *at < length) {
                if let Some(frame) = self.too_long(length, at) {
                    return Ok(Some(frame));
                }
                searched = at + 1;
            }
            if self.buffer.len() >= length {
                return Ok(Some(Frame::Body(self.buffer.drain(..length).collect())));
            }
            searched = searched.max(self.buffer.len().saturating_sub(CONTENT_LENGTH.len() - 1));
            match self.fill_within(BODY_PAUSE).await? {
                Some(true) => {}
                Some(false) => {
                    let all = self.buffer.len();
                    return Ok(self.too_long(length, all));
                }
                None => {
                    let all = self.buffer.len();
                    if let Some(frame) = self.too_long(length, all) {
                        return Ok(Some(frame));
                    }
                    if !self.fill().await? {
                        let all = self.buffer.len();
                        return Ok(self.too_long(length, all));
                    }
                }
            }
        }
    }

    /// When the first `end` bytes of the buffer start with a whole JSON
    /// value, take it as a message whose `Content-Length` (`length`) was
    /// too long; what follows it stays in the buffer as the next input. A
    /// real body cannot start with a whole value and go on: it is one value.
    pub(super) fn too_long(&mut self, length: usize, end: usize) -> Option<Frame> {
        let mut values = serde_json::Deserializer::from_slice(&self.buffer[..end]).into_iter::<Value>();
        let value = values.next()?.ok()?;
        let consumed = values.byte_offset();
        self.buffer.drain(..consumed);
        Some(Frame::Bad(format!("the Content-Length {length} is longer than the message ({consumed} bytes); it was dropped"), request_id(&value)))
    }
}

pub(super) fn preview(text: &str) -> String {
    text.chars().take(60).collect()
}

pub(super) fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}
