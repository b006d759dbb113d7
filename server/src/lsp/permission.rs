//! Permission prompts in the editor: a [`PermissionPolicy`] that asks the
//! user with `window/showMessageRequest` — "Allow once" / "Always allow" /
//! "Deny". No answer, a dismissed prompt or a timeout mean deny. "Always
//! allow" is remembered per tool for the session.
//!
//! Edits to open documents are not asked about here: in the default mode
//! they are reviewed in the editor when they are sent (see `editor.rs`), and
//! asking twice would train the user to click through.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use serde_json::Value;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, ClientError, ClientLink};
use super::config::{PermissionMode, Settings};
use super::documents::Documents;
use super::runs::RunOutbox;
use crate::agent::permission::PLAN_MODE_REFUSAL;
use crate::tools::executor::{PermissionDecision, PermissionPolicy, PermissionRequest};
use crate::workspace::normalize_lexically;

const ALLOW_ONCE: &str = "Allow once";
const ALWAYS_ALLOW: &str = "Always allow";
const DENY: &str = "Deny";

/// Tools whose calls change files through `Workspace::write`.
fn is_edit_tool(name: &str) -> bool {
    matches!(name, "edit_file" | "write_file")
}

pub struct PromptPolicy {
    client: Arc<dyn ClientLink>,
    settings: Arc<RwLock<Settings>>,
    documents: Arc<Documents>,
    root: PathBuf,
    always: Mutex<HashSet<String>>,
    outbox: Arc<RunOutbox>,
}

impl PromptPolicy {
    pub fn new(
        client: Arc<dyn ClientLink>,
        settings: Arc<RwLock<Settings>>,
        documents: Arc<Documents>,
        root: PathBuf,
        outbox: Arc<RunOutbox>,
    ) -> Self {
        PromptPolicy { client, settings, documents, root, always: Mutex::new(HashSet::new()), outbox }
    }

    /// True when the call edits a document open in the editor (reviewed there).
    fn edits_open_document(&self, request: &PermissionRequest) -> bool {
        let Some(file_path) = request.input.get("file_path").and_then(Value::as_str) else { return false };
        let path = PathBuf::from(file_path);
        let path = if path.is_absolute() { path } else { self.root.join(path) };
        let path = normalize_lexically(&path);
        let path = path.canonicalize().unwrap_or(path);
        self.documents.state(&path).is_some()
    }

    async fn ask(&self, request: &PermissionRequest, settings: &Settings) -> PermissionDecision {
        let action = |title: &str| MessageActionItem { title: title.to_string(), properties: Default::default() };
        let params = ShowMessageRequestParams {
            typ: MessageType::WARNING,
            message: format!("Tandem wants to {}", request.description),
            actions: Some(vec![action(ALLOW_ONCE), action(ALWAYS_ALLOW), action(DENY)]),
        };
        let params = match serde_json::to_value(params) {
            Ok(params) => params,
            Err(err) => return PermissionDecision::Deny(format!("cannot ask the user: {err}")),
        };
        // The client should see the tool call before it is asked about it.
        self.outbox.flush().await;
        let answer =
            request_with_timeout(&*self.client, methods::SHOW_MESSAGE_REQUEST, params, settings.timeouts.prompt()).await;
        match answer {
            Ok(value) => match value.get("title").and_then(Value::as_str) {
                Some(ALLOW_ONCE) => PermissionDecision::Allow,
                Some(ALWAYS_ALLOW) => {
                    self.always.lock().unwrap_or_else(|e| e.into_inner()).insert(request.tool.clone());
                    PermissionDecision::Allow
                }
                Some(DENY) => PermissionDecision::Deny("the user denied it".into()),
                _ => PermissionDecision::Deny("the user dismissed the prompt".into()),
            },
            Err(ClientError::Timeout(d)) => {
                PermissionDecision::Deny(format!("the user did not answer within {} s", d.as_secs()))
            }
            Err(ClientError::Failed(m)) => PermissionDecision::Deny(format!("the permission prompt failed ({m})")),
        }
    }
}

#[async_trait]
impl PermissionPolicy for PromptPolicy {
    async fn decide(&self, request: &PermissionRequest) -> PermissionDecision {
        let settings = self.settings.read().unwrap_or_else(|e| e.into_inner()).clone();
        match settings.permission_mode() {
            PermissionMode::BypassPermissions => return PermissionDecision::Allow,
            PermissionMode::Plan if !request.read_only => {
                return PermissionDecision::Deny(PLAN_MODE_REFUSAL.to_string());
            }
            PermissionMode::AcceptEdits if is_edit_tool(&request.tool) => return PermissionDecision::Allow,
            PermissionMode::Default if is_edit_tool(&request.tool) && self.edits_open_document(request) => {
                return PermissionDecision::Allow;
            }
            _ => {}
        }
        if self.always.lock().unwrap_or_else(|e| e.into_inner()).contains(&request.tool) {
            return PermissionDecision::Allow;
        }
        self.ask(request, &settings).await
    }
}
