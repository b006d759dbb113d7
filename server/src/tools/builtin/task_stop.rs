//! `task_stop`: end a background task and every process it started
//! (SIGTERM to each, then its whole sandbox killed after a grace period).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::ports::tasks::TaskStatus;
use crate::tools::{Tool, ToolContext, ToolError};

/// Stop a background task: it and every process it started end (SIGTERM, then SIGKILL after a
/// short grace period). Answers how it ended.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskStopArgs {
    /// The task's id, as run_shell answered it (`task_id: ID`).
    pub task_id: String,
}

pub struct TaskStop;

#[async_trait]
impl Tool for TaskStop {
    type Args = TaskStopArgs;
    type Plan = ();
    const NAME: &'static str = "task_stop";

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        // It only ends what this session started.
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        format!("task {}", args.task_id)
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, args: Self::Args, (): (), ctx: &ToolContext) -> Result<String, ToolError> {
        let Some(tasks) = &ctx.tasks else { return Err(ToolError::model(format!("Error: there is no task {} (no background tasks run here).", args.task_id))) };
        let was_running = tasks.list().iter().any(|t| t.id == args.task_id.trim() && t.status == TaskStatus::Running);
        let task = tasks.stop(args.task_id.trim()).await.map_err(ToolError::model)?;
        let command = task.command.lines().next().unwrap_or_default();
        Ok(if was_running && task.status == TaskStatus::Stopped {
            format!("Stopped task {} (`{command}`): it and every process it started have ended.", task.id)
        } else {
            format!("Task {} (`{command}`) was not running: it {}.", task.id, task.describe_status())
        })
    }
}
