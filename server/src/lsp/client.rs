//! The server's line to the editor: requests and notifications to the
//! client, behind a small trait so the applyEdit bridge, permission prompts
//! and runs can be tested in-process against a fake editor.
//!
//! Every request has a timeout (Invariant 7): an editor that never answers
//! must not hang a tool call forever. A request the server stops waiting
//! for — timed out, or its run cancelled (the tool's future is dropped) — is
//! withdrawn with `$/cancelRequest`, so an editor can close the review it
//! opened for it (VS Code's refactor preview, the Neovim plugin's prompt).
//!
//! A client whose request handlers are not told the request's id (Neovim's
//! `vim.lsp` passes a handler the params alone) asks for it with the
//! capability `experimental.tandemRequestIds: true`: each request's params
//! then carry its JSON-RPC id as `tandemRequestId`, the id a later
//! `$/cancelRequest` names.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tower::Service as _;
use tower_lsp_server::jsonrpc::{Id, Request as RpcRequest};
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::Client;

/// Why a request to the client got no usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// No answer within the timeout.
    Timeout(Duration),
    /// The client answered with an error (or the connection is gone).
    Failed(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Timeout(d) => write!(f, "no answer within {} s", d.as_secs_f32()),
            ClientError::Failed(m) => f.write_str(m),
        }
    }
}

/// The methods the server sends to the client.
pub mod methods {
    pub const APPLY_EDIT: &str = "workspace/applyEdit";
    pub const SHOW_MESSAGE_REQUEST: &str = "window/showMessageRequest";
    pub const SHOW_DOCUMENT: &str = "window/showDocument";
    pub const WORK_DONE_PROGRESS_CREATE: &str = "window/workDoneProgress/create";
    pub const CONFIGURATION: &str = "workspace/configuration";
    pub const SAVE_DOCUMENTS: &str = "tandem/saveDocuments";
    pub const TEXT_INPUT: &str = "tandem/textInput";
    pub const CODE_INTEL: &str = "tandem/codeIntel";
    pub const PROGRESS: &str = "$/progress";
    pub const RUN_EVENT: &str = "tandem/runEvent";
    pub const LOG_MESSAGE: &str = "window/logMessage";
    pub const SHOW_MESSAGE: &str = "window/showMessage";
    pub const CANCEL_REQUEST: &str = "$/cancelRequest";
    pub const REGISTER_CAPABILITY: &str = "client/registerCapability";
    pub const UNREGISTER_CAPABILITY: &str = "client/unregisterCapability";
    pub const PUBLISH_DIAGNOSTICS: &str = "textDocument/publishDiagnostics";
}

/// Requests and notifications to the editor, as raw JSON.
#[async_trait]
pub trait ClientLink: Send + Sync {
    async fn request(&self, method: &'static str, params: Value) -> Result<Value, ClientError>;
    async fn notify(&self, method: &'static str, params: Value);

    /// From now on, put each request's id in its params (`tandemRequestId`):
    /// the client asked for it at `initialize`.
    fn tag_requests(&self) {}
}

/// The capability (under `experimental`) of a client that wants its
/// requests' ids in their params.
pub const REQUEST_IDS_CAPABILITY: &str = "tandemRequestIds";

/// The params field that carries a request's id for such a client.
pub const REQUEST_ID_FIELD: &str = "tandemRequestId";

/// Send a request and give up after `timeout`.
pub async fn request_with_timeout(
    link: &dyn ClientLink,
    method: &'static str,
    params: Value,
    timeout: Duration,
) -> Result<Value, ClientError> {
    match tokio::time::timeout(timeout, link.request(method, params)).await {
        Ok(result) => result,
        Err(_) => Err(ClientError::Timeout(timeout)),
    }
}

/// A line of text from the user (`tandem/textInput`, only to clients that
/// set `textInput: true`); `None` when they typed nothing, dismissed it,
/// did not answer within `timeout`, or the client failed to ask.
pub async fn text_input(link: &dyn ClientLink, prompt: &str, placeholder: &str, timeout: Duration) -> Option<String> {
    let params = serde_json::json!({"prompt": prompt, "placeholder": placeholder});
    match request_with_timeout(link, methods::TEXT_INPUT, params, timeout).await {
        Ok(answer) => answer.get("text").and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()).map(String::from),
        Err(err) => {
            tracing::warn!(%err, prompt, "tandem/textInput failed; taken as no text");
            None
        }
    }
}

macro_rules! raw_notification {
    ($name:ident, $method:path) => {
        enum $name {}
        impl Notification for $name {
            type Params = Value;
            const METHOD: &'static str = $method;
        }
    };
}

raw_notification!(Progress, methods::PROGRESS);
raw_notification!(RunEvent, methods::RUN_EVENT);
raw_notification!(LogMessage, methods::LOG_MESSAGE);
raw_notification!(ShowMessage, methods::SHOW_MESSAGE);
raw_notification!(CancelRequest, methods::CANCEL_REQUEST);
raw_notification!(PublishDiagnostics, methods::PUBLISH_DIAGNOSTICS);

/// `params` of `method` with the text an editor shows as it is made
/// visible: the `message` of `window/showMessage`, `window/logMessage` and
/// `window/showMessageRequest` (VS Code's notifications, Emacs's echo
/// area, Kakoune's info box show it raw) may carry a file name, a command
/// or its output from the repository, whose escape sequences, carriage
/// returns or bidi overrides would make the message read otherwise
/// ([`crate::visible`]); so may a `$/progress` report's `title` and
/// `message` (a call's summary: the command it runs), which status bars
/// show. The actions' titles are the server's own words and are answered
/// back as sent, so they are left as they are.
fn shown_as_it_is(method: &str, mut params: Value) -> Value {
    let visible = |field: Option<&mut Value>| {
        if let Some(field) = field {
            if let Some(shown) = field.as_str().map(|text| crate::visible::visible(text, crate::visible::Kind::Exact).into_owned()) {
                *field = Value::String(shown);
            }
        }
    };
    match method {
        methods::SHOW_MESSAGE | methods::LOG_MESSAGE | methods::SHOW_MESSAGE_REQUEST => visible(params.get_mut("message")),
        // A review finding's message is the model's words, shown raw by
        // every editor's problem list.
        methods::PUBLISH_DIAGNOSTICS => {
            if let Some(diagnostics) = params.get_mut("diagnostics").and_then(Value::as_array_mut) {
                diagnostics.iter_mut().for_each(|d| visible(d.get_mut("message")));
            }
        }
        methods::PROGRESS => {
            if let Some(value) = params.get_mut("value") {
                visible(value.get_mut("title"));
                visible(value.get_mut("message"));
            }
        }
        _ => {}
    }
    params
}

/// The real client: tower-lsp-server's [`Client`].
pub struct TowerClient {
    client: Client,
    /// Put each request's id in its params ([`ClientLink::tag_requests`]).
    tag_requests: std::sync::atomic::AtomicBool,
}

impl TowerClient {
    pub fn new(client: Client) -> Self {
        TowerClient { client, tag_requests: std::sync::atomic::AtomicBool::new(false) }
    }
}

/// Sends `$/cancelRequest` for a request whose answer nobody waits for any
/// more (its future was dropped before the answer came).
struct WithdrawOnDrop {
    client: Client,
    id: Option<Id>,
}

impl Drop for WithdrawOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let client = self.client.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                tracing::debug!(?id, "withdrawing a request the server no longer waits for");
                client.send_notification::<CancelRequest>(json!({"id": id})).await;
            });
        }
    }
}

#[async_trait]
impl ClientLink for TowerClient {
    async fn request(&self, method: &'static str, params: Value) -> Result<Value, ClientError> {
        if !matches!(
            method,
            methods::APPLY_EDIT
                | methods::SHOW_MESSAGE_REQUEST
                | methods::SHOW_DOCUMENT
                | methods::WORK_DONE_PROGRESS_CREATE
                | methods::CONFIGURATION
                | methods::SAVE_DOCUMENTS
                | methods::TEXT_INPUT
                | methods::CODE_INTEL
                | methods::REGISTER_CAPABILITY
                | methods::UNREGISTER_CAPABILITY
        ) {
            return Err(ClientError::Failed(format!("the server has no request type for {method}")));
        }
        let id = self.client.next_request_id();
        let mut params = shown_as_it_is(method, params);
        if self.tag_requests.load(std::sync::atomic::Ordering::Relaxed) {
            if let (Value::Object(fields), Ok(tag)) = (&mut params, serde_json::to_value(&id)) {
                fields.insert(REQUEST_ID_FIELD.to_string(), tag);
            }
        }
        let request = RpcRequest::build(method).id(id.clone()).params(params).finish();
        let mut guard = WithdrawOnDrop { client: self.client.clone(), id: Some(id) };
        let answer = self.client.clone().call(request).await;
        guard.id = None;
        match answer {
            Ok(Some(response)) => {
                let (_, result) = response.into_parts();
                result.map_err(|e| ClientError::Failed(format!("{} ({})", e.message, e.code)))
            }
            Ok(None) | Err(_) => Err(ClientError::Failed("the connection to the editor is closed".into())),
        }
    }

    async fn notify(&self, method: &'static str, params: Value) {
        let client = &self.client;
        let params = shown_as_it_is(method, params);
        match method {
            methods::PROGRESS => client.send_notification::<Progress>(params).await,
            methods::RUN_EVENT => client.send_notification::<RunEvent>(params).await,
            methods::LOG_MESSAGE => client.send_notification::<LogMessage>(params).await,
            methods::SHOW_MESSAGE => client.send_notification::<ShowMessage>(params).await,
            methods::PUBLISH_DIAGNOSTICS => client.send_notification::<PublishDiagnostics>(params).await,
            other => tracing::error!(method = other, "the server has no notification type for this method"),
        }
    }

    fn tag_requests(&self) {
        self.tag_requests.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an editor shows as it is carries no control, bidi or zero-width
    /// character from the repository: each is written visibly; the rest of
    /// the params, and other methods' params, are as they were.
    #[test]
    fn messages_an_editor_shows_raw_are_made_visible() {
        let tainted = "rm a '\x1b[2K\rls' \u{202e}txt.exe\nnext line";
        let shown = r"rm a '\x1b[2K\rls' \u{202e}txt.exe".to_string() + "\nnext line";
        for method in [methods::SHOW_MESSAGE, methods::LOG_MESSAGE, methods::SHOW_MESSAGE_REQUEST] {
            let params = json!({"type": 2, "message": tainted, "actions": [{"title": "Allow once"}]});
            assert_eq!(shown_as_it_is(method, params), json!({"type": 2, "message": shown, "actions": [{"title": "Allow once"}]}), "{method}");
        }
        let progress = json!({"token": "t", "value": {"kind": "report", "message": tainted}});
        assert_eq!(shown_as_it_is(methods::PROGRESS, progress)["value"]["message"], shown);
        let event = json!({"event": {"text": tainted}});
        assert_eq!(shown_as_it_is(methods::RUN_EVENT, event.clone()), event, "run events are the editor's to show");
    }
}
