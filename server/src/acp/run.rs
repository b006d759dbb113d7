//! A session's run: the workspace over the client's files, the settings
//! of `cwd`, the tools (built-in and MCP: the project's, the user's and
//! the client's `mcpServers`), the language servers of `lspServers`, the
//! hooks and the permission policy; and
//! one prompt at a time run on its thread, its events forwarded as
//! `session/update`s.

use crate::model::table::Effort;

/// The effort option's value for "the settings' effort".
pub const DEFAULT_EFFORT: &str = "default";
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource, McpServer as AcpMcpServer, SessionUpdate, UsageUpdate};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::client::ClientLink;
use super::files::ClientFiles;
use super::session::{call_key, AcpPlanReview, SessionCore};
use super::updates::UpdateMapper;
use crate::sync::MutexExt;
use crate::tools::PermissionMode;
use crate::host::{QuestionTurns, RunEvent, RunOutcome, RunRequest, RunStatus};
use crate::mcp::config::{Origin, ServerConfig, Transport};
use crate::host::{CodeIntelFrom, FrontEnd, Host, McpServers, RunHandle, RunParts, StartError, ThreadChoice};
use crate::settings::Settings;
use crate::workspace::{Editor, Workspace};

/// An embedded resource's text kept as context, in characters.
const MAX_RESOURCE_CHARS: usize = 100_000;

/// What the client offers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientOffers {
    pub read_text_file: bool,
    pub write_text_file: bool,
    /// `elicitation.form`: choices are asked as forms ([`super::elicit`]).
    pub elicitation_form: bool,
}

/// Why a session did not open; each names what to do.
#[derive(Debug)]
pub enum OpenError {
    InvalidParams(String),
    /// No model provider is configured: the message names the variables.
    AuthRequired(String),
    /// A settings file's permission rules cannot be read (fail closed).
    BrokenSettings(String),
}

pub struct Session {
    pub core: Arc<SessionCore>,
    pub workspace: Arc<Workspace>,
    /// What the session's prompts share: settings, hooks, MCP servers,
    /// the executor, the checkpoints.
    host: Host,
    /// The session's thread, checked out by each prompt through the host
    /// ([`Host::start`]) with the run lock every front end takes: a second
    /// prompt here, another `tandem acp`, an editor window's `tandem lsp`
    /// or a `tandem chat` on the same thread is refused while one runs,
    /// and a thread another process continued since is read again first.
    thread_id: String,
    /// A prompt is running (set before the check-out, cleared after the check-in).
    running: std::sync::atomic::AtomicBool,
    mode: Mutex<PermissionMode>,
    /// The model the session's prompts use, one of `models`.
    model: Mutex<String>,
    /// The effort the session's prompts ask for, over the settings'
    /// `effort` (`None`: the settings').
    effort: Mutex<Option<Effort>>,
    /// The trust notice last shown in this session: each is said once.
    trust_said: Mutex<Option<String>>,
    /// The title last told to the client (`session_info_update`).
    title_said: Mutex<Option<String>>,
    /// The client fills in forms: plan mode's review is one.
    forms: bool,
    /// The models the session may switch between (the settings' first).
    pub models: Vec<String>,
    pub history: Vec<serde_json::Value>,
}

impl Session {
    /// What the run of checkpoint `id` changed, as text, for the replay
    /// of a loaded session (none without checkpoints).
    pub fn run_texts(&self, id: &str) -> Vec<crate::checkpoint::RunText> {
        self.host.checkpoints().map(|checkpoints| checkpoints.run_texts(id)).unwrap_or_default()
    }
}

/// The message for a missing provider.
pub fn provider_problem(settings: &Settings) -> Option<String> {
    crate::host::endpoint(settings).err().map(explain_provider_problem)
}

/// What to do about `err` (`host::endpoint`'s), for an ACP client's user.
fn explain_provider_problem(err: String) -> String {
    if !err.starts_with("no model provider is configured") {
        // A setting that cannot apply: the message names it.
        return err;
    }
    format!("{err}. Set ANTHROPIC_API_KEY (or OPENAI_API_KEY with OPENAI_BASE_URL, or TANDEM_PROVIDER) in the environment the client starts `tandem acp` with, or \"provider\" in ~/.tandem/settings.json")
}

/// The settings of a folder ([`crate::host::load_settings`]): problems
/// go to the log, and a file whose permission rules cannot be read
/// refuses the session (`Err`: each such file with its line and column)
/// until it is fixed.
pub fn read_settings(root: &Path) -> Result<Settings, String> {
    read_settings_noticed(root).map(|(settings, _)| settings)
}

/// [`read_settings`], with the notice of what an untrusted folder's files
/// asked for and was left out ([`crate::settings::trust_notice`]), for the
/// client to show.
pub fn read_settings_noticed(root: &Path) -> Result<(Settings, Option<String>), String> {
    let (settings, problems) = crate::host::load_settings(root).map_err(|fatal| format!("Tandem does not run: {fatal}"))?;
    for problem in &problems {
        tracing::warn!("settings: {problem}");
    }
    Ok((settings, crate::settings::trust_notice(&problems)))
}

/// The client's `mcpServers` as Tandem's server entries (they need no
/// consent: the user configured them in the client).
fn client_servers(servers: &[AcpMcpServer]) -> Vec<ServerConfig> {
    servers
        .iter()
        .filter_map(|server| {
            let (name, transport) = match server {
                AcpMcpServer::Stdio(s) => (
                    s.name.clone(),
                    Transport::Stdio {
                        command: s.command.display().to_string(),
                        args: s.args.clone(),
                        env: s.env.iter().map(|v| (v.name.clone(), v.value.clone())).collect(),
                    },
                ),
                AcpMcpServer::Http(s) => {
                    (s.name.clone(), Transport::Http { url: s.url.clone(), headers: s.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect() })
                }
                other => {
                    tracing::warn!(?other, "an MCP server transport Tandem does not speak; skipped");
                    return None;
                }
            };
            let fingerprint = transport.describe();
            Some(ServerConfig { name, origin: Origin::Client, transport: Ok(transport), fingerprint })
        })
        .collect()
}

/// Open a session in `cwd`: a new thread, or the saved one `load`.
pub fn open(
    link: Arc<dyn ClientLink>,
    offers: ClientOffers,
    cwd: &Path,
    additional: &[PathBuf],
    mcp_servers: &[AcpMcpServer],
    load: Option<&str>,
) -> Result<Arc<Session>, OpenError> {
    if !cwd.is_absolute() {
        return Err(OpenError::InvalidParams(format!("cwd must be an absolute path, not \"{}\"", cwd.display())));
    }
    let root = cwd.canonicalize().map_err(|e| OpenError::InvalidParams(format!("cannot open the folder {}: {e}", cwd.display())))?;
    if !root.is_dir() {
        return Err(OpenError::InvalidParams(format!("cwd {} is not a folder", root.display())));
    }
    let extra = extra_roots(additional, &root, dirs::home_dir().as_deref()).map_err(OpenError::InvalidParams)?;
    let settings = read_settings(&root).map_err(OpenError::BrokenSettings)?;
    let models = match crate::host::endpoint(&settings) {
        Ok(endpoint) => crate::host::model_choices(&endpoint),
        Err(err) => return Err(OpenError::AuthRequired(explain_provider_problem(err))),
    };
    // The session's id is its thread's, known before the host is.
    let (thread_id, choice) = match load {
        None => {
            let id = crate::host::new_thread_id();
            (id.clone(), ThreadChoice::NewWithId(id))
        }
        Some(id) => (id.to_string(), ThreadChoice::Resume(id.to_string())),
    };
    let core = Arc::new(SessionCore::new(thread_id.clone(), root.clone(), link));
    let runtime = tokio::runtime::Handle::current();
    let timeout = settings.timeouts.request();
    let editor: Option<Arc<dyn Editor>> = (offers.read_text_file || offers.write_text_file).then(|| {
        Arc::new(ClientFiles::new(Arc::clone(&core), runtime, offers.read_text_file, offers.write_text_file, timeout)) as Arc<dyn Editor>
    });
    let workspace = Workspace::with_roots(std::iter::once(root.clone()).chain(extra).collect(), editor).map_err(|e| OpenError::InvalidParams(format!("cannot open the workspace: {e:#}")))?;
    if let Err(err) = workspace.start_watcher() {
        tracing::warn!(%err, "cannot watch the workspace; disk changes are caught by fingerprints only");
    }
    let workspace = Arc::new(workspace);

    // Hooks: the project's run only when the user approved them (in
    // `tandem ask` or the editor); the user's always.
    let consent = crate::consent::ConsentStore::for_user();
    let (hooks, problems) = crate::host::hooks(&settings, &root, consent.as_ref());
    for problem in problems {
        tracing::warn!("hooks: {problem}");
    }
    let mode = settings.permission_mode.unwrap_or_default();
    let prompter = super::permission::prompter(Arc::clone(&core), offers.write_text_file);
    // MCP: the user's and the project's servers (project ones with the
    // consent `tandem lsp` and `tandem ask` need), and the client's.
    // Code intelligence: no ACP client answers it, so the servers of
    // lspServers (a project's only once approved with `tandem ask
    // --lsp-approve`), started when first needed.
    let (host, problems) = Host::open(FrontEnd {
        workspace: Arc::clone(&workspace),
        settings: Arc::new(std::sync::RwLock::new(settings)),
        prompter: Some(Arc::new(prompter)),
        mode: None,
        rules_in_project: false,
        hooks: crate::host::shared_hooks(hooks),
        mcp: Some(McpServers { approve: Vec::new(), front_end: client_servers(mcp_servers) }),
        code_intel: CodeIntelFrom::LanguageServers { approved: Vec::new() },
        record: true,
    });
    for problem in problems {
        tracing::warn!("{problem}");
    }
    host.open_thread(&choice).map_err(OpenError::InvalidParams)?;
    let history = match load {
        Some(id) => match host.threads().transcript(id) {
            Ok(mut transcript) => {
                // What became of each run since (undone by any front end
                // or process) and what each call did, for the replay.
                if let Some(checkpoints) = host.checkpoints() {
                    checkpoints.mark_transcript(&mut transcript.events);
                }
                host.describe_past_calls(transcript.events.iter_mut());
                transcript.events.into_iter().collect()
            }
            Err(_) => Vec::new(),
        },
        None => Vec::new(),
    };
    if let Some(mcp) = host.mcp() {
        // MCP servers may ask the user (elicitation) where the client shows forms.
        if offers.elicitation_form {
            mcp.set_elicitor(Arc::new(super::elicit::McpFormElicitor(Arc::clone(&core))));
        }
        mcp.start();
    }
    Ok(Arc::new(Session {
        core,
        workspace,
        host,
        thread_id,
        running: std::sync::atomic::AtomicBool::new(false),
        mode: Mutex::new(mode),
        model: Mutex::new(models.first().cloned().unwrap_or_default()),
        effort: Mutex::new(None),
        trust_said: Mutex::new(None),
        title_said: Mutex::new(None),
        forms: offers.elicitation_form,
        models,
        history,
    }))
}

/// The session's `additionalDirectories` as extra workspace roots, confined
/// as the main one is (reads, writes, the sandbox and the protected paths
/// of every root). Each must be an absolute path to an existing folder
/// inside the user's `home` but not the home itself (that would open every
/// project and dotfile), nor a protected path (`.git`, `.tandem`, …, as
/// [`crate::host::protected_path`] says): `Err`
/// names the first that is not, and why. One that is the main root, or
/// given twice, counts once.
pub fn extra_roots(dirs: &[PathBuf], root: &Path, home: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    let home = home.and_then(|h| h.canonicalize().ok());
    let mut roots: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let refused = |why: String| format!("additional directory {}: {why}", dir.display());
        if !dir.is_absolute() {
            return Err(refused("it must be an absolute path".into()));
        }
        let real = dir.canonicalize().map_err(|e| refused(format!("cannot open it ({e})")))?;
        if !real.is_dir() {
            return Err(refused("it is not a folder".into()));
        }
        let Some(home) = &home else {
            return Err(refused("this user has no home folder to hold it".into()));
        };
        if real == *home || !real.starts_with(home) {
            return Err(refused(format!("only a folder inside your home folder ({}) can be added", home.display())));
        }
        for path in [dir, &real] {
            if let Some(found) = crate::host::protected_path(path, std::slice::from_ref(home)) {
                return Err(refused(format!("it is a protected path ({}: {})", found.name, found.what)));
            }
        }
        if real != root && !roots.contains(&real) {
            roots.push(real);
        }
    }
    Ok(roots)
}

/// What a prompt's content blocks say: the prompt text, and the context
/// (resource links, embedded resources) placed before it.
pub fn prompt_parts(blocks: &[ContentBlock], root: &Path) -> (String, Option<String>) {
    let mut prompt = String::new();
    let mut context = String::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => {
                if !prompt.is_empty() {
                    prompt.push('\n');
                }
                prompt.push_str(&text.text);
            }
            // A server's resource: its text joins the context (`Session::with_mcp`).
            ContentBlock::ResourceLink(link) if !link.uri.starts_with("file://") => {
                context.push_str(&format!("The user points at {} ({}).\n", link.uri, link.name));
            }
            ContentBlock::ResourceLink(link) => {
                let shown = uri_display(&link.uri, root);
                context.push_str(&format!("The user points at {shown} ({}); read it with read_file if it matters.\n", link.name));
            }
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(text) => {
                    let shown = uri_display(&text.uri, root);
                    let body: String = text.text.chars().take(MAX_RESOURCE_CHARS).collect();
                    let cut = if body.len() < text.text.len() { "\n[... cut]" } else { "" };
                    context.push_str(&format!("The user attached {shown}:\n```\n{}{cut}\n```\n", body.trim_end_matches(['\n', '\r'])));
                }
                EmbeddedResourceResource::BlobResourceContents(blob) => {
                    context.push_str(&format!("The user attached {} (binary; not shown).\n", uri_display(&blob.uri, root)));
                }
                _ => {}
            },
            // Sent as images ([`prompt_images`]).
            ContentBlock::Image(_) => {}
            _ => context.push_str("(The user attached audio, which this agent cannot read.)\n"),
        }
    }
    (prompt, (!context.is_empty()).then_some(context))
}

/// The URIs of the prompt's resource links that are not files: what an
/// MCP server may hold (`Session::with_mcp`).
pub fn linked_uris(blocks: &[ContentBlock]) -> Vec<String> {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ResourceLink(link) if !link.uri.starts_with("file://") => Some(link.uri.clone()),
            _ => None,
        })
        .collect()
}

/// The prompt's image blocks, checked as a file's bytes are (the
/// `mimeType` is the client's word; the bytes say what it is). `Err`: the
/// sentence saying which one cannot be sent and why.
pub fn prompt_images(blocks: &[ContentBlock]) -> Result<Vec<crate::model::Image>, String> {
    let mut images = Vec::new();
    for block in blocks {
        let ContentBlock::Image(image) = block else { continue };
        let name = image.uri.clone().unwrap_or_else(|| format!("image {} of the prompt", images.len() + 1));
        images.push(crate::model::Image::from_base64(&image.data, &name)?);
    }
    Ok(images)
}

/// A `file://` URI as a path relative to the root, anything else as written.
fn uri_display(uri: &str, root: &Path) -> String {
    match uri.strip_prefix("file://") {
        Some(path) => {
            let path = PathBuf::from(percent_decode(path));
            crate::workspace::display_relative(root, &path)
        }
        None => uri.to_string(),
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Why a prompt did not run.
#[derive(Debug)]
pub enum PromptError {
    /// A prompt is running in this session already.
    Busy,
    /// Another process (another `tandem acp`, an editor window's `tandem
    /// lsp`, a `tandem chat`) is running the session's thread: the message
    /// says so.
    Elsewhere(String),
    /// A settings file broke since the session opened: nothing runs until it is fixed.
    BrokenSettings(String),
    Failed(String),
}

impl Session {
    pub fn mode(&self) -> PermissionMode {
        *self.mode.locked()
    }

    pub fn set_mode(&self, mode: PermissionMode) {
        *self.mode.locked() = mode;
        self.host.set_mode(Some(mode));
    }

    pub fn model(&self) -> String {
        self.model.locked().clone()
    }

    /// Use `model` for the next prompts: one of [`Session::models`].
    pub fn set_model(&self, model: &str) -> Result<(), String> {
        if !self.models.iter().any(|m| m == model) {
            return Err(format!("no model \"{model}\" here: choose one of {}", self.models.join(", ")));
        }
        *self.model.locked() = model.to_string();
        // An effort the new model does not take goes back to the settings'.
        let mut effort = self.effort.locked();
        if effort.is_some_and(|e| !self.efforts().contains(&e)) {
            *effort = None;
        }
        Ok(())
    }

    /// The efforts the session's model takes, as the model table (with the
    /// settings' `models`) says: none off Anthropic, whose API has no effort.
    pub fn efforts(&self) -> Vec<Effort> {
        let settings = self.host.settings();
        match crate::host::endpoint(&settings) {
            Ok(endpoint) => crate::host::model_efforts(&settings, &endpoint, &self.model()),
            Err(_) => Vec::new(),
        }
    }

    /// The session's effort, or `None` for the settings'.
    pub fn effort(&self) -> Option<Effort> {
        *self.effort.locked()
    }

    /// Ask for `effort` in the next prompts ([`DEFAULT_EFFORT`]: the settings').
    pub fn set_effort(&self, effort: &str) -> Result<(), String> {
        if effort == DEFAULT_EFFORT {
            *self.effort.locked() = None;
            return Ok(());
        }
        let takes = self.efforts();
        match Effort::parse(effort).filter(|e| takes.contains(e)) {
            Some(effort) => {
                *self.effort.locked() = Some(effort);
                Ok(())
            }
            None => {
                let names: Vec<&str> = std::iter::once(DEFAULT_EFFORT).chain(takes.iter().map(|e| e.as_str())).collect();
                Err(format!("no effort \"{effort}\" for model {}: choose one of {}", self.model(), names.join(", ")))
            }
        }
    }

    /// The skills, as slash commands.
    pub fn skills(&self) -> Vec<crate::tools::builtin::skill::Skill> {
        crate::tools::builtin::skill::SkillSet::discover(&self.workspace).skills.into_iter().filter(|s| s.user_invocable).collect()
    }

    /// The session's MCP servers (`None`: none configured).
    pub fn mcp(&self) -> Option<&Arc<crate::mcp::McpManager>> {
        self.host.mcp()
    }

    /// The prompts the ready MCP servers offer, with their server's name.
    pub fn mcp_prompts(&self) -> Vec<(String, crate::mcp::server::PromptInfo)> {
        let Some(mcp) = self.host.mcp() else { return Vec::new() };
        mcp.statuses().into_iter().flat_map(|status| status.prompts.into_iter().map(move |p| (status.name.clone(), p))).collect()
    }

    /// The request expanded by the MCP servers as `tandem ask` expands a
    /// prompt ([`crate::mcp::McpManager::expand`]), with the resources
    /// `linked` (resource links' URIs) that a server lists attached as an
    /// `@SERVER:URI` mention would be. `Err`: why not (nothing is sent).
    pub async fn with_mcp(&self, mut request: RunRequest, linked: &[String]) -> Result<RunRequest, String> {
        let Some(mcp) = self.host.mcp() else { return Ok(request) };
        if linked.is_empty() && mcp.prompt_command(&request.prompt).is_none() && mcp.resource_mentions(&request.prompt).is_empty() {
            return Ok(request);
        }
        // Which server holds a link's resource is known once the servers listed theirs.
        if !linked.is_empty() {
            mcp.wait_settled(mcp.startup_timeout()).await;
        }
        let links: Vec<crate::mcp::ResourceMention> = linked.iter().filter_map(|uri| mcp.resource_at(uri)).collect();
        let cancel = CancellationToken::new();
        let (prompt, context) = mcp.expand(std::mem::take(&mut request.prompt), request.context.take(), &links, &cancel).await?;
        request.prompt = prompt;
        request.context = context;
        Ok(request)
    }

    /// Run one prompt to its end. The session's updates go out as it runs.
    pub async fn prompt(self: &Arc<Self>, request: RunRequest) -> Result<RunOutcome, PromptError> {
        self.prompt_with(request, false).await
    }

    /// `/review WORDS`: the review's prompt run as a review run (the
    /// read-only tools and `report_finding`); `Ok(Err(sentence))`: nothing
    /// to review, no run.
    pub async fn review(self: &Arc<Self>, words: &str) -> Result<Result<RunOutcome, String>, PromptError> {
        let request = crate::review::ReviewRequest::parse(words).map_err(|why| PromptError::Failed(format!("/review: {why}")))?;
        let workspace = Arc::clone(&self.workspace);
        let checkpoints = self.host.checkpoints().cloned();
        let prepared = tokio::task::spawn_blocking(move || crate::review::prepare(&workspace, checkpoints.as_deref(), &request))
            .await
            .map_err(|err| PromptError::Failed(format!("/review: {err}")))?;
        let prompt = match prepared {
            Ok(prompt) => prompt,
            Err(crate::review::ScopeError::NothingToReview(why)) => return Ok(Err(why)),
            Err(crate::review::ScopeError::Unavailable(why)) => return Err(PromptError::Failed(format!("/review: {why}"))),
        };
        let said = format!("[Tandem] {}\n\n", prompt.describe());
        self.core.notify(SessionUpdate::AgentMessageChunk(agent_client_protocol::v1::schema::ContentChunk::new(super::updates::text_block(said))));
        self.prompt_with(RunRequest { prompt: prompt.prompt, ..RunRequest::default() }, true).await.map(Ok)
    }

    async fn prompt_with(self: &Arc<Self>, mut request: RunRequest, review: bool) -> Result<RunOutcome, PromptError> {
        if self.running.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Err(PromptError::Busy);
        }
        let _running = NotRunning(self);
        // As `tandem lsp` at every ask: a settings file that stopped
        // parsing since the session opened stops the prompt (its deny
        // rules might be the ones that matter).
        let (_, notice) = read_settings_noticed(self.workspace.root()).map_err(PromptError::BrokenSettings)?;
        self.say_trust_notice(notice);
        let cancel = CancellationToken::new();
        let parts = RunParts {
            mode: Some(self.mode()),
            plan_review: Some(if self.forms {
                Arc::new(super::elicit::FormPlanReview(Arc::clone(&self.core))) as Arc<dyn crate::tools::plan_mode::PlanReview>
            } else {
                Arc::new(AcpPlanReview(Arc::clone(&self.core)))
            }),
            // The forwarder reaches each question after the updates before it.
            questions_in_stream: true,
            cancel: cancel.clone(),
            model: Some(self.model()),
            effort: self.effort().map(|e| e.as_str().to_string()),
            // What the client sent besides the prompt.
            context: request.context.take(),
            images: std::mem::take(&mut request.images),
            max_turns: request.max_turns,
            in_editor: true,
            review,
            ..RunParts::default()
        };
        let prompt = std::mem::take(&mut request.prompt);
        let handle = self.host.start(&ThreadChoice::Resume(self.thread_id.clone()), prompt, parts).map_err(|err| match err {
            StartError::Busy(_) => PromptError::Busy,
            StartError::Elsewhere(message) => PromptError::Elsewhere(message),
            StartError::NoThread(message) | StartError::NoModel(message) => PromptError::Failed(message),
        })?;
        let RunHandle { events, ending, context_window, .. } = handle;
        self.core.start_run(cancel.clone());
        let _end = EndRun(Arc::clone(&self.core));
        let forwarder = tokio::spawn(forward(Arc::clone(&self.core), events, ending.sender().question_turns()));
        let finished = ending.finished().await;
        self.core.end_run();
        let _ = forwarder.await;
        let mut usage = UsageUpdate::new(finished.context_tokens, context_window);
        if let Some(cost) = finished.outcome.cost_usd {
            usage = usage.cost(agent_client_protocol::v1::schema::Cost::new(cost, "USD"));
        }
        self.core.notify(SessionUpdate::UsageUpdate(usage));
        self.say_title();
        Ok(finished.outcome)
    }

    /// Tell the client the thread's title (`session_info_update`) when it
    /// is new or changed: named after its first prompt, so after the first
    /// prompt of a new session, and at once for a loaded one.
    pub fn say_title(&self) {
        // A loaded thread is read when its first prompt runs: till then
        // its saved summary says.
        let threads = self.host.threads();
        let Some(held) = threads.held(&self.thread_id).or_else(|| threads.list().into_iter().find(|t| t.id == self.thread_id)) else { return };
        if held.title.is_empty() {
            return;
        }
        let mut said = self.title_said.locked();
        if said.as_deref() == Some(held.title.as_str()) {
            return;
        }
        let updated = chrono::DateTime::from_timestamp_millis(held.updated_ms as i64).map(|d| d.to_rfc3339());
        let mut info = agent_client_protocol::v1::schema::SessionInfoUpdate::new().title(held.title.clone());
        if let Some(updated) = updated {
            info = info.updated_at(updated);
        }
        if self.core.notify(SessionUpdate::SessionInfoUpdate(info)) {
            *said = Some(held.title);
        }
    }

    /// What an untrusted folder's files asked for and was left out, as a
    /// message the client shows before the answer: once, and again only
    /// when it changes.
    fn say_trust_notice(&self, notice: Option<String>) {
        let mut said = self.trust_said.locked();
        if *said == notice {
            return;
        }
        if let Some(text) = &notice {
            let chunk = agent_client_protocol::v1::schema::ContentChunk::new(super::updates::text_block(format!("[Tandem] {text}\n\n")));
            self.core.notify(SessionUpdate::AgentMessageChunk(chunk));
        }
        *said = notice;
    }

    /// Cancel the running prompt (its tools and shell commands stop).
    pub fn cancel(&self) -> bool {
        self.core.cancel_run()
    }

    pub async fn shutdown(&self) {
        self.core.cancel_run();
        self.host.shutdown().await;
    }

    /// A prompt is running in this session.
    pub fn is_running(&self) -> bool {
        self.running.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Clears [`Session::running`] when the prompt ends, however it ends.
struct NotRunning<'a>(&'a Session);

impl Drop for NotRunning<'_> {
    fn drop(&mut self) {
        self.0.running.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

struct EndRun(Arc<SessionCore>);

impl Drop for EndRun {
    fn drop(&mut self) {
        self.0.end_run();
    }
}

/// Send each event as session updates, in order; a question is no update:
/// reached, once the updates before it are queued to the client, its
/// asking goes on (so a `session/request_permission` comes after the call
/// it is about).
async fn forward(core: Arc<SessionCore>, mut events: mpsc::UnboundedReceiver<RunEvent>, questions: QuestionTurns) {
    let mut mapper = UpdateMapper::default();
    while let Some(event) = events.recv().await {
        if questions.reached(&event) {
            continue;
        }
        if let RunEvent::ToolCall { id, name, kind, .. } = event.unnest().0 {
            core.remember_call(call_key(name, kind), id);
        }
        for update in mapper.map(&event, |path| core.take_edit(path)) {
            core.notify(update);
        }
    }
}

/// The ACP stop reason of a run, or the error a failed run answers with.
pub fn stop_reason(outcome: &RunOutcome) -> Result<agent_client_protocol::v1::schema::StopReason, String> {
    use agent_client_protocol::v1::schema::StopReason;
    match outcome.status {
        RunStatus::Completed | RunStatus::Loop => Ok(StopReason::EndTurn),
        RunStatus::Cancelled => Ok(StopReason::Cancelled),
        RunStatus::TurnLimit => Ok(StopReason::MaxTurnRequests),
        RunStatus::Failed => Err(outcome.text.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{EmbeddedResource, ResourceLink, TextResourceContents};

    /// A client that keeps the order of what it was sent.
    #[derive(Default)]
    struct Seen(Mutex<Vec<String>>);

    #[async_trait::async_trait]
    impl ClientLink for Seen {
        fn notify(&self, _session: &str, update: SessionUpdate) -> bool {
            let kind = serde_json::to_value(&update).ok().and_then(|u| u["sessionUpdate"].as_str().map(str::to_string)).unwrap_or_default();
            self.0.locked().push(kind);
            true
        }
        async fn read_text_file(&self, _session: &str, _path: &Path, _timeout: std::time::Duration) -> Result<String, super::super::client::FileError> {
            Err(super::super::client::FileError::Failed("no files".into()))
        }
        async fn write_text_file(&self, _session: &str, _path: &Path, _text: &str, _timeout: std::time::Duration) -> Result<(), super::super::client::FileError> {
            Err(super::super::client::FileError::Failed("no files".into()))
        }
        async fn request_permission(&self, _request: agent_client_protocol::v1::schema::RequestPermissionRequest) -> Result<agent_client_protocol::v1::schema::RequestPermissionOutcome, String> {
            self.0.locked().push("request_permission".into());
            Ok(agent_client_protocol::v1::schema::RequestPermissionOutcome::Cancelled)
        }
        async fn elicit(&self, _request: agent_client_protocol::v1::schema::CreateElicitationRequest) -> Result<agent_client_protocol::v1::schema::ElicitationAction, String> {
            Err("no forms".into())
        }
    }

    /// A `session/request_permission` never reaches the client before the
    /// `tool_call` it is about, even when the forwarder is late: the
    /// question waits its turn in the run's events.
    #[tokio::test]
    async fn a_permission_request_never_overtakes_the_call_it_is_about() {
        let seen = Arc::new(Seen::default());
        let core = Arc::new(SessionCore::new("s1".into(), PathBuf::from("/w"), Arc::clone(&seen) as Arc<dyn ClientLink>));
        let (events, events_rx) = crate::host::event_channel();
        let kind = crate::tools::ToolKind::Execute { command: "make".into() };
        events.send(RunEvent::ToolCall { id: "toolu_1".into(), name: "run_shell".into(), input: serde_json::json!({}), kind: kind.clone(), summary: "make".into() });
        let request = crate::tools::PermissionRequest {
            tool: "run_shell".into(),
            kind: kind.clone(),
            read_only: false,
            summary: "make".into(),
            preview: None,
            input: serde_json::json!({}),
            accept_edits: false,
            run: None,
            grants: Arc::default(),
            hook: Default::default(),
            questions: Some(events.question_turn()),
        };
        let asking = tokio::spawn({
            let core = Arc::clone(&core);
            async move {
                if let Some(turn) = &request.questions {
                    turn.wait(crate::protocol::QuestionKind::Permission { tool: "run_shell".into(), kind: kind.clone(), question: "run make?".into() }).await;
                }
                core.ask(&request, "run make?", Default::default()).await
            }
        });
        // The forwarder starts late.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(seen.0.locked().is_empty(), "{:?}", seen.0.locked());
        let forwarder = tokio::spawn(forward(Arc::clone(&core), events_rx, events.question_turns()));
        tokio::time::timeout(std::time::Duration::from_secs(10), asking).await.expect("asked").unwrap();
        drop(events);
        forwarder.await.unwrap();
        assert_eq!(*seen.0.locked(), ["tool_call", "request_permission"]);
    }

    /// An extra root is the real folder: a link inside the home to a
    /// folder outside it is refused, and the main root or a folder given
    /// twice counts once.
    #[cfg(unix)]
    #[test]
    fn extra_roots_are_real_folders_inside_the_home() {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let (home, outside) = (base.join("home"), base.join("outside"));
        for dir in [home.join("a"), home.join("w"), outside.clone()] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::os::unix::fs::symlink(&outside, home.join("link")).unwrap();
        let root = home.join("w");
        let got = extra_roots(&[home.join("a"), root.clone(), home.join("a")], &root, Some(&home)).unwrap();
        assert_eq!(got, [home.join("a")]);
        let err = extra_roots(&[home.join("link")], &root, Some(&home)).unwrap_err();
        assert!(err.contains("only a folder inside your home folder"), "{err}");
        let err = extra_roots(&[home.join("a")], &root, None).unwrap_err();
        assert!(err.contains("no home folder"), "{err}");
        let err = extra_roots(&[home.join("missing")], &root, Some(&home)).unwrap_err();
        assert!(err.contains("cannot open it"), "{err}");
    }

    #[test]
    fn prompt_blocks_become_the_prompt_and_its_context() {
        let blocks = vec![
            ContentBlock::Text(agent_client_protocol::v1::schema::TextContent::new("fix the bug")),
            ContentBlock::ResourceLink(ResourceLink::new("main.rs", "file:///w/src/main%20x.rs")),
            ContentBlock::Resource(EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                "fn main() {}\n",
                "file:///w/src/lib.rs",
            )))),
        ];
        let (prompt, context) = prompt_parts(&blocks, Path::new("/w"));
        assert_eq!(prompt, "fix the bug");
        expect_test::expect![[r#"
            The user points at src/main x.rs (main.rs); read it with read_file if it matters.
            The user attached src/lib.rs:
            ```
            fn main() {}
            ```
        "#]]
        .assert_eq(&context.unwrap());
    }
}
