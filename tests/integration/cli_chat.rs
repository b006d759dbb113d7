//! `tandem chat` in a real terminal: tmux runs it, the test types as a user
//! would and reads the screen. Messages continue one thread, an applied
//! edit shows its diff, `y`/`n` answer the questions, a refusal shows
//! whole, a long tool call shows its elapsed time, and Ctrl-C cancels the
//! running answer but not the session, /undo and /redo take a run's
//! edit back and put it back, and the MCP servers start once for all the
//! messages of a chat.
//!
//! Needs tmux; `.ci/run` installs it and sets `TANDEM_REQUIRE_TMUX=1`, so
//! CI fails rather than skips when it is missing.

use crate::common::tmux;

use std::time::{Duration, Instant};

use crate::common::tools::which;
use tmux::Tmux;

fn tmux_or_skip(test: &str) -> Option<std::path::PathBuf> {
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

/// A chat in tmux, in a fresh workspace (`root/work`, `root` the home):
/// the scripted model replays `script` from its first turn at each message.
struct Chat {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    workspace: std::path::PathBuf,
    tmux: Tmux,
    deadline: Instant,
}

/// Start `tandem chat --permission-mode MODE` once `prepare` has set up
/// the home and the workspace, and wait for its greeting.
fn start_chat(tmux_bin: &std::path::Path, name: &str, mode: &str, script: serde_json::Value, prepare: impl FnOnce(&std::path::Path, &std::path::Path)) -> Chat {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical");
    let workspace = root.join("work");
    std::fs::create_dir_all(workspace.join(".git")).expect("workspace");
    prepare(&root, &workspace);
    let script_path = root.join("script.json");
    std::fs::write(&script_path, script.to_string()).expect("script");
    let tmux = Tmux::new(tmux_bin, format!("tandem-{name}-{}", std::process::id()));
    let env = [
        ("TANDEM_PROVIDER", "scripted".to_string()),
        ("TANDEM_SCRIPT", script_path.display().to_string()),
        ("XDG_DATA_HOME", root.join("data").display().to_string()),
        ("HOME", root.display().to_string()),
        ("NO_COLOR", "1".to_string()),
    ];
    let command = format!("{} chat --permission-mode {mode}; echo CHAT-EXITED-$?; sleep 60", env!("CARGO_BIN_EXE_tandem"));
    tmux.start(160, 50, &workspace, &env, &command);
    // Generous: a loaded machine runs the debug binary slowly.
    let deadline = Instant::now() + Duration::from_secs(180);
    tmux.wait_for("the chat's greeting", deadline, |s| s.contains("Tandem chat in") && s.contains("›"));
    Chat { _dir: dir, root, workspace, tmux, deadline }
}

#[test]
fn chat_continues_one_thread_and_ctrl_c_cancels_only_the_answer() {
    let Some(tmux_bin) = tmux_or_skip("chat_continues_one_thread_and_ctrl_c_cancels_only_the_answer") else { return };
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
    let chat = start_chat(&tmux_bin, "chat", "default", script, |_, workspace| {
        std::fs::write(workspace.join("notes.txt"), "line one\nline two\nline three\n").expect("notes");
    });
    let (tmux, workspace, deadline) = (&chat.tmux, &chat.workspace, chat.deadline);

    tmux.type_text("Capitalise line three");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the edit's review", deadline, |s| s.contains("y (Apply), n (Reject)"));
    tmux.type_text("maybe");
    tmux.keys(&["Enter"]);
    tmux.wait_for("what a wrong answer gets", deadline, |s| s.contains("“maybe” is not one of the answers"));
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("the shell command's question", deadline, |s| s.contains("sleep 30 && touch slept.txt") && s.contains("n (Deny)"));
    tmux.keys(&["n", "Enter"]);
    let first = wait_history(tmux, "the first answer's end", deadline, |t| t.contains("── completed"));
    assert!(first.contains("3 - line three") && first.contains("3 + LINE THREE"), "the applied edit shows its diff:\n{first}");
    assert!(first.contains("✗ Permission denied for run_shell"), "{first}");
    assert_eq!(std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"), "line one\nline two\nLINE THREE\n");

    // /undo takes the run's edit back, /redo puts it back.
    tmux.type_text("/undo");
    tmux.keys(&["Enter"]);
    let undone = wait_history(tmux, "the undo's report", deadline, |t| t.contains(" undone: "));
    assert!(undone.contains("undone: 1 restored, 0 unchanged, 0 conflict(s)"), "{undone}");
    assert_eq!(std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"), "line one\nline two\nline three\n");
    tmux.type_text("/redo");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the redo's report", deadline, |t| t.contains(" redone: 1 restored"));
    assert_eq!(std::fs::read_to_string(workspace.join("notes.txt")).expect("notes"), "line one\nline two\nLINE THREE\n");

    // The follow-up continues the thread; its shell command runs (y) and
    // shows its elapsed time; Ctrl-C cancels it, and the chat goes on.
    tmux.type_text("Check it again");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the second shell question", deadline, |s| s.matches("n (Deny)").count() >= 1 && s.contains("Check it again"));
    // The refusal and its hint are printed line by line: wait for the hint,
    // then check it belongs to the refusal (under load a capture can fall
    // between the two lines).
    let asked = wait_history(tmux, "the edit refused, with its hint", deadline, |t| t.contains("Copy old_string from the file exactly"));
    assert!(asked.contains("Error: old_string not found in notes.txt"), "the refusal's hint is whole:\n{asked}");
    tmux.wait_for("the question", deadline, |s| s.trim_end().ends_with("a (Always allow):") || s.contains("n (Deny):"));
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("the spinner's elapsed time", deadline, |s| s.contains("run_shell sleep 30 && touch slept.txt · 2s") || s.contains("touch slept.txt · 3s"));
    tmux.keys(&["C-c"]);
    let second = wait_history(tmux, "the second answer's end", deadline, |t| t.contains("── cancelled"));
    let ids = threads(&second);
    assert_eq!(ids.len(), 2, "{second}");
    // Where the prompts go, said at the first message, not again while it
    // stays the same.
    assert_eq!(second.matches("[model: scripted, script; provider (TANDEM_PROVIDER) is scripted]").count(), 1, "{second}");
    assert_eq!(ids[0], ids[1], "the follow-up ran on the same thread:\n{second}");
    tmux.wait_for("the prompt after the cancel", deadline, |s| s.trim_end().ends_with("›"));
    assert!(!history(tmux).contains("CHAT-EXITED"), "Ctrl-C did not end the session");
    assert!(!workspace.join("slept.txt").exists(), "the cancelled command was stopped");

    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    let end = wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
    assert!(end.contains("CHAT-EXITED-0"), "{end}");
}

/// The MCP servers are the chat session's: started once, when the chat
/// opens, and the same process answers every message's calls (a chat that
/// built them per message would start the server again for the second).
#[test]
fn chat_starts_its_mcp_servers_once_for_all_its_messages() {
    let Some(tmux_bin) = tmux_or_skip("chat_starts_its_mcp_servers_once_for_all_its_messages") else { return };
    // Each message replays the script: find the server's tool, call it, end.
    let script = serde_json::json!({"turns": [
        {"text": "Looking.", "tool_calls": [{"name": "tool_search", "input": {"query": "select:mcp__count__pid"}}]},
        {"text": "Asking.", "tool_calls": [{"name": "mcp__count__pid", "input": {}}]},
        {"text": "Answered."}
    ]});
    // The user's server; it adds a line with its pid to `starts` each time it starts.
    let chat = start_chat(&tmux_bin, "chat-mcp", "bypassPermissions", script, |home, _| {
        let server = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/test_server.py");
        let starts = home.join("starts.txt");
        let servers = serde_json::json!({"mcpServers": {"count": {"command": "python3", "args": [server, "--starts", starts]}}});
        std::fs::create_dir_all(home.join(".tandem")).expect("home settings");
        std::fs::write(home.join(".tandem/mcp.json"), servers.to_string()).expect("mcp.json");
    });
    let (tmux, deadline, starts) = (&chat.tmux, chat.deadline, chat.root.join("starts.txt"));
    for (message, runs) in [("Which process answers?", 1), ("And now?", 2)] {
        tmux.type_text(message);
        tmux.keys(&["Enter"]);
        wait_history(tmux, "the answer's end", deadline, |t| t.matches("── completed").count() == runs);
    }
    let text = history(tmux);
    let started = std::fs::read_to_string(&starts).expect("the server started");
    let pids: Vec<&str> = started.lines().collect();
    assert_eq!(pids.len(), 1, "the server started once for both messages: {pids:?}\n{text}");
    let answered = text.lines().filter(|l| l.trim().starts_with('✓') && l.split_whitespace().any(|word| word == pids[0])).count();
    assert_eq!(answered, 2, "both messages' calls were answered by the one server process {}:\n{text}", pids[0]);

    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    let end = wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
    assert!(end.contains("CHAT-EXITED-0"), "{end}");
}

/// `/tasks` lists the background tasks the agent started and `/stop ID`
/// ends one: its process is gone, and the chat goes on.
#[test]
fn chat_lists_the_background_tasks_and_stops_one() {
    let Some(tmux_bin) = tmux_or_skip("chat_lists_the_background_tasks_and_stops_one") else { return };
    let bwrap = std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--proc", "/proc", "--dev", "/dev", "true"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !bwrap {
        assert!(std::env::var_os("TANDEM_REQUIRE_BWRAP").is_none(), "TANDEM_REQUIRE_BWRAP is set but bwrap cannot build a sandbox");
        return;
    }
    let script = serde_json::json!({"turns": [
        {"text": "Starting.", "tool_calls": [{"name": "run_shell", "input": {"command": "sleep 3501", "background": true}}]},
        {"text": "It runs."}
    ]});
    let chat = start_chat(&tmux_bin, "chat-tasks", "bypassPermissions", script, |_, _| {});
    let (tmux, deadline) = (&chat.tmux, chat.deadline);
    tmux.type_text("/tasks");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the empty list", deadline, |t| t.contains("No background tasks."));
    tmux.type_text("start the server");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the answer's end", deadline, |t| t.contains("── completed"));
    let sleeper = crate::common::processes_running("sleep 3501");
    assert_eq!(sleeper.len(), 1, "the task runs after its run ended: {sleeper:?}");
    tmux.type_text("/tasks");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the task listed", deadline, |t| t.contains("task 1: running for") && t.contains("`sleep 3501`"));
    tmux.type_text("/stop 1");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the stop's report", deadline, |t| t.contains("Task 1 (sleep 3501): stopped."));
    crate::common::wait_until("the stopped task's process is gone", || !crate::common::process_alive(sleeper[0]));
    tmux.type_text("/stop 9");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the unknown task", deadline, |t| t.contains("there is no task \"9\""));
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    let end = wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
    assert!(end.contains("CHAT-EXITED-0"), "{end}");
}
