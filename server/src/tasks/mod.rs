//! Background tasks: the registry of one front-end session (the host owns
//! it), implementing the tools' [`Tasks`] port. Each task is a command
//! `run_shell` started in the sandbox, in a pid namespace of its own: its
//! processes are the sandbox process's descendants ([`processes`]), and
//! all of them end with it. A task's output (stdout and stderr on one
//! pipe) is kept in a bounded ring ([`output`]); its status is exact:
//! `running` until its first process has exited, then how it ended.
//!
//! Lifetimes: a task outlives the run that started it and ends with its
//! session — [`TaskRegistry::stop_all`] when the front end closes, and
//! when the registry is dropped; if Tandem itself dies (a SIGKILL), the
//! sandbox dies with its parent and the kernel ends the namespace.

pub mod output;
pub mod processes;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::AsyncReadExt;
use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;

use crate::sync::MutexExt;
use crate::tools::ports::tasks::{TaskEnding, TaskInfo, TaskNews, TaskSpawn, TaskStatus, TaskWatcher, Tasks};
use output::Output;
use processes::ProcessTable;

/// Tasks that may run at once in one session.
pub const MAX_RUNNING: usize = 32;
/// Tasks a session keeps (running and ended); the oldest ended one is
/// forgotten to make room.
pub const MAX_KEPT: usize = 64;
/// Between the SIGTERM to a task's processes and the SIGKILL of its sandbox.
pub const STOP_GRACE: Duration = Duration::from_secs(2);
/// After the task's first process exited, how long its output may take
/// to drain (its namespace is gone by then; this only bounds the wait).
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// Lines of output an ending announces.
const LAST_LINES: usize = 5;

/// The tasks of one session.
pub struct TaskRegistry {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    watchers: Mutex<Vec<(u64, TaskWatcher)>>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    next_watcher: u64,
    tasks: Vec<Entry>,
}

struct Entry {
    info: TaskInfo,
    /// The sandbox's process, while it runs.
    root_pid: Option<u32>,
    output: Output,
    /// Where the next `task_output` starts.
    cursor: u64,
    /// A tool result showed its end, or it was announced (or it needs no
    /// announcement: the model stopped it).
    announced: bool,
    /// Ask its driver to stop it.
    stop: Arc<Notify>,
    /// Bumped on new output and at its end: what a blocking read waits on.
    changed: watch::Sender<u64>,
}

impl Default for TaskRegistry {
    fn default() -> Self {
        TaskRegistry::new()
    }
}

impl TaskRegistry {
    pub fn new() -> Self {
        TaskRegistry { shared: Arc::new(Shared { state: Mutex::new(State { next_id: 1, ..State::default() }), watchers: Mutex::default() }) }
    }

    /// Stop a task at the user's request (a front end's stop button): the
    /// model is told in its next request, as for a task that ended by itself.
    pub async fn stop_for_user(&self, id: &str) -> Result<TaskInfo, String> {
        self.stop_task(id, false).await
    }

    /// End every running task (the session ends) and wait until each has.
    pub async fn stop_all(&self) {
        let running: Vec<String> = self.shared.state.locked().tasks.iter().filter(|e| e.info.status == TaskStatus::Running).map(|e| e.info.id.clone()).collect();
        futures::future::join_all(running.iter().map(|id| self.stop_task(id, true))).await;
    }

    async fn stop_task(&self, id: &str, announced: bool) -> Result<TaskInfo, String> {
        let mut changed = {
            let mut state = self.shared.state.locked();
            let known = state.known_ids();
            let Some(entry) = state.find_mut(id) else { return Err(unknown(id, &known)) };
            if entry.info.status != TaskStatus::Running {
                entry.announced = true;
                return Ok(entry.info.clone());
            }
            entry.announced = announced;
            entry.stop.notify_one();
            entry.changed.subscribe()
        };
        loop {
            if let Some(info) = self.ended(id) {
                return Ok(info);
            }
            if changed.changed().await.is_err() {
                return self.ended(id).ok_or_else(|| format!("task {id} was forgotten while it stopped"));
            }
        }
    }

    /// The task's info once it is no longer running.
    fn ended(&self, id: &str) -> Option<TaskInfo> {
        let state = self.shared.state.locked();
        state.find(id).filter(|e| e.info.status != TaskStatus::Running).map(|e| e.info.clone())
    }

    fn tell(&self, news: &TaskNews) {
        tell(&self.shared, news);
    }
}

fn tell(shared: &Shared, news: &TaskNews) {
    let watchers: Vec<TaskWatcher> = shared.watchers.locked().iter().map(|(_, w)| Arc::clone(w)).collect();
    for watcher in watchers {
        watcher(news);
    }
}

fn unknown(id: &str, known: &[String]) -> String {
    if known.is_empty() {
        return format!("Error: there is no task {id:?}: no background task was started in this session.");
    }
    format!("Error: there is no task {id:?}. The tasks are: {} (task_list describes them; the session keeps the last {MAX_KEPT}).", known.join(", "))
}

impl State {
    fn find(&self, id: &str) -> Option<&Entry> {
        self.tasks.iter().find(|e| e.info.id == id)
    }

    fn find_mut(&mut self, id: &str) -> Option<&mut Entry> {
        self.tasks.iter_mut().find(|e| e.info.id == id)
    }

    fn known_ids(&self) -> Vec<String> {
        self.tasks.iter().map(|e| e.info.id.clone()).collect()
    }

    fn running(&self) -> usize {
        self.tasks.iter().filter(|e| e.info.status == TaskStatus::Running).count()
    }

    /// Make room for one more task: forget the oldest ended one.
    fn make_room(&mut self) {
        while self.tasks.len() >= MAX_KEPT {
            let Some(oldest) = self.tasks.iter().position(|e| e.info.status != TaskStatus::Running) else { return };
            self.tasks.remove(oldest);
        }
    }
}

fn new_entry(info: TaskInfo, root_pid: Option<u32>) -> Entry {
    let (changed, _) = watch::channel(0);
    Entry { info, root_pid, output: Output::default(), cursor: 0, announced: false, stop: Arc::new(Notify::new()), changed }
}

#[async_trait]
impl Tasks for TaskRegistry {
    fn start(&self, spawn: TaskSpawn) -> Result<TaskInfo, String> {
        let TaskSpawn { command, mut child, output, guard, network, thread } = spawn;
        let reader = match crate::platform::async_pipe(output) {
            Ok(reader) => reader,
            Err(err) => {
                child.kill();
                return Err(format!("Error: cannot read the task's output: {err}"));
            }
        };
        let (info, stop, changed) = {
            let mut state = self.shared.state.locked();
            if state.running() >= MAX_RUNNING {
                child.kill();
                return Err(format!(
                    "Error: {MAX_RUNNING} background tasks are running already, the most one session runs at once; the command was not started. Stop one with task_stop (task_list lists them)."
                ));
            }
            state.make_room();
            let id = state.next_id.to_string();
            state.next_id += 1;
            let info = TaskInfo {
                id,
                command,
                status: TaskStatus::Running,
                exit_code: None,
                started_ms: now_ms(),
                ended_ms: None,
                output_bytes: 0,
                processes: Vec::new(),
                network,
                thread,
            };
            let entry = new_entry(info.clone(), child.id());
            let handles = (Arc::clone(&entry.stop), entry.changed.clone());
            state.tasks.push(entry);
            (info, handles.0, handles.1)
        };
        let shared = Arc::clone(&self.shared);
        let id = info.id.clone();
        tokio::spawn(async move {
            let ended = drive(&shared, &id, child, reader, &stop).await;
            drop(guard);
            finish(&shared, &id, ended);
            changed.send_modify(|n| *n += 1);
        });
        let mut started = info.clone();
        started.processes = self.processes_of(&info.id);
        self.tell(&TaskNews::Started(started.clone()));
        Ok(started)
    }

    fn list(&self) -> Vec<TaskInfo> {
        self.listed(false)
    }

    fn list_for_model(&self) -> Vec<TaskInfo> {
        self.listed(true)
    }

    async fn read(&self, id: &str, block: Duration, cancel: &CancellationToken) -> Result<TaskRead, String> {
        let mut changed = {
            let state = self.shared.state.locked();
            let Some(entry) = state.find(id) else { return Err(unknown(id, &state.known_ids())) };
            entry.changed.subscribe()
        };
        let deadline = tokio::time::Instant::now() + block;
        loop {
            {
                let state = self.shared.state.locked();
                let Some(entry) = state.find(id) else { return Err(format!("Error: task {id} was forgotten (the session keeps the last {MAX_KEPT} tasks).")) };
                let fresh = entry.output.total() > entry.cursor || entry.info.status != TaskStatus::Running;
                if fresh || block.is_zero() {
                    break;
                }
            }
            tokio::select! {
                changed = changed.changed() => if changed.is_err() { break },
                () = tokio::time::sleep_until(deadline) => break,
                () = cancel.cancelled() => break,
            }
        }
        let table = ProcessTable::now();
        let mut state = self.shared.state.locked();
        let Some(entry) = state.find_mut(id) else { return Err(format!("Error: task {id} was forgotten (the session keeps the last {MAX_KEPT} tasks).")) };
        let from = entry.cursor;
        let stretch = entry.output.read_from(from);
        entry.cursor = stretch.to;
        let mut info = entry.info.clone();
        info.output_bytes = entry.output.total();
        match (info.status, entry.root_pid) {
            (TaskStatus::Running, Some(root)) => info.processes = table.under(root),
            (TaskStatus::Running, None) => {}
            _ => entry.announced = true,
        }
        Ok(TaskRead { task: info, text: stretch.text, from, to: stretch.to, skipped: stretch.skipped })
    }

    async fn stop(&self, id: &str) -> Result<TaskInfo, String> {
        self.stop_task(id, true).await
    }

    fn take_endings(&self, thread: &str) -> Vec<TaskEnding> {
        let mut state = self.shared.state.locked();
        let mut endings = Vec::new();
        for entry in state.tasks.iter_mut() {
            if entry.info.thread != thread || entry.info.status == TaskStatus::Running || entry.announced {
                continue;
            }
            entry.announced = true;
            let mut task = entry.info.clone();
            task.output_bytes = entry.output.total();
            endings.push(TaskEnding { task, last_lines: entry.output.last_lines(LAST_LINES) });
        }
        endings
    }

    fn restore(&self, thread: &str, saved: &[TaskInfo]) {
        let mut state = self.shared.state.locked();
        for task in saved {
            if state.find(&task.id).is_some() {
                continue;
            }
            let mut task = task.clone();
            task.thread = thread.to_string();
            let was_running = task.status == TaskStatus::Running;
            if was_running {
                task.status = TaskStatus::Lost;
            }
            if let Ok(n) = task.id.parse::<u64>() {
                state.next_id = state.next_id.max(n + 1);
            }
            let mut entry = new_entry(task, None);
            // A task that was running when its session ended is news to
            // the model; one it saw end is not.
            entry.announced = !was_running;
            state.make_room();
            state.tasks.push(entry);
        }
        state.tasks.sort_by_key(|e| e.info.id.parse::<u64>().unwrap_or(u64::MAX));
    }

    fn watch(&self, watcher: TaskWatcher) -> Box<dyn Send + Sync> {
        let id = {
            let mut state = self.shared.state.locked();
            state.next_watcher += 1;
            state.next_watcher
        };
        self.shared.watchers.locked().push((id, watcher));
        Box::new(Unwatch { shared: Arc::downgrade(&self.shared), id })
    }
}

use crate::tools::ports::tasks::TaskRead;

impl TaskRegistry {
    /// Every task with its processes now; `seen`: the model reads the list,
    /// so the endings in it are told.
    fn listed(&self, seen: bool) -> Vec<TaskInfo> {
        let table = ProcessTable::now();
        let mut state = self.shared.state.locked();
        state
            .tasks
            .iter_mut()
            .map(|entry| {
                let mut info = entry.info.clone();
                info.output_bytes = entry.output.total();
                match (info.status, entry.root_pid) {
                    (TaskStatus::Running, Some(root)) => info.processes = table.under(root),
                    (TaskStatus::Running, None) => {}
                    _ if seen => entry.announced = true,
                    _ => {}
                }
                info
            })
            .collect()
    }

    fn processes_of(&self, id: &str) -> Vec<crate::tools::ports::tasks::TaskProcess> {
        let root = self.shared.state.locked().find(id).and_then(|e| e.root_pid);
        root.map(|root| ProcessTable::now().under(root)).unwrap_or_default()
    }
}

impl Drop for TaskRegistry {
    fn drop(&mut self) {
        // The session is gone: nothing it started keeps running. Each
        // driver stops its task (SIGTERM, then the sandbox killed).
        for entry in self.shared.state.locked().tasks.iter() {
            if entry.info.status == TaskStatus::Running {
                entry.stop.notify_one();
            }
        }
    }
}

struct Unwatch {
    shared: std::sync::Weak<Shared>,
    id: u64,
}

impl Drop for Unwatch {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.watchers.locked().retain(|(id, _)| *id != self.id);
        }
    }
}

/// How a task's first process ended.
struct Ended {
    exit_code: Option<i32>,
    stopped: bool,
}

/// Read the task's output until it ends, stopping it when asked: its
/// processes get a SIGTERM, and the sandbox is killed after
/// [`STOP_GRACE`] (everything in its namespace ends with it).
async fn drive(shared: &Shared, id: &str, mut child: crate::platform::ProcessTree, mut reader: crate::platform::AsyncPipe, stop: &Notify) -> Ended {
    let mut buf = vec![0u8; 64 * 1024];
    let mut status: Option<std::process::ExitStatus> = None;
    let mut open = true;
    let mut stopped = false;
    let mut kill_at: Option<tokio::time::Instant> = None;
    let mut drain_until = tokio::time::Instant::now();
    loop {
        if status.is_some() && !open {
            break;
        }
        tokio::select! {
            read = reader.read(&mut buf), if open => match read {
                Ok(n) if n > 0 => push_output(shared, id, &buf[..n]),
                _ => open = false,
            },
            waited = child.wait(), if status.is_none() => {
                match waited {
                    Ok(s) => status = Some(s),
                    Err(err) => {
                        tracing::warn!(%err, task = id, "lost track of a background task");
                        child.kill();
                        break;
                    }
                }
                drain_until = tokio::time::Instant::now() + DRAIN_GRACE;
            },
            () = stop.notified(), if status.is_none() && !stopped => {
                stopped = true;
                #[cfg(unix)]
                if let Some(root) = child.id() {
                    processes::signal_all(&ProcessTable::now().under(root), libc::SIGTERM);
                }
                kill_at = Some(tokio::time::Instant::now() + STOP_GRACE);
            },
            () = sleep_until(kill_at), if status.is_none() => {
                // In the sandbox the namespace ends with its first process;
                // on Windows the Job Object is terminated as one.
                child.kill();
                kill_at = None;
            },
            () = tokio::time::sleep_until(drain_until), if status.is_some() && open => open = false,
        }
    }
    Ended { exit_code: status.and_then(exit_code), stopped }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn push_output(shared: &Shared, id: &str, bytes: &[u8]) {
    let mut state = shared.state.locked();
    if let Some(entry) = state.find_mut(id) {
        entry.output.push(bytes);
        entry.changed.send_modify(|n| *n += 1);
    }
}

/// Record how the task ended and tell the watchers.
fn finish(shared: &Shared, id: &str, ended: Ended) {
    let ending = {
        let mut state = shared.state.locked();
        let Some(entry) = state.find_mut(id) else { return };
        entry.info.status = if ended.stopped { TaskStatus::Stopped } else { TaskStatus::Exited };
        entry.info.exit_code = ended.exit_code;
        entry.info.ended_ms = Some(now_ms());
        entry.info.output_bytes = entry.output.total();
        entry.root_pid = None;
        TaskEnding { task: entry.info.clone(), last_lines: entry.output.last_lines(LAST_LINES) }
    };
    tell(shared, &TaskNews::Ended(ending));
}

fn exit_code(status: std::process::ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.code().or_else(|| status.signal().map(|s| 128 + s))
    }
    #[cfg(not(unix))]
    status.code()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::process::Stdio;

    /// Start `script` (no sandbox: the registry does not care) as a task of thread `t`.
    // (The tests that start `sh` are Unix only, as these helpers.)
    #[cfg(unix)]
    fn start(registry: &TaskRegistry, script: &str) -> TaskInfo {
        let (reader, writer) = std::io::pipe().unwrap();
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args(["-c", script]).stdin(Stdio::null()).stdout(Stdio::from(writer)).kill_on_drop(true);
        let child = spawned(cmd);
        registry.start(TaskSpawn { command: script.into(), child, output: reader, guard: Box::new(()), network: false, thread: "t".into() }).unwrap()
    }

    /// `cmd` started as a task's process tree is.
    #[cfg(unix)]
    fn spawned(mut cmd: tokio::process::Command) -> crate::platform::ProcessTree {
        crate::platform::own_process_group(&mut cmd);
        crate::platform::ProcessTree::from_group_leader(cmd.spawn().unwrap())
    }

    /// Wait (bounded) until every task started so far has ended.
    #[cfg(unix)]
    async fn ended(registry: &TaskRegistry) {
        let done = Arc::new(Notify::new());
        let told = Arc::clone(&done);
        let _watching = registry.watch(Arc::new(move |news: &TaskNews| {
            if matches!(news, TaskNews::Ended(_)) {
                told.notify_one();
            }
        }));
        while registry.list().iter().any(|t| t.status == TaskStatus::Running) {
            let _ = tokio::time::timeout(Duration::from_secs(20), done.notified()).await;
        }
    }

    // Unix only: it runs `sh`, which Windows has only with Git Bash (not under Wine here).
    #[cfg(unix)]
    #[tokio::test]
    async fn looking_at_the_list_keeps_an_ending_news_and_the_models_list_takes_it() {
        let registry = TaskRegistry::new();
        start(&registry, "echo bye; exit 3");
        ended(&registry).await;
        // The loop saves the list with the thread each turn: that is no telling.
        assert_eq!(registry.list()[0].describe_status(), "exited with code 3");
        let endings = registry.take_endings("t");
        assert_eq!(endings.len(), 1);
        assert_eq!(endings[0].last_lines, ["bye"]);
        assert!(registry.take_endings("t").is_empty(), "each ending is told once");

        start(&registry, "exit 4");
        ended(&registry).await;
        assert!(registry.take_endings("other thread").is_empty());
        registry.list_for_model();
        assert!(registry.take_endings("t").is_empty(), "task_list showed the model its end");
    }

    // Unix only: it runs `sh`, which Windows has only with Git Bash (not under Wine here).
    #[cfg(unix)]
    #[tokio::test]
    async fn a_session_runs_at_most_32_tasks_at_once_and_a_silent_task_reads_as_nothing_new() {
        let registry = TaskRegistry::new();
        for _ in 0..MAX_RUNNING {
            start(&registry, "exec sleep 600");
        }
        let (reader, writer) = std::io::pipe().unwrap();
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args(["-c", "exec sleep 601"]).stdin(Stdio::null()).stdout(Stdio::from(writer)).kill_on_drop(true);
        let child = spawned(cmd);
        let pid = child.id().unwrap();
        let spawn = TaskSpawn { command: "sleep 601".into(), child, output: reader, guard: Box::new(()), network: false, thread: "t".into() };
        let refused = registry.start(spawn).unwrap_err();
        assert!(refused.contains("32 background tasks are running already") && refused.contains("was not started"), "{refused}");
        // The refused command does not run on.
        let gone = tokio::time::timeout(Duration::from_secs(20), async {
            while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z')) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        assert!(gone.await.is_ok(), "the refused command still runs");
        // A task that prints nothing: a short block answers with nothing new.
        let read = registry.read("1", Duration::from_millis(50), &CancellationToken::new()).await.unwrap();
        assert_eq!((read.text.as_str(), read.from, read.to, read.task.status), ("", 0, 0, TaskStatus::Running));
        registry.stop_all().await;
        assert!(registry.list().iter().all(|t| t.status == TaskStatus::Stopped));
        assert!(registry.take_endings("t").is_empty(), "the session's end is no news for the model");
    }

    /// On Windows a background task runs in a Job Object: `run_shell`
    /// starts it (with the `shell` setting's bash, Git Bash's stand-in),
    /// and task_stop ends the shell, its child and its grandchild.
    #[cfg(windows)]
    #[tokio::test]
    async fn on_windows_a_background_task_runs_in_a_job_object_that_task_stop_ends_whole() {
        use crate::tools::Tool as _;
        let dir = tempfile::tempdir().unwrap();
        let registry = Arc::new(TaskRegistry::new());
        let mut ctx = crate::tools::ToolContext::new(Arc::new(crate::workspace::Workspace::new(dir.path()).unwrap()));
        ctx.child_env = Arc::new(crate::environment::ChildEnv { shell: Some(crate::platform::test_fake_bash()), ..Default::default() });
        ctx.tasks = Some(Arc::clone(&registry) as Arc<dyn Tasks>);
        let args = serde_json::from_value(serde_json::json!({"command": "tree task-tree", "background": true})).unwrap();
        let answer = crate::tools::builtin::run_shell::RunShell.call(args, (), &ctx).await.unwrap();
        assert!(answer.starts_with("task_id: 1\n") && answer.contains("without a sandbox"), "{answer}");
        let pids_file = ctx.workspace.root().join("task-tree.pids");
        let pids = || -> Vec<u32> { std::fs::read_to_string(&pids_file).unwrap_or_default().lines().filter_map(|l| l.parse().ok()).collect() };
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while pids().len() < 3 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let pids = pids();
        assert_eq!(pids.len(), 3, "the shell, its child and its grandchild never all ran: {pids:?}");
        assert_eq!(registry.list()[0].status, TaskStatus::Running);
        let stopped = tokio::time::timeout(Duration::from_secs(30), registry.stop("1")).await.expect("task_stop never returned").unwrap();
        assert_eq!(stopped.status, TaskStatus::Stopped);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while pids.iter().any(|pid| crate::platform::process_exists(*pid)) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let left: Vec<u32> = pids.into_iter().filter(|pid| crate::platform::process_exists(*pid)).collect();
        assert!(left.is_empty(), "processes of the task outlived task_stop: {left:?}");
    }

    // Unix only: it runs `sh`, which Windows has only with Git Bash (not under Wine here).
    #[cfg(unix)]
    #[tokio::test]
    async fn an_unknown_task_names_the_known_ones() {
        let registry = TaskRegistry::new();
        let cancel = CancellationToken::new();
        assert!(registry.read("1", Duration::ZERO, &cancel).await.unwrap_err().contains("no background task was started"));
        start(&registry, "exit 0");
        assert!(registry.stop("9").await.unwrap_err().contains("there is no task \"9\". The tasks are: 1"));
    }
}
