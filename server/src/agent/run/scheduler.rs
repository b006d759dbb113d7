//! The scheduler: one model turn streamed, and the tool calls it asks
//! for run through [`ToolRunner`] (safe calls together and early, the
//! others alone, results in call order).

use super::*;

/// Stream one response, forwarding text and tool calls as they arrive and
/// starting safe calls early.
pub(super) async fn stream_turn(
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

pub(super) fn on_stream_event(event: StreamEvent, events: &EventSender, runner: &mut ToolRunner) {
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

pub(super) type ToolTask = JoinHandle<Result<ToolResult, FatalToolError>>;

pub(super) enum Slot {
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
pub(super) struct ToolRunner {
    executor: Arc<Executor>,
    ctx: ToolContext,
    events: EventSender,
    early_start: bool,
    calls: Vec<ToolCall>,
    safe: Vec<bool>,
    /// What each call does, from its one preparation: the driver reads
    /// the paths the calls touched from these, not by parsing again.
    kinds: Vec<crate::tools::ToolKind>,
    slots: Vec<Slot>,
    /// Every call so far is safe and started: the next safe one may start too.
    head_is_safe: bool,
}

impl ToolRunner {
    pub(super) fn new(executor: Arc<Executor>, ctx: ToolContext, events: EventSender, early_start: bool) -> Self {
        ToolRunner { executor, ctx, events, early_start, calls: Vec::new(), safe: Vec::new(), kinds: Vec::new(), slots: Vec::new(), head_is_safe: true }
    }

    pub(super) fn running(&self) -> usize {
        self.slots.iter().filter(|s| matches!(s, Slot::Running(_))).count()
    }

    /// A call's block is complete in the stream: prepare it, tell the front
    /// ends what it does, and start it if it is safe and at the head.
    pub(super) fn on_call(&mut self, call: ToolCall) {
        let prepared = self.executor.prepare(&call, &self.ctx);
        let (kind, summary) = match &prepared {
            Ok(p) => (p.traits.kind.clone(), p.traits.summary.clone()),
            Err(_) => (Default::default(), String::new()),
        };
        self.kinds.push(kind.clone());
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

    pub(super) fn spawn(&self, call: ToolCall, prepared: PreparedCall) -> ToolTask {
        let executor = Arc::clone(&self.executor);
        let ctx = ToolContext { call_id: call.id.clone(), ..self.ctx.clone() };
        tokio::spawn(async move { executor.run_prepared(&call, prepared, &ctx).await })
    }

    /// Start the call in slot `i` if it is waiting.
    pub(super) fn start(&mut self, i: usize) {
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
    pub(super) fn reset(&mut self) {
        for slot in self.slots.drain(..) {
            if let Slot::Running(task) = slot {
                task.abort();
            }
        }
        self.calls.clear();
        self.safe.clear();
        self.kinds.clear();
        self.head_is_safe = true;
    }

    /// Stop running calls. After a cancellation (`graceful`), give them
    /// [`CANCEL_GRACE`] to notice the cancelled token and clean up (kill
    /// process groups), then abort; otherwise abort at once. A call that
    /// stops in time reports its result (e.g. "Command cancelled…"), so no
    /// front end is left with a call that never ended.
    pub(super) async fn abort(&mut self, graceful: bool) {
        let grace = if graceful { CANCEL_GRACE } else { Duration::ZERO };
        for slot in self.slots.drain(..) {
            let Slot::Running(mut task) = slot else { continue };
            match tokio::time::timeout(grace, &mut task).await {
                Ok(Ok(Ok(result))) => {
                    let _ = self.events.send(RunEvent::ToolResult { id: result.id, is_error: result.is_error, content: result.content, effects: result.effects, edit: None });
                }
                Ok(_) => {}
                Err(_) => {
                    task.abort();
                    let _ = task.await;
                }
            }
        }
    }

    /// What each call of the response does, in call order (a call prepared
    /// only when its turn came reads as [`crate::tools::ToolKind::Other`]).
    pub(super) fn kinds(&self) -> &[crate::tools::ToolKind] {
        &self.kinds
    }

    /// Run what has not run, and collect every result in call order.
    /// `calls` is the response's final list, which the streamed one matches.
    pub(super) async fn finish(&mut self, calls: &[ToolCall]) -> Result<Vec<ToolResult>, FatalToolError> {
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
            let _ = self.events.send(RunEvent::ToolResult { id: result.id.clone(), is_error: result.is_error, content: result.content.clone(), effects: result.effects.clone(), edit: None });
            results.push(result);
        }
        self.slots.clear();
        Ok(results)
    }

    /// Start the waiting safe calls from `i` on, up to the next unsafe call
    /// and the concurrency limit.
    pub(super) fn start_safe_neighbours(&mut self, i: usize) {
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

pub(super) async fn join(call: &ToolCall, task: &mut ToolTask) -> Result<ToolResult, FatalToolError> {
    match task.await {
        Ok(result) => result,
        Err(err) => {
            tracing::error!(tool = %call.name, %err, "tool task failed");
            Ok(ToolResult::error(&call.id, format!("Error: the {} tool crashed ({err}). Try another approach.", call.name)))
        }
    }
}
