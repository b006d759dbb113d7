//! The permission policy in the editor. What runs, what is refused and what
//! is asked is decided by [`Policy`] (mode, rules, the call's [`ToolKind`]
//! and a shell command's structure); this file only carries out its
//! answer with the user:
//!
//! - An `Edit` to review ([`Verdict::ReviewInEditor`]) goes to the editor's
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

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use serde_json::Value;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, ClientError, ClientLink};
use super::config::{PermissionMode, Settings};
use super::editor::LspEditor;
use super::runs::RunOutbox;
use crate::permissions::headless::ask_text;
use crate::permissions::{AskInfo, Call, Policy, Verdict};
use crate::tools::executor::{PermissionDecision, PermissionPolicy, PermissionRequest};

const ALLOW_ONCE: &str = "Allow once";
const ALWAYS_ALLOW: &str = "Always allow";
const ALWAYS_ALLOW_PROJECT: &str = "Always allow in this project";
const DENY: &str = "Deny";
const APPLY: &str = "Apply";
const REJECT: &str = "Reject";

/// Lines of a diff shown in a review prompt before the rest is counted.
const MAX_PROMPT_DIFF_LINES: usize = 60;

pub struct PromptPolicy {
    client: Arc<dyn ClientLink>,
    settings: Arc<RwLock<Settings>>,
    editor: Arc<LspEditor>,
    policy: Policy,
    /// The primary workspace root: where "in this project" saves.
    root: PathBuf,
    outbox: Arc<RunOutbox>,
    /// Serialises prompts: two questions at once would confuse the user.
    asking: tokio::sync::Mutex<()>,
}

impl PromptPolicy {
    pub fn new(
        client: Arc<dyn ClientLink>,
        settings: Arc<RwLock<Settings>>,
        editor: Arc<LspEditor>,
        outbox: Arc<RunOutbox>,
        roots: &[PathBuf],
    ) -> Self {
        let current = settings.read().unwrap_or_else(|e| e.into_inner()).clone();
        let policy = Policy::new(current.permission_mode(), &current.permissions, roots);
        let root = roots.first().cloned().unwrap_or_default();
        PromptPolicy { client, settings, editor, policy, root, outbox, asking: tokio::sync::Mutex::new(()) }
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
            Ok(APPLY) => PermissionDecision::Approved,
            Ok(_) => PermissionDecision::Deny("the user chose Reject".into()),
            Err(reason) => PermissionDecision::Deny(reason.to_string()),
        };
        if decision != PermissionDecision::Approved {
            self.editor.record_rejected(path, request.run.clone());
        }
        decision
    }

    async fn ask(&self, request: &PermissionRequest, info: &AskInfo, settings: &Settings) -> PermissionDecision {
        let mut actions = vec![ALLOW_ONCE];
        if !info.always.is_empty() {
            actions.extend([ALWAYS_ALLOW, ALWAYS_ALLOW_PROJECT]);
        }
        actions.push(DENY);
        match self.prompt(MessageType::WARNING, ask_text(request, info), &actions, settings).await.as_deref() {
            Ok(ALLOW_ONCE) => PermissionDecision::Approved,
            Ok(ALWAYS_ALLOW) => {
                // For this conversation: its later runs keep it, no other thread has it.
                request.grants.add(info.always.iter().map(ToString::to_string));
                PermissionDecision::Approved
            }
            Ok(ALWAYS_ALLOW_PROJECT) => {
                self.policy.allow_for_session(&info.always);
                let rules: Vec<String> = info.always.iter().map(ToString::to_string).collect();
                if let Err(err) = crate::settings::save_local_allow(&self.root, &rules) {
                    tracing::warn!("cannot save the rule: {err}");
                    self.client.notify(methods::SHOW_MESSAGE, serde_json::json!({"type": 2, "message": format!("Tandem: {err}")})).await;
                }
                PermissionDecision::Approved
            }
            Ok(DENY) => PermissionDecision::Deny("the user denied it".into()),
            Ok(_) => PermissionDecision::Deny("the user dismissed the prompt".into()),
            Err(reason) => PermissionDecision::Deny(reason.to_string()),
        }
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
        // Settings change during a session (configuration, edited files).
        // Plan mode is the run's own: it refuses every change but the plan
        // file before the policy is asked; the policy runs in default.
        let mode = match settings.permission_mode() {
            PermissionMode::Plan => PermissionMode::Default,
            mode => mode,
        };
        self.policy.set_mode(mode);
        self.policy.set_rules(&settings.permissions);
        let granted = request.grants.rules();
        let call =
            Call { tool: &request.tool, kind: &request.kind, read_only: request.read_only, accept_edits: request.accept_edits, granted: &granted };
        match self.policy.decide_with_hook(call, request.hook.clone()) {
            Verdict::Allow => PermissionDecision::Allow,
            Verdict::Approved => PermissionDecision::Approved,
            Verdict::Deny(reason) => PermissionDecision::Deny(reason),
            Verdict::ReviewInEditor => match &request.kind {
                crate::tools::ToolKind::Edit { path } => {
                    let _one_at_a_time = self.asking.lock().await;
                    self.review_edit(path, request, &settings).await
                }
                _ => PermissionDecision::Deny("only edits are reviewed in the editor".into()),
            },
            Verdict::Ask(info) => {
                let _one_at_a_time = self.asking.lock().await;
                self.ask(request, &info, &settings).await
            }
        }
    }
}
