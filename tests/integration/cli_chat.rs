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
    start_chat_in(tmux_bin, name, mode, script, prepare, false)
}

/// [`start_chat`], in colour when `colour` (else `NO_COLOR` is set).
fn start_chat_in(
    tmux_bin: &std::path::Path,
    name: &str,
    mode: &str,
    script: serde_json::Value,
    prepare: impl FnOnce(&std::path::Path, &std::path::Path),
    colour: bool,
) -> Chat {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical");
    let workspace = root.join("work");
    std::fs::create_dir_all(workspace.join(".git")).expect("workspace");
    prepare(&root, &workspace);
    let script_path = root.join("script.json");
    std::fs::write(&script_path, script.to_string()).expect("script");
    let model = vec![("TANDEM_PROVIDER", "scripted".to_string()), ("TANDEM_SCRIPT", script_path.display().to_string())];
    start_chat_on(tmux_bin, name, mode, dir, model, colour)
}

/// [`start_chat_in`] in the folder `dir` already prepared, with the model
/// that `model`'s variables name.
fn start_chat_on(tmux_bin: &std::path::Path, name: &str, mode: &str, dir: tempfile::TempDir, model: Vec<(&'static str, String)>, colour: bool) -> Chat {
    let root = dir.path().canonicalize().expect("canonical");
    let workspace = root.join("work");
    let tmux = Tmux::new(tmux_bin, format!("tandem-{name}-{}", std::process::id()));
    let mut env = model;
    env.extend([
        ("XDG_DATA_HOME", root.join("data").display().to_string()),
        ("HOME", root.display().to_string()),
        // A question taller than the pane goes through the pager.
        ("PAGER", "less -R".to_string()),
    ]);
    if !colour {
        env.push(("NO_COLOR", "1".to_string()));
    }
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
    tmux.wait_for("the question", deadline, |s| s.trim_end().ends_with("what to do instead):"));
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

/// The edit prompt at the terminal: a change of several hunks is put hunk
/// by hunk (`y` take it, `n` leave it out, each shown in colour), and only
/// the taken hunks are written, the model told which were declined; `e`
/// rejects an edit with the user's words for the model; `A` applies one
/// and lets the rest of the session's edits through unasked.
#[test]
fn the_edit_prompt_takes_hunks_words_and_allow_edits_for_the_session() {
    let Some(tmux_bin) = tmux_or_skip("the_edit_prompt_takes_hunks_words_and_allow_edits_for_the_session") else { return };
    let old: String = (1..=30).map(|i| format!("row {i:02}\n")).collect();
    // Three hunks: row 02 changed, row 15 removed, a row added after 28.
    let new = old.replace("row 02\n", "ROW 02\n").replace("row 15\n", "").replace("row 28\n", "row 28\nrow 28b\n");
    let edit = |from: &str, to: &str| serde_json::json!({"name": "edit_file", "input": {"file_path": "rows.txt", "old_string": from, "new_string": to}});
    let script = serde_json::json!({"turns": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "rows.txt"}}]},
        {"text": "Rewriting.", "tool_calls": [{"name": "write_file", "input": {"file_path": "rows.txt", "content": new}}]},
        {"text": "One more.", "tool_calls": [edit("row 05", "ROW 05")]},
        {"text": "Another.", "tool_calls": [edit("row 07", "ROW 07")]},
        {"text": "And the last.", "tool_calls": [edit("row 09", "ROW 09")]},
        {"text": "All done."}
    ]});
    let chat = start_chat_in(&tmux_bin, "chat-hunks", "default", script, |_, workspace| {
        std::fs::write(workspace.join("rows.txt"), &old).expect("rows");
    }, true);
    let (tmux, workspace, deadline) = (&chat.tmux, &chat.workspace, chat.deadline);
    tmux.type_text("Tidy the rows");
    tmux.keys(&["Enter"]);
    let first = tmux.wait_for("the first hunk", deadline, |s| s.contains("Hunk 1 of 3") && s.contains("A (Allow edits for this session)"));
    assert!(first.contains("@@ -1,5 +1,5 @@") && first.contains("2 + ROW 02"), "{first}");
    // In colour: the added row green, the removed one red.
    let ansi = tmux.screen_ansi();
    let row = |text: &str| ansi.lines().find(|l| l.contains(text)).unwrap_or_default().to_string();
    assert!(row("2 + ROW 02").contains("\x1b[32m") && row("2 - row 02").contains("\x1b[31m"), "the hunk is coloured:\n{ansi}");
    match crate::common::screenshot::keep("cli_chat", "a-hunk-of-an-edit-at-the-terminal", &ansi, 160, 50) {
        Ok(png) => eprintln!("screenshot: {}", png.display()),
        Err(why) => eprintln!("no screenshot ({why})"),
    }
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("the second hunk", deadline, |s| s.contains("Hunk 2 of 3") && s.contains("15 - row 15"));
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("the third hunk", deadline, |s| s.contains("Hunk 3 of 3") && s.contains("+ row 28b"));
    tmux.keys(&["y", "Enter"]);
    // The edit of row 05: e, and what to do instead.
    tmux.wait_for("the one-hunk review", deadline, |s| s.contains("edit_file rows.txt") && s.contains("5 + ROW 05") && s.contains("y (Apply), n (Reject)"));
    tmux.keys(&["e", "Enter"]);
    tmux.wait_for("the question for the words", deadline, |s| s.contains("What should Tandem do instead?"));
    tmux.type_text("leave row 05 as it is");
    tmux.keys(&["Enter"]);
    // The edit of row 07: A; row 09's is not asked about.
    tmux.wait_for("the next review", deadline, |s| s.contains("7 + ROW 07") && s.trim_end().ends_with("(Tell Tandem what to do instead):"));
    tmux.keys(&["A", "Enter"]);
    let end = wait_history(tmux, "the answer's end", deadline, |t| t.contains("── completed"));
    let expected = old
        .replace("row 02\n", "ROW 02\n")
        .replace("row 28\n", "row 28\nrow 28b\n")
        .replace("row 07\n", "ROW 07\n")
        .replace("row 09\n", "ROW 09\n");
    assert_eq!(std::fs::read_to_string(workspace.join("rows.txt")).expect("rows"), expected, "{end}");
    assert!(end.contains("✓ Wrote part of the change to rows.txt (31 lines): hunks 1 and 3 of 3 applied, hunk 2 declined"), "the transcript says which hunk was left out:\n{end}");
    assert!(end.contains("instead, the user says: leave row 05 as it is"), "the rejection carries the user's words:\n{end}");
    // Three hunks, row 05's edit and row 07's: row 09's was not asked about.
    assert_eq!(end.matches("Choose 1-").count(), 5, "{end}");
    assert!(end.contains("partly applied"), "the summary says the rewrite landed in part:\n{end}");
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    let end = wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
    assert!(end.contains("CHAT-EXITED-0"), "{end}");
}

/// Comments at the edit prompt: `c` at a hunk asks for the user's words
/// and the hunk again (here declined with `n`); `c` at a one-hunk edit
/// applies it with a comment. The tool results the model read (kept in the
/// saved thread) carry each comment with the hunk's decision.
#[test]
fn the_edit_prompt_takes_comments_on_hunks_and_on_an_applied_edit() {
    let Some(tmux_bin) = tmux_or_skip("the_edit_prompt_takes_comments_on_hunks_and_on_an_applied_edit") else { return };
    let old: String = (1..=30).map(|i| format!("row {i:02}\n")).collect();
    let new = old.replace("row 02\n", "ROW 02\n").replace("row 15\n", "").replace("row 28\n", "row 28\nrow 28b\n");
    let script = serde_json::json!({"turns": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "rows.txt"}}]},
        {"text": "Rewriting.", "tool_calls": [{"name": "write_file", "input": {"file_path": "rows.txt", "content": new}}]},
        {"text": "One more.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "rows.txt", "old_string": "row 05", "new_string": "ROW 05"}}]},
        {"text": "All done."}
    ]});
    let chat = start_chat(&tmux_bin, "chat-comments", "default", script, |_, workspace| {
        std::fs::write(workspace.join("rows.txt"), &old).expect("rows");
    });
    let (tmux, workspace, deadline) = (&chat.tmux, &chat.workspace, chat.deadline);
    tmux.type_text("Tidy the rows");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the first hunk", deadline, |s| s.contains("Hunk 1 of 3") && s.contains("c (Comment on this hunk)"));
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("the second hunk", deadline, |s| s.contains("Hunk 2 of 3") && s.contains("15 - row 15"));
    tmux.keys(&["c", "Enter"]);
    tmux.wait_for("the question for the comment", deadline, |s| s.contains("Your comment for Tandem:"));
    tmux.type_text("row 15 stays, the report reads it");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the second hunk again", deadline, |s| s.matches("Hunk 2 of 3").count() >= 2);
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("the third hunk", deadline, |s| s.contains("Hunk 3 of 3") && s.contains("+ row 28b"));
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("the one-hunk review", deadline, |s| s.contains("5 + ROW 05") && s.contains("c (Apply, with a comment)"));
    tmux.keys(&["c", "Enter"]);
    tmux.wait_for("the question for the edit's comment", deadline, |s| s.contains("5 + ROW 05") && s.trim_end().ends_with("Your comment for Tandem:"));
    tmux.type_text("fine; upper-case row 06 the same way");
    tmux.keys(&["Enter"]);
    let end = wait_history(tmux, "the answer's end", deadline, |t| t.contains("── completed"));
    let expected = old.replace("row 02\n", "ROW 02\n").replace("row 28\n", "row 28\nrow 28b\n").replace("row 05\n", "ROW 05\n");
    assert_eq!(std::fs::read_to_string(workspace.join("rows.txt")).expect("rows"), expected, "{end}");
    // The saved thread holds what the model read.
    let mut saved = String::new();
    let mut folders = vec![chat.root.join("data")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                saved.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    assert!(saved.contains("- hunk 2 rejected by the user: row 15 stays, the report reads it"), "the hunk's comment reached the model: {end}");
    assert!(saved.contains("- the whole edit accepted by the user, with a comment: fine; upper-case row 06 the same way"), "the edit's comment reached the model: {end}");
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
}

/// A reply in markdown is shown rendered on a colour terminal: the
/// heading without its `#`s, list items as bullets, inline code and bold
/// without their markers, a code block's keywords coloured and a table's
/// bars drawn. (With `NO_COLOR`, the other tests, it is the model's text.)
#[test]
fn chat_renders_a_markdown_reply() {
    let Some(tmux_bin) = tmux_or_skip("chat_renders_a_markdown_reply") else { return };
    let reply = "## What I found\n\nThe parser has **two** bugs:\n\n- `parse_line` drops the last field\n- the tests miss it\n\n```rust\nfn fixed(line: &str) -> usize {\n    line.split(\",\").count() // every field\n}\n```\n\n| file | change |\n|---|---|\n| parser.rs | fixed |\n";
    let script = serde_json::json!({"turns": [{"text": reply}]});
    let chat = start_chat_in(&tmux_bin, "chat-markdown", "default", script, |_, _| {}, true);
    let (tmux, deadline) = (&chat.tmux, chat.deadline);
    tmux.type_text("What is wrong with the parser?");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the reply's end", deadline, |s| s.contains("── completed"));
    let row = |text: &str| screen.lines().find(|l| l.contains(text)).unwrap_or_default().trim_end().to_string();
    assert_eq!(row("What I found"), "What I found", "the heading without its #s:\n{screen}");
    assert_eq!(row("bugs:"), "The parser has two bugs:", "{screen}");
    assert_eq!(row("parse_line"), "• parse_line drops the last field", "{screen}");
    assert_eq!(row("parser.rs"), "│ parser.rs │ fixed │", "{screen}");
    assert_eq!(row("fn fixed"), "fn fixed(line: &str) -> usize {", "code stays as written:\n{screen}");
    let ansi = tmux.screen_ansi();
    let row = |text: &str| ansi.lines().find(|l| l.contains(text)).unwrap_or_default().to_string();
    // tmux writes the colours back as it keeps them (`\x1b[35m\x1b[49mfn`).
    assert!(row("fixed(line").contains("\x1b[35m"), "the keyword is coloured:\n{ansi}");
    assert!(row("every field").contains("\x1b[32m"), "the string is coloured:\n{ansi}");
    assert!(row("bugs:").contains("\x1b[1mtwo"), "bold:\n{ansi}");
    match crate::common::screenshot::keep("cli_chat", "a-markdown-reply-at-the-terminal", &ansi, 160, 50) {
        Ok(png) => eprintln!("screenshot: {}", png.display()),
        Err(why) => eprintln!("no screenshot ({why})"),
    }
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
}

/// `/resume ID` shows what the conversation said before: its prompt, its
/// tool calls, its reply and how it ended, then the next message
/// continues it.
#[test]
fn resume_shows_the_conversation_so_far() {
    let Some(tmux_bin) = tmux_or_skip("resume_shows_the_conversation_so_far") else { return };
    let script = serde_json::json!({"turns": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
        {"text": "The notes have three lines."}
    ]});
    let chat = start_chat(&tmux_bin, "chat-resume", "default", script, |_, workspace| {
        std::fs::write(workspace.join("notes.txt"), "one\ntwo\nthree\n").expect("notes");
    });
    let (tmux, deadline) = (&chat.tmux, chat.deadline);
    tmux.type_text("How long are the notes?");
    tmux.keys(&["Enter"]);
    let first = wait_history(tmux, "the first answer", deadline, |t| t.contains("── completed"));
    let id = threads(&first).pop().expect("the thread's id");
    tmux.type_text("/new");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the new conversation", deadline, |s| s.contains("New conversation"));
    tmux.keys(&["C-l"]);
    tmux.type_text(&format!("/resume {id}"));
    tmux.keys(&["Enter"]);
    let shown = wait_history(tmux, "the recap", deadline, |t| t.contains("your next message continues it"));
    let recap = &shown[shown.rfind("earlier in this conversation").expect("the recap's title")..];
    let lines: Vec<&str> = recap.lines().map(str::trim_end).collect();
    assert_eq!(
        lines[..7],
        ["earlier in this conversation ──", "", "› How long are the notes?", "  · read_file notes.txt", "The notes have three lines.", "── completed ──", ""],
        "{shown}"
    );
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
}

/// Issue 53: a run undone from another process (`tandem undo` in another
/// terminal) is shown undone when the conversation is resumed, not as
/// changes in place.
#[test]
fn resume_shows_a_run_undone_from_another_process_as_undone() {
    let Some(tmux_bin) = tmux_or_skip("resume_shows_a_run_undone_from_another_process_as_undone") else { return };
    let script = serde_json::json!({"turns": [
        {"tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
        {"tool_calls": [{"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "two", "new_string": "TWO"}}]},
        {"text": "Capitalised."}
    ]});
    let chat = start_chat(&tmux_bin, "chat-resume-undone", "bypassPermissions", script, |_, workspace| {
        std::fs::write(workspace.join("notes.txt"), "one\ntwo\n").expect("notes");
    });
    let (tmux, deadline) = (&chat.tmux, chat.deadline);
    tmux.type_text("Capitalise two");
    tmux.keys(&["Enter"]);
    let first = wait_history(tmux, "the first answer", deadline, |t| t.contains("── completed"));
    assert_eq!(std::fs::read_to_string(chat.workspace.join("notes.txt")).expect("notes"), "one\nTWO\n", "{first}");
    let id = threads(&first).pop().expect("the thread's id");
    let undo = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("undo")
        .current_dir(&chat.workspace)
        .env("XDG_DATA_HOME", chat.root.join("data"))
        .env("HOME", &chat.root)
        .output()
        .expect("tandem undo");
    assert!(undo.status.success(), "{}{}", String::from_utf8_lossy(&undo.stdout), String::from_utf8_lossy(&undo.stderr));
    assert_eq!(std::fs::read_to_string(chat.workspace.join("notes.txt")).expect("notes"), "one\ntwo\n");
    tmux.type_text("/new");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the new conversation", deadline, |s| s.contains("New conversation"));
    tmux.keys(&["C-l"]);
    tmux.type_text(&format!("/resume {id}"));
    tmux.keys(&["Enter"]);
    let shown = wait_history(tmux, "the recap", deadline, |t| t.contains("your next message continues it"));
    let recap = &shown[shown.rfind("earlier in this conversation").expect("the recap's title")..];
    assert!(recap.contains("── completed ──\n  ↶ its changes were undone since (/redo puts them back)"), "{shown}");
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
}

/// An edit whose diff is taller than the terminal is shown through the
/// pager (its first lines would scroll away), then the options; `v` shows
/// it again, and `y` applies it.
#[test]
fn a_diff_taller_than_the_terminal_goes_through_the_pager() {
    let Some(tmux_bin) = tmux_or_skip("a_diff_taller_than_the_terminal_goes_through_the_pager") else { return };
    if which("less").is_none() {
        return crate::common::tools::skip("a_diff_taller_than_the_terminal_goes_through_the_pager", "TANDEM_REQUIRE_TMUX", "less is not installed");
    }
    let content: String = (1..=80).map(|i| format!("new row {i:02}\n")).collect();
    let script = serde_json::json!({"turns": [
        {"text": "Writing.", "tool_calls": [{"name": "write_file", "input": {"file_path": "rows.txt", "content": content}}]},
        {"text": "Written."}
    ]});
    let chat = start_chat_in(&tmux_bin, "chat-pager", "default", script, |_, _| {}, true);
    let (tmux, workspace, deadline) = (&chat.tmux, &chat.workspace, chat.deadline);
    tmux.type_text("Write the rows");
    tmux.keys(&["Enter"]);
    // less: the diff's first page, its first row at the top.
    let page = tmux.wait_for("the pager", deadline, |s| s.contains("1 + new row 01") && !s.contains("Choose 1-"));
    assert!(page.lines().next().unwrap_or_default().contains("Tandem: apply this change (write_file rows.txt)?"), "{page}");
    tmux.keys(&["q"]);
    let asked = tmux.wait_for("the options after the pager", deadline, |s| s.contains("or v to see it again:"));
    assert!(asked.contains("(83 lines, shown in the pager; v shows them again)") && asked.contains("1) Apply"), "{asked}");
    tmux.keys(&["v", "Enter"]);
    tmux.wait_for("the pager again", deadline, |s| s.contains("1 + new row 01") && !s.contains("or v to see it again"));
    tmux.keys(&["q"]);
    tmux.wait_for("the options again", deadline, |s| s.trim_end().ends_with("or v to see it again:"));
    tmux.keys(&["y", "Enter"]);
    wait_history(tmux, "the answer's end", deadline, |t| t.contains("── completed"));
    assert_eq!(std::fs::read_to_string(workspace.join("rows.txt")).expect("rows"), content);
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
    let sleep = crate::common::sleeper(3501);
    let script = serde_json::json!({"turns": [
        {"text": "Starting.", "tool_calls": [{"name": "run_shell", "input": {"command": sleep, "background": true}}]},
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
    // The task runs after its run ended (its `sleep` may start a moment
    // after the end is drawn).
    let sleeper = crate::common::only_process(&sleep);
    tmux.type_text("/tasks");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the task listed", deadline, |t| t.contains("task 1: running for") && t.contains(&format!("`{sleep}`")));
    tmux.type_text("/stop 1");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the stop's report", deadline, |t| t.contains(&format!("Task 1 ({sleep}): stopped.")));
    crate::common::wait_until("the stopped task's process is gone", || !crate::common::process_alive(sleeper));
    tmux.type_text("/stop 9");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the unknown task", deadline, |t| t.contains("there is no task \"9\""));
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    let end = wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
    assert!(end.contains("CHAT-EXITED-0"), "{end}");
}

/// `/model` names the model answering and the ones to switch to; `/model
/// NAME` sends the next message to NAME on the same provider (issue 54):
/// the loopback Anthropic API sees the first request ask for the session's
/// model and the second for the chosen one.
#[test]
fn chat_model_lists_the_models_and_switches_the_next_message() {
    let Some(tmux_bin) = tmux_or_skip("chat_model_lists_the_models_and_switches_the_next_message") else { return };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mock = runtime.block_on(crate::common::mock_model::MockModel::start(vec![crate::common::turns::text("First."), crate::common::turns::text("Second.")]));
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("work/.git")).expect("workspace");
    let model = vec![
        ("TANDEM_PROVIDER", "anthropic".to_string()),
        ("TANDEM_MODEL", "claude-sonnet-5-5".to_string()),
        ("ANTHROPIC_BASE_URL", mock.url.clone()),
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
    ];
    let chat = start_chat_on(&tmux_bin, "chat-model", "default", dir, model, false);
    let (tmux, deadline) = (&chat.tmux, chat.deadline);
    tmux.type_text("/model");
    tmux.keys(&["Enter"]);
    let listed = wait_history(tmux, "the models", deadline, |t| t.contains("claude-haiku-5-5"));
    assert!(listed.contains(&format!("Model: anthropic at {}, model claude-sonnet-5-5 (", mock.url)), "{listed}");
    assert!(listed.contains("* claude-sonnet-5-5") && listed.contains("  claude-opus-5-5"), "{listed}");
    tmux.type_text("hello");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the first answer", deadline, |t| t.contains("First.") && t.contains("── completed"));
    tmux.type_text("/model claude-opus-5-5");
    tmux.keys(&["Enter"]);
    let switched = wait_history(tmux, "the switch", deadline, |t| t.contains("The next messages use it."));
    assert!(switched.contains("model claude-opus-5-5 ("), "{switched}");
    tmux.type_text("again");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the second answer", deadline, |t| t.contains("Second.") && t.matches("── completed").count() == 2);
    let models: Vec<String> = mock.requests().iter().map(|r| r.body["model"].as_str().unwrap_or_default().to_string()).collect();
    assert_eq!(models, ["claude-sonnet-5-5", "claude-opus-5-5"], "the models asked for");
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    let end = wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
    assert!(end.contains("CHAT-EXITED-0"), "{end}");
}

/// `@path` in a message attaches the file's text as the editors' chats do
/// (issue 54): the request to the model carries it, the chat says what it
/// attached, and an `@word` that is no file stays text.
#[test]
fn chat_at_file_attaches_the_files_text() {
    let Some(tmux_bin) = tmux_or_skip("chat_at_file_attaches_the_files_text") else { return };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mock = runtime.block_on(crate::common::mock_model::MockModel::start(vec![crate::common::turns::text("It has the word.")]));
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("work/.git")).expect("workspace");
    std::fs::write(dir.path().join("work/notes.txt"), "first line\nthe word is pumpernickel\n").expect("notes");
    let model = vec![
        ("TANDEM_PROVIDER", "anthropic".to_string()),
        ("ANTHROPIC_BASE_URL", mock.url.clone()),
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
    ];
    let chat = start_chat_on(&tmux_bin, "chat-attach", "default", dir, model, false);
    let (tmux, deadline) = (&chat.tmux, chat.deadline);
    tmux.type_text("What does @notes.txt say, @someone?");
    tmux.keys(&["Enter"]);
    let shown = wait_history(tmux, "the answer", deadline, |t| t.contains("It has the word.") && t.contains("── completed"));
    assert!(shown.contains("Attached: notes.txt\n"), "{shown}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0].raw;
    assert!(sent.contains("The user attached these files") && sent.contains("the word is pumpernickel"), "the file's text reaches the model: {sent}");
    assert!(sent.contains("What does @notes.txt say, @someone?"), "the message as typed: {sent}");
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
}

/// `/resume` takes the first characters of an id when they name one
/// conversation, and says so when they name none (issue 54).
#[test]
fn resume_takes_a_unique_prefix_of_the_id() {
    let Some(tmux_bin) = tmux_or_skip("resume_takes_a_unique_prefix_of_the_id") else { return };
    let script = serde_json::json!({"turns": [{"text": "Noted."}]});
    let chat = start_chat(&tmux_bin, "chat-resume-prefix", "default", script, |_, _| {});
    let (tmux, deadline) = (&chat.tmux, chat.deadline);
    tmux.type_text("Remember this.");
    tmux.keys(&["Enter"]);
    let first = wait_history(tmux, "the first answer", deadline, |t| t.contains("── completed"));
    let id = threads(&first).pop().expect("the thread's id");
    tmux.type_text("/new");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the new conversation", deadline, |s| s.contains("New conversation"));
    tmux.type_text("/resume zz");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "no match", deadline, |t| t.contains("No saved conversation here starts with zz"));
    let prefix = &id[..id.len() - 3];
    tmux.type_text(&format!("/resume {prefix}"));
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the conversation continued", deadline, |t| t.contains(&format!("Continuing {id} (")));
    tmux.type_text("/exit");
    tmux.keys(&["Enter"]);
    wait_history(tmux, "the chat to exit", deadline, |t| t.contains("CHAT-EXITED-"));
}
