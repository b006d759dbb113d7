//! The agent as a command: `tandem.ask` starts a run, `tandem.cancel`,
//! cancelling its work-done progress or `$/cancelRequest` on the ask stop
//! it.
//!
//! Invariant 7: the run is a spawned task. The `tandem.ask` handler only
//! awaits the run's outcome through a oneshot, so the server keeps serving
//! `didChange`, code actions and the client's answers meanwhile. When the
//! client cancels the ask, tower-lsp-server drops the handler's future; the
//! [`CancelOnDrop`] guard inside it then cancels the run's token. One run
//! per workspace at a time: the slot is freed when the run's task really
//! ends, not when the ask is dropped.
//!
//! The live transcript goes out as `tandem/runEvent`
//! `{"runId", "seq", "event"}` notifications, `event` being the
//! [`RunEvent`] JSON of docs/protocol.md.
//!
//! Split by phase: [`registry`] (the runs going on; an applyEdit and a
//! prompt wait their turn behind the run's events, reached by the
//! forwarder in order), this file (the
//! `tandem.ask` request: the run's parts from the host, the spawned run,
//! the answer) and [`forward`] (events to the client).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::ls_types::{Diagnostic, DiagnosticSeverity, Range, Uri};

use super::client::{methods, request_with_timeout, ClientLink};
use super::config::Settings;
use super::documents::{uri_to_path, Documents};
use super::editor::LspEditor;
use crate::host::{RunOutcome, RunStatus};
use crate::protocol::{AskAnswer, AskStarted, ChangedFile};
use crate::host::{RunHandle, StartError, ThreadChoice};
use crate::host::Threads;
use crate::sync::MutexExt;
use crate::workspace::Workspace;

mod forward;
mod registry;

use forward::{file_uri, forward_events, Changed};
pub use registry::Runs;

/// How long a run waits after its `"wait": false` answer, for a client
/// that must get that answer in a read of its own ([`answer_read`]).
const ANSWER_ALONE_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// The argument object of `tandem.ask`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskArgs {
    pub prompt: String,
    #[serde(default)]
    pub text_document: Option<DocumentRef>,
    #[serde(default)]
    pub range: Option<Range>,
    /// Diagnostics the user wants fixed (code actions pass the ones in
    /// their range).
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
    /// Continue this conversation thread; without it, a new thread starts.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// `false`: answer at once with `{"runId"}`; the run's end comes as the
    /// `end` run event. For clients whose `executeCommand` is synchronous
    /// and gives up (eglot waits 10 s, sending no `didChange` meanwhile).
    #[serde(default = "wait_by_default")]
    pub wait: bool,
    /// Files the user attached (`@path`): their text goes to the model.
    #[serde(default)]
    pub attachments: Vec<AttachmentRef>,
    /// Images sent with the prompt (the panel's pasted or dropped
    /// screenshots): `{"data": base64, "name"?}`, the format known by the
    /// bytes (the name only says which one a refusal is about).
    #[serde(default)]
    pub images: Vec<ImageArg>,
    /// The effort this run asks for (the panel's effort picker), over the
    /// settings' `effort`; one the model does not take is refused.
    #[serde(default)]
    pub effort: Option<String>,
    /// A review run (`tandem.review`, never from the client's JSON): the
    /// read-only tools and `report_finding`, its findings diagnostics.
    #[serde(skip)]
    pub review: bool,
}

/// An image of `tandem.ask`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageArg {
    pub data: String,
    #[serde(default)]
    pub name: Option<String>,
}

/// The ask's images, checked; `Err` says which one cannot go and why.
fn ask_images(args: &AskArgs) -> Result<Vec<crate::model::Image>, AskError> {
    let name = |i: usize, image: &ImageArg| image.name.clone().unwrap_or_else(|| format!("image {}", i + 1));
    args.images
        .iter()
        .enumerate()
        .map(|(i, image)| crate::model::Image::from_base64(&image.data, &name(i, image)))
        .collect::<Result<_, _>>()
        .map_err(|why| AskError::InvalidParams(format!("tandem.ask: {why}")))
}

/// A file the user attached to `tandem.ask`, whole or a range of it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentRef {
    pub uri: Uri,
    #[serde(default)]
    pub range: Option<Range>,
}

/// The argument object of `tandem.forget` and `tandem.compact`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadArgs {
    pub thread_id: String,
}

fn wait_by_default() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize)]
pub struct DocumentRef {
    pub uri: Uri,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelArgs {
    pub run_id: String,
}

/// Cancels the run when the `tandem.ask` handler's future is dropped (the
/// client sent `$/cancelRequest`, or the connection went away).
struct CancelOnDrop(CancellationToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Frees the run slot when the run task ends, however it ends.
struct ReleaseOnDrop {
    runs: Arc<Runs>,
    id: String,
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        self.runs.release(&self.id);
    }
}

/// Everything a run needs from the session.
#[derive(Clone)]
pub struct RunEnv {
    pub client: Arc<dyn ClientLink>,
    pub documents: Arc<Documents>,
    pub workspace: Arc<Workspace>,
    pub editor: Arc<LspEditor>,
    /// What the session's runs share (hooks, MCP, the executor, the
    /// checkpoints); each run's parts come from it.
    pub host: Arc<crate::host::Host>,
    pub runs: Arc<Runs>,
    pub settings: Settings,
    /// The client supports `window/workDoneProgress/create`.
    pub work_done_progress: bool,
    /// A `"wait": false` answer must reach this client alone
    /// ([`super::clients::answer_goes_alone`]).
    pub answer_goes_alone: bool,
    /// The client answers `workspace/configuration` (its capability).
    pub configuration: bool,
    /// The session's review findings, published as diagnostics.
    pub findings: Arc<super::findings::Findings>,
}

/// Why `tandem.ask` did not start.
#[derive(Debug)]
pub enum AskError {
    InvalidParams(String),
    Busy(String),
}

/// Run `tandem.ask` to the end and build its answer.
pub async fn ask(env: RunEnv, args: AskArgs, client_token: Option<Value>) -> Result<Value, AskError> {
    if args.prompt.trim().is_empty() {
        return Err(AskError::InvalidParams("tandem.ask needs a non-empty \"prompt\"".into()));
    }
    let mut images = ask_images(&args)?;
    let effort = match &args.effort {
        Some(asked) => Some(crate::host::check_asked_effort(&env.host.settings(), asked).map_err(|why| AskError::InvalidParams(format!("tandem.ask: {why}")))?),
        None => None,
    };
    let (context, attached) = ask_context(&env, &args).await?;
    images.extend(attached);
    let (prompt, context) = mcp_expanded(&env, &args, context).await?;
    let cancel = CancellationToken::new();
    let run_id = env.runs.claim(cancel.clone());
    let review = super::plan_review::LspPlanReview {
        client: Arc::clone(&env.client),
        workspace: Arc::clone(&env.workspace),
        timeout: env.settings.timeouts.prompt(),
        text_input: env.settings.text_input,
    };
    // With `wait: false`, for a client that reads nothing past the answer
    // to its synchronous request in the same read (eglot), the run starts
    // once the client has read the answer and what came with it, or an
    // applyEdit sent right behind the answer could wait for ever. Other
    // clients pay nothing.
    let answer_first = (!args.wait && env.answer_goes_alone).then(|| -> crate::host::StartGate {
        Box::pin(answer_read(Arc::clone(&env.client), run_id.clone(), env.configuration, env.settings.timeouts.request()))
    });
    // What the run changed, as its end event lists it: the answer's edits.
    let changed: Changed = Arc::default();
    let parts = crate::host::RunParts {
        run_id: Some(run_id.clone()),
        // The thread keeps the run's edits as the answer lists them.
        file_names: Some(Arc::new(file_uri)),
        // Its edits are recorded as this run's: threads run at once, and
        // each answer lists its own edits.
        workspace: Some(Arc::new(env.workspace.for_run(&run_id))),
        plan_review: Some(Arc::new(review)),
        // The forwarder reaches each question after the events before it.
        questions_in_stream: true,
        cancel: cancel.clone(),
        context,
        // A pasted image's name is no file: the thread lists files only.
        attachments: attachment_names(&env, &args),
        images,
        effort: effort.map(|e| e.as_str().to_string()),
        in_editor: true,
        start_after: answer_first,
        review: args.review,
        ..crate::host::RunParts::default()
    };
    let choice = match &args.thread_id {
        Some(id) => ThreadChoice::Resume(id.clone()),
        None => ThreadChoice::New,
    };
    // No model configured: the run ends at once, saying what to set.
    let handle = match env.host.start(&choice, prompt, parts) {
        Ok(handle) => handle,
        Err(err) => {
            env.runs.release(&run_id);
            return Err(match err {
                StartError::Busy(message) => AskError::Busy(format!("Tandem is already running an agent on this thread: {message}")),
                StartError::Elsewhere(message) => AskError::Busy(message),
                StartError::NoThread(message) | StartError::NoModel(message) => AskError::InvalidParams(message),
            });
        }
    };
    let RunHandle { thread_id, events: mut events_rx, ending, recorder, sandbox_notice, .. } = handle;
    if args.review {
        // A new review on the thread replaces its findings.
        env.findings.clear_thread(&thread_id);
        events_rx = tee_findings(events_rx, Arc::clone(&env.findings), thread_id.clone());
    }
    let started_id = run_id.clone();
    let release = ReleaseOnDrop { runs: Arc::clone(&env.runs), id: run_id.clone() };
    // A `$/cancelRequest` on a waiting ask cancels its run; an ask with
    // `wait: false` has answered already, so nothing is dropped.
    let _cancel_on_drop = args.wait.then(|| CancelOnDrop(cancel.clone()));
    if let Some(notice) = sandbox_notice {
        // Once per run, where the user looks: the editor's message area.
        env.client.notify(methods::SHOW_MESSAGE, json!({"type": 2, "message": format!("Tandem: {notice}")})).await;
    }
    let progress = start_progress(&env, &run_id, &args.prompt, client_token).await;

    let questions = ending.sender().question_turns();
    // The forwarder completes the checkpoint at the `end` event, before the
    // client sees it: a client undoing the run at once finds it ended.
    let forwarder = tokio::spawn(forward_events(
        Arc::clone(&env.client),
        recorder,
        (run_id.clone(), thread_id.clone()),
        events_rx,
        progress.clone(),
        questions,
        Arc::clone(&changed),
    ));
    let (outcome_tx, outcome_rx) = oneshot::channel();
    tokio::spawn(async move {
        // The run slot is freed when the run really ends (the thread is
        // idle again by then, its lock let go): a follow-up sent on the
        // answer, here or in another window, finds the thread free.
        let _release = release;
        let _ = outcome_tx.send(ending.finished().await.outcome);
    });

    let finished_thread = thread_id.clone();
    let finished = async move {
        let outcome = outcome_rx.await.unwrap_or_else(|_| RunOutcome {
            status: RunStatus::Failed,
            text: "the agent run ended without an outcome".into(),
            turns: 0,
            usage: Default::default(),
            cost_usd: None,
            thread_id: String::new(),
        });
        let _ = forwarder.await;
        let changed = changed.locked().take().unwrap_or_default();
        answer(&env, (run_id, finished_thread), &outcome, &changed)
    };
    if !args.wait {
        tokio::spawn(finished);
        return Ok(to_json(&AskStarted { run_id: started_id, thread_id }));
    }
    Ok(to_json(&finished.await))
}

/// A review run's events, each finding also handed to the session's
/// findings (diagnostics) as it passes, in order.
fn tee_findings(
    mut events: tokio::sync::mpsc::UnboundedReceiver<crate::protocol::RunEvent>,
    findings: Arc<super::findings::Findings>,
    thread_id: String,
) -> tokio::sync::mpsc::UnboundedReceiver<crate::protocol::RunEvent> {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let crate::protocol::RunEvent::Finding { finding } = &event {
                findings.add(&thread_id, finding.clone());
            }
            if sender.send(event).is_err() {
                break;
            }
        }
    });
    receiver
}

/// For a client that must get a `"wait": false` answer alone (eglot 1.9,
/// [`super::clients::answer_goes_alone`]): done once the client has surely
/// read the answer and handled what came with it; the run starts then.
///
/// A pause first, so that the answer usually comes in a read of its own.
/// An editor busy for longer reads the answer and what follows in one
/// piece, and handles nothing after the answer until more output arrives.
/// So a `workspace/configuration` request follows the pause, and while it
/// is unanswered a log message (eglot ignores them) 1 s later, then at
/// doubling intervals up to every 30 s, makes the client read on: one read
/// together with the rest on a stalled machine is followed by another.
/// The answer says the client handled everything sent before the request.
/// A client that does not take the request gets the pause alone; one that
/// does not answer within `timeout`, the run anyway.
///
/// Nothing unasked goes to the client once the run has started. eglot asks
/// "Proceed?" about an applyEdit inside its process filter, and Emacs 28's
/// jsonrpc (1.0.14) runs that filter again for output that arrives while
/// the question shows, inserting it where the message being handled ends,
/// ahead of any bytes already waiting. Log messages that went on while the
/// run lasted arrived during the question: when half of the one before was
/// already waiting, the reader never found a message start again, and the
/// run's `end` (and all after) went unread.
async fn answer_read(client: Arc<dyn ClientLink>, run_id: String, probe: bool, timeout: std::time::Duration) {
    tokio::time::sleep(ANSWER_ALONE_PAUSE).await;
    if !probe {
        return;
    }
    let nudges = async {
        for delay in nudge_delays() {
            tokio::time::sleep(delay).await;
            client.notify(methods::LOG_MESSAGE, json!({"type": 4, "message": format!("Tandem: {run_id} is starting")})).await;
        }
    };
    let read = request_with_timeout(&*client, methods::CONFIGURATION, json!({"items": [{"section": "tandem"}]}), timeout);
    tokio::select! {
        answer = read => match answer {
            // An error answer is an answer: the request was read.
            Ok(_) | Err(super::client::ClientError::Failed(_)) => {}
            Err(err) => tracing::warn!(%err, run_id, "the editor did not answer after the run's answer; the run starts anyway"),
        },
        () = nudges => {}
    }
}

/// When the log messages of [`answer_read`] go: 1 s, then doubling, at
/// most 30 s apart.
fn nudge_delays() -> impl Iterator<Item = std::time::Duration> {
    std::iter::successors(Some(1u64), |s| Some((s * 2).min(30))).map(std::time::Duration::from_secs)
}

/// `tandem.threads`: `[{"threadId", "title", "lastActivity", "turns", "tokens", "costUsd"}]`.
pub fn threads_answer(threads: &Threads) -> Value {
    let list: Vec<Value> = threads
        .list()
        .into_iter()
        .map(|t| {
            let last = chrono::DateTime::from_timestamp_millis(t.updated_ms as i64).map(|d| d.to_rfc3339()).unwrap_or_default();
            json!({
                "threadId": t.id,
                "title": t.title,
                "lastActivity": last,
                "runs": t.totals.runs,
                "turns": t.totals.turns,
                "tokens": {"input": t.totals.usage.input_tokens, "output": t.totals.usage.output_tokens,
                           "cacheRead": t.totals.usage.cache_read_input_tokens, "cacheWrite": t.totals.usage.cache_creation_input_tokens},
                "costUsd": t.totals.cost_usd,
            })
        })
        .collect();
    json!({"threads": list})
}

/// `tandem.compact`: summarise an idle thread now.
pub async fn compact(env: RunEnv, thread_id: &str) -> Result<Value, AskError> {
    let cancel = CancellationToken::new();
    let run_id = env.runs.claim(cancel.clone());
    let _release = ReleaseOnDrop { runs: Arc::clone(&env.runs), id: run_id.clone() };
    let (before, after) = env.host.compact(thread_id, cancel).await.map_err(|err| match err {
        StartError::Busy(message) | StartError::Elsewhere(message) => AskError::Busy(message),
        StartError::NoThread(message) | StartError::NoModel(message) => AskError::InvalidParams(message),
    })?;
    Ok(json!({"threadId": thread_id, "beforeTokens": before, "afterTokens": after}))
}

/// The `tandem.ask` answer, one entry per edit in the order they were made.
fn answer(env: &RunEnv, (run_id, thread_id): (String, String), outcome: &RunOutcome, changed: &[ChangedFile]) -> AskAnswer {
    AskAnswer {
        summary: env.host.edits_summary(changed),
        run_id,
        thread_id,
        status: outcome.status,
        text: outcome.text.clone(),
        edits: crate::host::run_edits(changed, &file_uri),
        cost_usd: outcome.cost_usd,
        usage: outcome.usage,
    }
}

/// An answer as the client gets it.
fn to_json<T: serde::Serialize>(answer: &T) -> Value {
    serde_json::to_value(answer).unwrap_or_else(|err| json!({"error": format!("cannot serialize the answer: {err}")}))
}

/// Begin work-done progress: the client's own token from the request, or
/// one we create when the client supports `window/workDoneProgress/create`.
async fn start_progress(env: &RunEnv, run_id: &str, prompt: &str, client_token: Option<Value>) -> Option<Value> {
    let token = match client_token {
        Some(token) => token,
        None if env.work_done_progress => {
            let token = json!(format!("tandem/{run_id}"));
            let created = request_with_timeout(
                &*env.client,
                methods::WORK_DONE_PROGRESS_CREATE,
                json!({"token": token}),
                env.settings.timeouts.request(),
            )
            .await;
            if let Err(err) = created {
                tracing::warn!(%err, "window/workDoneProgress/create failed; running without progress");
                return None;
            }
            token
        }
        None => return None,
    };
    env.runs.set_progress_token(run_id, token.clone());
    let title: String = prompt.chars().take(80).collect();
    let begin = json!({"token": token, "value": {"kind": "begin", "title": "Tandem", "message": title, "cancellable": true}});
    env.client.notify(methods::PROGRESS, begin).await;
    Some(token)
}

/// The attachments as the user named them: the file's path in the
/// workspace, with its lines when a range was attached.
fn attachment_names(env: &RunEnv, args: &AskArgs) -> Vec<String> {
    args.attachments
        .iter()
        .filter_map(|attached| {
            let path = uri_to_path(&attached.uri)?;
            let name = env.workspace.display_path(&path);
            Some(match attached.range {
                Some(r) if r.start.line == r.end.line => format!("{name}:{}", r.start.line + 1),
                Some(r) => format!("{name}:{}-{}", r.start.line + 1, r.end.line + 1),
                None => name,
            })
        })
        .collect()
}

/// The prompt and context with what the MCP servers give them, as
/// `tandem ask` and ACP expand a prompt ([`crate::mcp::McpManager::expand`]):
/// `/SERVER:PROMPT ARGS` becomes the server's prompt, each `@SERVER:URI`
/// resource's text joins the context. `Err`: the prompt or resource that
/// cannot be had; the run does not start and nothing reaches the model.
async fn mcp_expanded(env: &RunEnv, args: &AskArgs, context: Option<String>) -> Result<(String, Option<String>), AskError> {
    // A review's prompt is Tandem's own text, not the user's words.
    let Some(mcp) = env.host.mcp().filter(|_| !args.review) else { return Ok((args.prompt.clone(), context)) };
    // A cancelled ask drops this future, and the reads with it.
    let cancel = CancellationToken::new();
    mcp.expand(args.prompt.clone(), context, &[], &cancel).await.map_err(|why| AskError::InvalidParams(format!("tandem.ask: {why}")))
}

/// The selection's context and the attachments', one after the other;
/// the attached images (`@shot.png`) apart, to go as images.
async fn ask_context(env: &RunEnv, args: &AskArgs) -> Result<(Option<String>, Vec<crate::model::Image>), AskError> {
    let mut attachments = Vec::new();
    for attached in &args.attachments {
        let Some(path) = uri_to_path(&attached.uri) else {
            return Err(AskError::InvalidParams(format!("tandem.ask: attachment {} is not a file: URI", attached.uri.as_str())));
        };
        let lines = attached.range.map(|r| (r.start.line as usize + 1, r.end.line as usize + 1));
        attachments.push(crate::host::attachments::Attachment { path, lines });
    }
    let images = env.host.attached_images(&mut attachments).await.map_err(|why| AskError::InvalidParams(format!("tandem.ask: {why}")))?;
    let parts: Vec<String> = [selection_context(env, args), env.host.attachments_context(&attachments).await].into_iter().flatten().collect();
    Ok(((!parts.is_empty()).then(|| parts.join("\n")), images))
}

/// The editor context for the model: the file, the selected text and the
/// diagnostics the user pointed at.
pub(crate) fn selection_context(env: &RunEnv, args: &AskArgs) -> Option<String> {
    let document = args.text_document.as_ref()?;
    let mut out = String::new();
    let display = uri_to_path(&document.uri)
        .map(|path| env.workspace.display_path(&path))
        .unwrap_or_else(|| document.uri.as_str().to_string());
    out.push_str(&format!("The user is looking at {display}"));
    if env.documents.snapshot_uri(&document.uri).is_some() {
        out.push_str(" (open in the editor; read_file shows its unsaved text)");
    }
    out.push_str(".\n");
    if let Some(range) = args.range {
        let selected = env.documents.text_in_range(&document.uri, range).unwrap_or_default();
        let selected: String = selected.chars().take(20_000).collect();
        out.push_str(&format!(
            "Selection (lines {}-{}):\n```\n{}\n```\n",
            range.start.line + 1,
            range.end.line + 1,
            selected.trim_end_matches(['\n', '\r'])
        ));
    }
    if !args.diagnostics.is_empty() {
        out.push_str("Diagnostics:\n");
        for diagnostic in args.diagnostics.iter().take(50) {
            let severity = match diagnostic.severity {
                Some(DiagnosticSeverity::ERROR) => "error",
                Some(DiagnosticSeverity::WARNING) => "warning",
                Some(DiagnosticSeverity::INFORMATION) => "info",
                Some(DiagnosticSeverity::HINT) => "hint",
                _ => "diagnostic",
            };
            let source = diagnostic.source.as_deref().map(|s| format!(" [{s}]")).unwrap_or_default();
            out.push_str(&format!(
                "- line {}: {severity}{source}: {}\n",
                diagnostic.range.start.line + 1,
                diagnostic.message
            ));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::nudge_delays;

    #[test]
    fn nudges_go_on_until_the_answer_at_most_30_s_apart() {
        let secs: Vec<u64> = nudge_delays().take(8).map(|d| d.as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
