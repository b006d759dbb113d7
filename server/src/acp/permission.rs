//! The permission policy of an ACP session: [`Policy`] decides; what it
//! asks goes to the user as `session/request_permission`, with the options
//! `allow_once`, `allow_always`, `reject_once`, `reject_always`.
//!
//! - A shell command, a fetch or another asked call: "always" means the
//!   narrowest rules [`Policy`] offers (`run_shell(git push:*)`, a fetch's
//!   domain), as "Always allow" in `tandem lsp`; allowed, they join the
//!   thread's grants; rejected, they are denied for the rest of the session.
//!   A call no rule can cover is offered once only.
//! - An edit to review: for a file the client writes, the review happens
//!   at the sink with the full texts as the call's `diff`
//!   ([`PermissionDecision::ReviewInEditor`]); a file written to disk is
//!   asked here with the diff as text. "Always" means this one file, for
//!   this session.

use std::sync::Arc;

use async_trait::async_trait;

use super::files::ClientFiles;
use super::session::SessionCore;
use crate::permissions::policy::{AskInfo, Call, Policy, Verdict};
use crate::tools::executor::{PermissionDecision, PermissionPolicy, PermissionRequest};
use crate::tools::ToolKind;

pub struct AcpPolicy {
    pub policy: Policy,
    pub core: Arc<SessionCore>,
    /// The client offers `fs/write_text_file`: edits to files on disk go through it.
    pub client_writes: bool,
}

#[async_trait]
impl PermissionPolicy for AcpPolicy {
    async fn decide(&self, request: &PermissionRequest) -> PermissionDecision {
        let granted = request.grants.rules();
        let call =
            Call { tool: &request.tool, kind: &request.kind, read_only: request.read_only, accept_edits: request.accept_edits, granted: &granted };
        if let Some(reason) = self.core.session_denial(call) {
            return PermissionDecision::Deny(reason);
        }
        match self.policy.decide_with_hook(call, request.hook.clone()) {
            Verdict::Allow => PermissionDecision::Allow,
            Verdict::Approved => PermissionDecision::Approved,
            Verdict::Deny(reason) => PermissionDecision::Deny(reason),
            Verdict::ReviewInEditor => match &request.kind {
                ToolKind::Edit { path } => match self.core.edit_always(path) {
                    Some(true) => PermissionDecision::Approved,
                    Some(false) => PermissionDecision::Deny("the user rejected every edit to this file for this session".into()),
                    None if self.client_writes && ClientFiles::handles(path) => PermissionDecision::ReviewInEditor,
                    None => match self.core.review_edit_text(request).await {
                        Ok(()) => PermissionDecision::Approved,
                        Err(reason) => PermissionDecision::Deny(reason),
                    },
                },
                _ => PermissionDecision::Deny("only edits are reviewed".into()),
            },
            Verdict::Ask(info) => self.ask(request, &info).await,
        }
    }
}

impl AcpPolicy {
    async fn ask(&self, request: &PermissionRequest, info: &AskInfo) -> PermissionDecision {
        let question = crate::permissions::headless::ask_text(request, info);
        match self.core.ask(request, &question, !info.always.is_empty()).await {
            Answer::AllowOnce => PermissionDecision::Approved,
            Answer::AllowAlways => {
                // For this thread: its later runs keep it, no other thread has it.
                request.grants.add(info.always.iter().map(ToString::to_string));
                PermissionDecision::Approved
            }
            Answer::RejectOnce => PermissionDecision::Deny("the user rejected it".into()),
            Answer::RejectAlways => {
                self.core.deny_for_session(&info.always);
                PermissionDecision::Deny("the user rejected it, and calls like it for the rest of this session".into())
            }
            Answer::Unanswered(reason) => PermissionDecision::Deny(reason),
        }
    }
}

/// The user's answer to a `session/request_permission`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
    /// Cancelled, the client failed, or the run was cancelled: a denial.
    Unanswered(String),
}
