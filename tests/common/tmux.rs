//! A terminal editor driven through tmux, for the end-to-end tests of
//! editors that need a real terminal (Emacs, Kakoune): a private tmux server
//! per test, its screen read with `capture-pane`, keys sent with
//! `send-keys`. Standalone (no crate imports), so a test binary includes it
//! with `#[path = "common/tmux.rs"] mod tmux;`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A tmux server of the test's own (its socket name), killed however the
/// test ends, with everything running in it.
pub struct Tmux {
    tmux: PathBuf,
    socket: String,
}

impl Tmux {
    /// `socket` names the server; make it unique per test (the process id
    /// and the test's name).
    pub fn new(tmux: &Path, socket: String) -> Self {
        Tmux { tmux: tmux.to_path_buf(), socket }
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.tmux).arg("-L").arg(&self.socket).args(args).output().expect("run tmux")
    }

    /// `tmux new-session -d` of `width`×`height` in `dir`, with `env` in its
    /// environment, running the shell command `command`.
    pub fn start(&self, width: u16, height: u16, dir: &Path, env: &[(&str, String)], command: &str) {
        let mut args: Vec<String> = vec!["new-session".into(), "-d".into(), "-x".into(), width.to_string(), "-y".into(), height.to_string()];
        args.push("-c".into());
        args.push(dir.display().to_string());
        for (key, value) in env {
            args.push("-e".into());
            args.push(format!("{key}={value}"));
        }
        args.push(command.into());
        let started = self.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(started.status.success(), "tmux: {}", String::from_utf8_lossy(&started.stderr));
    }

    /// What the pane shows now.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p"]).stdout).to_string()
    }

    /// What the pane shows now, with its colours (SGR escapes), for a
    /// screenshot.
    pub fn screen_ansi(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-e"]).stdout).to_string()
    }

    /// Waits until `done` holds for the screen, and returns the screen;
    /// fails at `deadline`. Tmux has no event for "the pane changed": this
    /// polls the screen.
    pub fn wait_for(&self, what: &str, deadline: Instant, mut done: impl FnMut(&str) -> bool) -> String {
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(Instant::now() < deadline, "waited in vain for {what}; screen:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends keys by tmux's key names ("Enter", "C-f", "y").
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend(keys);
        self.run(&args);
    }

    /// Types `text` literally (no key names).
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-l", text]);
    }

    /// Whether the server still has its session (the editor has not quit).
    pub fn alive(&self) -> bool {
        self.run(&["has-session"]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}
