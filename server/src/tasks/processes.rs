//! The processes of a running task, from `/proc`: every descendant of
//! the process the task started (in a pid namespace of its own, where an
//! orphan is adopted by the namespace's first process, so daemons that
//! double-forked or called `setsid` are descendants too), leaving out the
//! namespace's first process itself (the sandbox's, not the command's).

use std::collections::HashMap;

use crate::tools::ports::tasks::TaskProcess;

/// Each process's parent, as `/proc` says now.
pub struct ProcessTable {
    children: HashMap<u32, Vec<u32>>,
}

impl ProcessTable {
    /// Read `/proc` once (on systems without it, an empty table).
    pub fn now() -> Self {
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
                let Some(ppid) = parent_of(pid) else { continue };
                children.entry(ppid).or_default().push(pid);
            }
        }
        ProcessTable { children }
    }

    /// The command's processes under `root`, by pid.
    pub fn under(&self, root: u32) -> Vec<TaskProcess> {
        let mut found = Vec::new();
        let mut queue: Vec<u32> = self.children.get(&root).cloned().unwrap_or_default();
        let mut seen = 0;
        while let Some(pid) = queue.pop() {
            seen += 1;
            if seen > 100_000 {
                break;
            }
            if let Some(kids) = self.children.get(&pid) {
                queue.extend(kids);
            }
            if is_namespace_init(pid) || is_zombie(pid) {
                continue;
            }
            found.push(TaskProcess { pid, command: command_line(pid) });
        }
        found.sort_by_key(|p| p.pid);
        found
    }
}

/// The parent pid from `/proc/PID/stat` (its name may hold spaces and parentheses).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = stat.rsplit_once(')')?.1;
    after_name.split_whitespace().nth(1)?.parse().ok()
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(true)
}

/// The first process of a pid namespace below ours: its pid there is 1.
fn is_namespace_init(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return false };
    status.lines().find_map(|line| line.strip_prefix("NSpid:")).is_some_and(|pids| {
        let pids: Vec<&str> = pids.split_whitespace().collect();
        pids.len() > 1 && pids.last() == Some(&"1")
    })
}

fn command_line(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text = String::from_utf8_lossy(&raw).replace('\0', " ");
    let text = text.trim();
    let mut short: String = text.chars().take(120).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

/// Send `signal` to each process (ESRCH, gone already, is fine).
#[cfg(unix)]
pub fn signal_all(processes: &[TaskProcess], signal: libc::c_int) {
    for process in processes {
        let Ok(pid) = i32::try_from(process.pid) else { continue };
        // SAFETY: kill(2) on a positive pid signals that one process; no memory effects.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}
