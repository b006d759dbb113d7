//! The sandbox every `run_shell` command runs in: one interface
//! ([`crate::tools::ShellSandbox`], owned by `tools/`), one implementation
//! per platform. Linux runs Debian's `bubblewrap` (`bwrap`) as a process
//! ([`bubblewrap`]); other systems have none yet and say so (a macOS
//! Seatbelt profile can follow behind the same interface).
//!
//! What the two profiles allow ([`crate::tools::ShellProfile`]):
//!
//! | | unasked | approved |
//! |---|---|---|
//! | write | a private `/tmp` only | the workspace roots, `/tmp`, `/var/tmp`, `sandbox.allowWrite` |
//! | read-only inside the roots | everything | `.git/config`, `.git/hooks`, `.tandem/`, `.claude/`, `.vscode/`, `.mcp.json` (also when missing, so they cannot be created) |
//! | masked (read as empty) | read-deny paths; the home folder's credential stores; the sockets of services that act for it (the runtime folder's session bus, keyring and agents, the system bus, container engines) | read-deny paths |
//! | network | none | only with `sandbox.network` |
//! | processes | its own pid namespace: no other process, no `/proc/$PPID/environ` | the same |
//!
//! [`for_run`] turns the settings into what a run gets: a sandbox, "off by
//! settings", or "none can start here" with the reason; the host reports
//! the last two once per run in plain words ([`Availability::notice`]).

pub mod bubblewrap;
pub mod git;

use std::path::PathBuf;
use std::sync::Arc;

use crate::tools::ShellSandbox;

/// `sandbox` in the settings: how shell commands are confined. The
/// settings loader fills it; only the user's own layers
/// (`~/.tandem/settings.json`, the editor's settings) may loosen it, since
/// a project's files come with the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Run shell commands in the sandbox (on by default).
    pub enabled: bool,
    /// Approved commands may use the network (unasked ones never do).
    pub network: bool,
    /// More places approved commands may write (`~/` is the home folder),
    /// as written; each layer's list is added to the ones below.
    pub allow_write: Vec<String>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings { enabled: true, network: false, allow_write: Vec::new() }
    }
}

/// What a run's shell commands get.
#[derive(Clone)]
pub enum Availability {
    Ready(Arc<dyn ShellSandbox>),
    /// `"sandbox": {"enabled": false}` in the settings.
    Disabled,
    /// No sandbox can start on this machine; the reason, in plain words.
    Unavailable(String),
}

impl std::fmt::Debug for Availability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Availability::Ready(sandbox) => write!(f, "Ready({})", sandbox.describe()),
            Availability::Disabled => write!(f, "Disabled"),
            Availability::Unavailable(reason) => write!(f, "Unavailable({reason})"),
        }
    }
}

impl Availability {
    /// The sandbox, when there is one.
    pub fn sandbox(&self) -> Option<Arc<dyn ShellSandbox>> {
        match self {
            Availability::Ready(sandbox) => Some(Arc::clone(sandbox)),
            _ => None,
        }
    }

    /// What to tell the user once per run when commands run unconfined
    /// (`None` when they are confined).
    pub fn notice(&self) -> Option<String> {
        match self {
            Availability::Ready(_) => None,
            Availability::Disabled => Some(
                "Shell commands run without a sandbox: \"sandbox\": {\"enabled\": false} in the settings switched it off. They can write anywhere you can and reach the network."
                    .to_string(),
            ),
            Availability::Unavailable(reason) => Some(format!(
                "Shell commands run without a sandbox: {reason}. They are not confined: in the default mode only commands judged read-only run without a question."
            )),
        }
    }

    /// One line for `tandem doctor` and `:checkhealth tandem`.
    pub fn describe(&self) -> String {
        match self {
            Availability::Ready(sandbox) => format!("shell commands run in a sandbox ({})", sandbox.describe()),
            Availability::Disabled => "the sandbox is switched off in the settings (\"sandbox\": {\"enabled\": false})".to_string(),
            Availability::Unavailable(reason) => format!("no sandbox: {reason}"),
        }
    }
}

/// The paths a run's commands must not read (read-deny rules), resolved
/// when a command starts, so files created since are covered too.
pub type ReadDenies = Arc<dyn Fn() -> Vec<PathBuf> + Send + Sync>;

/// The sandbox for a run with these settings. `read_denies` gives the
/// paths read-deny rules cover, to mask.
pub fn for_run(settings: &SandboxSettings, read_denies: ReadDenies) -> Availability {
    if !settings.enabled {
        return Availability::Disabled;
    }
    platform(settings, read_denies)
}

#[cfg(target_os = "linux")]
fn platform(settings: &SandboxSettings, read_denies: ReadDenies) -> Availability {
    match bubblewrap::Bubblewrap::probe() {
        Ok(found) => Availability::Ready(Arc::new(bubblewrap::Bubblewrap::new(found, settings, read_denies))),
        Err(reason) => Availability::Unavailable(reason),
    }
}

#[cfg(not(target_os = "linux"))]
fn platform(_settings: &SandboxSettings, _read_denies: ReadDenies) -> Availability {
    Availability::Unavailable(format!("Tandem has no sandbox for {} yet (bubblewrap is Linux only)", std::env::consts::OS))
}
