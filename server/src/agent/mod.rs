//! The agent: the loop that sends the history and the tool definitions to a
//! model provider, streams the answer, runs the tool calls through the
//! executor, sends the results back, and repeats until the model answers
//! without tool calls.
//!
//! - [`provider`]: the provider contract, neutral messages, errors, retries.
//! - [`anthropic`], [`openai`] (chat completions), [`responses`] (OpenAI's
//!   Responses API), [`scripted`]: the providers; [`sse`] and
//!   `http` the wire underneath; [`config`] picks one from the environment.
//! - [`run()`]: the loop and the tool-call scheduling (early start, safe
//!   calls together, results in order).
//! - [`prompt`]: the system prompt; [`instructions`]: the project's and the
//!   user's `AGENTS.md` files in it, and those of deeper folders and the
//!   path-scoped rules, loaded into the conversation as the run touches them.
//! - [`events`]: the run events every front end consumes.
//! - [`sub_agent`]: runs inside a run, for the `agent` tool and forked skills.

pub mod anthropic;
pub mod config;
pub mod events;
pub mod http;
pub mod instructions;
pub mod openai;
pub mod prompt;
pub mod provider;
pub mod responses;
mod run;
pub mod scripted;
pub mod sse;
pub mod sub_agent;

pub use events::{event_channel, EventSender, QuestionTurns, RunEvent, RunStatus, Usage};
pub use provider::Provider;
pub use run::{compact_thread, run, run_thread, DEFAULT_MAX_TURNS, MAX_CONCURRENT_TOOLS, MAX_STOP_CONTINUATIONS, TURN_LIMIT_RESULT};

/// One request to run the agent.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// What the user asked.
    pub prompt: String,
    /// Extra context placed before the prompt: the editor selection,
    /// diagnostics, the current file.
    pub context: Option<String>,
    /// What the user attached, as they named it (`notes.md`,
    /// `src/a.rs:3-9`): kept with the prompt in the thread, so a view
    /// opened later shows it (the text itself is in `context`).
    pub attachments: Vec<String>,
    /// The prompt's images (pasted in the editor, `--image`, an ACP image
    /// block), checked ([`crate::model::Image::from_bytes`]): sent after
    /// its text. A model the table says sees no images fails the run
    /// before anything is sent.
    pub images: Vec<crate::model::Image>,
    /// Model turns allowed before the run stops with `turn_limit`
    /// (`None`: [`DEFAULT_MAX_TURNS`]).
    pub max_turns: Option<usize>,
    /// True when the run happens inside an editor (for the system prompt).
    pub in_editor: bool,
    /// Compact the conversation before the first request (`--compact`).
    pub compact: bool,
    /// The whole system prompt, instead of Tandem's own (sub-agents).
    pub system: Option<String>,
    /// The `UserPromptSubmit` and `Stop` hooks of the user's run, which the
    /// loop runs (`None` for sub-agents: those hooks are the user's run's;
    /// tool hooks run for both, from the executor).
    pub hooks: Option<crate::hooks::SharedHooks>,
    /// The model to ask for instead of the provider's (a custom sub-agent's
    /// `model`); `None`: the provider's own.
    pub model: Option<String>,
    /// Said first in the run's events ([`events::RunEvent::Sandbox`]) when
    /// its shell commands run without a sandbox: why, in plain words.
    pub sandbox_notice: Option<String>,
    /// The endpoint the provider talks to and why, said as the run's first
    /// event ([`events::RunEvent::Provider`]); `None` for sub-agents.
    pub endpoint: Option<config::Endpoint>,
    /// The run's id, said in its end event (an editor's run).
    pub run_id: Option<String>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub status: RunStatus,
    /// The final answer text (or the error, for a failed run).
    pub text: String,
    pub turns: usize,
    pub usage: Usage,
    /// The cost estimate, when the model's prices are known.
    pub cost_usd: Option<f64>,
    /// The saved conversation thread the run belongs to (empty when the
    /// thread is not saved).
    pub thread_id: String,
}
