//! A guard in front of tower-lsp-server's transport, so garbage in never
//! ends the session.
//!
//! tower-lsp-server reads stdin through a tokio-util `FramedRead`, which
//! stops for good after the first frame its codec cannot decode (tokio
//! issue 3976): one message with invalid JSON, or JSON that is not a
//! JSON-RPC message, would end the server. So we frame the input ourselves,
//! pass only messages that parse as JSON-RPC, and answer the rest with a
//! JSON-RPC error response (`-32700` parse error, `-32600` invalid request).
//! Those answers must not interleave with the server's own output, so the
//! server writes into a pipe and one task copies whole frames from it, and
//! our error frames, to the real output.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};

/// Larger messages are refused (and skipped) instead of buffered.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Pipe capacity between us and tower-lsp-server.
const PIPE_BYTES: usize = 1024 * 1024;

/// One frame read from a stream.
enum Frame {
    Body(Vec<u8>),
    /// A frame we could not take (no length, too large); the string says why.
    Bad(String),
}

/// Read one `Content-Length` framed message. `None` at the end of input.
async fn read_frame<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> std::io::Result<Option<Frame>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut saw_header = false;
    loop {
        let mut line = String::new();
        // Header lines are short; a line with no end is garbage we skip in
        // bounded pieces.
        let read = (&mut *reader).take(8192).read_line(&mut line).await?;
        if read == 0 {
            return Ok(None);
        }
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = trimmed.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = Some(value.trim().parse::<usize>().map_err(|e| format!("bad Content-Length {value:?}: {e}")));
            }
        }
    }
    let length = match length {
        None => return Ok(Some(Frame::Bad("a message without Content-Length".into()))),
        Some(Err(why)) => return Ok(Some(Frame::Bad(why))),
        Some(Ok(length)) => length,
    };
    if length > MAX_MESSAGE_BYTES {
        // Skip the body to stay in sync with the stream.
        tokio::io::copy(&mut (&mut *reader).take(length as u64), &mut tokio::io::sink()).await?;
        return Ok(Some(Frame::Bad(format!("a {length}-byte message (the limit is {MAX_MESSAGE_BYTES})"))));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    Ok(Some(Frame::Body(body)))
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// The error response for a body tower-lsp-server would choke on, or
/// `None` when the body is a JSON-RPC message it can take.
fn check(body: &[u8]) -> Option<Value> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(err) => {
            tracing::warn!(%err, "ignoring a message that is not JSON");
            return Some(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("Parse error: {err}")}}));
        }
    };
    if serde_json::from_value::<Request>(value.clone()).is_ok() || serde_json::from_value::<Response>(value.clone()).is_ok() {
        return None;
    }
    tracing::warn!("ignoring JSON that is not a JSON-RPC message");
    let id = value.get("id").filter(|id| id.is_number() || id.is_string()).cloned().unwrap_or(Value::Null);
    Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": "Invalid request: not a JSON-RPC 2.0 message"}}))
}

/// Copy valid frames from `input` to `to_server`; send error frames for
/// the others to `errors`.
async fn filter_input<I: AsyncRead + Unpin, W: AsyncWrite + Unpin>(input: I, mut to_server: W, errors: mpsc::UnboundedSender<Vec<u8>>) {
    let mut reader = BufReader::new(input);
    loop {
        match read_frame(&mut reader).await {
            Ok(Some(Frame::Body(body))) => match check(&body) {
                None => {
                    if to_server.write_all(&frame(&body)).await.is_err() {
                        break;
                    }
                }
                Some(error) => {
                    let _ = errors.send(frame(error.to_string().as_bytes()));
                }
            },
            Ok(Some(Frame::Bad(why))) => {
                tracing::warn!("ignoring {why}");
                let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("Parse error: {why}")}});
                let _ = errors.send(frame(error.to_string().as_bytes()));
            }
            Ok(None) => break,
            Err(err) => {
                tracing::warn!(%err, "reading the client's messages failed");
                break;
            }
        }
    }
    // Closing the pipe tells tower-lsp-server the client is gone.
    let _ = to_server.shutdown().await;
}

/// Copy whole frames from the server's output and our error frames to `output`.
async fn merge_output<R: AsyncRead + Unpin, O: AsyncWrite + Unpin>(from_server: R, mut output: O, mut errors: mpsc::UnboundedReceiver<Vec<u8>>) {
    let mut reader = BufReader::new(from_server);
    let mut errors_open = true;
    loop {
        let bytes = tokio::select! {
            next = read_frame(&mut reader) => match next {
                Ok(Some(Frame::Body(body))) => frame(&body),
                Ok(Some(Frame::Bad(why))) => {
                    tracing::error!("the server wrote a bad frame: {why}");
                    continue;
                }
                Ok(None) | Err(_) => break,
            },
            error = errors.recv(), if errors_open => match error {
                Some(bytes) => bytes,
                None => {
                    errors_open = false;
                    continue;
                }
            },
        };
        if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

/// Serve `service` over `input`/`output` with the guard in between.
pub async fn serve_guarded<I, O, F, Fut>(input: I, output: O, serve: F)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (server_in, filter_out) = tokio::io::duplex(PIPE_BYTES);
    let (server_out, merge_in) = tokio::io::duplex(PIPE_BYTES);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel();
    let input_task = tokio::spawn(filter_input(input, filter_out, errors_tx));
    let output_task = tokio::spawn(merge_output(merge_in, output, errors_rx));
    serve(server_in, server_out).await;
    input_task.abort();
    let _ = output_task.await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn what_is_let_through() {
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#).is_none());
        assert!(check(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#).is_none());
        assert!(check(br#"{"jsonrpc":"2.0","id":3,"result":null}"#).is_none());
        let rendered: Vec<String> = [&b"{not json"[..], b"[1,2]", br#"{"id":7,"what":"ever"}"#]
            .iter()
            .map(|body| check(body).unwrap().to_string())
            .collect();
        expect_test::expect![[r#"
            {"error":{"code":-32700,"message":"Parse error: key must be a string at line 1 column 2"},"id":null,"jsonrpc":"2.0"}
            {"error":{"code":-32600,"message":"Invalid request: not a JSON-RPC 2.0 message"},"id":null,"jsonrpc":"2.0"}
            {"error":{"code":-32600,"message":"Invalid request: not a JSON-RPC 2.0 message"},"id":7,"jsonrpc":"2.0"}"#]]
        .assert_eq(&rendered.join("\n"));
    }
}
