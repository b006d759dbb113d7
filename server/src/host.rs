//! The host: settings in, the parts of a ready run out, the same for every
//! front end. A front end (`lsp/`, `cli/`, `acp/`) passes only what is its
//! own — how it asks the user (its [`PermissionPolicy`] over the one
//! [`Policy`]), who reviews a plan ([`PlanReview`]), where edits go (the
//! workspace's editor sink), how events are shown — and asks the host for
//! the rest instead of assembling it by hand.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn front_end(workspace: Arc<tandem::workspace::Workspace>, gate: Arc<dyn tandem::tools::PermissionPolicy>) -> anyhow::Result<()> {
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
//! through (a sandbox, checkpoints, code intelligence) is added to
//! [`Tools`] and wired there, once, for every front end.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::config::ProviderConfig;
use crate::checkpoint::{Checkpoints, RunRecorder};
use crate::agent::{Provider, RunRequest};
use crate::consent::ConsentStore;
use crate::hooks::{Hooks, SharedHooks};
use crate::mcp::{Approvals, McpManager};
use crate::permissions::Policy;
use crate::thread::ThreadStore;
use crate::settings::{Settings, SettingsFiles, SettingsProblem};
use crate::tools::code_intel::CodeIntel;
use crate::tools::plan_mode::{start_in_plan_mode, PlanReview};
use crate::tools::{Executor, PermissionMode, PermissionPolicy, RunScope, ToolRegistry, ToolSource};
use crate::workspace::Workspace;

/// The settings of a workspace: the user's, the project's and the local
/// files, layered; the problems name the file and field (never fatal).
pub fn load_settings(root: &Path) -> (Settings, Vec<SettingsProblem>) {
    crate::settings::load(&SettingsFiles::for_workspace(root), &[])
}

/// The model provider the settings (and the environment under them) name.
pub fn provider(settings: &Settings) -> anyhow::Result<Box<dyn Provider>> {
    ProviderConfig::from_lookup(|name| settings.lookup(name)).and_then(|config| config.build()).map_err(|err| anyhow::anyhow!("{err}"))
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
    McpManager::load(root, Approvals::from_command_line(approve))
}

/// What a run's tool calls go through, besides the built-in tools.
pub struct Tools {
    /// The front end's permission gate (how it asks the user).
    pub gate: Arc<dyn PermissionPolicy>,
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
    let mut executor = Executor::new(registry).with_policy(tools.gate).with_hooks(tools.hooks as Arc<dyn crate::tools::ToolHooks>);
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

/// The checkpoints of a workspace over `roots`, kept beside its threads
/// (`None` without a data folder: runs then record nothing).
pub fn checkpoints(sessions: Option<&ThreadStore>, roots: &[PathBuf]) -> Option<Arc<Checkpoints>> {
    sessions.map(|store| Checkpoints::beside(store, roots))
}

/// A run's checkpoint while it is recorded: the run's workspace tells it
/// every change, the executor every shell command. Dropping it ends the
/// checkpoint (however the run ended: cancelled, failed, its task dropped),
/// so `tandem undo` and `tandem.undo` may take the run back.
pub struct RunCheckpoint {
    recorder: Arc<RunRecorder>,
}

impl RunCheckpoint {
    /// The run's id as the front end named it.
    pub fn run_id(&self) -> String {
        self.recorder.run_id()
    }

    /// The files the run changed so far.
    pub fn changed_files(&self) -> Vec<PathBuf> {
        self.recorder.changed_files()
    }

    /// The run ended: the checkpoint is complete (the first call counts;
    /// dropping it does the same).
    pub fn finish(&self) {
        self.recorder.finish();
    }
}

impl Drop for RunCheckpoint {
    fn drop(&mut self) {
        self.recorder.finish();
    }
}

/// `workspace` recording the run `run_id` of thread `thread_id` into
/// `checkpoints`, and the checkpoint to keep while the run goes on (the
/// workspace as it is, and `None`, without checkpoints).
pub fn recorded_run(checkpoints: Option<&Arc<Checkpoints>>, workspace: &Workspace, thread_id: &str, run_id: &str) -> (Workspace, Option<RunCheckpoint>) {
    match checkpoints {
        Some(checkpoints) => {
            let recorder = checkpoints.record(thread_id, run_id);
            let recording = workspace.with_recorder(Checkpoints::recorder_for(&recorder));
            (recording, Some(RunCheckpoint { recorder }))
        }
        None => (workspace.with_ledger(workspace.ledger_handle()), None),
    }
}
