//! Lifetimes, not reach: the programs Tandem runs outside the sandbox on
//! the user's word (MCP servers over stdio, hooks) keep their full view of
//! the machine, but nothing they start outlives them or Tandem — also not
//! a grandchild that called `setsid` or double-forked away from their
//! process group, which a process-group kill misses.
//!
//! On Linux, [`contain`] makes the process Tandem starts a small keeper
//! instead of the program (between `fork` and `exec`, so no other binary
//! is needed):
//!
//! ```text
//! Tandem ── stub (the pid Tandem knows, in the group Tandem signals)
//!             └─ keeper (a child subreaper, in a process group of its own)
//!                  └─ the program ── what it starts (setsid or not)
//! ```
//!
//! - The keeper is a *child subreaper* (`PR_SET_CHILD_SUBREAPER`): every
//!   orphan below it is reparented to it, not to init, so it can find and
//!   kill all of them (`/proc/thread-self/children`, again and again until
//!   it has no child left).
//! - When the program exits, the keeper kills what is left and exits with
//!   the program's status; the stub exits with the keeper's, so Tandem
//!   sees the program's exit code as before.
//! - A SIGTERM (or SIGINT, SIGHUP) to the stub is passed on: the keeper
//!   gives the program and what it started the signal, and three seconds to
//!   end, then kills them all.
//! - The stub killed outright (SIGKILL: a hook's timeout, a group kill)
//!   is the keeper's parent-death signal: it kills them all at once.
//! - Tandem gone, however it went (a crash, SIGKILL): the keeper holds the
//!   read end of a pipe whose write end only Tandem holds (the
//!   *lifeline*); at its end of file it kills them all.
//!
//! Between `fork` and `exec` of a multi-threaded process only
//! async-signal-safe calls are allowed: the stub and the keeper make
//! system calls only, with no allocation and no lock.
//!
//! Other systems have no child subreaper: there a program is started as
//! before and its process group is what stops with it.

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::{AsRawFd, OwnedFd, RawFd};
    use std::sync::OnceLock;

    /// How long the program (and what it started) gets after a SIGTERM
    /// passed on, before the keeper kills them.
    const GRACE_MS: i64 = 3_000;

    /// The lifeline's read end (both ends close-on-exec, so no program
    /// Tandem starts keeps the write end).
    pub fn lifeline() -> Option<RawFd> {
        static LIFELINE: OnceLock<Option<(OwnedFd, OwnedFd)>> = OnceLock::new();
        LIFELINE
            .get_or_init(|| {
                let mut fds = [0 as libc::c_int; 2];
                // SAFETY: pipe2(2) fills the two-element array on success.
                if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                    tracing::warn!(err = %std::io::Error::last_os_error(), "cannot make the pipe that stops programs when Tandem ends");
                    return None;
                }
                // SAFETY: both descriptors were just made and are owned here only.
                Some(unsafe { (<OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[0]), <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[1])) })
            })
            .as_ref()
            .map(|(read, _)| read.as_raw_fd())
    }

    /// The signals the stub passes on and the keeper acts on.
    const STOPS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT];
    /// The keeper's parent-death signal: the stub is gone.
    const STUB_GONE: libc::c_int = libc::SIGUSR1;

    /// Run in the child between `fork` and `exec`. Returns (to go on to
    /// `exec`) only in the program's own process.
    ///
    /// # Safety
    /// Only between `fork` and `exec` (a `pre_exec` hook).
    pub unsafe fn split(lifeline: RawFd) -> std::io::Result<()> {
        unsafe {
            let stub = libc::getpid();
            let keeper = libc::fork();
            if keeper < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if keeper > 0 {
                run_stub(keeper);
            }
            // The keeper: dies when the stub does, out of the stub's group.
            libc::prctl(libc::PR_SET_PDEATHSIG, STUB_GONE as libc::c_ulong);
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong);
            // The keeper blocks its signals only after forking the program,
            // which must not inherit the mask: a signal in between ends the
            // keeper, and the program dies with it (below).
            let keeper = libc::getpid();
            let program = libc::fork();
            if program < 0 {
                libc::_exit(126);
            }
            if program == 0 {
                // The program: killed if the keeper is (`kill -9` by hand),
                // in a group of its own so the keeper can signal it whole.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                if libc::getppid() != keeper {
                    libc::_exit(126);
                }
                libc::setpgid(0, 0);
                return Ok(());
            }
            run_keeper(stub, program, lifeline);
        }
    }

    /// A signal set of `signals`.
    unsafe fn set_of(signals: &[libc::c_int]) -> libc::sigset_t {
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for signal in signals {
                libc::sigaddset(&mut set, *signal);
            }
            set
        }
    }

    /// Standard streams to `/dev/null`, `keep` to descriptor 3, every other
    /// descriptor closed: the stub and the keeper hold none of the
    /// program's pipes (its output's end of file is the program's), nor
    /// the lifeline's write end, nor the pipe `std` reads the `exec` error
    /// from.
    unsafe fn let_go_of_descriptors(keep: Option<RawFd>) {
        unsafe {
            // The kept one first: it may be a standard stream's number.
            let first = match keep {
                Some(fd) => {
                    if fd != 3 {
                        libc::dup2(fd, 3);
                    }
                    4
                }
                None => 3,
            };
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if null >= 0 {
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
            }
            if libc::syscall(libc::SYS_close_range, first as libc::c_uint, libc::c_uint::MAX, 0 as libc::c_uint) != 0 {
                for fd in first..4096 {
                    libc::close(fd);
                }
            }
        }
    }

    /// The stub: passes the stop signals on to the keeper and exits as it does.
    unsafe fn run_stub(keeper: libc::pid_t) -> ! {
        unsafe {
            let waited = set_of(&[libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGCHLD]);
            libc::sigprocmask(libc::SIG_BLOCK, &waited, std::ptr::null_mut());
            let_go_of_descriptors(None);
            loop {
                let mut status = 0;
                let done = libc::waitpid(keeper, &mut status, libc::WNOHANG);
                if done == keeper {
                    exit_as(status);
                }
                if done < 0 {
                    libc::_exit(126);
                }
                let timeout = libc::timespec { tv_sec: 1, tv_nsec: 0 };
                let signal = libc::sigtimedwait(&waited, std::ptr::null_mut(), &timeout);
                if STOPS.contains(&signal) {
                    libc::kill(keeper, signal);
                }
            }
        }
    }

    /// Milliseconds on the monotonic clock.
    unsafe fn now_ms() -> i64 {
        unsafe {
            let mut time: libc::timespec = std::mem::zeroed();
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut time);
            time.tv_sec * 1000 + time.tv_nsec / 1_000_000
        }
    }

    /// The keeper: waits for the program, a stop, the stub's or Tandem's
    /// end; then kills everything below it and exits as the program did.
    unsafe fn run_keeper(stub: libc::pid_t, program: libc::pid_t, lifeline: RawFd) -> ! {
        unsafe {
            let waited = set_of(&[libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGCHLD, STUB_GONE]);
            libc::sigprocmask(libc::SIG_BLOCK, &waited, std::ptr::null_mut());
            let_go_of_descriptors(Some(lifeline));
            let lifeline = 3;
            // Killed by SIGKILL unless the program ends on its own.
            let mut program_status: Option<libc::c_int> = None;
            let mut stopping_since: Option<i64> = None;
            let mut stub_gone = libc::getppid() != stub;
            while !stub_gone {
                let timeout = libc::timespec { tv_sec: 0, tv_nsec: 200_000_000 };
                let signal = libc::sigtimedwait(&waited, std::ptr::null_mut(), &timeout);
                if signal == STUB_GONE || libc::getppid() != stub {
                    stub_gone = true;
                } else if STOPS.contains(&signal) && stopping_since.is_none() {
                    libc::kill(-program, signal);
                    signal_children(signal);
                    stopping_since = Some(now_ms());
                }
                if reap(program, &mut program_status) || stub_gone {
                    break;
                }
                let mut poll = libc::pollfd { fd: lifeline, events: libc::POLLIN, revents: 0 };
                // Tandem never writes: readable or hung up is its end.
                if libc::poll(&mut poll, 1, 0) > 0 {
                    break;
                }
                if stopping_since.is_some_and(|since| now_ms() - since > GRACE_MS) {
                    break;
                }
            }
            kill_all(program, &mut program_status);
            exit_as(program_status.unwrap_or(libc::SIGKILL));
        }
    }

    /// Reap every child that ended; whether the program is among them.
    unsafe fn reap(program: libc::pid_t, program_status: &mut Option<libc::c_int>) -> bool {
        unsafe {
            let mut ended = false;
            loop {
                let mut status = 0;
                let pid = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if pid <= 0 {
                    return ended;
                }
                if pid == program {
                    *program_status = Some(status);
                    ended = true;
                }
            }
        }
    }

    /// Send `signal` to every child of the keeper (the program and the
    /// orphans reparented to it); how many there were, or `None` when they
    /// cannot be listed.
    unsafe fn signal_children(signal: libc::c_int) -> Option<usize> {
        unsafe {
            let fd = libc::open(c"/proc/thread-self/children".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return None;
            }
            let mut buffer = [0u8; 512];
            let mut pid: libc::pid_t = 0;
            let mut count = 0;
            loop {
                let read = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
                if read <= 0 {
                    break;
                }
                for &byte in &buffer[..read as usize] {
                    if byte.is_ascii_digit() {
                        pid = pid.saturating_mul(10).saturating_add(libc::pid_t::from(byte - b'0'));
                    } else if pid > 0 {
                        libc::kill(pid, signal);
                        count += 1;
                        pid = 0;
                    }
                }
            }
            if pid > 0 {
                libc::kill(pid, signal);
                count += 1;
            }
            libc::close(fd);
            Some(count)
        }
    }

    /// Kill everything below the keeper: each child, and the orphans that
    /// killing it hands over, until no child is left (bounded).
    unsafe fn kill_all(program: libc::pid_t, program_status: &mut Option<libc::c_int>) {
        unsafe {
            for _ in 0..2_000 {
                // The program's group first (what it started without setsid),
                // then every child the keeper has now.
                libc::kill(-program, libc::SIGKILL);
                signal_children(libc::SIGKILL);
                reap(program, program_status);
                let mut status = 0;
                // Never blocking: an orphan handed over after the listing is
                // alive until the next round kills it.
                let pid = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if pid == program {
                    *program_status = Some(status);
                }
                if pid < 0 && *libc::__errno_location() == libc::ECHILD {
                    return;
                }
                if pid == 0 {
                    let pause = libc::timespec { tv_sec: 0, tv_nsec: 10_000_000 };
                    libc::nanosleep(&pause, std::ptr::null_mut());
                }
            }
        }
    }

    /// Exit as a process with wait status `status` did: its exit code, or
    /// its signal (raised again with the default action).
    unsafe fn exit_as(status: libc::c_int) -> ! {
        unsafe {
            if libc::WIFEXITED(status) {
                libc::_exit(libc::WEXITSTATUS(status));
            }
            let signal = if libc::WIFSIGNALED(status) { libc::WTERMSIG(status) } else { libc::SIGKILL };
            libc::signal(signal, libc::SIG_DFL);
            let only = set_of(&[signal]);
            libc::sigprocmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
            libc::raise(signal);
            libc::_exit(128 + signal);
        }
    }
}

/// Make `command` (an MCP server, a hook) start contained: when it ends,
/// is stopped, or Tandem ends, everything it started ends too. Without a
/// way to (other systems, no pipe) it starts as before.
pub fn contain(command: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    {
        let Some(lifeline) = linux::lifeline() else { return };
        // SAFETY: `split` makes system calls only (no allocation, no
        // lock), as is required between fork and exec.
        unsafe {
            command.pre_exec(move || linux::split(lifeline));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Whether process `pid` is alive (not gone, not a zombie).
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
    }

    async fn wait_dead(pid: i32) -> bool {
        for _ in 0..500 {
            if !alive(pid) {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        false
    }

    #[tokio::test]
    async fn the_exit_code_comes_through_and_what_the_program_left_behind_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let mut command = tokio::process::Command::new("sh");
        command.arg("-c").arg(format!("setsid sh -c 'echo $$ > {}; exec sleep 1000' </dev/null >/dev/null 2>&1 & read line; echo \"got $line\"; exit 7", pid_file.display()));
        command.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
        contain(&mut command);
        let mut child = command.spawn().unwrap();
        for _ in 0..500 {
            if std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let detached: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        assert!(alive(detached));
        use tokio::io::AsyncWriteExt;
        child.stdin.take().unwrap().write_all(b"hello\n").await.unwrap();
        let output = child.wait_with_output().await.unwrap();
        assert_eq!(output.status.code(), Some(7));
        assert_eq!(String::from_utf8_lossy(&output.stdout), "got hello\n");
        assert!(wait_dead(detached).await, "the setsid grandchild outlived the program");
    }

    #[tokio::test]
    async fn a_killed_stub_takes_everything_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let mut command = tokio::process::Command::new("sh");
        command.arg("-c").arg(format!("setsid sh -c 'echo $$ > {}; exec sleep 1000' </dev/null >/dev/null 2>&1 & exec sleep 1000", pid_file.display()));
        contain(&mut command);
        let mut child = command.spawn().unwrap();
        for _ in 0..500 {
            if std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let detached: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        child.kill().await.unwrap();
        assert!(wait_dead(detached).await, "the setsid grandchild outlived the killed stub");
    }

    #[tokio::test]
    async fn a_program_that_cannot_start_is_an_error_as_before() {
        let mut command = tokio::process::Command::new("/nonexistent/program");
        contain(&mut command);
        let err = command.spawn().err().unwrap();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }
}
