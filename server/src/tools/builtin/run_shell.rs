//! `run_shell`: run a command with `bash -c` (or `sh -c`) in the workspace
//! root, with no stdin, in its own process group, under a timeout.
//!
//! Decisions, in one place:
//! - `timeout` is in milliseconds: 120,000 by default, at most 600,000
//!   (larger values are clamped). On timeout, on `ctx.cancel`, or when the
//!   call's future is dropped, the whole process group is stopped (SIGTERM,
//!   then SIGKILL after a grace period), so a child that spawned children
//!   leaves nothing behind; the partial output is returned.
//! - Output is held in bounded memory however much the command prints: per
//!   stream the first and the last [`STREAM_KEEP_BYTES`] bytes, and a marker
//!   saying how many bytes were dropped in between.
//! - When the shell exits but a background process it started still holds
//!   the output pipes open, the call would never see end-of-file: after a
//!   short grace the group is stopped and the result says so. A background
//!   process whose output is redirected (`cmd > log 2>&1 &`) keeps running.
//! - The child's environment is an allow-list (PATH, HOME, locale,
//!   toolchain variables, what settings add) without credentials: see
//!   [`crate::environment`]. No descriptor above 2 reaches it: whatever
//!   Tandem inherited or opened is closed as the command starts.
//! - A non-zero exit, a timeout and a cancellation are error results.

#[cfg(unix)]
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

use crate::sync::MutexExt;
use crate::tools::ports::shell_sandbox::{Confined, ShellLaunch, ShellProfile, ShellSandbox, Stopping};
use crate::tools::ports::tasks::TaskSpawn;
use crate::tools::{Tool, ToolContext, ToolError, ToolKind};

pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// Per stream, this many bytes are kept from the start and as many from the end.
pub const STREAM_KEEP_BYTES: usize = 512 * 1024;

/// Shell output is long and repetitive; the model rarely needs more than this.
const MAX_RESULT_CHARS: usize = 30_000;

/// Between SIGTERM and SIGKILL, and after SIGKILL before giving up on pipes
/// held open by a process outside the group.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// After the shell exits, how long its output may stay open before the
/// background process holding it is stopped.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Run a shell command (bash) in the workspace root and return its output.
///
/// - stdin is empty: interactive commands fail; pass flags such as `--yes` instead.
/// - Returns stdout, then stderr under `Stderr:`; a non-zero exit is reported with the exit
///   code. Very long output keeps its beginning and end.
/// - The command and everything it started are stopped when the timeout expires.
/// - For a dev server, a watcher or a long test run, set `background` to true: the call
///   answers at once with a task_id; read its output with task_output, list tasks with
///   task_list, stop it (and every process it started) with task_stop. A background task
///   ends with the session. Do not keep a process running with `&` or nohup: in the
///   sandbox, everything a command started is stopped when the command ends.
/// - Prefer the dedicated tools: read_file over cat/head/tail, list_files over find/ls,
///   grep_search over grep/rg, edit_file over sed.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunShellArgs {
    /// The command line, run with `bash -c` in the workspace root.
    pub command: String,
    /// Timeout in milliseconds. Defaults to 120000 (2 minutes); at most 600000 (10 minutes).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Set to true when the command needs the network (installing packages, fetching,
    /// pushing): commands run in a sandbox without network, and with this set the user is
    /// asked whether this one command may reach it. Leave it out otherwise.
    #[serde(default)]
    pub network: bool,
    /// Run the command as a background task (dev servers, watchers, long builds): the
    /// call answers at once with its task_id. No timeout applies; it runs until it exits,
    /// task_stop ends it, or the session ends.
    #[serde(default)]
    pub background: bool,
}

pub struct RunShell;

#[async_trait]
impl Tool for RunShell {
    type Args = RunShellArgs;
    type Plan = ();
    const NAME: &'static str = "run_shell";

    fn kind(&self, args: &Self::Args, _ctx: &ToolContext) -> ToolKind {
        ToolKind::Execute { command: args.command.clone() }
    }

    fn max_result_chars(&self) -> usize {
        MAX_RESULT_CHARS
    }

    fn summary(&self, args: &Self::Args) -> String {
        let first_line = args.command.lines().next().unwrap_or_default();
        let mut summary: String = first_line.chars().take(80).collect();
        if summary.len() < args.command.trim_end().len() {
            summary.push('…');
        }
        summary
    }

    async fn plan(&self, args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        if args.command.trim().is_empty() {
            return Err(ToolError::model("Error: the command is empty."));
        }
        Ok(())
    }

    async fn call(&self, args: Self::Args, _plan: (), ctx: &ToolContext) -> Result<String, ToolError> {
        let timeout_ms = args.timeout.unwrap_or(DEFAULT_TIMEOUT_MS).clamp(1, MAX_TIMEOUT_MS);
        // The executor saved the run's edits in editor buffers first
        // (tools::observer::SaveForCommand) and adds the note on what it did not.
        if args.background {
            return start_background(&args.command, ctx).await;
        }
        let run = run(&args.command, ctx, Duration::from_millis(timeout_ms)).await?;
        // The hosts the network lists refused it are put to the user now,
        // before the model reads the result (each once per run).
        let turn = ctx.run.questions.locked().clone();
        let answered = ctx.network.ask_refused(turn).await;
        let with_notes = |mut text: String| {
            for note in &answered {
                text.push_str("\n\n");
                text.push_str(note);
            }
            text
        };
        match report(run, timeout_ms) {
            Ok(text) => Ok(with_notes(text)),
            Err(ToolError::Model(text)) => Err(ToolError::Model(with_notes(text))),
            Err(fatal) => Err(fatal),
        }
    }
}

/// Output kept within a fixed budget: the first bytes, a ring of the last
/// bytes, and the count of everything in between.
#[derive(Debug)]
pub struct BoundedOutput {
    keep: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    /// Where the next byte goes in `tail` once it is full.
    tail_pos: usize,
    total: u64,
}

impl BoundedOutput {
    pub fn new(keep: usize) -> Self {
        BoundedOutput { keep, head: Vec::new(), tail: Vec::new(), tail_pos: 0, total: 0 }
    }

    pub fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.head.len() < self.keep {
            let take = chunk.len().min(self.keep - self.head.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.is_empty() || self.keep == 0 {
            return;
        }
        if chunk.len() >= self.keep {
            self.tail.clear();
            self.tail.extend_from_slice(&chunk[chunk.len() - self.keep..]);
            self.tail_pos = 0;
            return;
        }
        if self.tail.len() < self.keep {
            let room = self.keep - self.tail.len();
            let take = chunk.len().min(room);
            self.tail.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        while !chunk.is_empty() {
            let take = chunk.len().min(self.keep - self.tail_pos);
            self.tail[self.tail_pos..self.tail_pos + take].copy_from_slice(&chunk[..take]);
            self.tail_pos = (self.tail_pos + take) % self.keep;
            chunk = &chunk[take..];
        }
    }

    /// Bytes received but not kept.
    pub fn dropped(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// The kept text; a marker stands where bytes were dropped.
    pub fn into_text(self) -> String {
        let dropped = self.dropped();
        let mut tail = Vec::with_capacity(self.tail.len());
        tail.extend_from_slice(&self.tail[self.tail_pos..]);
        tail.extend_from_slice(&self.tail[..self.tail_pos]);
        if dropped == 0 {
            let mut all = self.head;
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        // Cut points may fall inside a UTF-8 sequence: trim to whole characters.
        let head_end = match std::str::from_utf8(&self.head) {
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            _ => self.head.len(),
        };
        let tail_start = tail.iter().take(3).take_while(|b| (**b & 0b1100_0000) == 0b1000_0000).count();
        format!(
            "{}\n[... {dropped} bytes of output dropped ...]\n{}",
            String::from_utf8_lossy(&self.head[..head_end]),
            String::from_utf8_lossy(&tail[tail_start..])
        )
    }
}

/// Why the command stopped, when it did not simply exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interrupt {
    Timeout,
    Cancelled,
    /// The shell exited, a background process kept its output open.
    OutputHeldOpen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Running,
    Terminated,
    Killed,
}

/// The call's command reaches the network only through the proxy of
/// `sandbox.network`'s lists (when it runs in the sandbox).
fn proxied(ctx: &ToolContext) -> bool {
    ctx.approval.shell_profile() == ShellProfile::Approved && ctx.network.policy.route(ctx.approval.network()) == crate::tools::ports::network::Route::Proxied
}

/// What the sandbox allowed the command, to explain its failures.
#[derive(Clone)]
struct SandboxNote {
    sandbox: std::sync::Arc<dyn ShellSandbox>,
    profile: ShellProfile,
    network: bool,
    /// Its network went through the proxy of `sandbox.network`'s lists.
    proxied: bool,
    stopping: Stopping,
}

struct ShellRun {
    /// `None`: the command ran without a sandbox.
    sandbox: Option<SandboxNote>,
    status: Option<ExitStatus>,
    interrupt: Option<Interrupt>,
    stdout: BoundedOutput,
    stderr: BoundedOutput,
}

/// The shell for a command with this environment (`bash` where its PATH
/// has it, else `sh`; on Windows the `shell` setting's bash or Git for
/// Windows' `bash.exe`), or the one line that says what to install.
fn shell_program(ctx: &ToolContext, env: &[(std::ffi::OsString, std::ffi::OsString)]) -> Result<std::path::PathBuf, ToolError> {
    crate::platform::shell(&crate::environment::path_of(env), ctx.child_env.shell.as_deref()).map_err(ToolError::model)
}

/// The process to start: the shell itself, or the shell inside the run's
/// sandbox (whose guard lives as long as the command).
fn shell_command(command: &str, ctx: &ToolContext) -> Result<(tokio::process::Command, Option<Confined>), ToolError> {
    let env = ctx.child_env.vars();
    let argv: Vec<std::ffi::OsString> = vec![shell_program(ctx, &env)?.into(), "-c".into(), command.into()];
    let confined = match &ctx.sandbox {
        Some(sandbox) => {
            let roots = ctx.workspace.roots();
            let launch = ShellLaunch { profile: ctx.approval.shell_profile(), network: ctx.approval.network(), roots, argv: &argv };
            Some(sandbox.confine(&launch).map_err(|reason| {
                ToolError::model(format!("Error: the command did not run: the sandbox cannot confine it ({reason})."))
            })?)
        }
        None => None,
    };
    let mut cmd = match &confined {
        Some(confined) => {
            let mut cmd = tokio::process::Command::new(&confined.program);
            cmd.args(&confined.args);
            cmd
        }
        None => {
            let mut cmd = tokio::process::Command::new(&argv[0]);
            cmd.args(&argv[1..]);
            cmd
        }
    };
    cmd.current_dir(ctx.workspace.root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_clear()
        .envs(env);
    Ok((cmd, confined))
}

/// Start `command` as a background task of the session, in a process
/// tree every process it starts stays in: on Linux the sandbox (which
/// gives it a pid namespace of its own, so every process it starts is
/// known and ends with it), on Windows a Job Object (terminated as one,
/// and with Tandem). Its stdout and stderr on one pipe, handed over to the
/// session's tasks running.
async fn start_background(command: &str, ctx: &ToolContext) -> Result<String, ToolError> {
    let Some(tasks) = &ctx.tasks else {
        return Err(ToolError::model("Error: background tasks are not available here (no session keeps them). Run the command in the foreground, with a timeout."));
    };
    let contained = cfg!(windows) || ctx.sandbox.as_ref().is_some_and(|sandbox| sandbox.contains_processes());
    if !contained {
        return Err(ToolError::model(
            "Error: background tasks run only in the sandbox, which lets Tandem know and stop every process a task starts; shell commands run without one here. Run the command in the foreground, with a timeout.",
        ));
    }
    let (mut cmd, confined) = shell_command(command, ctx)?;
    let (reader, writer) = std::io::pipe().map_err(|e| ToolError::model(format!("Error: cannot make a pipe for the task's output: {e}")))?;
    let writer_too = writer.try_clone().map_err(|e| ToolError::model(format!("Error: cannot make a pipe for the task's output: {e}")))?;
    cmd.stdout(Stdio::from(writer)).stderr(Stdio::from(writer_too));
    // Our copies of the pipe's write end go with the command (dropped once
    // it started): the reader sees the end of the output once the task's
    // processes are gone.
    #[cfg(unix)]
    let child = {
        crate::platform::own_process_group(&mut cmd);
        // After the group's hook, which marks every descriptor above 2 to
        // close: the seccomp filter's descriptor is then put in place.
        if let Some(handed) = confined.as_ref().and_then(|c| c.handed.as_ref()) {
            crate::platform::hand_over(&mut cmd, &handed.file, handed.at);
        }
        spawn_on_a_lasting_thread(cmd).await.map(crate::platform::ProcessTree::from_group_leader)
    };
    #[cfg(windows)]
    let child = crate::platform::ProcessTree::spawn(cmd);
    let child = child.map_err(|e| ToolError::model(format!("Error: cannot start the task: {e}")))?;
    // Without a sandbox (Windows) the command reaches what any program does.
    let network = confined.as_ref().is_none_or(|c| c.network);
    let proxied = confined.is_some() && proxied(ctx);
    let unconfined = confined.is_none();
    let guard: Box<dyn Send + Sync> = Box::new(confined);
    let spawn = TaskSpawn { command: command.to_string(), child, output: reader, guard, network, thread: ctx.thread_id.clone() };
    let task = tasks.start(spawn).map_err(ToolError::model)?;
    let id = &task.id;
    let reach = if unconfined {
        "It runs without a sandbox, as any program of yours: it may reach the network, and a server it starts is reachable from this machine's loopback (127.0.0.1) at the port it listens on."
    } else if network {
        "It may reach the network: a server it starts is reachable from this machine's loopback (127.0.0.1) at the port it listens on."
    } else if proxied {
        "It reaches the hosts the settings' sandbox.network lists, through Tandem's proxy; its loopback is its own, so a server it starts is reachable neither from the machine nor from other commands. To test a server from outside, start it with \"network\": true (the user is asked)."
    } else {
        "It has no network: its loopback is its own, so a server it starts is reachable neither from the machine nor from other commands. To test a server from outside, start it with \"network\": true (the user is asked)."
    };
    Ok(format!(
        "task_id: {id}\nThe command runs in the background. Read what it prints with task_output {{\"task_id\": \"{id}\"}} (add \"block\": SECONDS to wait for new output or its end); task_list lists the tasks; task_stop ends it and every process it started. When it ends by itself you are told. It ends when this session ends.\n{reach}"
    ))
}

/// Start a background task's process from a thread that lives as long as
/// Tandem. The sandbox's `--die-with-parent` is the kernel's parent-death
/// signal, and Linux sends it when the *thread* that forked the process
/// ends, not the process: a runtime worker thread can end while Tandem
/// runs (after a `block_in_place` it joins the blocking pool, whose idle
/// threads exit), and a task started from it would be killed minutes into
/// its life. One thread, started once and never ended, forks every task.
#[cfg(unix)]
async fn spawn_on_a_lasting_thread(cmd: tokio::process::Command) -> std::io::Result<tokio::process::Child> {
    type Job = (tokio::process::Command, tokio::runtime::Handle, tokio::sync::oneshot::Sender<std::io::Result<tokio::process::Child>>);
    static SPAWNER: std::sync::OnceLock<Option<std::sync::mpsc::Sender<Job>>> = std::sync::OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, incoming) = std::sync::mpsc::channel::<Job>();
        let started = std::thread::Builder::new().name("tandem-task-spawner".into()).spawn(move || {
            for (mut cmd, runtime, reply) in incoming {
                // The child is registered with the runtime that will wait on it.
                let _entered = runtime.enter();
                let _ = reply.send(cmd.spawn());
            }
        });
        started.ok().map(|_| jobs)
    });
    let Some(jobs) = spawner else { return Err(std::io::Error::other("cannot start the thread that starts background tasks")) };
    let (reply, answer) = tokio::sync::oneshot::channel();
    jobs.send((cmd, tokio::runtime::Handle::current(), reply)).map_err(|_| std::io::Error::other("the thread that starts background tasks has ended"))?;
    answer.await.map_err(|_| std::io::Error::other("the thread that starts background tasks has ended"))?
}

/// Run the command in a process tree of its own
/// ([`crate::platform::ProcessTree`]: a process group, or a Windows Job
/// Object), so a timeout or a cancellation stops all of it.
async fn run(command: &str, ctx: &ToolContext, timeout: Duration) -> Result<ShellRun, ToolError> {
    let (cmd, confined) = shell_command(command, ctx)?;
    let handed = confined.as_ref().and_then(|c| c.handed.as_ref()).map(|handed| (&handed.file, handed.at));
    let mut child = crate::platform::ProcessTree::spawn_handing(cmd, handed).map_err(|e| match &confined {
        Some(confined) => ToolError::model(format!("Error: cannot start the sandbox ({}): {e}", confined.program.display())),
        None => ToolError::model(format!("Error: cannot start the shell: {e}")),
    })?;
    let Some((mut stdout, mut stderr)) = child.take_output() else {
        return Err(ToolError::model("Error: cannot capture the command's output."));
    };

    let mut run = ShellRun {
        sandbox: confined.as_ref().zip(ctx.sandbox.as_ref()).map(|(c, sandbox)| SandboxNote {
            sandbox: std::sync::Arc::clone(sandbox),
            profile: ctx.approval.shell_profile(),
            network: c.network,
            proxied: proxied(ctx),
            stopping: c.stopping,
        }),
        status: None,
        interrupt: None,
        stdout: BoundedOutput::new(STREAM_KEEP_BYTES),
        stderr: BoundedOutput::new(STREAM_KEEP_BYTES),
    };
    let (mut out_open, mut err_open) = (true, true);
    let mut out_buf = vec![0u8; READ_CHUNK_BYTES];
    let mut err_buf = vec![0u8; READ_CHUNK_BYTES];
    let mut stage = Stage::Running;
    let mut next_step = Instant::now() + timeout;

    while run.status.is_none() || out_open || err_open {
        tokio::select! {
            read = stdout.read(&mut out_buf), if out_open => match read {
                Ok(n) if n > 0 => run.stdout.push(&out_buf[..n]),
                _ => out_open = false,
            },
            read = stderr.read(&mut err_buf), if err_open => match read {
                Ok(n) if n > 0 => run.stderr.push(&err_buf[..n]),
                _ => err_open = false,
            },
            status = child.wait(), if run.status.is_none() => {
                match status {
                    Ok(status) => run.status = Some(status),
                    Err(e) => return Err(ToolError::model(format!("Error: lost track of the command: {e}"))),
                }
                if stage == Stage::Running {
                    next_step = next_step.min(Instant::now() + DRAIN_GRACE);
                }
            },
            () = ctx.cancel.cancelled(), if stage == Stage::Running && run.interrupt.is_none() => {
                run.interrupt = Some(Interrupt::Cancelled);
                next_step = Instant::now();
            },
            () = tokio::time::sleep_until(next_step) => {
                match stage {
                    Stage::Running => {
                        if run.interrupt.is_none() {
                            run.interrupt =
                                Some(if run.status.is_none() { Interrupt::Timeout } else { Interrupt::OutputHeldOpen });
                        }
                        // A sandbox may say its command is killed at once;
                        // a system without signals kills it at once too.
                        if run.sandbox.as_ref().is_some_and(|s| s.stopping == Stopping::AtOnce) {
                            child.kill();
                            stage = Stage::Killed;
                        } else if child.terminate() {
                            stage = Stage::Terminated;
                        } else {
                            stage = Stage::Killed;
                        }
                    }
                    Stage::Terminated => {
                        child.kill();
                        stage = Stage::Killed;
                    }
                    // Something outside the group (it called setsid) holds
                    // the pipes: stop waiting for it.
                    Stage::Killed => break,
                }
                next_step = Instant::now() + KILL_GRACE;
            },
        }
    }
    if stage == Stage::Killed || run.interrupt.is_none() {
        // Done with the group: a process left in it redirected its output
        // and may keep running (a deliberately backgrounded server).
        child.disarm();
    }
    if run.status.is_none() {
        // The shell itself is still there only if it ignored SIGKILL's
        // delivery window; take its status if it has one by now.
        run.status = child.try_wait();
    }
    drop(confined);
    Ok(run)
}

/// What the sandbox may have had to do with a failure, said in the result
/// so the model (and the user reading along) knows why and what to change.
fn sandbox_failure_note(sandbox: &SandboxNote, stdout: &str, stderr: &str) -> String {
    let said = |needles: &[&str]| needles.iter().any(|n| stderr.contains(n) || stdout.contains(n));
    let mut notes = sandbox.sandbox.explain_failure(sandbox.profile, &format!("{stdout}\n{stderr}"));
    if sandbox.proxied && said(NETWORK_FAILURES) {
        notes.push("The sandbox lets this command reach only the hosts the settings' sandbox.network lists, through Tandem's proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at it): a program that ignores those variables, or looks names up itself, reaches nothing. Use the proxy (curl, pip, npm and git over https do), or call run_shell again with \"network\": true to ask the user to let this one command reach the whole network.".to_string());
    } else if !sandbox.network && said(NETWORK_FAILURES) {
        notes.push(match sandbox.profile {
            ShellProfile::Unasked => "The command ran unasked, in a sandbox without network. A command that needs the network must be approved: call run_shell again with \"network\": true, and the user is asked to let this command reach it (or the user allows network in the settings: \"sandbox\": {\"network\": true}).".to_string(),
            ShellProfile::Contained => "The command ran without a question, in a sandbox without network. A command that needs the network must be approved: call run_shell again with \"network\": true, and the user is asked to let this command reach it.".to_string(),
            ShellProfile::Approved => "The sandbox has no network. Call run_shell again with \"network\": true to ask the user to let this command reach it; to allow it for every approved command, the user sets \"sandbox\": {\"network\": true} in ~/.tandem/settings.json or the editor's Tandem settings (a project's .tandem/settings.json cannot).".to_string(),
        });
    }
    notes.iter().map(|n| format!("\n({n})")).collect()
}

/// What programs print when they cannot reach the network.
const NETWORK_FAILURES: &[&str] = &[
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Could not resolve hostname",
    "Name or service not known",
    "Network is unreachable",
    "getaddrinfo",
    "EAI_AGAIN",
    "ENOTFOUND",
    "ENETUNREACH",
    "failed to lookup address",
    "Connection refused",
];

fn describe_status(status: Option<ExitStatus>) -> String {
    match status {
        #[cfg(unix)]
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("exit code {}, killed by signal {signal}", 128 + signal),
            (None, None) => "exit code unknown".to_string(),
        },
        #[cfg(not(unix))]
        Some(s) => s.code().map_or_else(|| "exit code unknown".to_string(), |code| format!("exit code {code}")),
        None => "exit code unknown".to_string(),
    }
}

/// `\nStdout:\n…` and `\nStderr:\n…` for the non-empty streams.
fn labelled_parts(stdout: &str, stderr: &str) -> String {
    let mut out = String::new();
    if !stdout.is_empty() {
        out.push_str("\nStdout:\n");
        out.push_str(stdout);
    }
    if !stderr.is_empty() {
        out.push_str("\nStderr:\n");
        out.push_str(stderr);
    }
    out
}

/// A closing line when output was dropped: the result may be cut again
/// by the executor, and the end is what survives.
fn dropped_note(stdout: &BoundedOutput, stderr: &BoundedOutput) -> String {
    let mut parts = Vec::new();
    for (name, stream) in [("stdout", stdout), ("stderr", stderr)] {
        if stream.dropped() > 0 {
            parts.push(format!("{} of {} {name} bytes", stream.dropped(), stream.total));
        }
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "\n(Output too long: dropped the middle {}. Redirect the output to a file and search it with grep_search, or page it with read_file.)",
        parts.join(" and ")
    )
}

fn report(run: ShellRun, timeout_ms: u64) -> Result<String, ToolError> {
    let dropped = dropped_note(&run.stdout, &run.stderr);
    let stdout = run.stdout.into_text();
    let stderr = run.stderr.into_text();
    let (stdout, stderr) = (stdout.trim_end(), stderr.trim_end());
    match run.interrupt {
        Some(Interrupt::Timeout) => {
            return Err(ToolError::model(format!(
                "Command timed out after {timeout_ms} ms; it and the processes it started were stopped.{}{dropped}",
                labelled_parts(stdout, stderr)
            )));
        }
        Some(Interrupt::Cancelled) => {
            return Err(ToolError::model(format!(
                "Command cancelled; it and the processes it started were stopped.{}{dropped}",
                labelled_parts(stdout, stderr)
            )));
        }
        Some(Interrupt::OutputHeldOpen) | None => {}
    }
    let note = if run.interrupt == Some(Interrupt::OutputHeldOpen) {
        "\n(A background process kept the command's output open after the shell exited, so it was stopped. To keep a background process running, redirect its output: `cmd > log 2>&1 &`.)"
    } else {
        ""
    };
    if run.status.is_some_and(|s| s.success()) {
        let mut out = String::from(stdout);
        if !stderr.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str("Stderr:\n");
            out.push_str(stderr);
        }
        if out.is_empty() {
            out.push_str("(no output)");
        }
        out.push_str(&dropped);
        out.push_str(note);
        return Ok(out);
    }
    let sandbox_note = run.sandbox.as_ref().map(|sandbox| sandbox_failure_note(sandbox, stdout, stderr)).unwrap_or_default();
    Err(ToolError::model(format!(
        "Command failed ({}){}{dropped}{note}{sandbox_note}",
        describe_status(run.status),
        labelled_parts(stdout, stderr)
    )))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pushed(keep: usize, chunks: &[&[u8]]) -> BoundedOutput {
        let mut out = BoundedOutput::new(keep);
        for chunk in chunks {
            out.push(chunk);
        }
        out
    }

    /// On Windows the `shell` setting names the bash: the stand-in (on no
    /// PATH) runs the command; one that is not there is said in one line.
    #[cfg(windows)]
    #[tokio::test]
    async fn on_windows_run_shell_runs_the_bash_the_shell_setting_names() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ToolContext::new(std::sync::Arc::new(crate::workspace::Workspace::new(dir.path()).unwrap()));
        let args = |command: &str| RunShellArgs { command: command.into(), timeout: Some(60_000), network: false, background: false };
        ctx.child_env = std::sync::Arc::new(crate::environment::ChildEnv { shell: Some(crate::platform::test_fake_bash()), ..Default::default() });
        let out = RunShell.call(args("echo from the setting"), (), &ctx).await.unwrap();
        assert!(out.contains("from the setting"), "{out}");
        let missing = dir.path().join("no-bash.exe");
        ctx.child_env = std::sync::Arc::new(crate::environment::ChildEnv { shell: Some(missing.clone()), ..Default::default() });
        match RunShell.call(args("echo x"), (), &ctx).await {
            Err(ToolError::Model(message)) => {
                assert!(message.starts_with(&format!("Error: the `shell` setting names {}, which is not a file", missing.display())), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bounded_output_keeps_everything_under_the_budget() {
        let out = pushed(4, &[b"abc", b"def", b"gh"]);
        assert_eq!(out.dropped(), 0);
        assert_eq!(out.into_text(), "abcdefgh");
    }

    #[test]
    fn bounded_output_keeps_head_and_tail() {
        let out = pushed(4, &[b"abc", b"def", b"ghi", b"jk", b"l"]);
        assert_eq!(out.dropped(), 4);
        assert_eq!(out.into_text(), "abcd\n[... 4 bytes of output dropped ...]\nijkl");
        let out = pushed(3, &[b"0123456789abcdef"]);
        assert_eq!(out.into_text(), "012\n[... 10 bytes of output dropped ...]\ndef");
    }

    #[test]
    fn bounded_output_cuts_on_characters() {
        // "é" is two bytes: the head ends inside one, then the tail starts inside one.
        let out = pushed(3, &["aaé".as_bytes(), b"xxxx", "é".as_bytes()]);
        assert_eq!(out.into_text(), "aa\n[... 4 bytes of output dropped ...]\nxé");
        let out = pushed(3, &[b"abc", b"xxxx", "éé".as_bytes()]);
        assert_eq!(out.into_text(), "abc\n[... 5 bytes of output dropped ...]\né");
    }
}
