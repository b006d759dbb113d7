//! `task_list`: the session's background tasks (see
//! [`ports::tasks`](crate::tools::ports::tasks)), each with its status,
//! age, output size and processes, checked against the machine when asked.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::ports::tasks::{TaskInfo, TaskStatus};
use crate::tools::{Tool, ToolContext, ToolError};

/// List the background tasks (started with run_shell and "background": true): each task's
/// id, command, status (running, or how it ended: exit code), age, how much it printed, and
/// its processes now.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskListArgs {}

pub struct TaskList;

#[async_trait]
impl Tool for TaskList {
    type Args = TaskListArgs;
    type Plan = ();
    const NAME: &'static str = "task_list";

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        true
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, _args: Self::Args, (): (), ctx: &ToolContext) -> Result<String, ToolError> {
        let Some(tasks) = &ctx.tasks else { return Ok("No background tasks (none can run here).".to_string()) };
        let list = tasks.list_for_model();
        if list.is_empty() {
            return Ok("No background tasks.".to_string());
        }
        let now = now_ms();
        Ok(list.iter().map(|task| describe(task, now)).collect::<Vec<_>>().join("\n"))
    }
}

/// One task on a line (or two): what `task_list` answers.
pub fn describe(task: &TaskInfo, now_ms: u64) -> String {
    let age = age(now_ms.saturating_sub(task.started_ms));
    let command = short(&task.command);
    let mut line = match task.status {
        TaskStatus::Running => format!("task {}: running for {age}: `{command}`", task.id),
        _ => {
            let took = task.ended_ms.map(|end| age_of(end.saturating_sub(task.started_ms))).unwrap_or_default();
            format!("task {}: {} after {took}: `{command}`", task.id, task.describe_status())
        }
    };
    line.push_str(&format!("; {} bytes of output", task.output_bytes));
    if task.status == TaskStatus::Running {
        let pids: Vec<String> = task.processes.iter().map(|p| p.pid.to_string()).collect();
        match pids.len() {
            0 => line.push_str("; no process left (ending)"),
            1 => line.push_str(&format!("; 1 process (pid {})", pids[0])),
            n => line.push_str(&format!("; {n} processes (pids {})", pids.join(" "))),
        }
    }
    line
}

fn short(command: &str) -> String {
    let first = command.lines().next().unwrap_or_default();
    let mut out: String = first.chars().take(100).collect();
    if out.len() < command.trim_end().len() {
        out.push('…');
    }
    out
}

fn age(ms: u64) -> String {
    age_of(ms)
}

fn age_of(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ports::tasks::TaskProcess;

    #[test]
    fn a_task_reads_as_one_line() {
        let running = TaskInfo {
            id: "1".into(),
            command: "npm run dev\n--port 3000".into(),
            status: TaskStatus::Running,
            exit_code: None,
            started_ms: 1_000,
            ended_ms: None,
            output_bytes: 2104,
            processes: vec![TaskProcess { pid: 41, command: "bash".into() }, TaskProcess { pid: 42, command: "node".into() }],
            network: false,
            thread: "t".into(),
        };
        let exited = TaskInfo { id: "2".into(), command: "cargo test".into(), status: TaskStatus::Exited, exit_code: Some(101), ended_ms: Some(4_500), processes: vec![], ..running.clone() };
        expect_test::expect![[r#"
            task 1: running for 1m15s: `npm run dev…`; 2104 bytes of output; 2 processes (pids 41 42)
            task 2: exited with code 101 after 3s: `cargo test`; 2104 bytes of output"#]]
        .assert_eq(&format!("{}\n{}", describe(&running, 76_000), describe(&exited, 76_000)));
    }
}
