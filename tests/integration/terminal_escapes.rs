//! What Tandem shows in a real terminal is what runs, and nothing the model
//! or a command writes drives the terminal (issue 49): tmux runs `tandem
//! ask`, the test reads the screen and checks what happened on disk and in
//! tmux's clipboard.
//!
//! - A command that erases its own question line (`ESC [2K`, a carriage
//!   return, then `ls -la`) is shown with its escapes visible, in the
//!   question, the reason and the "Always allow" rule, so the `rm` the
//!   user approves is the `rm` on the screen; so is a row of an edit's
//!   diff that would redraw itself as the unchanged line, and a project
//!   hook whose command would read as a harmless `echo` in its consent
//!   question.
//! - An OSC 52 sequence (set the clipboard) in the model's answer, in a
//!   file's first line shown by `cat`, and in a commit subject shown by
//!   `git log --oneline` is shown, not obeyed: tmux, told to accept OSC 52
//!   from applications (`set-clipboard on`), gets no buffer.
//!
//! Needs tmux; `.ci/run` sets `TANDEM_REQUIRE_TMUX=1`, so CI fails rather
//! than skips when it is missing.

#![allow(clippy::unwrap_used)]

use crate::common::tmux::Tmux;
use crate::common::tools::which;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn tmux_or_skip(test: &str) -> Option<PathBuf> {
    let found = which("tmux");
    if found.is_none() {
        crate::common::tools::skip(test, "TANDEM_REQUIRE_TMUX", "tmux is not installed");
    }
    found
}

/// Everything the pane printed, scrolled-off lines included.
fn history(tmux: &Tmux) -> String {
    String::from_utf8_lossy(&tmux.run(&["capture-pane", "-p", "-S", "-"]).stdout).to_string()
}

/// `tandem ask PROMPT --permission-mode MODE` in tmux, in `workspace`,
/// replaying `script`; it starts only once tmux accepts OSC 52 from
/// applications (`set-clipboard on`), so a sequence that reaches the
/// terminal would set tmux's buffer.
struct Ask {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    tmux: Tmux,
    deadline: Instant,
}

fn start_ask(tmux_bin: &Path, name: &str, mode: &str, colour: bool, script: serde_json::Value, prepare: impl FnOnce(&Path)) -> Ask {
    start_ask_with(tmux_bin, name, &format!("--permission-mode {mode}"), colour, script, prepare)
}

/// [`start_ask`] with `options` (`--permission-mode MODE`, `--trust`…).
fn start_ask_with(tmux_bin: &Path, name: &str, options: &str, colour: bool, script: serde_json::Value, prepare: impl FnOnce(&Path)) -> Ask {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let workspace = root.join("work");
    std::fs::create_dir_all(&workspace).unwrap();
    prepare(&workspace);
    let script_path = root.join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let go = root.join("go");
    let tmux = Tmux::new(tmux_bin, format!("tandem-{name}-{}", std::process::id()));
    let mut env = vec![
        ("TANDEM_PROVIDER", "scripted".to_string()),
        ("TANDEM_SCRIPT", script_path.display().to_string()),
        ("XDG_DATA_HOME", root.join("data").display().to_string()),
        ("HOME", root.display().to_string()),
        ("PAGER", "cat".to_string()),
    ];
    if !colour {
        env.push(("NO_COLOR", "1".to_string()));
    }
    let command = format!(
        "while [ ! -e {go} ]; do sleep 0.05; done; {tandem} ask {options} 'do the task'; echo ASK-EXITED-$?; sleep 60",
        go = go.display(),
        tandem = env!("CARGO_BIN_EXE_tandem"),
    );
    tmux.start(160, 50, &workspace, &env, &command);
    let set = tmux.run(&["set-option", "-g", "set-clipboard", "on"]);
    assert!(set.status.success(), "tmux set-clipboard: {}", String::from_utf8_lossy(&set.stderr));
    std::fs::write(&go, "").unwrap();
    // Generous: a loaded machine runs the debug binary slowly.
    Ask { _dir: dir, workspace, tmux, deadline: Instant::now() + Duration::from_secs(180) }
}

/// What tmux's clipboard holds: `None` when nothing set it.
fn clipboard(tmux: &Tmux) -> Option<String> {
    let shown = tmux.run(&["show-buffer"]);
    shown.status.success().then(|| String::from_utf8_lossy(&shown.stdout).to_string())
}

#[test]
fn an_edit_or_a_command_cannot_hide_itself_in_its_question() {
    let Some(tmux_bin) = tmux_or_skip("an_edit_or_a_command_cannot_hide_itself_in_its_question") else { return };
    // On a raw terminal the diff's added row would be erased and redrawn
    // as the unchanged line, and the command's line would read `ls -la'`
    // only: the escape erases what came before it, the carriage return
    // starts the line again.
    let new_line = "debug = True\x1b[2K\r   1 - debug = False";
    let command = "rm victim.txt '\x1b[2K\rls -la'";
    let script = serde_json::json!({"turns": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "config.py"}}]},
        {"text": "Tidying.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "config.py", "old_string": "debug = False", "new_string": new_line}}]},
        {"text": "Listing.", "tool_calls": [{"name": "run_shell", "input": {"command": command}}]},
        {"text": "Listed."}
    ]});
    let ask = start_ask(&tmux_bin, "escape-question", "default", false, script, |workspace| {
        std::fs::write(workspace.join("victim.txt"), "keep me\n").unwrap();
        std::fs::write(workspace.join("config.py"), "debug = False\n").unwrap();
    });
    let (tmux, deadline) = (&ask.tmux, ask.deadline);

    let review = tmux.wait_for("the edit's review", deadline, |s| s.contains("n (Reject)"));
    // The escape is visible; the carriage return splits the row (the diff
    // counts it as a line end), so the fake row is marked as added.
    assert!(review.contains(r"1 + debug = True\x1b[2K"), "the added row shows whole, escapes visible:\n{review}");
    assert!(review.contains("2 +    1 - debug = False"), "the redrawn row shows as the added line it is:\n{review}");
    // Applied as reviewed: the file holds what the row showed.
    tmux.keys(&["y", "Enter"]);
    let asked = tmux.wait_for("the shell command's question", deadline, |s| s.contains("n (Deny)"));
    assert_eq!(std::fs::read_to_string(ask.workspace.join("config.py")).unwrap(), format!("{new_line}\n"));
    let visible = r"rm victim.txt '\x1b[2K\rls -la'";
    // The question, and the rule "Always allow" would add, both name the rm.
    assert!(asked.matches(visible).count() >= 2, "the question shows the whole command, escapes visible:\n{asked}");
    assert!(!asked.lines().any(|l| l.trim() == "ls -la'"), "no line reads as the harmless command:\n{asked}");
    // The user approves what they see — an rm — and that is what runs.
    tmux.keys(&["y", "Enter"]);
    let ended = tmux.wait_for("the run's end", deadline, |s| s.contains("ASK-EXITED-"));
    assert!(ended.contains("ASK-EXITED-0"), "{ended}");
    assert!(!ask.workspace.join("victim.txt").exists(), "the approved rm ran");
}

#[test]
fn nothing_the_model_or_a_command_prints_sets_the_clipboard() {
    let Some(tmux_bin) = tmux_or_skip("nothing_the_model_or_a_command_prints_sets_the_clipboard") else { return };
    let git = which("git").expect("git");
    // OSC 52 ; c ; base64 — BEL-terminated in the answer and the file,
    // ST-terminated in the commit subject; and its one-character C1 form.
    let osc = |text: &str, end: &str| format!("\x1b]52;c;{}{end}", base64_of(text));
    let answer = format!("All read.{} And \u{9d}52;c;{}\u{9c} done.", osc("from the answer", "\x07"), base64_of("c1"));
    let script = serde_json::json!({"turns": [
        {"text": format!("Reading.{}", osc("from the first text", "\x07")), "tool_calls": [{"name": "run_shell", "input": {"command": "cat notes.txt"}}]},
        {"text": "Checking history.", "tool_calls": [{"name": "run_shell", "input": {"command": "git log --oneline"}}]},
        {"text": answer}
    ]});
    let subject = format!("fix: tidy{}", osc("from git log", "\x1b\\"));
    let ask = start_ask(&tmux_bin, "escape-clipboard", "bypassPermissions", true, script, |workspace| {
        std::fs::write(workspace.join("notes.txt"), format!("# Notes{}\nsecond line\n", osc("from cat", "\x07"))).unwrap();
        let git = |args: &[&str]| {
            let done = std::process::Command::new(&git)
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
                .args(args)
                .current_dir(workspace)
                .output()
                .unwrap();
            assert!(done.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&done.stderr));
        };
        git(&["init", "-q"]);
        git(&["add", "notes.txt"]);
        git(&["commit", "-q", "-m", &subject]);
    });
    let tmux = &ask.tmux;
    let ended = tmux.wait_for("the run's end", ask.deadline, |s| s.contains("ASK-EXITED-"));
    let shown = history(tmux);
    assert_eq!(clipboard(tmux), None, "nothing set tmux's clipboard; the terminal showed:\n{shown}");
    assert!(ended.contains("ASK-EXITED-0"), "{shown}");
    // Each sequence is on the screen as text instead.
    for (what, payload) in [("the answer", "from the answer"), ("cat's output", "from cat"), ("git log's output", "from git log"), ("the first text", "from the first text")] {
        let visible = format!(r"\x1b]52;c;{}", base64_of(payload));
        assert!(shown.contains(&visible), "{what}: its OSC 52 is shown as {visible}:\n{shown}");
    }
    assert!(shown.contains(&format!(r"\u{{9d}}52;c;{}\u{{9c}}", base64_of("c1"))), "the C1 form is shown too:\n{shown}");
}

#[test]
fn a_hooks_command_cannot_hide_itself_in_its_consent_question() {
    let Some(tmux_bin) = tmux_or_skip("a_hooks_command_cannot_hide_itself_in_its_consent_question") else { return };
    // A project hook whose command would erase itself and read as a
    // harmless echo in the question that asks to run it.
    let settings = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "touch hooked.txt\r\x1b[2Kecho harmless"}
    ]}]}});
    let script = serde_json::json!({"turns": [{"text": "Hello."}]});
    let ask = start_ask_with(&tmux_bin, "escape-hook", "--trust", false, script, |workspace| {
        std::fs::create_dir_all(workspace.join(".tandem")).unwrap();
        std::fs::write(workspace.join(".tandem/settings.json"), settings.to_string()).unwrap();
    });
    let (tmux, deadline) = (&ask.tmux, ask.deadline);
    let asked = tmux.wait_for("the hooks' consent question", deadline, |s| s.contains("n (Not now)"));
    assert!(asked.contains(r"- PreToolUse: touch hooked.txt\r\x1b[2Kecho harmless"), "the hook's whole command, escapes visible:\n{asked}");
    assert!(!asked.lines().any(|l| l.trim() == "echo harmless"), "no line reads as the harmless command:\n{asked}");
    tmux.keys(&["n", "Enter"]);
    let ended = tmux.wait_for("the run's end", deadline, |s| s.contains("ASK-EXITED-"));
    assert!(ended.contains("ASK-EXITED-0"), "{ended}");
}

/// Standard base64, padded (the OSC 52 payload).
fn base64_of(text: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = text.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
