//! The permission policy in the editor: the one place that decides whether
//! a call runs. It works on the call's [`ToolKind`], never on tool names.
//!
//! - Read-only calls run. Plan mode is the run's: it refuses every change
//!   but the plan file before the policy is asked.
//! - An `Edit` in the default mode is reviewed with its diff: in the
//!   editor's own preview when the client honours change annotations on an
//!   open document ([`PermissionDecision::ReviewInEditor`]: VS Code's
//!   refactor preview), else with a "Tandem: apply edit to PATH?" prompt
//!   that carries the diff. `acceptEdits` applies edits without review.
//! - Anything else is asked with `window/showMessageRequest`: "Allow once" /
//!   "Always allow" / "Deny". No answer, a dismissed prompt or a timeout mean
//!   deny. "Always allow" is remembered per tool for the session.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use serde_json::Value;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, ClientError, ClientLink};
use super::config::{PermissionMode, Settings};
use super::editor::LspEditor;
use super::runs::RunOutbox;
use crate::tools::executor::{PermissionDecision, PermissionPolicy, PermissionRequest};
use crate::tools::ToolKind;

const ALLOW_ONCE: &str = "Allow once";
const ALWAYS_ALLOW: &str = "Always allow";
const DENY: &str = "Deny";
const APPLY: &str = "Apply";
const REJECT: &str = "Reject";

/// Lines of a diff shown in a review prompt before the rest is counted.
const MAX_PROMPT_DIFF_LINES: usize = 60;

pub struct PromptPolicy {
    client: Arc<dyn ClientLink>,
    settings: Arc<RwLock<Settings>>,
    editor: Arc<LspEditor>,
    always: Mutex<HashSet<String>>,
    outbox: Arc<RunOutbox>,
}

impl PromptPolicy {
    pub fn new(
        client: Arc<dyn ClientLink>,
        settings: Arc<RwLock<Settings>>,
        editor: Arc<LspEditor>,
        outbox: Arc<RunOutbox>,
    ) -> Self {
        PromptPolicy { client, settings, editor, always: Mutex::new(HashSet::new()), outbox }
    }

    /// Show `message` with `actions`; `Ok(title)` is the chosen action,
    /// `Err` why there is no answer to act on.
    async fn prompt(&self, typ: MessageType, message: String, actions: &[&str], settings: &Settings) -> Result<String, String> {
        let params = ShowMessageRequestParams {
            typ,
            message,
            actions: Some(
                actions.iter().map(|title| MessageActionItem { title: title.to_string(), properties: Default::default() }).collect(),
            ),
        };
        let params = serde_json::to_value(params).map_err(|err| format!("cannot ask the user: {err}"))?;
        // The client should see the tool call before it is asked about it.
        self.outbox.flush().await;
        let answer =
            request_with_timeout(&*self.client, methods::SHOW_MESSAGE_REQUEST, params, settings.timeouts.prompt()).await;
        match answer {
            Ok(value) => match value.get("title").and_then(Value::as_str) {
                Some(title) => Ok(title.to_string()),
                None => Err("the user dismissed the prompt".into()),
            },
            Err(ClientError::Timeout(d)) => Err(format!("the user did not answer within {} s", d.as_secs())),
            Err(ClientError::Failed(m)) => Err(format!("the prompt failed ({m})")),
        }
    }

    /// Review an edit: in the editor's own preview where it can show one,
    /// else a prompt with the diff.
    async fn review_edit(&self, path: &Path, request: &PermissionRequest, settings: &Settings) -> PermissionDecision {
        if self.editor.previews_edit(path) {
            return PermissionDecision::ReviewInEditor;
        }
        let mut message = format!("Tandem: apply edit to {}?", self.editor.display(path));
        if let Some(diff) = request.preview.as_deref().filter(|d| !d.is_empty()) {
            message.push_str("\n\n");
            message.push_str(&cut_lines(diff, MAX_PROMPT_DIFF_LINES));
        }
        let decision = match self.prompt(MessageType::INFO, message, &[APPLY, REJECT], settings).await.as_deref() {
            Ok(APPLY) => PermissionDecision::Allow,
            Ok(_) => PermissionDecision::Deny("the user chose Reject".into()),
            Err(reason) => PermissionDecision::Deny(reason.to_string()),
        };
        if decision != PermissionDecision::Allow {
            self.editor.record_rejected(path);
        }
        decision
    }

    async fn ask(&self, request: &PermissionRequest, settings: &Settings) -> PermissionDecision {
        let message = format!("Tandem wants to {}", describe(request));
        match self.prompt(MessageType::WARNING, message, &[ALLOW_ONCE, ALWAYS_ALLOW, DENY], settings).await.as_deref() {
            Ok(ALLOW_ONCE) => PermissionDecision::Allow,
            Ok(ALWAYS_ALLOW) => {
                self.always.lock().unwrap_or_else(|e| e.into_inner()).insert(request.tool.clone());
                PermissionDecision::Allow
            }
            Ok(DENY) => PermissionDecision::Deny("the user denied it".into()),
            Ok(_) => PermissionDecision::Deny("the user dismissed the prompt".into()),
            Err(reason) => PermissionDecision::Deny(reason.to_string()),
        }
    }
}

/// What a call will do, for the prompt: the whole command for a shell
/// call (every line), the URL for a fetch.
fn describe(request: &PermissionRequest) -> String {
    match &request.kind {
        ToolKind::Execute { command } => format!("run a shell command:\n{command}"),
        ToolKind::Fetch { url } => format!("fetch {url}"),
        _ => format!("{} {}", request.tool, request.summary).trim_end().to_string(),
    }
}

fn cut_lines(text: &str, max: usize) -> String {
    let total = text.lines().count();
    let mut out: Vec<&str> = text.lines().take(max).collect();
    let more = total.saturating_sub(max);
    let tail = format!("... ({more} more lines)");
    if more > 0 {
        out.push(&tail);
    }
    out.join("\n")
}

#[async_trait]
impl PermissionPolicy for PromptPolicy {
    async fn decide(&self, request: &PermissionRequest) -> PermissionDecision {
        let settings = self.settings.read().unwrap_or_else(|e| e.into_inner()).clone();
        let mode = settings.permission_mode();
        if mode == PermissionMode::BypassPermissions || request.read_only {
            return PermissionDecision::Allow;
        }
        // In plan mode the run itself refuses what plan mode refuses (every
        // change but the plan file); what it lets through is asked as usual.
        if let ToolKind::Edit { path } = &request.kind {
            return match mode {
                PermissionMode::AcceptEdits => PermissionDecision::Allow,
                _ if request.accept_edits => PermissionDecision::Allow,
                _ => self.review_edit(path, request, &settings).await,
            };
        }
        if self.always.lock().unwrap_or_else(|e| e.into_inner()).contains(&request.tool) {
            return PermissionDecision::Allow;
        }
        self.ask(request, &settings).await
    }
}
