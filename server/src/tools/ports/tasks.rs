//! What the background-task tools ask of the session: `run_shell` with
//! `"background": true` starts the command itself (through the same gate
//! and sandbox as any command) and hands the running process to the
//! session's [`Tasks`]; `task_list`, `task_output` and `task_stop` ask
//! them about it; the loop announces the tasks that ended by themselves
//! and keeps their list with the thread. The `tasks` module implements
//! it, one registry per front-end session (the host owns it), so a task
//! outlives the run that started it and ends with the session.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// A command `run_shell` started in the background, handed over running.
pub struct TaskSpawn {
    /// The command line, as the model wrote it.
    pub command: String,
    /// The process tree that was started: on Linux the sandbox's first
    /// process, and when it exits everything the command started has
    /// ended with it; on Windows a Job Object, which is terminated as one.
    pub child: crate::platform::ProcessTree,
    /// The read end of the one pipe the command's stdout and stderr both
    /// write to, so their lines stay in the order they were printed.
    pub output: std::io::PipeReader,
    /// What the sandbox set up for the command, kept until it has ended.
    pub guard: Box<dyn Send + Sync>,
    /// The command may reach the network (and a server it starts is
    /// reachable from the machine's loopback).
    pub network: bool,
    /// The thread whose run started it: its endings are announced there.
    pub thread: String,
}

pub use crate::protocol::TaskStatus;

/// One process of a running task, as the machine sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskProcess {
    /// Its pid outside the sandbox (what `ps` and `kill` on the machine use).
    pub pid: u32,
    /// Its command line, shortened.
    pub command: String,
}

/// A task as the tools, the loop and the front ends see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskInfo {
    /// `1`, `2`, …: unique in the session (and in the threads it resumed).
    pub id: String,
    pub command: String,
    pub status: TaskStatus,
    /// How it ended: its exit code, or 128 + the signal that killed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub started_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
    /// Bytes it printed in all (stdout and stderr).
    #[serde(default)]
    pub output_bytes: u64,
    /// Its processes now (empty once it ended): every process the command
    /// started, daemons too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<TaskProcess>,
    #[serde(default)]
    pub network: bool,
    /// The thread whose run started it.
    #[serde(default)]
    pub thread: String,
}

impl TaskInfo {
    /// The task as a thread keeps it: without what only a live process has.
    pub fn saved(&self) -> TaskInfo {
        TaskInfo { processes: Vec::new(), output_bytes: 0, ..self.clone() }
    }

    /// "exited with code 1", "running", "stopped", …
    pub fn describe_status(&self) -> String {
        match (self.status, self.exit_code) {
            (TaskStatus::Exited, Some(code)) if code > 128 => format!("exited with code {code} (killed by signal {})", code - 128),
            (TaskStatus::Exited, Some(code)) => format!("exited with code {code}"),
            (TaskStatus::Exited, None) => "exited".to_string(),
            (TaskStatus::Stopped, _) => "stopped".to_string(),
            (TaskStatus::Lost, _) => "ended with the Tandem process that ran it".to_string(),
            (TaskStatus::Running, _) => "running".to_string(),
        }
    }
}

/// What a task printed since the last read.
#[derive(Debug, Clone)]
pub struct TaskRead {
    pub task: TaskInfo,
    /// The new text (lossy UTF-8, control characters replaced), bounded.
    pub text: String,
    /// Where the read started and ended, in bytes of the whole output.
    pub from: u64,
    pub to: u64,
    /// Bytes in `from..to` not in `text`: dropped from the middle of the
    /// kept output, or left out of this read to keep it short.
    pub skipped: u64,
}

/// A task that ended by itself, for the announcement in the model's next
/// request and the front ends' events.
#[derive(Debug, Clone)]
pub struct TaskEnding {
    pub task: TaskInfo,
    /// Its last lines of output.
    pub last_lines: Vec<String>,
}

/// What happened to a task, as watchers hear it.
#[derive(Debug, Clone)]
pub enum TaskNews {
    Started(TaskInfo),
    /// It ended (by itself, stopped, or with the session).
    Ended(TaskEnding),
}

/// Told of each task's start and end (a run's event stream, a front
/// end's task view); registered with [`Tasks::watch`].
pub type TaskWatcher = std::sync::Arc<dyn Fn(&TaskNews) + Send + Sync>;

/// The most a caller may block in [`Tasks::read`].
pub const MAX_BLOCK: Duration = Duration::from_secs(600);

/// The session's background tasks.
#[async_trait]
pub trait Tasks: Send + Sync {
    /// Take a started command over; its info (`Err`: refused, the process
    /// already stopped, with the reason for the model).
    fn start(&self, spawn: TaskSpawn) -> Result<TaskInfo, String>;

    /// Every task of the session (and those restored from its threads),
    /// oldest first, each with its processes now. Looking is not telling:
    /// the endings stay news for the model ([`Tasks::take_endings`]).
    fn list(&self) -> Vec<TaskInfo>;

    /// The same, for the model's eyes (`task_list`): the ended tasks it
    /// lists are no news any more.
    fn list_for_model(&self) -> Vec<TaskInfo>;

    /// What task `id` printed since the last read; with `block`, wait up
    /// to that long for new output or its end first. `Err`: no such task.
    async fn read(&self, id: &str, block: Duration, cancel: &CancellationToken) -> Result<TaskRead, String>;

    /// End task `id` and every process it started (a SIGTERM, then after a
    /// grace period the whole sandbox killed); its info once it ended.
    /// `Err`: no such task.
    async fn stop(&self, id: &str) -> Result<TaskInfo, String>;

    /// The tasks of `thread` that ended by themselves since the last call
    /// and that no tool result has shown ended yet (each is taken once).
    fn take_endings(&self, thread: &str) -> Vec<TaskEnding>;

    /// Tasks a thread kept from an earlier session, as it saved them:
    /// those not known here join the list, the running ones as lost.
    fn restore(&self, thread: &str, saved: &[TaskInfo]);

    /// Hear of every task's start and end until the returned guard is dropped.
    fn watch(&self, watcher: TaskWatcher) -> Box<dyn Send + Sync>;
}
