//! The host: settings in, runs out, the same for every front end. A front
//! end (`lsp/`, `cli/`, `acp/`) passes only what is its own — how it asks
//! the user (its [`Prompter`]), who reviews a plan ([`PlanReview`]),
//! where edits go (the workspace's editor sink), how events are shown —
//! and the host does the rest: it builds the permission policy and the
//! one gate, checks the thread out with the one cross-process run lock,
//! and drives the loop.
//!
//! ```no_run
//! # use std::sync::{Arc, RwLock};
//! # async fn front_end(workspace: Arc<tandem::workspace::Workspace>, prompter: Arc<dyn tandem::host::Prompter>) -> anyhow::Result<()> {
//! use tandem::host::{self, FrontEnd, Host, RunHandle, RunParts, ThreadChoice};
//! let (settings, _problems) = host::load_settings(workspace.root()).map_err(anyhow::Error::msg)?;
//! let (hooks, _problems) = host::hooks(&settings, workspace.root(), None);
//! // Once per workspace: what its runs share (the gate, hooks, MCP, language servers, the executor, the threads).
//! let (host, _problems) = Host::open(FrontEnd {
//!     workspace,
//!     settings: Arc::new(RwLock::new(settings)),
//!     prompter: Some(prompter),
//!     mode: None,
//!     rules_in_project: true,
//!     hooks: tandem::hooks::shared(hooks),
//!     mcp: Some(host::McpServers::default()),
//!     code_intel: host::CodeIntelFrom::None,
//!     record: true,
//! });
//! // Once per run: the thread checked out, the loop started.
//! let RunHandle { mut events, ending, .. } = host.start(&ThreadChoice::New, "explain src/main.rs", RunParts::default())?;
//! while let Some(event) = events.recv().await {
//!     // show it
//! #   let _ = event;
//! }
//! let finished = ending.finished().await;
//! # let _ = finished; Ok(()) }
//! ```
//!
//! [`Host::open`] builds, once per front-end session, what the runs of a
//! workspace share: the permission policy and gate, the executor (the
//! built-in tools, the MCP servers', code intelligence, the gate, the tool
//! hooks: wired here, once), the threads and the checkpoints.
//! [`Host::start`] runs one prompt: the thread, the provider, its context
//! configuration, the run's scope (plan mode), the sandbox its shell
//! commands run in, the checkpoint recorder `undo` restores from, and the
//! request with the prompt and stop hooks.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use tokio_util::sync::CancellationToken;

use crate::agent::config::ProviderConfig;
pub use crate::agent::config::Endpoint;
use crate::checkpoint::{Checkpoints, RunRecorder};
use crate::consent::ConsentStore;
use crate::language_servers::LanguageServers;
use crate::consent::Approvals;
use crate::mcp::McpManager;
use crate::permissions::{Containment, NoProjectRules, Policy, ProjectRules};
pub use crate::permissions::{allow_host_label, allow_host_saved_label, told_instead, Answer, Gate, Offers, Prompter, Review, ALLOW_LIKE_THIS, INSTEAD_PROMPT, TELL_INSTEAD};
pub use crate::permissions::protected::protected as protected_path;
use crate::sandbox::Availability;
use crate::settings::{Settings, SettingsFiles, SettingsProblem};
use crate::sync::{MutexExt, RwLockExt};
use crate::tasks::TaskRegistry;
use crate::thread::{ContextConfig, Thread};
use crate::tools::ports::code_intel::CodeIntel;
use crate::tools::ports::network::Network;
use crate::tools::plan_mode::{start_in_plan_mode, PlanReview};
use crate::tools::{Executor, PermissionGate, PermissionMode, RunScope, ToolContext, ToolRegistry, ToolSource};
use crate::protocol::{ChangedFile, RunEdit};
use crate::workspace::{edits_summary, EditSummaryItem, Workspace};

pub mod attachments;
pub mod instructions;
mod questions;
mod start;
pub use start::{Finished, RunEnding, RunHandle, StartError};

// The words a front end speaks that the layers behind the host define: the
// run's events and outcome, the threads as users list them, the hooks a
// front end asks consent for, the terminal's prompter. A front end names
// them here and never reaches past the host (tests/layers.rs checks it).
pub use crate::tools::ports::network::HostAnswer;
pub use crate::agent::{EventSender, QuestionTurns, RunEvent, RunOutcome, RunRequest, RunStatus};
// And the model's, for a front end that brings its own (the demo's scripted one).
pub use crate::agent::provider::{ModelRequest, ModelResponse, Provider, ProviderError, StreamEvent};
pub use crate::agent::scripted::ScriptedProvider;
pub use crate::hooks::{describe_project, project_hooks, shared as shared_hooks, Hooks, SharedHooks};
pub use crate::permissions::headless::{Terminal, TerminalPrompter};
pub use crate::tools::ports::tasks::{TaskStatus, Tasks};
pub use crate::thread::pricing::format_cost;
pub use crate::thread::threads::{ThreadError, Threads};
pub use crate::thread::{ThreadStore, Totals};

/// The settings of a workspace (the user's, the project's and the local
/// files, layered), failing closed: a file whose permission
/// rules cannot be read (it does not parse) stops the run — `Err` names
/// each such file with its line and column — so that its deny rules are
/// never silently dropped. The other problems come back beside the
/// settings for the front end to show; they never stop a run.
pub fn load_settings(root: &Path) -> Result<(Settings, Vec<SettingsProblem>), String> {
    load_settings_with(root, &[])
}

/// [`load_settings`] with an editor's settings over the files (as
/// `tandem lsp` takes them from its editor).
pub fn load_settings_with(root: &Path, editor: &[serde_json::Value]) -> Result<(Settings, Vec<SettingsProblem>), String> {
    let (settings, problems) = crate::settings::load(&SettingsFiles::for_workspace(root), editor);
    let (fatal, other): (Vec<_>, Vec<_>) = problems.into_iter().partition(SettingsProblem::is_fatal);
    if fatal.is_empty() {
        return Ok((settings, other));
    }
    Err(fatal.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
}

/// What trusting a folder did ([`trust_folder`]).
#[derive(Debug, Clone, Default)]
pub struct FolderTrusted {
    /// What the untrusted files asked for and was left out until now
    /// (empty: nothing needed trust).
    pub applied: Vec<SettingsProblem>,
    /// The files not read, so not trusted, one line each: `.mcp.json: it
    /// is not a regular file (a FIFO)`.
    pub skipped: Vec<String>,
}

/// Trust the files of the folder `root` as they are now, in the user's
/// store ([`crate::trust`]), each read as the loaders read it (a FIFO, a
/// device, a file too large or linking out of the folder is skipped and
/// said). It reads files: a front end with a request loop calls it off
/// that loop. `Err` says why the trust cannot be kept.
pub fn trust_folder(root: &Path) -> Result<FolderTrusted, String> {
    let store = crate::trust::TrustStore::for_user().ok_or("cannot find the user's data folder (set XDG_DATA_HOME) to remember the trust in")?;
    let (_, before) = crate::settings::load(&SettingsFiles::for_workspace(root), &[]);
    let trusted = store.trust_files(root).map_err(|err| format!("cannot remember the trust in {}: {err}", store.path().display()))?;
    Ok(FolderTrusted {
        applied: before.into_iter().filter(SettingsProblem::needs_trust).collect(),
        skipped: trusted.skipped.iter().map(|(file, reason)| format!("{file}: {reason}; not trusted")).collect(),
    })
}

/// Whether [`trust_folder`]'s answer holds what starts when a session
/// opens (MCP and language servers): a session open before the trust
/// starts them only when it is opened again.
pub fn needs_new_session(applied: &[SettingsProblem]) -> bool {
    applied.iter().any(|p| matches!(p.field.as_str(), "mcpServers" | "lspServers" | "enableAllProjectMcpServers" | "enabledMcpjsonServers"))
}

/// The model provider the settings (and the environment under them) name.
pub fn provider(settings: &Settings) -> anyhow::Result<Box<dyn Provider>> {
    provider_with_model(settings, None)
}

/// The same provider with another of its models (a front end's model
/// choice: ACP's `model` session option); `None`: the settings' model.
pub fn provider_with_model(settings: &Settings, model: Option<&str>) -> anyhow::Result<Box<dyn Provider>> {
    resolve_provider(settings, model).map(|(provider, _)| provider).map_err(|err| anyhow::anyhow!("{err}"))
}

/// The endpoint runs with these settings would talk to, and why (the one
/// decision of [`ProviderConfig::resolve`]); `Err`: why there is none, or
/// the setting that cannot apply. What `tandem doctor`, `tandem.provider`
/// and a run's first event show.
pub fn endpoint(settings: &Settings) -> Result<Endpoint, String> {
    resolve_provider(settings, None).map(|(_, endpoint)| endpoint)
}

/// Whether the model API the settings name answers, with their key
/// (`tandem doctor`): what it said, or why it cannot be used.
pub async fn probe_model(settings: &Settings, timeout: std::time::Duration) -> Result<String, String> {
    let lookup = |name: &str| match name.strip_prefix(crate::agent::config::ORIGIN) {
        Some(variable) => settings.origin_of(variable),
        None => settings.lookup(name),
    };
    let (config, _) = ProviderConfig::resolve(lookup).map_err(|err| err.to_string())?;
    crate::agent::config::probe(&config, timeout).await
}

fn resolve_provider(settings: &Settings, model: Option<&str>) -> Result<(Box<dyn Provider>, Endpoint), String> {
    let lookup = |name: &str| match (name, model) {
        ("TANDEM_MODEL", Some(model)) => Some(model.to_string()),
        // Where a value was set, for the messages that name it (agent::config's ORIGIN).
        _ => match name.strip_prefix(crate::agent::config::ORIGIN) {
            Some(variable) => settings.origin_of(variable),
            None => settings.lookup(name),
        },
    };
    let (config, endpoint) = ProviderConfig::resolve(lookup).map_err(|err| err.to_string())?;
    // The provider's own checks (a key) say why this provider.
    let provider = config.build().map_err(|err| format!("{err} ({})", endpoint.reason))?;
    Ok((provider, endpoint))
}

/// The models a front end may offer to switch between on this provider:
/// the one the settings name first, then (on Anthropic) Claude's current
/// family models. Other providers serve the one model they are set up
/// with. From the [`Endpoint`] (its provider and model), so offering them
/// builds no second provider.
pub fn model_choices(endpoint: &Endpoint) -> Vec<String> {
    let mut models = vec![endpoint.model.clone()];
    if endpoint.provider == "anthropic" {
        for (_, model) in crate::agent::config::ANTHROPIC_FAMILY_MODELS {
            if !models.iter().any(|m| m == model) {
                models.push(model.to_string());
            }
        }
    }
    models
}

/// The efforts `model` takes on `endpoint`'s provider, as the model table
/// (with the settings' `models`) says: none off Anthropic, whose API has
/// no effort. What a front end offers beside its model picker.
pub fn model_efforts(settings: &Settings, endpoint: &Endpoint, model: &str) -> Vec<crate::model::table::Effort> {
    if endpoint.provider != "anthropic" {
        return Vec::new();
    }
    let table = crate::model::table::ModelTable::from_lookup(|name| settings.lookup(name)).unwrap_or_default();
    table.info(model).efforts
}

/// An effort a front end asks for one run (`tandem.ask`'s `effort`),
/// checked against the model the settings' run would use: `Err` says what
/// that model takes instead.
pub fn check_asked_effort(settings: &Settings, asked: &str) -> Result<crate::model::table::Effort, String> {
    let endpoint = endpoint(settings)?;
    let takes = model_efforts(settings, &endpoint, &endpoint.model);
    match crate::model::table::Effort::parse(asked).filter(|e| takes.contains(e)) {
        Some(effort) => Ok(effort),
        None if takes.is_empty() => Err(format!("no effort \"{asked}\" for model {}: it takes no effort setting", endpoint.model)),
        None => {
            let names: Vec<&str> = takes.iter().map(|e| e.as_str()).collect();
            Err(format!("no effort \"{asked}\" for model {}: choose one of {}", endpoint.model, names.join(", ")))
        }
    }
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
    let policy = Policy::new(modes.policy, &settings.permissions, roots);
    policy.set_containment(containment(settings));
    policy
}

/// What the run's sandbox lets the policy allow unasked: whether one
/// confines its commands, and the user's `autoAllowSandboxed`.
fn containment(settings: &Settings) -> Containment {
    Containment { sandboxed: settings.sandbox.enabled, probe: Some(crate::sandbox::can_start), auto_allow_in_default: settings.auto_allow_sandboxed }
}

/// The one gate a front end's runs go through: the settings' policy in
/// `mode` over the workspace's roots, asking `prompter`, with the
/// project's local allow rules only when `rules_in_project`.
pub fn gate<P: Prompter>(settings: &Settings, mode: Option<PermissionMode>, workspace: &Workspace, prompter: Option<P>, rules_in_project: bool) -> Gate<P> {
    let policy = policy(settings, Modes::new(settings, mode), workspace.roots());
    let project_rules: Arc<dyn ProjectRules> =
        if rules_in_project { Arc::new(crate::settings::LocalAllowRules(workspace.root().to_path_buf())) } else { Arc::new(NoProjectRules) };
    Gate::new(policy, prompter, project_rules)
}

/// The hooks the settings configure. The project's hooks run only when
/// `consent` holds the user's approval of exactly these hooks; the problems
/// say what was left out and why.
pub fn hooks(settings: &Settings, root: &Path, consent: Option<&ConsentStore>) -> (Hooks, Vec<String>) {
    Hooks::from_layers(&settings.hooks, settings.child_env(), root, consent)
}

/// The sandbox a run's shell commands run in with these settings
/// (bubblewrap on Linux), masking the existing paths the read-deny rules
/// cover; or why there is none ([`Availability::notice`] says it to the
/// user once per run).
pub fn sandbox(settings: &Settings, roots: &[PathBuf]) -> Availability {
    sandbox_with(settings, roots, Arc::new(Network::new(settings.sandbox.network.clone())))
}

/// [`sandbox`], with the run's network lists (which `web_fetch` shares).
fn sandbox_with(settings: &Settings, roots: &[PathBuf], network: Arc<Network>) -> Availability {
    // The masks depend on the rules only, not on the mode; they are found
    // as each command starts, so files made since the last one are covered.
    let policy = Arc::new(Policy::new(PermissionMode::Default, &settings.permissions, roots));
    let edits = Arc::clone(&policy);
    let denies = crate::sandbox::Denies {
        read: Arc::new(move || policy.read_denied_paths()),
        edit: Arc::new(move || edits.edit_denied_paths()),
    };
    crate::sandbox::for_run(&settings.sandbox, denies, network)
}

/// What a run's shell commands get in their environment: the settings'
/// `env`, and git's code-running keys set to harmless values above every
/// config file ([`crate::sandbox::git::config_overrides`]), so no `git`
/// a command runs, in the sandbox or not, runs a repository's fsmonitor,
/// hooks, pager, editor, `!` aliases, filters or drivers.
pub fn shell_env(settings: &Settings, roots: &[PathBuf]) -> crate::environment::ChildEnv {
    let mut env = settings.child_env();
    // The workspace's own aliases, filters and drivers too, read again as
    // each command starts: what an earlier command or edit of the run
    // added to a config file (one the user let it write, or any, without
    // a sandbox) is as harmless to the next one.
    let roots = roots.to_vec();
    env.per_child = Some(crate::environment::PerChild(Arc::new(move |set: &mut Vec<(String, String)>| {
        let own = crate::sandbox::git::repository_overrides(&roots);
        crate::sandbox::git::config_overrides(set, &own);
    })));
    env
}

/// A run id for a front end that has none of its own (the terminal, an
/// ACP prompt): the time it started, to the millisecond.
pub fn new_run_id() -> String {
    format!("run-{}", chrono::Local::now().format("%Y%m%d-%H%M%S%3f"))
}


/// Which MCP servers a front end's runs get: the user's, the project's
/// the user approved (or `approve` names: `NAME` or `all`), and the
/// servers the front end brings (an ACP client's `mcpServers`: the user
/// configured them there, so they need no consent).
#[derive(Default)]
pub struct McpServers {
    pub approve: Vec<String>,
    pub front_end: Vec<crate::mcp::config::ServerConfig>,
}

/// Where the `code_intel` tool's answers come from.
pub enum CodeIntelFrom {
    /// The editor answers from its own language servers.
    Editor(Arc<dyn CodeIntel>),
    /// The servers of `lspServers`, started by Tandem when first needed;
    /// `approved` names project servers approved on the command line.
    LanguageServers { approved: Vec<String> },
    /// No `code_intel` tool.
    None,
}

/// What a front end brings, once, to the host of its workspace: only
/// what is its own.
pub struct FrontEnd {
    /// The workspace as the front end sees it: its editor sink.
    pub workspace: Arc<Workspace>,
    /// The settings, kept current by the front end (the editor's change
    /// while it runs, then [`Host::settings_changed`]; the others are read
    /// once); each run reads them.
    pub settings: Arc<RwLock<Settings>>,
    /// How it asks the user about a call (`None`: nobody can answer, so
    /// an ask is a denial that tells the model how to get the permission).
    /// The host decides; the prompter only asks.
    pub prompter: Option<Arc<dyn Prompter>>,
    /// The permission mode it starts in (a command-line flag), over the
    /// settings' `permissionMode`; [`Host::set_mode`] changes it.
    pub mode: Option<PermissionMode>,
    /// "Always allow in this project" saves the rules in
    /// `.tandem/settings.local.json` (`false`: the front end offers no
    /// such answer, or saves nothing).
    pub rules_in_project: bool,
    /// The hooks the user consented to ([`hooks`]; the front end asks for
    /// the consent). Shared: a front end that re-reads the settings swaps them.
    pub hooks: SharedHooks,
    /// `None`: no MCP servers (the demo, one `tandem tool` call).
    pub mcp: Option<McpServers>,
    pub code_intel: CodeIntelFrom,
    /// Save threads and checkpoints in the user's data folder (`false`:
    /// a throwaway run such as the demo's).
    pub record: bool,
}

/// What the runs of one workspace share, built once per front-end session
/// ([`Host::open`]): the settings, the hooks, the MCP and language
/// servers, the executor every call passes through (wired here, once),
/// the saved threads and the checkpoints. [`Host::run`] gives each run
/// the rest, ready to drive.
pub struct Host {
    settings: Arc<RwLock<Settings>>,
    /// The one permission gate of every run: the policy built from the
    /// settings and the front end's mode, asking through its prompter.
    gate: Arc<Gate<Arc<dyn Prompter>>>,
    /// The front end's permission mode over the settings' ([`Host::set_mode`]).
    mode: std::sync::Mutex<Option<PermissionMode>>,
    /// The threads of the workspace's runs, each checked out by one run
    /// at a time, here and across processes ([`Host::start`]).
    threads: Arc<Threads>,
    workspace: Arc<Workspace>,
    hooks: SharedHooks,
    executor: Executor,
    mcp: Option<Arc<McpManager>>,
    language_servers: Option<Arc<LanguageServers>>,
    store: Option<ThreadStore>,
    checkpoints: Option<Arc<Checkpoints>>,
    /// The session's background tasks: they outlive the run that started
    /// them and end with the session ([`Host::shutdown`], or the host dropped).
    tasks: Arc<TaskRegistry>,
}

/// A run's event stream made by hand: for a front end's tests of how it
/// forwards the events and reaches the questions.
#[cfg(test)]
pub(crate) fn event_channel() -> (EventSender, tokio::sync::mpsc::UnboundedReceiver<RunEvent>) {
    crate::agent::event_channel()
}

/// Which thread a run continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadChoice {
    New,
    /// A new thread with this id: for a front end that names the thread
    /// before the host exists (an ACP session's id is its thread's).
    NewWithId(String),
    /// The most recent thread of this workspace.
    Continue,
    Resume(String),
}

/// A new thread id, for [`ThreadChoice::NewWithId`].
pub fn new_thread_id() -> String {
    crate::thread::new_thread_id()
}

/// What a front end brings to one run.
#[derive(Default)]
pub struct RunParts {
    /// The front end's id for the run (the editor's, which tags its
    /// edits); `None`: a new one ([`new_run_id`]).
    pub run_id: Option<String>,
    /// The run runs no shell command (`tandem tool` of a tool that runs
    /// none): the sandbox is not probed and the repositories' git
    /// configuration not read, which is most of such a process's start-up;
    /// a command it tried anyway would be refused.
    pub no_shell: bool,
    /// Context placed before the prompt (the editor's selection and
    /// diagnostics, an ACP client's resources).
    pub context: Option<String>,
    /// What the user attached, as they named it ([`RunRequest::attachments`]).
    pub attachments: Vec<String>,
    /// The prompt's images ([`RunRequest::images`]).
    pub images: Vec<crate::model::Image>,
    /// The run happens inside an editor (said in the system prompt).
    pub in_editor: bool,
    /// Compact the thread before the run (`--compact`).
    pub compact: bool,
    /// Model turns allowed, over the settings' `maxTurns`.
    pub max_turns: Option<usize>,
    /// The run's loop starts once this is done (or the run is cancelled):
    /// for a front end that must see its answer read by the client before
    /// the run sends anything (eglot, `"wait": false`).
    pub start_after: Option<StartGate>,
    /// The workspace view the run's edits go through (the LSP tags each
    /// run's); `None`: the host's.
    pub workspace: Option<Arc<Workspace>>,
    /// The permission mode the front end asks for (a command-line flag,
    /// an ACP session's mode), over the settings' `permissionMode`.
    pub mode: Option<PermissionMode>,
    /// Who answers `exit_plan_mode` (`None`: nobody can).
    pub plan_review: Option<Arc<dyn PlanReview>>,
    /// The front end answers the run's questions in its events
    /// ([`RunEvent::Question`], told with [`QuestionTurns::reached`]):
    /// its prompter and plan review ask once it has reached them there.
    pub questions_in_stream: bool,
    pub cancel: CancellationToken,
    /// Another of the provider's models ([`model_choices`]); `None`: the settings'.
    pub model: Option<String>,
    /// The effort the front end asks for (an ACP session's option), over
    /// the settings' `effort`.
    pub effort: Option<String>,
    /// The model itself, instead of the one the settings name (the demo's
    /// scripted model).
    pub provider: Option<Box<dyn Provider>>,
    /// The run's plan file, chosen ahead (the demo's script names it);
    /// `None`: plan mode makes one when it starts.
    pub plan_file: Option<PathBuf>,
    /// How the front end names a file in the edits it lists (an editor's
    /// URI): given, the thread keeps the run's edits so named, with their
    /// summary (an editor's transcript shows them after a window reload);
    /// `None`: the thread keeps the run's checkpoint alone.
    pub file_names: Option<FileNames>,
    /// A review run: the read-only tools and `report_finding`, nothing
    /// that changes a file or runs a command; its findings are kept as
    /// the thread's when it ends.
    pub review: bool,
}

/// A review run's executor: the same gate and hooks over the tools that
/// only read (sub-agents' `explore` set) and `report_finding`.
fn review_executor(executor: &Executor) -> Executor {
    let registry = executor.registry().filtered(|tool| tool.only_reads());
    executor.with_registry(registry).with_tool(Arc::new(crate::tools::builtin::report_finding::ReportFinding))
}

/// See [`Host::edits_summary`].
fn summary_of(workspace: &Workspace, changed: &[ChangedFile]) -> Option<String> {
    let items: Vec<EditSummaryItem> = changed.iter().filter(|c| !c.effect.untried).map(|c| EditSummaryItem::of_effect(&c.effect, workspace.display_path(&c.effect.path))).collect();
    edits_summary(&items)
}

/// See [`RunParts::file_names`].
pub type FileNames = Arc<dyn Fn(&Path) -> String + Send + Sync>;

/// The run's edits as a front end lists them (the `tandem.ask` answer's
/// `edits`): each file named by `name`, in the order the calls changed
/// them, each with its call unless a command changed it; a change refused
/// before it was tried (`untried`) is none of them.
pub fn run_edits(changed: &[ChangedFile], name: &dyn Fn(&Path) -> String) -> Vec<RunEdit> {
    changed
        .iter()
        .filter(|c| !c.effect.untried)
        .map(|c| RunEdit { tool_call_id: c.effect.by_command.is_none().then(|| c.call_id.clone()), ..RunEdit::new(name(&c.effect.path), &c.effect) })
        .collect()
}

/// What a run waits for before its loop starts ([`RunParts::start_after`]).
pub type StartGate = futures::future::BoxFuture<'static, ()>;

/// A run ready to drive: the model, its context configuration, the
/// executor, the tool context (scope, sandbox, checkpoint recorder, shell
/// environment), the request (prompt, hooks, turn limit, sandbox notice)
/// and what ends it. A front end may add to the request what is its own
/// (the editor's selection, `in_editor`, `--compact`).
pub struct ReadyRun {
    pub provider: Box<dyn Provider>,
    pub config: ContextConfig,
    pub executor: Executor,
    pub ctx: ToolContext,
    pub request: RunRequest,
    pub end: RunEnd,
}

/// A run's tool context without a model (the demo brings its own, `tandem
/// tool` runs one call): see [`Host::prepare`].
pub struct PreparedRun {
    pub ctx: ToolContext,
    /// Said once per run when shell commands run unconfined.
    pub sandbox_notice: Option<String>,
    pub end: RunEnd,
}

/// The provider, its context configuration and its endpoint.
fn model(settings: &Settings, model: Option<&str>) -> Result<(Box<dyn Provider>, ContextConfig, Endpoint), String> {
    let (provider, endpoint) = resolve_provider(settings, model)?;
    let config = ContextConfig::from_lookup(provider.model(), |name| settings.lookup(name))?;
    Ok((provider, config, endpoint))
}

impl Host {
    /// The host of a front end's workspace. The MCP servers are built, not
    /// started: the front end starts them when it can show their news
    /// (and ask about project servers). The problems name unusable
    /// `lspServers` entries; the runs go on without them.
    pub fn open(front: FrontEnd) -> (Host, Vec<String>) {
        let settings = front.settings.reading().clone();
        let root = front.workspace.root().to_path_buf();
        let mcp = front.mcp.map(|servers| {
            let mut config = crate::mcp::config::McpConfig::load(dirs::home_dir().as_deref(), &root);
            config.servers.extend(servers.front_end);
            McpManager::new(config, &root, Approvals::from_command_line(servers.approve))
        });
        let (code_intel, language_servers, problems) = match front.code_intel {
            CodeIntelFrom::Editor(code_intel) => (Some(code_intel), None, Vec::new()),
            CodeIntelFrom::LanguageServers { approved } => {
                let approvals = Approvals { store: ConsentStore::for_user(), command_line: approved };
                let timeouts = settings.timeouts;
                let (servers, problems) = LanguageServers::configure(&root, &settings.lsp_servers, approvals, timeouts.code_intel(), timeouts.diagnostics());
                (servers.clone().map(|s| s as Arc<dyn CodeIntel>), servers, problems)
            }
            CodeIntelFrom::None => (None, None, Vec::new()),
        };
        let mut registry = ToolRegistry::builtin();
        if let Some(mcp) = &mcp {
            registry.add_source(Arc::clone(mcp) as Arc<dyn ToolSource>);
        }
        // A call's question waits its turn in its run's events.
        let prompter = front.prompter.map(|p| Arc::new(questions::InTurn(p)) as Arc<dyn Prompter>);
        let gate = Arc::new(gate(&settings, front.mode, &front.workspace, prompter, front.rules_in_project));
        let hooks = Arc::clone(&front.hooks) as Arc<dyn crate::tools::ToolHooks>;
        let mut executor = Executor::new(registry).with_gate(Arc::clone(&gate) as Arc<dyn PermissionGate>).with_hooks(hooks);
        if let Some(code_intel) = code_intel {
            executor = crate::tools::builtin::code_intel::install(executor, code_intel);
        }
        let store = if front.record { ThreadStore::for_workspace(&root) } else { None };
        // Each run's checkpoint goes beside its thread, for `undo`; the
        // runs share the last look at the tree.
        let checkpoints = store.as_ref().map(|store| Checkpoints::beside(store, front.workspace.roots()));
        let threads = Arc::new(Threads::new(root.clone(), store.clone()));
        let host = Host {
            gate,
            mode: std::sync::Mutex::new(front.mode),
            threads,
            settings: front.settings,
            workspace: front.workspace,
            hooks: front.hooks,
            executor,
            mcp,
            language_servers,
            store,
            checkpoints,
            tasks: Arc::new(TaskRegistry::new()),
        };
        (host, problems)
    }

    /// The settings as they are now.
    pub fn settings(&self) -> Settings {
        self.settings.reading().clone()
    }

    /// The front end changed the settings it shares with the host: the
    /// permission policy decides by the new rules and mode from now on.
    pub fn settings_changed(&self) {
        let settings = self.settings();
        let mode = *self.mode.locked();
        self.gate.policy().set_mode(Modes::new(&settings, mode).policy);
        self.gate.policy().set_rules(&settings.permissions);
        self.gate.policy().set_containment(containment(&settings));
    }

    /// The front end's permission mode changed (an ACP session's mode).
    pub fn set_mode(&self, mode: Option<PermissionMode>) {
        *self.mode.locked() = mode;
        self.gate.policy().set_mode(Modes::new(&self.settings(), mode).policy);
    }

    /// The gate every call passes, for a front end that has the user
    /// review what is not a tool call (an undo's restoring edits).
    pub fn gate(&self) -> Arc<dyn PermissionGate> {
        Arc::clone(&self.gate) as Arc<dyn PermissionGate>
    }

    /// The run's changed files worded as every front end words them ("2
    /// edits: 1 applied, 1 partly applied. Changed: …"), `None` for none.
    pub fn edits_summary(&self, changed: &[ChangedFile]) -> Option<String> {
        summary_of(&self.workspace, changed)
    }

    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    /// The context files the user attached to a prompt give the model
    /// ([`attachments::context`]), through this host's gate.
    pub async fn attachments_context(&self, attachments: &[attachments::Attachment]) -> Option<String> {
        attachments::context(&self.workspace, &*self.gate, attachments).await
    }

    /// The attached images, taken out of `attachments`
    /// ([`attachments::take_images`]), through this host's gate.
    pub async fn attached_images(&self, attachments: &mut Vec<attachments::Attachment>) -> Result<Vec<crate::model::Image>, String> {
        attachments::take_images(&self.workspace, &*self.gate, attachments).await
    }

    /// Give the `tool_call` events of a thread's past (`thread::transcript`,
    /// which keeps only each call's input) the `kind` and `summary` their
    /// live events had, so a view reopened on the thread shows a call's
    /// files and command as it did while the run went on. Worked out again
    /// by this host's tools from the input the thread kept; a call they
    /// cannot prepare now (a tool gone or not loaded, an input cut short)
    /// stays as it was.
    pub fn describe_past_calls<'a>(&self, events: impl IntoIterator<Item = &'a mut serde_json::Value>) {
        let ctx = ToolContext::new(Arc::clone(&self.workspace));
        for event in events {
            if event["type"] != "tool_call" || event.get("kind").is_some() {
                continue;
            }
            let call = crate::tools::ToolCall {
                id: event["id"].as_str().unwrap_or_default().to_string(),
                name: event["name"].as_str().unwrap_or_default().to_string(),
                input: event["input"].clone(),
                input_error: None,
            };
            let Ok(prepared) = self.executor.prepare(&call, &ctx) else { continue };
            let Ok(kind) = serde_json::to_value(&prepared.traits.kind) else { continue };
            event["kind"] = kind;
            event["summary"] = serde_json::Value::String(prepared.traits.summary.clone());
        }
    }

    /// The executor every run's calls pass through.
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    pub fn mcp(&self) -> Option<&Arc<McpManager>> {
        self.mcp.as_ref()
    }

    /// The saved threads (`None`: no data folder, or a throwaway host).
    pub fn store(&self) -> Option<&ThreadStore> {
        self.store.as_ref()
    }

    /// Where each run's checkpoint goes (`None`: no data folder).
    pub fn checkpoints(&self) -> Option<&Arc<Checkpoints>> {
        self.checkpoints.as_ref()
    }

    /// The workspace's threads (listing, transcripts, forgetting; runs
    /// check them out through [`Host::start`]).
    pub fn threads(&self) -> &Arc<Threads> {
        &self.threads
    }

    /// Open a thread for later runs without running it (an ACP session
    /// opens on one): a new one (saved when there is a data folder), the
    /// most recent, or the one named, kept idle. Its id.
    pub fn open_thread(&self, choice: &ThreadChoice) -> Result<String, String> {
        let id = match choice {
            ThreadChoice::New | ThreadChoice::NewWithId(_) => {
                let id = match choice {
                    ThreadChoice::NewWithId(id) if crate::thread::valid_thread_id(id) => id.clone(),
                    ThreadChoice::NewWithId(id) => return Err(format!("\"{id}\" is not a valid thread id")),
                    _ => new_thread_id(),
                };
                let mut thread = Thread::new(id, self.workspace.root().to_path_buf());
                match &self.store {
                    Some(store) => {
                        if let Err(err) = store.create(&mut thread) {
                            tracing::warn!(%err, "cannot save this conversation; it is kept in memory only");
                        }
                    }
                    None => tracing::warn!("no data folder (set XDG_DATA_HOME): this conversation is not saved"),
                }
                let id = thread.id.clone();
                self.threads.check_in(thread);
                return Ok(id);
            }
            ThreadChoice::Continue => self.latest_thread().map_err(|e| e.to_string())?,
            ThreadChoice::Resume(id) => id.clone(),
        };
        // Read once, without its run lock (another process may be running
        // it: a run checks it out later), so a thread that cannot be read
        // is said now.
        match self.threads.transcript(&id) {
            Ok(_) | Err(crate::thread::threads::ThreadError::Busy { .. }) => Ok(id),
            Err(err) => Err(err.to_string()),
        }
    }

    /// One of the user's runs of `prompt`, ready to drive: the provider
    /// the settings name, its context configuration, and [`Host::prepare`]'s
    /// tool context. `Err`: no model provider is configured (the message
    /// names what to set).
    fn run(&self, prompt: impl Into<String>, mut parts: RunParts, checkpoint: Option<(String, String)>) -> Result<ReadyRun, String> {
        let mut settings = self.settings();
        if let Some(effort) = parts.effort.take() {
            settings.effort = Some(effort);
        }
        let (provider, config, endpoint) = match parts.provider.take() {
            Some(provider) => {
                let config = ContextConfig::from_lookup(provider.model(), |name| settings.lookup(name))?;
                (provider, config, None)
            }
            None => {
                let (provider, config, endpoint) = model(&settings, parts.model.as_deref())?;
                (provider, config, Some(endpoint))
            }
        };
        let (mut context, in_editor, compact, max_turns) = (parts.context.clone(), parts.in_editor, parts.compact, parts.max_turns);
        // The thread's runs undone or redone since the model last heard
        // (from any front end, by any process): said before the prompt,
        // so the model reads the files again instead of trusting its
        // history, and kept in the thread with the message.
        if let (Some(checkpoints), Some((thread_id, _))) = (&self.checkpoints, &checkpoint) {
            if let Some(news) = checkpoints.restores_untold(thread_id, &|path: &Path| self.workspace.display_path(path)) {
                context = Some(match context {
                    Some(context) => format!("{news}\n\n{context}"),
                    None => news,
                });
            }
        }
        let attachments = std::mem::take(&mut parts.attachments);
        let images = std::mem::take(&mut parts.images);
        let checkpoint_ids = checkpoint.clone();
        let review = parts.review;
        let mut prepared = self.prepare_with(&settings, parts, checkpoint);
        // A run's background tasks are the session's.
        prepared.ctx.tasks = Some(Arc::clone(&self.tasks) as Arc<dyn Tasks>);
        let request = RunRequest {
            prompt: prompt.into(),
            context,
            attachments,
            images,
            in_editor,
            compact,
            max_turns: max_turns.or(settings.max_turns),
            // The prompt and stop hooks are the user's run's (sub-agents' requests have none).
            hooks: Some(Arc::clone(&self.hooks)),
            sandbox_notice: prepared.sandbox_notice,
            endpoint,
            run_id: checkpoint_ids.map(|(_, run_id)| run_id),
            ..RunRequest::default()
        };
        let executor = match review {
            true => review_executor(&self.executor),
            false => self.executor.clone(),
        };
        Ok(ReadyRun { provider, config, executor, ctx: prepared.ctx, request, end: prepared.end })
    }

    /// The model the settings name (or `model`, another of the provider's)
    /// and its context configuration, for work on a thread outside a run
    /// (compacting it).
    pub fn model(&self, model: Option<&str>) -> Result<(Box<dyn Provider>, ContextConfig), String> {
        self::model(&self.settings(), model).map(|(provider, config, _)| (provider, config))
    }

    /// A run's tool context: plan mode from its modes, the sandbox, the
    /// checkpoint recorder on its workspace, the environment shell
    /// commands see. The one place it is built.
    pub fn prepare(&self, parts: RunParts) -> PreparedRun {
        self.prepare_with(&self.settings(), parts, None)
    }

    fn prepare_with(&self, settings: &Settings, parts: RunParts, checkpoint: Option<(String, String)>) -> PreparedRun {
        let workspace = parts.workspace.unwrap_or_else(|| Arc::clone(&self.workspace));
        let modes = Modes::new(settings, parts.mode);
        // The session's "allow HOST" answers hold in every run; the gate asks them.
        let asker = Arc::clone(&self.gate) as Arc<dyn crate::tools::ports::network::HostAsker>;
        let network = Arc::new(Network::in_session(settings.sandbox.network.clone(), self.gate.host_grants(), Some(asker)));
        let sandbox = match parts.no_shell {
            true => Availability::Ready(Arc::new(crate::sandbox::NoCommands)),
            false => sandbox_with(settings, workspace.roots(), Arc::clone(&network)),
        };
        let child_env = match parts.no_shell {
            true => crate::environment::ChildEnv::default(),
            false => shell_env(settings, workspace.roots()),
        };
        let mut scope = RunScope::new(modes.policy, parts.plan_review);
        scope.review = parts.review;
        scope.questions_in_stream = parts.questions_in_stream;
        if let Some(file) = parts.plan_file {
            scope.plan.locked().file = Some(file);
        }
        if modes.run == PermissionMode::Plan {
            start_in_plan_mode(&scope, workspace.root());
        }
        // The run's checkpoint, beside its thread: `undo` takes it back.
        let recorder = match (&self.checkpoints, checkpoint) {
            (Some(checkpoints), Some((thread_id, run_id))) => Some(checkpoints.record(&thread_id, &run_id)),
            _ => None,
        };
        let workspace = match &recorder {
            Some(recorder) => Arc::new(workspace.with_recorder(Checkpoints::recorder_for(recorder))),
            None => workspace,
        };
        let ctx = ToolContext {
            cancel: parts.cancel,
            child_env: Arc::new(child_env),
            sandbox: sandbox.sandbox(),
            network,
            run: Arc::new(scope),
            ..ToolContext::new(Arc::clone(&workspace))
        };
        PreparedRun { ctx, sandbox_notice: sandbox.notice(), end: RunEnd { recorder, workspace } }
    }

    /// The session's background tasks, for a front end that shows them
    /// and lets the user stop one ([`TaskRegistry::stop_for_user`]).
    pub fn tasks(&self) -> &Arc<TaskRegistry> {
        &self.tasks
    }

    /// End the session: its background tasks (each and every process
    /// they started), and the servers the host started (MCP, language servers).
    pub async fn shutdown(&self) {
        self.tasks.stop_all().await;
        if let Some(mcp) = &self.mcp {
            mcp.shutdown().await;
        }
        if let Some(servers) = &self.language_servers {
            servers.shutdown().await;
        }
    }
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
