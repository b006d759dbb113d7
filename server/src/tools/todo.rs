//! The run's todo list: the model's plan for the work, replaced whole by
//! each `todo_write` call, kept in the run's scope while a run lasts and
//! with its thread between runs (saved with it, so compaction and
//! `--resume` keep it), and shown to the user as it changes (the `todo`
//! run event every front end shows).

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

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

/// The list as the model reads it back (after a compaction, in
/// `todo_write`'s answer): one line per item.
pub fn describe(todos: &[TodoItem]) -> String {
    todos.iter().map(|t| format!("{} {}", t.status.checkbox(), t.content)).collect::<Vec<_>>().join("\n")
}

/// Told of the new list each time it changes (the loop sends the `todo` event).
pub type TodoNotice = std::sync::Arc<dyn Fn(&[TodoItem]) + Send + Sync>;
