//! The agent: the loop that sends the history and the tool definitions to a
//! model provider, streams the answer, runs the tool calls through the
//! executor, sends the results back, and repeats until the model answers
//! without tool calls.
//!
//! PLACEHOLDER: providers, SSE, the loop and the system prompt are being
//! built (issue 3). The types below are the interface the CLI and the LSP
//! module use.

pub mod events;

pub use events::{RunEvent, RunStatus, Usage};

use tokio::sync::mpsc;

use crate::tools::{Executor, ToolContext};

/// One request to run the agent.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// What the user asked.
    pub prompt: String,
    /// Extra context placed before the prompt: the editor selection,
    /// diagnostics, the current file.
    pub context: Option<String>,
    /// Model turns allowed before the run stops with `turn_limit`.
    pub max_turns: Option<usize>,
    /// True when the run happens inside an editor (for the system prompt).
    pub in_editor: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub status: RunStatus,
    /// The final answer text (or the error, for a failed run).
    pub text: String,
    pub turns: usize,
    pub usage: Usage,
}

/// Run the agent to the end. Events stream through `events` as they happen;
/// cancelling `ctx.cancel` stops the stream and the tools.
pub async fn run(
    _executor: &Executor,
    _ctx: ToolContext,
    _request: RunRequest,
    _events: mpsc::UnboundedSender<RunEvent>,
) -> RunOutcome {
    RunOutcome { status: RunStatus::Failed, text: "the agent loop is not built yet".into(), turns: 0, usage: Usage::default() }
}
