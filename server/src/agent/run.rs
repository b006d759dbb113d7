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

use super::events::{RunEvent, RunStatus, Usage};
use super::instructions;
use super::prompt::{system_prompt, PromptEnv};
use super::provider::{ContentBlock, Message, ModelRequest, ModelResponse, Provider, ProviderError, Role, StreamEvent, ToolUse};
use super::{RunOutcome, RunRequest};
use crate::tools::executor::FatalToolError;
use crate::tools::{Executor, ToolCall, ToolContext, ToolResult};

/// Safe calls running at the same time, at most.
pub const MAX_CONCURRENT_TOOLS: usize = 10;

/// Model turns when the request sets no limit: a run always ends.
pub const DEFAULT_MAX_TURNS: usize = 100;

/// The answer to calls the turn limit stops.
pub const TURN_LIMIT_RESULT: &str = "Tool call not executed: turn limit reached";

/// How long cancelled tools get to stop by themselves (a shell command kills
/// its process group on `ctx.cancel`) before their tasks are aborted.
const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// Run the agent to the end. Events stream through `events` as they happen,
/// the last one being [`RunEvent::End`]; cancelling `ctx.cancel` stops the
/// stream and the running tools.
pub async fn run(
    provider: &dyn Provider,
    executor: &Executor,
    ctx: ToolContext,
    request: RunRequest,
    events: mpsc::UnboundedSender<RunEvent>,
) -> RunOutcome {
    let mut state = RunState { turns: 0, usage: Usage::default() };
    let (status, text) = match drive(provider, executor, &ctx, &request, &events, &mut state).await {
        Ok(end) => end,
        Err(Stop::Cancelled) => (RunStatus::Cancelled, "The run was cancelled.".to_string()),
        Err(Stop::Provider(err)) => (RunStatus::Failed, err.to_string()),
        Err(Stop::Fatal(FatalToolError(message))) => (RunStatus::Failed, format!("A tool failed fatally: {message}")),
    };
    let _ = events.send(RunEvent::End { status, text: text.clone() });
    RunOutcome { status, text, turns: state.turns, usage: state.usage }
}

struct RunState {
    turns: usize,
    usage: Usage,
}

enum Stop {
    Cancelled,
    Provider(ProviderError),
    Fatal(FatalToolError),
}

/// The user's first message: editor context (selection, diagnostics), then the prompt.
fn first_message(request: &RunRequest) -> Message {
    match request.context.as_deref().filter(|c| !c.trim().is_empty()) {
        Some(context) => Message::user_text(format!("{context}\n\n{}", request.prompt)),
        None => Message::user_text(request.prompt.clone()),
    }
}

async fn drive(
    provider: &dyn Provider,
    executor: &Executor,
    ctx: &ToolContext,
    request: &RunRequest,
    events: &mpsc::UnboundedSender<RunEvent>,
    state: &mut RunState,
) -> Result<(RunStatus, String), Stop> {
    let registry = executor.registry();
    // Read once per run; the deferred tools are listed per request.
    let instructions = instructions::prompt_section(&instructions::load(&ctx.workspace));
    let max_turns = request.max_turns.unwrap_or(DEFAULT_MAX_TURNS).max(1);
    let executor = Arc::new(executor.clone());
    let mut messages = vec![first_message(request)];
    loop {
        if ctx.cancel.is_cancelled() {
            return Err(Stop::Cancelled);
        }
        state.turns += 1;
        let last_turn = state.turns >= max_turns;
        let mut runner = ToolRunner::new(Arc::clone(&executor), ctx.clone(), events.clone(), !last_turn);
        // Recomputed for every request: tool_search may have activated tools
        // (appended at the end), and MCP servers come and go.
        let tools = registry.definitions_for(&ctx.run);
        let mut env = PromptEnv::current(ctx.workspace.root(), request.in_editor, registry.deferred_names());
        env.sections.push(instructions.clone());
        let system = system_prompt(&env);
        let model_request = ModelRequest { system: &system, messages: &messages, tools: &tools };
        let response = match stream_turn(provider, &model_request, events, &mut runner, &ctx.cancel).await {
            Ok(response) => response,
            Err(stop) => {
                runner.abort(matches!(stop, Stop::Cancelled)).await;
                return Err(stop);
            }
        };
        state.usage.input_tokens += response.usage.input_tokens;
        state.usage.output_tokens += response.usage.output_tokens;
        let _ = events.send(RunEvent::Status { turn: state.turns, usage: state.usage });
        let ModelResponse { message, tool_calls, .. } = response;
        let text = message.text();
        if tool_calls.is_empty() {
            return Ok((RunStatus::Completed, text));
        }
        messages.push(message);
        if last_turn {
            for call in &tool_calls {
                let _ = events.send(RunEvent::ToolResult { id: call.id.clone(), is_error: true, content: TURN_LIMIT_RESULT.to_string() });
            }
            return Ok((RunStatus::TurnLimit, text));
        }
        let results = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => None,
            results = runner.finish(&tool_calls) => Some(results),
        };
        let results = match results {
            None => {
                runner.abort(true).await;
                return Err(Stop::Cancelled);
            }
            Some(Err(fatal)) => {
                runner.abort(false).await;
                return Err(Stop::Fatal(fatal));
            }
            Some(Ok(results)) => results,
        };
        let content = results
            .into_iter()
            .map(|r| ContentBlock::ToolResult { tool_use_id: r.id, content: r.content, is_error: r.is_error })
            .collect();
        messages.push(Message { role: Role::User, content });
    }
}

/// Stream one response, forwarding text and tool calls as they arrive and
/// starting safe calls early.
async fn stream_turn(
    provider: &dyn Provider,
    request: &ModelRequest<'_>,
    events: &mpsc::UnboundedSender<RunEvent>,
    runner: &mut ToolRunner,
    cancel: &CancellationToken,
) -> Result<ModelResponse, Stop> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let response = provider.stream(request, &tx);
    tokio::pin!(response);
    let result = loop {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(Stop::Cancelled),
            Some(event) = rx.recv() => on_stream_event(event, events, runner),
            result = &mut response => break result,
        }
    };
    while let Ok(event) = rx.try_recv() {
        on_stream_event(event, events, runner);
    }
    result.map_err(Stop::Provider)
}

fn on_stream_event(event: StreamEvent, events: &mpsc::UnboundedSender<RunEvent>, runner: &mut ToolRunner) {
    match event {
        StreamEvent::TextDelta(text) => {
            let _ = events.send(RunEvent::Text { text });
        }
        StreamEvent::ToolUse(call) => {
            let _ = events.send(RunEvent::ToolCall { id: call.id.clone(), name: call.name.clone(), input: call.input.clone() });
            runner.on_call(call);
        }
        StreamEvent::Retrying { attempt, delay, reason } => {
            // What the failed attempt streamed is void: its early-started
            // calls (all safe, so read-only in practice) are dropped.
            runner.reset();
            let _ = events.send(RunEvent::Retry { attempt, delay_ms: delay.as_millis() as u64, reason });
        }
    }
}

type ToolTask = JoinHandle<Result<ToolResult, FatalToolError>>;

enum Slot {
    /// Not started yet.
    Waiting,
    Running(ToolTask),
    /// Answered without running (unusable input).
    Done(ToolResult),
}

/// Runs the tool calls of one response: early start while streaming, then
/// the rest in order, safe neighbours together.
struct ToolRunner {
    executor: Arc<Executor>,
    ctx: ToolContext,
    events: mpsc::UnboundedSender<RunEvent>,
    early_start: bool,
    calls: Vec<ToolUse>,
    safe: Vec<bool>,
    slots: Vec<Slot>,
    /// Every call so far is safe and started: the next safe one may start too.
    head_is_safe: bool,
}

impl ToolRunner {
    fn new(executor: Arc<Executor>, ctx: ToolContext, events: mpsc::UnboundedSender<RunEvent>, early_start: bool) -> Self {
        ToolRunner { executor, ctx, events, early_start, calls: Vec::new(), safe: Vec::new(), slots: Vec::new(), head_is_safe: true }
    }

    fn running(&self) -> usize {
        self.slots.iter().filter(|s| matches!(s, Slot::Running(_))).count()
    }

    /// A call's block is complete in the stream.
    fn on_call(&mut self, call: ToolUse) {
        let tool_call = to_tool_call(&call);
        let safe = call.input_error.is_none() && self.executor.is_concurrency_safe(&tool_call);
        let slot = match &call.input_error {
            Some(message) => Slot::Done(ToolResult::error(&call.id, message.clone())),
            None if self.early_start && self.head_is_safe && safe && self.running() < MAX_CONCURRENT_TOOLS => {
                Slot::Running(self.spawn(tool_call))
            }
            None => {
                self.head_is_safe = false;
                Slot::Waiting
            }
        };
        self.calls.push(call);
        self.safe.push(safe);
        self.slots.push(slot);
    }

    fn spawn(&self, call: ToolCall) -> ToolTask {
        let executor = Arc::clone(&self.executor);
        let ctx = self.ctx.clone();
        tokio::spawn(async move { executor.execute(&call, &ctx).await })
    }

    /// Forget everything (the response is being streamed again).
    fn reset(&mut self) {
        for slot in self.slots.drain(..) {
            if let Slot::Running(task) = slot {
                task.abort();
            }
        }
        self.calls.clear();
        self.safe.clear();
        self.head_is_safe = true;
    }

    /// Stop running calls. After a cancellation (`graceful`), give them
    /// [`CANCEL_GRACE`] to notice the cancelled token and clean up (kill
    /// process groups), then abort; otherwise abort at once. A call that
    /// stops in time reports its result (e.g. "Command cancelled…"), so no
    /// front end is left with a call that never ended.
    async fn abort(&mut self, graceful: bool) {
        let grace = if graceful { CANCEL_GRACE } else { Duration::ZERO };
        for slot in self.slots.drain(..) {
            let Slot::Running(mut task) = slot else { continue };
            match tokio::time::timeout(grace, &mut task).await {
                Ok(Ok(Ok(result))) => {
                    let _ = self.events.send(RunEvent::ToolResult { id: result.id, is_error: result.is_error, content: result.content });
                }
                Ok(_) => {}
                Err(_) => {
                    task.abort();
                    let _ = task.await;
                }
            }
        }
    }

    /// Run what has not run, and collect every result in call order.
    /// `calls` is the response's final list, which the streamed one matches.
    async fn finish(&mut self, calls: &[ToolUse]) -> Result<Vec<ToolResult>, FatalToolError> {
        // A provider that did not stream its calls (or streamed them before a
        // retry that was then dropped) leaves them for here.
        if self.calls.len() != calls.len() || self.calls.iter().zip(calls).any(|(a, b)| a.id != b.id) {
            self.reset();
            self.early_start = false;
            for call in calls {
                self.on_call(call.clone());
            }
        }
        let mut results = Vec::with_capacity(calls.len());
        for i in 0..self.slots.len() {
            if self.safe[i] {
                self.start_safe_neighbours(i);
            }
            if matches!(self.slots[i], Slot::Waiting) {
                self.slots[i] = Slot::Running(self.spawn(to_tool_call(&self.calls[i])));
            }
            // The task is awaited in place: if this future is dropped (the
            // run was cancelled), `abort` still finds it and waits for it.
            let joined = match &mut self.slots[i] {
                Slot::Done(result) => Ok(result.clone()),
                Slot::Running(task) => join(&self.calls[i], task).await,
                Slot::Waiting => Ok(ToolResult::error(&self.calls[i].id, "Error: the call was not started.")),
            };
            // Past this point the task is consumed: never poll it again.
            let result = match joined {
                Ok(result) => result,
                Err(fatal) => {
                    self.slots[i] = Slot::Waiting;
                    return Err(fatal);
                }
            };
            self.slots[i] = Slot::Done(result.clone());
            let _ = self.events.send(RunEvent::ToolResult { id: result.id.clone(), is_error: result.is_error, content: result.content.clone() });
            results.push(result);
        }
        self.slots.clear();
        Ok(results)
    }

    /// Start the waiting safe calls from `i` on, up to the next unsafe call
    /// and the concurrency limit.
    fn start_safe_neighbours(&mut self, i: usize) {
        let mut j = i;
        while j < self.slots.len() && (self.safe[j] || matches!(self.slots[j], Slot::Done(_))) {
            if matches!(self.slots[j], Slot::Waiting) {
                if self.running() >= MAX_CONCURRENT_TOOLS {
                    break;
                }
                self.slots[j] = Slot::Running(self.spawn(to_tool_call(&self.calls[j])));
            }
            j += 1;
        }
    }

}

async fn join(call: &ToolUse, task: &mut ToolTask) -> Result<ToolResult, FatalToolError> {
    match task.await {
        Ok(result) => result,
        Err(err) => {
            tracing::error!(tool = %call.name, %err, "tool task failed");
            Ok(ToolResult::error(&call.id, format!("Error: the {} tool crashed ({err}). Try another approach.", call.name)))
        }
    }
}

fn to_tool_call(call: &ToolUse) -> ToolCall {
    ToolCall { id: call.id.clone(), name: call.name.clone(), input: call.input.clone() }
}
