//! The host: settings in, the parts of a ready run out, the same for every
//! front end. A front end (`lsp/`, `cli/`, `acp/`) passes only what is its
//! own — how it asks the user (its [`PermissionGate`] over the one
//! [`Policy`]), who reviews a plan ([`PlanReview`]), where edits go (the
//! workspace's editor sink), how events are shown — and asks the host for
//! the rest instead of assembling it by hand.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn front_end(workspace: Arc<tandem::workspace::Workspace>, gate: Arc<dyn tandem::tools::PermissionGate>) -> anyhow::Result<()> {
//! use tandem::host;
//! let settings = host::load_settings(workspace.root()).0;
//! let provider = host::provider(&settings)?;
//! let modes = host::Modes::new(&settings, None);
//! let (hooks, _problems) = host::hooks(&settings, workspace.root(), None);
//! let hooks = tandem::hooks::shared(hooks);
//! let mcp = host::mcp(workspace.root(), Vec::new());
//! // The front end's gate decides with host::policy(&settings, modes, roots).
//! let executor = host::executor(host::Tools { gate, hooks: Arc::clone(&hooks), mcp: Some(Arc::clone(&mcp)), code_intel: None });
//! let scope = host::run_scope(modes, None, workspace.root());
//! let request = host::user_request("explain src/main.rs", &hooks);
//! # let _ = (provider, executor, scope, request); Ok(()) }
//! ```
//!
//! The executor is built in one place, [`executor`]: what a run's calls go
//! through (the MCP servers, code intelligence) is added to [`Tools`] and
//! wired there, once, for every front end. What one run gets besides —
//! its scope (plan mode), the sandbox its shell commands run in and the
//! checkpoint recorder `undo` restores from — is wired in one place too,
//! [`prepare_run`]: a front end passes its workspace view, plan review and
//! cancel token, and drives the [`PreparedRun`] it gets back.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::agent::config::ProviderConfig;
use crate::agent::{Provider, RunRequest};
use crate::checkpoint::{Checkpoints, RunRecorder};
use crate::consent::ConsentStore;
use crate::hooks::{Hooks, SharedHooks};
use crate::mcp::{Approvals, McpManager};
use crate::permissions::Policy;
use crate::sandbox::Availability;
use crate::thread::ThreadStore;
use crate::settings::{Settings, SettingsFiles, SettingsProblem};
use crate::tools::code_intel::CodeIntel;
use crate::tools::plan_mode::{start_in_plan_mode, PlanReview};
use crate::tools::{Executor, PermissionMode, PermissionGate, RunScope, ToolContext, ToolRegistry, ToolSource};
use crate::workspace::Workspace;

/// The settings of a workspace: the user's, the project's and the local
/// files, layered; the problems name the file and field (never fatal).
pub fn load_settings(root: &Path) -> (Settings, Vec<SettingsProblem>) {
    crate::settings::load(&SettingsFiles::for_workspace(root), &[])
}

/// The settings of a workspace, failing closed: a file whose permission
/// rules cannot be read (it does not parse) stops the run — `Err` names
/// each such file with its line and column — so that its deny rules are
/// never silently dropped. The other problems come back beside the
/// settings for the front end to show; they never stop a run.
pub fn checked_settings(root: &Path) -> Result<(Settings, Vec<SettingsProblem>), String> {
    let (settings, problems) = load_settings(root);
    let (fatal, other): (Vec<_>, Vec<_>) = problems.into_iter().partition(SettingsProblem::is_fatal);
    if fatal.is_empty() {
        return Ok((settings, other));
    }
    Err(fatal.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
}

/// The model provider the settings (and the environment under them) name.
pub fn provider(settings: &Settings) -> anyhow::Result<Box<dyn Provider>> {
    provider_with_model(settings, None)
}

/// The same provider with another of its models (a front end's model
/// choice: ACP's `model` session option); `None`: the settings' model.
pub fn provider_with_model(settings: &Settings, model: Option<&str>) -> anyhow::Result<Box<dyn Provider>> {
    let lookup = |name: &str| match (name, model) {
        ("TANDEM_MODEL", Some(model)) => Some(model.to_string()),
        _ => settings.lookup(name),
    };
    ProviderConfig::from_lookup(lookup).and_then(|config| config.build()).map_err(|err| anyhow::anyhow!("{err}"))
}

/// The models a front end may offer to switch between on this provider:
/// the one the settings name first, then (on Anthropic) Claude's current
/// family models. Other providers serve the one model they are set up
/// with.
pub fn model_choices(provider: &dyn Provider) -> Vec<String> {
    let mut models = vec![provider.model().to_string()];
    if provider.name() == "anthropic" {
        for (_, model) in crate::agent::config::ANTHROPIC_FAMILY_MODELS {
            if !models.iter().any(|m| m == model) {
                models.push(model.to_string());
            }
        }
    }
    models
}

/// The permission mode a run starts in, and the one its policy decides in.
/// Plan mode is the run's own gate (it refuses every change but the plan
/// file, and ends when the plan is approved): the policy then decides as
/// in `default`, so there is one plan check, the executor's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modes {
    pub run: PermissionMode,
    pub policy: PermissionMode,
}

impl Modes {
    /// `asked` (a command-line flag) over the settings' `permissionMode`.
    pub fn new(settings: &Settings, asked: Option<PermissionMode>) -> Self {
        let run = asked.or(settings.permission_mode).unwrap_or_default();
        let policy = if run == PermissionMode::Plan { PermissionMode::Default } else { run };
        Modes { run, policy }
    }
}

/// The one permission decision for a run in these modes, over the
/// workspace roots (the first is the primary one).
pub fn policy(settings: &Settings, modes: Modes, roots: &[PathBuf]) -> Policy {
    Policy::new(modes.policy, &settings.permissions, roots)
}

/// The hooks the settings configure. The project's hooks run only when
/// `consent` holds the user's approval of exactly these hooks; the problems
/// say what was left out and why.
pub fn hooks(settings: &Settings, root: &Path, consent: Option<&ConsentStore>) -> (Hooks, Vec<String>) {
    Hooks::from_layers(&settings.hooks, settings.child_env(), root, consent)
}

/// The MCP servers of the workspace (the user's, and the project's the
/// user approved or names in `approve`), not started yet.
pub fn mcp(root: &Path, approve: Vec<String>) -> Arc<McpManager> {
    mcp_with(root, approve, Vec::new())
}

/// The same, with servers the front end brings (an ACP client's
/// `mcpServers`: the user configured them there, so they need no consent).
pub fn mcp_with(root: &Path, approve: Vec<String>, front_end: Vec<crate::mcp::config::ServerConfig>) -> Arc<McpManager> {
    let mut config = crate::mcp::config::McpConfig::load(dirs::home_dir().as_deref(), root);
    config.servers.extend(front_end);
    McpManager::new(config, root, Approvals::from_command_line(approve))
}

/// What a run's tool calls go through, besides the built-in tools.
pub struct Tools {
    /// The front end's permission gate (how it asks the user).
    pub gate: Arc<dyn PermissionGate>,
    /// The tool hooks, run around every call by the executor.
    pub hooks: SharedHooks,
    /// The MCP servers, whose tools join as deferred `mcp__…` tools.
    pub mcp: Option<Arc<McpManager>>,
    /// Code intelligence for the `code_intel` tool, where the front end has it.
    pub code_intel: Option<Arc<dyn CodeIntel>>,
}

/// The executor every run's calls pass through: the built-in tools (and
/// the MCP servers'), the gate, the hooks. The one place it is built.
pub fn executor(tools: Tools) -> Executor {
    let mut registry = ToolRegistry::builtin();
    if let Some(mcp) = tools.mcp {
        registry.add_source(mcp as Arc<dyn ToolSource>);
    }
    let mut executor = Executor::new(registry).with_gate(tools.gate).with_hooks(tools.hooks as Arc<dyn crate::tools::ToolHooks>);
    if let Some(code_intel) = tools.code_intel {
        executor = executor.with_code_intel(code_intel);
    }
    executor
}

/// The language servers of `lspServers` for a front end whose editor does
/// not answer code intelligence questions (`None` when none is
/// configured); `approved` names project servers approved on the command
/// line. The problems name the unusable entries.
pub fn language_servers(root: &Path, settings: &Settings, approved: Vec<String>) -> (Option<Arc<crate::language_servers::LanguageServers>>, Vec<String>) {
    let approvals = crate::language_servers::Approvals { store: crate::consent::ConsentStore::for_user(), command_line: approved };
    crate::language_servers::LanguageServers::configure(root, &settings.lsp_servers, approvals, settings.timeouts.code_intel(), settings.timeouts.diagnostics())
}

/// A run's own state, in plan mode from the start when the run's mode is
/// `plan`; `review` is who answers `exit_plan_mode` (`None`: nobody can).
pub fn run_scope(modes: Modes, review: Option<Arc<dyn PlanReview>>, root: &Path) -> RunScope {
    let scope = RunScope::new(modes.policy, review);
    if modes.run == PermissionMode::Plan {
        start_in_plan_mode(&scope, root);
    }
    scope
}

/// The request for one of the user's runs: its prompt and stop hooks are
/// the session's (sub-agents' requests have none).
pub fn user_request(prompt: impl Into<String>, hooks: &SharedHooks) -> RunRequest {
    RunRequest { prompt: prompt.into(), hooks: Some(Arc::clone(hooks)), ..RunRequest::default() }
}

/// The sandbox a run's shell commands run in with these settings
/// (bubblewrap on Linux), masking the existing paths the read-deny rules
/// cover; or why there is none ([`Availability::notice`] says it to the
/// user once per run).
pub fn sandbox(settings: &Settings, roots: &[PathBuf]) -> Availability {
    // The masks depend on the rules only, not on the mode.
    let denied = Policy::new(PermissionMode::Default, &settings.permissions, roots).read_denied_paths();
    crate::sandbox::for_run(&settings.sandbox, Arc::new(move || denied.clone()))
}

/// The checkpoints of a workspace, beside its threads (`None` without a
/// data folder: then runs are not recorded and cannot be undone). One per
/// front-end session: its runs share the last look at the tree.
pub fn checkpoints(store: Option<&ThreadStore>, roots: &[PathBuf]) -> Option<Arc<Checkpoints>> {
    store.map(|store| Checkpoints::beside(store, roots))
}

/// A run id for a front end that has none of its own (the terminal, an
/// ACP prompt): the time it started, to the millisecond.
pub fn new_run_id() -> String {
    format!("run-{}", chrono::Local::now().format("%Y%m%d-%H%M%S%3f"))
}

/// What a front end brings to one run.
pub struct RunParts {
    /// The workspace as the front end sees it: its editor sink, and its
    /// run tag where the front end tags runs.
    pub workspace: Arc<Workspace>,
    pub modes: Modes,
    /// Who answers `exit_plan_mode` (`None`: nobody can).
    pub plan_review: Option<Arc<dyn PlanReview>>,
    pub cancel: CancellationToken,
    /// Where the run's checkpoint goes, and the thread and run it is of.
    pub checkpoint: Option<(Arc<Checkpoints>, String, String)>,
}

/// A run ready to drive: its tool context (scope, sandbox, the checkpoint
/// recorder on its workspace, the shell environment) and what ends it.
pub struct PreparedRun {
    pub ctx: ToolContext,
    /// Said once per run when shell commands run unconfined.
    pub sandbox_notice: Option<String>,
    pub end: RunEnd,
}

/// Ends a run, however it ends: its checkpoint is completed and the temp
/// files of interrupted writes are removed.
pub struct RunEnd {
    recorder: Option<Arc<RunRecorder>>,
    workspace: Arc<Workspace>,
}

impl RunEnd {
    /// The run's checkpoint recorder, for a front end that completes it
    /// when the run's `end` event goes out (before the user can act on it;
    /// [`RunRecorder::finish`] counts once).
    pub fn recorder(&self) -> Option<Arc<RunRecorder>> {
        self.recorder.clone()
    }

    /// End the run now; its completed checkpoint recorder, if it had one.
    pub fn finish(mut self) -> Option<Arc<RunRecorder>> {
        let recorder = self.recorder.take();
        if let Some(recorder) = &recorder {
            recorder.finish();
        }
        recorder
    }
}

impl Drop for RunEnd {
    fn drop(&mut self) {
        if let Some(recorder) = self.recorder.take() {
            recorder.finish();
        }
        self.workspace.clean_interrupted_writes();
    }
}

/// Everything one run gets from the host besides the executor: plan mode
/// from its modes, the sandbox, the checkpoint recorder, the environment
/// shell commands see. The one place a run's tool context is built.
pub fn prepare_run(settings: &Settings, parts: RunParts) -> PreparedRun {
    let sandbox = sandbox(settings, parts.workspace.roots());
    let scope = run_scope(parts.modes, parts.plan_review, parts.workspace.root());
    // The run's checkpoint, beside its thread: `undo` takes it back.
    let recorder = parts.checkpoint.map(|(checkpoints, thread_id, run_id)| checkpoints.record(&thread_id, &run_id));
    let workspace = match &recorder {
        Some(recorder) => Arc::new(parts.workspace.with_recorder(Checkpoints::recorder_for(recorder))),
        None => parts.workspace,
    };
    let ctx = ToolContext {
        cancel: parts.cancel,
        child_env: Arc::new(settings.child_env()),
        sandbox: sandbox.sandbox(),
        run: Arc::new(scope),
        ..ToolContext::new(Arc::clone(&workspace))
    };
    PreparedRun { ctx, sandbox_notice: sandbox.notice(), end: RunEnd { recorder, workspace } }
}
