//! The run's todo list: the model's plan for the work, replaced whole by
//! each `todo_write` call, kept in the run's scope while a run lasts and
//! with its thread between runs (saved with it, so compaction and
//! `--resume` keep it), and shown to the user as it changes (the `todo`
//! run event every front end shows).

pub use crate::protocol::{TodoItem, TodoStatus};

/// The list as the model reads it back (after a compaction, in
/// `todo_write`'s answer): one line per item.
pub fn describe(todos: &[TodoItem]) -> String {
    todos.iter().map(|t| format!("{} {}", t.status.checkbox(), t.content)).collect::<Vec<_>>().join("\n")
}

/// Told of the new list each time it changes (the loop sends the `todo` event).
pub type TodoNotice = std::sync::Arc<dyn Fn(&[TodoItem]) + Send + Sync>;
