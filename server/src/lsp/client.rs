//! The server's line to the editor: requests and notifications to the
//! client, behind a small trait so the applyEdit bridge, permission prompts
//! and runs can be tested in-process against a fake editor.
//!
//! Every request has a timeout (Invariant 7): an editor that never answers
//! must not hang a tool call forever.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tower_lsp_server::ls_types::{notification::Notification, request::Request};
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
    pub const PROGRESS: &str = "$/progress";
    pub const RUN_EVENT: &str = "tandem/runEvent";
    pub const LOG_MESSAGE: &str = "window/logMessage";
    pub const SHOW_MESSAGE: &str = "window/showMessage";
}

/// Requests and notifications to the editor, as raw JSON.
#[async_trait]
pub trait ClientLink: Send + Sync {
    async fn request(&self, method: &'static str, params: Value) -> Result<Value, ClientError>;
    async fn notify(&self, method: &'static str, params: Value);
}

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

macro_rules! raw_request {
    ($name:ident, $method:path) => {
        enum $name {}
        impl Request for $name {
            type Params = Value;
            type Result = Value;
            const METHOD: &'static str = $method;
        }
    };
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

raw_request!(ApplyEdit, methods::APPLY_EDIT);
raw_request!(ShowMessageRequest, methods::SHOW_MESSAGE_REQUEST);
raw_request!(ShowDocument, methods::SHOW_DOCUMENT);
raw_request!(WorkDoneProgressCreate, methods::WORK_DONE_PROGRESS_CREATE);
raw_request!(Configuration, methods::CONFIGURATION);
raw_request!(SaveDocuments, methods::SAVE_DOCUMENTS);
raw_notification!(Progress, methods::PROGRESS);
raw_notification!(RunEvent, methods::RUN_EVENT);
raw_notification!(LogMessage, methods::LOG_MESSAGE);
raw_notification!(ShowMessage, methods::SHOW_MESSAGE);

/// The real client: tower-lsp-server's [`Client`].
pub struct TowerClient(pub Client);

#[async_trait]
impl ClientLink for TowerClient {
    async fn request(&self, method: &'static str, params: Value) -> Result<Value, ClientError> {
        let client = &self.0;
        let result = match method {
            methods::APPLY_EDIT => client.send_request::<ApplyEdit>(params).await,
            methods::SHOW_MESSAGE_REQUEST => client.send_request::<ShowMessageRequest>(params).await,
            methods::SHOW_DOCUMENT => client.send_request::<ShowDocument>(params).await,
            methods::WORK_DONE_PROGRESS_CREATE => client.send_request::<WorkDoneProgressCreate>(params).await,
            methods::CONFIGURATION => client.send_request::<Configuration>(params).await,
            methods::SAVE_DOCUMENTS => client.send_request::<SaveDocuments>(params).await,
            other => return Err(ClientError::Failed(format!("the server has no request type for {other}"))),
        };
        result.map_err(|e| ClientError::Failed(format!("{} ({})", e.message, e.code)))
    }

    async fn notify(&self, method: &'static str, params: Value) {
        let client = &self.0;
        match method {
            methods::PROGRESS => client.send_notification::<Progress>(params).await,
            methods::RUN_EVENT => client.send_notification::<RunEvent>(params).await,
            methods::LOG_MESSAGE => client.send_notification::<LogMessage>(params).await,
            methods::SHOW_MESSAGE => client.send_notification::<ShowMessage>(params).await,
            other => tracing::error!(method = other, "the server has no notification type for this method"),
        }
    }
}
