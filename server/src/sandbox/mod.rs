//! The sandbox every `run_shell` command runs in: one interface
//! ([`crate::tools::ShellSandbox`], owned by `tools/`), one implementation
//! per platform. Linux runs Debian's `bubblewrap` (`bwrap`) as a process
//! ([`bubblewrap`]); macOS runs `sandbox-exec` with a Seatbelt profile
//! written for each command from the same inputs ([`seatbelt`]), once it
//! has checked itself; Windows has none yet and says so.
//!
//! What the two profiles allow ([`crate::tools::ShellProfile`]):
//!
//! | | unasked | approved |
//! |---|---|---|
//! | write | a private `/tmp` only | the workspace roots, `/tmp`, `/var/tmp`, `sandbox.allowWrite` |
//! | read-only inside the roots | everything | `.git/config`, `.git/hooks`, every file git reads config from (what `.git/config` includes), `.tandem/`, `.claude/`, `.vscode/`, `.mcp.json` (also when missing, so they cannot be created) |
//! | the home folder | empty, but for the toolchain folders ([`bubblewrap::HOME_TOOLCHAINS`], `sandbox.allowRead`) and the workspace | as it is |
//! | masked (read as empty) | read-deny paths; Tandem's own folders and the credential stores wherever the home folder shows; the local settings files; every bound socket in the home folder and the workspace, and those of services that act for the user (the runtime folder's session bus, keyring and agents, the system bus, container engines) | read-deny paths |
//! | network | none | with `sandbox.network`: all of it, or the listed hosts only, through Tandem's proxy ([`proxy`], [`bridge`]) |
//! | processes | its own pid namespace: no other process, no `/proc/$PPID/environ` | the same |
//! | system calls | a seccomp filter ([`seccomp`]): no ptrace, keyrings, perf, bpf, io_uring, new user namespaces, mounts | the same |
//!
//! A third profile, **contained** (a command that runs without a question
//! because the sandbox contains it: `acceptEdits`, `autoAllowSandboxed`, a
//! shape allowed for the session), writes as an approved command does but
//! only the workspace roots and a private `/tmp` (not `/var/tmp`,
//! `$TMPDIR` or `allowWrite`), and reads, masks and reaches as an unasked
//! one does: the home folder's toolchains only, no service socket, no
//! network.
//!
//! [`contain`] keeps the lifetime, not the reach, of the programs that run
//! outside the sandbox on the user's word (MCP servers, hooks): nothing
//! they start outlives them or Tandem.
//!
//! [`for_run`] turns the settings into what a run gets: a sandbox, "off by
//! settings", or "none can start here" with the reason; the host reports
//! the last two once per run in plain words ([`Availability::notice`]).

#[cfg(unix)]
pub mod bridge;
pub mod bubblewrap;
pub mod cache;
pub mod contain;
pub mod git;
#[cfg(unix)]
pub mod proxy;

/// Off Unix no sandbox starts (bubblewrap's probe finds no `bwrap`), so no
/// command is routed through the proxy; what bubblewrap's code names of it
/// says so if it is ever asked.
#[cfg(not(unix))]
pub mod proxy {
    use std::path::Path;
    use std::sync::Arc;

    use crate::tools::ports::network::Network;

    /// The proxy: none off Unix (it listens on a Unix socket).
    pub struct Proxy;

    impl Proxy {
        pub fn start(_network: Arc<Network>) -> std::io::Result<Proxy> {
            Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "the sandbox's network proxy needs Unix sockets"))
        }

        pub fn socket(&self) -> &Path {
            Path::new("")
        }
    }
}

/// Off Unix there is no sandbox to bridge out of (see [`proxy`]).
#[cfg(not(unix))]
pub mod bridge {
    /// The hidden subcommand that runs the bridge.
    pub const SUBCOMMAND: &str = "__network-bridge";
    /// The loopback port the bridge listens on.
    pub const PORT: u16 = 3128;

    /// The bridge cannot run here: the exit code to end with.
    pub fn main(_args: &[std::ffi::OsString]) -> i32 {
        eprintln!("tandem: {SUBCOMMAND} runs only inside Tandem's Linux sandbox");
        2
    }
}
#[cfg(target_os = "linux")]
pub mod seccomp;
pub mod seatbelt;

pub use bubblewrap::is_placeholder;

use std::path::PathBuf;
use std::sync::Arc;

use crate::tools::ports::network::{Network, NetworkPolicy};
use crate::tools::ShellSandbox;

/// `sandbox` in the settings: how shell commands are confined. The
/// settings loader fills it; only the user's own layers
/// (`~/.tandem/settings.json`, the editor's settings) may loosen it, since
/// a project's files come with the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Run shell commands in the sandbox (on by default).
    pub enabled: bool,
    /// What approved commands may reach of the network (unasked ones
    /// never reach it): nothing, all of it, or the listed hosts through
    /// Tandem's proxy ([`proxy`]).
    pub network: NetworkPolicy,
    /// More places approved commands may write (`~/` is the home folder),
    /// as written; each layer's list is added to the ones below.
    pub allow_write: Vec<String>,
    /// More folders of the home folder unasked commands may read
    /// (`~/.config/mytool`), beside [`bubblewrap::HOME_TOOLCHAINS`]; from
    /// the user's own layers only.
    pub allow_read: Vec<String>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings { enabled: true, network: NetworkPolicy::default(), allow_write: Vec::new(), allow_read: Vec::new() }
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

/// Paths a run's commands must not read or change (deny rules), found
/// when a command starts, so files created since are covered too.
pub type ReadDenies = Arc<dyn Fn() -> Vec<PathBuf> + Send + Sync>;

/// The programs of a platform's sandbox that run the command they are
/// given, as a user's command line may name them (`bwrap --bind / / rm -rf
/// x` runs `rm`): the judgement unwraps them like `nice` or `strace`
/// ([`crate::permissions`]' wrappers table), so a deny rule still holds.
pub const COMMAND_WRAPPERS: &[&str] = &["bwrap", "sandbox-exec"];

/// What deny rules on paths cover, for the sandbox to enforce on every
/// command, approved ones too: `read` is masked, `edit` bound read-only.
#[derive(Clone)]
pub struct Denies {
    pub read: ReadDenies,
    pub edit: ReadDenies,
}

impl Denies {
    /// No deny rules.
    pub fn none() -> Self {
        Denies { read: Arc::new(Vec::new), edit: Arc::new(Vec::new) }
    }
}

/// The "sandbox" of a call that runs no shell command (`tandem tool
/// read_file`): nothing is probed for it, and a command is refused, never
/// run unconfined.
pub struct NoCommands;

impl ShellSandbox for NoCommands {
    fn describe(&self) -> String {
        "none: this call runs no shell command".to_string()
    }

    fn confine(&self, _launch: &crate::tools::ports::shell_sandbox::ShellLaunch<'_>) -> Result<crate::tools::ports::shell_sandbox::Confined, String> {
        Err("this call was set up to run no shell command".to_string())
    }

    fn explain_failure(&self, _profile: crate::tools::ShellProfile, _output: &str) -> Vec<String> {
        Vec::new()
    }
}

/// The platform's sandbox can start here (its probe runs once per
/// process): what, with `sandbox.enabled`, lets the policy allow a command
/// the sandbox contains without a question.
#[cfg(target_os = "linux")]
pub fn can_start() -> bool {
    bubblewrap::Bubblewrap::probe().is_ok()
}

/// No sandbox contains a command unasked off Linux (the contained profile
/// is bubblewrap's).
#[cfg(not(target_os = "linux"))]
pub fn can_start() -> bool {
    false
}

/// The sandbox for a run with these settings, enforcing `denies` and the
/// run's `network` lists.
pub fn for_run(settings: &SandboxSettings, denies: Denies, network: Arc<Network>) -> Availability {
    if !settings.enabled {
        return Availability::Disabled;
    }
    platform(settings, denies, network)
}

#[cfg(target_os = "linux")]
fn platform(settings: &SandboxSettings, denies: Denies, network: Arc<Network>) -> Availability {
    match bubblewrap::Bubblewrap::probe() {
        Ok(found) => Availability::Ready(Arc::new(bubblewrap::Bubblewrap::new(found, settings, denies).with_network(network))),
        Err(reason) => Availability::Unavailable(reason),
    }
}

#[cfg(target_os = "macos")]
fn platform(settings: &SandboxSettings, denies: Denies, _network: Arc<Network>) -> Availability {
    match seatbelt::probe() {
        Ok(found) => Availability::Ready(Arc::new(seatbelt::Seatbelt::new(found, settings, denies))),
        Err(reason) => Availability::Unavailable(reason),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn platform(_settings: &SandboxSettings, _denies: Denies, _network: Arc<Network>) -> Availability {
    Availability::Unavailable(format!("Tandem has no sandbox for {} yet (bubblewrap is Linux only, Seatbelt macOS only)", std::env::consts::OS))
}
