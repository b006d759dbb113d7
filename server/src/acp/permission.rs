//! The prompter of an ACP session: the one [`Gate`] decides; what it asks
//! goes to the user as `session/request_permission`, with the options
//! `allow_once`, `allow_always`, `reject_once`, `reject_always`.
//!
//! - A shell command, a fetch or another asked call: "always" means the
//!   narrowest rules the policy offers (`run_shell(git push:*)`, a fetch's
//!   domain), as "Always allow" in `tandem lsp`; allowed, they join the
//!   thread's grants; rejected, the gate refuses them for the rest of the
//!   session. A call no rule can cover is offered once only.
//! - An edit to review: for a client that offers `fs/write_text_file`,
//!   every write (new files too) goes through it, and the review happens
//!   at the sink with the full texts as the call's `diff`
//!   ([`Review::InEditor`]); a file written to disk (a client that does
//!   not write) is asked here with the diff as text. "Always" means this
//!   one file, for this session.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;

use super::files::ClientFiles;
use super::session::SessionCore;
use crate::host::{Answer, Offers, Prompter, Review};
use crate::tools::PermissionRequest;

pub struct AcpPrompter {
    pub core: Arc<SessionCore>,
    /// The client offers `fs/write_text_file`: edits to files on disk go through it.
    pub client_writes: bool,
}

/// The prompter of a session: "always" answers last for the session
/// (there is no "in this project" option in ACP).
pub fn prompter(core: Arc<SessionCore>, client_writes: bool) -> AcpPrompter {
    AcpPrompter { core, client_writes }
}

#[async_trait]
impl Prompter for AcpPrompter {
    async fn ask(&self, request: &PermissionRequest, question: &str, offers: Offers) -> Answer {
        match self.core.ask(request, question, offers).await {
            Selected::AllowOnce => Answer::AllowOnce,
            Selected::AllowAlways => Answer::AllowAlways,
            Selected::AllowLikeThis => Answer::AllowLikeThis,
            Selected::RejectOnce => Answer::Deny("the user rejected it".into()),
            Selected::RejectAlways => Answer::DenyAlways("the user rejected it, and calls like it for the rest of this session".into()),
            Selected::Unanswered(reason) => Answer::Deny(reason),
        }
    }

    async fn ask_host(&self, _request: &PermissionRequest, host: &str, question: &str) -> crate::host::HostAnswer {
        match self.core.ask_host(host, question).await {
            Selected::AllowOnce => crate::host::HostAnswer::Session,
            Selected::AllowAlways => crate::host::HostAnswer::Saved,
            _ => crate::host::HostAnswer::Deny,
        }
    }

    async fn review(&self, request: &PermissionRequest, path: &Path) -> Review {
        match self.core.edit_always(path) {
            Some(true) => Review::Apply,
            Some(false) => {
                self.core.record_outcome(path, crate::workspace::EditStatus::Rejected);
                Review::Reject("the user rejected every edit to this file for this session".into())
            }
            // Every write goes through such a client (new files too), and
            // its sink asks with the whole texts as the diff.
            None if self.client_writes && (ClientFiles::handles(path) || !path.exists()) => Review::InEditor,
            None => match self.core.review_edit_text(request).await {
                Ok(()) => Review::Apply,
                Err(reason) => Review::Reject(reason),
            },
        }
    }
}

/// The option the user selected in a `session/request_permission`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selected {
    AllowOnce,
    AllowAlways,
    /// "Allow commands like this for this session".
    AllowLikeThis,
    RejectOnce,
    RejectAlways,
    /// Cancelled, the client failed, or the run was cancelled: a denial.
    Unanswered(String),
}
