//! The host drives the run: [`Host::start`] checks the thread out with
//! the one cross-process run lock every front end takes
//! ([`Threads::check_out`]: a thread another window, another `tandem
//! acp` or a `tandem chat` is running is refused, and one another process
//! continued since is read again first), builds the run's parts and runs
//! the loop in a task of its own. The front end gets a [`RunHandle`]: the
//! run's events to show, its outcome to await, and what to cancel. The
//! thread is checked in, idle again, before the outcome is given, however
//! the run ends (a panic in it too), so a follow-up sent on the answer
//! finds it free.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Host, RunParts, ThreadChoice};
use crate::agent::{self, EventSender, RunEvent, RunOutcome, RunStatus};
use crate::checkpoint::RunRecorder;
use crate::thread::threads::{ThreadError, Threads};
use crate::thread::Thread;
use crate::tools::ToolContext;

/// Why a run did not start. Each message is for the user and names what
/// to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartError {
    /// The thread is running here already (another ask in this session).
    Busy(String),
    /// Another process runs the thread (another window, `tandem acp`,
    /// `tandem chat`): the run lock is theirs.
    Elsewhere(String),
    /// No such thread, or it cannot be read.
    NoThread(String),
    /// No model provider is configured (the message names what to set).
    NoModel(String),
}

impl StartError {
    fn from_thread(err: ThreadError) -> Self {
        match err {
            ThreadError::Busy { .. } => StartError::Busy(err.to_string()),
            ThreadError::Elsewhere { .. } => StartError::Elsewhere(err.to_string()),
            ThreadError::Unknown(message) => StartError::NoThread(message),
        }
    }

    pub fn message(&self) -> &str {
        match self {
            StartError::Busy(m) | StartError::Elsewhere(m) | StartError::NoThread(m) | StartError::NoModel(m) => m,
        }
    }
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for StartError {}

/// One run, as its front end holds it (take it apart: the events go to
/// whatever shows them, the ending to whatever awaits the outcome).
pub struct RunHandle {
    pub run_id: String,
    pub thread_id: String,
    /// The run's events, the last one [`RunEvent::End`].
    pub events: mpsc::UnboundedReceiver<RunEvent>,
    /// Cancels the run (its tools and shell commands stop).
    pub cancel: CancellationToken,
    /// Said once when the run's shell commands run without a sandbox.
    pub sandbox_notice: Option<String>,
    /// The run's checkpoint (`None`: not recorded), for a front end that
    /// completes it when it shows the `end` event (before the user can
    /// undo; [`RunRecorder::finish`] counts once).
    pub recorder: Option<Arc<RunRecorder>>,
    /// The context window of the run's model, for a front end that shows
    /// how full it is.
    pub context_window: u64,
    pub ending: RunEnding,
}

/// The end of a run, to await.
pub struct RunEnding {
    sender: EventSender,
    outcome: tokio::task::JoinHandle<(RunOutcome, u64)>,
}

/// How a run ended, with the thread's context size after it.
pub struct Finished {
    pub outcome: RunOutcome,
    /// Tokens the thread's context holds now.
    pub context_tokens: u64,
}

impl RunEnding {
    /// A sender of the run's event stream, for a front end that puts its
    /// own events among the run's (`tandem chat`'s notes).
    pub fn sender(&self) -> EventSender {
        self.sender.clone()
    }

    /// Wait for the run to end. The thread is idle again by then.
    pub async fn finished(self) -> Finished {
        drop(self.sender);
        match self.outcome.await {
            Ok((outcome, context_tokens)) => Finished { outcome, context_tokens },
            Err(err) => Finished {
                outcome: RunOutcome {
                    status: RunStatus::Failed,
                    text: format!("the agent run ended without an outcome ({err})"),
                    turns: 0,
                    usage: Default::default(),
                    cost_usd: None,
                    thread_id: String::new(),
                },
                context_tokens: 0,
            },
        }
    }
}

/// Gives the thread back to [`Threads`] when the run's task ends, however
/// it ends.
struct CheckIn {
    threads: Arc<Threads>,
    thread: Option<Thread>,
}

impl Drop for CheckIn {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.threads.check_in(thread);
        }
    }
}

impl Host {
    /// Check the thread `choice` names out (its run lock held until the
    /// run ends), build the run of `prompt` with the front end's `parts`,
    /// and start it. The thread is checked in again when the run ends; a
    /// run that cannot start checks it in at once.
    pub fn start(&self, choice: &ThreadChoice, prompt: impl Into<String>, mut parts: RunParts) -> Result<RunHandle, StartError> {
        let run_id = parts.run_id.clone().unwrap_or_else(super::new_run_id);
        let thread = self.check_out(choice, &run_id)?;
        let thread_id = thread.id.clone();
        let checked_out = CheckIn { threads: Arc::clone(&self.threads), thread: Some(thread) };
        let start_after = parts.start_after.take();
        let file_names = parts.file_names.take();
        let workspace = Arc::clone(&self.workspace);
        let summarise = move |changed: &[crate::protocol::ChangedFile]| super::summary_of(&workspace, changed);
        let cancel = parts.cancel.clone();
        let (sender, events) = agent::event_channel();
        let handle_sender = sender.clone();
        let run = match self.run(prompt, parts, Some((thread_id.clone(), run_id.clone()))) {
            Ok(run) => run,
            // No model configured: the run ends at once, saying what to set.
            Err(text) => {
                drop(checked_out);
                let _ = sender.send(RunEvent::End { status: RunStatus::Failed, text: text.clone(), usage: Default::default(), cost_usd: None, thread_id: None, run_id: Some(run_id.clone()), changed_files: Vec::new(), effects: Vec::new() });
                let outcome = tokio::spawn(async move { (failed(&text), 0) });
                let ending = RunEnding { sender: handle_sender, outcome };
                return Ok(RunHandle { run_id, thread_id, events, cancel, sandbox_notice: None, recorder: None, context_window: 0, ending });
            }
        };
        let recorder = run.end.recorder();
        let checkpoint = recorder.clone();
        let sandbox_notice = run.request.sandbox_notice.clone();
        let context_window = run.config.context_window;
        let gate_cancel = cancel.clone();
        let outcome = tokio::spawn(async move {
            let mut checked_out = checked_out;
            if let Some(gate) = start_after {
                // A run cancelled meanwhile starts at once, and ends.
                tokio::select! {
                    () = gate => {}
                    () = gate_cancel.cancelled() => {}
                }
            }
            let Some(thread) = checked_out.thread.as_mut() else {
                unreachable_outcome(&sender);
                return (failed("the thread is gone"), 0);
            };
            let changed = sender.clone();
            let outcome = agent::run_thread(&*run.provider, &run.executor, run.ctx, thread, &run.config, run.request, sender).await;
            let context_tokens = thread.context_tokens;
            // The checkpoint is completed, interrupted writes cleaned up,
            // and the thread idle again (its lock let go) before the outcome
            // is given.
            drop(run.end);
            if let Some(name) = file_names {
                // What the run changed, as its end listed it.
                let changed = changed.changed_files();
                let edits = super::run_edits(&changed, &*name).iter().filter_map(|edit| serde_json::to_value(edit).ok()).collect();
                thread.record_edits(edits, summarise(&changed), checkpoint.as_ref().and_then(|r| r.checkpoint_id()));
                thread.commit();
            } else if let Some(id) = checkpoint.as_ref().and_then(|r| r.checkpoint_id()) {
                // A front end that lists no edits (the terminal, ACP):
                // the run's checkpoint alone, so that a resumed thread can
                // say the run was undone since, by whichever process.
                thread.record_checkpoint(id);
                thread.commit();
            }
            drop(checked_out);
            (outcome, context_tokens)
        });
        let ending = RunEnding { sender: handle_sender, outcome };
        Ok(RunHandle { run_id, thread_id, events, cancel, sandbox_notice, recorder, context_window, ending })
    }

    /// Compact an idle thread now: the estimated context size before and
    /// after, in tokens.
    pub async fn compact(&self, thread_id: &str, cancel: CancellationToken) -> Result<(u64, u64), StartError> {
        let run_id = super::new_run_id();
        let thread = self.check_out(&ThreadChoice::Resume(thread_id.to_string()), &run_id)?;
        let mut checked_out = CheckIn { threads: Arc::clone(&self.threads), thread: Some(thread) };
        let (provider, config) = self.model(None).map_err(StartError::NoModel)?;
        let ctx = ToolContext { cancel, ..ToolContext::new(Arc::clone(&self.workspace)) };
        let (events, _ignored) = agent::event_channel();
        let Some(thread) = checked_out.thread.as_mut() else { return Err(StartError::NoThread("the thread is gone".into())) };
        agent::compact_thread(&*provider, &ctx, thread, &config, &events).await.map_err(|e| StartError::NoModel(format!("the compaction failed: {e}")))
    }

    fn check_out(&self, choice: &ThreadChoice, run_id: &str) -> Result<Thread, StartError> {
        let id = match choice {
            ThreadChoice::New => None,
            ThreadChoice::NewWithId(_) => Some(self.open_thread(choice).map_err(StartError::NoThread)?),
            ThreadChoice::Continue => Some(self.latest_thread()?),
            ThreadChoice::Resume(id) => Some(id.clone()),
        };
        self.threads.check_out(id.as_deref(), run_id).map_err(StartError::from_thread)
    }

    pub(super) fn latest_thread(&self) -> Result<String, StartError> {
        let Some(store) = &self.store else {
            return Err(StartError::NoThread("cannot find the user's data folder (set XDG_DATA_HOME), so there are no saved threads".into()));
        };
        store.latest().ok_or_else(|| StartError::NoThread("there is no saved conversation in this folder yet: start one with tandem ask PROMPT".into()))
    }
}

fn failed(text: &str) -> RunOutcome {
    RunOutcome { status: RunStatus::Failed, text: text.to_string(), turns: 0, usage: Default::default(), cost_usd: None, thread_id: String::new() }
}

fn unreachable_outcome(events: &EventSender) {
    let _ = events.send(RunEvent::End { status: RunStatus::Failed, text: "the thread is gone".into(), usage: Default::default(), cost_usd: None, thread_id: None, run_id: None, changed_files: Vec::new(), effects: Vec::new() });
}
