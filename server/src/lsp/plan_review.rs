//! The plan review in the editor, for `exit_plan_mode`: the plan file opens
//! with `window/showDocument`, and `window/showMessageRequest` offers
//! "Execute", "Execute and accept edits" and "Keep planning". After "Keep
//! planning", a client that answers `tandem/textInput` (it set `textInput:
//! true`: the Neovim plugin, the VS Code extension) asks the user what
//! should change, and that text is the feedback. With other clients, or
//! when the user types nothing, the feedback is what the user changed in
//! the plan file while it was shown. No answer to the prompt (dismissed,
//! timed out, failed) keeps planning. The review comes after the events
//! before it (the `exit_plan_mode` call): it waits its turn in the run's
//! events (`RunParts::questions_in_stream`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, text_input, ClientLink};
use super::documents::path_to_uri;
use crate::tools::plan_mode::{PlanAnswer, PlanReview};
use crate::workspace::Workspace;

pub const EXECUTE: &str = "Execute";
pub const EXECUTE_ACCEPT_EDITS: &str = "Execute and accept edits";
pub const KEEP_PLANNING: &str = "Keep planning";

pub struct LspPlanReview {
    pub client: Arc<dyn ClientLink>,
    pub workspace: Arc<Workspace>,
    /// How long the user has to answer.
    pub timeout: Duration,
    /// The client answers `tandem/textInput`.
    pub text_input: bool,
}

/// What the user is asked after "Keep planning".
pub const FEEDBACK_PROMPT: &str = "Tandem keeps planning. What should change in the plan?";

#[async_trait]
impl PlanReview for LspPlanReview {
    async fn review(&self, plan_file: &Path, _plan: &str) -> Option<PlanAnswer> {
        // The plan file as shown (the plan the tool passes may be cut, or
        // say it is missing), to tell later whether the user changed it.
        let shown = self.workspace.read(plan_file).ok().map(|read| read.text);
        if let Some(uri) = path_to_uri(plan_file) {
            let opened = request_with_timeout(&*self.client, methods::SHOW_DOCUMENT, json!({"uri": uri.as_str(), "takeFocus": true}), self.timeout).await;
            if let Err(err) = opened {
                tracing::warn!(%err, "window/showDocument failed; asking about the plan without showing it");
            }
        }
        let params = ShowMessageRequestParams {
            typ: MessageType::INFO,
            message: format!("Tandem's plan is ready ({}). Execute it?", self.workspace.display_path(plan_file)),
            actions: Some(
                [EXECUTE, EXECUTE_ACCEPT_EDITS, KEEP_PLANNING]
                    .iter()
                    .map(|title| MessageActionItem { title: title.to_string(), properties: Default::default() })
                    .collect(),
            ),
        };
        let params = serde_json::to_value(params).ok()?;
        let answer = request_with_timeout(&*self.client, methods::SHOW_MESSAGE_REQUEST, params, self.timeout).await;
        let title = answer.ok().and_then(|v| v.get("title").and_then(Value::as_str).map(String::from));
        Some(match title.as_deref() {
            Some(EXECUTE) => PlanAnswer::Execute,
            Some(EXECUTE_ACCEPT_EDITS) => PlanAnswer::ExecuteAcceptEdits,
            Some(KEEP_PLANNING) => PlanAnswer::KeepPlanning { feedback: self.feedback(plan_file, shown.as_deref()).await },
            _ => PlanAnswer::KeepPlanning { feedback: "the user did not answer; ask them what to change".to_string() },
        })
    }
}

impl LspPlanReview {
    /// The user's feedback: what they typed (where the client can ask),
    /// and whether they changed the plan file while it was shown.
    async fn feedback(&self, plan_file: &Path, shown: Option<&str>) -> String {
        let typed = if self.text_input { self.typed_feedback().await } else { None };
        let edited = self.plan_file_edited(plan_file, shown);
        match (typed, edited) {
            (Some(typed), Some(edited)) => format!("{typed}\n\n({edited})"),
            (Some(typed), None) => typed,
            (None, Some(edited)) => edited,
            (None, None) => String::new(),
        }
    }

    /// Ask the user what should change (`tandem/textInput`); `None` when
    /// they typed nothing, dismissed it, or the client failed to ask.
    async fn typed_feedback(&self) -> Option<String> {
        text_input(&*self.client, FEEDBACK_PROMPT, "e.g. split step 2; keep the public API", self.timeout).await
    }

    /// What the user changed in the plan file while it was shown (`shown`:
    /// its text then, `None` when it did not exist). Trailing white space
    /// is no change: Neovim opens a missing file as an empty buffer whose
    /// text is "\n".
    fn plan_file_edited(&self, plan_file: &Path, shown: Option<&str>) -> Option<String> {
        let now = self.workspace.read(plan_file).ok().map(|read| read.text);
        if now.as_deref().unwrap_or_default().trim_end() == shown.unwrap_or_default().trim_end() {
            return None;
        }
        Some(format!("the user edited the plan file ({}); read it again for their changes", self.workspace.display_path(plan_file)))
    }
}
