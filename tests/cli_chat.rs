//! `tandem chat` in a real terminal: tmux runs it, the test types as a user
//! would and reads the screen. Messages continue one thread, an applied
//! edit shows its diff, `y`/`n` answer the questions, a refusal shows
//! whole, a long tool call shows its elapsed time, and Ctrl-C cancels the
//! running answer but not the session, and /undo and /redo take a run's
//! edit back and put it back.
//!
//! Needs tmux; `.ci/run` installs it and sets `TANDEM_REQUIRE_TMUX=1`, so
//! CI fails rather than skips when it is missing.

#[path = "common/tmux.rs"]
mod tmux;

use std::time::{Duration, Instant};

use tmux::{which, Tmux};

fn tmux_or_skip(test: &str) -> Option<std::path::PathBuf> {
    let found = which("tmux");
    if found.is_none() {
        assert!(std::env::var_os("TANDEM_REQUIRE_TMUX").is_none(), "TANDEM_REQUIRE_TMUX is set but tmux is not on PATH");
        eprintln!("SKIPPED {test}: tmux is not installed");
    }
    found
}

/// Everything the pane printed, scrolled-off lines included.
fn history(tmux: &Tmux) -> String {
    String::from_utf8_lossy(&tmux.run(&["capture-pane", "-p", "-S", "-"]).stdout).to_string()
}

fn wait_history(tmux: &Tmux, what: &str, deadline: Instant, done: impl Fn(&str) -> bool) -> String {
    loop {
        let text = history(tmux);
        if done(&text) {
            return text;
        }
        assert!(Instant::now() < deadline, "waited in vain for {what}; the terminal shows:\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The thread ids the run summaries name (`── completed · … · thread ID`).
fn threads(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.rsplit_once(" · thread ").map(|(_, id)| id.trim().to_string())).collect()
}

#[test]
fn chat_continues_one_thread_and_ctrl_c_cancels_only_the_answer() {
    let Some(tmux_bin) = tmux_or_skip("chat_continues_one_thread_and_ctrl_c_cancels_only_the_answer") else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical");
    let workspace = root.join("work");
    std::fs::create_dir_all(workspace.join(".git")).expect("workspace");
    std::fs::write(workspace.join("notes.txt"), "line one\nline two\nline three\n").expect("notes");
    // Each message is a run that replays the script from its first turn:
    // the first capitalises line three (the edit is reviewed: y), is denied
    // the shell command (n); the second finds nothing left to edit and runs
    // the command (y), which the user interrupts.
    let script = serde_json::json!({"turns": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
        {"text": "Editing.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "line three", "new_string": "LINE THREE"}}]},
        {"text": "Checking.", "tool_calls": [{"name": "run_shell", "input": {"command": "sleep 30 && touch slept.txt"}}]},
        {"text": "All done."}
    ]});
    let script_path = root.join("script.json");
    std::fs::write(&script_path, script.to_string()).expect("script");
    let tmux = Tmux::new(&tmux_bin, format!("tandem-chat-{}", std::process::id()));
    let env = [
        ("TANDEM_PROVIDER", "scripted".to_string()),
        ("TANDEM_SCRIPT", script_path.display().to_string()),
        ("XDG_DATA_HOME", root.join("data").display().to_string()),
        ("HOME", root.display().to_string()),
        ("NO_COLOR", "1".to_string()),
    ];
    let command = format!("{} chat --permission-mode default; echo CHAT-EXITED-$?; sleep 60", env!("CARGO_BIN_EXE_tandem"));
    tmux.start(160, 50, &workspace, &env, &command);
    // Generous: a loaded machine runs the debug binary slowly.
    let deadline = Instant::now() + Duration::from_secs(180);
    tmux.wait_for("the chat's greeting", deadline, |s| s.contains("Tandem chat in") && s.contains("›"));

    tmux.type_text("Capitalise line three");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the edit's review", deadline, |s| s.contains("y (Apply), n (Reject)"));
    tmux.type_text("maybe");
    tmux.keys(&["Enter"]);
    tmux.wait_for("what a wrong answer gets", deadline, |s| s.contains("“maybe” is not one of the answers"));
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("the shell command's question", deadline, |s| s.contains("sleep 30 && touch slept.txt") && s.contains("n (Deny)"));
    tmux.keys(&["n", "Enter"]);
    let first = wait_history(&tmux, "the first answer's end", deadline, |t| t.contains("── completed"));
    assert!(first.contains("3 - line three") && first.contains("3 + LINE THREE"), "the applied edit shows its diff:\n{first}");
    assert!(first.contains("✗ Permission denied for run_shell"), "{first}");
    assert_eq!(std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"), "line one\nline two\nLINE THREE\n");

    // /undo takes the run's edit back, /redo puts it back.
    tmux.type_text("/undo");
    tmux.keys(&["Enter"]);
    let undone = wait_history(&tmux, "the undo's report", deadline, |t| t.contains(" undone: "));
    assert!(undone.contains("undone: 1 restored, 0 unchanged, 0 conflict(s)"), "{undone}");
    assert_eq!(std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"), "line one\nline two\nline three\n");
    tmux.type_text("/redo");
    tmux.keys(&["Enter"]);
    wait_history(&tmux, "the redo's report", deadline, |t| t.contains(" redone: 1 restored"));
    assert_eq!(std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"), "line one\nline two\nLINE THREE\n");

    // The follow-up continues the thread; its shell command runs (y) and
    // shows its elapsed time; Ctrl-C cancels it, and the chat goes on.
    tmux.type_text("Check it again");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the second shell question", deadline, |s| s.matches("n (Deny)").count() >= 1 && s.contains("Check it again"));
    let asked = wait_history(&tmux, "the edit refused", deadline, |t| t.contains("Error: old_string not found in notes.txt"));
    assert!(asked.contains("Copy old_string from the file exactly"), "the refusal's hint is whole:\n{asked}");
    tmux.wait_for("the question", deadline, |s| s.trim_end().ends_with("a (Always allow):") || s.contains("n (Deny):"));
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("the spinner's elapsed time", deadline, |s| s.contains("run_shell sleep 30 && touch slept.txt · 2s") || s.contains("touch slept.txt · 3s"));
    tmux.keys(&["C-c"]);
    let second = wait_history(&tmux, "the second answer's end", deadline, |t| t.contains("── cancelled"));
    let ids = threads(&second);
    assert_eq!(ids.len(), 2, "{second}");
    assert_eq!(ids[0], ids[1], "the follow-up ran on the same thread:\n{second}");
    tmux.wait_for("the prompt after the cancel", deadline, |s| s.trim_end().ends_with("›"));
    assert!(!history(&tmux).contains("CHAT-EXITED"), "Ctrl-C did not end the session");
    assert!(!workspace.join("slept.txt").exists(), "the cancelled command was stopped");

    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    let end = wait_history(&tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
    assert!(end.contains("CHAT-EXITED-0"), "{end}");
}
