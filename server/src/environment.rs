//! Tandem's environment and its children's: only what shell commands may
//! see stays in Tandem's process environment; the rest (credentials, and
//! every other variable the allow-list does not pass) lives in its memory.
//!
//! - [`is_secret`] is the one rule for what counts as a credential: a name
//!   matching `*_KEY`, `*_TOKEN`, `*_SECRET*` or `*PASSWORD*`, a value
//!   holding a URL with credentials (`https://user:pass@host`), or a proxy
//!   variable in any spelling whose proxy names a user, with a scheme or
//!   without (`HTTPS_PROXY=user:pass@host:3128`; `NO_PROXY` is a list of
//!   hosts and passes).
//! - [`hide_environment`] runs first thing in `main`: it takes every
//!   variable a shell command would not get (see [`ChildEnv`]) out of the
//!   process environment — credentials, but also `MYSQL_PWD`,
//!   `SECRET_KEY_BASE` or a company's endpoint, whose names say nothing.
//!   Removing a variable with `unsetenv` is not enough, because
//!   `/proc/PID/environ` shows the environment block the process was
//!   started with, and a shell command outside the sandbox (switched off,
//!   or no bubblewrap) can read its parent's. So Tandem starts itself again
//!   (same pid, same arguments, same stdio) with only the allow-listed
//!   variables, and hands the others over through a pipe. [`var`] reads a
//!   setting from those values first, then from the process environment;
//!   Tandem reads its own settings (`TANDEM_*`, provider keys and URLs)
//!   only through it.
//! - [`ChildEnv`] is the environment a shell command gets: built from an
//!   allow-list (PATH, HOME, locale, terminal, toolchain variables) plus
//!   what settings add, never a credential unless it is allowed by name.
//!   Language servers Tandem starts inherit the process environment: the
//!   allow-listed variables, plus their settings' `env`.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::sync::OnceLock;

/// Variables passed to shell commands when they are set (and are not
/// credentials). Prefixes end with `_` or `*`.
const CHILD_ALLOW: &[&str] = &[
    // The basics.
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "TZ", "TMPDIR",
    "XDG_*", "NO_COLOR", "CLICOLOR", "FORCE_COLOR", "CI", "DISPLAY", "WAYLAND_DISPLAY",
    // Proxies and certificates (a proxy URL with a password is still removed).
    "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    // Rust.
    "CARGO_*", "RUSTUP_*", "RUSTC", "RUSTC_WRAPPER", "RUSTFLAGS", "RUSTDOCFLAGS", "RUST_BACKTRACE", "RUST_LOG",
    // Go.
    "GOPATH", "GOROOT", "GOBIN", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOSUMDB", "GOTOOLCHAIN",
    "GO111MODULE", "CGO_ENABLED",
    // JavaScript.
    "NODE_PATH", "NODE_OPTIONS", "NVM_DIR", "NVM_BIN", "NPM_CONFIG_PREFIX", "PNPM_HOME", "VOLTA_HOME", "BUN_INSTALL",
    "DENO_DIR", "COREPACK_HOME",
    // Python.
    "PYTHONPATH", "PYTHONHOME", "PYENV_ROOT", "PYENV_VERSION", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
    "CONDA_EXE", "PIPX_HOME", "PIP_INDEX_URL", "UV_CACHE_DIR", "UV_PYTHON", "POETRY_HOME",
    // Ruby, JVM, .NET, others.
    "GEM_HOME", "GEM_PATH", "RBENV_ROOT", "BUNDLE_PATH", "JAVA_HOME", "MAVEN_HOME", "M2_HOME", "GRADLE_HOME",
    "GRADLE_USER_HOME", "ANDROID_HOME", "ANDROID_SDK_ROOT", "DOTNET_ROOT", "NIX_PATH", "NIX_PROFILES", "HOMEBREW_PREFIX",
    // C and C++ builds.
    "CC", "CXX", "AR", "LD", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
    "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "CMAKE_PREFIX_PATH", "MAKEFLAGS",
];

/// Names (comma-separated) of credentials the user lets shell commands
/// see, from the environment or from settings' `env`.
pub const ALLOW_VAR: &str = "TANDEM_SHELL_ENV_ALLOW";

/// The variable through which Tandem hands the hidden variables to itself
/// across the re-start (a file descriptor number).
#[cfg(unix)]
const HANDOVER_VAR: &str = "TANDEM_CREDENTIALS_FD";

/// A pipe holds at least this much without a reader; larger hand-overs
/// fall back to removing the variables in place.
#[cfg(unix)]
const HANDOVER_MAX_BYTES: usize = 60 * 1024;

/// The variables taken out of the process environment at start-up.
static HELD: OnceLock<BTreeMap<String, String>> = OnceLock::new();

/// Does this variable name look like it holds a credential?
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.ends_with("_KEY") || upper.ends_with("_TOKEN") || upper.contains("_SECRET") || upper.contains("PASSWORD")
}

/// Does this value hold a URL with credentials in it (`scheme://user:pass@host`,
/// or a token as the user name)?
pub fn has_url_credentials(value: &str) -> bool {
    let mut rest = value;
    while let Some(at) = rest.find("://") {
        let scheme_ok = rest[..at].chars().last().is_some_and(|c| c.is_ascii_alphanumeric());
        let after = &rest[at + 3..];
        let authority_end = after.find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace()).unwrap_or(after.len());
        if scheme_ok && after[..authority_end].contains('@') {
            return true;
        }
        rest = after;
    }
    false
}

/// Is this a proxy variable (`HTTPS_PROXY`, `all_proxy`, `npm_config_proxy`,
/// in any case)? `NO_PROXY` lists hosts, not a proxy.
pub fn is_proxy_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.ends_with("PROXY") && !upper.ends_with("NO_PROXY")
}

/// Does a proxy setting carry credentials? Programs read a proxy without a
/// scheme as `http://` (`HTTPS_PROXY=user:pass@host:3128`), so the user
/// part counts with a scheme or without.
pub fn has_proxy_credentials(value: &str) -> bool {
    value.split([',', ' ']).map(str::trim).any(|proxy| {
        let rest = proxy.split_once("://").map_or(proxy, |(_, rest)| rest);
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        rest[..authority_end].contains('@')
    })
}

/// Is this variable a credential a child process must not see?
pub fn is_secret(name: &OsStr, value: &OsStr) -> bool {
    let Some(name) = name.to_str() else { return true };
    let Some(value) = value.to_str() else { return is_secret_name(name) };
    is_secret_name(name) || has_url_credentials(value) || (is_proxy_name(name) && has_proxy_credentials(value))
}

/// A setting from Tandem's environment: a variable taken out of the
/// process environment at start-up, else the process environment. Empty
/// values count as set (callers decide).
pub fn var(name: &str) -> Option<String> {
    HELD.get().and_then(|held| held.get(name)).cloned().or_else(|| std::env::var(name).ok())
}

/// Every variable of Tandem's environment, the held ones included.
fn all_vars() -> Vec<(OsString, OsString)> {
    let mut vars: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    if let Some(held) = HELD.get() {
        for (name, value) in held {
            vars.insert(name.into(), value.into());
        }
    }
    vars.into_iter().collect()
}

/// What settings add to a shell command's environment. The settings layer
/// fills this; the shell tool reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildEnv {
    /// Variables passed through by name even when they look like
    /// credentials (`GITHUB_TOKEN` for a user who wants `gh` to work).
    pub allow: Vec<String>,
    /// Variables set for every command (settings' `env`). A credential
    /// among them is still removed unless it is also in `allow`.
    pub set: Vec<(String, String)>,
    /// What is worked out anew for each child as it starts, after `set`
    /// (git's overrides of the repository's code-running keys: the config
    /// may have changed since the run started).
    pub per_child: Option<PerChild>,
    /// The `shell` setting: the bash commands and hooks run with on
    /// Windows ([`crate::platform::shell`]).
    pub shell: Option<std::path::PathBuf>,
}

/// Changes the variables a child is given (name, value).
pub type EditVars = dyn Fn(&mut Vec<(String, String)>) + Send + Sync;

/// A change to [`ChildEnv::set`] made as each child starts.
#[derive(Clone)]
pub struct PerChild(pub std::sync::Arc<EditVars>);

impl std::fmt::Debug for PerChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PerChild")
    }
}

impl PartialEq for PerChild {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for PerChild {}

/// The `PATH` of a child's variables ([`ChildEnv::vars`]), `Path` as
/// Windows often spells it; empty when there is none.
pub fn path_of(vars: &[(OsString, OsString)]) -> OsString {
    let is_path = |name: &OsStr| if cfg!(windows) { name.eq_ignore_ascii_case("PATH") } else { name == "PATH" };
    vars.iter().find(|(name, _)| is_path(name)).map(|(_, value)| value.clone()).unwrap_or_default()
}

impl ChildEnv {
    /// The complete environment for a child process.
    pub fn vars(&self) -> Vec<(OsString, OsString)> {
        self.vars_from(all_vars())
    }

    fn vars_from(&self, parent: Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)> {
        let mut set = self.set.clone();
        if let Some(per_child) = &self.per_child {
            (per_child.0)(&mut set);
        }
        let listed = set
            .iter()
            .find(|(name, _)| name == ALLOW_VAR)
            .map(|(_, value)| value.clone())
            .or_else(|| parent.iter().find(|(name, _)| name == ALLOW_VAR).and_then(|(_, value)| value.to_str().map(String::from)))
            .unwrap_or_default();
        let allow: Vec<&str> =
            self.allow.iter().map(String::as_str).chain(listed.split(',').map(str::trim).filter(|n| !n.is_empty())).collect();
        let allowed_by_name = |name: &OsStr| name != ALLOW_VAR && allow.iter().any(|a| OsStr::new(a) == name);
        let mut out: BTreeMap<OsString, OsString> = BTreeMap::new();
        for (name, value) in parent {
            let listed = name.to_str().is_some_and(on_allow_list);
            if allowed_by_name(&name) || (listed && !is_secret(&name, &value)) {
                out.insert(name, value);
            }
        }
        for (name, value) in set.iter().filter(|(name, _)| name != ALLOW_VAR) {
            let (name, value) = (OsString::from(name), OsString::from(value));
            if allowed_by_name(&name) || !is_secret(&name, &value) {
                out.insert(name, value);
            } else {
                tracing::warn!(name = %name.to_string_lossy(), "not passing a credential from settings to shell commands; allow it by name to pass it");
            }
        }
        out.into_iter().collect()
    }
}

fn on_allow_list(name: &str) -> bool {
    CHILD_ALLOW.iter().any(|entry| match entry.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *entry,
    })
}

/// Does a shell command get this variable without settings naming it
/// (on the allow-list and not a credential)? Tandem's process environment
/// keeps only these.
fn passed_by_default(name: &OsStr, value: &OsStr) -> bool {
    name.to_str().is_some_and(on_allow_list) && !is_secret(name, value)
}

/// Make Tandem's own process harder to read from its children, once, right
/// after [`hide_environment`] (an `exec` undoes the first part):
/// - not dumpable (`prctl(PR_SET_DUMPABLE, 0)`): `/proc/PID/mem`,
///   `/proc/PID/environ` and ptrace are closed to other processes of the
///   user, so a command run without the sandbox cannot read the keys held
///   in memory through its parent. Tandem still reads its own `/proc/self`
///   (the kernel lets a process read itself), and its children are
///   dumpable again as they `exec`;
/// - every descriptor it inherited above 2 (from an editor, a shell, a
///   job server) is closed when a child starts: nothing Tandem was handed
///   reaches a command, a hook or a server it runs.
///
/// Returns what could not be done, to log.
pub fn harden_process() -> Vec<String> {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut problems = Vec::new();
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(2) with PR_SET_DUMPABLE changes a flag of this
        // process and reads no memory.
        if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
            problems.push(format!("cannot mark the process non-dumpable: {}", std::io::Error::last_os_error()));
        }
    }
    #[cfg(unix)]
    if let Err(err) = close_on_exec_from(3) {
        problems.push(format!("cannot keep inherited file descriptors from child processes: {err}"));
    }
    problems
}

/// Mark every descriptor from `first` up close-on-exec. Only system calls,
/// no allocation: safe between `fork` and `exec` (see [`close_inherited_fds`]).
#[cfg(unix)]
fn close_on_exec_from(first: u32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC only sets a flag
        // on descriptors; Linux 5.11 and later.
        if unsafe { libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, CLOSE_RANGE_CLOEXEC) } == 0 {
            return Ok(());
        }
    }
    // Older kernels and other systems: every descriptor the limit allows.
    // SAFETY: getrlimit(2) fills the struct; fcntl(2) only sets flags, and
    // EBADF for a descriptor that is not open is ignored.
    unsafe {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 { limit.rlim_cur.min(1 << 20) as i32 } else { 4096 };
        for fd in first as i32..top {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 && libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// In a child process between `fork` and `exec` (a `pre_exec` hook): no
/// descriptor above 2 survives the `exec` — also one Tandem itself opened
/// after start-up without close-on-exec (a library's). Async-signal-safe.
#[cfg(unix)]
pub fn close_inherited_fds() -> std::io::Result<()> {
    close_on_exec_from(3)
}

/// Take every variable a shell command would not get out of the process
/// environment, keeping the values in memory for [`var`] (a variable whose
/// name or value is not UTF-8 cannot be held and is dropped). Call it first
/// thing in `main`, before any other thread exists: it may start the
/// program again in place (same pid, arguments and stdio) so that
/// `/proc/PID/environ` no longer holds them. Returns a warning to log when
/// that restart was not possible (logging is not set up yet when this runs).
pub fn hide_environment() -> Option<String> {
    #[cfg(unix)]
    if let Some(fd) = std::env::var(HANDOVER_VAR).ok().and_then(|v| v.parse::<i32>().ok()) {
        let held = receive(fd);
        // SAFETY: called at the start of main, before any other thread
        // exists, so nothing reads the environment concurrently.
        unsafe { std::env::remove_var(HANDOVER_VAR) };
        let _ = HELD.set(held);
        return None;
    }
    let hidden: Vec<(OsString, OsString)> = std::env::vars_os().filter(|(name, value)| !passed_by_default(name, value)).collect();
    let held: BTreeMap<String, String> =
        hidden.iter().filter_map(|(name, value)| Some((name.to_str()?.to_string(), value.to_str()?.to_string()))).collect();
    if hidden.is_empty() {
        let _ = HELD.set(held);
        return None;
    }
    let names: Vec<&OsStr> = hidden.iter().map(|(name, _)| name.as_os_str()).collect();
    let err = match restart_without(&names, &held) {
        Err(err) => err,
        Ok(never) => match never {},
    };
    // Only reached when the restart failed: the variables at least leave
    // the environment that libc and child processes see.
    for name in &names {
        // SAFETY: as above, no other thread exists yet.
        unsafe { std::env::remove_var(name) };
    }
    let _ = HELD.set(held);
    // Windows keeps one environment block per process, which removal
    // changes in place: nothing is left to warn of.
    #[cfg(not(unix))]
    return {
        let _ = err;
        None
    };
    #[cfg(unix)]
    Some(format!("cannot restart without the hidden variables in the environment ({err}); they were removed in place, but /proc/PID/environ may still show them"))
}

/// Start this program again in place without the variables `names`,
/// handing `held` over through a pipe. Returns only on failure.
#[cfg(unix)]
fn restart_without(names: &[&OsStr], held: &BTreeMap<String, String>) -> std::io::Result<std::convert::Infallible> {
    use std::io::Write as _;
    use std::os::fd::{FromRawFd as _, OwnedFd};
    use std::os::unix::process::CommandExt as _;
    let payload = serde_json::to_vec(held).map_err(std::io::Error::other)?;
    if payload.len() > HANDOVER_MAX_BYTES {
        return Err(std::io::Error::other("the variables are too large to hand over"));
    }
    let mut fds = [0i32; 2];
    // SAFETY: pipe(2) fills the two descriptors; plain pipe (no O_CLOEXEC),
    // so the read end survives exec.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    {
        let mut writer = std::fs::File::from(write_end);
        writer.write_all(&payload)?;
    }
    let exe = std::env::current_exe()?;
    let mut command = std::process::Command::new(exe);
    command.args(std::env::args_os().skip(1));
    if let Some(arg0) = std::env::args_os().next() {
        command.arg0(arg0);
    }
    for name in names {
        command.env_remove(name);
    }
    command.env(HANDOVER_VAR, fds[0].to_string());
    let err = command.exec();
    drop(read_end);
    Err(err)
}

/// Windows cannot start a program again in place (it has no `exec`), nor
/// does it show a process's start-up environment the way
/// `/proc/PID/environ` does: the variables are removed in place.
#[cfg(not(unix))]
fn restart_without(_names: &[&OsStr], _held: &BTreeMap<String, String>) -> std::io::Result<std::convert::Infallible> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "this system has no exec"))
}

/// Read the variables handed over through `fd`, then close it.
#[cfg(unix)]
fn receive(fd: i32) -> BTreeMap<String, String> {
    use std::io::Read as _;
    use std::os::fd::FromRawFd as _;
    if fd < 3 {
        return BTreeMap::new();
    }
    // SAFETY: the descriptor was created for us by the previous image of
    // this process and nothing else owns it.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut payload = Vec::new();
    if let Err(err) = file.take(HANDOVER_MAX_BYTES as u64 + 1).read_to_end(&mut payload) {
        tracing::warn!(%err, "cannot read the variables handed over at start-up");
        return BTreeMap::new();
    }
    serde_json::from_slice(&payload).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_and_credential_urls_are_recognised() {
        for name in [
            "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "HF_TOKEN",
            "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "DB_PASSWORD", "PGPASSWORD", "MY_SECRET",
            "CLIENT_SECRET_ID", "gpg_key", "CARGO_REGISTRIES_CRATES_IO_TOKEN",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "API_KEYRING", "TOKENIZERS_PARALLELISM", "KEYBOARD"] {
            assert!(!is_secret_name(name), "{name}");
        }
        for value in ["postgres://user:pw@db/app", "https://x-access-token:ghs_1@github.com/o/r.git", "https://ghp_abc@github.com", "a http://u:p@proxy:3128"] {
            assert!(has_url_credentials(value), "{value}");
        }
        for value in ["https://github.com/o/r.git", "http://proxy:3128", "user@host", "mailto:a@b", "https://h/p?mail=a@b"] {
            assert!(!has_url_credentials(value), "{value}");
        }
    }

    #[test]
    fn proxy_credentials_are_secret_in_every_spelling() {
        let secret = |name: &str, value: &str| is_secret(OsStr::new(name), OsStr::new(value));
        for (name, value) in [
            ("HTTPS_PROXY", "user:pass@proxy.corp:3128"),
            ("https_proxy", "user:pass@proxy.corp:3128"),
            ("HTTP_PROXY", "http://user:pass@proxy.corp:3128/"),
            ("ALL_PROXY", "socks5h://u:p@127.0.0.1:1080"),
            ("all_proxy", "token@proxy:8080"),
            ("Https_Proxy", "u:p@h"),
            ("npm_config_https_proxy", "u:p@h:1"),
            ("FTP_PROXY", "ftp.corp, u:p@proxy"),
        ] {
            assert!(secret(name, value), "{name}={value}");
        }
        for (name, value) in [
            ("HTTPS_PROXY", "proxy.corp:3128"),
            ("HTTP_PROXY", "http://proxy.corp:3128/path@x"),
            ("NO_PROXY", "localhost,a@b,.corp"),
            ("no_proxy", "u@internal"),
            ("MAILTO", "me@example.com"),
        ] {
            assert!(!secret(name, value), "{name}={value}");
        }
        let parent = vars(&[("HTTPS_PROXY", "user:pass@proxy:3128"), ("https_proxy", "http://proxy:3128"), ("NO_PROXY", "localhost"), ("ALL_PROXY", "u:p@h")]);
        let names: Vec<String> = ChildEnv::default().vars_from(parent).iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["NO_PROXY", "https_proxy"]);
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    #[test]
    fn the_child_environment_is_an_allow_list_without_credentials() {
        let parent = vars(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C.UTF-8"),
            ("CARGO_HOME", "/home/u/.cargo"),
            ("CARGO_REGISTRIES_PRIVATE_TOKEN", "cargo-secret"),
            ("GITHUB_TOKEN", "ghp_secret"),
            ("HTTPS_PROXY", "http://u:pw@proxy:3128"),
            ("HTTP_PROXY", "http://proxy:3128"),
            ("SOME_RANDOM_VAR", "x"),
            ("TANDEM_LOG", "debug"),
        ]);
        let child = ChildEnv::default().vars_from(parent.clone());
        let names: Vec<String> = child.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["CARGO_HOME", "HOME", "HTTP_PROXY", "LC_ALL", "PATH"]);

        let settings = ChildEnv {
            allow: vec!["GITHUB_TOKEN".into(), "SOME_RANDOM_VAR".into()],
            set: vec![("RUST_LOG".into(), "info".into()), ("NPM_TOKEN".into(), "npm-secret".into())],
            per_child: None,
            shell: None,
        };
        let child = settings.vars_from(parent.clone());
        let names: Vec<String> = child.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["CARGO_HOME", "GITHUB_TOKEN", "HOME", "HTTP_PROXY", "LC_ALL", "PATH", "RUST_LOG", "SOME_RANDOM_VAR"]);

        // The user's list, from the environment or from settings' `env`.
        let mut with_list = parent.clone();
        with_list.push((ALLOW_VAR.into(), "GITHUB_TOKEN, HTTPS_PROXY".into()));
        let names: Vec<String> = ChildEnv::default().vars_from(with_list).iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["CARGO_HOME", "GITHUB_TOKEN", "HOME", "HTTPS_PROXY", "HTTP_PROXY", "LC_ALL", "PATH"]);
        let from_settings = ChildEnv { allow: Vec::new(), set: vec![(ALLOW_VAR.into(), "NPM_TOKEN".into()), ("NPM_TOKEN".into(), "npm".into())], per_child: None, shell: None };
        let names: Vec<String> = from_settings.vars_from(parent).iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["CARGO_HOME", "HOME", "HTTP_PROXY", "LC_ALL", "NPM_TOKEN", "PATH"]);
    }
}
