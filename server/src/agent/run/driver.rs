//! The loop's one run over a thread ([`Driver`](super::Driver)): the
//! system prompt and tools it sends, the prompt and stop hooks around it,
//! and `drive`, the turn loop itself.

use super::*;

/// The end of a run whose model spent its whole output limit thinking.
const NO_ROOM_TO_ANSWER: &str = "The model used its whole output limit thinking and gave no answer. Raise maxTokens (TANDEM_MAX_TOKENS), or ask for less thinking: a lower effort (effort, --effort) or a smaller thinkingBudget.";

impl Driver<'_> {
    /// The system prompt: the thread's own, fixed by its first run so the
    /// cached prefix stays byte-stable across turns and runs.
    pub(super) fn system(&mut self, executor: &Executor, request: &RunRequest) -> String {
        if let Some(system) = &self.thread.system {
            return system.clone();
        }
        let system = match &request.system {
            Some(system) => system.clone(),
            None => {
                let mut env = PromptEnv::current(self.ctx.workspace.root(), request.in_editor, executor.registry().deferred_names());
                env.sections.push(instructions::prompt_section(&instructions::load(&self.ctx.workspace)));
                if let Some(home) = self.ctx.workspace.home() {
                    env.sections.push(crate::workspace::memory::Memory::at(home, self.ctx.workspace.root()).prompt_section());
                }
                env.sections.extend(executor.registry().prompt_sections(&self.ctx.workspace));
                system_prompt(&env)
            }
        };
        self.thread.set_system(system.clone());
        system
    }

    /// Resident tools, then the thread's activated deferred tools in the
    /// order they were activated (appended, so the prefix stays the same).
    pub(super) fn tools(&mut self, executor: &Executor) -> Vec<ToolDefinition> {
        for name in self.ctx.run.activated_names() {
            self.thread.activate_tool(&name);
        }
        // Grants given during the last turn's calls are saved at its end,
        // and so are the todo list and the thread's tasks.
        self.thread.set_grants(self.ctx.run.grants.rules());
        if self.ctx.thread_id == self.thread.id {
            save_side_state(self.ctx, self.thread);
        }
        let registry = executor.registry();
        let mut tools = registry.definitions_in(&self.ctx.workspace);
        tools.extend(registry.activated_definitions(&self.ctx.run));
        tools
    }

    /// Answer the calls an earlier run left open, so the history is valid.
    pub(super) fn close_dangling_calls(&mut self) {
        let Some(last) = self.thread.messages.last() else { return };
        if last.role != Role::Assistant {
            return;
        }
        let content: Vec<ContentBlock> = last
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => {
                    Some(ContentBlock::ToolResult { tool_use_id: id.clone(), content: NOT_RUN_RESULT.to_string(), is_error: true, images: Vec::new() })
                }
                _ => None,
            })
            .collect();
        if !content.is_empty() {
            self.thread.push(Message { role: Role::User, content });
        }
    }

    /// Why the prompt's images cannot go to this model: the table says it
    /// sees none. Said before anything is sent or kept in the thread.
    fn images_refused(&self, request: &RunRequest) -> Option<String> {
        if request.images.is_empty() {
            return None;
        }
        let model = self.model.unwrap_or(self.provider.model());
        let info = self.provider.model_info(model).filter(|info| !info.images)?;
        let count = match request.images.len() {
            1 => "image".to_string(),
            n => format!("{n} images"),
        };
        Some(format!(
            "The model {} does not take image input, so the prompt (with its {count}) was not sent. Choose a model that sees images, or, if this one does, say so in the models setting: {{\"{}\": {{\"images\": true}}}}.",
            info.name, info.name
        ))
    }

    /// Run the `UserPromptSubmit` or `Stop` hooks; cancelling the run
    /// stops them. A hook that fails or times out is shown to the user and
    /// does not block.
    pub(super) async fn hook(&self, hooks: &Hooks, event: HookEvent, payload: serde_json::Value) -> Result<HookOutcome, Stop> {
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

    pub(super) fn hook_notice(&self, event: HookEvent, message: String) {
        let _ = self.events.send(RunEvent::Hook { name: event.name().to_string(), message });
    }

    /// The `UserPromptSubmit` hooks: `Err` is the run's end when one
    /// blocked the prompt (the model never sees it), `Ok` what they add.
    pub(super) async fn submit_prompt(&mut self, hooks: &Hooks, request: &RunRequest) -> Result<Result<Vec<String>, (RunStatus, String)>, Stop> {
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

    pub(super) async fn drive(&mut self, executor: &Executor, request: &RunRequest) -> Result<(RunStatus, String), Stop> {
        if let Some(endpoint) = &request.endpoint {
            let endpoint = endpoint.clone();
            let _ = self.events.send(RunEvent::Provider { provider: endpoint.provider, model: endpoint.model, base_url: endpoint.base_url, reason: endpoint.reason });
        }
        if let Some(message) = &request.sandbox_notice {
            let _ = self.events.send(RunEvent::Sandbox { message: message.clone() });
        }
        // Each host the network lists refuse (to a command through the
        // sandbox's proxy, or to web_fetch) is told the user once, when it
        // happens; a sub-agent's run keeps its parent's listener.
        let events = self.events.clone();
        self.ctx.network.on_refusal(Box::new(move |message| {
            let _ = events.send(RunEvent::Sandbox { message });
        }));
        if let Some(refusal) = self.images_refused(request) {
            return Ok((RunStatus::Failed, refusal));
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
        self.thread.record_prompt(&request.prompt, &request.attachments);
        let mut first = first_message(request, &hook_context);
        first.content.extend(self.task_notices());
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
            let plan_section = self.ctx.run.prompt_section(&self.ctx.workspace);
            let system_now = if plan_section.is_empty() { std::borrow::Cow::Borrowed(&system) } else { std::borrow::Cow::Owned(format!("{system}\n{plan_section}")) };
            let response = loop {
                // The thread keeps every image; a request only the last few.
                let messages = keep_recent_images(&self.thread.messages, KEEP_RECENT_IMAGES);
                let model_request = ModelRequest { model: self.model, system: &system_now, messages: &messages, tools: &tools };
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
            let ModelResponse { message, tool_calls, stop_reason, .. } = response;
            let text = message.text();
            self.thread.push(message);
            if tool_calls.is_empty() {
                self.thread.commit();
                // The whole output limit went to thinking (a reasoning model,
                // a high effort): no answer came, and "completed" with
                // nothing to show would hide why.
                if stop_reason == super::super::provider::StopReason::MaxTokens && text.trim().is_empty() {
                    return Ok((RunStatus::Failed, NO_ROOM_TO_ANSWER.to_string()));
                }
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
                let mut message = stop_hook_message(&reason);
                message.content.extend(self.task_notices());
                self.thread.context_tokens += estimate_messages(std::slice::from_ref(&message));
                self.thread.push(message);
                self.thread.commit();
                continue;
            }
            if last_turn {
                let mut content = Vec::new();
                for call in &tool_calls {
                    let _ = self.events.send(RunEvent::ToolResult { id: call.id.clone(), is_error: true, content: TURN_LIMIT_RESULT.to_string(), effects: Vec::new(), edit: None });
                    content.push(ContentBlock::ToolResult { tool_use_id: call.id.clone(), content: TURN_LIMIT_RESULT.to_string(), is_error: true, images: Vec::new() });
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
            // The folders' instruction files and the rules the calls
            // reached for the first time follow their results.
            let touched = touched_paths(runner.kinds(), &results);
            let scoped = instructions::scoped::for_touched(&self.ctx.workspace, &touched, &self.thread.messages);
            let mut content: Vec<ContentBlock> = results
                .into_iter()
                .map(|r| ContentBlock::ToolResult { tool_use_id: r.id, content: r.content, is_error: r.is_error, images: r.images })
                .collect();
            content.extend(scoped);
            // Tasks that ended meanwhile are said after the results.
            content.extend(self.task_notices());
            let results_message = Message { role: Role::User, content };
            self.thread.context_tokens += estimate_messages(std::slice::from_ref(&results_message));
            self.thread.push(results_message);
            self.thread.commit();
            if let Some(line) = stop {
                return Err(Stop::Loop(line));
            }
        }
    }
}

/// The files and folders the calls that succeeded read or changed: what
/// each call's kind names (as prepared once, by the runner), and the files
/// a command changed.
fn touched_paths(kinds: &[crate::tools::ToolKind], results: &[ToolResult]) -> Vec<std::path::PathBuf> {
    let mut paths = Vec::new();
    for (kind, result) in kinds.iter().zip(results).filter(|(_, result)| !result.is_error) {
        match kind {
            crate::tools::ToolKind::Read { paths: read } => paths.extend(read.iter().cloned()),
            crate::tools::ToolKind::Edit { path } => paths.push(path.clone()),
            _ => {}
        }
        paths.extend(result.effects.iter().map(|effect| effect.path.clone()));
    }
    paths
}
