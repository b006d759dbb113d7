//! Linux: each command runs under `bwrap` (bubblewrap), started as a
//! process, in new mount, pid and IPC namespaces (and a new network
//! namespace unless network is allowed).
//!
//! The view is built from the outside in, later mounts covering earlier
//! ones: the whole filesystem read-only, a fresh `/dev` and `/proc` (of the
//! new pid namespace, so `/proc/$PPID` is bubblewrap's own process with the
//! command's environment), then what the profile may write, then what stays
//! read-only inside it, then the masks.
//!
//! - Paths are resolved once, here, before bubblewrap starts, and the
//!   resolved paths are bound: a link swapped in afterwards points at a
//!   path that was not bound.
//! - A protected path that does not exist yet (`.tandem/` in a fresh
//!   checkout) is created empty as a mount point, bound read-only, and
//!   removed when the last command using it ends, if it is still empty:
//!   the command cannot create it.
//! - `--die-with-parent` and the pid namespace make the process-group kill
//!   of `run_shell` reach everything: when bubblewrap dies, the namespace's
//!   first process dies and the kernel kills the rest. `--new-session`
//!   keeps a command away from the terminal Tandem runs in.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::{ReadDenies, SandboxSettings};
use crate::tools::shell_sandbox::{Confined, ShellLaunch, ShellProfile, ShellSandbox};

/// Inside each workspace root, what approved commands may not change:
/// what makes git, Tandem, Claude Code, VS Code or an MCP client run code.
pub const PROTECTED: &[(&str, Entry)] =
    &[(".git", Entry::Dir), (".tandem", Entry::Dir), (".claude", Entry::Dir), (".vscode", Entry::Dir), (".mcp.json", Entry::File)];

/// Inside a `.git` folder, what runs code: its config (`core.fsmonitor`,
/// aliases, filters) and hooks.
const GIT_PROTECTED: &[(&str, Entry)] = &[("config", Entry::File), ("config.worktree", Entry::File), ("hooks", Entry::Dir)];

/// In the home folder, where credentials live: masked for unasked commands
/// (an approved `git push` may need `~/.ssh`).
pub const CREDENTIAL_STORES: &[&str] = &[
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".kube", ".docker", ".netrc", ".git-credentials",
    ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".password-store", ".local/share/keyrings",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    File,
    Dir,
}

/// A working bubblewrap.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub version: String,
}

pub struct Bubblewrap {
    found: Found,
    network: bool,
    allow_write: Vec<PathBuf>,
    read_denies: ReadDenies,
    home: Option<PathBuf>,
}

impl Bubblewrap {
    pub fn new(found: Found, settings: &SandboxSettings, read_denies: ReadDenies) -> Self {
        let home = dirs::home_dir().and_then(|h| h.canonicalize().ok());
        let allow_write = settings
            .allow_write
            .iter()
            .filter_map(|p| match (p.strip_prefix("~"), &home) {
                (Some(rest), Some(home)) => Some(home.join(rest.trim_start_matches('/'))),
                (Some(_), None) => None,
                (None, _) => Some(PathBuf::from(p)),
            })
            .collect();
        Bubblewrap { found, network: settings.network, allow_write, read_denies, home }
    }

    /// Find `bwrap` and check that it can build a sandbox here (once per
    /// process). `Err` says why not, in plain words.
    pub fn probe() -> Result<Found, String> {
        static PROBED: OnceLock<Result<Found, String>> = OnceLock::new();
        PROBED.get_or_init(probe_now).clone()
    }

    fn arguments(&self, launch: &ShellLaunch<'_>, placeholders: &mut Placeholders) -> Result<Vec<OsString>, String> {
        let roots: Vec<PathBuf> = launch
            .roots
            .iter()
            .map(|root| root.canonicalize().map_err(|e| format!("the workspace folder {} cannot be resolved: {e}", root.display())))
            .collect::<Result<_, _>>()?;
        let Some(cwd) = roots.first().cloned() else { return Err("the run has no workspace folder".into()) };
        let network = self.network && launch.profile == ShellProfile::Approved;
        let mut args = Args::default();
        args.flags(&["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-cgroup-try"]);
        if !network {
            args.flags(&["--unshare-net"]);
        }
        args.pair("--ro-bind", "/", "/");
        args.one("--dev", "/dev");
        args.one("--proc", "/proc");
        match launch.profile {
            ShellProfile::Unasked => {
                args.one("--tmpfs", "/tmp");
                args.flags(&["--setenv", "TMPDIR", "/tmp"]);
                // The private /tmp covers whatever lives under it: the
                // workspace and the home folder come back, read-only.
                let under_tmp = roots.iter().chain(self.home.as_ref()).filter(|p| p.starts_with("/tmp") && p.as_path() != Path::new("/tmp"));
                for path in under_tmp {
                    args.pair("--ro-bind-try", path, path);
                }
            }
            ShellProfile::Approved => {
                for root in &roots {
                    args.pair("--bind", root, root);
                }
                for temp in temp_dirs() {
                    args.pair("--bind-try", &temp, &temp);
                }
                for path in &self.allow_write {
                    if let Ok(path) = path.canonicalize() {
                        args.pair("--bind-try", &path, &path);
                    }
                }
                for root in &roots {
                    for (path, entry) in protected_in(root) {
                        if self.allow_write.iter().any(|allowed| path.starts_with(allowed)) {
                            continue;
                        }
                        match placeholders.hold(&path, entry) {
                            Ok(()) => args.pair("--ro-bind", &path, &path),
                            Err(err) => return Err(format!("cannot protect {}: {err}", path.display())),
                        }
                    }
                }
            }
        }
        let mut masked: Vec<PathBuf> = (self.read_denies)();
        if launch.profile == ShellProfile::Unasked {
            if let Some(home) = &self.home {
                masked.extend(CREDENTIAL_STORES.iter().map(|store| home.join(store)));
            }
        }
        for path in masked {
            // Masks name what exists; a missing path has nothing to read.
            let Ok(resolved) = path.canonicalize() else { continue };
            match std::fs::metadata(&resolved) {
                Ok(meta) if meta.is_dir() => {
                    args.one("--tmpfs", &resolved);
                    args.one("--remount-ro", &resolved);
                }
                Ok(_) => args.pair("--ro-bind", "/dev/null", &resolved),
                Err(_) => {}
            }
        }
        args.one("--chdir", &cwd);
        args.flags(&["--"]);
        args.0.extend(launch.argv.iter().cloned());
        Ok(args.0)
    }
}

impl ShellSandbox for Bubblewrap {
    fn describe(&self) -> String {
        format!("bubblewrap {} at {}", self.found.version, self.found.path.display())
    }

    fn confine(&self, launch: &ShellLaunch<'_>) -> Result<Confined, String> {
        let mut placeholders = Placeholders::default();
        let args = self.arguments(launch, &mut placeholders)?;
        Ok(Confined {
            program: self.found.path.clone(),
            args,
            network: self.network && launch.profile == ShellProfile::Approved,
            guard: Box::new(placeholders),
        })
    }
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }
    fn one(&mut self, flag: &str, path: impl AsRef<Path>) {
        self.0.push(flag.into());
        self.0.push(path.as_ref().into());
    }
    fn pair(&mut self, flag: &str, from: impl AsRef<Path>, to: impl AsRef<Path>) {
        self.0.push(flag.into());
        self.0.push(from.as_ref().into());
        self.0.push(to.as_ref().into());
    }
}

/// The temp folders approved commands may write: `/tmp`, `/var/tmp` and
/// `$TMPDIR`, resolved.
fn temp_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["/tmp", "/var/tmp"].iter().map(PathBuf::from).collect();
    if let Some(tmp) = crate::environment::var("TMPDIR").filter(|t| t.starts_with('/')) {
        dirs.push(PathBuf::from(tmp));
    }
    let mut resolved: Vec<PathBuf> = dirs.into_iter().filter_map(|d| d.canonicalize().ok()).collect();
    resolved.dedup();
    resolved
}

/// The protected paths of one root, existing or not: `.git`'s config and
/// hooks when `.git` is a folder (submodules' too), else `.git` itself.
fn protected_in(root: &Path) -> Vec<(PathBuf, Entry)> {
    let mut out = Vec::new();
    for (name, entry) in PROTECTED {
        let path = root.join(name);
        if *name == ".git" && path.is_dir() {
            git_protected(&path, &mut out, 0);
            continue;
        }
        // `.git` as a file (a worktree or submodule) says where the
        // repository is: it stays as it is.
        let entry = match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => Entry::Dir,
            Ok(_) => Entry::File,
            Err(_) => *entry,
        };
        out.push((path, entry));
    }
    out
}

/// A `.git` folder's config and hooks, and those of the submodules kept
/// in `.git/modules` (nested ones too, a few levels deep).
fn git_protected(git_dir: &Path, out: &mut Vec<(PathBuf, Entry)>, depth: usize) {
    for (name, entry) in GIT_PROTECTED {
        let path = git_dir.join(name);
        // A missing `config.worktree` is only read when the config (itself
        // protected) enables it.
        if *name == "config.worktree" && !path.exists() {
            continue;
        }
        out.push((path, *entry));
    }
    if depth >= 4 {
        return;
    }
    let Ok(modules) = std::fs::read_dir(git_dir.join("modules")) else { return };
    for module in modules.flatten().take(64) {
        let path = module.path();
        if path.join("config").is_file() || path.join("HEAD").is_file() {
            git_protected(&path, out, depth + 1);
        }
    }
}

/// Mount points this process created for protected paths that did not
/// exist, with how many commands use each; the last one out removes it.
static HELD: OnceLock<Mutex<HashMap<PathBuf, (Entry, usize)>>> = OnceLock::new();

/// The placeholders one command holds.
#[derive(Default)]
struct Placeholders {
    held: Vec<PathBuf>,
}

impl Placeholders {
    /// Make sure `path` exists to be bound read-only, creating an empty
    /// placeholder if it does not.
    fn hold(&mut self, path: &Path, entry: Entry) -> std::io::Result<()> {
        let mut held = HELD.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, users)) = held.get_mut(path) {
            *users += 1;
            self.held.push(path.to_path_buf());
            return Ok(());
        }
        if std::fs::symlink_metadata(path).is_ok() {
            return Ok(());
        }
        let created = match entry {
            Entry::Dir => std::fs::create_dir(path),
            Entry::File => std::fs::OpenOptions::new().write(true).create_new(true).open(path).map(drop),
        };
        match created {
            Ok(()) => {
                held.insert(path.to_path_buf(), (entry, 1));
                self.held.push(path.to_path_buf());
                Ok(())
            }
            // Created by someone else in the meantime: bind that.
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(err) => Err(err),
        }
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        let mut held = HELD.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
        for path in self.held.drain(..) {
            let Some((entry, users)) = held.get_mut(&path) else { continue };
            *users -= 1;
            if *users > 0 {
                continue;
            }
            let entry = *entry;
            held.remove(&path);
            // Only if it is still the empty placeholder: anything written
            // into it since (by Tandem, by the user) stays.
            let _ = match entry {
                Entry::Dir => std::fs::remove_dir(&path),
                Entry::File if std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == 0) => std::fs::remove_file(&path),
                Entry::File => Ok(()),
            };
        }
    }
}

fn probe_now() -> Result<Found, String> {
    let path_var = crate::environment::var("PATH").unwrap_or_default();
    let Some(path) = std::env::split_paths(&path_var).filter(|dir| dir.is_absolute()).map(|dir| dir.join("bwrap")).find(|p| p.is_file())
    else {
        return Err("bubblewrap (bwrap) is not installed; install it (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)".into());
    };
    let version = std::process::Command::new(&path)
        .arg("--version")
        .env_clear()
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().trim_start_matches("bubblewrap").trim().to_string())
        .unwrap_or_default();
    // The same namespaces and mounts every command uses.
    let trial = std::process::Command::new(&path)
        .args(["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--ro-bind", "/", "/"])
        .args(["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", "/bin/sh", "-c", ":"])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output();
    match trial {
        Ok(out) if out.status.success() => Ok(Found { path, version }),
        Ok(out) => Err(format!(
            "bubblewrap ({}) cannot build a sandbox here: {}. User namespaces may be switched off (kernel.unprivileged_userns_clone, or AppArmor's kernel.apparmor_restrict_unprivileged_userns on Ubuntu 24.04), or this runs in a container that forbids them",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(err) => Err(format!("bubblewrap ({}) cannot be started: {err}", path.display())),
    }
}
