//! What differs between the systems Tandem builds for, in one place, so
//! the modules above call one function instead of each holding its own
//! `cfg`: file modes, a process's liveness, the descriptor the LSP frames
//! go out on, the shell `run_shell` starts, and the process tree a command
//! runs in. Linux (and other Unix systems) keep what Tandem always did;
//! Windows gets the nearest equivalent, said at each item. (The sandbox,
//! which is platform knowledge too, has its own module above.)
//!
//! | | Unix | Windows |
//! |---|---|---|
//! | a private file or folder | mode 0600 / 0700 | the folder's inherited ACL (the user's own for their folders) |
//! | a file's mode | kept and set | none: the read-only attribute is all there is |
//! | is a pid alive | `kill(pid, 0)` | `OpenProcess` and its exit code |
//! | the shell | `bash` on PATH, else `sh` | Git for Windows' `bash.exe` (PATH, then where Git installs it) |
//! | a command's processes | its own process group: SIGTERM, then SIGKILL | a Job Object: terminated as one, and closed with Tandem |

use std::path::{Path, PathBuf};

/// Whether file names on this system's usual disks ignore ASCII case:
/// Windows' NTFS, and macOS's APFS as it is formatted by default.
pub const NAMES_IGNORE_CASE: bool = cfg!(any(windows, target_os = "macos"));

/// The name the file system opens for `name`: on this system
/// ([`name_as_opened_on`] for another).
pub fn name_as_opened(name: &str) -> String {
    name_as_opened_on(name, NAMES_IGNORE_CASE, cfg!(windows))
}

/// The name a file system opens for `name`: ASCII case folded where names
/// ignore case (`HOOKS` is `hooks`), and on Windows without the trailing
/// dots and spaces its path parsing drops (`.git. ` is `.git`).
pub fn name_as_opened_on(name: &str, ignore_case: bool, windows: bool) -> String {
    // `.` and `..` stay themselves.
    let name = if windows && name != "." && name != ".." { name.trim_end_matches(['.', ' ']) } else { name };
    if ignore_case { name.to_ascii_lowercase() } else { name.to_string() }
}

/// Why Windows would not keep `name` (one path component) as written, if
/// it would not: a reserved device name (`CON`, `NUL`, `COM1`… with any
/// extension: `aux.txt` is the device AUX), a trailing dot or space (dropped
/// by Win32, kept by a `\\?\` path, which makes a file other programs
/// cannot open), or a character Windows forbids in names. Pure: tested on
/// every system; [`path_name_problem`] applies it on Windows.
pub fn windows_name_problem(name: &str) -> Option<String> {
    if name == "." || name == ".." {
        return None;
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Some(format!("`{name}` ends with a dot or a space, which Windows drops from names"));
    }
    if let Some(c) = name.chars().find(|c| matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') || (*c as u32) < 32) {
        return Some(format!("`{name}` holds {c:?}, which Windows does not allow in names"));
    }
    // The device is the part before the first dot, trailing spaces dropped.
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ').to_ascii_uppercase();
    let numbered = |prefix: &str| {
        stem.strip_prefix(prefix).is_some_and(|n| matches!(n, "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "\u{b9}" | "\u{b2}" | "\u{b3}"))
    };
    if matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$") || numbered("COM") || numbered("LPT") {
        return Some(format!("`{name}` is a device name on Windows ({stem})"));
    }
    None
}

/// Why a path's file names cannot be used as written on this system
/// (Windows' rules, [`windows_name_problem`]; none elsewhere).
pub fn path_name_problem(path: &Path) -> Option<String> {
    if !cfg!(windows) {
        return None;
    }
    path.components().find_map(|c| match c {
        std::path::Component::Normal(name) => windows_name_problem(&name.to_string_lossy()),
        _ => None,
    })
}

/// `path` as Windows users and editors spell it: without the `\\?\`
/// prefix Windows' `canonicalize` adds (`\\?\C:\x` is `C:\x`,
/// `\\?\UNC\srv\share\x` is `\\srv\share\x`), which would otherwise
/// reach a `file:` URI as `file://///%3F/C%3A/…`, a URI no editor sends.
/// Unchanged elsewhere, and for a `\\?\` path with no drive or share.
pub fn plain_path(path: &Path) -> std::borrow::Cow<'_, Path> {
    if !cfg!(windows) {
        return std::borrow::Cow::Borrowed(path);
    }
    match path.to_str().and_then(without_verbatim_prefix) {
        Some(plain) => std::borrow::Cow::Owned(PathBuf::from(plain)),
        None => std::borrow::Cow::Borrowed(path),
    }
}

/// `path` as the file system opens it, for comparing spellings: on
/// Windows without the `\\?\` prefix ([`plain_path`]) and each name
/// without the trailing dots and spaces Win32 drops (`secrets.\key` is
/// `secrets\key`); case is left to the comparison. Unchanged elsewhere.
pub fn path_as_opened(path: &Path) -> std::borrow::Cow<'_, Path> {
    if !cfg!(windows) {
        return std::borrow::Cow::Borrowed(path);
    }
    let plain = plain_path(path);
    let mut out = PathBuf::new();
    for part in plain.components() {
        match part {
            std::path::Component::Normal(name) => match name.to_str() {
                Some(text) => out.push(name_as_opened_on(text, false, true)),
                None => out.push(name),
            },
            other => out.push(other.as_os_str()),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The Win32 spelling of a `\\?\` path, when it has one: a drive
/// (`\\?\C:\x`) or a share (`\\?\UNC\srv\share`). Pure: tested on
/// every system; [`plain_path`] applies it on Windows.
pub fn without_verbatim_prefix(text: &str) -> Option<String> {
    let rest = text.strip_prefix(r"\\?\")?;
    if let Some(share) = rest.strip_prefix(r"UNC\") {
        return Some(format!(r"\\{share}"));
    }
    let bytes = rest.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && (bytes.len() == 2 || bytes[2] == b'\\');
    drive.then(|| rest.to_string())
}

/// Whether `err` (of a rename over a file, or an open) says another
/// program holds the file open in a way that forbids it: on Windows a
/// sharing or lock violation, or the access denial a file open without
/// `FILE_SHARE_DELETE` gives a rename over it (an editor, an indexer, an
/// antivirus scan). Such a hold ends by itself, so the caller may retry;
/// Unix has none (a rename replaces an open file).
pub fn file_held_open(err: &std::io::Error) -> bool {
    // ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION.
    cfg!(windows) && matches!(err.raw_os_error(), Some(5 | 32 | 33))
}

/// Open (create) a file only its owner may read and write: mode 0600 on
/// Unix; on Windows a new file takes its folder's ACL.
pub fn private_file(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600)
    }
    #[cfg(not(unix))]
    options
}

/// Create folders only their owner may enter: mode 0700 on Unix; on
/// Windows a new folder takes its parent's ACL.
pub fn private_dir(builder: &mut std::fs::DirBuilder) -> &mut std::fs::DirBuilder {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700)
    }
    #[cfg(not(unix))]
    builder
}

/// A file's Unix mode bits, `None` where files have none (Windows).
pub fn mode(metadata: &std::fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        Some(metadata.permissions().mode())
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}

/// Set a file's Unix mode bits; nothing where files have none (Windows).
pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

/// What tells one state of a folder from another without listing it: on
/// Unix its device, inode and change time to the nanosecond; on Windows
/// (whose file index std does not give yet) its change time alone, which
/// NTFS moves when an entry is added, removed or renamed.
pub fn folder_identity(metadata: &std::fs::Metadata) -> (u64, u64, i64, i64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        (metadata.dev(), metadata.ino(), metadata.mtime(), metadata.mtime_nsec())
    }
    #[cfg(not(unix))]
    {
        let since = metadata.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).unwrap_or_default();
        (0, 0, i64::try_from(since.as_secs()).unwrap_or(i64::MAX), i64::from(since.subsec_nanos()))
    }
}

/// The user's numeric id, where users have one (Unix).
pub fn user_id() -> Option<u32> {
    #[cfg(unix)]
    {
        // SAFETY: getuid(2) always succeeds and touches no memory.
        Some(unsafe { libc::getuid() })
    }
    #[cfg(not(unix))]
    None
}

/// Is a process with this pid running (as far as we may know)?
pub fn process_exists(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else { return false };
        // SAFETY: signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::{CloseHandle, ERROR_ACCESS_DENIED, GetLastError, STILL_ACTIVE};
        use windows_sys::Win32::System::Threading::{GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};
        // SAFETY: OpenProcess returns a handle we own (closed below) or
        // null; GetExitCodeProcess writes one u32 we own.
        unsafe {
            let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
            if handle.is_null() {
                // Someone else's process, which we may not open, exists.
                return GetLastError() == ERROR_ACCESS_DENIED;
            }
            let mut code = 0u32;
            let ok = GetExitCodeProcess(handle, &mut code) != 0;
            CloseHandle(handle);
            ok && code == STILL_ACTIVE as u32
        }
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = pid;
        true
    }
}

/// Standard output as a file of its own (a duplicate of the descriptor or
/// handle), so each write reaches it whole, without std's line buffering.
pub fn stdout_file() -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd as _;
        Ok(std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned()?))
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsHandle as _;
        Ok(std::fs::File::from(std::io::stdout().as_handle().try_clone_to_owned()?))
    }
}

/// The rows and columns of the terminal stderr is, if it is one whose size
/// is known (Unix's `TIOCGWINSZ`; `None` on Windows, whose console size
/// Tandem does not read yet).
pub fn stderr_terminal_size() -> Option<(usize, usize)> {
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ writes a `winsize` into the struct it is given,
        // which lives for the call; fd 2 is only read.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(2, libc::TIOCGWINSZ, &mut size) } == 0;
        (ok && size.ws_row > 0 && size.ws_col > 0).then_some((size.ws_row as usize, size.ws_col as usize))
    }
    #[cfg(not(unix))]
    None
}

/// The read end of a pipe, read without blocking a runtime thread.
#[cfg(unix)]
pub type AsyncPipe = tokio::net::unix::pipe::Receiver;
/// The read end of a pipe (Windows' anonymous pipes have no overlapped
/// reads: each read waits in tokio's blocking pool).
#[cfg(windows)]
pub type AsyncPipe = tokio::fs::File;

/// The read end of `pipe`, to read from async code.
pub fn async_pipe(pipe: std::io::PipeReader) -> std::io::Result<AsyncPipe> {
    #[cfg(unix)]
    return tokio::net::unix::pipe::Receiver::from_owned_fd(std::os::fd::OwnedFd::from(pipe));
    #[cfg(windows)]
    return Ok(tokio::fs::File::from_std(std::fs::File::from(std::os::windows::io::OwnedHandle::from(pipe))));
}

/// The shell `run_shell` runs a command with (`SHELL -c COMMAND`), for a
/// command whose `PATH` is `path`. On Unix `bash` where that PATH has it,
/// else `sh` (always there); the `shell` setting is Windows' only. On
/// Windows [`windows_shell`]: the setting's bash when one is set, else Git
/// for Windows' `bash.exe`. `Err` says in one line what to install or fix.
pub fn shell(path: &std::ffi::OsStr, setting: Option<&Path>) -> Result<PathBuf, String> {
    #[cfg(unix)]
    {
        let _ = setting;
        let has_bash = std::env::split_paths(path).any(|dir| dir.is_absolute() && dir.join("bash").is_file());
        Ok(PathBuf::from(if has_bash { "bash" } else { "sh" }))
    }
    #[cfg(not(unix))]
    windows_shell(path, setting, &git_install_dirs())
}

/// Windows' shell: the `shell` setting's program when the user set one
/// (their choice wins over what is found: an MSYS2 or Cygwin bash, a Git
/// installed elsewhere), else Git for Windows' `bash.exe` on `path`, else
/// in one of `install_dirs` (where Git's installer puts it); never
/// `System32\bash.exe`, which is WSL's and runs the command in another
/// system. Pure but for looking at files: tested on every system.
#[cfg_attr(all(unix, not(test)), allow(dead_code))]
pub fn windows_shell(path: &std::ffi::OsStr, setting: Option<&Path>, install_dirs: &[PathBuf]) -> Result<PathBuf, String> {
    if let Some(bash) = setting {
        return match bash.is_file() {
            true => Ok(bash.to_path_buf()),
            false => Err(format!(
                "Error: the `shell` setting names {}, which is not a file: set it to a bash.exe that is there (Git for Windows puts one in C:\\Program Files\\Git\\bin), or remove it to use Git Bash from PATH.",
                bash.display()
            )),
        };
    }
    let on_path = std::env::split_paths(path)
        .filter(|dir| dir.is_absolute() && !is_windows_system_dir(dir))
        .map(|dir| dir.join("bash.exe"))
        .find(|bash| bash.is_file());
    on_path.or_else(|| install_dirs.iter().map(|dir| dir.join("bin").join("bash.exe")).find(|bash| bash.is_file())).ok_or_else(|| {
        "Error: run_shell needs Git for Windows' bash.exe, and none was found on PATH or where Git installs it: install Git for Windows (git-scm.com), put its bin folder on PATH or name a bash.exe in the `shell` setting (~/.tandem/settings.json), and start the editor again.".to_string()
    })
}

/// `C:\Windows\System32` and its kin: their `bash.exe` is WSL's.
fn is_windows_system_dir(dir: &Path) -> bool {
    let dir = dir.to_string_lossy().to_ascii_lowercase().replace('/', "\\");
    let dir = dir.trim_end_matches('\\');
    dir.ends_with("\\windows\\system32") || dir.ends_with("\\windows\\sysnative") || dir.ends_with("\\windows\\syswow64")
}

/// Where Git for Windows is installed: for all users (64- and 32-bit
/// Program Files) and for one user (`%LOCALAPPDATA%\Programs\Git`).
#[cfg(not(unix))]
fn git_install_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["ProgramW6432", "ProgramFiles", "ProgramFiles(x86)"] {
        if let Some(dir) = std::env::var_os(var) {
            dirs.push(PathBuf::from(dir).join("Git"));
        }
    }
    if let Some(dir) = std::env::var_os("LOCALAPPDATA") {
        dirs.push(PathBuf::from(dir).join("Programs").join("Git"));
    }
    dirs
}

/// Put a stdio server (an MCP server) in a process tree of its own, so
/// stopping it stops whatever it started: a process group on Unix, a Job
/// Object that ends with Tandem on Windows.
pub fn own_process_tree(command: &mut process_wrap::tokio::CommandWrap) {
    #[cfg(unix)]
    command.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    command.wrap(process_wrap::tokio::JobObject).wrap(process_wrap::tokio::KillOnDrop);
}

/// Make `command` the leader of a process group of its own, killed when
/// its handle is dropped, with no descriptor above 2 surviving into it.
#[cfg(unix)]
pub fn own_process_group(command: &mut tokio::process::Command) {
    command.process_group(0).kill_on_drop(true);
    // SAFETY: the hook runs in the child between fork and exec and only
    // makes system calls (no allocation, no lock).
    unsafe {
        command.pre_exec(crate::environment::close_inherited_fds);
    }
}

/// Put `file` on descriptor `at` of the process `command` starts, open
/// past its `exec`: the one descriptor above 2 it keeps. After
/// [`own_process_group`], whose hook marks every descriptor above 2 to
/// close (the hooks run in the order they were added).
#[cfg(unix)]
pub fn hand_over(command: &mut tokio::process::Command, file: &std::fs::File, at: i32) {
    use std::os::fd::AsRawFd;
    let from = file.as_raw_fd();
    // SAFETY: the hook runs in the child between fork and exec and only
    // makes system calls (no allocation, no lock); `file` stays open in
    // the parent until the spawn returns, so `from` is open in the child.
    unsafe {
        command.pre_exec(move || {
            if from == at {
                // Already there: only the close-on-exec mark goes.
                let flags = libc::fcntl(at, libc::F_GETFD);
                if flags < 0 || libc::fcntl(at, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(from, at) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A command started at the root of a process tree of its own, so a
/// timeout or a cancellation stops everything it started. Unless
/// [`ProcessTree::disarm`]ed, the whole tree is killed when this is dropped
/// (the call's future dropped, an error).
pub struct ProcessTree {
    #[cfg(unix)]
    child: tokio::process::Child,
    #[cfg(unix)]
    pgid: Option<i32>,
    #[cfg(windows)]
    child: Box<dyn process_wrap::tokio::ChildWrapper>,
    armed: bool,
}

impl ProcessTree {
    /// Start `command` (with no descriptor or handle of Tandem's but its
    /// stdio) as the first process of its tree: on Unix a process group of
    /// its own, every descriptor above 2 closed as it starts; on Windows a
    /// Job Object that is killed when it closes, so nothing outlives
    /// Tandem.
    pub fn spawn(command: tokio::process::Command) -> std::io::Result<ProcessTree> {
        Self::spawn_handing(command, None)
    }

    /// [`ProcessTree::spawn`], with `handed` (a file, and the descriptor
    /// number the program reads it on) open in the first process on Unix.
    pub fn spawn_handing(mut command: tokio::process::Command, handed: Option<(&std::fs::File, i32)>) -> std::io::Result<ProcessTree> {
        #[cfg(unix)]
        {
            own_process_group(&mut command);
            if let Some((file, at)) = handed {
                hand_over(&mut command, file, at);
            }
            let child = command.spawn()?;
            let pgid = child.id().and_then(|id| i32::try_from(id).ok());
            Ok(ProcessTree { child, pgid, armed: true })
        }
        #[cfg(windows)]
        {
            let _ = handed;
            command.kill_on_drop(true);
            let mut wrapped = process_wrap::tokio::CommandWrap::from(command);
            wrapped.wrap(process_wrap::tokio::JobObject).wrap(process_wrap::tokio::KillOnDrop);
            Ok(ProcessTree { child: wrapped.spawn()?, armed: true })
        }
    }

    /// The tree of a process already started as the leader of a process
    /// group of its own ([`own_process_group`]), as a background task is,
    /// from a thread of its own.
    #[cfg(unix)]
    pub fn from_group_leader(child: tokio::process::Child) -> ProcessTree {
        let pgid = child.id().and_then(|id| i32::try_from(id).ok());
        ProcessTree { child, pgid, armed: true }
    }

    /// The first process's id, while it runs.
    pub fn id(&self) -> Option<u32> {
        #[cfg(unix)]
        return self.child.id();
        #[cfg(windows)]
        return self.child.id();
    }

    /// Start `command` (a hook, which the caller already made contained on
    /// Linux: [`crate::sandbox::contain`]) as the first process of a tree
    /// that ends with it: on Windows a Job Object, as [`ProcessTree::spawn`],
    /// so a timeout (this dropped) ends all the hook started, and nothing
    /// of it outlives Tandem; on Unix started as it is, its own process
    /// group left as it was (the keeper the caller put in does that work).
    pub fn spawn_contained(command: tokio::process::Command) -> std::io::Result<ProcessTree> {
        #[cfg(unix)]
        {
            let mut command = command;
            command.kill_on_drop(true);
            Ok(ProcessTree { child: command.spawn()?, pgid: None, armed: true })
        }
        #[cfg(windows)]
        ProcessTree::spawn(command)
    }

    /// The command's stdin, once (when it was piped).
    pub fn take_stdin(&mut self) -> Option<tokio::process::ChildStdin> {
        #[cfg(unix)]
        return self.child.stdin.take();
        #[cfg(windows)]
        return self.child.stdin().take();
    }

    /// The command's stdout and stderr, once (when they were piped).
    pub fn take_output(&mut self) -> Option<(tokio::process::ChildStdout, tokio::process::ChildStderr)> {
        #[cfg(unix)]
        return Some((self.child.stdout.take()?, self.child.stderr.take()?));
        #[cfg(windows)]
        return Some((self.child.stdout().take()?, self.child.stderr().take()?));
    }

    /// Wait for the first process (the shell) to exit; what it started may
    /// still run.
    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        #[cfg(unix)]
        return self.child.wait().await;
        #[cfg(windows)]
        return self.child.inner_mut().wait().await;
    }

    /// The first process's status, if it has exited.
    pub fn try_wait(&mut self) -> Option<std::process::ExitStatus> {
        #[cfg(unix)]
        return self.child.try_wait().ok().flatten();
        #[cfg(windows)]
        return self.child.inner_mut().try_wait().ok().flatten();
    }

    /// Ask every process of the tree to end (SIGTERM). Returns false where
    /// there is no asking (Windows), and the tree was killed at once.
    pub fn terminate(&mut self) -> bool {
        #[cfg(unix)]
        {
            self.signal_group(libc::SIGTERM);
            true
        }
        #[cfg(windows)]
        {
            self.kill();
            false
        }
    }

    /// Kill every process of the tree at once.
    pub fn kill(&mut self) {
        #[cfg(unix)]
        self.signal_group(libc::SIGKILL);
        #[cfg(windows)]
        if self.armed {
            let _ = self.child.start_kill();
        }
    }

    /// Done with the tree: dropping it no longer kills what is left of it
    /// on Unix (a deliberately backgrounded server that redirected its
    /// output keeps running). Windows' Job Object still ends with Tandem.
    pub fn disarm(&mut self) {
        self.armed = false;
    }

    #[cfg(unix)]
    fn signal_group(&self, signal: libc::c_int) {
        if let (true, Some(pgid)) = (self.armed, self.pgid) {
            // SAFETY: kill(2) with a negative pid signals that process
            // group; it has no memory effects. ESRCH (group gone) is fine.
            unsafe {
                libc::kill(-pgid, signal);
            }
        }
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Git Bash's stand-in (`tests/windows/fake_bash.c`), which
/// `tests/windows/unit` names, for the tests that run a shell on Windows:
/// it is the only bash under Wine.
#[cfg(all(test, windows))]
#[allow(clippy::expect_used)]
pub fn test_fake_bash() -> PathBuf {
    let bash = std::env::var_os("TANDEM_TEST_FAKE_BASH").expect("TANDEM_TEST_FAKE_BASH: run these tests with tests/windows/unit, which builds Git Bash's stand-in");
    PathBuf::from(bash)
}

/// Make a symbolic link, for tests: on Windows a file or a folder link
/// by what `target` is now (a link to nothing is a file link), which needs
/// Developer Mode on Windows (Wine makes them).
#[cfg(test)]
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, link);
    #[cfg(windows)]
    return if target.as_ref().is_dir() { std::os::windows::fs::symlink_dir(target, link) } else { std::os::windows::fs::symlink_file(target, link) };
}

/// The path an open file really is, where the system names it (Linux's
/// `/proc/self/fd`); `None` where it does not.
#[cfg(target_os = "linux")]
pub fn opened_path(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(not(target_os = "linux"))]
pub fn opened_path(_file: &std::fs::File) -> Option<PathBuf> {
    None
}

/// A FIFO, a device or a socket, in words; `None` for a file, a folder or
/// where the system has no such kinds.
pub fn special_file_kind(metadata: &std::fs::Metadata) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = metadata.file_type();
        if kind.is_fifo() {
            return Some("a FIFO");
        }
        if kind.is_char_device() || kind.is_block_device() {
            return Some("a device");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    #[cfg(not(unix))]
    let _ = metadata;
    None
}

/// Opens a file for reading without waiting on it: a FIFO with no writer
/// or a terminal must not hang the reader (Unix's `O_NONBLOCK`,
/// `O_NOCTTY`); elsewhere a plain open.
#[cfg(unix)]
pub fn open_without_blocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)
}

#[cfg(not(unix))]
pub fn open_without_blocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_unix_shell_is_bash_where_path_has_it_else_sh() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(shell(dir.path().as_os_str(), None).unwrap(), PathBuf::from("sh"));
        std::fs::write(dir.path().join("bash"), "").unwrap();
        assert_eq!(shell(dir.path().as_os_str(), None).unwrap(), PathBuf::from("bash"));
        // A relative PATH entry is not searched.
        assert_eq!(shell(std::ffi::OsStr::new("."), None).unwrap(), PathBuf::from("sh"));
    }

    #[test]
    fn a_private_file_is_the_owners_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        private_file(std::fs::OpenOptions::new().write(true).create_new(true)).open(&path).unwrap();
        let mode = mode(&std::fs::metadata(&path).unwrap());
        #[cfg(unix)]
        assert_eq!(mode.map(|m| m & 0o777), Some(0o600));
        #[cfg(not(unix))]
        assert_eq!(mode, None);
    }

    #[test]
    fn this_process_exists_and_an_ended_one_does_not() {
        assert!(process_exists(std::process::id()));
        let mut child = std::process::Command::new(if cfg!(windows) { "cmd" } else { "true" }).args(if cfg!(windows) { &["/c", "exit"][..] } else { &[][..] }).spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_exists(pid));
    }

    #[test]
    fn windows_refuses_device_names_trailing_dots_and_forbidden_characters() {
        for bad in ["CON", "nul", "Aux.txt", "com1", "LPT9.log", "NUL ", "con .txt", "COM\u{b9}", "CONIN$", "a.", "b ", ".git.", "x:y", "a*b", "tab\tname"] {
            assert!(windows_name_problem(bad).is_some(), "{bad:?} passed");
        }
        for good in ["console.log", "nully.rs", "auxiliary", "com10", "LPT", ".git", "..", ".", "a.b.c", "COM0x", "con-fig"] {
            assert_eq!(windows_name_problem(good), None, "{good:?} refused");
        }
    }

    #[test]
    fn a_name_as_windows_and_macos_open_it() {
        assert_eq!(name_as_opened_on(".GIT. ", true, true), ".git");
        assert_eq!(name_as_opened_on("HOOKS", true, false), "hooks");
        assert_eq!(name_as_opened_on("..", true, true), "..");
        // Linux keeps names as they are.
        assert_eq!(name_as_opened_on(".GIT. ", false, false), ".GIT. ");
        assert_eq!(name_as_opened("HOOKS"), if cfg!(target_os = "linux") { "HOOKS" } else { "hooks" });
    }

    #[test]
    fn a_verbatim_path_is_spelled_as_win32_spells_it() {
        assert_eq!(without_verbatim_prefix(r"\\?\C:\Users\me\repo").as_deref(), Some(r"C:\Users\me\repo"));
        assert_eq!(without_verbatim_prefix(r"\\?\z:").as_deref(), Some("z:"));
        assert_eq!(without_verbatim_prefix(r"\\?\UNC\server\share\a.txt").as_deref(), Some(r"\\server\share\a.txt"));
        // Not a verbatim path, or one with no Win32 spelling: kept.
        for kept in [r"C:\Users\me", r"\\server\share", r"\\?\Volume{0f}\x", r"\\?\C_\x", "/tmp/x"] {
            assert_eq!(without_verbatim_prefix(kept), None, "{kept}");
        }
        assert_eq!(plain_path(Path::new(r"\\?\C:\x")).as_os_str(), if cfg!(windows) { r"C:\x" } else { r"\\?\C:\x" });
    }

    /// Windows' choice of bash, on real files: the setting's program wins
    /// (and one that is not there is said, not passed over), then Git Bash
    /// on PATH (never WSL's in System32), then where Git installs it, else
    /// one line saying what to install.
    #[test]
    fn windows_takes_the_shell_setting_then_git_bash_on_path_then_where_git_installs_it() {
        let dir = tempfile::tempdir().unwrap();
        let made = |folder: &str| {
            let folder = dir.path().join(folder);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("bash.exe"), "").unwrap();
            folder
        };
        let on_path = made("Git/usr/bin");
        let wsl = made("Windows/System32");
        let installed = dir.path().join("Programs/Git");
        made("Programs/Git/bin");
        let msys = made("msys64/usr/bin").join("bash.exe");
        let path = std::env::join_paths([&wsl, &on_path]).unwrap();
        let only_wsl = std::env::join_paths([&wsl]).unwrap();
        let nowhere = [dir.path().join("nowhere")];

        assert_eq!(windows_shell(&path, Some(&msys), std::slice::from_ref(&installed)).unwrap(), msys);
        assert_eq!(windows_shell(&path, None, std::slice::from_ref(&installed)).unwrap(), on_path.join("bash.exe"));
        assert_eq!(windows_shell(&only_wsl, None, std::slice::from_ref(&installed)).unwrap(), installed.join("bin").join("bash.exe"));

        let missing = dir.path().join("gone").join("bash.exe");
        let err = windows_shell(&path, Some(&missing), std::slice::from_ref(&installed)).unwrap_err();
        assert!(err.starts_with(&format!("Error: the `shell` setting names {}, which is not a file:", missing.display())), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let err = windows_shell(&only_wsl, None, &nowhere).unwrap_err();
        assert!(err.contains("install Git for Windows (git-scm.com)") && err.contains("`shell` setting"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn wsl_bash_is_never_taken_for_git_bash() {
        assert!(is_windows_system_dir(Path::new(r"C:\Windows\System32")));
        assert!(is_windows_system_dir(Path::new(r"c:\WINDOWS\system32\")));
        assert!(is_windows_system_dir(Path::new("C:/Windows/SysWOW64")));
        assert!(!is_windows_system_dir(Path::new(r"C:\Program Files\Git\bin")));
    }
}
