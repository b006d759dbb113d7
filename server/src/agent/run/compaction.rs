//! Keeping a run's thread inside the context window: stubbing old tool
//! results, and compacting the history into a summary.

use super::*;

impl Driver<'_> {
    /// Past [`ContextConfig::stub_threshold`], stub old tool results; past
    /// [`ContextConfig::compact_threshold`] (after stubbing), compact.
    pub(super) async fn manage_context(&mut self) -> Result<(), Stop> {
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
    pub(super) async fn compact(&mut self, reason: &str) -> Result<(u64, u64), Stop> {
        let before = self.thread.context_tokens.max(estimate_messages(&self.thread.messages));
        // Half the window for the transcript leaves room for the summary.
        let max_chars = usize::try_from(self.config.context_window).unwrap_or(usize::MAX).saturating_mul(2);
        let messages = summary_request(&self.thread.messages, max_chars);
        // A summary is a small job: the small model's, when one is set.
        let model = self.provider.small_model().or(self.model);
        let request = ModelRequest { model, system: SUMMARY_SYSTEM, messages: &messages, tools: &[] };
        // The summary is not part of the transcript the user watches.
        let (quiet, _ignored) = mpsc::unbounded_channel();
        let response = tokio::select! {
            biased;
            _ = self.ctx.cancel.cancelled() => return Err(Stop::Cancelled),
            response = self.provider.stream(&request, &quiet) => response.map_err(Stop::Provider)?,
        };
        let cost = self.config.prices.cost(model.unwrap_or(&self.config.model), &response.usage);
        self.state.add(&response.usage, cost);
        self.thread.end_turn(response.usage, cost);
        let summary = response.message.text();
        // The most recent files, named in a stable order.
        let mut reread: Vec<String> =
            self.thread.ledger.most_recent(REREAD_RECENT_FILES).iter().map(|p| self.ctx.workspace.display_path(p)).collect();
        reread.sort();
        self.thread.ledger.clear();
        let kept = self.kept_through_compaction();
        let history = compacted_history(&summary, &reread, &kept, self.thread.last_prompt());
        let system_tokens = self.thread.system.as_deref().map(|s| estimate_tokens(s.len())).unwrap_or(0);
        let after = estimate_messages(&history) + system_tokens;
        self.thread.replace_history(history, before, after);
        self.thread.commit();
        let _ = self.events.send(RunEvent::Compact { before_tokens: before, after_tokens: after, reason: reason.to_string() });
        Ok((before, after))
    }
}
