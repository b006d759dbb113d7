//! What the agent asks of the ACP client, as a small trait: session
//! updates, the client's files (`fs/read_text_file`, `fs/write_text_file`)
//! and permission questions (`session/request_permission`). The real one
//! is the SDK's connection; every request has a deadline.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ReadTextFileRequest, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification, SessionUpdate, WriteTextFileRequest,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use async_trait::async_trait;

/// How long a file request to the client may take.
pub const FILE_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

#[async_trait]
pub trait ClientLink: Send + Sync {
    /// Send a `session/update`; false when the client is gone.
    fn notify(&self, session: &str, update: SessionUpdate) -> bool;
    /// The file's text as the client holds it (an open buffer's unsaved text).
    async fn read_text_file(&self, session: &str, path: &Path) -> Result<String, String>;
    async fn write_text_file(&self, session: &str, path: &Path, text: &str) -> Result<(), String>;
    /// Ask the user; waits as long as the user takes (the caller bounds it).
    async fn request_permission(&self, request: RequestPermissionRequest) -> Result<RequestPermissionOutcome, String>;
}

/// The SDK's connection to the client.
pub struct SdkLink(pub ConnectionTo<Client>);

#[async_trait]
impl ClientLink for SdkLink {
    fn notify(&self, session: &str, update: SessionUpdate) -> bool {
        self.0.send_notification(SessionNotification::new(session.to_string(), update)).is_ok()
    }

    async fn read_text_file(&self, session: &str, path: &Path) -> Result<String, String> {
        let request = self.0.send_request(ReadTextFileRequest::new(session.to_string(), path));
        match tokio::time::timeout(FILE_REQUEST_TIMEOUT, request.block_task()).await {
            Ok(Ok(response)) => Ok(response.content),
            Ok(Err(err)) => Err(err.to_string()),
            Err(_) => Err(format!("the client did not answer fs/read_text_file within {} s", FILE_REQUEST_TIMEOUT.as_secs())),
        }
    }

    async fn write_text_file(&self, session: &str, path: &Path, text: &str) -> Result<(), String> {
        let request = self.0.send_request(WriteTextFileRequest::new(session.to_string(), path, text));
        match tokio::time::timeout(FILE_REQUEST_TIMEOUT, request.block_task()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(err)) => Err(err.to_string()),
            Err(_) => Err(format!("the client did not answer fs/write_text_file within {} s", FILE_REQUEST_TIMEOUT.as_secs())),
        }
    }

    async fn request_permission(&self, request: RequestPermissionRequest) -> Result<RequestPermissionOutcome, String> {
        match self.0.send_request(request).block_task().await {
            Ok(response) => Ok(response.outcome),
            Err(err) => Err(err.to_string()),
        }
    }
}
