//! A Server-Sent Events decoder: bytes in (in chunks cut anywhere), events
//! out. Both model APIs stream their answers this way.
//!
//! Written here rather than taken from a crate because the decoder is small,
//! the wire quirks that matter to us are few and specific (a recording that
//! ends without its final blank line; `\r\n` and bare `\r` line ends; a UTF-8
//! character split across two network reads), and we want a hard bound on how
//! much a misbehaving server can make us buffer.
//!
//! It follows the WHATWG "event stream interpretation" rules: `field: value`
//! lines, one optional space after the colon, `:` comment lines ignored,
//! several `data:` lines joined with `\n`, a blank line dispatches the event,
//! an event with no data is not dispatched. One deliberate difference: at the
//! end of the stream, [`SseDecoder::finish`] dispatches a pending event whose
//! last line was cut off without a blank line (the spec drops it). The
//! Anthropic SDK's own recordings end that way; the JSON parser behind us
//! still rejects an event that was really cut in half.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, `"message"` when absent.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Why the byte stream is not a valid event stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// One event grew past the decoder's limit.
    TooLarge { limit: usize },
    /// A line was not UTF-8.
    InvalidUtf8,
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseError::TooLarge { limit } => write!(f, "a server-sent event exceeded {limit} bytes"),
            SseError::InvalidUtf8 => write!(f, "a server-sent event line is not valid UTF-8"),
        }
    }
}

impl std::error::Error for SseError {}

/// The largest event (all its lines together) the decoder holds, by default.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Incremental decoder. Feed it with [`push`](Self::push) as chunks arrive,
/// then call [`finish`](Self::finish) at the end of the stream.
#[derive(Debug)]
pub struct SseDecoder {
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting this chunk
    /// belongs to the same line end.
    after_cr: bool,
    event: Option<String>,
    data: String,
    /// At least one `data:` line was seen for the pending event.
    has_data: bool,
    pending_bytes: usize,
    max_event_bytes: usize,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_EVENT_BYTES)
    }
}

impl SseDecoder {
    pub fn new(max_event_bytes: usize) -> Self {
        SseDecoder {
            line: Vec::new(),
            after_cr: false,
            event: None,
            data: String::new(),
            has_data: false,
            pending_bytes: 0,
            max_event_bytes,
        }
    }

    /// Decode a chunk; returns the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(pos) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.append_to_line(&rest[..pos])?;
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.process_line(&line)? {
                events.push(event);
            }
            if rest[pos] == b'\r' {
                match rest.get(pos + 1) {
                    Some(b'\n') => rest = &rest[pos + 2..],
                    Some(_) => rest = &rest[pos + 1..],
                    None => {
                        self.after_cr = true;
                        rest = &[];
                    }
                }
            } else {
                rest = &rest[pos + 1..];
            }
        }
        self.append_to_line(rest)?;
        Ok(events)
    }

    /// The stream ended: dispatch what is pending (see the module doc).
    pub fn finish(&mut self) -> Result<Option<SseEvent>, SseError> {
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            if let Some(event) = self.process_line(&line)? {
                return Ok(Some(event));
            }
        }
        Ok(self.dispatch())
    }

    fn append_to_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        self.pending_bytes += bytes.len();
        if self.pending_bytes > self.max_event_bytes {
            return Err(SseError::TooLarge { limit: self.max_event_bytes });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn process_line(&mut self, line: &[u8]) -> Result<Option<SseEvent>, SseError> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        let line = std::str::from_utf8(line).map_err(|_| SseError::InvalidUtf8)?;
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id` and `retry` matter for browser reconnection, which model
            // APIs do not use; unknown fields are ignored by the spec.
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        self.pending_bytes = 0;
        let event = self.event.take();
        if !std::mem::take(&mut self.has_data) {
            self.data.clear();
            return None;
        }
        Some(SseEvent { event: event.unwrap_or_else(|| "message".to_string()), data: std::mem::take(&mut self.data) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_chunks(input: &[u8], chunk: usize) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::default();
        let mut events = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            events.extend(decoder.push(piece).unwrap());
        }
        events.extend(decoder.finish().unwrap());
        events
    }

    fn render(events: &[SseEvent]) -> String {
        events.iter().map(|e| format!("{}: {:?}\n", e.event, e.data)).collect()
    }

    #[test]
    fn fields_comments_multiline_data_and_line_ends() {
        let input = b": a comment\r\nevent: ping\r\ndata: {}\r\n\r\ndata:first\ndata: second\n\n\
event:x\rdata:  two spaces\r\rdata\n\nevent: lonely\n\nid: 7\ndata: after id\n\n";
        let expected = expect_test::expect![[r#"
            ping: "{}"
            message: "first\nsecond"
            x: " two spaces"
            message: ""
            message: "after id"
        "#]];
        expected.assert_eq(&render(&decode_in_chunks(input, input.len())));
    }

    #[test]
    fn any_chunk_boundary_gives_the_same_events() {
        // Includes a multi-byte character and every kind of line end, so
        // some cuts fall inside "é", and between "\r" and "\n".
        let input = "event: a\r\ndata: caf\u{e9} \u{1F600}\r\n\r\n: c\rdata: x\r\rdata: y\ndata: z\n\n".as_bytes();
        let whole = decode_in_chunks(input, input.len());
        assert_eq!(whole.len(), 3);
        for size in 1..input.len() {
            assert_eq!(decode_in_chunks(input, size), whole, "chunk size {size}");
        }
    }

    #[test]
    fn recorded_streams_decode_the_same_in_any_chunking() {
        let recordings = [
            include_str!("../../../tests/data/sse/anthropic/verbatim_text_then_one_tool_use.sse"),
            include_str!("../../../tests/data/sse/anthropic/verbatim_incomplete_partial_json.sse"),
            include_str!("../../../tests/data/sse/openai/verbatim_two_parallel_tool_calls.sse"),
        ];
        for recording in recordings {
            let crlf = recording.replace('\n', "\r\n");
            for input in [recording, crlf.as_str()] {
                let whole = decode_in_chunks(input.as_bytes(), input.len());
                assert!(whole.len() > 5);
                for size in [1, 2, 3, 7, 64, 1000] {
                    assert_eq!(decode_in_chunks(input.as_bytes(), size), whole, "chunk size {size}");
                }
            }
        }
    }

    #[test]
    fn last_event_without_blank_line_is_dispatched_at_finish() {
        let events = decode_in_chunks(b"event: message_stop\ndata: {\"type\":\"message_stop\"}", 5);
        assert_eq!(events, vec![SseEvent { event: "message_stop".into(), data: "{\"type\":\"message_stop\"}".into() }]);
    }

    #[test]
    fn an_oversized_event_is_an_error_not_unbounded_memory() {
        let mut decoder = SseDecoder::new(64);
        let err = decoder.push(&[b'a'; 65]).unwrap_err();
        assert_eq!(err, SseError::TooLarge { limit: 64 });
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let mut decoder = SseDecoder::default();
        assert_eq!(decoder.push(b"data: \xff\n\n").unwrap_err(), SseError::InvalidUtf8);
    }
}
