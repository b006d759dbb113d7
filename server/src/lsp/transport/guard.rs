//! The guard: which bodies tower-lsp-server may take, and the JSON-RPC
//! error answers for the others.

use serde_json::{json, Value};

use super::*;

pub(super) fn error_response(id: Value, code: i64, message: String) -> Vec<u8> {
    frame(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string().as_bytes())
}

/// What to do with one body.
#[derive(Debug)]
pub(super) enum FrameCheck {
    /// A JSON-RPC message tower-lsp-server can take, and what kind.
    Pass(Passed),
    /// Answer this error (the body was read whole).
    Answer(Vec<u8>),
    /// Answer this parse error; the body was cut wrong, so resynchronise.
    Broken(Vec<u8>),
    /// A whole JSON value came first and more bytes followed: the
    /// Content-Length was too long. Answer the error; the bytes after
    /// `consumed` belong to what comes next.
    TooLong(Vec<u8>, usize),
}

/// Judge a body: pass it to tower-lsp-server, or answer it ourselves.
pub(super) fn check(body: &[u8]) -> FrameCheck {
    // Most messages are requests and notifications (a `didChange` per
    // keystroke): one parse decides them. Anything else takes the long way.
    if let Ok(request) = serde_json::from_slice::<Request>(body) {
        let id = request.id().filter(|id| !matches!(id, tower_lsp_server::jsonrpc::Id::Null));
        if let Some(id) = id {
            if request.method().starts_with("$/") {
                let id = serde_json::to_value(id).unwrap_or(Value::Null);
                return FrameCheck::Answer(error_response(id, -32601, format!("Method not found: {}", request.method())));
            }
        }
        let passed = match request.id() {
            Some(_) => Passed::Other,
            None => Passed::notification(request.method(), request.params()),
        };
        return FrameCheck::Pass(passed);
    }
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(err) => {
            let mut values = serde_json::Deserializer::from_slice(body).into_iter::<Value>();
            if let Some(Ok(value)) = values.next() {
                let consumed = values.byte_offset();
                tracing::warn!(consumed, length = body.len(), "a message shorter than its Content-Length");
                let message = format!("Parse error: the Content-Length {} is longer than the message ({consumed} bytes); it was dropped", body.len());
                return FrameCheck::TooLong(error_response(request_id(&value), -32700, message), consumed);
            }
            tracing::warn!(%err, "ignoring a message that is not JSON");
            return FrameCheck::Broken(error_response(Value::Null, -32700, format!("Parse error: {err}")));
        }
    };
    let method = value.get("method").and_then(Value::as_str);
    if let (Some(method), Some(id)) = (method, value.get("id").filter(|id| id.is_number() || id.is_string())) {
        // The spec: a `$/` request the server does not know must get
        // MethodNotFound; tower-lsp-server drops it silently.
        if method.starts_with("$/") {
            return FrameCheck::Answer(error_response(id.clone(), -32601, format!("Method not found: {method}")));
        }
    }
    if serde_json::from_value::<Request>(value.clone()).is_ok() || serde_json::from_value::<Response>(value.clone()).is_ok() {
        let notification = value.get("id").is_none();
        return FrameCheck::Pass(match method {
            Some(method) if notification => Passed::notification(method, value.get("params")),
            _ => Passed::Other,
        });
    }
    tracing::warn!("ignoring JSON that is not a JSON-RPC message");
    FrameCheck::Answer(error_response(request_id(&value), -32600, "Invalid request: not a JSON-RPC 2.0 message".into()))
}

/// The messages the input filter treats apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Passed {
    /// The `exit` notification: the session ends.
    Exit,
    /// The `initialized` notification: from now on tower-lsp-server
    /// handles every notification (before it, it may drop them).
    Initialized,
    /// `didOpen`, `didChange`, `didSave` or `didClose`: counted (see
    /// [`SyncOrder`]).
    DocumentSync,
    /// Any other request, notification or response.
    Other,
}

impl Passed {
    /// A notification's kind. A document-sync notification counts only
    /// when its params are what its handler takes: tower-lsp-server drops
    /// one it cannot read, and a count that never catches up would make
    /// every later edit wait.
    fn notification(method: &str, params: Option<&Value>) -> Passed {
        use tower_lsp_server::ls_types::{DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams};
        fn reads<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> bool {
            params.is_some_and(|params| T::deserialize(params).is_ok())
        }
        let sync = match method {
            "exit" => return Passed::Exit,
            "initialized" => return Passed::Initialized,
            "textDocument/didOpen" => reads::<DidOpenTextDocumentParams>(params),
            "textDocument/didChange" => reads::<DidChangeTextDocumentParams>(params),
            "textDocument/didSave" => reads::<DidSaveTextDocumentParams>(params),
            "textDocument/didClose" => reads::<DidCloseTextDocumentParams>(params),
            _ => false,
        };
        if sync { Passed::DocumentSync } else { Passed::Other }
    }
}
