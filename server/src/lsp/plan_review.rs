//! The plan review in the editor, for `exit_plan_mode`: the plan file opens
//! with `window/showDocument`, and `window/showMessageRequest` offers
//! "Execute", "Execute and accept edits" and "Keep planning". The user may
//! edit the plan file before answering "Keep planning": that is their
//! feedback. No answer (dismissed, timed out, failed) keeps planning.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, ClientLink};
use super::documents::path_to_uri;
use super::runs::RunOutbox;
use crate::tools::plan_mode::{PlanAnswer, PlanReview};
use crate::workspace::Workspace;

pub const EXECUTE: &str = "Execute";
pub const EXECUTE_ACCEPT_EDITS: &str = "Execute and accept edits";
pub const KEEP_PLANNING: &str = "Keep planning";

pub struct LspPlanReview {
    pub client: Arc<dyn ClientLink>,
    pub outbox: Arc<RunOutbox>,
    pub workspace: Arc<Workspace>,
    /// How long the user has to answer.
    pub timeout: Duration,
}

#[async_trait]
impl PlanReview for LspPlanReview {
    async fn review(&self, plan_file: &Path, plan: &str) -> Option<PlanAnswer> {
        // The client should see the exit_plan_mode call before it is asked about it.
        self.outbox.flush().await;
        if let Some(uri) = path_to_uri(plan_file) {
            let shown = request_with_timeout(&*self.client, methods::SHOW_DOCUMENT, json!({"uri": uri.as_str(), "takeFocus": true}), self.timeout).await;
            if let Err(err) = shown {
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
            Some(KEEP_PLANNING) => PlanAnswer::KeepPlanning { feedback: self.feedback(plan_file, plan) },
            _ => PlanAnswer::KeepPlanning { feedback: "the user did not answer; ask them what to change".to_string() },
        })
    }
}

impl LspPlanReview {
    /// What the user changed in the plan file while it was shown.
    fn feedback(&self, plan_file: &Path, shown: &str) -> String {
        match self.workspace.read(plan_file) {
            Ok(now) if now.text != shown => {
                format!("the user edited the plan file ({}); read it again for their changes", self.workspace.display_path(plan_file))
            }
            _ => String::new(),
        }
    }
}
