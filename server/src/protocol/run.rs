//! The words a run's events are made of: what a call does, token counts,
//! how a run ended, the todo list, where a background task is.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a call does, as every layer above `tools/` sees it: permissions,
/// reviews, the transcript and `lsp/` use this, never a tool's name or its
/// input fields. Fail closed: [`ToolKind::Other`] is not read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads or searches these files or folders (absolute, resolved paths).
    Read { paths: Vec<PathBuf> },
    /// Changes this one file (absolute, resolved path).
    Edit { path: PathBuf },
    /// Runs this shell command (the whole text, every line).
    Execute { command: String },
    /// Fetches this URL.
    Fetch { url: String },
    /// Anything else.
    #[default]
    Other,
}

/// Token counts, from the provider's own `usage`. `input_tokens` counts
/// every input token, cached or not; the two cache fields say how many of
/// them were read from the prompt cache or written to it (Anthropic), or
/// read from it (OpenAI's `cached_tokens`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_input_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation_input_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage { input_tokens, output_tokens, ..Usage::default() }
    }

    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Completed,
    Cancelled,
    Failed,
    TurnLimit,
    /// The model repeated itself (the same call with the same result, or
    /// the same text) past the nudge.
    Loop,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Failed => "failed",
            RunStatus::TurnLimit => "turn_limit",
            RunStatus::Loop => "loop",
        }
    }
}

/// Where one item of the list stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

impl TodoStatus {
    /// The checkbox a terminal shows: `[ ]`, `[~]`, `[x]`.
    pub fn checkbox(self) -> &'static str {
        match self {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Completed => "[x]",
        }
    }
}

/// One item of the todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoItem {
    /// A short stable id for the item (given when left out: its position, from 1).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// What to do, in a few words ("Run the test suite").
    pub content: String,
    pub status: TodoStatus,
}

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Running,
    /// It ended by itself (`exit_code` says how).
    Exited,
    /// Stopped by `task_stop`, by the user, or when its session ended.
    Stopped,
    /// Started by a Tandem process that has ended since (a resumed
    /// thread's task): nothing of it runs any more.
    Lost,
}

impl TaskStatus {
    pub fn name(self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Exited => "exited",
            TaskStatus::Stopped => "stopped",
            TaskStatus::Lost => "lost",
        }
    }
}
