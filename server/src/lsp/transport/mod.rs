//! A guard in front of tower-lsp-server's transport, so garbage in never
//! ends the session and never makes the server deaf.
//!
//! tower-lsp-server reads stdin through a tokio-util `FramedRead`, which
//! stops for good after the first frame its codec cannot decode (tokio
//! issue 3976): one message with invalid JSON, or JSON that is not a
//! JSON-RPC message, would end the server. So we frame the input ourselves,
//! pass only messages that parse as JSON-RPC, and answer the rest with a
//! JSON-RPC error response (`-32700` parse error, `-32600` invalid request,
//! `-32601` for a `$/` request, which tower-lsp-server would leave
//! unanswered). Those answers must not interleave with the server's own
//! output, so the server writes into a pipe and one task copies whole
//! frames from it, and our error frames, to the real output.
//!
//! Resynchronisation: after a malformed frame (a header line that is not
//! UTF-8 or not `Name: value`, a missing or bad `Content-Length`, a body
//! that is not JSON) the reader skips to the next `Content-Length:` it
//! sees, wherever it is (after a body one byte too short, the leftover `}`
//! sits right before it). A `Content-Length` that is too long would
//! swallow the next message, or wait for bytes that never come: while a
//! body is incomplete, a header that follows a complete JSON value ends
//! it, and so does a pause in the input when what arrived is complete.
//!
//! The end of the input (the editor is gone), and the `exit` notification,
//! fire the `client_gone` token, so runs stop at once instead of running
//! to their end with no one to answer.

//!
//! [`crate::wire`] reads the frames (the framing every LSP-style wire of
//! Tandem shares), `guard.rs` judges each body; this file runs the two
//! tasks between the editor and tower-lsp-server.

mod guard;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::{Request, Response};

use crate::wire::{frame, request_id, Frame, FrameReader};
use guard::*;

/// Pipe capacity between us and tower-lsp-server.
const PIPE_BYTES: usize = 1024 * 1024;

/// After the client is gone, how long the server may take to wind down
/// (runs answer `cancelled`) before the session ends regardless.
const WIND_DOWN: Duration = Duration::from_secs(2);

/// The order of the client's document changes against its answers.
///
/// tower-lsp-server hands the answer to one of our requests (the
/// `workspace/applyEdit` of an agent edit) to its waiter as soon as it is
/// read, while a `didChange` the client sent before that answer may still
/// wait in the service's queue. Judged at that moment, the buffer would be
/// one the client no longer has (Neovim sends the first hunk of an edit at
/// once and the rest a moment later: the edit looked partly applied).
/// The input filter counts the document-sync notifications it passes (from
/// `initialized` on: before it tower-lsp-server may drop them);
/// `Documents` counts those it has applied. Whoever has just been answered
/// waits until the second count reaches the first
/// (`Documents::caught_up`): the buffer is then at least the one the
/// client had when it answered.
#[derive(Debug, Default)]
pub struct SyncOrder {
    read: AtomicU64,
}

impl SyncOrder {
    /// Document-sync notifications passed to the server so far.
    pub fn read(&self) -> u64 {
        self.read.load(Ordering::SeqCst)
    }
}

/// Copy valid frames from `input` to `to_server`; send error frames for
/// the others to `errors`. Fires `client_gone` at the end of input or
/// after `exit`. Counts document-sync notifications in `order`.
async fn filter_input<I: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    input: I,
    mut to_server: W,
    errors: mpsc::UnboundedSender<Vec<u8>>,
    client_gone: CancellationToken,
    order: Arc<SyncOrder>,
) {
    let mut reader = FrameReader::new(input);
    let mut counting = false;
    loop {
        match reader.next().await {
            Ok(Some(Frame::Body(body))) => match check(&body) {
                FrameCheck::Pass(passed) => {
                    let exit = passed == Passed::Exit;
                    if exit {
                        client_gone.cancel();
                    }
                    counting |= passed == Passed::Initialized;
                    // Counted before it is passed on, so before any answer
                    // read after it reaches its waiter.
                    if counting && passed == Passed::DocumentSync {
                        order.read.fetch_add(1, Ordering::SeqCst);
                    }
                    if to_server.write_all(&frame(&body)).await.is_err() || exit {
                        break;
                    }
                }
                FrameCheck::Answer(error) => {
                    let _ = errors.send(error);
                }
                FrameCheck::Broken(error) => {
                    reader.decoder.resync();
                    let _ = errors.send(error);
                }
                FrameCheck::TooLong(error, consumed) => {
                    // What followed the message is read again as input.
                    reader.decoder.put_back(&body[consumed..]);
                    let _ = errors.send(error);
                }
            },
            Ok(Some(Frame::Bad(why, id))) => {
                tracing::warn!("ignoring {why}");
                let _ = errors.send(error_response(id, -32700, format!("Parse error: {why}")));
            }
            Ok(None) => break,
            Err(err) => {
                tracing::warn!(%err, "reading the client's messages failed");
                break;
            }
        }
    }
    client_gone.cancel();
    // Closing the pipe tells tower-lsp-server the client is gone.
    let _ = to_server.shutdown().await;
}

/// Copy whole frames from the server's output and our error frames to `output`.
async fn merge_output<R: AsyncRead + Unpin, O: AsyncWrite + Unpin>(
    from_server: R,
    mut output: O,
    mut errors: mpsc::UnboundedReceiver<Vec<u8>>,
    client_gone: CancellationToken,
) {
    let mut reader = FrameReader::new(from_server);
    let mut errors_open = true;
    loop {
        let bytes = tokio::select! {
            next = reader.next() => match next {
                Ok(Some(Frame::Body(body))) => frame(&body),
                Ok(Some(Frame::Bad(why, _))) => {
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
            // Nobody reads our output: the editor is gone.
            client_gone.cancel();
            break;
        }
    }
}

/// Serve `service` over `input`/`output` with the guard in between.
/// `client_gone` fires when the input ends, after `exit`, or when the
/// output is closed; the session then ends within [`WIND_DOWN`].
pub async fn serve_guarded<I, O, F, Fut>(input: I, output: O, client_gone: CancellationToken, order: Arc<SyncOrder>, serve: F)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (server_in, filter_out) = tokio::io::duplex(PIPE_BYTES);
    let (server_out, merge_in) = tokio::io::duplex(PIPE_BYTES);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel();
    let input_task = tokio::spawn(filter_input(input, filter_out, errors_tx, client_gone.clone(), order));
    let output_task = tokio::spawn(merge_output(merge_in, output, errors_rx, client_gone.clone()));
    let wound_down = async {
        client_gone.cancelled().await;
        tokio::time::sleep(WIND_DOWN).await;
    };
    tokio::select! {
        () = serve(server_in, server_out) => {}
        () = wound_down => tracing::warn!("the server did not wind down after the client went away; ending the session"),
    }
    input_task.abort();
    let _ = tokio::time::timeout(WIND_DOWN, output_task).await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use proptest::prelude::*;

    fn rendered(verdict: FrameCheck) -> String {
        let bytes = match verdict {
            FrameCheck::Pass(Passed::Exit) => return "pass, exit".into(),
            FrameCheck::Pass(_) => return "pass".into(),
            FrameCheck::Answer(bytes) => bytes,
            FrameCheck::Broken(bytes) => bytes,
            FrameCheck::TooLong(bytes, _) => bytes,
        };
        let text = String::from_utf8(bytes).unwrap();
        text.split_once("\r\n\r\n").unwrap().1.to_string()
    }

    #[test]
    fn what_is_let_through() {
        let bodies: [&[u8]; 10] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":3,"result":null}"#,
            b"{not json",
            b"[1,2]",
            br#"{"id":7,"what":"ever"}"#,
            br#"{"jsonrpc":"2.0","id":8,"method":"$/unknown"}"#,
            br#"{"jsonrpc":"2.0","method":"exit"}"#,
            // A request named exit is not the exit notification.
            br#"{"jsonrpc":"2.0","id":9,"method":"exit"}"#,
            br#"{"jsonrpc":"2.0","id":null,"method":"$/unknown"}"#,
        ];
        let out: Vec<String> = bodies.iter().map(|body| rendered(check(body))).collect();
        expect_test::expect![[r#"
            pass
            pass
            pass
            {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: key must be a string at line 1 column 2"}}
            {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: not a JSON-RPC 2.0 message"}}
            {"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid request: not a JSON-RPC 2.0 message"}}
            {"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found: $/unknown"}}
            pass, exit
            pass
            pass"#]]
        .assert_eq(&out.join("\n"));
    }

    /// Split framed output into bodies (output the server framed: every
    /// frame is whole).
    fn bodies(bytes: &[u8]) -> Vec<Value> {
        let mut decoder = crate::wire::Decoder::new();
        decoder.push(bytes);
        std::iter::from_fn(|| decoder.next_frame())
            .map(|frame| match frame {
                Frame::Body(body) => serde_json::from_slice(&body).unwrap(),
                bad => panic!("the output has a bad frame: {bad:?}"),
            })
            .collect()
    }

    /// Run the input filter over `input`: what reaches the server, and the
    /// errors answered.
    fn filter(input: Vec<u8>) -> (Vec<Value>, Vec<Value>) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let (errors_tx, mut errors_rx) = mpsc::unbounded_channel();
            let mut to_server = Vec::new();
            filter_input(&input[..], &mut to_server, errors_tx, CancellationToken::new(), Arc::default()).await;
            let mut errors = Vec::new();
            while let Ok(error) = errors_rx.try_recv() {
                errors.extend(bodies(&error));
            }
            (bodies(&to_server), errors)
        })
    }

    /// The document-sync notifications passed on are counted from
    /// `initialized` on (tower-lsp-server may drop those before it), and
    /// nothing else is: not requests, answers, other notifications, ones
    /// whose params their handler cannot take, nor what the guard answered
    /// itself.
    #[test]
    fn document_sync_notifications_are_counted_from_initialized_on() {
        let document = json!({"uri": "file:///w/a.txt", "languageId": "plaintext", "version": 1, "text": ""});
        let notification = |method: &str| {
            let params = match method {
                "textDocument/didOpen" => json!({"textDocument": document}),
                "textDocument/didChange" => json!({"textDocument": {"uri": "file:///w/a.txt", "version": 2}, "contentChanges": []}),
                _ => json!({"textDocument": {"uri": "file:///w/a.txt"}}),
            };
            json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
        };
        let mut input = Vec::new();
        for body in [
            notification("textDocument/didOpen"),
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string(),
            notification("initialized"),
            notification("textDocument/didOpen"),
            notification("textDocument/didChange"),
            json!({"jsonrpc": "2.0", "id": 7, "result": {"applied": true}}).to_string(),
            notification("textDocument/didSave"),
            notification("textDocument/didChange"),
            notification("textDocument/didClose"),
            notification("textDocument/didChangeX"),
            json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/didChange", "params": {}}).to_string(),
            notification("workspace/didChangeConfiguration"),
            // Params its handler cannot take: the framework drops it.
            json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {}}}).to_string(),
            "{not json".to_string(),
        ] {
            input.extend_from_slice(&framed(&body, body.len()));
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let order = Arc::new(SyncOrder::default());
        runtime.block_on(filter_input(&input[..], tokio::io::sink(), mpsc::unbounded_channel().0, CancellationToken::new(), Arc::clone(&order)));
        assert_eq!(order.read(), 5);
    }

    fn framed(body: &str, length: usize) -> Vec<u8> {
        let mut out = format!("Content-Length: {length}\r\n\r\n").into_bytes();
        out.extend_from_slice(body.as_bytes());
        out
    }

    fn request(id: u64, text: &str) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": "tandem/echo", "params": {"text": text}}).to_string()
    }

    #[test]
    fn each_malformed_frame_gets_one_parse_error_and_the_next_message_passes() {
        let mut input = Vec::new();
        input.extend_from_slice(b"X-Bad: \xff\xfe\r\n\r\n");
        input.extend(framed(&request(1, "a"), request(1, "a").len() - 3));
        input.extend(framed(&request(2, "b"), request(2, "b").len() + 25));
        input.extend_from_slice(b"garbage without a colon\r\n");
        input.extend_from_slice(b"Content-Length: twelve\r\n\r\n");
        input.extend(framed(&request(3, "c"), request(3, "c").len()));
        let (passed, errors) = filter(input);
        assert_eq!(passed, vec![serde_json::from_str::<Value>(&request(3, "c")).unwrap()]);
        let messages: Vec<String> = errors.iter().map(|e| format!("{} {}", e["id"], e["error"]["message"])).collect();
        expect_test::expect![[r#"
            null "Parse error: a header line that is not UTF-8"
            null "Parse error: EOF while parsing a string at line 1 column 66"
            2 "Parse error: the Content-Length 94 is longer than the message (69 bytes); it was dropped"
            null "Parse error: a header line that is not `Name: value`: \"garbage without a colon\""
            null "Parse error: bad Content-Length \" twelve\": invalid digit found in string""#]]
        .assert_eq(&messages.join("\n"));
    }

    #[derive(Debug, Clone)]
    enum Fault {
        /// A line of random bytes where a header should be.
        Garbage(Vec<u8>),
        /// A header line that is not UTF-8.
        NotUtf8,
        /// A valid message whose Content-Length is short by this much.
        Short(usize),
        /// … or long by this much.
        Long(usize),
        /// A body that is not JSON, correctly framed.
        NotJson(String),
        /// A valid message: it must pass.
        Valid(String),
    }

    fn fault() -> impl Strategy<Value = Fault> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 1..40)
                .prop_filter("one line, not a header, not blank", |b| {
                    !b.contains(&b'\n') && !b.contains(&b':') && b.iter().any(|c| !c.is_ascii_whitespace())
                })
                .prop_map(Fault::Garbage),
            Just(Fault::NotUtf8),
            (1usize..8).prop_map(Fault::Short),
            (1usize..120).prop_map(Fault::Long),
            "[a-z{}\\[\\]:,\" ]{1,30}"
                .prop_filter("no JSON value at its start", |s| !matches!(serde_json::Deserializer::from_str(s).into_iter::<Value>().next(), Some(Ok(_))))
                .prop_map(Fault::NotJson),
            "[a-zé😀 ]{0,20}".prop_map(Fault::Valid),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// Any run of broken frames: each gets a parse error (a broken
        /// header line right after a broken frame is skipped with it, while
        /// looking for the next `Content-Length:`), and every valid message
        /// among them, and the last one, reach the server intact.
        #[test]
        fn fuzzed_framing_never_loses_a_valid_message(faults in proptest::collection::vec(fault(), 0..12), last in "[a-z]{0,10}") {
            let mut input = Vec::new();
            let mut expected = Vec::new();
            let mut broken = 0;
            let mut skipping = false;
            for (i, fault) in faults.iter().enumerate() {
                let id = i as u64 + 1;
                match fault {
                    Fault::Garbage(bytes) => {
                        input.extend_from_slice(bytes);
                        input.extend_from_slice(b"\r\n");
                        broken += usize::from(!skipping);
                        skipping = true;
                    }
                    Fault::NotUtf8 => {
                        input.extend_from_slice(b"X-Editor: \xc3\x28\r\n");
                        broken += usize::from(!skipping);
                        skipping = true;
                    }
                    Fault::Short(by) => {
                        let body = request(id, "short");
                        input.extend(framed(&body, body.len() - by));
                        broken += 1;
                        skipping = true;
                    }
                    Fault::Long(by) => {
                        let body = request(id, "long");
                        input.extend(framed(&body, body.len() + by));
                        broken += 1;
                        skipping = false;
                    }
                    Fault::NotJson(text) => {
                        input.extend(framed(text, text.len()));
                        broken += 1;
                        skipping = true;
                    }
                    Fault::Valid(text) => {
                        let body = request(id, text);
                        input.extend(framed(&body, body.len()));
                        expected.push(serde_json::from_str::<Value>(&body).unwrap());
                        skipping = false;
                    }
                }
            }
            let body = request(9999, &last);
            input.extend(framed(&body, body.len()));
            expected.push(serde_json::from_str::<Value>(&body).unwrap());
            let (passed, errors) = filter(input);
            prop_assert_eq!(passed, expected);
            prop_assert_eq!(errors.len(), broken, "{:?}", errors);
        }
    }
}

/// The whole server (tower-lsp-server and our handlers) behind the guard,
/// fed requests and notifications with fuzzed parameters, some of them
/// framed wrong; a request after them must still be answered.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod fuzz_params {
    use proptest::prelude::*;
    use serde_json::{json, Value};
    use tokio::io::AsyncWriteExt;
    use crate::wire::FrameReader;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (-1.0e9f64..1.0e9).prop_map(Value::from),
            "[a-zA-Z0-9:/._é😀 -]{0,12}".prop_map(Value::from),
            Just(json!("file:///tmp/x.rs")),
            Just(json!({"line": 4294967295u64, "character": -1})),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("textDocument".to_string()),
                        Just("uri".to_string()),
                        Just("version".to_string()),
                        Just("range".to_string()),
                        Just("contentChanges".to_string()),
                        Just("text".to_string()),
                        Just("command".to_string()),
                        Just("arguments".to_string()),
                        Just("id".to_string()),
                        "[a-z]{1,6}",
                    ],
                    inner,
                    0..4,
                )
                .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    const METHODS: &[&str] = &[
        "textDocument/didOpen",
        "textDocument/didChange",
        "textDocument/didSave",
        "textDocument/didClose",
        "textDocument/codeAction",
        "workspace/executeCommand",
        "workspace/didChangeConfiguration",
        "workspace/didChangeWorkspaceFolders",
        "window/workDoneProgress/cancel",
        "$/cancelRequest",
        "$/setTrace",
        "tandem/unknown",
    ];

    /// How a message is framed: well, or broken in one of the ways a
    /// client gets it wrong.
    #[derive(Debug, Clone, Copy)]
    enum Framing {
        Good,
        Short(usize),
        Long(usize),
        NotUtf8Header,
    }

    fn framing() -> impl Strategy<Value = Framing> {
        prop_oneof![
            4 => Just(Framing::Good),
            1 => (1usize..5).prop_map(Framing::Short),
            1 => (1usize..40).prop_map(Framing::Long),
            1 => Just(Framing::NotUtf8Header),
        ]
    }

    fn message() -> impl Strategy<Value = (usize, bool, Value, Framing)> {
        (0..METHODS.len(), any::<bool>(), json_value(), framing())
    }

    fn frame(value: &Value) -> Vec<u8> {
        framed(value, Framing::Good)
    }

    fn framed(value: &Value, framing: Framing) -> Vec<u8> {
        let body = value.to_string();
        let (length, prefix): (usize, &[u8]) = match framing {
            Framing::Good => (body.len(), b""),
            Framing::Short(by) => (body.len() - by, b""),
            Framing::Long(by) => (body.len() + by, b""),
            Framing::NotUtf8Header => (body.len(), b"X-Client: \xff\xfe\r\n"),
        };
        let mut out = prefix.to_vec();
        out.extend_from_slice(format!("Content-Length: {length}\r\n\r\n{body}").as_bytes());
        out
    }

    /// Read frames until the response with `id` (bounded by the caller).
    async fn response_to(output: &mut FrameReader<tokio::io::DuplexStream>, id: i64) -> Value {
        loop {
            let body = output.next_json().await.unwrap().expect("the server closed its output");
            if body["id"] == json!(id) && body.get("method").is_none() {
                return body;
            }
        }
    }

    proptest! {
        // Few shrink steps: each failing case waits out its 30 s bound, and
        // without a limit a failure would take an hour to report.
        #![proptest_config(ProptestConfig { cases: 48, max_shrink_iters: 4, ..ProptestConfig::default() })]

        #[test]
        fn fuzzed_framing_and_params_then_the_server_still_answers(messages in proptest::collection::vec(message(), 1..16)) {
            let root = tempfile::tempdir().unwrap();
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            let answered = runtime.block_on(async {
                let (mut client_write, server_read) = tokio::io::duplex(1 << 20);
                let (server_write, client_read) = tokio::io::duplex(1 << 20);
                let mut client_read = FrameReader::new(client_read);
                let server = tokio::spawn(crate::lsp::serve(server_read, server_write));
                // The folder's URI as an editor sends it (`file:///C:/…` on
                // Windows; `file://` and the path was no URI there, the
                // initialize failed and every request after it answered
                // "Server not initialized").
                let root_uri = url::Url::from_file_path(root.path()).unwrap().to_string();
                let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"rootUri": root_uri, "capabilities": {}}});
                client_write.write_all(&frame(&init)).await.unwrap();
                let work = async {
                    let _ = response_to(&mut client_read, 1).await;
                    for (i, (method, is_request, params, framing)) in messages.iter().enumerate() {
                        let mut message = json!({"jsonrpc": "2.0", "method": METHODS[*method], "params": params});
                        if *is_request {
                            message["id"] = json!(1000 + i);
                        }
                        client_write.write_all(&framed(&message, *framing)).await.unwrap();
                    }
                    let probe = json!({"jsonrpc": "2.0", "id": 99, "method": "textDocument/codeAction", "params": {
                        "textDocument": {"uri": "file:///probe.rs"},
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                        "context": {"diagnostics": []}}});
                    client_write.write_all(&frame(&probe)).await.unwrap();
                    response_to(&mut client_read, 99).await
                };
                let answer = tokio::time::timeout(std::time::Duration::from_secs(30), work).await;
                drop(client_write);
                let _ = tokio::time::timeout(std::time::Duration::from_secs(10), server).await;
                answer
            });
            let answer = answered.expect("the server answered the probe in time");
            prop_assert!(answer["result"].is_array(), "{}", answer);
        }
    }
}
