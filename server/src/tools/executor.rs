//! The executor: every tool call passes the same gates, in order —
//! find the tool → prepare (parse the input once into the tool's typed
//! arguments) → plan (the tool's own checks) → permission → run → cap (and
//! persist) a large result.
//!
//! Every gate that stops a call becomes a result with `is_error: true` that
//! says what was wrong and what to do next; none of them ends the run. Only a
//! tool's `ToolError::Fatal` does.

use std::path::PathBuf;
use std::sync::Arc;
use crate::sync::MutexExt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::observer::{CallObserver, CommandCheckpoint, ObservedCall, SaveForCommand};
use crate::protocol::{EditStatus, FileEffect};
use super::{DynTool, PreHook, PreparedCall, ShellProfile, ToolContext, ToolError, ToolHooks, ToolKind, ToolRegistry};

/// Results longer than this (in bytes) are also saved in full on disk, and
/// the model is told where.
pub const PERSIST_THRESHOLD_BYTES: usize = 30 * 1024;

/// One call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
    /// Set by the provider when the input could not be read (cut-off or
    /// malformed JSON): the call is answered with this error, never run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_error: Option<String>,
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        ToolCall { id: id.into(), name: name.into(), input, input_error: None }
    }
}

/// What goes back to the model for one call, and what the call did to
/// files (for the front ends; the model reads `content`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    pub id: String,
    pub content: String,
    pub is_error: bool,
    /// Images for the model to see beside `content` (`read_file` of a PNG).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<crate::model::Image>,
    /// What the call did to files, for the front ends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<FileEffect>,
}

impl ToolResult {
    pub fn ok(id: &str, content: impl Into<String>) -> Self {
        ToolResult { id: id.to_string(), content: content.into(), is_error: false, images: Vec::new(), effects: Vec::new() }
    }

    pub fn error(id: &str, content: impl Into<String>) -> Self {
        ToolResult { id: id.to_string(), content: content.into(), is_error: true, images: Vec::new(), effects: Vec::new() }
    }
}

/// A call the permission policy decides on. Every call is asked about, the
/// read-only ones too, so that a deny rule can stop a read.
#[derive(Debug, Clone)]
pub struct PermissionRequest {
    pub tool: String,
    pub kind: ToolKind,
    pub read_only: bool,
    /// A short human summary of the call ("src/app.rs", "cargo test").
    pub summary: String,
    /// What the user reviews: the diff of an edit, the content of a write.
    pub preview: Option<String>,
    /// The raw input, for hooks; rules match on `kind`, never on this.
    pub input: Value,
    /// The user approved a plan with "Execute and accept edits": this
    /// run's edits are applied without review (as in `acceptEdits`).
    pub accept_edits: bool,
    /// The run the call is part of, when the front end tags runs (the
    /// editor's run id: an edit rejected in review is that run's).
    pub run: Option<Arc<str>>,
    /// The conversation's "Always allow" grants: the policy allows what
    /// they cover, and "Always allow" adds to them.
    pub grants: Arc<super::Grants>,
    /// What the `PreToolUse` hooks said (run by the executor just before
    /// the policy is asked).
    pub hook: super::PreHook,
    /// Puts a question about the call in its run's event stream before
    /// the user is asked (`None`: the front end asks straight away).
    pub questions: Option<super::ports::questions::QuestionTurn>,
}

impl PermissionRequest {
    /// A shell command whose call asks for the network (`run_shell` with
    /// `network: true`): the gate asks the user even where a rule or the
    /// judgement would let it run, since only an answer opens the network.
    pub fn wants_network(&self) -> bool {
        matches!(self.kind, ToolKind::Execute { .. }) && self.input.get("network").and_then(Value::as_bool) == Some(true)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionDecision {
    /// Allowed without anyone being asked: judged read-only, or covered by
    /// a rule or a hook. A shell command runs in the sandbox's
    /// [`ShellProfile::Unasked`](super::ShellProfile::Unasked) profile.
    Allow,
    /// Allowed because someone approved it: the user answered the question,
    /// or chose a mode that allows it (`acceptEdits` for what a rule
    /// allows, `bypassPermissions`). A shell command runs in the
    /// [`ShellProfile::Approved`](super::ShellProfile::Approved) profile.
    Approved,
    /// Approved by the user, who was asked about a `run_shell` call that
    /// wants the network ([`PermissionRequest::wants_network`]): it runs in
    /// the approved profile and may reach the network.
    ApprovedWithNetwork,
    /// Allowed without a question because the sandbox contains it
    /// (`acceptEdits`, `autoAllowSandboxed`, a shape allowed for the
    /// session): the [`ShellProfile::Contained`](super::ShellProfile::Contained) profile.
    Contained,
    /// Refused; the string is the reason the model is given.
    Deny(String),
    /// Refused at the front end's question: the user said no (to the call,
    /// or to the change in its review), or gave no answer in time; the
    /// string is the reason the model is given. An edit refused so is
    /// `rejected` (see [`crate::protocol::EditStatus`]).
    Declined(String),
    /// Allowed if the user confirms it in the editor's own review of the
    /// edit (an applyEdit with a `needsConfirmation` change annotation). The
    /// policy's "ask" for an `Edit` where the editor shows the diff itself.
    ReviewInEditor,
    /// Approved in part: the user took the hunks marked `true` of the
    /// edit's preview and declined the others (the terminal's per-hunk
    /// review); the edit tools write only those.
    ApprovedHunks(Arc<[bool]>),
    /// Approved (whole, or the hunks of `keep` as [`Self::ApprovedHunks`])
    /// with the user's comments on it, which the call's result carries to
    /// the model (the terminal's "Apply, with a comment").
    Commented { keep: Option<Arc<[bool]>>, comments: Arc<[crate::protocol::HunkComment]> },
}

impl PermissionDecision {
    /// How a call this decision lets through was permitted (`None`: denied).
    pub fn approval(&self) -> Option<Approval> {
        match self {
            PermissionDecision::Allow => Some(Approval::Unasked),
            PermissionDecision::Approved => Some(Approval::Approved),
            PermissionDecision::ApprovedWithNetwork => Some(Approval::ApprovedWithNetwork),
            PermissionDecision::Contained => Some(Approval::Contained),
            PermissionDecision::ReviewInEditor => Some(Approval::ReviewInEditor),
            PermissionDecision::ApprovedHunks(_) | PermissionDecision::Commented { .. } => Some(Approval::Approved),
            PermissionDecision::Deny(_) | PermissionDecision::Declined(_) => None,
        }
    }
}

/// How a permitted call was permitted, as the tool acts on it: set by the
/// executor for one call from the gate's [`PermissionDecision`], read by
/// the tools ([`ToolContext::approval`]) and the call observers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Approval {
    /// Nobody was asked: judged read-only, or covered by a rule or a hook
    /// (in `default`/`plan`). A shell command runs in the sandbox's
    /// unasked profile.
    #[default]
    Unasked,
    /// Someone approved it: the user answered, or chose a mode that allows
    /// it. A shell command runs in the approved profile.
    Approved,
    /// Approved by the user, asked about a `run_shell` call that wants the
    /// network: the approved profile, and the network for this one command.
    ApprovedWithNetwork,
    /// Nobody was asked, because the sandbox contains it: the contained
    /// profile (it may write the workspace, nothing else).
    Contained,
    /// An edit the user reviews in the editor's own preview (an applyEdit
    /// with a `needsConfirmation` annotation) before it is applied.
    ReviewInEditor,
}

impl Approval {
    /// The sandbox profile a shell command permitted this way runs in.
    pub fn shell_profile(self) -> ShellProfile {
        match self {
            Approval::Unasked => ShellProfile::Unasked,
            Approval::Contained => ShellProfile::Contained,
            Approval::Approved | Approval::ApprovedWithNetwork | Approval::ReviewInEditor => ShellProfile::Approved,
        }
    }

    /// The user let this one command reach the network.
    pub fn network(self) -> bool {
        self == Approval::ApprovedWithNetwork
    }

    /// The edit goes to the editor's own review before it is applied.
    pub fn review_in_editor(self) -> bool {
        self == Approval::ReviewInEditor
    }
}

/// The one place that decides whether a call may run: rules, modes, or
/// asking the user (`permissions::Gate`, over every front end's prompter).
/// The edit sinks never decide again.
#[async_trait]
pub trait PermissionGate: Send + Sync {
    async fn decide(&self, request: &PermissionRequest) -> PermissionDecision;
}

/// Allows everything.
#[derive(Debug, Default)]
pub struct AllowAll;

#[async_trait]
impl PermissionGate for AllowAll {
    async fn decide(&self, _request: &PermissionRequest) -> PermissionDecision {
        PermissionDecision::Allow
    }
}

/// The run ended because a tool hit a broken invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatalToolError(pub String);

/// Runs tool calls through the gates.
#[derive(Clone)]
pub struct Executor {
    registry: ToolRegistry,
    gate: Arc<dyn PermissionGate>,
    results_dir: ResultsDir,
    /// The tool hooks, `PreToolUse` before the policy and `PostToolUse`
    /// after the call.
    hooks: Option<Arc<dyn ToolHooks>>,
    /// Run around every permitted call, in order ([`super::observer`]).
    observers: Vec<Arc<dyn CallObserver>>,
}

/// Where large results are saved.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ResultsDir {
    /// The workspace's own folder ([`crate::workspace::results_dir`]).
    PerWorkspace,
    Fixed(PathBuf),
    Nowhere,
}

impl Executor {
    /// Large results are saved in the workspace's own results folder.
    pub fn new(registry: ToolRegistry) -> Self {
        let observers: Vec<Arc<dyn CallObserver>> = vec![Arc::new(SaveForCommand), Arc::new(CommandCheckpoint)];
        Executor { registry, gate: Arc::new(AllowAll), results_dir: ResultsDir::PerWorkspace, hooks: None, observers }
    }

    pub fn with_gate(mut self, gate: Arc<dyn PermissionGate>) -> Self {
        self.gate = gate;
        self
    }

    /// Run these tool hooks around each call.
    pub fn with_hooks(mut self, hooks: Arc<dyn ToolHooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Offer one more tool (one that holds a service from above, such as
    /// `code_intel` its provider); it replaces a tool of the same name.
    pub fn with_tool(mut self, tool: Arc<dyn DynTool>) -> Self {
        self.registry.register_arc(tool);
        self
    }

    /// Run `observer` around every permitted call, after those added before.
    pub fn with_observer(mut self, observer: Arc<dyn CallObserver>) -> Self {
        self.observers.push(observer);
        self
    }

    /// Where large results are saved (`None`: never saved).
    pub fn with_results_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.results_dir = dir.map_or(ResultsDir::Nowhere, ResultsDir::Fixed);
        self
    }

    /// The same executor (same permission policy, same results folder)
    /// over another set of tools: a sub-agent never gets more permission
    /// than its parent.
    pub fn with_registry(&self, registry: ToolRegistry) -> Executor {
        Executor {
            registry,
            gate: Arc::clone(&self.gate),
            results_dir: self.results_dir.clone(),
            hooks: self.hooks.clone(),
            observers: self.observers.clone(),
        }
    }

    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The folder large results of calls in `ctx` are saved to.
    pub fn results_dir(&self, ctx: &ToolContext) -> Option<PathBuf> {
        match &self.results_dir {
            ResultsDir::PerWorkspace => crate::workspace::results_dir(ctx.workspace.root()),
            ResultsDir::Fixed(dir) => Some(dir.clone()),
            ResultsDir::Nowhere => None,
        }
    }

    /// The first gates: find the tool and parse the input once. `Err` is the
    /// result the model gets instead (unknown tool, unusable input).
    pub fn prepare(&self, call: &ToolCall, ctx: &ToolContext) -> Result<PreparedCall, ToolResult> {
        if let Some(message) = &call.input_error {
            return Err(ToolResult::error(&call.id, message.clone()));
        }
        let Some(tool) = self.registry.get(&call.name) else {
            let known = self.registry.names().join(", ");
            return Err(ToolResult::error(&call.id, format!("Unknown tool: {}. Available tools: {known}", call.name)));
        };
        if tool.deferred() && !ctx.run.is_active(&call.name) {
            return Err(ToolResult::error(&call.id, not_loaded_message(&call.name)));
        }
        tool.prepare(&call.input, ctx)
            .map_err(|reason| ToolResult::error(&call.id, format!("Invalid input for {}: {reason}", call.name)))
    }

    /// [`prepare`](Self::prepare), after waiting for a tool source that is
    /// still starting and may bring the tool (an MCP server that has not
    /// listed its tools yet): such a call waits rather than being told
    /// the tool is unknown.
    pub async fn prepare_settled(&self, call: &ToolCall, ctx: &ToolContext) -> Result<PreparedCall, ToolResult> {
        if self.awaits_source(call) {
            self.registry.settle(Some(&call.name), &ctx.run, &ctx.cancel).await;
        }
        self.prepare(call, ctx)
    }

    /// Is `call` for a tool not here yet that a starting source may bring?
    pub fn awaits_source(&self, call: &ToolCall) -> bool {
        call.input_error.is_none() && self.registry.get(&call.name).is_none() && !self.registry.starting(Some(&call.name)).is_empty()
    }

    /// Run one call through every gate.
    pub async fn execute(&self, call: &ToolCall, ctx: &ToolContext) -> Result<ToolResult, FatalToolError> {
        match self.prepare_settled(call, ctx).await {
            Ok(prepared) => self.run_prepared(call, prepared, ctx).await,
            Err(result) => Ok(result),
        }
    }

    /// The gates after [`prepare`](Self::prepare): plan → permission → run → cap.
    pub async fn run_prepared(&self, call: &ToolCall, prepared: PreparedCall, ctx: &ToolContext) -> Result<ToolResult, FatalToolError> {
        let mut ctx = ctx.clone();
        // The call's own view: what it does to files is recorded as its effects.
        ctx.workspace = Arc::new(ctx.workspace.for_call(&call.id));
        let mut result = self.run_gated(call, prepared, &mut ctx).await?;
        result.effects = ctx.workspace.take_call_effects();
        // Taken in part at the terminal's per-hunk review: what was written
        // is the part the user took.
        if ctx.chosen_hunks.as_ref().is_some_and(|keep| keep.iter().any(|k| !k)) {
            for effect in result.effects.iter_mut().filter(|e| e.status == EditStatus::Written && e.by_command.is_none()) {
                effect.status = EditStatus::Partial;
            }
        }
        Ok(result)
    }

    /// [`run_prepared`](Self::run_prepared) in the call's own context.
    async fn run_gated(&self, call: &ToolCall, mut prepared: PreparedCall, ctx: &mut ToolContext) -> Result<ToolResult, FatalToolError> {
        ctx.registry = self.registry.clone();
        let preview = match prepared.plan(ctx).await {
            Ok(preview) => preview,
            Err(err) => return into_result(&call.id, err),
        };
        let traits = &prepared.traits;
        if let Some(refusal) = super::plan_mode::plan_mode_refusal(ctx, &call.name, &traits.kind, traits.read_only) {
            return Ok(ToolResult::error(&call.id, refusal));
        }
        let accept_edits = ctx.run.plan.locked().accept_edits;
        let mut request = PermissionRequest {
            accept_edits,
            tool: call.name.clone(),
            kind: traits.kind.clone(),
            read_only: traits.read_only,
            summary: traits.summary.clone(),
            preview,
            input: call.input.clone(),
            run: ctx.workspace.run_tag().cloned(),
            grants: Arc::clone(&ctx.run.grants),
            hook: PreHook::None,
            questions: ctx.run.questions.locked().clone(),
        };
        if let Some(hooks) = &self.hooks {
            request.hook = hooks.pre_tool_use(&request).await;
        }
        let decision = self.gate.decide(&request).await;
        let Some(approval) = decision.approval() else {
            let reason = match decision {
                PermissionDecision::Declined(reason) => {
                    if let ToolKind::Edit { path } = &traits.kind {
                        ctx.workspace.record_effects([FileEffect::new(path.clone(), EditStatus::Rejected)]);
                    }
                    reason
                }
                PermissionDecision::Deny(reason) => reason,
                _ => String::new(),
            };
            return Ok(ToolResult::error(&call.id, denial(&request, &reason)));
        };
        ctx.approval = approval;
        ctx.chosen_hunks = match &decision {
            PermissionDecision::ApprovedHunks(keep) | PermissionDecision::Commented { keep: Some(keep), .. } => Some(Arc::clone(keep)),
            _ => None,
        };
        // The user's words on the edit, after what the call says of it.
        let comments_note = match (&decision, &traits.kind) {
            (PermissionDecision::Commented { comments, .. }, ToolKind::Edit { path }) => {
                crate::protocol::review_comments_note(&ctx.workspace.display_path(path), comments)
            }
            _ => None,
        };
        let max_result_chars = traits.max_result_chars;
        let observed = ObservedCall { kind: &traits.kind, approval };
        let mut watching = Vec::new();
        for observer in &self.observers {
            watching.extend(observer.before(observed, ctx).await);
        }
        let output = prepared.call(ctx).await;
        let mut notes = comments_note.map(|note| format!("\n{note}")).unwrap_or_default();
        for watch in watching {
            notes.push_str(&watch.after(ctx, output.is_ok()).await);
        }
        let mut result = match output {
            Ok(output) => ToolResult { images: output.images, ..ToolResult::ok(&call.id, output.text + &notes) },
            Err(err) => {
                let mut result = into_result(&call.id, err)?;
                result.content.push_str(&notes);
                result
            }
        };
        if let Some(hooks) = &self.hooks {
            if let Some(note) = hooks.post_tool_use(&request, &result).await {
                result.content.push_str(&note);
            }
        }
        let content = cap_result(&result.content, max_result_chars, self.results_dir(ctx).as_deref(), &call.id);
        Ok(ToolResult { content, ..result })
    }
}

/// The answer to a call of a deferred tool this run has not activated.
pub fn not_loaded_message(name: &str) -> String {
    format!(
        "Error: {name} is a deferred tool and its schema is not loaded. Call tool_search with query \"select:{name}\" first, then call {name} again."
    )
}

/// What the model is told when the policy refused a call.
fn denial(request: &PermissionRequest, reason: &str) -> String {
    format!(
        "Permission denied for {}: {reason}. Do not retry the same call; ask the user or take another approach.",
        request.tool
    )
}

fn into_result(id: &str, err: ToolError) -> Result<ToolResult, FatalToolError> {
    match err {
        ToolError::Model(message) => Ok(ToolResult::error(id, message)),
        ToolError::Fatal(message) => Err(FatalToolError(message)),
    }
}

/// Cut a result over `max_chars` to its head and tail around
/// `[... truncated N chars ...]`; save a result over
/// [`PERSIST_THRESHOLD_BYTES`] in full under `results_dir` and say where.
pub fn cap_result(content: &str, max_chars: usize, results_dir: Option<&std::path::Path>, id: &str) -> String {
    let saved = if content.len() > PERSIST_THRESHOLD_BYTES { persist(content, results_dir, id) } else { None };
    let total_chars = content.chars().count();
    let mut out = if total_chars > max_chars {
        let head_chars = max_chars / 2;
        let tail_chars = max_chars - head_chars;
        let head_end = content.char_indices().nth(head_chars).map(|(i, _)| i).unwrap_or(content.len());
        let tail_start = content.char_indices().nth(total_chars - tail_chars).map(|(i, _)| i).unwrap_or(content.len());
        let cut = total_chars - head_chars - tail_chars;
        format!("{}\n\n[... truncated {cut} chars ...]\n\n{}", &content[..head_end], &content[tail_start..])
    } else {
        content.to_string()
    };
    if let Some(path) = saved {
        out.push_str(&format!(
            "\n\n[The full result ({} bytes) was saved to {}. Use read_file with offset and limit to page through it.]",
            content.len(),
            path.display()
        ));
    }
    out
}

fn persist(content: &str, results_dir: Option<&std::path::Path>, id: &str) -> Option<PathBuf> {
    let dir = results_dir?;
    // Private to the user: results can hold anything a tool printed.
    crate::platform::private_dir(std::fs::DirBuilder::new().recursive(true)).create(dir).ok()?;
    let safe_id: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
    let name = if safe_id.is_empty() { format!("result-{}.txt", std::process::id()) } else { format!("{safe_id}.txt") };
    let path = dir.join(name);
    // Atomic, so a reader never sees half a result; an existing file of
    // the same call id is replaced.
    let _ = std::fs::remove_file(&path);
    match crate::workspace::atomic_write(&path, content.as_bytes(), None).map_err(|e| match e {
        crate::workspace::DiskWriteError::Io(err) => err,
        other => std::io::Error::other(format!("{other:?}")),
    }) {
        Ok(()) => Some(path),
        Err(err) => {
            tracing::warn!(%err, path = %path.display(), "cannot save a large tool result");
            None
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use expect_test::expect;

    /// A gate that gives every call one decision.
    struct Decides(PermissionDecision);

    #[async_trait]
    impl PermissionGate for Decides {
        async fn decide(&self, _request: &PermissionRequest) -> PermissionDecision {
            self.0.clone()
        }
    }

    /// An edit the user said no to is `rejected` in its result's effects; one
    /// a rule refused changed nothing and says nothing of it; one written
    /// says so with its lines, under its own call.
    #[tokio::test]
    async fn a_call_s_result_carries_what_it_did_to_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("a.txt");
        std::fs::write(&path, "one\ntwo\n").unwrap();
        let ctx = ToolContext::new(Arc::new(crate::workspace::Workspace::new(&root).unwrap()));
        let read = ToolCall::new("toolu_1", "read_file", serde_json::json!({"file_path": "a.txt"}));
        let edit = |id: &str| ToolCall::new(id, "edit_file", serde_json::json!({"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}));
        let run = |decision: PermissionDecision, call: ToolCall| {
            let ctx = ctx.clone();
            async move { Executor::new(ToolRegistry::builtin()).with_results_dir(None).with_gate(Arc::new(Decides(decision))).execute(&call, &ctx).await.unwrap() }
        };
        let read = run(PermissionDecision::Allow, read).await;
        assert!(!read.is_error && read.effects.is_empty(), "{read:?}");
        let declined = run(PermissionDecision::Declined("the user rejected the change".into()), edit("toolu_2")).await;
        assert_eq!(declined.effects, vec![FileEffect::new(path.clone(), EditStatus::Rejected)]);
        let denied = run(PermissionDecision::Deny("a deny rule".into()), edit("toolu_3")).await;
        assert!(denied.is_error && denied.effects.is_empty(), "{denied:?}");
        let written = run(PermissionDecision::Approved, edit("toolu_4")).await;
        assert_eq!(written.effects, vec![FileEffect { ranges: vec![crate::protocol::LineSpan { start: 2, end: 2 }], ..FileEffect::new(path.clone(), EditStatus::Written) }], "{written:?}");
    }

    #[test]
    fn short_results_pass_unchanged() {
        assert_eq!(cap_result("hello", 10, None, "toolu_1"), "hello");
        let exactly = "x".repeat(10);
        assert_eq!(cap_result(&exactly, 10, None, "toolu_1"), exactly);
    }

    #[test]
    fn long_results_keep_head_and_tail_with_the_exact_count() {
        let content: String = ('a'..='z').collect();
        expect![[r#"
            abcde

            [... truncated 16 chars ...]

            vwxyz"#]]
        .assert_eq(&cap_result(&content, 10, None, "toolu_1"));
        // An odd limit: the tail gets the extra character.
        expect![[r#"
            abc

            [... truncated 19 chars ...]

            wxyz"#]]
        .assert_eq(&cap_result(&content, 7, None, "toolu_1"));
    }

    #[test]
    fn truncation_counts_characters_not_bytes() {
        let content = "é".repeat(30);
        let capped = cap_result(&content, 10, None, "toolu_1");
        assert_eq!(capped, format!("{}\n\n[... truncated 20 chars ...]\n\n{}", "é".repeat(5), "é".repeat(5)));
    }

    #[test]
    fn results_over_30kb_are_saved_in_full_and_the_model_is_told_where() {
        let dir = tempfile::tempdir().unwrap();
        let content: String = (0..4000).map(|i| format!("line {i:05}\n")).collect();
        assert!(content.len() > PERSIST_THRESHOLD_BYTES);
        let capped = cap_result(&content, 1000, Some(dir.path()), "toolu_01/../x");
        let saved = dir.path().join("toolu_01x.txt");
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), content);
        let cut = content.chars().count() - 1000;
        assert!(capped.starts_with(&content[..500]));
        assert!(capped.contains(&format!("\n\n[... truncated {cut} chars ...]\n\n")));
        assert!(capped.ends_with(&format!(
            "\n\n[The full result ({} bytes) was saved to {}. Use read_file with offset and limit to page through it.]",
            content.len(),
            saved.display()
        )));
    }

    #[test]
    fn results_under_30kb_are_not_saved() {
        let dir = tempfile::tempdir().unwrap();
        let content = "x".repeat(PERSIST_THRESHOLD_BYTES);
        assert_eq!(cap_result(&content, 100_000, Some(dir.path()), "toolu_1"), content);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_large_result_is_saved_even_when_under_the_char_limit() {
        let dir = tempfile::tempdir().unwrap();
        let content = "y".repeat(PERSIST_THRESHOLD_BYTES + 1);
        let capped = cap_result(&content, 100_000, Some(dir.path()), "toolu_2");
        let saved = dir.path().join("toolu_2.txt");
        assert!(capped.starts_with(&content));
        assert!(capped.contains(&saved.display().to_string()), "{}", &capped[content.len()..]);
    }
}
