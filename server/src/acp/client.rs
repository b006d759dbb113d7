//! What the agent asks of the ACP client, as a small trait: session
//! updates, the client's files (`fs/read_text_file`, `fs/write_text_file`),
//! permission questions (`session/request_permission`) and forms
//! (`elicitation/create`). The real one
//! is the SDK's connection; every file request has a deadline (the
//! settings' `timeouts.requestMs`).

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, ElicitationAction, ReadTextFileRequest, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification,
    SessionUpdate, WriteTextFileRequest,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use async_trait::async_trait;

/// Why a file request to the client gave no text: the client answered
/// with an error, or did not answer in time (then nobody knows whether a
/// write landed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    Failed(String),
    NoAnswer(String),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Failed(message) | FileError::NoAnswer(message) => f.write_str(message),
        }
    }
}

#[async_trait]
pub trait ClientLink: Send + Sync {
    /// Send a `session/update`; false when the client is gone.
    fn notify(&self, session: &str, update: SessionUpdate) -> bool;
    /// The file's text as the client holds it (an open buffer's unsaved
    /// text), within `timeout`.
    async fn read_text_file(&self, session: &str, path: &Path, timeout: Duration) -> Result<String, FileError>;
    async fn write_text_file(&self, session: &str, path: &Path, text: &str, timeout: Duration) -> Result<(), FileError>;
    /// Ask the user; waits as long as the user takes (the caller bounds it).
    async fn request_permission(&self, request: RequestPermissionRequest) -> Result<RequestPermissionOutcome, String>;
    /// Ask the user to fill in a form; waits as long as the user takes
    /// (the caller bounds it).
    async fn elicit(&self, request: CreateElicitationRequest) -> Result<ElicitationAction, String>;
}

/// The SDK's connection to the client.
pub struct SdkLink(pub ConnectionTo<Client>);

#[async_trait]
impl ClientLink for SdkLink {
    fn notify(&self, session: &str, update: SessionUpdate) -> bool {
        self.0.send_notification(SessionNotification::new(session.to_string(), update)).is_ok()
    }

    async fn read_text_file(&self, session: &str, path: &Path, timeout: Duration) -> Result<String, FileError> {
        let request = self.0.send_request(ReadTextFileRequest::new(session.to_string(), path));
        match tokio::time::timeout(timeout, request.block_task()).await {
            Ok(Ok(response)) => Ok(response.content),
            Ok(Err(err)) => Err(FileError::Failed(format!("the client answered fs/read_text_file with an error: {err}"))),
            Err(_) => Err(FileError::NoAnswer(format!("the client did not answer fs/read_text_file within {} ms", timeout.as_millis()))),
        }
    }

    async fn write_text_file(&self, session: &str, path: &Path, text: &str, timeout: Duration) -> Result<(), FileError> {
        let request = self.0.send_request(WriteTextFileRequest::new(session.to_string(), path, text));
        match tokio::time::timeout(timeout, request.block_task()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(err)) => Err(FileError::Failed(format!("the client's fs/write_text_file failed: {err}"))),
            Err(_) => Err(FileError::NoAnswer(format!("the client did not answer fs/write_text_file within {} ms", timeout.as_millis()))),
        }
    }

    async fn request_permission(&self, request: RequestPermissionRequest) -> Result<RequestPermissionOutcome, String> {
        match self.0.send_request(request).block_task().await {
            Ok(response) => Ok(response.outcome),
            Err(err) => Err(err.to_string()),
        }
    }

    async fn elicit(&self, request: CreateElicitationRequest) -> Result<ElicitationAction, String> {
        match self.0.send_request(request).block_task().await {
            Ok(response) => Ok(response.action),
            Err(err) => Err(err.to_string()),
        }
    }
}
