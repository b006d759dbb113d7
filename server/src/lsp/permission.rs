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
//!   line) and what made it asked: "Allow once" / "Allow commands like
//!   this for this session" (where the sandbox contains the command) /
//!   "Always allow" / "Always allow in this project" / "Deny". "Always allow" adds the narrowest
//!   rule, named in the prompt, to the conversation thread's grants (its
//!   later runs keep it; other threads do not have it); "in this project"
//!   saves it in `.tandem/settings.local.json`, for every thread. No answer, a dismissed
//!   prompt or a timeout mean deny.
//! - A client that answers `tandem/textInput` (`textInput: true`) is also
//!   offered "Tell Tandem what to do instead", on asks and on edit review
//!   prompts: a refusal that carries the line the user types next to the
//!   model, as the terminal's `e` does.
//!
//! A question about a run's call is asked once the run's events before it
//! are out (the host puts it in the run's events first: `questions_in_stream`).

use std::path::Path;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use serde_json::Value;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, text_input, ClientError, ClientLink};
use super::config::Settings;
use super::editor::LspEditor;
use crate::host::{told_instead, Answer, Offers, Prompter, Review, ALLOW_LIKE_THIS, INSTEAD_PROMPT, TELL_INSTEAD};
use crate::sync::RwLockExt;
use crate::tools::PermissionRequest;

const ALLOW_ONCE: &str = "Allow once";
const ALWAYS_ALLOW: &str = "Always allow";
const ALWAYS_ALLOW_PROJECT: &str = "Always allow in this project";
const DENY: &str = "Deny";
const APPLY: &str = "Apply";
const REJECT: &str = "Reject";

/// What the model reads of a denied call and a rejected edit.
const DENIED: &str = "the user denied it";
const REJECTED_BY_USER: &str = "the user chose Reject";

/// Lines of a diff shown in a review prompt before the rest is counted.
const MAX_PROMPT_DIFF_LINES: usize = 60;

/// Asks in the editor: `window/showMessageRequest`, or the editor's own
/// edit review.
pub struct LspPrompter {
    client: Arc<dyn ClientLink>,
    settings: Arc<RwLock<Settings>>,
    editor: Arc<LspEditor>,
}

/// The editor's prompter: the host's gate asks through it, deciding by
/// the settings as they are now.
pub fn prompter(client: Arc<dyn ClientLink>, settings: Arc<RwLock<Settings>>, editor: Arc<LspEditor>) -> LspPrompter {
    LspPrompter { client, settings, editor }
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

    /// The refusal after [`TELL_INSTEAD`]: `refusal` with the line the
    /// user types next (`tandem/textInput`).
    async fn told_instead(&self, refusal: &str) -> String {
        let said = text_input(&*self.client, INSTEAD_PROMPT, "e.g. run the unit tests only; leave main.rs alone", self.settings().timeouts.prompt()).await;
        told_instead(refusal, said.as_deref())
    }

    /// [`TELL_INSTEAD`] after the other actions, for a client that can
    /// read the user's words.
    fn with_instead<'a>(&self, mut actions: Vec<&'a str>) -> Vec<&'a str> {
        if self.settings().text_input {
            actions.push(TELL_INSTEAD);
        }
        actions
    }
}

#[async_trait]
impl Prompter for LspPrompter {
    async fn ask(&self, _request: &PermissionRequest, question: &str, offers: Offers) -> Answer {
        let mut actions = vec![ALLOW_ONCE];
        if offers.like_this {
            actions.push(ALLOW_LIKE_THIS);
        }
        if offers.always {
            actions.extend([ALWAYS_ALLOW, ALWAYS_ALLOW_PROJECT]);
        }
        actions.push(DENY);
        let actions = self.with_instead(actions);
        match self.prompt(MessageType::WARNING, question.to_string(), &actions).await.as_deref() {
            Ok(ALLOW_ONCE) => Answer::AllowOnce,
            Ok(ALWAYS_ALLOW) => Answer::AllowAlways,
            Ok(ALLOW_LIKE_THIS) => Answer::AllowLikeThis,
            Ok(ALWAYS_ALLOW_PROJECT) => Answer::AllowInProject,
            Ok(DENY) => Answer::Deny(DENIED.into()),
            Ok(TELL_INSTEAD) => Answer::Deny(self.told_instead(DENIED).await),
            Ok(_) => Answer::Deny("the user dismissed the prompt".into()),
            Err(reason) => Answer::Deny(reason.to_string()),
        }
    }

    /// A host the sandbox's network refused: "Allow HOST for this
    /// session", "Always allow HOST" (saved in the user's settings), "Deny".
    async fn ask_host(&self, _request: &PermissionRequest, host: &str, question: &str) -> crate::host::HostAnswer {
        let (session, saved) = (crate::host::allow_host_label(host), crate::host::allow_host_saved_label(host));
        match self.prompt(MessageType::WARNING, format!("Tandem: {question}"), &[&session, &saved, DENY]).await {
            Ok(chosen) if chosen == session => crate::host::HostAnswer::Session,
            Ok(chosen) if chosen == saved => crate::host::HostAnswer::Saved,
            _ => crate::host::HostAnswer::Deny,
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
        let actions = self.with_instead(vec![APPLY, REJECT]);
        // A refusal is the call's `rejected` effect, recorded by the executor.
        match self.prompt(MessageType::INFO, message, &actions).await.as_deref() {
            Ok(APPLY) => Review::Apply,
            Ok(TELL_INSTEAD) => Review::Reject(self.told_instead(REJECTED_BY_USER).await),
            Ok(_) => Review::Reject(REJECTED_BY_USER.into()),
            Err(reason) => Review::Reject(reason.to_string()),
        }
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
