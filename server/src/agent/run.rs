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
use super::subagent;
use crate::tools::skill::SkillSet;
use super::prompt::{system_prompt, PromptEnv};
use super::provider::{ContentBlock, Message, ModelRequest, ModelResponse, Provider, ProviderError, Role, StreamEvent};
use super::{RunOutcome, RunRequest};
use crate::tools::executor::FatalToolError;
use crate::tools::{Executor, PreparedCall, ToolCall, ToolContext, ToolResult};

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
    events: EventSender,
) -> RunOutcome {
    let mut state = RunState { turns: 0, usage: Usage::default(), children_usage: Arc::default() };
    // Sub-agents (the agent tool, forked skills) run beside the loop, with
    // its provider; they end when the run does.
    let (child_tx, child_rx) = mpsc::unbounded_channel();
    *ctx.run.children.lock().unwrap_or_else(|e| e.into_inner()) = Some(child_tx);
    let children_usage = Arc::clone(&state.children_usage);
    let children = subagent::serve(provider, executor, child_rx, &events, &children_usage);
    let driven = tokio::select! {
        driven = drive(provider, executor, &ctx, &request, &events, &mut state) => driven,
        () = children => Err(Stop::Fatal(FatalToolError("the sub-agent service stopped".to_string()))),
    };
    *ctx.run.children.lock().unwrap_or_else(|e| e.into_inner()) = None;
    state.usage = state.total_usage();
    let (status, text) = match driven {
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
    /// This run's own model turns.
    usage: Usage,
    /// Its sub-agents' turns.
    children_usage: Arc<std::sync::Mutex<Usage>>,
}

impl RunState {
    fn total_usage(&self) -> Usage {
        let children = *self.children_usage.lock().unwrap_or_else(|e| e.into_inner());
        Usage { input_tokens: self.usage.input_tokens + children.input_tokens, output_tokens: self.usage.output_tokens + children.output_tokens }
    }
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
    events: &EventSender,
    state: &mut RunState,
) -> Result<(RunStatus, String), Stop> {
    let registry = executor.registry();
    // Read once per run: the resident tools (with the custom agents in the
    // agent tool's description) and the prompt sections. What changes
    // between requests — the tools tool_search activated (appended at the
    // end) and the deferred tools MCP servers bring — is added per request.
    let mut resident = registry.definitions();
    crate::tools::agent::describe_custom_agents(&mut resident, &ctx.workspace);
    let sections = match &request.system {
        Some(_) => Vec::new(),
        None => vec![
            instructions::prompt_section(&instructions::load(&ctx.workspace)),
            SkillSet::discover(&ctx.workspace).prompt_section(),
        ],
    };
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
        let mut tools = resident.clone();
        tools.extend(registry.activated_definitions(&ctx.run));
        let mut system = match &request.system {
            Some(system) => system.clone(),
            None => {
                let mut env = PromptEnv::current(ctx.workspace.root(), request.in_editor, registry.deferred_names());
                env.sections.extend(sections.iter().cloned());
                system_prompt(&env)
            }
        };
        // Plan mode comes and goes within a run: its section is added while it is on.
        let plan_section = crate::tools::enter_plan_mode::current_prompt_section(ctx);
        if !plan_section.is_empty() {
            system = format!("{system}\n{plan_section}");
        }
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
        let _ = events.send(RunEvent::Status { turn: state.turns, usage: state.total_usage() });
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
    events: &EventSender,
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

fn on_stream_event(event: StreamEvent, events: &EventSender, runner: &mut ToolRunner) {
    match event {
        StreamEvent::TextDelta(text) => {
            let _ = events.send(RunEvent::Text { text });
        }
        StreamEvent::ToolUse(call) => runner.on_call(call),
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
    /// Prepared (input parsed once), not started yet.
    Waiting(Box<PreparedCall>),
    Running(ToolTask),
    /// Answered without running (unknown tool, unusable input).
    Done(ToolResult),
    /// Consumed: its result went out.
    Taken,
}

/// Runs the tool calls of one response: early start while streaming, then
/// the rest in order, safe neighbours together. Each call is prepared (its
/// input parsed into the tool's typed arguments) once, when its block is
/// complete in the stream; that prepared value is what runs.
struct ToolRunner {
    executor: Arc<Executor>,
    ctx: ToolContext,
    events: EventSender,
    early_start: bool,
    calls: Vec<ToolCall>,
    safe: Vec<bool>,
    slots: Vec<Slot>,
    /// Every call so far is safe and started: the next safe one may start too.
    head_is_safe: bool,
}

impl ToolRunner {
    fn new(executor: Arc<Executor>, ctx: ToolContext, events: EventSender, early_start: bool) -> Self {
        ToolRunner { executor, ctx, events, early_start, calls: Vec::new(), safe: Vec::new(), slots: Vec::new(), head_is_safe: true }
    }

    fn running(&self) -> usize {
        self.slots.iter().filter(|s| matches!(s, Slot::Running(_))).count()
    }

    /// A call's block is complete in the stream: prepare it, tell the front
    /// ends what it does, and start it if it is safe and at the head.
    fn on_call(&mut self, call: ToolCall) {
        let prepared = self.executor.prepare(&call, &self.ctx);
        let (kind, summary) = match &prepared {
            Ok(p) => (p.traits.kind.clone(), p.traits.summary.clone()),
            Err(_) => (Default::default(), String::new()),
        };
        let _ = self.events.send(RunEvent::ToolCall { id: call.id.clone(), name: call.name.clone(), input: call.input.clone(), kind, summary });
        let safe = prepared.as_ref().is_ok_and(|p| p.traits.concurrency_safe);
        let slot = match prepared {
            Err(result) => Slot::Done(result),
            Ok(p) if self.early_start && self.head_is_safe && safe && self.running() < MAX_CONCURRENT_TOOLS => {
                Slot::Running(self.spawn(call.clone(), p))
            }
            Ok(p) => {
                self.head_is_safe = false;
                Slot::Waiting(Box::new(p))
            }
        };
        self.calls.push(call);
        self.safe.push(safe);
        self.slots.push(slot);
    }

    fn spawn(&self, call: ToolCall, prepared: PreparedCall) -> ToolTask {
        let executor = Arc::clone(&self.executor);
        let ctx = ToolContext { call_id: call.id.clone(), ..self.ctx.clone() };
        tokio::spawn(async move { executor.run_prepared(&call, prepared, &ctx).await })
    }

    /// Start the call in slot `i` if it is waiting.
    fn start(&mut self, i: usize) {
        if matches!(self.slots[i], Slot::Waiting(_)) {
            if let Slot::Waiting(prepared) = std::mem::replace(&mut self.slots[i], Slot::Taken) {
                self.slots[i] = Slot::Running(self.spawn(self.calls[i].clone(), *prepared));
            }
        }
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
    async fn finish(&mut self, calls: &[ToolCall]) -> Result<Vec<ToolResult>, FatalToolError> {
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
            self.start(i);
            // The task is awaited in place: if this future is dropped (the
            // run was cancelled), `abort` still finds it and waits for it.
            let joined = match &mut self.slots[i] {
                Slot::Done(result) => Ok(result.clone()),
                Slot::Running(task) => join(&self.calls[i], task).await,
                Slot::Waiting(_) | Slot::Taken => Ok(ToolResult::error(&self.calls[i].id, "Error: the call was not started.")),
            };
            // Past this point the task is consumed: never poll it again.
            self.slots[i] = Slot::Taken;
            let result = joined?;
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
            if matches!(self.slots[j], Slot::Waiting(_)) {
                if self.running() >= MAX_CONCURRENT_TOOLS {
                    break;
                }
                self.start(j);
            }
            j += 1;
        }
    }
}

async fn join(call: &ToolCall, task: &mut ToolTask) -> Result<ToolResult, FatalToolError> {
    match task.await {
        Ok(result) => result,
        Err(err) => {
            tracing::error!(tool = %call.name, %err, "tool task failed");
            Ok(ToolResult::error(&call.id, format!("Error: the {} tool crashed ({err}). Try another approach.", call.name)))
        }
    }
}
