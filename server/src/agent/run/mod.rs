//! The loop: send the history, the tool definitions and the system prompt
//! to the provider → stream the answer → run the tool calls → send the
//! results → repeat until the model answers without tool calls, the turn
//! limit is reached, a provider error ends the run, or it is cancelled.
//!
//! Tool calls run through [`ToolRunner`]: consecutive concurrency-safe calls
//! run together (at most [`MAX_CONCURRENT_TOOLS`] at once), any other call
//! runs alone, and results go back in call order. A safe call at the head of
//! the message starts as soon as its block is complete in the stream, before
//! the model has finished talking ("early start").

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::events::{EventSender, RunEvent, RunStatus, Usage};
use super::instructions;
use super::sub_agent;
use crate::sync::MutexExt;
use super::prompt::{system_prompt, PromptEnv};
use super::provider::{ContentBlock, Message, ModelRequest, ModelResponse, Provider, ProviderError, Role, StreamEvent};
use super::{RunOutcome, RunRequest};
use crate::hooks::{HookEvent, HookOutcome, Hooks};
use crate::thread::context::{
    compacted_history, estimate_messages, estimate_tokens, keep_recent_images, plan_stubs, summary_request, KEEP_RECENT_IMAGES, KEEP_RECENT_RESULTS,
    REREAD_RECENT_FILES, SUMMARY_SYSTEM,
};
use crate::thread::loops::{LoopDetector, LoopVerdict};
use crate::thread::{new_thread_id, Thread, ContextConfig};
use crate::tools::executor::FatalToolError;
use crate::tools::ports::tasks::{TaskEnding, TaskInfo, TaskNews, TaskStatus};
use crate::tools::todo::TodoItem;
use crate::tools::{Executor, PreparedCall, ToolCall, ToolContext, ToolDefinition, ToolResult};

mod compaction;
mod driver;
mod scheduler;

use scheduler::{stream_turn, ToolRunner};

/// Safe calls running at the same time, at most.
pub const MAX_CONCURRENT_TOOLS: usize = 10;

/// Model turns when the request sets no limit: a run always ends.
pub const DEFAULT_MAX_TURNS: usize = 100;

/// The answer to calls the turn limit stops.
pub const TURN_LIMIT_RESULT: &str = "Tool call not executed: turn limit reached";

/// How many times in one run a `Stop` hook may send the agent back to
/// work; the next time it asks, the run ends (failed) instead, so a hook
/// that is never satisfied cannot keep the agent going forever.
pub const MAX_STOP_CONTINUATIONS: usize = 5;

/// How long cancelled tools get to stop by themselves (a shell command kills
/// its process group on `ctx.cancel`) before their tasks are aborted.
const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// Run the agent to the end in a new, unsaved thread that uses the
/// workspace's own read ledger. Events stream
/// through `events` as they happen, the last one being [`RunEvent::End`];
/// cancelling `ctx.cancel` stops the stream and the running tools.
pub async fn run(
    provider: &dyn Provider,
    executor: &Executor,
    ctx: ToolContext,
    request: RunRequest,
    events: EventSender,
) -> RunOutcome {
    let mut thread = Thread::new(new_thread_id(), ctx.workspace.root().to_path_buf());
    // A one-off run reads and writes through the workspace's own ledger.
    thread.ledger = ctx.workspace.ledger_handle();
    // The context window and prices are the model's the run asks for.
    let config = ContextConfig::for_model(request.model.as_deref().unwrap_or(provider.model()));
    run_thread(provider, executor, ctx, &mut thread, &config, request, events).await
}

/// Run the agent to the end as the next run of `thread`: its
/// history, system prompt, read ledger and activated tools carry over, and
/// what happens is appended to it (and to its thread file, at each turn's
/// end). The context is kept inside `config.context_window`.
pub async fn run_thread(
    provider: &dyn Provider,
    executor: &Executor,
    ctx: ToolContext,
    thread: &mut Thread,
    config: &ContextConfig,
    request: RunRequest,
    events: EventSender,
) -> RunOutcome {
    // Tools see this thread's reads only.
    // An edit the editor confirms late is said as the run's event, while
    // the run's stream is open (a late edit's watch may outlive the run).
    let late = events.downgrade();
    let effect_changes: crate::workspace::EffectChanges = Arc::new(move |call_id: &str, effect| {
        if let Some(events) = late.upgrade() {
            events.send(RunEvent::EffectChanged { call_id: call_id.to_string(), effect });
        }
    });
    let mut workspace = ctx.workspace.with_ledger(Arc::clone(&thread.ledger)).reporting_changes(effect_changes);
    // A front end that reaches the events in order (the editor's) gets
    // each edit to its buffers behind the events sent before it.
    if ctx.run.questions_in_stream {
        workspace = workspace.ordered_by(events.edit_turn());
    }
    let workspace = Arc::new(workspace);
    // A sub-agent works for its parent's thread: the background tasks it
    // starts are announced there, and its todo list is its own.
    let owner = ctx.thread_id.is_empty() || ctx.thread_id == thread.id;
    let thread_id = if owner { thread.id.clone() } else { ctx.thread_id.clone() };
    let ctx = ToolContext { workspace, thread_id, ..ctx };
    let _watching_tasks = if owner { keep_side_state(&ctx, thread, &events) } else { None };
    // Deferred tools the thread activated stay active in its next runs,
    // and so do the user's "Always allow" answers.
    for name in &thread.activated_tools {
        ctx.run.activate(name);
    }
    ctx.run.grants.add(thread.grants.iter().cloned());
    let mut state = RunState { turns: 0, usage: Usage::default(), cost_usd: None, children_usage: Arc::default() };
    // Sub-agents (the agent tool, forked skills) run beside the loop, with
    // its provider; they end when the run does.
    let (child_tx, child_rx) = mpsc::unbounded_channel();
    *ctx.run.children.locked() = Some(Arc::new(sub_agent::ChildChannel(child_tx)));
    // What the run waits for (a tool source still starting) is an event.
    let waiting = events.clone();
    *ctx.run.waiting.locked() =
        Some(Arc::new(move |what: &str| _ = waiting.send(RunEvent::Waiting { what: what.to_string() })));
    // Its questions wait their turn in its events, for a front end that
    // answers them there.
    if ctx.run.questions_in_stream {
        *ctx.run.questions.locked() = Some(events.question_turn());
    }
    let children_usage = Arc::clone(&state.children_usage);
    let children = sub_agent::serve(provider, executor, child_rx, &events, &children_usage);
    let driven = {
        let model = request.model.as_deref();
        let mut driver = Driver { provider, model, thread, config, events: &events, state: &mut state, ctx: &ctx };
        tokio::select! {
            driven = driver.drive(executor, &request) => driven,
            () = children => Err(Stop::Fatal(FatalToolError("the sub-agent service stopped".to_string()))),
        }
    };
    *ctx.run.children.locked() = None;
    *ctx.run.waiting.locked() = None;
    *ctx.run.questions.locked() = None;
    *ctx.run.todo_notice.locked() = None;
    if owner {
        save_side_state(&ctx, thread);
    }
    // Sub-agents' turns count in the run's totals, each priced as the
    // model it asked for.
    let children = *state.children_usage.locked();
    state.add(&children.usage, children.cost_usd);
    let (status, text) = match driven {
        Ok(end) => end,
        Err(Stop::Cancelled) => (RunStatus::Cancelled, "The run was cancelled.".to_string()),
        Err(Stop::Provider(err)) => (RunStatus::Failed, err.to_string()),
        Err(Stop::Fatal(FatalToolError(message))) => (RunStatus::Failed, format!("A tool failed fatally: {message}")),
        Err(Stop::Loop(line)) => (RunStatus::Loop, line),
    };
    thread.set_grants(ctx.run.grants.rules());
    thread.end_run(status, (status != RunStatus::Completed).then(|| text.clone()), state.usage, state.cost_usd);
    thread.commit();
    // Only a saved thread can be named later.
    let thread_id = if thread.is_saved() { thread.id.clone() } else { String::new() };
    let end_thread = (!thread_id.is_empty()).then(|| thread_id.clone());
    // An edit whose outcome was unknown and that has landed since is said
    // now, before the end lists what the run changed.
    if owner {
        ctx.workspace.settle_late_edits();
    }
    let effects = events.changed_files();
    let _ = events.send(RunEvent::End {
        status,
        text: text.clone(),
        usage: state.usage,
        cost_usd: state.cost_usd,
        thread_id: end_thread,
        run_id: request.run_id.clone(),
        changed_files: changed_files(&ctx.workspace, &effects),
        effects,
    });
    RunOutcome { status, text, turns: state.turns, usage: state.usage, cost_usd: state.cost_usd, thread_id }
}

/// The files `effects` changed (an edit that landed, a command's change),
/// as the workspace shows them, sorted, once each.
fn changed_files(workspace: &crate::workspace::Workspace, effects: &[crate::protocol::ChangedFile]) -> Vec<String> {
    let changed: std::collections::BTreeSet<String> =
        effects.iter().filter(|c| c.effect.status.landed()).map(|c| workspace.display_path(&c.effect.path)).collect();
    changed.into_iter().collect()
}

/// The thread's todo list and background tasks for this run: the list
/// loaded into the run's scope, each change of it an event, and the
/// thread's tasks (those of an earlier session too) known to the
/// session's tasks, their starts and ends events of the run while it lasts.
fn keep_side_state(ctx: &ToolContext, thread: &Thread, events: &EventSender) -> Option<Box<dyn Send + Sync>> {
    *ctx.run.todos.locked() = thread.todos.clone();
    let todo_events = events.clone();
    *ctx.run.todo_notice.locked() = Some(Arc::new(move |todos: &[TodoItem]| _ = todo_events.send(RunEvent::Todo { todos: todos.to_vec() })));
    let finding_events = events.clone();
    *ctx.run.finding_notice.locked() = Some(Arc::new(move |finding: &crate::protocol::Finding| _ = finding_events.send(RunEvent::Finding { finding: finding.clone() })));
    let tasks = ctx.tasks.as_ref()?;
    tasks.restore(&thread.id, &thread.tasks);
    let task_events = events.clone();
    let thread_id = thread.id.clone();
    Some(tasks.watch(Arc::new(move |news: &TaskNews| {
        let task = match news {
            TaskNews::Started(task) => task,
            TaskNews::Ended(ending) => &ending.task,
        };
        if task.thread == thread_id {
            let _ = task_events.send(super::events::task_event(news));
        }
    })))
}

/// Keep the run's todo list and the thread's tasks with the thread.
fn save_side_state(ctx: &ToolContext, thread: &mut Thread) {
    thread.set_todos(ctx.run.todos.locked().clone());
    let findings = ctx.run.findings.locked().clone();
    if ctx.run.review || !findings.is_empty() {
        thread.set_findings(findings);
    }
    if let Some(tasks) = &ctx.tasks {
        let mine: Vec<TaskInfo> = tasks.list().into_iter().filter(|t| t.thread == thread.id).collect();
        thread.set_tasks(&mine);
    }
}

/// What the model is told of a background task that ended without its
/// asking (by itself, stopped by the user, or lost with an earlier session).
fn ending_notice(ending: &TaskEnding) -> String {
    let task = &ending.task;
    let command = task.command.lines().next().unwrap_or_default();
    let mut text = match task.status {
        TaskStatus::Lost => format!("[Background task {} (`{command}`) ended with the Tandem session that ran it: it does not run any more. Start it again if it is still needed.", task.id),
        TaskStatus::Stopped => format!("[The user stopped background task {} (`{command}`); it and its processes have ended.", task.id),
        _ => format!("[Background task {} (`{command}`) {}.", task.id, task.describe_status()),
    };
    if !ending.last_lines.is_empty() {
        text.push_str(" Its last lines:\n");
        text.push_str(&ending.last_lines.join("\n"));
        text.push_str(&format!("\n(task_output {{\"task_id\": \"{}\"}} reads what you have not read yet.)", task.id));
    }
    text.push(']');
    text
}

/// Compact a thread now (`tandem.compact`, `tandem ask --compact`):
/// returns the estimated context size before and after, in tokens.
pub async fn compact_thread(
    provider: &dyn Provider,
    ctx: &ToolContext,
    thread: &mut Thread,
    config: &ContextConfig,
    events: &EventSender,
) -> Result<(u64, u64), ProviderError> {
    let mut state = RunState { turns: 0, usage: Usage::default(), cost_usd: None, children_usage: Arc::default() };
    let mut driver = Driver { provider, model: None, thread, config, events, state: &mut state, ctx };
    match driver.compact("requested by the user").await {
        Ok(sizes) => Ok(sizes),
        Err(Stop::Provider(err)) => Err(err),
        Err(_) => Err(ProviderError::Config("the compaction was cancelled".into())),
    }
}

struct RunState {
    turns: usize,
    /// This run's own model turns (and, at the end, its sub-agents').
    usage: Usage,
    cost_usd: Option<f64>,
    /// Its sub-agents' turns.
    children_usage: Arc<std::sync::Mutex<sub_agent::ChildTotals>>,
}

impl RunState {
    /// The usage so far, the sub-agents' included.
    fn total_usage(&self) -> Usage {
        let mut total = self.usage;
        total.add(&self.children_usage.locked().usage);
        total
    }

    fn add(&mut self, usage: &Usage, cost_usd: Option<f64>) {
        self.usage.add(usage);
        if let Some(cost) = cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + cost);
        }
    }
}

enum Stop {
    Cancelled,
    Provider(ProviderError),
    Fatal(FatalToolError),
    /// The loop detector ended the run; the line for the user.
    Loop(String),
}

/// The user's first message: editor context (selection, diagnostics), then
/// the prompt, then what the `UserPromptSubmit` hooks added.
fn first_message(request: &RunRequest, hook_context: &[String]) -> Message {
    let mut text = match request.context.as_deref().filter(|c| !c.trim().is_empty()) {
        Some(context) => format!("{context}\n\n{}", request.prompt),
        None => request.prompt.clone(),
    };
    if !hook_context.is_empty() {
        text.push_str("\n\n[Context added by the user's UserPromptSubmit hook]\n");
        text.push_str(&hook_context.join("\n"));
    }
    let mut message = Message::user_text(text);
    message.content.extend(request.images.iter().cloned().map(ContentBlock::Image));
    message
}

impl Driver<'_> {
    /// The notices of this thread's background tasks that ended since
    /// the model last heard, to go with the next message it reads.
    fn task_notices(&self) -> Vec<ContentBlock> {
        let Some(tasks) = &self.ctx.tasks else { return Vec::new() };
        if self.ctx.thread_id != self.thread.id {
            return Vec::new();
        }
        tasks.take_endings(&self.thread.id).iter().map(|ending| ContentBlock::Text { text: ending_notice(ending) }).collect()
    }

    /// What the model must not lose in a compaction: its todo list and
    /// the thread's background tasks.
    fn kept_through_compaction(&self) -> Vec<String> {
        let mut kept = Vec::new();
        let todos = self.ctx.run.todos.locked().clone();
        if !todos.is_empty() {
            kept.push(format!("Your todo list (kept through the compaction; todo_write replaces it):\n{}", crate::tools::todo::describe(&todos)));
        }
        if let Some(tasks) = &self.ctx.tasks {
            let mine: Vec<String> = tasks
                .list()
                .iter()
                .filter(|t| t.thread == self.thread.id)
                .map(|t| format!("- task {}: {}: `{}`", t.id, t.describe_status(), t.command.lines().next().unwrap_or_default()))
                .collect();
            if !mine.is_empty() {
                kept.push(format!("Background tasks of this conversation (task_list and task_output tell more):\n{}", mine.join("\n")));
            }
        }
        kept
    }
}

/// What the agent reads when a `Stop` hook sends it back to work.
fn stop_hook_message(reason: &str) -> Message {
    Message::user_text(format!("[A Stop hook of the user's did not let you finish yet. Its reason:]\n{reason}"))
}

/// A hook's text, cut for a one-line notice.
fn notice(text: &str) -> String {
    const MAX_CHARS: usize = 300;
    if text.chars().count() <= MAX_CHARS {
        return text.to_string();
    }
    let mut short: String = text.chars().take(MAX_CHARS).collect();
    short.push('…');
    short
}

/// The answer to calls an earlier run left without results (it was
/// cancelled or failed mid-call): the API wants every call answered.
const NOT_RUN_RESULT: &str = "Tool call not executed: the run ended before it ran";

/// One run of the loop over a thread.
struct Driver<'a> {
    provider: &'a dyn Provider,
    /// The model asked for instead of the provider's own ([`RunRequest::model`]).
    model: Option<&'a str>,
    thread: &'a mut Thread,
    config: &'a ContextConfig,
    events: &'a EventSender,
    state: &'a mut RunState,
    ctx: &'a ToolContext,
}
