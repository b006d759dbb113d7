//! Content-Length framing of JSON-RPC messages, as the LSP base protocol
//! defines it: the one framer the test clients and the benchmarks share.

use std::io::BufRead;

use serde_json::Value;

/// Read one message; `None` at the end of the stream or on a broken frame.
pub fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length:") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// One message with its header, ready to write.
pub fn frame(message: &Value) -> Vec<u8> {
    frame_text(&message.to_string())
}

/// Any text (even not JSON) framed as a message body.
pub fn frame_text(body: &str) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}
