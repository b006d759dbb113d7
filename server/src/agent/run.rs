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
use crate::hooks::{HookEvent, HookOutcome, Hooks};
use crate::thread::context::{compacted_history, estimate_messages, estimate_tokens, plan_stubs, summary_request, KEEP_RECENT_RESULTS, REREAD_RECENT_FILES, SUMMARY_SYSTEM};
use crate::thread::loops::{LoopDetector, LoopVerdict};
use crate::thread::{new_thread_id, Thread, ContextConfig};
use crate::tools::executor::FatalToolError;
use crate::tools::{Executor, PreparedCall, ToolCall, ToolContext, ToolDefinition, ToolResult};

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
    let workspace = Arc::new(ctx.workspace.with_ledger(Arc::clone(&thread.ledger)));
    let ctx = ToolContext { workspace, ..ctx };
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
    *ctx.run.children.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(subagent::ChildChannel(child_tx)));
    // What the run waits for (a tool source still starting) is an event.
    let waiting = events.clone();
    *ctx.run.waiting.lock().unwrap_or_else(|e| e.into_inner()) =
        Some(Arc::new(move |what: &str| _ = waiting.send(RunEvent::Waiting { what: what.to_string() })));
    let children_usage = Arc::clone(&state.children_usage);
    let children = subagent::serve(provider, executor, child_rx, &events, &children_usage);
    let driven = {
        let model = request.model.as_deref();
        let mut driver = Driver { provider, model, thread, config, events: &events, state: &mut state, ctx: &ctx };
        tokio::select! {
            driven = driver.drive(executor, &request) => driven,
            () = children => Err(Stop::Fatal(FatalToolError("the sub-agent service stopped".to_string()))),
        }
    };
    *ctx.run.children.lock().unwrap_or_else(|e| e.into_inner()) = None;
    *ctx.run.waiting.lock().unwrap_or_else(|e| e.into_inner()) = None;
    // Sub-agents' turns count in the run's totals, each priced as the
    // model it asked for.
    let children = *state.children_usage.lock().unwrap_or_else(|e| e.into_inner());
    state.add(&children.usage, children.cost_usd);
    let (status, text) = match driven {
        Ok(end) => end,
        Err(Stop::Cancelled) => (RunStatus::Cancelled, "The run was cancelled.".to_string()),
        Err(Stop::Provider(err)) => (RunStatus::Failed, err.to_string()),
        Err(Stop::Fatal(FatalToolError(message))) => (RunStatus::Failed, format!("A tool failed fatally: {message}")),
        Err(Stop::Loop(line)) => (RunStatus::Loop, line),
    };
    thread.set_grants(ctx.run.grants.rules());
    thread.end_run(status, (status != RunStatus::Completed).then(|| text.clone()));
    thread.commit();
    // Only a saved thread can be named later.
    let thread_id = if thread.is_saved() { thread.id.clone() } else { String::new() };
    let end_thread = (!thread_id.is_empty()).then(|| thread_id.clone());
    let _ = events.send(RunEvent::End { status, text: text.clone(), usage: state.usage, cost_usd: state.cost_usd, thread_id: end_thread });
    RunOutcome { status, text, turns: state.turns, usage: state.usage, cost_usd: state.cost_usd, thread_id }
}

/// Compact a thread now (`tandem.compact`, `tandem ask --compact`):
/// returns the estimated context size before and after, in tokens.
pub async fn compact_conversation(
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
    children_usage: Arc<std::sync::Mutex<subagent::ChildTotals>>,
}

impl RunState {
    /// The usage so far, the sub-agents' included.
    fn total_usage(&self) -> Usage {
        let mut total = self.usage;
        total.add(&self.children_usage.lock().unwrap_or_else(|e| e.into_inner()).usage);
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
    Message::user_text(text)
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

impl Driver<'_> {
    /// The system prompt: the thread's own, fixed by its first run so the
    /// cached prefix stays byte-stable across turns and runs.
    fn system(&mut self, executor: &Executor, request: &RunRequest) -> String {
        if let Some(system) = &self.thread.system {
            return system.clone();
        }
        let system = match &request.system {
            Some(system) => system.clone(),
            None => {
                let mut env = PromptEnv::current(self.ctx.workspace.root(), request.in_editor, executor.registry().deferred_names());
                env.sections.push(instructions::prompt_section(&instructions::load(&self.ctx.workspace)));
                env.sections.push(SkillSet::discover(&self.ctx.workspace).prompt_section());
                system_prompt(&env)
            }
        };
        self.thread.set_system(system.clone());
        system
    }

    /// Resident tools, then the thread's activated deferred tools in the
    /// order they were activated (appended, so the prefix stays the same).
    fn tools(&mut self, executor: &Executor) -> Vec<ToolDefinition> {
        for name in self.ctx.run.activated_names() {
            self.thread.activate_tool(&name);
        }
        // Grants given during the last turn's calls are saved at its end.
        self.thread.set_grants(self.ctx.run.grants.rules());
        let registry = executor.registry();
        let mut tools = registry.definitions();
        crate::tools::agent::describe_custom_agents(&mut tools, &self.ctx.workspace);
        tools.extend(registry.activated_definitions(&self.ctx.run));
        tools
    }

    /// Answer the calls an earlier run left open, so the history is valid.
    fn close_dangling_calls(&mut self) {
        let Some(last) = self.thread.messages.last() else { return };
        if last.role != Role::Assistant {
            return;
        }
        let content: Vec<ContentBlock> = last
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => {
                    Some(ContentBlock::ToolResult { tool_use_id: id.clone(), content: NOT_RUN_RESULT.to_string(), is_error: true })
                }
                _ => None,
            })
            .collect();
        if !content.is_empty() {
            self.thread.push(Message { role: Role::User, content });
        }
    }

    /// Run the `UserPromptSubmit` or `Stop` hooks; cancelling the run
    /// stops them. A hook that fails or times out is shown to the user and
    /// does not block.
    async fn hook(&self, hooks: &Hooks, event: HookEvent, payload: serde_json::Value) -> Result<HookOutcome, Stop> {
        let outcome = tokio::select! {
            biased;
            _ = self.ctx.cancel.cancelled() => return Err(Stop::Cancelled),
            outcome = hooks.run(event, None, payload) => outcome,
        };
        for failure in &outcome.failures {
            tracing::warn!("{failure}");
            self.hook_notice(event, failure.clone());
        }
        Ok(outcome)
    }

    fn hook_notice(&self, event: HookEvent, message: String) {
        let _ = self.events.send(RunEvent::Hook { name: event.name().to_string(), message });
    }

    /// The `UserPromptSubmit` hooks: `Err` is the run's end when one
    /// blocked the prompt (the model never sees it), `Ok` what they add.
    async fn submit_prompt(&mut self, hooks: &Hooks, request: &RunRequest) -> Result<Result<Vec<String>, (RunStatus, String)>, Stop> {
        let event = HookEvent::UserPromptSubmit;
        let payload = serde_json::json!({"session_id": self.thread.id, "prompt": request.prompt});
        let outcome = self.hook(hooks, event, payload).await?;
        if let Some(reason) = outcome.block {
            return Ok(Err((RunStatus::Failed, format!("The UserPromptSubmit hook blocked this prompt, so it was not sent: {reason}"))));
        }
        for context in &outcome.output {
            self.hook_notice(event, format!("added to the prompt: {}", notice(context)));
        }
        Ok(Ok(outcome.output))
    }

    async fn drive(&mut self, executor: &Executor, request: &RunRequest) -> Result<(RunStatus, String), Stop> {
        if let Some(message) = &request.sandbox_notice {
            let _ = self.events.send(RunEvent::Sandbox { message: message.clone() });
        }
        // The user's own runs go through the prompt and stop hooks; sub-agents' do not.
        let hooks = request.hooks.as_ref().map(crate::hooks::current).filter(|hooks| !hooks.is_empty());
        let hook_context = match &hooks {
            Some(hooks) => match self.submit_prompt(hooks, request).await? {
                Ok(context) => context,
                Err(end) => return Ok(end),
            },
            None => Vec::new(),
        };
        // The first turn has the tools of sources still starting (MCP
        // servers), in its tool list and the system prompt's deferred names:
        // they are waited for, each within its start-up timeout.
        executor.registry().settle(None, &self.ctx.run, &self.ctx.cancel).await;
        if self.ctx.cancel.is_cancelled() {
            return Err(Stop::Cancelled);
        }
        let mut stop_continuations = 0;
        let system = self.system(executor, request);
        let max_turns = request.max_turns.unwrap_or(DEFAULT_MAX_TURNS).max(1);
        let executor = Arc::new(executor.clone());
        self.thread.set_title_from(&request.prompt);
        self.close_dangling_calls();
        self.thread.record_prompt(&request.prompt);
        let first = first_message(request, &hook_context);
        self.thread.context_tokens += estimate_messages(std::slice::from_ref(&first));
        self.thread.push(first);
        self.thread.commit();
        if request.compact {
            self.compact("requested by the user").await?;
        }
        let mut detector = LoopDetector::new(self.config.loop_threshold);
        let cancel = self.ctx.cancel.clone();
        loop {
            if cancel.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            self.manage_context().await?;
            // Tools activated during the run are appended for the next turn.
            let tools = self.tools(&executor);
            self.state.turns += 1;
            let last_turn = self.state.turns >= max_turns;
            let mut runner = ToolRunner::new(Arc::clone(&executor), self.ctx.clone(), self.events.clone(), !last_turn);
            let mut compacted_for_length = false;
            // Plan mode comes and goes within a run: its section is added while it is on.
            let plan_section = crate::tools::plan_mode::current_prompt_section(self.ctx);
            let system_now = if plan_section.is_empty() { std::borrow::Cow::Borrowed(&system) } else { std::borrow::Cow::Owned(format!("{system}\n{plan_section}")) };
            let response = loop {
                let model_request = ModelRequest { model: self.model, system: &system_now, messages: &self.thread.messages, tools: &tools };
                match stream_turn(self.provider, &model_request, self.events, &mut runner, &cancel).await {
                    Ok(response) => break response,
                    // Too long for the model after all: compact once and retry,
                    // never more (a second refusal ends the run).
                    Err(Stop::Provider(err)) if err.is_context_length() && !compacted_for_length => {
                        runner.abort(false).await;
                        runner = ToolRunner::new(Arc::clone(&executor), self.ctx.clone(), self.events.clone(), !last_turn);
                        compacted_for_length = true;
                        tracing::warn!(%err, "the model rejected the request as too long; compacting");
                        self.compact("the model rejected the request as too long").await?;
                    }
                    Err(stop) => {
                        runner.abort(matches!(stop, Stop::Cancelled)).await;
                        return Err(stop);
                    }
                }
            };
            let cost = self.config.prices.cost(&self.config.model, &response.usage);
            self.state.add(&response.usage, cost);
            self.thread.end_turn(response.usage, cost);
            let _ = self.events.send(RunEvent::Status { turn: self.state.turns, usage: self.state.total_usage() });
            let ModelResponse { message, tool_calls, .. } = response;
            let text = message.text();
            self.thread.push(message);
            if tool_calls.is_empty() {
                self.thread.commit();
                let Some(hooks) = &hooks else { return Ok((RunStatus::Completed, text)) };
                let event = HookEvent::Stop;
                let payload = serde_json::json!({
                    "session_id": self.thread.id,
                    "stop_hook_active": stop_continuations > 0,
                    "last_assistant_message": text,
                });
                let Some(reason) = self.hook(hooks, event, payload).await?.block else {
                    return Ok((RunStatus::Completed, text));
                };
                if stop_continuations >= MAX_STOP_CONTINUATIONS {
                    let line = format!(
                        "The Stop hook sent the agent back to work {MAX_STOP_CONTINUATIONS} times in this run and asked again; the run ends here. Its last reason: {reason}"
                    );
                    return Ok((RunStatus::Failed, line));
                }
                if last_turn {
                    self.hook_notice(event, format!("asked the agent to continue, but the run reached its turn limit: {reason}"));
                    return Ok((RunStatus::TurnLimit, text));
                }
                stop_continuations += 1;
                self.hook_notice(event, format!("asked the agent to continue: {}", notice(&reason)));
                let message = stop_hook_message(&reason);
                self.thread.context_tokens += estimate_messages(std::slice::from_ref(&message));
                self.thread.push(message);
                self.thread.commit();
                continue;
            }
            if last_turn {
                let mut content = Vec::new();
                for call in &tool_calls {
                    let _ = self.events.send(RunEvent::ToolResult { id: call.id.clone(), is_error: true, content: TURN_LIMIT_RESULT.to_string() });
                    content.push(ContentBlock::ToolResult { tool_use_id: call.id.clone(), content: TURN_LIMIT_RESULT.to_string(), is_error: true });
                }
                self.thread.push(Message { role: Role::User, content });
                self.thread.commit();
                return Ok((RunStatus::TurnLimit, text));
            }
            self.thread.commit();
            let results = tokio::select! {
                biased;
                _ = cancel.cancelled() => None,
                results = runner.finish(&tool_calls) => Some(results),
            };
            let mut results = match results {
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
            let mut nudge = None;
            let mut stop = None;
            let verdicts = std::iter::once(detector.on_text(&text))
                .chain(tool_calls.iter().zip(&results).map(|(call, r)| detector.on_tool_result(&call.name, &call.input, &r.content)))
                .collect::<Vec<_>>();
            for verdict in verdicts {
                match verdict {
                    LoopVerdict::Fine => {}
                    LoopVerdict::Nudge(line) => nudge = Some(line),
                    LoopVerdict::Stop(line) => stop = Some(line),
                }
            }
            if let (Some(line), Some(last)) = (nudge, results.last_mut()) {
                // The model reads this with the result of its repeated call.
                last.content.push_str(&format!("\n\n[Tandem: {line}]"));
            }
            let content = results
                .into_iter()
                .map(|r| ContentBlock::ToolResult { tool_use_id: r.id, content: r.content, is_error: r.is_error })
                .collect();
            let results_message = Message { role: Role::User, content };
            self.thread.context_tokens += estimate_messages(std::slice::from_ref(&results_message));
            self.thread.push(results_message);
            self.thread.commit();
            if let Some(line) = stop {
                return Err(Stop::Loop(line));
            }
        }
    }

    /// Past [`ContextConfig::stub_threshold`], stub old tool results; past
    /// [`ContextConfig::compact_threshold`] (after stubbing), compact.
    async fn manage_context(&mut self) -> Result<(), Stop> {
        let size = self.thread.context_tokens;
        if size <= self.config.stub_threshold() {
            return Ok(());
        }
        let mut saved = 0;
        for (id, stub, bytes) in plan_stubs(&self.thread.messages, KEEP_RECENT_RESULTS) {
            if self.thread.stub_result(&id, stub) {
                saved += bytes;
            }
        }
        let estimate = size.saturating_sub(estimate_tokens(saved));
        self.thread.context_tokens = estimate;
        if saved > 0 {
            tracing::info!(before = size, after = estimate, "stubbed old tool results to save context");
        }
        if estimate > self.config.compact_threshold() {
            let percent = size * 100 / self.config.context_window.max(1);
            self.compact(&format!("the context reached {percent}% of the model's window")).await?;
        }
        Ok(())
    }

    /// Ask the model for a summary (a separate request, no tools) and
    /// replace the history with it and the latest prompt. The files the
    /// thread had read must be read again before an edit; the summary names
    /// the [`REREAD_RECENT_FILES`] most recent.
    async fn compact(&mut self, reason: &str) -> Result<(u64, u64), Stop> {
        let before = self.thread.context_tokens.max(estimate_messages(&self.thread.messages));
        // Half the window for the transcript leaves room for the summary.
        let max_chars = usize::try_from(self.config.context_window).unwrap_or(usize::MAX).saturating_mul(2);
        let messages = summary_request(&self.thread.messages, max_chars);
        let request = ModelRequest { model: self.model, system: SUMMARY_SYSTEM, messages: &messages, tools: &[] };
        // The summary is not part of the transcript the user watches.
        let (quiet, _ignored) = mpsc::unbounded_channel();
        let response = tokio::select! {
            biased;
            _ = self.ctx.cancel.cancelled() => return Err(Stop::Cancelled),
            response = self.provider.stream(&request, &quiet) => response.map_err(Stop::Provider)?,
        };
        let cost = self.config.prices.cost(&self.config.model, &response.usage);
        self.state.add(&response.usage, cost);
        self.thread.end_turn(response.usage, cost);
        let summary = response.message.text();
        // The most recent files, named in a stable order.
        let mut reread: Vec<String> =
            self.thread.ledger.most_recent(REREAD_RECENT_FILES).iter().map(|p| self.ctx.workspace.display_path(p)).collect();
        reread.sort();
        self.thread.ledger.clear();
        let history = compacted_history(&summary, &reread, self.thread.last_prompt());
        let system_tokens = self.thread.system.as_deref().map(|s| estimate_tokens(s.len())).unwrap_or(0);
        let after = estimate_messages(&history) + system_tokens;
        self.thread.replace_history(history, before, after);
        self.thread.commit();
        let _ = self.events.send(RunEvent::Compact { before_tokens: before, after_tokens: after, reason: reason.to_string() });
        Ok((before, after))
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
        StreamEvent::Thinking(text) => {
            let _ = events.send(RunEvent::Thinking { text });
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
    /// Prepared (input parsed once), not started yet.
    Waiting(Box<PreparedCall>),
    Running(ToolTask),
    /// Answered without running (unknown tool, unusable input).
    Done(ToolResult),
    /// For a tool a source still starting may bring (an MCP server that
    /// has not listed its tools yet): prepared when its turn comes, after
    /// waiting for the source.
    Settling,
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
            Err(_) if self.executor.awaits_source(&call) => {
                self.head_is_safe = false;
                Slot::Settling
            }
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
        match &self.slots[i] {
            Slot::Waiting(_) => {
                if let Slot::Waiting(prepared) = std::mem::replace(&mut self.slots[i], Slot::Taken) {
                    self.slots[i] = Slot::Running(self.spawn(self.calls[i].clone(), *prepared));
                }
            }
            Slot::Settling => {
                let executor = Arc::clone(&self.executor);
                let call = self.calls[i].clone();
                let ctx = ToolContext { call_id: call.id.clone(), ..self.ctx.clone() };
                self.slots[i] = Slot::Running(tokio::spawn(async move { executor.execute(&call, &ctx).await }));
            }
            Slot::Running(_) | Slot::Done(_) | Slot::Taken => {}
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
                Slot::Waiting(_) | Slot::Settling | Slot::Taken => Ok(ToolResult::error(&self.calls[i].id, "Error: the call was not started.")),
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
