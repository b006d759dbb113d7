//! The shell sandbox with real bubblewrap, driven through a real `tandem
//! ask` with the scripted model. Every check is by the effect on disk (or
//! what a command could read), never by Tandem's message alone:
//!
//! - *unasked* commands (here let through by a bare `run_shell` allow rule
//!   in the default mode, as a classifier miss would) write nothing but
//!   their private `/tmp`, read no masked path, reach no network and see
//!   no other process;
//! - *approved* commands (`bypassPermissions`) write inside the workspace
//!   but not outside it, not into `.git/config`, `.git/hooks`, `.tandem/`,
//!   `.claude/`, `.vscode/` or `.mcp.json`, and have no network unless the
//!   settings allow it;
//! - the timeout still stops a command's whole tree through bubblewrap;
//! - a file judged inside the workspace and swapped for a link to outside
//!   while the user is asked is still not written through the link;
//! - no sandbox (switched off, or `bwrap` missing) is said in the run's
//!   first event.
//!
//! Without bubblewrap these tests skip, unless `TANDEM_REQUIRE_BWRAP` is
//! set (`.ci/run` sets it), when they fail.

#![allow(clippy::unwrap_used)]
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::lsp_client;
use crate::common::script;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use script::shell;
use serde_json::{json, Value};


/// A folder outside every folder approved commands may write (`/tmp`,
/// `/var/tmp`, `$TMPDIR`), like a user's other files: beside the build, or,
/// when the build itself is in a temp folder (a clone in `/tmp`), in the
/// home folder's cache. Without this, a clone in `/tmp` made every "nothing
/// was written outside" check fail, since approved commands may write there.
fn outside_dir() -> tempfile::TempDir {
    let temp_roots: Vec<PathBuf> =
        [PathBuf::from("/tmp"), PathBuf::from("/var/tmp"), std::env::temp_dir()].iter().filter_map(|t| t.canonicalize().ok()).collect();
    let under_temp = |path: &Path| temp_roots.iter().any(|t| path.starts_with(t));
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).canonicalize().unwrap();
    let base = if under_temp(&target) {
        let home = PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/tandem-tests");
        std::fs::create_dir_all(&home).unwrap();
        home.canonicalize().unwrap()
    } else {
        target
    };
    assert!(!under_temp(&base), "no folder outside the temp folders for the tests: {}", base.display());
    tempfile::tempdir_in(base).unwrap()
}

struct Run {
    _temp: tempfile::TempDir,
    _outside: tempfile::TempDir,
    /// The workspace.
    root: PathBuf,
    /// Outside the workspace and outside the temp folders (approved
    /// commands may write `/tmp`), like a user's other files: what no
    /// command may write. Commands see it as `$OUTSIDE`.
    outside: PathBuf,
    home: PathBuf,
}

struct Output {
    events: Vec<Value>,
    results: Vec<(bool, String)>,
}

impl Run {
    fn new(project_settings: Value) -> Self {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let outside_dir = outside_dir();
        let outside = outside_dir.path().canonicalize().unwrap();
        let (root, home) = (base.join("work"), base.join("home"));
        for dir in [&root, &home] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(root.join("notes.txt"), "my unsaved thoughts\n").unwrap();
        std::fs::write(outside.join("precious.txt"), "keep me\n").unwrap();
        let git = Command::new("git").args(["init", "-q"]).current_dir(&root).status();
        assert!(git.is_ok_and(|s| s.success()), "git init");
        std::fs::create_dir_all(root.join(".tandem")).unwrap();
        std::fs::write(root.join(".tandem/settings.json"), project_settings.to_string()).unwrap();
        Run { _temp: temp, _outside: outside_dir, root, outside, home }
    }

    fn user_settings(&self, settings: Value) {
        std::fs::create_dir_all(self.home.join(".tandem")).unwrap();
        std::fs::write(self.home.join(".tandem/settings.json"), settings.to_string()).unwrap();
    }

    fn ask(&self, commands: &[&str], args: &[&str]) -> Output {
        self.ask_with(commands, args, &[])
    }

    /// One `run_shell` call per turn; `env` is added to Tandem's own environment.
    fn ask_with(&self, commands: &[&str], args: &[&str], env: &[(&str, &str)]) -> Output {
        self.ask_wrapped(&[], commands, args, env)
    }

    /// The same, with `tandem` started by the program `wrap` names.
    fn ask_wrapped(&self, wrap: &[&std::ffi::OsStr], commands: &[&str], args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut turns: Vec<Value> = commands.iter().map(|c| json!({"tool_calls": [shell(c)]})).collect();
        turns.push(json!({"text": "Done."}));
        let script = self.home.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let tandem = std::ffi::OsStr::new(env!("CARGO_BIN_EXE_tandem"));
        let mut command = match wrap.split_first() {
            Some((program, rest)) => {
                let mut command = Command::new(program);
                command.args(rest).arg(tandem);
                command
            }
            None => Command::new(tandem),
        };
        command
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("XDG_CACHE_HOME", self.home.join("cache"))
            .env("TANDEM_PROVIDER", "scripted")
            .env("TANDEM_SCRIPT", &script)
            .env("OUTSIDE", &self.outside)
            .env("TANDEM_SHELL_ENV_ALLOW", "OUTSIDE")
            .stdin(Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        // The test's project settings are the user's own: the folder is trusted.
        command.args(["ask", "--json", "--trust"]).args(args).arg("go");
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        // The run's first event, `provider`, says which model it uses: not
        // these tests' business.
        let events: Vec<Value> =
            String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter(|e| e["type"] != "provider").collect();
        let results = events
            .iter()
            .filter(|e| e["type"] == "tool_result")
            .map(|e| (e["is_error"].as_bool().unwrap(), e["content"].as_str().unwrap().to_string()))
            .collect();
        Output { events, results }
    }

    /// Every file under `dir` with its content, for before/after checks.
    fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap().flatten() {
                let path = entry.path();
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    stack.push(path);
                    out.push((format!("{name}/"), Vec::new()));
                } else if meta.is_symlink() {
                    out.push((name, std::fs::read_link(&path).unwrap().display().to_string().into_bytes()));
                } else {
                    out.push((name, std::fs::read(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    }
}

/// Commands that write, each a different way past a text classifier.
const WRITING_PAYLOADS: &[&str] = &[
    "echo clobbered > notes.txt",
    "find . -name notes.txt {-delete,}",
    "find . -name notes.txt $'-\\x64elete'",
    "f=notes.txt; : ${u:=x}; printf gone > \"$f\"",
    "sort -onotes.txt /dev/null",
    "sort --outp=notes.txt /dev/null",
    "echo '{\"permissions\":{\"allow\":[\"run_shell\"]}}' > .tande[m]/settings.json",
    "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .gi[t]/config",
    "mkdir -p .gi[t]/hooks; printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit",
    "echo planted > {$OUTSIDE/planted.txt,}",
    "touch {\"$OUTSIDE\"/touched.txt,}",
    "echo planted > \"$OUTSIDE\"/precious.txt",
    "ln -s \"$OUTSIDE/dangling.txt\" link.txt; echo through > link.txt",
    "mkdir -p sub; ln -s \"$OUTSIDE\" sub/out; echo x > sub/out/../../notes.txt; echo y > sub/out/escaped.txt",
    "find . -maxdepth 1 -name notes.txt -exec sh -c 'echo exec > {}' \\;",
    "printf 'a\\n' | xargs -I{} sh -c 'echo {} > notes.txt'",
    "x='a[$(echo pwned > notes.txt)]'; echo $((x))",
    "cd {..,}; echo up > notes.txt",
    "CDPATH=$OUTSIDE; cd . && echo c > precious.txt",
    "touch newfile.txt; mkdir newdir",
    "echo '{}' > .mcp.json; mkdir -p .claude .vscode; echo '{}' > .claude/settings.json",
    "git -c user.email=a@b -c user.name=a commit --allow-empty -qm x",
    "rm -rf .git",
];

#[test]
fn unasked_commands_write_nothing_whatever_they_are() {
    if !crate::common::bwrap_works() {
        return;
    }
    // A bare `run_shell` rule lets every command through unasked: the
    // classifier is out of the picture, only the sandbox stands.
    let run = Run::new(json!({"permissions": {"allow": ["run_shell"]}}));
    let before_root = Run::snapshot(&run.root);
    let before_outside = Run::snapshot(&run.outside);
    let out = run.ask(WRITING_PAYLOADS, &[]);
    assert_eq!(out.results.len(), WRITING_PAYLOADS.len(), "every payload ran: {:?}", out.results);
    let after_root = Run::snapshot(&run.root);
    let changed: Vec<&String> = after_root.iter().filter(|e| !before_root.contains(e)).chain(before_root.iter().filter(|e| !after_root.contains(e))).map(|(name, _)| name).collect();
    assert!(changed.is_empty(), "the workspace changed ({changed:?}): {:?}", out.results);
    assert_eq!(Run::snapshot(&run.outside), before_outside, "outside the workspace changed");
    assert!(!run.home.join("pwned").exists() && !run.root.join("pwned").exists());
    // The command could write its private /tmp, and its failures say why.
    let out = run.ask(&["echo scratch > /tmp/scratch && cat /tmp/scratch", "touch made.txt"], &[]);
    assert_eq!(out.results[0], (false, "scratch".to_string()));
    assert!(out.results[1].0 && out.results[1].1.contains("read-only sandbox"), "{:?}", out.results[1]);
}

#[test]
fn approved_commands_write_the_workspace_and_nothing_they_must_not() {
    if !crate::common::bwrap_works() {
        return;
    }
    let run = Run::new(json!({}));
    let config_before = std::fs::read(run.root.join(".git/config")).unwrap();
    let settings_before = std::fs::read(run.root.join(".tandem/settings.json")).unwrap();
    let before_outside = Run::snapshot(&run.outside);
    let out = run.ask(WRITING_PAYLOADS, &["--permission-mode", "bypassPermissions"]);
    assert_eq!(out.results.len(), WRITING_PAYLOADS.len());
    assert_eq!(Run::snapshot(&run.outside), before_outside, "outside the workspace changed: {:?}", out.results);
    assert_eq!(std::fs::read(run.root.join(".git/config")).unwrap(), config_before);
    assert_eq!(std::fs::read(run.root.join(".tandem/settings.json")).unwrap(), settings_before);
    assert!(!run.root.join(".git/hooks/pre-commit").exists());
    // Paths that did not exist could not be created, and nothing is left behind.
    for missing in [".mcp.json", ".claude", ".vscode"] {
        assert!(!run.root.join(missing).exists(), "{missing} exists");
    }
    // `rm -rf .git` (approved) removed what it may, but not the config or hooks.
    assert!(run.root.join(".git/config").is_file() && run.root.join(".git/hooks").is_dir());
    // Writes inside the workspace did happen: the profile is not read-only.
    assert!(run.root.join("newfile.txt").exists() && run.root.join("newdir").is_dir());
    assert_ne!(std::fs::read_to_string(run.root.join("notes.txt")).unwrap(), "my unsaved thoughts\n");
    // A commit could write .git's objects and refs, which stay writable.
    let commit = &out.results[WRITING_PAYLOADS.len() - 2];
    assert!(!commit.0, "{commit:?}");
}

#[test]
fn git_config_planted_in_the_workspace_runs_nothing_outside() {
    if !crate::common::bwrap_works() {
        return;
    }
    // The workspace ships a .gitconfig whose fsmonitor writes a marker;
    // `HOME=$PWD git status` makes git read it.
    let run = Run::new(json!({"permissions": {"allow": ["run_shell"]}}));
    let marker = run.outside.join("fsmonitor-ran");
    std::fs::write(run.root.join(".gitconfig"), format!("[core]\n\tfsmonitor = \"touch {}; false\"\n", marker.display())).unwrap();
    let before = Run::snapshot(&run.root);
    run.ask(&["HOME=$PWD git status"], &[]);
    assert!(!marker.exists(), "the planted fsmonitor wrote outside the workspace");
    assert_eq!(Run::snapshot(&run.root), before);
}

#[test]
fn masked_paths_cannot_be_read_and_no_other_process_is_visible() {
    if !crate::common::bwrap_works() {
        return;
    }
    let run = Run::new(json!({"permissions": {"allow": ["run_shell"], "deny": ["read_file(./secret.txt)", "read_file(*.pem)"]}}));
    std::fs::write(run.root.join("secret.txt"), "TOP-SECRET-FILE\n").unwrap();
    std::fs::create_dir_all(run.root.join("keys")).unwrap();
    std::fs::write(run.root.join("keys/server.pem"), "TOP-SECRET-PEM\n").unwrap();
    std::os::unix::fs::symlink(run.root.join("secret.txt"), run.root.join("alias.txt")).unwrap();
    std::fs::create_dir_all(run.home.join(".ssh")).unwrap();
    std::fs::write(run.home.join(".ssh/id_rsa"), "TOP-SECRET-KEY\n").unwrap();
    // The first command names denied files: the deny rules refuse it before
    // it runs (shell reads are matched against read denies). The second
    // hides the names from that check (they are only known at run time), so
    // the sandbox's masks are what stop it.
    let commands = [
        "cat secret.txt; cat alias.txt; cat keys/*.pem; echo end",
        "n=secret; cat \"$n.txt\" alias.tx\"$u\"t keys/*.p\"$u\"em ~/.ssh/id_rsa; ls ~/.ssh; echo end",
        "cat /proc/$PPID/environ /proc/1/environ 2>&1 | tr '\\0' '\\n'; for p in /proc/[0-9]*; do cat $p/environ; done 2>/dev/null | tr '\\0' '\\n'; echo end",
        "ls /proc | grep -c '^[0-9]'",
        // Static, and naming no denied file: the deny rules let it through,
        // and the masks hide what it finds.
        "grep -r TOP-SECRET . ~/.ssh; echo end",
    ];
    let out = run.ask_with(&commands, &[], &[("MYSQL_PWD", "TOP-SECRET-ENV"), ("SECRET_KEY_BASE", "TOP-SECRET-ENV")]);
    for (_, content) in &out.results {
        assert!(!content.contains("TOP-SECRET"), "a masked secret was read: {content}");
    }
    assert!(out.results[0].0 && out.results[0].1.starts_with("Permission denied"), "the deny rules refuse it: {:?}", out.results[0]);
    for (is_error, content) in &out.results[1..] {
        assert!(!is_error, "{content}");
    }
    assert!(out.results[1].1.contains("end"), "it ran, and read nothing masked: {:?}", out.results[1]);
    // bwrap's own process, the shell, ls and grep: nothing of Tandem's.
    let processes: usize = out.results[3].1.trim().parse().unwrap();
    assert!(processes <= 5, "{processes} processes visible");
    // An approved command reads the workspace's masked files as empty too
    // (a deny is a deny), but may use ~/.ssh (git push needs it).
    let out = run.ask(&["n=secret; cat \"$n.txt\"; cat ~/.ssh/id_rsa"], &["--permission-mode", "bypassPermissions"]);
    assert!(!out.results[0].1.contains("TOP-SECRET-FILE"), "{:?}", out.results);
    assert!(out.results[0].1.contains("TOP-SECRET-KEY"), "{:?}", out.results);
}

#[test]
fn network_is_off_unless_settings_allow_it_and_the_failure_says_how() {
    if !crate::common::bwrap_works() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let run = Run::new(json!({"permissions": {"allow": ["run_shell"]}}));
    let out = run.ask(&[&connect], &["--permission-mode", "bypassPermissions"]);
    assert!(out.results[0].0, "{:?}", out.results);
    // It names the file that can allow it: the user's, not the project's.
    let text = &out.results[0].1;
    assert!(text.contains("The sandbox has no network") && text.contains("\"network\": true") && text.contains("~/.tandem/settings.json"), "{text}");
    // A project's file cannot switch it on...
    std::fs::write(run.root.join(".tandem/settings.json"), json!({"sandbox": {"network": true}}).to_string()).unwrap();
    let out = run.ask(&[&connect], &["--permission-mode", "bypassPermissions"]);
    assert!(out.results[0].0, "{:?}", out.results);
    // ...the user's settings can, for approved commands only.
    run.user_settings(json!({"sandbox": {"network": true}, "permissions": {"allow": ["run_shell"]}}));
    let out = run.ask(&[&connect], &["--permission-mode", "bypassPermissions"]);
    assert_eq!(out.results[0], (false, "connected".to_string()));
    let out = run.ask(&[&connect], &[]);
    assert!(out.results[0].0, "an unasked command reached the network: {:?}", out.results);
    // Its failure says why, and what would let it through.
    let text = &out.results[0].1;
    assert!(text.contains("in a sandbox without network") && text.contains("must be approved") && text.contains("\"network\": true"), "{text}");
}

#[test]
fn the_timeout_stops_the_whole_tree_inside_the_sandbox() {
    if !crate::common::bwrap_works() {
        return;
    }
    let run = Run::new(json!({}));
    let marker = format!("{}.{}", 900 + std::process::id() % 90, std::process::id());
    // A child, a grandchild in its own session, and a trap that ignores SIGTERM.
    let command = format!("trap '' TERM; sleep {marker} & setsid sleep {marker} & sleep {marker}");
    let mut turns = vec![json!({"tool_calls": [{"name": "run_shell", "input": {"command": command, "timeout": 800}}]})];
    turns.push(json!({"text": "Done."}));
    let script = run.home.join("script.json");
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .current_dir(&run.root)
        .env("HOME", &run.home)
        .env("XDG_DATA_HOME", run.home.join("data"))
        .env("TANDEM_PROVIDER", "scripted")
        .env("TANDEM_SCRIPT", &script)
        .args(["ask", "--json", "--permission-mode", "bypassPermissions", "go"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("Command timed out after 800 ms"));
    // The kernel tears the pid namespace down as its first process dies:
    // wait for that, with a deadline.
    common::wait_until("no process of the command is left", || common::processes_running(&format!("sleep {marker}")).is_empty());
}

#[test]
fn no_sandbox_is_said_in_the_first_event() {
    if !crate::common::bwrap_works() {
        return;
    }
    // Switched off by the user.
    let run = Run::new(json!({"permissions": {"allow": ["run_shell"]}}));
    run.user_settings(json!({"sandbox": {"enabled": false}}));
    let out = run.ask(&["touch made.txt"], &[]);
    assert_eq!(out.events[0]["type"], "sandbox", "{:?}", out.events[0]);
    assert!(out.events[0]["message"].as_str().unwrap().contains("\"enabled\": false"));
    assert!(run.root.join("made.txt").exists(), "without the sandbox the allowed command writes");

    // A project's settings cannot switch it off.
    let run = Run::new(json!({"permissions": {"allow": ["run_shell"]}, "sandbox": {"enabled": false}}));
    let out = run.ask(&["touch made.txt"], &[]);
    assert_ne!(out.events[0]["type"], "sandbox");
    assert!(!run.root.join("made.txt").exists());

    // bwrap missing from PATH: said in plain words, with how to install it.
    let bin = run.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["bash", "sh", "touch", "cat"] {
        let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap();
        let path = String::from_utf8_lossy(&found.stdout).trim().to_string();
        std::os::unix::fs::symlink(path, bin.join(tool)).unwrap();
    }
    let out = run.ask_with(&["touch other.txt"], &[], &[("PATH", bin.to_str().unwrap())]);
    let first = out.events[0]["message"].as_str().unwrap_or_default();
    assert!(first.contains("bubblewrap (bwrap) is not installed") && first.contains("apt-get install bubblewrap"), "{:?}", out.events[0]);

    // The judgement is then all that stands: in the default mode what is
    // not judged read-only is asked (refused here: nobody can answer), not
    // run unconfined, and a plain read still runs.
    let plain = Run::new(json!({}));
    let out = plain.ask_with(&["touch made.txt", "cat notes.txt"], &[], &[("PATH", bin.to_str().unwrap())]);
    let first = out.events[0]["message"].as_str().unwrap_or_default();
    assert!(first.contains("only commands judged read-only run without a question"), "{:?}", out.events[0]);
    assert!(out.results[0].0 && out.results[0].1.contains("needs permission"), "{:?}", out.results);
    assert!(!plain.root.join("made.txt").exists());
    assert_eq!(out.results[1], (false, "my unsaved thoughts".to_string()));

    // `tandem doctor` says the same, and fails; with bwrap it names it.
    let doctor = |path: Option<&Path>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.arg("doctor").current_dir(&run.root).env("HOME", &run.home);
        if let Some(path) = path {
            command.env("PATH", path);
        }
        command.output().unwrap()
    };
    let missing = doctor(Some(&bin));
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stdout).contains("sandbox: WARNING: no sandbox: bubblewrap (bwrap) is not installed"));
    let found = doctor(None);
    assert!(found.status.success(), "{}", String::from_utf8_lossy(&found.stdout));
    assert!(String::from_utf8_lossy(&found.stdout).contains("shell commands run in a sandbox (bubblewrap"));

    // `tandem doctor --json` (what :checkhealth tandem reads): the same
    // three states, with the same exit codes.
    let doctor_json = |path: Option<&Path>, home: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.args(["doctor", "--json"]).current_dir(&run.root).env("HOME", home);
        if let Some(path) = path {
            command.env("PATH", path);
        }
        let output = command.output().unwrap();
        let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
        (output.status.code(), report)
    };
    let (code, report) = doctor_json(None, &run.home);
    assert_eq!((code, report["sandbox"]["state"].as_str()), (Some(0), Some("ready")), "{report}");
    assert!(report["sandbox"]["description"].as_str().unwrap().starts_with("shell commands run in a sandbox (bubblewrap"), "{report}");
    assert_eq!(report["workspace"].as_str(), run.root.to_str());
    let (code, report) = doctor_json(Some(&bin), &run.home);
    assert_eq!((code, report["sandbox"]["state"].as_str()), (Some(1), Some("unavailable")), "{report}");
    assert!(report["sandbox"]["notice"].as_str().unwrap().contains("apt-get install bubblewrap"), "{report}");
    let off = run.home.join("off");
    std::fs::create_dir_all(off.join(".tandem")).unwrap();
    std::fs::write(off.join(".tandem/settings.json"), json!({"sandbox": {"enabled": false}}).to_string()).unwrap();
    let (code, report) = doctor_json(None, &off);
    assert_eq!((code, report["sandbox"]["state"].as_str()), (Some(0), Some("disabled")), "{report}");
    assert!(report["sandbox"]["notice"].as_str().unwrap().contains("\"enabled\": false"), "{report}");
}

/// A symlink race between the check and the run: `echo … > notes.txt` is
/// judged (a write inside the workspace) and asked about in the editor;
/// while the question is open, `notes.txt` becomes a link to a file outside
/// the workspace; then the user allows it. The sandbox binds only the
/// workspace writable, so the write through the link fails and the file
/// outside keeps its content. Without the sandbox the same race writes it
/// (the race is real, and the sandbox is what stops it).
#[test]
fn a_file_swapped_for_a_link_to_outside_after_the_check_is_not_written_through_it() {
    if !crate::common::bwrap_works() {
        return;
    }
    let race = |sandbox: bool| -> (String, String) {
        let f = lsp_client::Fixture::new(&[("notes.txt", "my notes\n")]);
        let base = f.root.parent().unwrap().to_path_buf();
        // Outside the workspace and outside the temp folders (approved
        // commands may write /tmp): beside the build, like a user's files.
        let outside_dir = outside_dir();
        let (outside, home) = (outside_dir.path().to_path_buf(), base.join("home"));
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(home.join(".tandem")).unwrap();
        std::fs::write(outside.join("precious.txt"), "keep me\n").unwrap();
        std::fs::write(home.join(".tandem/settings.json"), json!({"sandbox": {"enabled": sandbox}}).to_string()).unwrap();
        let turns = json!([{"text": "", "tool_calls": [shell("echo clobbered > notes.txt")]}, {"text": "Done."}]);
        let home_var = home.to_string_lossy().to_string();
        let mut client = f.start_with_env(turns, json!({}), json!({}), &[("HOME", &home_var)]);
        let id = client.send_request("workspace/executeCommand", lsp_client::ask_params("write the notes"));
        let prompt = client.server_request("window/showMessageRequest");
        let message = prompt["params"]["message"].as_str().unwrap().to_string();
        assert!(message.contains("echo clobbered > notes.txt"), "{message}");
        // The swap, while the user is asked.
        std::fs::remove_file(f.path("notes.txt")).unwrap();
        std::os::unix::fs::symlink(outside.join("precious.txt"), f.path("notes.txt")).unwrap();
        client.respond(&prompt["id"], json!({"title": "Allow once"}));
        let answer = client.response(id);
        assert_eq!(answer["result"]["status"], "completed", "{answer}");
        let result = client.tool_results().first().map(|(_, text)| text.clone()).unwrap_or_default();
        let precious = std::fs::read_to_string(outside.join("precious.txt")).unwrap();
        client.shutdown();
        (precious, result)
    };
    let (precious, result) = race(true);
    assert_eq!(precious, "keep me\n", "written through the link swapped in after the check: {result}");
    assert!(result.contains("Read-only file system"), "{result}");
    let (precious, _) = race(false);
    assert_eq!(precious, "clobbered\n", "without the sandbox the race should win (else this test shows nothing)");
}

/// A `run_shell` call that asks for the network (`network: true`) is asked
/// about in the editor, the question says so, and the user's "Allow once"
/// lets that one command reach the network: here a listener on the host's
/// loopback, which a command in its own network namespace cannot see. The
/// settings allow no network, so without the answer nothing gets through
/// (the approved profile's test above shows that).
#[test]
fn the_users_answer_to_a_call_that_asks_for_the_network_opens_it_for_that_command() {
    if !crate::common::bwrap_works() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3 && echo connected");
    let f = lsp_client::Fixture::new(&[("notes.txt", "my notes\n")]);
    let home = f.root.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".tandem")).unwrap();
    std::fs::write(home.join(".tandem/settings.json"), json!({"sandbox": {"enabled": true, "network": false}}).to_string()).unwrap();
    let call = json!({"name": "run_shell", "input": {"command": connect, "network": true}});
    let turns = json!([{"text": "", "tool_calls": [call]}, {"text": "Done."}]);
    let home_var = home.to_string_lossy().to_string();
    let mut client = f.start_with_env(turns, json!({}), json!({}), &[("HOME", &home_var)]);
    let id = client.send_request("workspace/executeCommand", lsp_client::ask_params("install the packages"));
    let prompt = client.server_request("window/showMessageRequest");
    let message = prompt["params"]["message"].as_str().unwrap().to_string();
    assert!(message.contains(&connect) && message.contains("It asks for the network"), "{message}");
    let offered: Vec<&str> = prompt["params"]["actions"].as_array().unwrap().iter().filter_map(|a| a["title"].as_str()).collect();
    assert!(!offered.iter().any(|title| title.starts_with("Always")), "the network is one answer's, never a rule's: {offered:?}");
    client.respond(&prompt["id"], json!({"title": "Allow once"}));
    let answer = client.response(id);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let result = client.tool_results().first().map(|(_, text)| text.clone()).unwrap_or_default();
    client.shutdown();
    assert!(result.contains("connected"), "{result}");
    // The effect: the listener on the host was reached.
    let (mut stream, _) = listener.accept().expect("the command connected to the host's loopback");
    stream.set_nonblocking(false).unwrap();
    let mut got = String::new();
    std::io::Read::read_to_string(&mut stream, &mut got).unwrap();
    assert_eq!(got, "hello\n");
}

/// `sandbox.allowWrite` in the user's settings opens folders to approved
/// commands — outside the workspace, or a protected one inside it — and
/// never to unasked ones; what it does not name stays read-only.
#[test]
fn allow_write_opens_folders_to_approved_commands_only() {
    if !crate::common::bwrap_works() {
        return;
    }
    let run = Run::new(json!({"permissions": {"allow": ["run_shell"]}}));
    let cache = run.outside.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::create_dir_all(run.root.join(".vscode")).unwrap();
    run.user_settings(json!({"sandbox": {"allowWrite": [cache, run.root.join(".vscode")]}}));
    let settings_before = std::fs::read(run.root.join(".tandem/settings.json")).unwrap();
    let commands = [
        "echo cached > \"$OUTSIDE/cache/entry.txt\"",
        "echo '{}' > .vscode/settings.json",
        "echo clobbered > \"$OUTSIDE/precious.txt\"",
        "echo x >> .tandem/settings.json",
    ];
    // Unasked (a rule lets them through in the default mode): none of it.
    let out = run.ask(&commands, &[]);
    assert!(!cache.join("entry.txt").exists() && !run.root.join(".vscode/settings.json").exists(), "{:?}", out.results);
    // Approved: what allowWrite names, and nothing else.
    let out = run.ask(&commands, &["--permission-mode", "bypassPermissions"]);
    assert_eq!(std::fs::read_to_string(cache.join("entry.txt")).unwrap_or_default(), "cached\n", "{:?}", out.results);
    assert_eq!(std::fs::read_to_string(run.root.join(".vscode/settings.json")).unwrap_or_default(), "{}\n", "{:?}", out.results);
    assert_eq!(std::fs::read_to_string(run.outside.join("precious.txt")).unwrap(), "keep me\n");
    assert_eq!(std::fs::read(run.root.join(".tandem/settings.json")).unwrap(), settings_before);
    assert!(out.results[2].0 && out.results[3].0, "{:?}", out.results);
}

/// Services that act outside the sandbox on a command's behalf listen on
/// sockets in the user's runtime folder: the session bus (through it
/// `systemd-run --user` starts any program unconfined), the keyring, the
/// gpg and ssh agents. An unasked command neither sees nor reaches them;
/// an approved one does (`git push` may need the ssh agent).
#[test]
fn unasked_commands_cannot_reach_the_services_of_the_runtime_folder() {
    if !crate::common::bwrap_works() {
        return;
    }
    let run = Run::new(json!({"permissions": {"allow": ["run_shell"]}}));
    // Outside /tmp: unasked commands have a /tmp of their own anyway.
    let runtime = run.outside.join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(runtime.join("bus")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let connect = "ls -A \"$XDG_RUNTIME_DIR\"; python3 -c 'import os, socket; s = socket.socket(socket.AF_UNIX); s.connect(os.environ[\"XDG_RUNTIME_DIR\"] + \"/bus\"); print(\"connected\")'";
    let env = [("XDG_RUNTIME_DIR", runtime.to_str().unwrap())];
    let out = run.ask_with(&[connect], &[], &env);
    assert!(!out.results[0].1.contains("bus") && !out.results[0].1.contains("connected"), "{:?}", out.results);
    assert!(listener.accept().is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock), "an unasked command connected");
    let out = run.ask_with(&[connect], &["--permission-mode", "bypassPermissions"], &env);
    assert!(!out.results[0].0 && out.results[0].1.starts_with("bus\nconnected"), "{:?}", out.results);
    assert!(listener.accept().is_ok());
}

/// A command's children, one in a session of its own too, end with it:
/// they live in the command's pid namespace. (Without the sandbox a
/// background process the command started keeps running.)
#[test]
fn a_sandboxed_commands_children_end_with_it() {
    if !crate::common::bwrap_works() {
        return;
    }
    let run = Run::new(json!({}));
    let marker = format!("{}.{}", 800 + std::process::id() % 90, std::process::id());
    let command = format!("setsid sleep {marker} > /dev/null 2>&1 < /dev/null & sleep {marker} > /dev/null 2>&1 & echo started");
    let out = run.ask(&[&command], &["--permission-mode", "bypassPermissions"]);
    assert_eq!(out.results[0], (false, "started".to_string()));
    common::wait_until("no child of the command is left", || common::processes_running(&format!("sleep {marker}")).is_empty());
}

/// In the editor, a run whose commands have no sandbox says so in a
/// message, once per run; the editor's own settings can switch it off.
#[test]
fn the_editor_is_told_when_commands_run_without_a_sandbox() {
    let f = lsp_client::Fixture::new(&[("notes.txt", "my notes\n")]);
    let home = f.root.parent().unwrap().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let turns = json!([
        {"text": "", "tool_calls": [shell("cat notes.txt")]}, {"text": "Done."},
        {"text": "", "tool_calls": [shell("cat notes.txt")]}, {"text": "Done."},
    ]);
    let home_var = home.to_string_lossy().to_string();
    let options = json!({"tandem": {"sandbox": {"enabled": false}}});
    let mut client = f.start_with_env(turns, json!({}), options, &[("HOME", &home_var)]);
    for _ in 0..2 {
        let id = client.send_request("workspace/executeCommand", lsp_client::ask_params("read the notes"));
        let shown = client.wait_for("the sandbox message", |m| m["method"] == "window/showMessage");
        let message = shown["params"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("without a sandbox") && message.contains("\"enabled\": false"), "{message}");
        assert_eq!(client.response(id)["result"]["text"], "Done.");
    }
    client.shutdown();
}

/// A workspace on a read-only file system (here a read-only bind mount, made
/// by a bubblewrap around `tandem ask`): approved commands run, reading
/// works and writing fails as it would anywhere, though the protected
/// paths the workspace lacks (`.mcp.json`, `.claude/`, `.vscode/`) cannot
/// be made mount points there.
#[test]
fn a_workspace_on_a_read_only_file_system_still_runs_commands() {
    if !crate::common::bwrap_works() {
        return;
    }
    let run = Run::new(json!({}));
    let root = run.root.as_os_str();
    let wrap: Vec<&std::ffi::OsStr> = ["bwrap", "--dev-bind", "/", "/", "--ro-bind"].iter().map(std::ffi::OsStr::new).chain([root, root]).collect();
    let out = run.ask_wrapped(&wrap, &["cat notes.txt", "echo x > made.txt"], &["--permission-mode", "bypassPermissions"], &[]);
    assert_eq!(out.results[0], (false, "my unsaved thoughts".to_string()));
    assert!(out.results[1].0 && out.results[1].1.contains("Read-only file system"), "{:?}", out.results);
    assert!(!run.root.join("made.txt").exists() && !run.root.join(".mcp.json").exists());
}

/// Run by root (as in CI and many containers), bubblewrap keeps every
/// capability unless told otherwise: a command could remount `/` writable
/// and write anywhere. Commands of both profiles run with none.
#[test]
fn commands_have_no_capabilities_to_undo_the_sandbox() {
    if !crate::common::bwrap_works() {
        return;
    }
    let run = Run::new(json!({"permissions": {"allow": ["run_shell"]}}));
    let escape = "grep CapEff /proc/self/status; mount -o remount,rw / 2>/dev/null; mount -o remount,rw \"$OUTSIDE\" 2>/dev/null; touch made.txt; echo escaped > \"$OUTSIDE/precious.txt\"";
    let out = run.ask(&[escape], &[]);
    assert!(out.results[0].1.contains("CapEff:\t0000000000000000"), "{:?}", out.results);
    assert!(!run.root.join("made.txt").exists(), "an unasked command wrote the workspace: {:?}", out.results);
    let out = run.ask(&[escape], &["--permission-mode", "bypassPermissions"]);
    assert!(out.results[0].1.contains("CapEff:\t0000000000000000"), "{:?}", out.results);
    assert_eq!(std::fs::read_to_string(run.outside.join("precious.txt")).unwrap(), "keep me\n", "{:?}", out.results);
}

/// A program that makes each call the seccomp filter denies (issue 57) and
/// prints its answer: `NAME ok` or `NAME ERRNO`. Arguments are harmless
/// (a keyring id query, a zero-sized perf or io_uring setup), so outside
/// the sandbox each call gets the kernel's own answer.
const SECCOMP_PROBE: &str = r#"
import ctypes, errno, os, platform, socket
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": dict(ptrace=101, keyctl=250, add_key=248, request_key=249, perf_event_open=298, bpf=321, io_uring_setup=425, unshare=272, process_vm_readv=310, getpid=39),
      "aarch64": dict(ptrace=117, keyctl=219, add_key=217, request_key=218, perf_event_open=241, bpf=280, io_uring_setup=425, unshare=97, process_vm_readv=270, getpid=172)}[platform.machine()]
def call(name, *args):
    result = libc.syscall(NR[name.split(":")[0]], *[ctypes.c_long(a) for a in args])
    err = ctypes.get_errno()
    print(name, "ok" if result >= 0 else errno.errorcode.get(err, err), flush=True)
text = lambda b: ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p).value
call("getpid")
call("keyctl", 0, -3)
call("add_key", text(b"user"), text(b"tandem"), text(b"x"), 1, -3)
call("request_key", text(b"user"), text(b"tandem"), 0, 0)
call("perf_event_open", 0, 0, -1, -1, 0)
call("bpf", 0, 0, 0)
call("io_uring_setup", 1, 0)
call("unshare", 0x10000000)
# Another process: a child of its own (the only kind its pid namespace shows).
child = os.fork()
if child == 0:
    import time; time.sleep(5); os._exit(0)
call("ptrace:attach", 16, child, 0, 0)
buf = ctypes.create_string_buffer(8)
local = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 8)
remote = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 8)
call("process_vm_readv", child, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0)
os.kill(child, 9)
# An abstract unix socket the machine listens on (its name in abstract.txt).
try:
    s = socket.socket(socket.AF_UNIX); s.connect("\0" + open("abstract.txt").read()); print("abstract ok")
except OSError as err:
    print("abstract", errno.errorcode.get(err.errno, err.errno))
"#;

#[test]
fn seccomp_denies_keyrings_ptrace_perf_bpf_io_uring_and_new_user_namespaces_by_effect() {
    if !common::bwrap_works() {
        return;
    }
    let run = Run::new(json!({}));
    std::fs::write(run.root.join("probe.py"), SECCOMP_PROBE).unwrap();
    // An abstract socket outside: in another network namespace, so out of
    // reach of a command without network.
    let name = format!("tandem-seccomp-test-{}", std::process::id());
    let addr = <std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(name.as_bytes()).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    std::fs::write(run.root.join("abstract.txt"), &name).unwrap();
    let parse = |text: &str| -> std::collections::BTreeMap<String, String> {
        text.lines().filter_map(|l| l.split_once(' ')).map(|(a, b)| (a.to_string(), b.trim().to_string())).collect()
    };
    let outside = Command::new("python3").arg("probe.py").current_dir(&run.root).output().unwrap();
    let outside = parse(&String::from_utf8_lossy(&outside.stdout));
    assert_eq!(outside.get("getpid").map(String::as_str), Some("ok"), "{outside:?}");
    assert_eq!(outside.get("abstract").map(String::as_str), Some("ok"), "{outside:?}");
    let denied = ["keyctl", "add_key", "request_key", "perf_event_open", "bpf", "io_uring_setup", "unshare", "ptrace:attach", "process_vm_readv"];
    // Each profile: approved (bypassPermissions), contained (acceptEdits).
    for mode in ["bypassPermissions", "acceptEdits"] {
        let out = run.ask(&["python3 probe.py"], &["--permission-mode", mode]);
        let text = &out.results[0].1;
        let inside = parse(text);
        assert_eq!(inside.get("getpid").map(String::as_str), Some("ok"), "{mode}: {text}");
        for call in denied {
            assert_eq!(inside.get(call).map(String::as_str), Some("EPERM"), "{mode}: {call}: {text}");
            // The filter made the difference where the machine allows it.
            if outside.get(call).map(String::as_str) != Some("EPERM") {
                assert_ne!(inside.get(call), outside.get(call), "{call}");
            }
        }
        // Abstract sockets belong to the network namespace: the machine's
        // are out of reach of a command without network.
        assert_ne!(inside.get("abstract").map(String::as_str), Some("ok"), "{mode}: {text}");
    }
}
