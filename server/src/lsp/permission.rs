//! The editor's prompter. What runs, what is refused and what is asked is
//! decided by the one [`Gate`] over [`Policy`] (mode, rules, the call's
//! [`crate::tools::ToolKind`] and a shell command's structure); this file
//! only puts its questions to the user:
//!
//! - An `Edit` to review ([`crate::permissions::RuleVerdict::Review`]) goes to the editor's
//!   own preview when the client honours change annotations on an open
//!   document ([`PermissionDecision::ReviewInEditor`]: VS Code's refactor
//!   preview), else to a "Tandem: apply edit to PATH?" prompt with the diff.
//! - An ask is `window/showMessageRequest` showing the whole command (every
//!   line) and what made it asked: "Allow once" / "Always allow" / "Always
//!   allow in this project" / "Deny". "Always allow" adds the narrowest
//!   rule, named in the prompt, to the conversation thread's grants (its
//!   later runs keep it; other threads do not have it); "in this project"
//!   saves it in `.tandem/settings.local.json`, for every thread. No answer, a dismissed
//!   prompt or a timeout mean deny.

use std::path::Path;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use serde_json::Value;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, ClientError, ClientLink};
use super::config::Settings;
use super::editor::LspEditor;
use super::runs::RunOutbox;
use crate::host::{Answer, Prompter, Review};
use crate::sync::RwLockExt;
use crate::tools::PermissionRequest;

const ALLOW_ONCE: &str = "Allow once";
const ALWAYS_ALLOW: &str = "Always allow";
const ALWAYS_ALLOW_PROJECT: &str = "Always allow in this project";
const DENY: &str = "Deny";
const APPLY: &str = "Apply";
const REJECT: &str = "Reject";

/// Lines of a diff shown in a review prompt before the rest is counted.
const MAX_PROMPT_DIFF_LINES: usize = 60;

/// Asks in the editor: `window/showMessageRequest`, or the editor's own
/// edit review.
pub struct LspPrompter {
    client: Arc<dyn ClientLink>,
    settings: Arc<RwLock<Settings>>,
    editor: Arc<LspEditor>,
    outbox: Arc<RunOutbox>,
}

/// The editor's prompter: the host's gate asks through it, deciding by
/// the settings as they are now.
pub fn prompter(client: Arc<dyn ClientLink>, settings: Arc<RwLock<Settings>>, editor: Arc<LspEditor>, outbox: Arc<RunOutbox>) -> LspPrompter {
    LspPrompter { client, settings, editor, outbox }
}

impl LspPrompter {
    fn settings(&self) -> Settings {
        self.settings.reading().clone()
    }

    /// Show `message` with `actions`; `Ok(title)` is the chosen action,
    /// `Err` why there is no answer to act on.
    async fn prompt(&self, typ: MessageType, message: String, actions: &[&str]) -> Result<String, String> {
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
            request_with_timeout(&*self.client, methods::SHOW_MESSAGE_REQUEST, params, self.settings().timeouts.prompt()).await;
        match answer {
            Ok(value) => match value.get("title").and_then(Value::as_str) {
                Some(title) => Ok(title.to_string()),
                None => Err("the user dismissed the prompt".into()),
            },
            Err(ClientError::Timeout(d)) => Err(format!("the user did not answer within {} s", d.as_secs())),
            Err(ClientError::Failed(m)) => Err(format!("the prompt failed ({m})")),
        }
    }
}

#[async_trait]
impl Prompter for LspPrompter {
    async fn ask(&self, _request: &PermissionRequest, question: &str, always: bool) -> Answer {
        let mut actions = vec![ALLOW_ONCE];
        if always {
            actions.extend([ALWAYS_ALLOW, ALWAYS_ALLOW_PROJECT]);
        }
        actions.push(DENY);
        match self.prompt(MessageType::WARNING, question.to_string(), &actions).await.as_deref() {
            Ok(ALLOW_ONCE) => Answer::AllowOnce,
            Ok(ALWAYS_ALLOW) => Answer::AllowAlways,
            Ok(ALWAYS_ALLOW_PROJECT) => Answer::AllowInProject,
            Ok(DENY) => Answer::Deny("the user denied it".into()),
            Ok(_) => Answer::Deny("the user dismissed the prompt".into()),
            Err(reason) => Answer::Deny(reason.to_string()),
        }
    }

    /// In the editor's own preview where it can show one, else a prompt
    /// with the diff.
    async fn review(&self, request: &PermissionRequest, path: &Path) -> Review {
        // A file that is not open is opened first, so its edit is reviewed
        // like an open one's (per hunk, and undone with the editor's undo).
        if self.editor.previews_edit(path) || (self.editor.open_for_review(path).await && self.editor.previews_edit(path)) {
            return Review::InEditor;
        }
        let mut message = format!("Tandem: apply edit to {}?", self.editor.display(path));
        if let Some(diff) = request.preview.as_deref().filter(|d| !d.is_empty()) {
            message.push_str("\n\n");
            message.push_str(&cut_lines(diff, MAX_PROMPT_DIFF_LINES));
        }
        let review = match self.prompt(MessageType::INFO, message, &[APPLY, REJECT]).await.as_deref() {
            Ok(APPLY) => Review::Apply,
            Ok(_) => Review::Reject("the user chose Reject".into()),
            Err(reason) => Review::Reject(reason.to_string()),
        };
        if review != Review::Apply {
            self.editor.record_rejected(path, request.run.clone());
        }
        review
    }

    async fn not_saved(&self, problem: &str) {
        self.client.notify(methods::SHOW_MESSAGE, serde_json::json!({"type": 2, "message": format!("Tandem: {problem}")})).await;
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
