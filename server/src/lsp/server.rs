//! The [`LanguageServer`] implementation: lifecycle, document sync, the
//! `tandem.*` commands and code actions. Handlers stay thin: documents go
//! to `documents.rs`, edits to `editor.rs`, runs to `runs/` (the registry, `tandem.ask`, the event forwarder).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::client::{methods, request_with_timeout, ClientLink, TowerClient};
use super::clients;
use super::code_actions;
use super::commands::{ASK_COMMAND, CANCEL_COMMAND, COMPACT_COMMAND, FORGET_COMMAND, PROVIDER_COMMAND, SEND_REVIEW_COMMAND, STOP_TASK_COMMAND, TASKS_COMMAND, THREADS_COMMAND, TRANSCRIPT_COMMAND, TRUST_COMMAND};
use super::config::{Settings, SettingsFiles, SettingsLayers};
use super::mcp::{self as mcp_front, MCP_STATUS_COMMAND};
use super::documents::{uri_to_path, Documents};
use super::editor::{EditCapabilities, LspEditor};
use super::hook_consent::HookConsent;
use super::position::PositionEncoding;
use super::runs::{self, AskArgs, AskError, CancelArgs, RunEnv, Runs, ThreadArgs};
use super::undo::{self, UndoArgs, REDO_COMMAND, UNDO_COMMAND};
use crate::sync::{MutexExt, RwLockExt};
use crate::host::Threads;
use crate::host::{CodeIntelFrom, FrontEnd, Host, McpServers};
use crate::workspace::Workspace;

/// `tandem.provider`'s answer: the endpoint a run would use now (or why
/// there is none), the models a front end may offer to switch to on that
/// provider and the efforts each takes, and the permission mode runs start in, as the settings decide
/// it (a project's file may have made it stricter than the editor's). The
/// provider is built once, to know it can be (the panel asks often).
fn provider_answer(settings: &crate::settings::Settings) -> Value {
    let mut answer = match crate::host::endpoint(settings) {
        Ok(endpoint) => {
            let models = crate::host::model_choices(&endpoint);
            // Per offered model, the efforts it takes (none: left out), so
            // the panel's effort picker follows its model picker.
            let efforts: serde_json::Map<String, Value> = models
                .iter()
                .filter_map(|model| {
                    let takes = crate::host::model_efforts(settings, &endpoint, model);
                    (!takes.is_empty()).then(|| (model.clone(), json!(takes.iter().map(|e| e.as_str()).collect::<Vec<_>>())))
                })
                .collect();
            let mut answer = serde_json::to_value(endpoint).unwrap_or_default();
            if let Some(fields) = answer.as_object_mut() {
                fields.insert("models".into(), json!(models));
                fields.insert("efforts".into(), Value::Object(efforts));
            }
            answer
        }
        Err(error) => json!({"error": error}),
    };
    if let Some(fields) = answer.as_object_mut() {
        fields.insert("permissionMode".into(), json!(settings.permission_mode().as_str()));
    }
    answer
}

/// Shown when `permissionMode` is `bypassPermissions`.
pub const BYPASS_WARNING: &str =
    "permissionMode is bypassPermissions: Tandem edits files and runs every command without asking. Deny rules still apply.";

/// Marks a reported settings problem that is an error (shown with
/// `MessageType::ERROR`), not a warning.
const ERROR_MARK: &str = "\u{0}error:";
/// How long `shutdown` waits for the cancelled runs to wind down.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The argument object of `tandem.dismissFinding`.
#[derive(Debug, serde::Deserialize)]
struct DismissArgs {
    key: String,
}

/// The argument object of `tandem.stopTask`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskArgs {
    task_id: String,
}

/// What exists once `initialize` told us the roots and capabilities.
struct Ready {
    workspace: Arc<Workspace>,
    editor: Arc<LspEditor>,
    /// What the session's runs share: hooks, MCP and language servers,
    /// the executor, the checkpoints.
    host: Arc<crate::host::Host>,
    work_done_progress: bool,
    configuration: bool,
    /// Asks the user about the project's hooks.
    hook_consent: Arc<HookConsent>,
    /// See [`clients::answer_goes_alone`].
    answer_goes_alone: bool,
    /// Undos and redos one at a time.
    undoing: tokio::sync::Mutex<()>,
    /// `textDocument/inlineCompletion`.
    inline: Arc<super::inline::InlineCompletions>,
    /// Review findings as diagnostics.
    findings: Arc<super::findings::Findings>,
}

pub struct Backend {
    link: Arc<dyn ClientLink>,
    documents: Arc<Documents>,
    settings: Arc<RwLock<Settings>>,
    layers: Mutex<SettingsLayers>,
    /// The workspace's settings files, known once `initialize` gave the roots.
    settings_files: OnceLock<SettingsFiles>,
    /// The settings problems last reported, so each is shown once.
    reported_problems: Mutex<Vec<String>>,
    /// Settings files whose permission rules cannot be read: while there
    /// are any, asks are refused (they are read again at every ask, so a
    /// fixed file takes effect at once).
    broken_settings: Mutex<Vec<String>>,
    /// The hooks from the settings, rebuilt when they change.
    hooks: crate::host::SharedHooks,
    /// `initialized` arrived: the client accepts notifications now.
    client_ready: std::sync::atomic::AtomicBool,
    ready: OnceLock<Ready>,
    runs: Arc<Runs>,
    /// Bumped by every pushed configuration, so an older pull's late
    /// answer does not overwrite a newer push.
    configuration_generation: AtomicU64,
    lifecycle: Arc<super::Lifecycle>,
    /// Keeps the editor's idea of whether we serve inline completions in
    /// step with the settings.
    inline_provider: super::inline_provider::InlineProvider,
}

impl Backend {
    pub fn new(client: Client) -> Self {
        Self::with_link(Arc::new(TowerClient::new(client)))
    }

    pub fn with_link(link: Arc<dyn ClientLink>) -> Self {
        Backend {
            inline_provider: super::inline_provider::InlineProvider::new(Arc::clone(&link)),
            link,
            documents: Arc::new(Documents::default()),
            settings: Arc::new(RwLock::new(Settings::default())),
            layers: Mutex::new(SettingsLayers::default()),
            settings_files: OnceLock::new(),
            reported_problems: Mutex::new(Vec::new()),
            broken_settings: Mutex::new(Vec::new()),
            hooks: crate::host::shared_hooks(crate::host::Hooks::default()),
            client_ready: std::sync::atomic::AtomicBool::new(false),
            ready: OnceLock::new(),
            runs: Arc::new(Runs::default()),
            configuration_generation: AtomicU64::new(0),
            lifecycle: Arc::default(),
        }
    }

    /// Share the connection's lifecycle with the transport: when the client
    /// goes away, the active run is cancelled (its shell commands are
    /// stopped, no further model request is made) and new asks are refused.
    pub fn with_lifecycle(mut self, lifecycle: Arc<super::Lifecycle>) -> Self {
        let runs = Arc::clone(&self.runs);
        let gone = lifecycle.client_gone.clone();
        tokio::spawn(async move {
            gone.cancelled().await;
            for id in runs.active_ids() {
                tracing::info!(run = %id, "the client went away; cancelling the run");
                runs.cancel(&id);
            }
        });
        self.documents.follow(Arc::clone(&lifecycle.sync_order));
        self.lifecycle = lifecycle;
        self
    }

    fn settings(&self) -> Settings {
        self.settings.reading().clone()
    }

    /// Re-read the settings files and overlay the editor's layers. A
    /// problem (a bad field) is shown to the user once, and never stops the
    /// server; a file whose permission rules cannot be read is shown as an
    /// error and refuses asks until it is fixed.
    fn update_settings(&self, update: impl FnOnce(&mut SettingsLayers)) {
        let mut layers = self.layers.locked();
        update(&mut layers);
        let (settings, problems) = layers.resolve_with_files(self.settings_files.get());
        drop(layers);
        let (fatal, problems): (Vec<_>, Vec<_>) = problems.into_iter().partition(|p| p.is_fatal());
        let fatal: Vec<String> = fatal.iter().map(ToString::to_string).collect();
        *self.broken_settings.locked() = fatal.clone();
        let mut notices: Vec<String> = fatal.iter().map(|f| format!("{ERROR_MARK}{f}")).collect();
        notices.extend(problems.iter().filter(|p| !p.needs_trust()).map(ToString::to_string));
        // What an untrusted folder's files asked for, in one message with how to trust it.
        notices.extend(crate::settings::trust_notice(&problems));
        if let Some(root) = self.settings_files.get().and_then(|f| f.project.parent()).and_then(|p| p.parent()) {
            let consent = crate::consent::ConsentStore::for_user();
            let (hooks, hook_problems) = crate::host::hooks(&settings, root, consent.as_ref());
            *self.hooks.writing() = Arc::new(hooks);
            notices.extend(hook_problems);
        }
        if settings.permission_mode() == crate::tools::permission_mode::PermissionMode::BypassPermissions {
            notices.push(BYPASS_WARNING.to_string());
        }
        let inline_enabled = settings.inline_completions.enabled;
        *self.settings.writing() = settings;
        self.inline_provider.settings_changed(inline_enabled, self.client_ready.load(Ordering::SeqCst));
        if let Some(ready) = self.ready.get() {
            // The permission gate decides by the new rules and mode.
            ready.host.settings_changed();
        }
        self.report_problems(notices);
    }

    fn report_problems(&self, problems: Vec<String>) {
        // Before `initialized` the client may not take notifications yet;
        // `initialized` reports them.
        if !self.client_ready.load(Ordering::SeqCst) {
            return;
        }
        let mut reported = self.reported_problems.locked();
        if *reported == problems {
            return;
        }
        *reported = problems.clone();
        drop(reported);
        if problems.is_empty() {
            return;
        }
        for problem in &problems {
            tracing::warn!("settings: {problem}");
        }
        let (errors, warnings): (Vec<&String>, Vec<&String>) = problems.iter().partition(|p| p.starts_with(ERROR_MARK));
        let mut messages = Vec::new();
        if !errors.is_empty() {
            let errors: Vec<&str> = errors.iter().map(|e| e.trim_start_matches(ERROR_MARK)).collect();
            messages.push(json!({"type": 1, "message": format!("Tandem: {}", errors.join("\n"))}));
        }
        if !warnings.is_empty() {
            let warnings: Vec<&str> = warnings.iter().map(|w| w.as_str()).collect();
            messages.push(json!({"type": 2, "message": format!("Tandem: {}", warnings.join("\n"))}));
        }
        let link = Arc::clone(&self.link);
        tokio::spawn(async move {
            for message in messages {
                link.notify(methods::SHOW_MESSAGE, message).await;
            }
        });
    }

    /// The error an ask gets while a settings file cannot be read.
    fn broken_settings_error(&self) -> Option<Error> {
        let broken = self.broken_settings.locked();
        if broken.is_empty() {
            return None;
        }
        Some(Error { code: ErrorCode::InvalidRequest, message: format!("Tandem does not run: {}", broken.join("; ")).into(), data: None })
    }

    /// Fetch the `tandem` section of `workspace/configuration`.
    async fn pull_configuration(&self) {
        let Some(ready) = self.ready.get() else { return };
        if !ready.configuration {
            return;
        }
        let params = json!({"items": [{"section": "tandem"}]});
        let timeout = self.settings().timeouts.request();
        let generation = self.configuration_generation.load(Ordering::SeqCst);
        match request_with_timeout(&*self.link, methods::CONFIGURATION, params, timeout).await {
            Ok(_) if self.configuration_generation.load(Ordering::SeqCst) != generation => {
                tracing::debug!("a newer configuration was pushed meanwhile; ignoring the pulled one");
            }
            Ok(Value::Array(mut items)) if !items.is_empty() => {
                let section = items.swap_remove(0);
                self.update_settings(|layers| layers.configuration = section);
            }
            Ok(_) => {}
            Err(err) => tracing::warn!(%err, "workspace/configuration failed"),
        }
    }

    /// `window/workDoneProgress/cancel` (tower-lsp-server has no trait
    /// method for it; registered as a custom method).
    pub async fn work_done_progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        let token = match serde_json::to_value(&params.token) {
            Ok(token) => token,
            Err(_) => return,
        };
        if !self.runs.cancel_progress(&token) {
            tracing::debug!(?token, "progress cancel for no active run");
        }
    }

    fn run_env(&self) -> Result<RunEnv> {
        let ready = self.ready.get().ok_or_else(|| Error {
            code: ErrorCode::ServerError(-32002),
            message: "the server is not initialized".into(),
            data: None,
        })?;
        Ok(RunEnv {
            client: Arc::clone(&self.link),
            documents: Arc::clone(&self.documents),
            workspace: Arc::clone(&ready.workspace),
            editor: Arc::clone(&ready.editor),
            host: Arc::clone(&ready.host),
            runs: Arc::clone(&self.runs),
            settings: self.settings(),
            work_done_progress: ready.work_done_progress,
            answer_goes_alone: ready.answer_goes_alone,
            configuration: ready.configuration,
            findings: Arc::clone(&ready.findings),
        })
    }

    /// `tandem.undo` / `tandem.redo`: a clear error when there is nothing
    /// to take back, the run is still going or its checkpoint is unreadable.
    async fn undo(&self, params: &ExecuteCommandParams, direction: crate::checkpoint::Direction) -> Result<Option<Value>> {
        let args: UndoArgs = match params.arguments.first() {
            None | Some(Value::Null) => UndoArgs::default(),
            Some(_) => first_argument(&params.arguments)?,
        };
        let env = self.run_env()?;
        let Some(ready) = self.ready.get() else { return Err(Error::invalid_request()) };
        match undo::run(&env, &*ready.host.gate(), &ready.undoing, direction, args).await {
            Ok(answer) => Ok(Some(answer)),
            Err(crate::checkpoint::CheckpointError::Invalid(message)) => Err(Error::invalid_params(message)),
            Err(err) => Err(Error { code: ErrorCode::ServerError(-32803), message: err.to_string().into(), data: None }),
        }
    }

    /// `tandem.trust`: the user trusts the workspace's files as they are
    /// now; the settings are read again at once (mode, rules, hooks), and
    /// the answer says what now applies and which files were not read.
    /// The files are read on the blocking pool: the server answers other
    /// requests meanwhile.
    async fn trust(&self) -> Result<Option<Value>> {
        let Some(root) = self.settings_files.get().map(|files| files.root.clone()) else { return Err(Error::invalid_request()) };
        let failed = |message: String| Error { code: ErrorCode::ServerError(-32803), message: message.into(), data: None };
        let folder = root.clone();
        let trusted = tokio::task::spawn_blocking(move || crate::host::trust_folder(&folder))
            .await
            .map_err(|err| failed(format!("trusting the folder stopped: {err}")))?
            .map_err(failed)?;
        self.update_settings(|_| {});
        let items: Vec<String> = trusted.applied.iter().map(|p| format!("{}: {} {}", p.source, p.field, p.message).trim().to_string()).collect();
        let restart = crate::host::needs_new_session(&trusted.applied);
        Ok(Some(json!({"trusted": root, "applied": items, "skipped": trusted.skipped, "restart": restart})))
    }

    fn threads(&self) -> Result<Arc<Threads>> {
        Ok(Arc::clone(self.run_env()?.host.threads()))
    }

    async fn thread_command(&self, params: &ExecuteCommandParams) -> Result<Option<Value>> {
        let busy = |message: String| Error { code: ErrorCode::ServerError(-32803), message: message.into(), data: None };
        match params.command.as_str() {
            THREADS_COMMAND => Ok(Some(runs::threads_answer(&*self.threads()?))),
            TRANSCRIPT_COMMAND => {
                let args: ThreadArgs = first_argument(&params.arguments)?;
                match self.threads()?.transcript(&args.thread_id) {
                    Ok(mut transcript) => {
                        let host = &self.run_env()?.host;
                        if let Some(checkpoints) = host.checkpoints() {
                            checkpoints.mark_transcript(&mut transcript.events);
                        }
                        host.describe_past_calls(transcript.events.iter_mut());
                        Ok(Some(json!({
                        "threadId": args.thread_id,
                        "events": transcript.events,
                        "omitted": transcript.omitted,
                        })))
                    }
                    Err(err @ crate::host::ThreadError::Busy { .. }) => Err(busy(err.to_string())),
                    Err(err) => Err(Error::invalid_params(err.to_string())),
                }
            }
            FORGET_COMMAND => {
                let args: ThreadArgs = first_argument(&params.arguments)?;
                let forgotten = self.threads()?.forget(&args.thread_id).map_err(|e| busy(e.to_string()))?;
                Ok(Some(json!({"threadId": args.thread_id, "forgotten": forgotten})))
            }
            _ => {
                self.update_settings(|_| {});
                let args: ThreadArgs = first_argument(&params.arguments)?;
                match runs::compact(self.run_env()?, &args.thread_id).await {
                    Ok(answer) => Ok(Some(answer)),
                    Err(AskError::InvalidParams(message)) => Err(Error::invalid_params(message)),
                    Err(AskError::Busy(message)) => Err(busy(message)),
                }
            }
        }
    }

    async fn ask(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        self.ask_with(params, false).await
    }

    /// `tandem.ask`, or a review run (`review`).
    async fn ask_with(&self, params: ExecuteCommandParams, review: bool) -> Result<Option<Value>> {
        // The settings files may have changed since the last run; changed
        // project hooks are asked about (a prompt already up is waited for).
        self.update_settings(|_| {});
        if let Some(ready) = self.ready.get() {
            ready.hook_consent.ask_if_needed().await;
        }
        if let Some(error) = self.broken_settings_error() {
            return Err(error);
        }
        let mut args: AskArgs = first_argument(&params.arguments)?;
        args.review = review;
        if self.lifecycle.client_gone.is_cancelled() {
            return Err(Error { code: ErrorCode::ServerError(-32803), message: "the client has gone away".into(), data: None });
        }
        let token = params.work_done_progress_params.work_done_token.and_then(|t| serde_json::to_value(t).ok());
        match runs::ask(self.run_env()?, args, token).await {
            Ok(answer) => Ok(Some(answer)),
            Err(AskError::InvalidParams(message)) => Err(Error::invalid_params(message)),
            Err(AskError::Busy(message)) => {
                Err(Error { code: ErrorCode::ServerError(-32803), message: message.into(), data: None })
            }
        }
    }

    /// `tandem.review`: the scope's prompt, then a review run as `tandem.ask` runs one.
    async fn review(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let Some(ready) = self.ready.get() else { return Err(Error::invalid_request()) };
        let args: super::review::ReviewArgs = first_argument(&params.arguments)?;
        let request = args.request(&ready.workspace).map_err(Error::invalid_params)?;
        let checkpoints = ready.host.checkpoints().cloned();
        let prompt = match super::review::prepare(Arc::clone(&ready.workspace), checkpoints, request).await.map_err(Error::invalid_params)? {
            Ok(prompt) => prompt,
            Err(nothing) => return Ok(Some(nothing)),
        };
        let skipped = super::review::skipped(&prompt);
        let ask = json!({"prompt": prompt.prompt, "threadId": args.thread_id, "wait": args.wait});
        let mut params = params;
        params.arguments = vec![ask];
        let answer = self.ask_with(params, true).await?;
        let mut answer = answer.unwrap_or_default();
        if let Some(fields) = answer.as_object_mut() {
            fields.insert("skipped".into(), skipped);
            if args.wait {
                let thread = fields.get("threadId").and_then(Value::as_str).unwrap_or_default().to_string();
                fields.insert("findings".into(), json!(ready.findings.of_thread(&thread)));
            }
        }
        Ok(Some(answer))
    }

    /// `textDocument/inlineCompletion`, routed by `mod.rs` (tower-lsp-server
    /// has no handler for it). Never an error: see `inline.rs`.
    pub async fn inline_completion(&self, params: InlineCompletionParams) -> Result<Option<InlineCompletionResponse>> {
        let Some(ready) = self.ready.get() else { return Err(Error::invalid_request()) };
        let inline = Arc::clone(&ready.inline);
        Ok(inline.complete(params).await)
    }

    fn cancel(&self, params: &ExecuteCommandParams) -> Result<Option<Value>> {
        let args: CancelArgs = first_argument(&params.arguments)?;
        let cancelled = self.runs.cancel(&args.run_id);
        Ok(Some(json!({"runId": args.run_id, "cancelled": cancelled})))
    }
}

fn first_argument<T: serde::de::DeserializeOwned>(arguments: &[Value]) -> Result<T> {
    let first = arguments.first().ok_or_else(|| Error::invalid_params("expected one argument object"))?;
    serde_json::from_value(first.clone()).map_err(|e| Error::invalid_params(format!("invalid argument: {e}")))
}

/// The workspace roots: every workspace folder, else `rootUri`, else
/// `rootPath`, else the working directory. Roots that do not exist are
/// skipped with a log line.
fn workspace_roots(params: &InitializeParams) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = params
        .workspace_folders
        .iter()
        .flatten()
        .filter_map(|folder| uri_to_path(&folder.uri))
        .collect();
    #[allow(deprecated)]
    if roots.is_empty() {
        if let Some(path) = params.root_uri.as_ref().and_then(uri_to_path) {
            roots.push(path);
        } else if let Some(path) = params.root_path.as_ref() {
            roots.push(PathBuf::from(path));
        }
    }
    roots.retain(|root| {
        let ok = root.is_dir();
        if !ok {
            tracing::warn!(root = %root.display(), "workspace folder does not exist; skipped");
        }
        ok
    });
    if roots.is_empty() {
        if let Ok(cwd) = std::env::current_dir() {
            roots.push(cwd);
        }
    }
    roots
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let capabilities = &params.capabilities;
        let wants_ids = capabilities.experimental.as_ref().and_then(|e| e.get(super::client::REQUEST_IDS_CAPABILITY)) == Some(&Value::Bool(true));
        if wants_ids {
            self.link.tag_requests();
        }
        let encoding = PositionEncoding::negotiate(
            capabilities.general.as_ref().and_then(|g| g.position_encodings.as_deref()),
        );
        self.documents.set_encoding(encoding);
        let roots = workspace_roots(&params);
        if let Some(root) = roots.first() {
            let _ = self.settings_files.set(SettingsFiles::for_workspace(root));
        }
        let init = params.initialization_options.clone().unwrap_or(Value::Null);
        self.update_settings(|layers| layers.init = init);
        let workspace_caps = capabilities.workspace.as_ref();
        let advertised = workspace_caps
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.change_annotation_support.as_ref())
            .is_some();
        let review_path = clients::review_path(params.client_info.as_ref(), advertised);
        tracing::info!(client = ?params.client_info, advertised, ?review_path, "edit review path");
        let edit_capabilities = EditCapabilities { change_annotations: review_path == clients::ReviewPath::Annotation };
        let canonical_roots: Vec<PathBuf> = roots.iter().filter_map(|r| r.canonicalize().ok()).collect();
        let editor = Arc::new(LspEditor::new(
            Arc::clone(&self.documents),
            Arc::clone(&self.link),
            Arc::clone(&self.settings),
            edit_capabilities,
            canonical_roots.clone(),
        ));
        // The workspace may read its own saved large results (and no
        // other workspace's); it cleans up after interrupted writes.
        let workspace = Workspace::with_roots(roots, Some(editor.clone() as Arc<dyn crate::workspace::Editor>))
            .map_err(|e| Error::invalid_params(format!("cannot open the workspace: {e:#}")))?;
        let workspace = Arc::new(workspace);
        let prompter = super::permission::prompter(Arc::clone(&self.link), Arc::clone(&self.settings), Arc::clone(&editor));
        // The plugin promised to answer tandem/codeIntel from the editor's
        // language servers; an older one did not, and gets no such tool.
        let code_intel = if self.settings().code_intel {
            let provider = super::code_intel::EditorCodeIntel::new(
                Arc::clone(&self.link),
                Arc::clone(&self.documents),
                Arc::clone(&self.settings),
                canonical_roots.clone(),
            );
            CodeIntelFrom::Editor(Arc::new(provider))
        } else {
            // An editor that does not answer (eglot, Kakoune): the servers
            // of lspServers, if any, started by Tandem itself.
            CodeIntelFrom::LanguageServers { approved: Vec::new() }
        };
        // Project MCP servers need an approval: remembered ones start, the
        // others are asked about once the client is initialized.
        let (host, problems) = Host::open(FrontEnd {
            workspace: Arc::clone(&workspace),
            settings: Arc::clone(&self.settings),
            prompter: Some(Arc::new(prompter)),
            mode: None,
            rules_in_project: true,
            hooks: Arc::clone(&self.hooks),
            mcp: Some(McpServers::default()),
            code_intel,
            record: true,
        });
        problems.iter().for_each(|p| tracing::warn!("{p}"));
        let hook_consent =
            Arc::new(HookConsent::new(Arc::clone(&self.link), Arc::clone(&self.settings), Arc::clone(&self.hooks), workspace.root().to_path_buf()));
        let edits_anywhere = capabilities.experimental.as_ref().and_then(|e| e.get(super::inline::EDITS_ANYWHERE_CAPABILITY)) == Some(&Value::Bool(true));
        let diagnostics = self.settings().code_intel.then(|| {
            Arc::new(super::code_intel::EditorCodeIntel::new(
                Arc::clone(&self.link),
                Arc::clone(&self.documents),
                Arc::clone(&self.settings),
                canonical_roots.clone(),
            ))
        });
        let inline = Arc::new(super::inline::InlineCompletions::new(
            Arc::clone(&self.documents),
            Arc::clone(&self.settings),
            diagnostics,
            edits_anywhere,
            crate::completion::telemetry::Stats::dir_for(workspace.root()),
        ));
        // Advertised only when configured, now or later (see
        // `inline_provider.rs`): an editor then shows no suggestions of ours at all.
        let inline_completion_provider = self.inline_provider.advertise(capabilities, self.settings().inline_completions.enabled);
        let (findings, publisher) = super::findings::Findings::new(Arc::clone(&self.documents), Arc::clone(&workspace));
        tokio::spawn(publisher.run(Arc::clone(&self.link)));
        let ready = Ready {
            findings,
            inline,
            undoing: tokio::sync::Mutex::new(()),
            hook_consent,
            workspace,
            editor,
            host: Arc::new(host),
            work_done_progress: capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false),
            configuration: workspace_caps.and_then(|w| w.configuration).unwrap_or(false),
            answer_goes_alone: clients::answer_goes_alone(params.client_info.as_ref()),
        };
        if self.ready.set(ready).is_err() {
            return Err(Error::invalid_request());
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(encoding.kind()),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
                    ..Default::default()
                })),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: [ASK_COMMAND, CANCEL_COMMAND, THREADS_COMMAND, FORGET_COMMAND, COMPACT_COMMAND, TRANSCRIPT_COMMAND, MCP_STATUS_COMMAND, UNDO_COMMAND, REDO_COMMAND, TRUST_COMMAND, super::inline::ACCEPTED_COMMAND, PROVIDER_COMMAND, TASKS_COMMAND, STOP_TASK_COMMAND, SEND_REVIEW_COMMAND, super::review::REVIEW_COMMAND, super::findings::DISMISS_COMMAND].map(String::from).to_vec(),
                    ..Default::default()
                }),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                inline_completion_provider,
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo { name: "tandem".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.client_ready.store(true, Ordering::SeqCst);
        self.update_settings(|_| {});
        if let Some(ready) = self.ready.get() {
            if let Err(err) = ready.workspace.start_watcher() {
                tracing::warn!(%err, "cannot start the file watcher; disk changes are caught by fingerprints only");
            }
            // The findings the workspace's last reviewed thread saved are
            // shown again (off the async workers: the threads are files).
            let (host, findings) = (Arc::clone(&ready.host), Arc::clone(&ready.findings));
            tokio::task::spawn_blocking(move || {
                if let Some((thread_id, saved)) = host.store().and_then(|store| store.latest_findings()) {
                    findings.restore(&thread_id, saved);
                }
            });
        }
        self.pull_configuration().await;
        // After the pull, so that an editor whose configuration differs
        // from its initialization options is not registered and
        // unregistered at once.
        self.inline_provider.start(self.settings().timeouts.request());
        if let Some(ready) = self.ready.get() {
            if let Some(mcp) = ready.host.mcp() {
                mcp_front::start(mcp, Arc::clone(&self.link), self.settings().timeouts.prompt());
            }
            // Not awaited here: the user may take a while; a run waits for the answer.
            let consent = Arc::clone(&ready.hook_consent);
            tokio::spawn(async move { consent.ask_if_needed().await });
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.lifecycle.shutdown_requested.store(true, Ordering::SeqCst);
        self.runs.cancel_all();
        // The answer lets the editor send `exit`: the cancelled runs wind
        // down first (bounded: a run stuck on an editor that no longer
        // answers does not hold the editor's shutdown for long).
        if !self.runs.wait_idle(SHUTDOWN_WAIT).await {
            tracing::warn!(runs = ?self.runs.active_ids(), "shutdown: runs still winding down after {} s", SHUTDOWN_WAIT.as_secs());
        }
        if let Some(ready) = self.ready.get() {
            ready.inline.engine.stats.save(true);
            ready.host.shutdown().await;
        }
        Ok(())
    }

    // Document sync: applied before any `.await` (Invariant 5). These
    // handlers contain no `.await` at all.

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        if let Err(err) = self.documents.open(&document.uri, &document.text, document.version) {
            tracing::info!("{err}");
        }
        self.documents.synced();
        // A finding on the file is checked against its buffer now.
        if let (Some(ready), Some(current)) = (self.ready.get(), self.documents.current(&document.uri)) {
            ready.findings.opened(&current.path);
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let document = params.text_document;
        match self.documents.change(&document.uri, document.version, &params.content_changes) {
            Ok(warnings) => warnings.iter().for_each(|w| tracing::warn!("{w}")),
            Err(err) => tracing::warn!("{err}"),
        }
        // Findings move with the edit (or go, when it touched their lines).
        if let Some(ready) = self.ready.get().filter(|ready| !ready.findings.is_empty()) {
            if let Some(current) = self.documents.current(&document.uri) {
                ready.findings.changed(&current.path, &params.content_changes);
            }
        }
        self.documents.synced();
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        self.documents.save(&params.text_document.uri, params.text.as_deref());
        self.documents.synced();
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.documents.close(&params.text_document.uri);
        self.documents.synced();
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        if params.settings.is_object() && params.settings.get("tandem").is_some() {
            self.configuration_generation.fetch_add(1, Ordering::SeqCst);
            self.update_settings(|layers| layers.configuration = params.settings);
        } else {
            self.pull_configuration().await;
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        // The workspace's roots are fixed for the connection (the read ledger
        // and confinement depend on them); say so instead of pretending.
        if !params.event.added.is_empty() || !params.event.removed.is_empty() {
            tracing::warn!("workspace folders changed; restart the Tandem server to use the new folders");
        }
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        match params.command.as_str() {
            ASK_COMMAND => self.ask(params).await,
            SEND_REVIEW_COMMAND => {
                let ready = self.ready.get();
                let display = |uri: &str| {
                    let path = uri.parse::<Uri>().ok().and_then(|u| super::documents::uri_to_path(&u));
                    match (path, ready) {
                        (Some(path), Some(ready)) => ready.workspace.display_path(&path),
                        _ => uri.to_string(),
                    }
                };
                let ask = super::send_review::ask_arguments(params.arguments.first(), display).map_err(Error::invalid_params)?;
                self.ask(ExecuteCommandParams { arguments: vec![ask], ..params }).await
            }
            super::review::REVIEW_COMMAND => self.review(params).await,
            super::findings::DISMISS_COMMAND => {
                let Some(ready) = self.ready.get() else { return Err(Error::invalid_request()) };
                let args: DismissArgs = first_argument(&params.arguments)?;
                Ok(Some(json!({"dismissed": ready.findings.dismiss(&args.key)})))
            }
            CANCEL_COMMAND => self.cancel(&params),
            UNDO_COMMAND => self.undo(&params, crate::checkpoint::Direction::Undo).await,
            REDO_COMMAND => self.undo(&params, crate::checkpoint::Direction::Redo).await,
            THREADS_COMMAND | FORGET_COMMAND | COMPACT_COMMAND | TRANSCRIPT_COMMAND => self.thread_command(&params).await,
            TRUST_COMMAND => self.trust().await,
            PROVIDER_COMMAND => Ok(Some(provider_answer(&self.settings()))),
            super::inline::ACCEPTED_COMMAND => {
                if let Some(ready) = self.ready.get() {
                    ready.inline.engine.accepted();
                }
                Ok(None)
            }
            TASKS_COMMAND => match self.ready.get() {
                Some(ready) => {
                    let tasks = crate::tools::ports::tasks::Tasks::list(&**ready.host.tasks());
                    Ok(Some(json!({ "tasks": tasks })))
                }
                None => Err(Error::invalid_request()),
            },
            STOP_TASK_COMMAND => {
                let Some(ready) = self.ready.get() else { return Err(Error::invalid_request()) };
                let args: TaskArgs = first_argument(&params.arguments)?;
                let task = ready.host.tasks().stop_for_user(args.task_id.trim()).await.map_err(|why| Error::invalid_params(why.trim_start_matches("Error: ").to_string()))?;
                Ok(Some(json!({"task": task})))
            }
            MCP_STATUS_COMMAND => match self.ready.get() {
                Some(ready) => Ok(Some(ready.host.mcp().map_or_else(|| json!({"servers": []}), |mcp| mcp_front::status(mcp)))),
                None => Err(Error::invalid_request()),
            },
            other => Err(Error::invalid_params(format!("unknown command: {other}"))),
        }
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        // A review finding gets its own actions (fix, apply, dismiss), not
        // the generic "fix this error".
        let (ours, others): (Vec<Diagnostic>, Vec<Diagnostic>) =
            params.context.diagnostics.iter().cloned().partition(|d| d.source.as_deref() == Some(super::findings::SOURCE));
        let mut actions = Vec::new();
        if let (Some(ready), Some(current)) = (self.ready.get(), self.documents.current(&params.text_document.uri)) {
            actions = ready.findings.actions(&params.text_document.uri, &current.path, &ours, ASK_COMMAND);
        }
        let mut generic = params;
        generic.context.diagnostics = others;
        actions.extend(code_actions::actions(&generic));
        Ok(Some(actions))
    }
}
