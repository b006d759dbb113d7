//! One ACP session: a Tandem conversation thread in one folder (`cwd`),
//! with its workspace (the client's files over the disk), its tools and
//! permission policy, and at most one prompt running.
//!
//! [`SessionCore`] is what the session's sink, prompter and plan review
//! share: the client, the tool call each question is about, the edits the
//! client wrote (for their diff) and the session's "always" answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionId, PermissionOptionKind, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    RequestPermissionOutcome, RequestPermissionRequest, SessionUpdate, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
};
use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::client::ClientLink;
use super::permission::Selected;
use super::updates::{acp_kind, edit_diffs, text_block, WrittenDiff};
use crate::host::Offers;
use crate::sync::MutexExt;
use crate::tools::executor::PermissionRequest;
use crate::tools::plan_mode::{PlanAnswer, PlanReview};
use crate::tools::ToolKind;
use crate::protocol::{HunkComment, HunkDecision};
use crate::workspace::EditStatus;

/// How long a permission question waits for the user before it is a denial.
pub const PERMISSION_TIMEOUT: Duration = Duration::from_secs(600);

pub const ALLOW_ONCE: &str = "allow_once";
pub const ALLOW_ALWAYS: &str = "allow_always";
pub const REJECT_ONCE: &str = "reject_once";
pub const REJECT_ALWAYS: &str = "reject_always";
/// "Allow commands like this for this session": the command's shapes.
pub const ALLOW_LIKE_THIS: &str = "allow_like_this";

pub struct SessionCore {
    pub id: String,
    pub root: PathBuf,
    pub link: Arc<dyn ClientLink>,
    /// The running prompt's cancel token.
    pub cancel: Mutex<Option<CancellationToken>>,
    /// The tool call id of the latest call of each kind (see [`call_key`]),
    /// so that a question names the call it is about.
    calls: Mutex<HashMap<String, String>>,
    /// Edits the client wrote, by path, until their call's result shows them.
    written: Mutex<HashMap<PathBuf, WrittenDiff>>,
    /// What became of the latest edit of each path (declined, superseded,
    /// unknown, …), until its call's result names it.
    outcomes: Mutex<HashMap<PathBuf, EditStatus>>,
    /// "Always" answers about edits, by file: allowed (true) or rejected.
    edits_always: Mutex<HashMap<PathBuf, bool>>,
    /// The user's comments on the latest edit of each path, sent with the
    /// permission answer (`_meta.tandem`), until the edit's result takes them.
    comments: Mutex<HashMap<PathBuf, Vec<HunkComment>>>,
}

/// What a question is keyed on to find its tool call: the call's kind and
/// what it works on.
pub fn call_key(tool: &str, kind: &ToolKind) -> String {
    match kind {
        ToolKind::Edit { path } => format!("edit:{}", path.display()),
        ToolKind::Execute { command } => format!("execute:{command}"),
        ToolKind::Fetch { url } => format!("fetch:{url}"),
        ToolKind::Read { paths } => format!("read:{tool}:{paths:?}"),
        ToolKind::Other => format!("other:{tool}"),
    }
}

impl SessionCore {
    pub fn new(id: String, root: PathBuf, link: Arc<dyn ClientLink>) -> Self {
        SessionCore {
            id,
            root,
            link,
            cancel: Mutex::new(None),
            calls: Mutex::default(),
            written: Mutex::default(),
            outcomes: Mutex::default(),
            edits_always: Mutex::default(),
            comments: Mutex::default(),
        }
    }

    pub fn display(&self, path: &Path) -> String {
        crate::workspace::display_relative(&self.root, path)
    }

    pub fn notify(&self, update: SessionUpdate) -> bool {
        self.link.notify(&self.id, update)
    }

    pub fn remember_call(&self, key: String, id: &str) {
        self.calls.locked().insert(key, id.to_string());
    }

    fn call_id(&self, key: &str) -> String {
        self.calls.locked().get(key).cloned().unwrap_or_else(|| format!("tandem-ask-{}", crate::host::new_thread_id()))
    }

    pub fn record_written(&self, path: &Path, old_text: &str, new_text: &str) {
        self.written.locked().insert(path.to_path_buf(), WrittenDiff { old_text: old_text.to_string(), new_text: new_text.to_string() });
    }

    /// What became of the latest edit of `path`, for its call's result.
    pub fn record_outcome(&self, path: &Path, status: EditStatus) {
        self.outcomes.locked().insert(path.to_path_buf(), status);
    }

    /// The diff the client wrote for `path`, and what became of its latest
    /// edit, taken for the edit call's result.
    pub fn take_edit(&self, path: &Path) -> (Option<WrittenDiff>, Option<EditStatus>) {
        (self.written.locked().remove(path), self.outcomes.locked().remove(path))
    }

    pub fn edit_always(&self, path: &Path) -> Option<bool> {
        self.edits_always.locked().get(path).copied()
    }

    pub fn start_run(&self, cancel: CancellationToken) {
        *self.cancel.locked() = Some(cancel);
    }

    pub fn end_run(&self) {
        *self.cancel.locked() = None;
    }

    /// Cancel the running prompt; false when none runs.
    pub fn cancel_run(&self) -> bool {
        match self.cancel.locked().as_ref() {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Put a question to the user about the tool call `key`. A prompt's
    /// question comes after the updates before it: it waited its turn in
    /// the run's events, which the forwarder sends in order
    /// (`RunParts::questions_in_stream`).
    async fn request(&self, key: &str, fields: ToolCallUpdateFields, options: Vec<PermissionOption>) -> Selected {
        self.request_with_comments(key, fields, options).await.0
    }

    /// [`request`](Self::request), and the comments the user sent with the
    /// answer ([`answer_comments`]).
    async fn request_with_comments(&self, key: &str, fields: ToolCallUpdateFields, options: Vec<PermissionOption>) -> (Selected, Vec<HunkComment>) {
        let offered: Vec<String> = options.iter().map(|o| o.option_id.0.to_string()).collect();
        let request = RequestPermissionRequest::new(self.id.clone(), ToolCallUpdate::new(self.call_id(key), fields), options);
        let cancel = self.cancel.locked().clone().unwrap_or_default();
        let answer = tokio::select! {
            _ = cancel.cancelled() => return (Selected::Unanswered("the run was cancelled".into()), Vec::new()),
            answer = tokio::time::timeout(PERMISSION_TIMEOUT, self.link.request_permission(request)) => answer,
        };
        let comments = match &answer {
            Ok(Ok(RequestPermissionOutcome::Selected(selected))) => answer_comments(selected.meta.as_ref(), &selected.option_id.0),
            _ => Vec::new(),
        };
        let selected = match answer {
            Err(_) => Selected::Unanswered(format!("the user did not answer within {} s", PERMISSION_TIMEOUT.as_secs())),
            Ok(Err(err)) => Selected::Unanswered(format!("the client could not ask the user ({err})")),
            Ok(Ok(RequestPermissionOutcome::Cancelled)) => Selected::Unanswered("the question was cancelled".into()),
            // An option this question did not offer is no answer to it.
            Ok(Ok(RequestPermissionOutcome::Selected(selected))) if !offered.iter().any(|o| **o == *selected.option_id.0) => {
                Selected::Unanswered(format!("the client answered with an option it was not offered \"{}\"", selected.option_id.0))
            }
            Ok(Ok(RequestPermissionOutcome::Selected(selected))) => match &*selected.option_id.0 {
                ALLOW_ONCE => Selected::AllowOnce,
                ALLOW_ALWAYS => Selected::AllowAlways,
                ALLOW_LIKE_THIS => Selected::AllowLikeThis,
                REJECT_ONCE => Selected::RejectOnce,
                REJECT_ALWAYS => Selected::RejectAlways,
                other => Selected::Unanswered(format!("the client answered with an unknown option \"{other}\"")),
            },
            Ok(Ok(_)) => Selected::Unanswered("the client gave an answer this agent does not know".into()),
        };
        (selected, comments)
    }

    /// An asked call (a shell command, a fetch, …): `question` says what
    /// and why; `offers.always` offers the "always" options,
    /// `offers.like_this` "Allow commands like this for this session".
    pub async fn ask(&self, request: &PermissionRequest, question: &str, offers: Offers) -> Selected {
        let fields = ToolCallUpdateFields::new().kind(acp_kind(&request.kind)).content(vec![ToolCallContent::from(text_block(question))]);
        let mut options = options(offers.always, "Allow", "Reject");
        if offers.like_this {
            // After "Allow once" and "Always allow": an "allow always" kind
            // to the client, for the session's commands of the same shapes.
            let at = options.iter().position(|o| o.kind == PermissionOptionKind::RejectOnce).unwrap_or(options.len());
            options.insert(at, PermissionOption::new(PermissionOptionId::new(ALLOW_LIKE_THIS), crate::host::ALLOW_LIKE_THIS, PermissionOptionKind::AllowAlways));
        }
        self.request(&call_key(&request.tool, &request.kind), fields, options).await
    }

    /// A host the sandbox's network refused: a permission request naming
    /// it, "Allow HOST for this session" (allow once, to the client),
    /// "Always allow HOST" (saved in the user's settings) or "Deny". Not
    /// about one call: it has an id of its own.
    pub async fn ask_host(&self, host: &str, question: &str) -> Selected {
        let fields = ToolCallUpdateFields::new().kind(acp_kind(&ToolKind::Fetch { url: format!("https://{host}/") })).title(format!("Reach {host}")).content(vec![ToolCallContent::from(text_block(question))]);
        let options = vec![
            PermissionOption::new(PermissionOptionId::new(ALLOW_ONCE), crate::host::allow_host_label(host), PermissionOptionKind::AllowOnce),
            PermissionOption::new(PermissionOptionId::new(ALLOW_ALWAYS), crate::host::allow_host_saved_label(host), PermissionOptionKind::AllowAlways),
            PermissionOption::new(PermissionOptionId::new(REJECT_ONCE), "Deny", PermissionOptionKind::RejectOnce),
        ];
        self.request(&format!("network:{host}"), fields, options).await
    }

    /// Review an edit the client will write, its full texts as the diff
    /// (no old text: a new file).
    pub async fn review_edit(&self, path: &Path, old_text: Option<&str>, new_text: &str) -> Result<(), String> {
        match self.edit_always(path) {
            Some(true) => return Ok(()),
            Some(false) => {
                self.record_outcome(path, EditStatus::Rejected);
                return Err("the user rejected every edit to this file for this session".into());
            }
            None => {}
        }
        let diffs = edit_diffs(path, old_text, new_text);
        let fields = ToolCallUpdateFields::new().kind(acp_kind(&ToolKind::Edit { path: path.to_path_buf() })).content(diffs);
        let key = call_key("", &ToolKind::Edit { path: path.to_path_buf() });
        let (answer, comments) = self.request_with_comments(&key, fields, options(true, "Apply", "Reject")).await;
        self.keep_comments(path, comments);
        self.edit_answer(path, answer)
    }

    /// Review an edit written to disk: the diff as text.
    pub async fn review_edit_text(&self, request: &PermissionRequest) -> Result<(), String> {
        let ToolKind::Edit { path } = &request.kind else { return Err("only edits are reviewed".into()) };
        let mut text = format!("Apply this change to {}?", self.display(path));
        if let Some(preview) = request.preview.as_deref().filter(|p| !p.is_empty()) {
            text.push_str("\n\n```diff\n");
            text.push_str(preview);
            text.push_str("\n```");
        }
        let fields = ToolCallUpdateFields::new().kind(acp_kind(&request.kind)).content(vec![ToolCallContent::from(text_block(text))]);
        let (answer, comments) = self.request_with_comments(&call_key(&request.tool, &request.kind), fields, options(true, "Apply", "Reject")).await;
        self.keep_comments(path, comments);
        // A rejected edit is never written: its comments go with the
        // refusal; an applied one's with its result (the workspace's note).
        self.edit_answer(path, answer).map_err(|reason| {
            let comments = self.take_comments(path);
            match crate::protocol::review_comments_note(&self.display(path), &comments) {
                Some(note) => format!("{reason}.\n{note}"),
                None => reason,
            }
        })
    }

    fn keep_comments(&self, path: &Path, comments: Vec<HunkComment>) {
        let mut kept = self.comments.locked();
        if comments.is_empty() {
            kept.remove(path);
        } else {
            kept.insert(path.to_path_buf(), comments);
        }
    }

    /// The comments the user sent with the answer about the latest edit of
    /// `path`, taken for its result.
    pub fn take_comments(&self, path: &Path) -> Vec<HunkComment> {
        self.comments.locked().remove(path).unwrap_or_default()
    }

    fn edit_answer(&self, path: &Path, answer: Selected) -> Result<(), String> {
        let status = match answer {
            Selected::AllowOnce | Selected::AllowAlways => None,
            Selected::AllowLikeThis => Some(EditStatus::NotApplied),
            Selected::RejectOnce | Selected::RejectAlways => Some(EditStatus::Rejected),
            Selected::Unanswered(_) => Some(EditStatus::NotApplied),
        };
        if let Some(status) = status {
            self.record_outcome(path, status);
        }
        match answer {
            Selected::AllowOnce => Ok(()),
            // Not offered for an edit (`request` refuses what was not).
            Selected::AllowLikeThis => Err("the client answered with an option it was not offered".into()),
            Selected::AllowAlways => {
                self.edits_always.locked().insert(path.to_path_buf(), true);
                Ok(())
            }
            Selected::RejectOnce => Err("the user rejected the edit".into()),
            Selected::RejectAlways => {
                self.edits_always.locked().insert(path.to_path_buf(), false);
                Err("the user rejected the edit, and every edit to this file for the rest of this session".into())
            }
            Selected::Unanswered(reason) => Err(reason),
        }
    }
}

/// The comments a client sent with a permission answer: ACP's outcome has
/// no field for the user's words, so they come in its `_meta`:
/// `{"tandem": {"comment": "…"}}` for the whole edit, or
/// `{"tandem": {"comments": [{"hunk": 1, "comment": "…", "decision":
/// "rejected"}]}}` per hunk, numbered as the question's diffs
/// (`_meta.tandem.hunk`). A comment without a decision takes the answer's
/// (an allow option: accepted). What is not text is left out.
fn answer_comments(meta: Option<&serde_json::Map<String, serde_json::Value>>, option: &str) -> Vec<HunkComment> {
    use serde_json::Value;
    let Some(tandem) = meta.and_then(|m| m.get("tandem")) else { return Vec::new() };
    let answered = if option.starts_with("allow") { HunkDecision::Accepted } else { HunkDecision::Rejected };
    let mut out = Vec::new();
    if let Some(text) = tandem.get("comment").and_then(Value::as_str) {
        out.push(HunkComment { hunk: 0, lines: None, decision: answered, comment: text.to_string() });
    }
    for item in tandem.get("comments").and_then(Value::as_array).into_iter().flatten() {
        let Some(text) = item.get("comment").and_then(Value::as_str) else { continue };
        let decision = item.get("decision").and_then(|d| serde_json::from_value(d.clone()).ok()).unwrap_or(answered);
        let lines = item.get("lines").and_then(|l| serde_json::from_value(l.clone()).ok());
        let hunk = item.get("hunk").and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
        out.push(HunkComment { hunk, lines, decision, comment: text.to_string() });
    }
    out
}

/// The four ACP options (the "always" pair only when `always`).
fn options(always: bool, allow: &str, reject: &str) -> Vec<PermissionOption> {
    let mut options = vec![PermissionOption::new(PermissionOptionId::new(ALLOW_ONCE), format!("{allow} once"), PermissionOptionKind::AllowOnce)];
    if always {
        options.push(PermissionOption::new(PermissionOptionId::new(ALLOW_ALWAYS), format!("Always {}", allow.to_lowercase()), PermissionOptionKind::AllowAlways));
    }
    options.push(PermissionOption::new(PermissionOptionId::new(REJECT_ONCE), reject.to_string(), PermissionOptionKind::RejectOnce));
    if always {
        options.push(PermissionOption::new(PermissionOptionId::new(REJECT_ALWAYS), format!("Always {}", reject.to_lowercase()), PermissionOptionKind::RejectAlways));
    }
    options
}

/// A plan (markdown) as ACP plan entries: its list items, else its headings.
pub fn plan_entries(plan: &str) -> Vec<PlanEntry> {
    let item = |line: &str| -> Option<String> {
        let line = line.trim_start();
        let rest = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")).or_else(|| {
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            (digits > 0).then(|| line[digits..].strip_prefix(". ")).flatten()
        })?;
        let rest = rest.trim_start_matches("[ ] ").trim();
        (!rest.is_empty()).then(|| rest.to_string())
    };
    let mut entries: Vec<String> = plan.lines().filter_map(item).collect();
    if entries.is_empty() {
        entries = plan.lines().filter_map(|l| l.strip_prefix("## ").map(|h| h.trim().to_string())).filter(|h| !h.is_empty()).collect();
    }
    entries.into_iter().take(50).map(|content| PlanEntry::new(content, PlanEntryPriority::Medium, PlanEntryStatus::Pending)).collect()
}

/// Plan mode's review through the client: the plan as `plan` entries and a
/// question whose options are "Execute", "Execute and accept edits" and
/// "Keep planning".
pub struct AcpPlanReview(pub Arc<SessionCore>);

#[async_trait]
impl PlanReview for AcpPlanReview {
    async fn review(&self, plan_file: &Path, plan: &str) -> Option<PlanAnswer> {
        let core = &self.0;
        core.notify(SessionUpdate::Plan(Plan::new(plan_entries(plan))));
        let text = format!("Tandem's plan ({}):\n\n{plan}", core.display(plan_file));
        let fields = ToolCallUpdateFields::new().title("Review the plan".to_string()).content(vec![ToolCallContent::from(text_block(text))]);
        let options = vec![
            PermissionOption::new(PermissionOptionId::new(ALLOW_ONCE), "Execute", PermissionOptionKind::AllowOnce),
            PermissionOption::new(PermissionOptionId::new(ALLOW_ALWAYS), "Execute and accept edits", PermissionOptionKind::AllowAlways),
            PermissionOption::new(PermissionOptionId::new(REJECT_ONCE), "Keep planning", PermissionOptionKind::RejectOnce),
        ];
        match core.request(&call_key("exit_plan_mode", &ToolKind::Other), fields, options).await {
            Selected::AllowOnce => Some(PlanAnswer::Execute),
            Selected::AllowAlways => Some(PlanAnswer::ExecuteAcceptEdits),
            Selected::RejectOnce | Selected::RejectAlways => Some(PlanAnswer::KeepPlanning { feedback: String::new() }),
            Selected::Unanswered(_) | Selected::AllowLikeThis => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_entries_are_the_plans_list_items() {
        let plan = "# Plan\n\n## Context\nwhy\n\n## Steps\n1. Add the flag\n2. Test it\n- [ ] Update the docs\n";
        let entries: Vec<String> = plan_entries(plan).into_iter().map(|e| e.content).collect();
        assert_eq!(entries, ["Add the flag", "Test it", "Update the docs"]);
        let headings: Vec<String> = plan_entries("## One\ntext\n## Two\n").into_iter().map(|e| e.content).collect();
        assert_eq!(headings, ["One", "Two"]);
    }
}
