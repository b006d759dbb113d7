//! `tandem acp`: Tandem as an Agent Client Protocol agent over stdio, for
//! Zed, JetBrains, Neovim (codecompanion.nvim, avante.nvim), Emacs
//! (agent-shell) and any other ACP client. Built on the official
//! `agent-client-protocol` crate (protocol v1, stable methods only).
//!
//! The only module that knows ACP. It adapts: a session is a Tandem
//! thread in the session's `cwd`; a prompt is a run on it whose events go
//! out as `session/update`s ([`updates`]); files are read and written
//! through the client when it offers `fs/*` ([`files`]), with the read
//! ledger's check repeated right before every write; what the policy asks
//! goes to `session/request_permission` ([`permission`]).
//!
//! Handlers run inside the SDK's dispatch loop, so a prompt runs in a
//! spawned task that answers the `session/prompt` request when it ends;
//! the loop goes on serving `session/cancel` and the client's answers.

mod client;
mod elicit;
mod files;
mod permission;
mod run;
mod session;
mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse, AvailableCommand, AvailableCommandInput,
    AvailableCommandsUpdate, CancelNotification, CloseSessionRequest, CloseSessionResponse, CurrentModeUpdate, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionInfo, SessionListCapabilities, SessionMode,
    SessionModeId, SessionModeState, SessionResumeCapabilities, SessionUpdate, SetSessionModeRequest, SetSessionModeResponse,
    UnstructuredCommandInput, ConfigOptionUpdate, SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, AgentAuthCapabilities, DeleteSessionRequest, DeleteSessionResponse,
    LogoutCapabilities, LogoutRequest, LogoutResponse, SessionAdditionalDirectoriesCapabilities, SessionDeleteCapabilities,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Client, Error, Stdio};

use crate::sync::MutexExt;
use crate::tools::PermissionMode;
use crate::host::RunRequest;
use client::{ClientLink, SdkLink};
use run::{ClientOffers, OpenError, PromptError, Session};

/// How long, after the client is gone, the runs get to stop.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// The agent's state across the connection.
#[derive(Default)]
struct AcpAgent {
    offers: Mutex<ClientOffers>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    runs: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The folder of each session `session/list` listed, for a
    /// `session/delete` (which names the session only).
    listed: Mutex<HashMap<String, PathBuf>>,
    /// The client sent `logout`: nothing opens or runs until it
    /// authenticates again.
    logged_out: std::sync::atomic::AtomicBool,
}

/// What a logged-out connection is answered.
const LOGGED_OUT: &str = "logged out: send authenticate (method \"environment\") before opening or prompting a session";

fn error(code: Error, message: impl Into<String>) -> Error {
    Error::new(code.code, message.into())
}

impl AcpAgent {
    fn session(&self, id: &str) -> Result<Arc<Session>, Error> {
        self.sessions.locked()
            .get(id)
            .cloned()
            .ok_or_else(|| error(Error::invalid_params(), format!("no session \"{id}\" in this connection: open it with session/new or session/load")))
    }

    fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        let fs = &request.client_capabilities.fs;
        let forms = request.client_capabilities.elicitation.as_ref().is_some_and(|e| e.form.is_some());
        *self.offers.locked() = ClientOffers { read_text_file: fs.read_text_file, write_text_file: fs.write_text_file, elicitation_form: forms };
        tracing::info!(client = ?request.client_info, read = fs.read_text_file, write = fs.write_text_file, forms, "ACP client");
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().embedded_context(true).image(true))
            .mcp_capabilities(McpCapabilities::new().http(true))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .close(SessionCloseCapabilities::new())
                    .delete(SessionDeleteCapabilities::new())
                    .additional_directories(SessionAdditionalDirectoriesCapabilities::new()),
            )
            .auth(AgentAuthCapabilities::new().logout(LogoutCapabilities::new()));
        let key = AuthMethodAgent::new("environment", "API key in the environment").description(
            "Tandem reads ANTHROPIC_API_KEY (or OPENAI_API_KEY and OPENAI_BASE_URL, or TANDEM_PROVIDER) from the environment the client starts it with, or \"provider\" in ~/.tandem/settings.json".to_string(),
        );
        // The newest version both sides speak: this agent speaks v1.
        let version = if request.protocol_version < ProtocolVersion::V1 { request.protocol_version } else { ProtocolVersion::V1 };
        InitializeResponse::new(version)
            .agent_capabilities(capabilities)
            .auth_methods(vec![AuthMethod::Agent(key)])
            .agent_info(Implementation::new("tandem", env!("CARGO_PKG_VERSION")).title("Tandem".to_string()))
    }

    fn logged_out(&self) -> bool {
        self.logged_out.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn open(
        &self,
        cx: &ConnectionTo<Client>,
        cwd: &std::path::Path,
        additional: &[PathBuf],
        servers: &[agent_client_protocol::v1::schema::McpServer],
        load: Option<&str>,
    ) -> Result<Arc<Session>, Error> {
        if self.logged_out() {
            return Err(error(Error::auth_required(), LOGGED_OUT));
        }
        if let Some(id) = load {
            if let Some(open) = self.sessions.locked().get(id) {
                if open.is_running() {
                    return Err(error(Error::invalid_request(), format!("session \"{id}\" is running a prompt: cancel it first")));
                }
            }
        }
        let link: Arc<dyn ClientLink> = Arc::new(SdkLink(cx.clone()));
        let offers = *self.offers.locked();
        let session = run::open(link, offers, cwd, additional, servers, load).map_err(|err| match err {
            OpenError::InvalidParams(message) => error(Error::invalid_params(), message),
            OpenError::AuthRequired(message) => error(Error::auth_required(), message),
            OpenError::BrokenSettings(message) => error(Error::invalid_request(), message),
        })?;
        if let Some(old) = self.sessions.locked().insert(session.core.id.clone(), Arc::clone(&session)) {
            tokio::spawn(async move { old.shutdown().await });
        }
        Ok(session)
    }

    fn start_prompt(self: &Arc<Self>, request: PromptRequest, responder: agent_client_protocol::v1::Responder<PromptResponse>) -> Result<(), Error> {
        if self.logged_out() {
            return responder.respond_with_error(error(Error::auth_required(), LOGGED_OUT));
        }
        let session = match self.session(&request.session_id.0) {
            Ok(session) => session,
            Err(err) => return responder.respond_with_error(err),
        };
        if session.is_running() {
            return responder.respond_with_error(error(
                Error::invalid_request(),
                "a prompt is already running in this session: wait for it, or send session/cancel",
            ));
        }
        let (prompt, context) = run::prompt_parts(&request.prompt, session.workspace.root());
        let images = match run::prompt_images(&request.prompt) {
            Ok(images) => images,
            Err(why) => return responder.respond_with_error(error(Error::invalid_params(), why)),
        };
        // `/review WORDS`: a review run of the scope the words name.
        let review = review_words(&prompt);
        let prompt = slash_command(&prompt, &session);
        if prompt.trim().is_empty() && context.is_none() && images.is_empty() {
            return responder.respond_with_error(error(Error::invalid_params(), "the prompt is empty: say what to do"));
        }
        // `$/cancel_request` for this prompt cancels its run as
        // `session/cancel` does: the answer is the run's, stopReason
        // "cancelled" (ACP's cancellation marker), after its updates.
        let cancellation = responder.cancellation();
        let watched = Arc::clone(&session);
        let watcher = tokio::spawn(async move {
            cancellation.cancelled().await;
            // Until the run has its cancel token (a request withdrawn as
            // it starts); this task ends with the prompt.
            while !watched.cancel() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let linked = run::linked_uris(&request.prompt);
        let task = tokio::spawn(async move {
            let run_request = RunRequest { prompt, context, images, ..RunRequest::default() };
            // `/SERVER:PROMPT` and `@SERVER:URI` (or a link to a server's
            // resource) as `tandem ask` has them; one that cannot be had
            // refuses the prompt, and nothing is sent.
            let run_request = match session.with_mcp(run_request, &linked).await {
                Ok(run_request) => run_request,
                Err(why) => {
                    watcher.abort();
                    if let Err(err) = responder.respond_with_error(error(Error::invalid_params(), why)) {
                        tracing::info!(%err, "cannot answer session/prompt (the client is gone?)");
                    }
                    return;
                }
            };
            let outcome = match review {
                Some(words) => match session.review(&words).await {
                    Ok(Ok(outcome)) => Ok(outcome),
                    // Nothing to review: said, and the turn ends.
                    Ok(Err(nothing)) => {
                        let chunk = agent_client_protocol::v1::schema::ContentChunk::new(updates::text_block(nothing));
                        session.core.notify(SessionUpdate::AgentMessageChunk(chunk));
                        Ok(crate::host::RunOutcome { status: crate::host::RunStatus::Completed, text: String::new(), turns: 0, usage: Default::default(), cost_usd: None, thread_id: String::new() })
                    }
                    Err(err) => Err(err),
                },
                None => session.prompt(run_request).await,
            };
            watcher.abort();
            let answer = match outcome {
                Ok(outcome) => match run::stop_reason(&outcome) {
                    Ok(reason) => responder.respond(PromptResponse::new(reason)),
                    Err(message) => responder.respond_with_error(error(Error::internal_error(), format!("the run failed: {message}"))),
                },
                Err(PromptError::Busy) => responder.respond_with_error(error(
                    Error::invalid_request(),
                    "a prompt is already running in this session: wait for it, or send session/cancel",
                )),
                Err(PromptError::Elsewhere(message)) => responder.respond_with_error(error(Error::invalid_request(), message)),
                Err(PromptError::BrokenSettings(message)) => responder.respond_with_error(error(Error::invalid_request(), message)),
                Err(PromptError::Failed(message)) => responder.respond_with_error(error(Error::internal_error(), message)),
            };
            if let Err(err) = answer {
                tracing::info!(%err, "cannot answer session/prompt (the client is gone?)");
            }
        });
        let mut runs = self.runs.locked();
        runs.retain(|run| !run.is_finished());
        runs.push(task);
        Ok(())
    }

    /// `session/delete`: the saved thread goes (its file and checkpoints),
    /// open in this connection or not; refused while it runs, here or in
    /// another process. Its folder is the open session's, or the one
    /// `session/list` listed it in, or this process's.
    fn delete(&self, id: &str) -> Result<(), Error> {
        let open = self.sessions.locked().get(id).cloned();
        let root = match &open {
            Some(session) if session.is_running() => {
                return Err(error(Error::invalid_request(), format!("session \"{id}\" is running a prompt: cancel it first")));
            }
            Some(session) => session.workspace.root().to_path_buf(),
            None => match self.listed.locked().get(id).cloned() {
                Some(root) => root,
                None => std::env::current_dir().map_err(|e| error(Error::internal_error(), format!("no folder to look for session \"{id}\" in: {e}")))?,
            },
        };
        let threads = crate::host::Threads::new(root.clone(), crate::host::ThreadStore::for_workspace(&root));
        match threads.forget(id) {
            Ok(true) => {}
            Ok(false) if open.is_some() => {}
            Ok(false) => {
                return Err(error(
                    Error::invalid_params(),
                    format!("no saved session \"{id}\" in {}: session/list names the sessions of a folder", root.display()),
                ))
            }
            Err(err) => return Err(error(Error::invalid_request(), err.to_string())),
        }
        self.listed.locked().remove(id);
        if let Some(session) = self.sessions.locked().remove(id) {
            tokio::spawn(async move { session.shutdown().await });
        }
        Ok(())
    }

    /// `logout`: the connection's sessions end (their runs are cancelled)
    /// and nothing opens or runs until the client authenticates again.
    /// Tandem's key stays where the user put it (the environment or the
    /// settings): logging out does not delete it.
    fn logout(&self) {
        self.logged_out.store(true, std::sync::atomic::Ordering::SeqCst);
        let sessions: Vec<Arc<Session>> = self.sessions.locked().drain().map(|(_, s)| s).collect();
        for session in sessions {
            tokio::spawn(async move { session.shutdown().await });
        }
    }

    /// The client is gone: cancel every run and give them a moment to stop.
    async fn stop_all(&self) {
        let sessions: Vec<Arc<Session>> = self.sessions.locked().drain().map(|(_, s)| s).collect();
        for session in &sessions {
            session.cancel();
        }
        let runs: Vec<_> = self.runs.locked().drain(..).collect();
        let _ = tokio::time::timeout(STOP_GRACE, futures::future::join_all(runs)).await;
        for session in sessions {
            let _ = tokio::time::timeout(STOP_GRACE, session.shutdown()).await;
        }
    }
}

/// The words after `/review` (none: the default review), or `None`: no review.
fn review_words(prompt: &str) -> Option<String> {
    let rest = prompt.trim_start().strip_prefix("/review")?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim().to_string())
}

/// A `/skill rest` prompt asks for that skill.
fn slash_command(prompt: &str, session: &Session) -> String {
    let Some(rest) = prompt.strip_prefix('/') else { return prompt.to_string() };
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    if !session.skills().iter().any(|s| s.name == name) {
        return prompt.to_string();
    }
    let args = args.trim();
    if args.is_empty() {
        format!("Use the skill \"{name}\" (call the skill tool with it).")
    } else {
        format!("Use the skill \"{name}\" (call the skill tool with it) for: {args}")
    }
}

/// The permission modes as ACP session modes.
fn modes(current: PermissionMode) -> SessionModeState {
    let described = [
        (PermissionMode::Default, "Default", "Edits are reviewed; commands that change things are asked"),
        (PermissionMode::AcceptEdits, "Accept edits", "Edits are applied without review; commands are still asked"),
        (PermissionMode::Plan, "Plan", "Read-only: Tandem writes a plan for you to approve first"),
        (PermissionMode::BypassPermissions, "Bypass permissions", "Everything is allowed but what deny rules forbid"),
    ];
    let available = described
        .into_iter()
        .map(|(mode, name, description)| SessionMode::new(mode.as_str(), name).description(description.to_string()))
        .collect();
    SessionModeState::new(current.as_str(), available)
}

/// The id of the permission-mode session option.
const MODE_OPTION: &str = "mode";
/// The id of the model session option.
const MODEL_OPTION: &str = "model";
/// The id of the effort session option (only for a model that takes one).
const EFFORT_OPTION: &str = "effort";

/// The session's options (ACP session config options, stable in v1): the
/// permission mode, the same choice as the session modes (a client that
/// shows options hides modes), and the model the next prompts use.
fn config_options(session: &Session) -> Vec<SessionConfigOption> {
    let modes = modes(session.mode());
    let mode_choices: Vec<SessionConfigSelectOption> = modes
        .available_modes
        .iter()
        .map(|mode| SessionConfigSelectOption::new(mode.id.0.to_string(), mode.name.clone()).description(mode.description.clone()))
        .collect();
    let model_choices: Vec<SessionConfigSelectOption> = session.models.iter().map(|model| SessionConfigSelectOption::new(model.clone(), model.clone())).collect();
    let mut options = vec![
        SessionConfigOption::select(MODE_OPTION, "Permission mode", modes.current_mode_id.0.to_string(), mode_choices)
            .category(SessionConfigOptionCategory::Mode),
        SessionConfigOption::select(MODEL_OPTION, "Model", session.model(), model_choices)
            .description("The model Tandem's next prompts use".to_string())
            .category(SessionConfigOptionCategory::Model),
    ];
    // Only for a model the table says takes an effort.
    let efforts = session.efforts();
    if !efforts.is_empty() {
        let mut choices = vec![SessionConfigSelectOption::new(run::DEFAULT_EFFORT, "Default").description("The effort setting's, or the model's own".to_string())];
        choices.extend(efforts.iter().map(|e| SessionConfigSelectOption::new(e.as_str(), e.as_str())));
        let current = session.effort().map_or(run::DEFAULT_EFFORT, |e| e.as_str());
        options.push(
            SessionConfigOption::select(EFFORT_OPTION, "Effort", current.to_string(), choices)
                .description("How hard the model works on the next prompts".to_string())
                .category(SessionConfigOptionCategory::ThoughtLevel),
        );
    }
    options
}

/// `session/set_config_option`: the mode or the model.
fn set_config_option(session: &Session, request: &SetSessionConfigOptionRequest) -> Result<(), Error> {
    let Some(value) = request.value.as_value_id() else {
        return Err(error(Error::invalid_params(), format!("option \"{}\" takes one of its values, not true or false", request.config_id.0)));
    };
    match &*request.config_id.0 {
        MODE_OPTION => {
            let mode = value.0.parse::<PermissionMode>().map_err(|message| error(Error::invalid_params(), message))?;
            session.set_mode(mode);
            session.core.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(SessionModeId::new(mode.as_str()))));
            Ok(())
        }
        MODEL_OPTION => session.set_model(&value.0).map_err(|message| error(Error::invalid_params(), message)),
        EFFORT_OPTION => session.set_effort(&value.0).map_err(|message| error(Error::invalid_params(), message)),
        other => Err(error(Error::invalid_params(), format!("no session option \"{other}\": the options are \"{MODE_OPTION}\", \"{MODEL_OPTION}\" and \"{EFFORT_OPTION}\""))),
    }
}

/// Tell the client the session's skills and its MCP servers' prompts, as
/// slash commands (`/SKILL`, `/SERVER:PROMPT`), and again whenever the
/// prompts change (a server becomes ready after the session opened).
fn announce_commands(session: &Arc<Session>) {
    session.core.notify(SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands(session))));
    let Some(mut changes) = session.mcp().map(|mcp| mcp.subscribe()) else { return };
    let weak = Arc::downgrade(session);
    let mut said = session.mcp_prompts();
    tokio::spawn(async move {
        // Ends with the session: its MCP servers' sender goes with it.
        while changes.changed().await.is_ok() {
            let Some(session) = weak.upgrade() else { return };
            let prompts = session.mcp_prompts();
            if prompts != said {
                session.core.notify(SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands(&session))));
                said = prompts;
            }
        }
    });
}

/// The skills, `/review`, then the MCP prompts, as ACP commands.
fn commands(session: &Session) -> Vec<AvailableCommand> {
    let skills = session.skills().into_iter().map(|skill| {
        AvailableCommand::new(skill.name, skill.description).input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new("what to use it for")))
    });
    let prompts = session.mcp_prompts().into_iter().map(|(server, prompt)| {
        let mut command = AvailableCommand::new(format!("{server}:{}", prompt.name), prompt.description.clone());
        if !prompt.arguments.is_empty() {
            let hint: Vec<String> = prompt.arguments.iter().map(|(name, required)| if *required { name.clone() } else { format!("[{name}]") }).collect();
            command = command.input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint.join(" "))));
        }
        command
    });
    let review = std::iter::once(
        AvailableCommand::new("review", "Review the uncommitted changes and report findings (or --last-run, --branch BASE, --range A..B, files; --level thorough)")
            .input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new("what to review"))),
    );
    skills.chain(review).chain(prompts).collect()
}

/// `session/list`: the saved threads of `cwd`, most recent first.
fn list_sessions(request: &ListSessionsRequest) -> Result<ListSessionsResponse, Error> {
    let cwd = match &request.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().map_err(|e| error(Error::internal_error(), format!("no cwd given and none of our own: {e}")))?,
    };
    let root = cwd.canonicalize().unwrap_or(cwd);
    let Some(store) = crate::host::ThreadStore::for_workspace(&root) else {
        return Ok(ListSessionsResponse::new(Vec::new()));
    };
    let (threads, problems) = store.list();
    for problem in problems {
        tracing::warn!("{problem}");
    }
    let sessions = threads
        .into_iter()
        .map(|thread| {
            let updated = chrono::DateTime::from_timestamp_millis(thread.updated_ms as i64).map(|d| d.to_rfc3339());
            SessionInfo::new(thread.id, root.clone()).title(thread.title).updated_at(updated)
        })
        .collect();
    Ok(ListSessionsResponse::new(sessions))
}

/// Serve ACP on stdin/stdout until the client closes the connection.
pub async fn serve_stdio() -> anyhow::Result<()> {
    let agent = Arc::new(AcpAgent::default());
    let connection = Agent
        .v1()
        .name("tandem")
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: InitializeRequest, responder, _cx| responder.respond(agent.initialize(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |_request: AuthenticateRequest, responder, _cx| {
                    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
                    match run::read_settings(&cwd).map(|settings| run::provider_problem(&settings)) {
                        Ok(None) => {
                            agent.logged_out.store(false, std::sync::atomic::Ordering::SeqCst);
                            responder.respond(AuthenticateResponse::new())
                        }
                        Ok(Some(problem)) => responder.respond_with_error(error(Error::auth_required(), problem)),
                        Err(broken) => responder.respond_with_error(error(Error::invalid_request(), broken)),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |_request: LogoutRequest, responder, _cx| {
                    agent.logout();
                    responder.respond(LogoutResponse::new())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: DeleteSessionRequest, responder, _cx| match agent.delete(&request.session_id.0) {
                    Ok(()) => responder.respond(DeleteSessionResponse::new()),
                    Err(err) => responder.respond_with_error(err),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: NewSessionRequest, responder, cx| {
                    match agent.open(&cx, &request.cwd, &request.additional_directories, &request.mcp_servers, None) {
                        Ok(session) => {
                            let response = NewSessionResponse::new(session.core.id.clone()).modes(modes(session.mode())).config_options(config_options(&session));
                            responder.respond(response)?;
                            announce_commands(&session);
                            Ok(())
                        }
                        Err(err) => responder.respond_with_error(err),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: LoadSessionRequest, responder, cx| {
                    match agent.open(&cx, &request.cwd, &request.additional_directories, &request.mcp_servers, Some(&request.session_id.0)) {
                        Ok(session) => {
                            // The history first, then the answer (the spec's order).
                            for update in updates::replay(&session.history, |id| session.run_texts(id)) {
                                session.core.notify(update);
                            }
                            // The title too, before the answer: a client may stop
                            // listening once it has the answer.
                            session.say_title();
                            responder.respond(LoadSessionResponse::new().modes(modes(session.mode())).config_options(config_options(&session)))?;
                            announce_commands(&session);
                            Ok(())
                        }
                        Err(err) => responder.respond_with_error(err),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: ResumeSessionRequest, responder, cx| {
                    match agent.open(&cx, &request.cwd, &request.additional_directories, &request.mcp_servers, Some(&request.session_id.0)) {
                        Ok(session) => {
                            session.say_title();
                            responder.respond(ResumeSessionResponse::new().modes(modes(session.mode())).config_options(config_options(&session)))?;
                            announce_commands(&session);
                            Ok(())
                        }
                        Err(err) => responder.respond_with_error(err),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: ListSessionsRequest, responder, _cx| match list_sessions(&request) {
                    Ok(response) => {
                        agent.listed.locked().extend(response.sessions.iter().map(|s| (s.session_id.0.to_string(), s.cwd.clone())));
                        responder.respond(response)
                    }
                    Err(err) => responder.respond_with_error(err),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: CloseSessionRequest, responder, _cx| {
                    let session = agent.sessions.locked().remove(&*request.session_id.0);
                    match session {
                        Some(session) => {
                            tokio::spawn(async move { session.shutdown().await });
                            responder.respond(CloseSessionResponse::new())
                        }
                        None => responder.respond_with_error(error(Error::invalid_params(), format!("no session \"{}\"", request.session_id.0))),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: SetSessionModeRequest, responder, _cx| {
                    let session = match agent.session(&request.session_id.0) {
                        Ok(session) => session,
                        Err(err) => return responder.respond_with_error(err),
                    };
                    match request.mode_id.0.parse::<PermissionMode>() {
                        Ok(mode) => {
                            session.set_mode(mode);
                            responder.respond(SetSessionModeResponse::new())?;
                            session.core.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(SessionModeId::new(mode.as_str()))));
                            session.core.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(config_options(&session))));
                            Ok(())
                        }
                        Err(message) => responder.respond_with_error(error(Error::invalid_params(), message)),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: SetSessionConfigOptionRequest, responder, _cx| {
                    let session = match agent.session(&request.session_id.0) {
                        Ok(session) => session,
                        Err(err) => return responder.respond_with_error(err),
                    };
                    match set_config_option(&session, &request) {
                        Ok(()) => responder.respond(SetSessionConfigOptionResponse::new(config_options(&session))),
                        Err(err) => responder.respond_with_error(err),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(&agent);
                async move |request: PromptRequest, responder, _cx| agent.start_prompt(request, responder)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let agent = Arc::clone(&agent);
                async move |notification: CancelNotification, _cx| {
                    if let Ok(session) = agent.session(&notification.session_id.0) {
                        session.cancel();
                    }
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await;
    agent.stop_all().await;
    connection.map_err(|err| anyhow::anyhow!("the ACP connection failed: {err}"))
}
