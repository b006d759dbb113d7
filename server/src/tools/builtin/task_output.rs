//! `task_output`: what a background task printed since the last read,
//! bounded (the start and the end of a long stretch kept), with the total
//! size; with `block`, it first waits for new output or the task's end.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::ports::tasks::{TaskStatus, MAX_BLOCK};
use crate::tools::{Tool, ToolContext, ToolError};

/// Read what a background task printed (stdout and stderr together) since your last read
/// of it, with its status and total output size. Set `block` to wait up to that many seconds
/// for new output or the task's end first (at most 600).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskOutputArgs {
    /// The task's id, as run_shell answered it (`task_id: ID`).
    pub task_id: String,
    /// Seconds to wait for new output or the task's end before answering; 0 or left out:
    /// answer at once.
    #[serde(default)]
    pub block: Option<f64>,
}

pub struct TaskOutput;

#[async_trait]
impl Tool for TaskOutput {
    type Args = TaskOutputArgs;
    type Plan = ();
    const NAME: &'static str = "task_output";

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        format!("task {}", args.task_id)
    }

    async fn plan(&self, args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        match args.block {
            Some(block) if !block.is_finite() || block < 0.0 => Err(ToolError::model("Error: block is a number of seconds, 0 or more.")),
            _ => Ok(()),
        }
    }

    async fn call(&self, args: Self::Args, (): (), ctx: &ToolContext) -> Result<String, ToolError> {
        let Some(tasks) = &ctx.tasks else { return Err(ToolError::model(format!("Error: there is no task {} (no background tasks run here).", args.task_id))) };
        let block = Duration::try_from_secs_f64(args.block.unwrap_or(0.0)).unwrap_or(MAX_BLOCK).min(MAX_BLOCK);
        let read = tasks.read(args.task_id.trim(), block, &ctx.cancel).await.map_err(ToolError::model)?;
        let task = &read.task;
        let status = match task.status {
            TaskStatus::Running => {
                let n = task.processes.len();
                format!("running, {n} process{}", if n == 1 { "" } else { "es" })
            }
            _ => task.describe_status(),
        };
        let mut out = format!("task {} (`{}`): {status}; {} bytes of output in all", task.id, task.command.lines().next().unwrap_or_default(), task.output_bytes);
        if read.to == read.from {
            out.push_str(if task.status == TaskStatus::Running { "; nothing new since your last read." } else { "; nothing more to read." });
            return Ok(out);
        }
        out.push_str(&format!("; bytes {}..{} since your last read", read.from, read.to));
        if read.skipped > 0 {
            out.push_str(&format!(" ({} of them left out in the middle)", read.skipped));
        }
        out.push_str(":\n");
        out.push_str(&read.text);
        Ok(out)
    }
}
