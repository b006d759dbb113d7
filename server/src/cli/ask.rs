//! `tandem ask`: one headless run in the current folder, with the provider
//! from the environment. Prints the transcript (or JSON Lines events with
//! `--json`); Ctrl-C cancels the run cleanly (a second one exits at once).
//!
//! Every run belongs to a thread saved under the user's data folder:
//! `--continue` continues the most recent thread of this workspace,
//! `--resume ID` a given one, `--compact` compacts it first. `tandem
//! threads` lists them.
//!
//! Exit codes: 0 completed, 1 failed, stopped at the turn limit or in a
//! loop, 2 not started (no provider configured, bad arguments, no such
//! thread), 130 cancelled.

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;
use std::sync::Arc;

use tandem::checkpoint::RunRecorder;
use tandem::host::{self, CodeIntelFrom, FrontEnd, Host, McpServers, RunHandle, RunParts};
pub use tandem::host::ThreadChoice;
use tandem::settings::Settings;
use tandem::sync::MutexExt;
use tandem::tools::permission_mode::PermissionMode;
use tandem::host::Prompter;
use tandem::host::{Terminal, TerminalPrompter};
use tandem::host::{RunEvent, RunOutcome, RunStatus};
use tandem::host::format_cost;
use tandem::host::ThreadStore;
use tandem::host::Tasks;
use tandem::mcp::Report;
use tandem::model::Image;
use tandem::tools::plan_mode::PlanReview;
use tandem::workspace::{EditStatus, Workspace};
use tokio::sync::mpsc;

use super::plan_review::TerminalPlanReview;
use super::printed::{printed_so_far, printing};
use super::printer::Printer;
use super::terminal::{self, errln, outln, Shown};

pub struct AskOptions {
    pub prompt: String,
    pub session: SessionOptions,
    pub thread: ThreadChoice,
    /// Compact the thread before the run.
    pub compact: bool,
    /// `--image FILE`: images sent with the prompt.
    pub images: Vec<std::path::PathBuf>,
}

pub async fn ask(options: AskOptions, workspace: Workspace) -> anyhow::Result<ExitCode> {
    Ok(exit_code(ask_outcome(options, workspace).await?.status))
}

/// One run, as `tandem ask` makes it; the outcome names the thread it ran on.
pub async fn ask_outcome(options: AskOptions, workspace: Workspace) -> anyhow::Result<RunOutcome> {
    anyhow::ensure!(!options.prompt.trim().is_empty(), "the prompt is empty: say what to do, e.g. tandem ask \"explain src/main.rs\"");
    // A bad image is said before any session starts: nothing is sent.
    let images = options.images.iter().map(|path| load_image(path)).collect::<anyhow::Result<Vec<_>>>()?;
    let session = Headless::open(&options.session, workspace).await?;
    let outcome = session.run_attached(options.prompt, &options.thread, options.compact, &[], images).await;
    session.close().await;
    outcome
}

/// An image file for the prompt, as the user named it, checked
/// ([`Image::from_bytes`]); over the size limit it is refused unread.
pub fn load_image(path: &std::path::Path) -> anyhow::Result<(String, Image)> {
    load_image_named(path, &path.display().to_string()).map_err(|why| anyhow::anyhow!("--image: {why}"))
}

/// [`load_image`], the image called `name` in messages; `Err` is the
/// sentence saying why it cannot be sent.
pub fn load_image_named(path: &std::path::Path, name: &str) -> Result<(String, Image), String> {
    let name = name.to_string();
    let file = std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?;
    let bytes = file.metadata().map_err(|e| format!("{name}: {e}"))?.len();
    let mut data = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, tandem::model::image::MAX_IMAGE_BYTES + 1), &mut data)
        .map_err(|e| format!("{name}: {e}"))?;
    let image = match tandem::model::image::Format::sniff(&data) {
        Some(format) if bytes > tandem::model::image::MAX_IMAGE_BYTES => Err(tandem::model::image::too_large(&name, format, bytes)),
        _ => Image::from_bytes(&data, &name),
    };
    image.map(|image| (name, image))
}

/// What `tandem ask` and `tandem chat` choose for their session.
#[derive(Clone, Default)]
pub struct SessionOptions {
    /// Print applied edits' whole diffs.
    pub verbose: bool,
    pub json: bool,
    /// From the command line; `None`: the settings', else the default.
    pub max_turns: Option<usize>,
    /// From the command line; `None`: the settings', else `default`.
    pub permission_mode: Option<PermissionMode>,
    /// Project MCP servers approved on the command line (`NAME` or `all`).
    pub mcp_approve: Vec<String>,
    /// Project language servers approved on the command line (`NAME` or `all`).
    pub lsp_approve: Vec<String>,
    /// `--effort`: over the settings' `effort`.
    pub effort: Option<String>,
    /// `--model`: over `TANDEM_MODEL` and the settings' `model`.
    pub model: Option<String>,
}

/// A file named in a chat message with `@path` (or `@path:N`,
/// `@path:N-M`), as typed and as the host attaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    pub name: String,
    pub attachment: host::attachments::Attachment,
}

/// The `@path` mentions in `prompt` that name files of the workspace at
/// `root` (an `@word` that is no file stays text: a handle, a decorator).
pub fn mentions(root: &std::path::Path, prompt: &str) -> Vec<Mention> {
    let mut found: Vec<Mention> = Vec::new();
    for word in prompt.split_whitespace() {
        let Some(named) = word.strip_prefix('@') else { continue };
        // A mention at the end of a sentence: "look at @notes.txt."
        let named = named.trim_end_matches([',', '.', ';', ':', '?', '!', ')', '"', '\'']);
        let (path, lines) = match named.rsplit_once(':') {
            Some((path, range)) => match parse_lines(range) {
                Some(lines) => (path, Some(lines)),
                None => (named, None),
            },
            None => (named, None),
        };
        if path.is_empty() {
            continue;
        }
        let full = root.join(path);
        if !full.is_file() || found.iter().any(|m| m.name == named) {
            continue;
        }
        found.push(Mention { name: named.to_string(), attachment: host::attachments::Attachment { path: full, lines } });
    }
    found
}

/// `N` or `N-M` (1-based lines, N ≤ M).
fn parse_lines(range: &str) -> Option<(usize, usize)> {
    let (first, last) = range.split_once('-').unwrap_or((range, range));
    let (first, last) = (first.parse::<usize>().ok()?, last.parse::<usize>().ok()?);
    (first >= 1 && first <= last).then_some((first, last))
}

/// A headless session: the host of the workspace, built once with this
/// terminal's gate and hooks. `tandem ask` runs one prompt in it; `tandem
/// chat` runs every message of the chat in the same one (the MCP servers
/// start once, "Always allow, saved" holds for the later messages). Each
/// run gets its model provider from the host, as in `tandem lsp` and
/// `tandem acp` (a scripted model replays its script from the start).
pub struct Headless {
    options: SessionOptions,
    host: Host,
    reporter: Option<tokio::task::JoinHandle<()>>,
    /// The `[model: …]` line the terminal was told last: a chat says it at
    /// its first message and again only when it changed.
    provider_said: Arc<std::sync::Mutex<Option<String>>>,
    /// The model chosen with the chat's `/model NAME`, over the settings'
    /// (and `--model`) for the runs after it.
    model: std::sync::Mutex<Option<String>>,
}

impl Headless {
    /// Settings in (fail closed), the session out.
    pub async fn open(options: &SessionOptions, workspace: Workspace) -> anyhow::Result<Self> {
        let mut settings = read_settings(workspace.root())?;
        if let Some(effort) = &options.effort {
            settings.effort = Some(effort.clone());
        }
        // `--model` is the settings' `model` for this session (the settings
        // key wins over TANDEM_MODEL in the provider's lookup).
        if let Some(model) = options.model.as_ref().filter(|m| !m.trim().is_empty()) {
            settings.model = Some(model.clone());
            settings.origins.insert("model".to_string(), "--model".to_string());
        }
        // No session without a model: say so before asking about hooks.
        host::provider(&settings)?;
        // With no terminal to answer, an ask becomes a denial the model reads.
        let terminal: Option<Arc<dyn Terminal>> = if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Some(Arc::new(StdinTerminal))
        } else {
            None
        };
        let hooks = tandem::host::shared_hooks(load_hooks(&settings, workspace.root(), terminal.as_deref()).await);
        let elicitor = terminal.clone().map(|terminal| Arc::new(TerminalElicitor(terminal)) as Arc<dyn tandem::mcp::elicit::Elicitor>);
        let prompter = terminal.map(|terminal| Arc::new(TerminalPrompter(terminal)) as Arc<dyn Prompter>);
        if let Err(err) = workspace.start_watcher() {
            // The fingerprint check still catches changes on disk; the watcher only does it sooner.
            tracing::warn!(%err, "cannot watch the workspace for changes");
        }
        let (host, problems) = Host::open(FrontEnd {
            workspace: Arc::new(workspace),
            settings: Arc::new(std::sync::RwLock::new(settings)),
            prompter,
            mode: options.permission_mode,
            rules_in_project: true,
            hooks,
            mcp: Some(McpServers { approve: options.mcp_approve.clone(), front_end: Vec::new() }),
            // Language servers from lspServers start when first needed.
            code_intel: CodeIntelFrom::LanguageServers { approved: options.lsp_approve.clone() },
            record: true,
        });
        report_problems(&problems);
        // MCP servers start in the background; a run's first turn waits
        // for those still starting (up to their start-up timeout).
        let reporter = host.mcp().map(|mcp| {
            let reporter = mcp.spawn_reporter(report_to_stderr);
            // Servers may ask the user mid-call only where someone can answer.
            if let Some(elicitor) = elicitor {
                mcp.set_elicitor(elicitor);
            }
            mcp.start();
            reporter
        });
        Ok(Headless { options: options.clone(), host, reporter, provider_said: Arc::default(), model: std::sync::Mutex::new(None) })
    }

    /// One run of `prompt` on the thread `choice` names, printed; the
    /// outcome names the thread it ran on. With what the user attached: files (`@path` in the
    /// chat), whose text goes to the model as context, through the gate as
    /// a read (`host::attachments`), and images sent after the prompt, each
    /// named (as the user named it) among the run's attachments.
    pub async fn run_attached(&self, prompt: String, choice: &ThreadChoice, compact: bool, attached: &[Mention], images: Vec<(String, Image)>) -> anyhow::Result<RunOutcome> {
        let attachments: Vec<host::attachments::Attachment> = attached.iter().map(|m| m.attachment.clone()).collect();
        let context = self.host.attachments_context(&attachments).await;
        // `/SERVER:PROMPT` runs an MCP prompt; `@SERVER:URI` attaches an MCP resource.
        let (prompt, context) = self.with_mcp(prompt, context).await?;
        let interactive = !self.options.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        let review: Option<Arc<dyn PlanReview>> = if interactive { Some(Arc::new(TerminalPlanReview)) } else { None };
        let parts = RunParts {
            mode: self.options.permission_mode,
            plan_review: review,
            compact,
            max_turns: self.options.max_turns,
            attachments: attached.iter().map(|m| m.name.clone()).chain(images.iter().map(|(name, _)| name.clone())).collect(),
            images: images.into_iter().map(|(_, image)| image).collect(),
            model: self.model.locked().clone(),
            context,
            ..RunParts::default()
        };
        self.run_printed(choice, prompt, parts).await
    }

    /// A review run of `prompt` (made by `tandem::review`) on a new thread:
    /// the read-only tools and `report_finding`, printed as any run.
    pub async fn run_review(&self, prompt: String) -> anyhow::Result<RunOutcome> {
        let parts = RunParts { review: true, max_turns: self.options.max_turns, model: self.model.locked().clone(), ..RunParts::default() };
        self.run_printed(&ThreadChoice::New, prompt, parts).await
    }

    /// The session's host (a review's scope reads its checkpoints).
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// Start `prompt` with `parts` and print it to its end.
    async fn run_printed(&self, choice: &ThreadChoice, prompt: String, parts: RunParts) -> anyhow::Result<RunOutcome> {
        // The thread is checked out with its run lock, held for the run: a
        // thread another process is running (an editor window's server,
        // another `tandem chat`) is refused, never written to by both.
        let RunHandle { events, ending, cancel, recorder, .. } = self.host.start(choice, prompt, parts).map_err(|err| anyhow::anyhow!("{err}"))?;
        let printer = if self.options.json {
            None
        } else {
            Some(Printer::for_terminal().verbose(self.options.verbose).provider_said(Arc::clone(&self.provider_said)))
        };
        let run = async move { ending.finished().await.outcome };
        let json_end = JsonEnd { recorder: recorder.clone() };
        let outcome = print_run(run, cancel, events, self.host.workspace(), printer.ok_or(json_end), None).await;
        if let Some(recorder) = recorder {
            report_checkpoint(&recorder);
        }
        Ok(outcome)
    }

    /// The prompt with what MCP servers give it: a `/SERVER:PROMPT ARGS`
    /// prompt becomes the server's prompt text, and the text of each
    /// `@SERVER:URI` resource joins the run's context. A prompt or
    /// resource that cannot be had is an error: nothing is sent.
    async fn with_mcp(&self, prompt: String, context: Option<String>) -> anyhow::Result<(String, Option<String>)> {
        let Some(mcp) = self.host.mcp() else { return Ok((prompt, context)) };
        let cancel = tokio_util::sync::CancellationToken::new();
        mcp.expand(prompt, context, &[], &cancel).await.map_err(|why| anyhow::anyhow!("{why}"))
    }

    /// `/model`: the endpoint the next run talks to (with the model chosen
    /// in the chat) and the models this provider offers to switch to, the
    /// current one first; `Err`: why there is no model.
    pub fn models(&self) -> Result<(String, Vec<String>), String> {
        let endpoint = host::endpoint(&self.settings_with(self.model.locked().clone()))?;
        Ok((endpoint.describe(), host::model_choices(&endpoint)))
    }

    /// `/model NAME`: the runs after it ask for NAME on the same provider;
    /// the endpoint it makes, or why NAME cannot be used (nothing changes).
    pub fn set_model(&self, name: &str) -> Result<String, String> {
        let name = name.trim();
        if name.is_empty() {
            return Err("/model NAME needs a model name".to_string());
        }
        let endpoint = host::endpoint(&self.settings_with(Some(name.to_string())))?;
        *self.model.locked() = Some(name.to_string());
        Ok(endpoint.describe())
    }

    /// The session's settings with `model` (when given) as their `model`:
    /// the key wins over TANDEM_MODEL in the provider's lookup, as a run's
    /// own model does.
    fn settings_with(&self, model: Option<String>) -> Settings {
        let mut settings = self.host.settings();
        if let Some(model) = model {
            settings.model = Some(model);
        }
        settings
    }

    /// The session's background tasks, one a line (`/tasks`).
    pub fn describe_tasks(&self) -> String {
        let tasks = self.host.tasks().list();
        if tasks.is_empty() {
            return "No background tasks.".to_string();
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        tasks.iter().map(|task| tandem::tools::builtin::task_list::describe(task, now)).collect::<Vec<_>>().join("\n")
    }

    /// End background task `id` at the user's word (`/stop ID`): what to
    /// print. The model is told in its next request.
    pub async fn stop_task(&self, id: &str) -> String {
        match self.host.tasks().stop_for_user(id.trim()).await {
            Ok(task) => format!("Task {} ({}): {}.", task.id, task.command.lines().next().unwrap_or_default(), task.describe_status()),
            Err(err) => err.trim_start_matches("Error: ").to_string(),
        }
    }

    /// Stop the session's servers and its background tasks.
    pub async fn close(self) {
        if let Some(reporter) = self.reporter {
            reporter.abort();
        }
        self.host.shutdown().await;
    }
}

/// After a run that changed files: how to take it back (on stderr, so
/// `--json` output stays clean).
fn report_checkpoint(recorder: &RunRecorder) {
    let changed = recorder.changed_files().len();
    if changed > 0 {
        let them = if changed == 1 { "it" } else { "them" };
        errln!("tandem: {} changed {changed} file(s); `tandem undo` restores {them}", recorder.run_id());
    }
}

/// The terminal the user runs `tandem ask` in: questions on stderr (stdout
/// may be JSON Lines), the answer from stdin. End of input is no answer.
/// The question and its options are content (a command, a path, a diff,
/// a hook's command line, a rule): they are shown visibly, so what the
/// user answers is what runs.
struct StdinTerminal;

#[async_trait::async_trait]
impl Terminal for StdinTerminal {
    async fn choose(&self, question: &str, options: &[&str]) -> Option<String> {
        let question = question.to_string();
        let options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
        printed_so_far().await;
        tokio::task::spawn_blocking(move || {
            let _hold = super::printer::hold_spinner();
            let shown = super::printer::coloured_rows(&question);
            // Taller than the terminal leaves room for (its first lines
            // would scroll away): the question goes through the pager, and
            // `v` brings it back.
            let paged = super::pager::fits(&shown, options.len() + 3) == Some(false) && super::pager::show(&shown);
            if paged {
                let first = question.lines().next().unwrap_or_default();
                errln!("\n{first}\n({} lines, shown in the pager; v shows them again)", question.lines().count());
            } else {
                terminal::err_line(&(Shown::from("\n") + &shown));
            }
            for (index, option) in options.iter().enumerate() {
                errln!("  {}) {option}", index + 1);
            }
            loop {
                let more = if paged { ", or v to see it again" } else { "" };
                terminal::err(&Shown::from(format!("Choose {}{more}: ", super::choice::hint(&options))));
                let mut line = String::new();
                if std::io::stdin().lock().read_line(&mut line).ok()? == 0 {
                    return None;
                }
                if paged && line.trim() == "v" {
                    super::pager::show(&shown);
                    continue;
                }
                match super::choice::parse(&line, &options) {
                    Ok(index) => return options.get(index).cloned(),
                    Err(why) => errln!("{why}"),
                }
            }
        })
        .await
        .ok()
        .flatten()
    }

    async fn line(&self, prompt: &str) -> Option<String> {
        let prompt = prompt.to_string();
        tokio::task::spawn_blocking(move || {
            let _hold = super::printer::hold_spinner();
            terminal::err(&Shown::from(prompt));
            let mut line = String::new();
            (std::io::stdin().lock().read_line(&mut line).ok()? > 0).then_some(line)
        })
        .await
        .ok()
        .flatten()
    }
}

/// The hooks from the settings. The project's hooks need the user's
/// consent: on a terminal it is asked once (and remembered for exactly
/// these hooks); without one they are left out, with a note on stderr.
async fn load_hooks(settings: &Settings, root: &std::path::Path, terminal: Option<&dyn Terminal>) -> tandem::host::Hooks {
    use tandem::consent::{ConsentStore, HOOKS, PROJECT};
    let store = ConsentStore::for_user();
    if let (Some(project), Some(store), Some(terminal)) = (tandem::host::project_hooks(&settings.hooks), store.as_ref(), terminal) {
        if !store.is_approved(root, HOOKS, PROJECT, &tandem::consent::fingerprint_of(&project)) {
            let shown = tandem::host::describe_project(&project);
            let question = format!("This project's settings want to run these hooks on your machine (each with `sh -c` in the workspace):\n{shown}");
            if terminal.choose(&question, &["Run them", "Not now"]).await.as_deref() == Some("Run them") {
                if let Err(err) = store.approve(root, HOOKS, PROJECT, &tandem::consent::fingerprint_of(&project)) {
                    errln!("tandem: cannot remember the approval in {}: {err}", store.path().display());
                }
            }
        }
    }
    let (hooks, problems) = host::hooks(settings, root, store.as_ref());
    for problem in problems {
        errln!("tandem: hooks: {problem}");
    }
    hooks
}

/// `tandem threads` (or `tandem sessions`): this workspace's saved threads, most recent first,
/// with their totals.
pub fn threads(workspace: &std::path::Path) -> anyhow::Result<ExitCode> {
    let store = ThreadStore::for_workspace(workspace).ok_or_else(|| anyhow::anyhow!("cannot find the user's data folder (set XDG_DATA_HOME)"))?;
    let (threads, problems) = store.list();
    for problem in &problems {
        errln!("tandem: {problem}");
    }
    if threads.is_empty() {
        outln!("No saved conversations in this folder yet: start one with tandem ask PROMPT.");
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{:<22} {:<16} {:>4} {:>6} {:>12} {:>10} {:>9}  title", "thread", "last activity", "runs", "turns", "tokens in", "tokens out", "cost");
    let mut total = tandem::host::Totals::default();
    for thread in &threads {
        let t = &thread.totals;
        let when = chrono::DateTime::from_timestamp_millis(thread.updated_ms as i64)
            .map(|d| d.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default();
        let cost = t.cost_usd.map(format_cost).unwrap_or_else(|| "-".into());
        outln!("{:<22} {:<16} {:>4} {:>6} {:>12} {:>10} {:>9}  {}", thread.id, when, t.runs, t.turns, t.usage.input_tokens, t.usage.output_tokens, cost, thread.title);
        total.runs += t.runs;
        total.turns += t.turns;
        total.usage.add(&t.usage);
        if let Some(c) = t.cost_usd {
            total.cost_usd = Some(total.cost_usd.unwrap_or(0.0) + c);
        }
    }
    let cost = total.cost_usd.map(format_cost).unwrap_or_else(|| "-".into());
    outln!(
        "total: {} threads, {} runs, {} turns, {} tokens in ({} cached), {} out, {cost}",
        threads.len(),
        total.runs,
        total.turns,
        total.usage.input_tokens,
        total.usage.cache_read_input_tokens,
        total.usage.output_tokens
    );
    Ok(ExitCode::SUCCESS)
}

/// Settings problems found after loading (an unusable `lspServers`
/// entry), on stderr; the run goes on without the broken part.
fn report_problems(problems: &[String]) {
    for problem in problems {
        errln!("tandem: settings: {problem}");
    }
}

/// The workspace's settings files; each problem is printed to stderr and
/// the run goes on without the broken part — unless a file's permission
/// rules cannot be read: then the run does not start (fail closed).
pub fn read_settings(root: &std::path::Path) -> anyhow::Result<Settings> {
    let (settings, problems) = host::load_settings(root).map_err(|fatal| anyhow::anyhow!("{fatal}"))?;
    for problem in problems.iter().filter(|p| !p.needs_trust()) {
        errln!("tandem: settings: {problem}");
    }
    // What an untrusted folder's files asked for, once, with how to trust it.
    if let Some(notice) = tandem::settings::trust_notice(&problems) {
        errln!("tandem: {notice}");
    }
    Ok(settings)
}

/// MCP news for the terminal: failures and servers waiting for approval
/// (on stderr, so `--json` output stays clean).
pub fn report_to_stderr(report: Report) {
    match &report {
        Report::Ready { .. } => tracing::info!("{}", report.message()),
        Report::Failed { .. } => errln!("tandem: {}", report.message()),
        Report::NeedsApproval { name, .. } => {
            errln!("tandem: {}: run with --mcp-approve {name} (or --mcp-approve all)", report.message())
        }
    }
}

pub fn exit_code(status: RunStatus) -> ExitCode {
    match status {
        RunStatus::Completed => ExitCode::SUCCESS,
        RunStatus::Failed | RunStatus::TurnLimit | RunStatus::Loop => ExitCode::from(1),
        RunStatus::Cancelled => ExitCode::from(130),
    }
}

/// Print the events as they come (terminal transcript, or one JSON
/// object per line with what [`JsonEnd`] adds to the end), with Ctrl-C wired to the
/// run's cancel token. `notes` carries lines from the demo harness, each
/// with an acknowledgement the sender waits for: the run is paused while a
/// note is printed, so it lands exactly between the events sent before it
/// and those after.
/// While `run` goes to its outcome; then the summary of what it wrote in
/// `workspace`.
pub async fn print_run(
    run: impl std::future::Future<Output = RunOutcome>,
    cancel: tokio_util::sync::CancellationToken,
    mut rx: mpsc::UnboundedReceiver<RunEvent>,
    workspace: &Workspace,
    output: Result<Printer, JsonEnd>,
    mut notes: Option<mpsc::UnboundedReceiver<Note>>,
) -> RunOutcome {
    let (mut printer, json_end) = match output {
        Ok(printer) => (Some(printer), None),
        Err(json_end) => (None, Some(json_end)),
    };
    let ctrl_c = spawn_interrupt_handler(cancel);
    let (barrier_tx, mut barriers) = mpsc::unbounded_channel();
    *printing() = Some(barrier_tx);
    let mut edits = JsonEdits { workspace, calls: Default::default(), changed: Vec::new(), end: json_end.unwrap_or_default() };
    let print = async {
        let mut emit = |printer: &mut Option<Printer>, event: &RunEvent| emit(printer, event, &mut edits);
        loop {
            tokio::select! {
                biased;
                event = rx.recv() => match event {
                    Some(event) => emit(&mut printer, &event),
                    None => break,
                },
                Some((note, ack)) = recv_note(&mut notes) => {
                    while let Ok(event) = rx.try_recv() {
                        emit(&mut printer, &event);
                    }
                    if let Some(printer) = printer.as_mut() {
                        printer.note(&note);
                    }
                    let _ = ack.send(());
                }
                Some(ack) = barriers.recv() => {
                    while let Ok(event) = rx.try_recv() {
                        emit(&mut printer, &event);
                    }
                    terminal::out(&Shown::new());
                    let _ = ack.send(());
                }
            }
        }
        printer
    };
    let (outcome, printer) = tokio::join!(run, print);
    *printing() = None;
    ctrl_c.abort();
    if let Some(mut printer) = printer {
        printer.summary(&outcome, |path| workspace.display_path(path));
    }
    outcome
}

/// A line from the demo harness, and the acknowledgement it waits for.
pub type Note = (String, tokio::sync::oneshot::Sender<()>);

/// First Ctrl-C: cancel the run (tools stop, the summary prints). Second:
/// exit at once. The handler is registered before this returns, so an
/// interrupt right after the run starts is never lost to the default action.
fn spawn_interrupt_handler(cancel: tokio_util::sync::CancellationToken) -> tokio::task::JoinHandle<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::interrupt()) {
            Ok(mut interrupts) => tokio::spawn(async move {
                if interrupts.recv().await.is_some() {
                    cancel.cancel();
                    if interrupts.recv().await.is_some() {
                        std::process::exit(130);
                    }
                }
            }),
            Err(err) => {
                tracing::warn!(%err, "cannot listen for Ctrl-C");
                tokio::spawn(async {})
            }
        }
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    })
}

async fn recv_note(notes: &mut Option<mpsc::UnboundedReceiver<Note>>) -> Option<Note> {
    match notes {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// What `--json` adds to the run's `end` event: the run's id (`tandem undo
/// RUN_ID`) and the files it changed, from its checkpoint (without one,
/// the files its tools wrote).
#[derive(Default)]
pub struct JsonEnd {
    pub recorder: Option<Arc<RunRecorder>>,
}

/// What `--json` adds to an edit call's `tool_result` event: `edit`, its
/// status (docs/protocol.md's strings), as the editors' events carry it;
/// and to the run's `end` ([`JsonEnd`]).
struct JsonEdits<'a> {
    workspace: &'a Workspace,
    end: JsonEnd,
    /// Edit calls waiting for their result: the file each changes.
    calls: std::collections::HashMap<String, std::path::PathBuf>,
    /// The files the run's calls changed, as their results said.
    changed: Vec<std::path::PathBuf>,
}

impl JsonEdits<'_> {
    /// The run's `end` event's `run_id` and `changed_files` (paths as the
    /// transcript shows them, sorted).
    fn end(&self, value: &mut serde_json::Value) {
        let run_id = self.end.recorder.as_ref().map(|r| r.run_id()).or_else(|| self.workspace.run_tag().map(|tag| tag.to_string()));
        let mut changed: Vec<String> = match &self.end.recorder {
            Some(recorder) => recorder.changed_files().iter().map(|path| self.workspace.display_path(path)).collect(),
            None => self.changed.iter().map(|path| self.workspace.display_path(path)).collect(),
        };
        changed.sort();
        changed.dedup();
        value["run_id"] = serde_json::json!(run_id);
        value["changed_files"] = serde_json::json!(changed);
    }

    /// The `edit` of a tool result, for an edit call.
    fn edit(&mut self, event: &RunEvent) -> Option<serde_json::Value> {
        match event.unnest().0 {
            RunEvent::ToolCall { id, kind: tandem::tools::ToolKind::Edit { path }, .. } => {
                self.calls.insert(id.clone(), path.clone());
                None
            }
            RunEvent::ToolResult { id, is_error, effects, .. } => {
                self.changed.extend(effects.iter().filter(|e| e.status.landed()).map(|e| e.path.clone()));
                let path = self.calls.remove(id)?;
                // What the call did to its file, as the executor recorded it.
                let effect = effects.iter().rev().find(|e| e.path == path && e.by_command.is_none());
                let status = match effect {
                    Some(effect) => effect.status,
                    None if *is_error => EditStatus::NotApplied,
                    None => EditStatus::Applied,
                };
                let ranges = effect.map(|e| e.ranges.clone()).unwrap_or_default();
                Some(serde_json::json!({"path": self.workspace.display_path(&path), "status": status.as_str(), "ranges": ranges}))
            }
            _ => None,
        }
    }
}

fn emit(printer: &mut Option<Printer>, event: &RunEvent, edits: &mut JsonEdits<'_>) {
    match printer {
        Some(printer) => printer.event(event),
        None => {
            let edit = edits.edit(event);
            if let Ok(mut value) = serde_json::to_value(event) {
                if let Some(edit) = edit {
                    value["edit"] = edit;
                }
                if let RunEvent::End { .. } = event {
                    edits.end(&mut value);
                }
                terminal::out_json(&value);
            }
        }
    }
}

/// An MCP server's question (elicitation) at the terminal: the server's
/// message, then each field (a choice for yes/no and enumerations, a line
/// for the rest; a required one cannot be left empty), then send or not.
/// No answer anywhere cancels.
pub struct TerminalElicitor(pub Arc<dyn Terminal>);

pub const ELICIT_SEND: &str = "Send";
pub const ELICIT_DECLINE: &str = "Decline";

#[async_trait::async_trait]
impl tandem::mcp::elicit::Elicitor for TerminalElicitor {
    async fn elicit(&self, question: &tandem::mcp::elicit::Elicitation) -> tandem::mcp::elicit::Answer {
        use tandem::mcp::elicit::{parse_value, Answer, FieldKind};
        let heading = format!("The MCP server {} asks: {}", question.server, question.message);
        let mut content = serde_json::Map::new();
        for field in &question.fields {
            let value = match &field.kind {
                FieldKind::Boolean | FieldKind::Choice(_) => {
                    let options: Vec<&str> = match &field.kind {
                        FieldKind::Choice(values) => values.iter().map(String::as_str).collect(),
                        _ => vec!["yes", "no"],
                    };
                    let Some(chosen) = self.0.choose(&format!("{heading}\n{}", field.label), &options).await else { return Answer::Cancel };
                    parse_value(&field.kind, &chosen)
                }
                _ => loop {
                    let optional = if field.required { "" } else { " (optional, Enter to skip)" };
                    let Some(typed) = self.0.line(&format!("{heading}\n{}{optional}: ", field.label)).await else { return Answer::Cancel };
                    if typed.trim().is_empty() {
                        if field.required {
                            continue;
                        }
                        break Ok(serde_json::Value::Null);
                    }
                    match parse_value(&field.kind, &typed) {
                        Ok(value) => break Ok(value),
                        Err(why) => errln!("{why}"),
                    }
                },
            };
            match value {
                Ok(serde_json::Value::Null) => {}
                Ok(value) => {
                    content.insert(field.name.clone(), value);
                }
                Err(_) => return Answer::Cancel,
            }
        }
        match self.0.choose(&heading, &[ELICIT_SEND, ELICIT_DECLINE]).await.as_deref() {
            Some(ELICIT_SEND) => Answer::Accept(content),
            Some(_) => Answer::Decline,
            None => Answer::Cancel,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem::mcp::elicit::{Answer, Elicitation, Elicitor, Field, FieldKind};

    /// A terminal that answers from a script and records what it was asked.
    struct Scripted(std::sync::Mutex<Vec<Option<&'static str>>>, std::sync::Mutex<Vec<String>>);

    #[async_trait::async_trait]
    impl Terminal for Scripted {
        async fn choose(&self, question: &str, options: &[&str]) -> Option<String> {
            self.1.lock().unwrap().push(format!("{question} {options:?}"));
            self.0.lock().unwrap().remove(0).map(str::to_string)
        }
        async fn line(&self, prompt: &str) -> Option<String> {
            self.1.lock().unwrap().push(prompt.to_string());
            self.0.lock().unwrap().remove(0).map(|s| format!("{s}\n"))
        }
    }

    fn question() -> Elicitation {
        let field = |name: &str, kind, required| Field { name: name.into(), label: name.into(), kind, required };
        Elicitation {
            server: "s".into(),
            message: "Details?".into(),
            fields: vec![
                field("name", FieldKind::Text, true),
                field("age", FieldKind::Integer, false),
                field("size", FieldKind::Choice(vec!["S".into(), "M".into()]), true),
            ],
        }
    }

    async fn answer(script: Vec<Option<&'static str>>) -> (Answer, Vec<String>) {
        let terminal = Arc::new(Scripted(std::sync::Mutex::new(script), Default::default()));
        let answer = TerminalElicitor(Arc::clone(&terminal) as Arc<dyn Terminal>).elicit(&question()).await;
        let asked = terminal.1.lock().unwrap().clone();
        (answer, asked)
    }

    #[tokio::test]
    async fn the_terminal_answers_a_servers_form_field_by_field() {
        // An empty required name is asked again; a bad number too; an empty optional one is left out.
        let (got, asked) = answer(vec![Some(""), Some("Ada"), Some("x"), Some(""), Some("M"), Some(ELICIT_SEND)]).await;
        let expected = serde_json::Map::from_iter([("name".to_string(), serde_json::json!("Ada")), ("size".to_string(), serde_json::json!("M"))]);
        assert_eq!(got, Answer::Accept(expected));
        assert!(asked[0].starts_with("The MCP server s asks: Details?\nname: "), "{asked:?}");
        assert_eq!(asked.len(), 6);
        assert_eq!(answer(vec![Some("Ada"), Some(""), Some("S"), Some(ELICIT_DECLINE)]).await.0, Answer::Decline);
        // No answer (end of input) cancels.
        assert_eq!(answer(vec![None]).await.0, Answer::Cancel);
    }
}
