//! The one LSP-style wire: JSON-RPC messages framed by a `Content-Length`
//! header, as the LSP base protocol defines it. Every reader and writer of
//! that framing uses this module: the server's guard in front of
//! tower-lsp-server (`lsp::transport`), Tandem's client of the language
//! servers it starts (`language_servers::connection`), the in-process
//! editor of `tandem demo` (`lsp::demo`), the tests' LSP client and the
//! benchmarks.
//!
//! [`Decoder`] holds the framing rules and no I/O: bytes go in with
//! [`Decoder::push`], frames come out of [`Decoder::next_frame`]. A frame
//! is a body, or [`Frame::Bad`] with the reason in words (and the
//! request's id when it could be read), after which the decoder finds its
//! way back to the next message; nothing valid that follows is lost:
//!
//! - a header line that is not UTF-8, not `Name: value`, longer than
//!   [`MAX_HEADER_LINE_BYTES`], or a missing or bad `Content-Length`:
//!   the decoder skips to the next `Content-Length:` it sees (the header
//!   name is matched in any case);
//! - a body larger than [`MAX_MESSAGE_BYTES`] is skipped, not buffered;
//! - a `Content-Length` too long would swallow the next message or wait
//!   for bytes that never come: a header inside the declared body right
//!   after a whole JSON value ends the body there, and so does a pause in
//!   the input ([`Decoder::pause`]; the async reader calls it after
//!   [`BODY_PAUSE`]) or its end when what arrived is a whole JSON value.
//!
//! [`FrameReader`] feeds a decoder from a tokio `AsyncRead`
//! ([`FrameReader::next`]) or a blocking `std::io::Read`
//! ([`FrameReader::next_blocking`], for test clients on threads; it cannot
//! notice a pause). [`frame`] and [`frame_json`] write one message.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Larger messages are refused (and skipped) instead of buffered.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// A header line longer than this is garbage.
pub const MAX_HEADER_LINE_BYTES: usize = 8 * 1024;

/// A body still short of its `Content-Length` after the input paused this
/// long is checked: if what arrived is a whole JSON value, the length was
/// too long.
pub const BODY_PAUSE: Duration = Duration::from_millis(500);

/// The header that carries the length, lower case (matched in any case).
pub const CONTENT_LENGTH: &[u8] = b"content-length:";

/// One frame read from a stream.
#[derive(Debug, PartialEq)]
pub enum Frame {
    Body(Vec<u8>),
    /// A frame that could not be taken: why, in words, and the request's
    /// id when it could be read (`null` otherwise).
    Bad(String, Value),
}

/// Where the decoder is inside the current message.
#[derive(Debug)]
enum State {
    Headers { length: Option<usize>, saw_header: bool },
    /// `searched`: the body was searched for a header up to here.
    Body { length: usize, searched: usize },
    /// An oversized body being skipped; `left` bytes of it still to come.
    Skip { length: usize, left: usize },
}

const HEADERS: State = State::Headers { length: None, saw_header: false };

/// The framing rules, without I/O (see the module doc).
#[derive(Debug)]
pub struct Decoder {
    buffer: Vec<u8>,
    state: State,
    /// Skip to the next `Content-Length:` before reading headers.
    resync: bool,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder { buffer: Vec::new(), state: HEADERS, resync: false }
    }
}

/// Where `Content-Length:` (in any case) starts in `haystack`, from `from`.
pub fn find_content_length(haystack: &[u8], from: usize) -> Option<usize> {
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

/// The id of a JSON-RPC request, when `value` is one with a usable id.
pub fn request_id(value: &Value) -> Value {
    value.get("id").filter(|id| id.is_number() || id.is_string()).cloned().unwrap_or(Value::Null)
}

fn preview(text: &str) -> String {
    text.chars().take(60).collect()
}

impl Decoder {
    pub fn new() -> Self {
        Decoder::default()
    }

    /// More input.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Bytes that belong before the rest of the input (what followed a
    /// body its reader found too long). Only between frames.
    pub fn put_back(&mut self, bytes: &[u8]) {
        self.buffer.splice(0..0, bytes.iter().copied());
    }

    /// The last body was cut wrong (its reader could not use it): skip to
    /// the next `Content-Length:` before reading the next headers.
    pub fn resync(&mut self) {
        self.resync = true;
    }

    /// Inside a body that has not all arrived: a pause in the input means
    /// something here (see [`Decoder::pause`]).
    pub fn in_body(&self) -> bool {
        matches!(self.state, State::Body { .. })
    }

    /// Bytes held that are not yet part of a frame.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    fn bad(&mut self, why: impl Into<String>) -> Frame {
        self.resync = true;
        self.state = HEADERS;
        Frame::Bad(why.into(), Value::Null)
    }

    /// The next whole frame in what was pushed; `None` when more input is
    /// needed.
    pub fn next_frame(&mut self) -> Option<Frame> {
        loop {
            match self.state {
                State::Headers { length, saw_header } => {
                    if self.resync {
                        let Some(at) = find_content_length(&self.buffer, 0) else {
                            // Keep a tail that may be the start of the marker.
                            let keep = self.buffer.len().min(CONTENT_LENGTH.len() - 1);
                            self.buffer.drain(..self.buffer.len() - keep);
                            return None;
                        };
                        if at > 0 {
                            tracing::warn!(bytes = at, "skipped bytes to find the next message");
                        }
                        self.buffer.drain(..at);
                        self.resync = false;
                    }
                    let newline = memchr::memchr(b'\n', &self.buffer);
                    if newline.unwrap_or(self.buffer.len()) > MAX_HEADER_LINE_BYTES {
                        // Drop one byte and look for the next header from
                        // there: one may sit inside the garbage.
                        self.buffer.drain(..1);
                        return Some(self.bad(format!("a header line longer than {MAX_HEADER_LINE_BYTES} bytes")));
                    }
                    let newline = newline?;
                    let mut line: Vec<u8> = self.buffer.drain(..=newline).collect();
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    if line.is_empty() {
                        if !saw_header {
                            continue;
                        }
                        let Some(length) = length else {
                            return Some(self.bad("a message without Content-Length"));
                        };
                        self.state = if length > MAX_MESSAGE_BYTES {
                            State::Skip { length, left: length }
                        } else {
                            State::Body { length, searched: 1 }
                        };
                        continue;
                    }
                    let Ok(line) = String::from_utf8(line) else {
                        return Some(self.bad("a header line that is not UTF-8"));
                    };
                    let Some((name, value)) = line.split_once(':') else {
                        return Some(self.bad(format!("a header line that is not `Name: value`: {:?}", preview(&line))));
                    };
                    let mut length = length;
                    if name.trim().eq_ignore_ascii_case("content-length") {
                        match value.trim().parse::<usize>() {
                            Ok(n) => length = Some(n),
                            Err(e) => return Some(self.bad(format!("bad Content-Length {:?}: {e}", preview(value)))),
                        }
                    }
                    self.state = State::Headers { length, saw_header: true };
                }
                State::Body { length, mut searched } => {
                    // A header inside the declared body, right after a
                    // whole JSON value: the length was too long, and a new
                    // message starts.
                    while let Some(at) = find_content_length(&self.buffer, searched).filter(|at| *at < length) {
                        if let Some(frame) = self.too_long(length, at) {
                            return Some(frame);
                        }
                        searched = at + 1;
                    }
                    if self.buffer.len() >= length {
                        self.state = HEADERS;
                        return Some(Frame::Body(self.buffer.drain(..length).collect()));
                    }
                    searched = searched.max(self.buffer.len().saturating_sub(CONTENT_LENGTH.len() - 1));
                    self.state = State::Body { length, searched };
                    return None;
                }
                State::Skip { length, left } => {
                    // Skip the body to stay in step with the stream.
                    let take = left.min(self.buffer.len());
                    self.buffer.drain(..take);
                    if take < left {
                        self.state = State::Skip { length, left: left - take };
                        return None;
                    }
                    self.state = HEADERS;
                    return Some(Frame::Bad(format!("a {length}-byte message (the limit is {MAX_MESSAGE_BYTES})"), Value::Null));
                }
            }
        }
    }

    /// The input paused, or ended, inside a body: when what arrived starts
    /// with a whole JSON value, that value was the message and its
    /// `Content-Length` too long (a `Bad` frame; what follows the value is
    /// read as the next input). `None` otherwise: wait for more.
    pub fn pause(&mut self) -> Option<Frame> {
        match self.state {
            State::Body { length, .. } => {
                let all = self.buffer.len();
                self.too_long(length, all)
            }
            _ => None,
        }
    }

    /// When the first `end` bytes of the buffer start with a whole JSON
    /// value, take it as a message whose `Content-Length` (`length`) was
    /// too long; what follows it stays in the buffer as the next input. A
    /// real body cannot start with a whole value and go on: it is one value.
    fn too_long(&mut self, length: usize, end: usize) -> Option<Frame> {
        let mut values = serde_json::Deserializer::from_slice(&self.buffer[..end]).into_iter::<Value>();
        let value = values.next()?.ok()?;
        let consumed = values.byte_offset();
        self.buffer.drain(..consumed);
        self.state = HEADERS;
        Some(Frame::Bad(
            format!("the Content-Length {length} is longer than the message ({consumed} bytes); it was dropped"),
            request_id(&value),
        ))
    }
}

/// A [`Decoder`] fed from a stream.
pub struct FrameReader<R> {
    input: R,
    pub decoder: Decoder,
}

const CHUNK: usize = 16 * 1024;

impl<R> FrameReader<R> {
    pub fn new(input: R) -> Self {
        FrameReader { input, decoder: Decoder::new() }
    }
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// The next frame; `None` at the end of the input.
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        let mut chunk = [0u8; CHUNK];
        loop {
            if let Some(frame) = self.decoder.next_frame() {
                return Ok(Some(frame));
            }
            let n = if self.decoder.in_body() {
                // `read` is cancel-safe: a timed-out read took nothing.
                match tokio::time::timeout(BODY_PAUSE, self.input.read(&mut chunk)).await {
                    Ok(read) => read?,
                    Err(_) => {
                        if let Some(frame) = self.decoder.pause() {
                            return Ok(Some(frame));
                        }
                        self.input.read(&mut chunk).await?
                    }
                }
            } else {
                self.input.read(&mut chunk).await?
            };
            if n == 0 {
                return Ok(self.at_end());
            }
            self.decoder.push(&chunk[..n]);
        }
    }

    /// The next whole message parsed as JSON; `None` at the end of the
    /// input. Bad frames and bodies that are not JSON are logged and
    /// skipped (a reader that answers them uses [`FrameReader::next`]).
    pub async fn next_json(&mut self) -> std::io::Result<Option<Value>> {
        loop {
            match self.next().await? {
                None => return Ok(None),
                Some(frame) => {
                    if let Some(value) = json_of(frame) {
                        return Ok(Some(value));
                    }
                }
            }
        }
    }
}

impl<R: std::io::Read> FrameReader<R> {
    /// The next frame, blocking; `None` at the end of the input. (A
    /// blocking read cannot notice a pause: a too-long `Content-Length` is
    /// found by the header that follows, or at the end.)
    pub fn next_blocking(&mut self) -> std::io::Result<Option<Frame>> {
        let mut chunk = [0u8; CHUNK];
        loop {
            if let Some(frame) = self.decoder.next_frame() {
                return Ok(Some(frame));
            }
            let n = match self.input.read(&mut chunk) {
                Ok(n) => n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if n == 0 {
                return Ok(self.at_end());
            }
            self.decoder.push(&chunk[..n]);
        }
    }

    /// [`FrameReader::next_json`], blocking.
    pub fn next_json_blocking(&mut self) -> std::io::Result<Option<Value>> {
        loop {
            match self.next_blocking()? {
                None => return Ok(None),
                Some(frame) => {
                    if let Some(value) = json_of(frame) {
                        return Ok(Some(value));
                    }
                }
            }
        }
    }
}

impl<R> FrameReader<R> {
    /// The input ended: a body cut short may still be a whole value whose
    /// length was too long; anything else left is reported and dropped.
    fn at_end(&mut self) -> Option<Frame> {
        if let Some(frame) = self.decoder.pause() {
            return Some(frame);
        }
        if self.decoder.buffered() > 0 {
            tracing::warn!(bytes = self.decoder.buffered(), "the input ended inside a message");
        }
        None
    }
}

fn json_of(frame: Frame) -> Option<Value> {
    match frame {
        Frame::Body(body) => match serde_json::from_slice(&body) {
            Ok(value) => Some(value),
            Err(err) => {
                tracing::warn!(%err, "skipping a message that is not JSON");
                None
            }
        },
        Frame::Bad(why, _) => {
            tracing::warn!("skipping {why}");
            None
        }
    }
}

/// One message with its header, ready to write (the body need not be
/// JSON: tests send broken ones).
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// One JSON message with its header.
pub fn frame_json(message: &Value) -> Vec<u8> {
    frame(message.to_string().as_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Push `input` one piece at a time (cut at `cuts`), collecting frames;
    /// then what the end of the input gives.
    fn decode_in_pieces(input: &[u8], piece: usize) -> Vec<Frame> {
        let mut decoder = Decoder::new();
        let mut out = Vec::new();
        for chunk in input.chunks(piece.max(1)) {
            decoder.push(chunk);
            while let Some(frame) = decoder.next_frame() {
                out.push(frame);
            }
        }
        out.extend(decoder.pause());
        out
    }

    fn body(value: &Value) -> Frame {
        Frame::Body(value.to_string().into_bytes())
    }

    fn described(frames: &[Frame]) -> String {
        frames
            .iter()
            .map(|frame| match frame {
                Frame::Body(body) => format!("body {}", String::from_utf8_lossy(body)),
                Frame::Bad(why, id) => format!("bad (id {id}): {why}"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_message_read_in_pieces_of_any_size_is_whole() {
        let a = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"text": "Content-Length: 3 inside a string"}});
        let b = json!({"jsonrpc": "2.0", "method": "initialized", "params": {}});
        let mut input = frame_json(&a);
        // Extra headers, any case, and a bare `\n` line end are taken too.
        input.extend_from_slice(format!("content-type: application/vscode-jsonrpc\ncontent-LENGTH: {}\r\n\r\n{b}", b.to_string().len()).as_bytes());
        for piece in [1, 2, 3, 7, 16, 64, input.len()] {
            assert_eq!(decode_in_pieces(&input, piece), vec![body(&a), body(&b)], "pieces of {piece} bytes");
        }
    }

    #[test]
    fn nothing_comes_out_until_the_whole_body_is_in() {
        let mut decoder = Decoder::new();
        decoder.push(b"Content-Length: 7\r\n\r\n{\"a\":");
        assert_eq!(decoder.next_frame(), None);
        assert!(decoder.in_body());
        // A pause with half a value is not a message.
        assert_eq!(decoder.pause(), None);
        decoder.push(b"1}");
        assert_eq!(decoder.next_frame(), Some(Frame::Body(b"{\"a\":1}".to_vec())));
        assert!(!decoder.in_body());
    }

    #[test]
    fn bad_headers_give_a_clear_error_and_the_next_message_passes() {
        let ok = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "ok"});
        let faults: [&[u8]; 6] = [
            b"X-Bad: \xff\xfe\r\n\r\n",
            b"garbage without a colon\r\n",
            b"Content-Length: twelve\r\n\r\n",
            b"Content-Type: text/plain\r\n\r\n{}",
            b"Content-Length: -4\r\n\r\n",
            &[b'x'; MAX_HEADER_LINE_BYTES + 10],
        ];
        let mut input = Vec::new();
        for (i, fault) in faults.iter().enumerate() {
            input.extend_from_slice(fault);
            input.extend(frame_json(&ok(i as u64)));
        }
        for piece in [1, 5, 4096, input.len()] {
            expect_test::expect![[r#"
                bad (id null): a header line that is not UTF-8
                body {"jsonrpc":"2.0","id":0,"method":"ok"}
                bad (id null): a header line that is not `Name: value`: "garbage without a colon"
                body {"jsonrpc":"2.0","id":1,"method":"ok"}
                bad (id null): bad Content-Length " twelve": invalid digit found in string
                body {"jsonrpc":"2.0","id":2,"method":"ok"}
                bad (id null): a message without Content-Length
                body {"jsonrpc":"2.0","id":3,"method":"ok"}
                bad (id null): bad Content-Length " -4": invalid digit found in string
                body {"jsonrpc":"2.0","id":4,"method":"ok"}
                bad (id null): a header line longer than 8192 bytes
                body {"jsonrpc":"2.0","id":5,"method":"ok"}"#]]
            .assert_eq(&described(&decode_in_pieces(&input, piece)));
        }
    }

    #[test]
    fn an_oversized_message_is_skipped_not_buffered_and_the_next_passes() {
        let ok = json!({"jsonrpc": "2.0", "method": "after"});
        let length = MAX_MESSAGE_BYTES + 1;
        let mut decoder = Decoder::new();
        decoder.push(format!("Content-Length: {length}\r\n\r\n").as_bytes());
        let piece = vec![b' '; 1024 * 1024];
        let mut left = length;
        let mut frames = Vec::new();
        while left > 0 {
            let n = left.min(piece.len());
            decoder.push(&piece[..n]);
            left -= n;
            frames.extend(decoder.next_frame());
            assert!(decoder.buffered() <= piece.len(), "the skipped body is not kept");
        }
        decoder.push(&frame_json(&ok));
        frames.extend(decoder.next_frame());
        assert_eq!(
            described(&frames),
            format!("bad (id null): a {length}-byte message (the limit is {MAX_MESSAGE_BYTES})\nbody {ok}")
        );
    }

    #[test]
    fn a_content_length_too_long_loses_neither_message() {
        let first = json!({"jsonrpc": "2.0", "id": 1, "method": "first"});
        let second = json!({"jsonrpc": "2.0", "id": 2, "method": "second"});
        // Too long by 20: the next header sits inside the declared body.
        let text = first.to_string();
        let mut input = format!("Content-Length: {}\r\n\r\n{text}", text.len() + 20).into_bytes();
        input.extend(frame_json(&second));
        for piece in [1, 3, input.len()] {
            expect_test::expect![[r#"
                bad (id 1): the Content-Length 61 is longer than the message (41 bytes); it was dropped
                body {"jsonrpc":"2.0","id":2,"method":"second"}"#]]
            .assert_eq(&described(&decode_in_pieces(&input, piece)));
        }
        // Too long and nothing follows: the pause (or the end) tells.
        let mut decoder = Decoder::new();
        decoder.push(format!("Content-Length: {}\r\n\r\n{text}", text.len() + 5).as_bytes());
        assert_eq!(decoder.next_frame(), None);
        assert_eq!(described(&decoder.pause().into_iter().collect::<Vec<_>>()), format!("bad (id 1): the Content-Length {} is longer than the message ({} bytes); it was dropped", text.len() + 5, text.len()));
        decoder.push(&frame_json(&second));
        assert_eq!(decoder.next_frame(), Some(body(&second)));
    }

    #[test]
    fn after_a_resync_the_decoder_skips_to_the_next_header() {
        let ok = json!({"jsonrpc": "2.0", "method": "ok"});
        let mut decoder = Decoder::new();
        decoder.push(b"Content-Length: 2\r\n\r\n{x");
        assert_eq!(decoder.next_frame(), Some(Frame::Body(b"{x".to_vec())));
        // Its reader found the body broken: what follows is junk up to a header.
        decoder.resync();
        decoder.push(b"yz}\r\n\r\nCONTENT-len");
        assert_eq!(decoder.next_frame(), None);
        let rest = frame_json(&ok);
        decoder.push(&rest[b"CONTENT-len".len()..]);
        assert_eq!(decoder.next_frame(), Some(body(&ok)));
    }

    #[test]
    fn put_back_bytes_are_read_first() {
        let a = json!({"jsonrpc": "2.0", "method": "a"});
        let b = json!({"jsonrpc": "2.0", "method": "b"});
        let mut decoder = Decoder::new();
        decoder.push(&frame_json(&b));
        decoder.put_back(&frame_json(&a));
        assert_eq!(decoder.next_frame(), Some(body(&a)));
        assert_eq!(decoder.next_frame(), Some(body(&b)));
    }

    #[test]
    fn the_content_length_marker_is_found_in_any_case() {
        let hay = b"cc Content-Length: 1\r\n\r\n{}ccontent-LENGTH:";
        assert_eq!(find_content_length(hay, 0), Some(3));
        assert_eq!(find_content_length(hay, 4), Some(hay.len() - CONTENT_LENGTH.len()));
        assert_eq!(find_content_length(hay, hay.len() - CONTENT_LENGTH.len() + 1), None);
        assert_eq!(find_content_length(b"content-length", 0), None);
        assert_eq!(find_content_length(b"", 0), None);
    }

    #[test]
    fn the_blocking_reader_reads_what_the_writer_framed_and_skips_what_is_bad() {
        let a = json!({"jsonrpc": "2.0", "id": 1, "result": "é"});
        let mut input = frame_json(&a);
        input.extend(frame(b"{not json"));
        input.extend_from_slice(b"Content-Length: 5\r\n\r\n{}");
        let mut reader = FrameReader::new(&input[..]);
        assert_eq!(reader.next_json_blocking().unwrap(), Some(a.clone()));
        // `{not json` is skipped; `{}` under a length of 5 is dropped at the end.
        assert_eq!(reader.next_json_blocking().unwrap(), None);
        let mut reader = FrameReader::new(&input[..]);
        reader.next_blocking().unwrap();
        assert_eq!(reader.next_blocking().unwrap(), Some(Frame::Body(b"{not json".to_vec())));
        assert!(matches!(reader.next_blocking().unwrap(), Some(Frame::Bad(why, _)) if why.contains("longer than the message")));
        assert_eq!(reader.next_blocking().unwrap(), None);
    }

    #[tokio::test]
    async fn the_async_reader_notices_a_pause_after_a_whole_value() {
        let (mut write, read) = tokio::io::duplex(1024);
        let mut reader = FrameReader::new(read);
        let text = json!({"jsonrpc": "2.0", "id": 4, "method": "m"}).to_string();
        tokio::io::AsyncWriteExt::write_all(&mut write, format!("Content-Length: {}\r\n\r\n{text}", text.len() + 10).as_bytes()).await.unwrap();
        // The writer stays open: only the pause can end the body.
        let frame = reader.next().await.unwrap();
        assert!(matches!(&frame, Some(Frame::Bad(why, id)) if why.contains("longer than the message") && *id == json!(4)), "{frame:?}");
        let next = json!({"jsonrpc": "2.0", "method": "n"});
        tokio::io::AsyncWriteExt::write_all(&mut write, &frame_json(&next)).await.unwrap();
        assert_eq!(reader.next_json().await.unwrap(), Some(next));
        drop(write);
        assert_eq!(reader.next().await.unwrap(), None);
    }
}
