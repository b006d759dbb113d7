//! `todo_write`: the model's plan for the run as a todo list, replaced
//! whole on each call and shown to the user as it changes (see
//! [`todo`](crate::tools::todo)).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::todo::{self, TodoItem, TodoStatus};
use crate::tools::{Tool, ToolContext, ToolError};

/// Most items a list may hold.
pub const MAX_TODOS: usize = 100;
/// Longest item, in characters.
pub const MAX_CONTENT_CHARS: usize = 500;

/// Write your todo list for this task: the steps of the work and where each stands. The user
/// sees it as you go. Each call replaces the whole list: send every item, with its status
/// (pending, in_progress, completed). Use it for work of three steps or more; keep one item
/// in_progress at a time and mark items completed as soon as they are done.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoWriteArgs {
    /// The whole list, in order.
    pub todos: Vec<TodoItem>,
}

pub struct TodoWrite;

#[async_trait]
impl Tool for TodoWrite {
    type Args = TodoWriteArgs;
    type Plan = ();
    const NAME: &'static str = "todo_write";

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        // It changes nothing but what the user is shown.
        true
    }

    async fn plan(&self, args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        if args.todos.len() > MAX_TODOS {
            return Err(ToolError::model(format!("Error: the list has {} items; keep it to {MAX_TODOS} at most.", args.todos.len())));
        }
        if let Some(item) = args.todos.iter().find(|t| t.content.trim().is_empty()) {
            let which = if item.id.is_empty() { String::new() } else { format!(" (id {})", item.id) };
            return Err(ToolError::model(format!("Error: an item{which} has no content: say what the step is.")));
        }
        if let Some(item) = args.todos.iter().find(|t| t.content.chars().count() > MAX_CONTENT_CHARS) {
            let start: String = item.content.chars().take(40).collect();
            return Err(ToolError::model(format!("Error: the item \"{start}…\" is longer than {MAX_CONTENT_CHARS} characters; say it in a few words.")));
        }
        Ok(())
    }

    async fn call(&self, args: Self::Args, (): (), ctx: &ToolContext) -> Result<String, ToolError> {
        let todos: Vec<TodoItem> = args
            .todos
            .into_iter()
            .enumerate()
            .map(|(i, t)| TodoItem { id: if t.id.trim().is_empty() { (i + 1).to_string() } else { t.id.trim().to_string() }, content: t.content.trim().to_string(), status: t.status })
            .collect();
        let done = todos.iter().filter(|t| t.status == TodoStatus::Completed).count();
        let listed = todo::describe(&todos);
        let total = todos.len();
        ctx.run.set_todos(todos);
        if total == 0 {
            return Ok("The todo list is empty now.".to_string());
        }
        Ok(format!("Todo list updated ({done} of {total} completed):\n{listed}"))
    }
}
