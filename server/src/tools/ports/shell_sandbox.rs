//! What `run_shell` asks of a sandbox: the contract the `sandbox` module
//! implements (one implementation per platform) and the host hands to a
//! run through [`crate::tools::ToolContext::sandbox`]. `tools/` never
//! imports the sandbox, and knows nothing of how a platform confines: how
//! a confined command is stopped ([`Stopping`]) and what a failure the
//! sandbox caused looks like ([`ShellSandbox::explain_failure`]) come from
//! the implementation.
//!
//! Which [`ShellProfile`] a command gets is decided by how its call was
//! permitted (the executor maps the [`crate::tools::PermissionDecision`]):
//!
//! | permitted | profile |
//! |---|---|
//! | judged read-only, or allowed by a rule or a hook, in `default`/`plan` | [`ShellProfile::Unasked`] |
//! | asked and allowed by the user | [`ShellProfile::Approved`] |
//! | allowed by a rule, a grant or a hook in `acceptEdits`; anything in `bypassPermissions` | [`ShellProfile::Approved`] |
//! | contained, not asked: `acceptEdits`, `autoAllowSandboxed`, a shape allowed for the session | [`ShellProfile::Contained`] |
//!
//! An approved command reaches the network when the settings allow it
//! (`sandbox.network`), or when the call asked for it (`network: true`) and
//! the user allowed it when asked: [`crate::tools::PermissionDecision::ApprovedWithNetwork`].

use std::ffi::OsString;
use std::path::PathBuf;

/// How a shell command is confined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ShellProfile {
    /// Nobody was asked: the command may write only a private temp folder,
    /// has no network, sees no other process, and paths covered by read
    /// denies are masked. A command wrongly judged read-only changes nothing.
    #[default]
    Unasked,
    /// Someone (the user, or the mode they chose) approved it: it may write
    /// inside the workspace roots, temp folders and the settings'
    /// `allowWrite`; Tandem's and the editor's config stay read-only;
    /// network only if settings allow it.
    Approved,
    /// Nobody was asked, because the sandbox contains it: it may write
    /// inside the workspace roots and a private temp folder only, sees of
    /// the home folder and the services what an unasked command sees (no
    /// credential store, no agent or engine socket), and has no network.
    Contained,
}

impl ShellProfile {
    pub fn name(self) -> &'static str {
        match self {
            ShellProfile::Unasked => "unasked",
            ShellProfile::Approved => "approved",
            ShellProfile::Contained => "contained",
        }
    }
}

/// One command to confine.
#[derive(Debug, Clone)]
pub struct ShellLaunch<'a> {
    pub profile: ShellProfile,
    /// The user allowed this one command the network (a `run_shell` call
    /// with `network` set, approved when asked); only with `Approved`.
    pub network: bool,
    /// The workspace roots (absolute); the first is the command's folder.
    pub roots: &'a [PathBuf],
    /// The program and its arguments as they would run unconfined
    /// (`bash -c COMMAND`).
    pub argv: &'a [OsString],
}

/// A command wrapped in a sandbox: run `program` with `args` instead of the
/// original argv, and keep `guard` alive until the process has exited (it
/// holds what the sandbox set up for this command and cleans it up).
pub struct Confined {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// The command can reach the network.
    pub network: bool,
    /// How the command is stopped from outside (a timeout, a cancel).
    pub stopping: Stopping,
    /// A file `program` reads on a descriptor number of its own
    /// (bubblewrap's seccomp filter, `--seccomp 9`): the process starting
    /// it puts the file there after closing every other descriptor above 2.
    pub handed: Option<Handed>,
    pub guard: Box<dyn Send + Sync>,
}

/// A file handed to a confined program on descriptor `at`.
#[derive(Debug)]
pub struct Handed {
    pub file: std::fs::File,
    pub at: i32,
}

/// How a confined command is stopped from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopping {
    /// SIGTERM to its process group, SIGKILL after a grace period.
    Gracefully,
    /// SIGKILL at once: the sandbox's own first process does not stop on
    /// a SIGTERM from outside, and everything inside ends with it.
    AtOnce,
}

impl std::fmt::Debug for Confined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confined").field("program", &self.program).field("args", &self.args).field("network", &self.network).finish_non_exhaustive()
    }
}

/// A sandbox that can confine shell commands.
pub trait ShellSandbox: Send + Sync {
    /// What it is, for messages ("bubblewrap 0.8.0").
    fn describe(&self) -> String;

    /// Wrap one command. `Err` is a sentence saying why it cannot be
    /// confined; the command then does not run.
    fn confine(&self, launch: &ShellLaunch<'_>) -> Result<Confined, String>;

    /// What this sandbox may have had to do with a confined command that
    /// failed, in sentences for the model (why, and what to change): its
    /// own set-up failing, a write it refused. `output` is what the
    /// command printed (stdout, then stderr); empty when nothing in it
    /// points at the sandbox.
    fn explain_failure(&self, profile: ShellProfile, output: &str) -> Vec<String>;

    /// Every process a confined command starts stays inside the sandbox
    /// and ends with its first process (a pid namespace of its own):
    /// what background tasks need to know and stop all of a task's
    /// processes, daemons included.
    fn contains_processes(&self) -> bool {
        false
    }
}
