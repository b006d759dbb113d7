//! End to end in a real Kakoune with kak-lsp: `kak` runs inside tmux with
//! its own HOME, XDG_CONFIG_HOME (tests/kakoune/kakrc is the user's kakrc;
//! kak-lsp's server table is in it) and XDG_RUNTIME_DIR (Kakoune's and
//! kak-lsp's sockets). This test types unsaved text, asks Tandem with
//! `lsp-execute-command tandem.ask` (`"wait": false`) or with the server's
//! code action, and answers Tandem's review prompt with keystrokes.
//!
//! kak-lsp advertises change annotations but applies annotated edits
//! without asking, so Tandem reviews with `window/showMessageRequest`.
//! kak-lsp queues that request: the modeline shows 🔔1 until the user runs
//! `lsp-show-message-request-next`, which opens a menu of the actions.
//!
//! Needs `kak` (Debian's kakoune), `kak-lsp` (crates.io; `.ci/run` installs
//! it in the tools cache (`tests/common/tools.rs`), or set KAK_LSP_BIN) and `tmux`.
//! `.ci/run` sets `TANDEM_REQUIRE_KAKOUNE=1`, so CI fails rather than skips
//! when they are missing.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::notes;
use crate::common::tmux;
use notes::{read_then_edit, NotesWorkspace, ON_DISK};
use crate::common::tools::{ci_tools, which};
use tmux::Tmux;

fn tools() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let kak = which("kak")?;
    let tmux = which("tmux")?;
    let cached = ci_tools().join("kak-lsp/bin/kak-lsp");
    let kak_lsp = std::env::var_os("KAK_LSP_BIN").map(PathBuf::from).or_else(|| cached.is_file().then_some(cached)).or_else(|| which("kak-lsp"))?;
    Some((kak, tmux, kak_lsp))
}

fn skip(name: &str) {
    crate::common::tools::skip(name, "TANDEM_REQUIRE_KAKOUNE", "kak (kakoune), kak-lsp and tmux are not installed");
}

const TYPED: &str = "typed by the user";

/// Ends Kakoune (and so kak-lsp and Tandem), then the tmux server, however
/// the test ends.
struct KakSession {
    tmux: Tmux,
    /// `kak`, its session name and its XDG_RUNTIME_DIR: `kill!` sent with
    /// `kak -p` runs lsp.kak's KakEnd hook, which stops kak-lsp's daemon
    /// (killing the terminal leaves it running for `lsp_timeout`, 5 h).
    kak: (PathBuf, String, PathBuf),
}

impl Deref for KakSession {
    type Target = Tmux;
    fn deref(&self) -> &Tmux {
        &self.tmux
    }
}

impl Drop for KakSession {
    fn drop(&mut self) {
        let (kak, name, runtime) = &self.kak;
        if let Ok(mut child) = Command::new(kak).arg("-p").arg(name).env("XDG_RUNTIME_DIR", runtime).stdin(std::process::Stdio::piped()).spawn() {
            if let Some(mut stdin) = child.stdin.take() {
                use std::io::Write;
                let _ = stdin.write_all(b"kill!\n");
            }
            let _ = child.wait();
        }
        // Bounded: Kakoune's exit ends the only pane and so the server.
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.tmux.alive() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Then `tmux` drops: kill-server.
    }
}

struct Outcome {
    buffer: String,
    modified: String,
    disk: String,
    /// The session's records (the saved thread), one JSON value a line.
    records: Vec<serde_json::Value>,
    /// The screen when Tandem's prompt was open.
    prompt_screen: String,
}

/// The saved thread's records, once the run has ended (its `run` record,
/// and its `edits` record when the run made one).
fn finished_thread(data: &Path) -> Option<Vec<serde_json::Value>> {
    let sessions = data.join("tandem/threads");
    for workspace in std::fs::read_dir(sessions).ok()?.flatten() {
        for thread in std::fs::read_dir(workspace.path()).ok()?.flatten() {
            // Threads are `<id>.jsonl`; the runs' checkpoints sit beside them.
            if thread.path().extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(thread.path()) else { continue };
            let records: Vec<serde_json::Value> = text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
            let edited = records.iter().any(|r| r["type"] == "message" && r["message"]["content"].as_array().is_some_and(|c| c.iter().any(|p| p["name"] == "edit_file")));
            if records.iter().any(|r| r["type"] == "run") && (!edited || records.iter().any(|r| r["type"] == "edits")) {
                return Some(records);
            }
        }
    }
    None
}

/// The tool results of the thread, in order.
fn tool_results(records: &[serde_json::Value]) -> Vec<serde_json::Value> {
    records
        .iter()
        .filter(|r| r["type"] == "message")
        .filter_map(|r| r["message"]["content"].as_array())
        .flatten()
        .filter(|part| part["type"] == "tool_result")
        .cloned()
        .collect()
}

/// How the user asks.
#[derive(Clone, Copy, PartialEq)]
enum Via {
    /// `:lsp-execute-command tandem.ask '[{…, "wait": false}]'`.
    Command,
    /// `:lsp-code-actions` on lines 1-2, then "Tandem: explain this code".
    CodeAction,
}

/// What the user types while Tandem's question waits, and after the edit
/// landed: a line at the top of the buffer, and one at its end.
#[derive(Clone, Copy, Default)]
struct Typing {
    during: Option<&'static str>,
    after: Option<&'static str>,
}

/// `answer`: what the user types in kak-lsp's menu of Tandem's actions
/// before Enter ("" takes the first, Apply).
fn run_kakoune(kak: &Path, tmux: &Path, kak_lsp: &Path, name: &str, via: Via, answer: &str, typing: Typing) -> Outcome {
    let workspace = NotesWorkspace::new();
    let root = &workspace.root;
    let script = workspace.write_script(&serde_json::json!({"turns": read_then_edit()}).to_string());
    // Kakoune, kak-lsp and Tandem keep nothing outside these folders.
    let state = tempfile::tempdir().expect("temp state");
    let home = state.path().join("home");
    let config = state.path().join("config");
    let runtime = state.path().join("run");
    let data = state.path().join("data");
    let out = state.path().join("out");
    for folder in [&home, &config.join("kak"), &runtime, &data, &out] {
        std::fs::create_dir_all(folder).expect("make a state folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).expect("private runtime folder");
    }
    let kakrc = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kakoune/kakrc");
    std::fs::copy(&kakrc, config.join("kak/kakrc")).expect("install the kakrc");
    let socket = format!("tandem-kak-{}-{name}", std::process::id());
    let session = KakSession { tmux: Tmux::new(tmux, socket.clone()), kak: (kak.to_path_buf(), socket.clone(), runtime.clone()) };
    let env = [
        ("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem").to_string()),
        ("TANDEM_PROVIDER", "scripted".into()),
        ("TANDEM_SCRIPT", script.display().to_string()),
        ("SCENARIO_MODE", "default".into()),
        ("SCENARIO_OUT", out.display().to_string()),
        ("HOME", home.display().to_string()),
        ("XDG_CONFIG_HOME", config.display().to_string()),
        ("XDG_RUNTIME_DIR", runtime.display().to_string()),
        ("XDG_DATA_HOME", data.display().to_string()),
        ("TERM", "xterm-256color".into()),
    ];
    // lsp.kak runs `kak-lsp` by name, as from a user's PATH. (Set in the
    // command: tmux gives a new session the client's PATH, not `-e`'s.)
    let path = format!("{}:{}", kak_lsp.parent().expect("kak-lsp's folder").display(), std::env::var("PATH").unwrap_or_default());
    session.start(200, 50, root, &env, &format!("PATH='{path}' exec '{}' -s '{socket}' notes.txt", kak.display()));

    // Bounded: 60 s for the whole run.
    let deadline = Instant::now() + Duration::from_secs(60);
    session.wait_for("the file on screen", deadline, |s| s.contains("line two"));
    // The user replaces line one and leaves it unsaved.
    session.keys(&["x", "H", "c"]);
    session.type_text(TYPED);
    session.keys(&["Escape"]);
    // Back in normal mode before the next key: an Escape followed at once
    // by ":" would reach Kakoune as Alt-:.
    session.wait_for("the typing, in normal mode", deadline, |s| s.contains(TYPED) && !s.contains(" insert ") && s.contains(" 1 sel "));
    if via == Via::Command {
        // The typing reaches the server before the ask does (kak-lsp sends
        // didChange when idle; this sends it now, ahead of the command).
        session.keys(&[":"]);
        session.type_text("lsp-did-change");
        session.keys(&["Enter"]);
        session.keys(&[":"]);
        session.type_text(r#"lsp-execute-command tandem.ask '[{"prompt":"Capitalise line three","wait":false}]'"#);
        session.keys(&["Enter"]);
    } else {
        session.keys(&["x", "J", ":"]);
        session.type_text("lsp-code-actions");
        session.keys(&["Enter"]);
        session.wait_for("the code action menu", deadline, |s| s.contains("Tandem: explain this code"));
        session.keys(&["Enter"]);
    }
    // Tandem's review prompt, queued by kak-lsp.
    session.wait_for("kak-lsp's pending request bell", deadline, |s| s.contains("🔔1"));
    if let Some(line) = typing.during {
        // The user goes on typing while the question waits: a new first line.
        session.keys(&["g", "g", "O"]);
        session.type_text(line);
        session.keys(&["Escape"]);
        session.wait_for("the line typed during the question, in normal mode", deadline, |s| s.contains(line) && !s.contains(" insert "));
        session.keys(&[":"]);
        session.type_text("lsp-did-change");
        session.keys(&["Enter"]);
    }
    session.keys(&[":"]);
    session.type_text("lsp-show-message-request-next");
    session.keys(&["Enter"]);
    let prompt_screen = session.wait_for("Tandem's prompt", deadline, |s| s.contains("Reject"));
    if !answer.is_empty() {
        session.type_text(answer);
    }
    session.keys(&["Enter"]);
    if let Some(line) = typing.after {
        // Once the edit is in the buffer, the user types a last line.
        session.wait_for("the edit in the buffer", deadline, |s| s.contains("LINE THREE"));
        session.keys(&["g", "e", "o"]);
        session.type_text(line);
        session.keys(&["Escape"]);
        session.wait_for("the line typed after the edit, in normal mode", deadline, |s| s.contains(line) && !s.contains(" insert "));
    }
    let records = loop {
        if let Some(records) = finished_thread(&data) {
            break records;
        }
        assert!(Instant::now() < deadline, "the run did not finish in 60 s; screen:\n{}", session.screen());
        std::thread::sleep(Duration::from_millis(50));
    };
    session.keys(&[":"]);
    session.type_text("scenario-report");
    session.keys(&["Enter"]);
    let modified = loop {
        if let Ok(text) = std::fs::read_to_string(out.join("modified.txt")) {
            if !text.is_empty() {
                break text;
            }
        }
        assert!(Instant::now() < deadline, "no report; screen:\n{}", session.screen());
        std::thread::sleep(Duration::from_millis(20));
    };
    let buffer = std::fs::read_to_string(out.join("buffer.txt")).expect("read the buffer report");
    let disk = workspace.disk();
    Outcome { buffer, modified, disk, records, prompt_screen }
}

/// The default mode: Tandem knows kak-lsp by its `clientInfo.name` and
/// reviews with its own prompt (kak-lsp would apply an annotated edit
/// without asking). "Apply": the agent read the unsaved buffer, its edit is
/// in the buffer next to the user's typing, the buffer is still modified,
/// the disk is untouched, and the edit is confirmed by kak-lsp's didChange.
fn kakoune_kak_lsp_applied_edit_lands_in_the_unsaved_buffer() {
    let Some((kak, tmux, kak_lsp)) = tools() else { return skip("kakoune_kak_lsp_applied_edit_lands_in_the_unsaved_buffer") };
    let outcome = run_kakoune(&kak, &tmux, &kak_lsp, "apply", Via::Command, "", Typing::default());
    assert!(outcome.prompt_screen.contains("Tandem: apply edit to notes.txt?"), "Tandem's prompt is on screen: {}", outcome.prompt_screen);
    assert_eq!(outcome.buffer, format!("{TYPED}\nline two\nLINE THREE\n"), "records: {:#?}", outcome.records);
    assert_eq!(outcome.modified, "true");
    assert_eq!(outcome.disk, ON_DISK, "Tandem never wrote the open file to disk");
    let results = tool_results(&outcome.records);
    assert!(results[0]["content"].as_str().unwrap_or_default().contains(TYPED), "the agent read the unsaved buffer: {:#}", results[0]);
    assert_eq!(results[1]["is_error"], false, "{:#}", results[1]);
    assert!(results[1]["content"].as_str().unwrap_or_default().contains("the change is in the editor, unsaved"), "{:#}", results[1]);
}

/// "Reject" in the menu: nothing lands, the disk is untouched, and the
/// model is told the user refused.
fn kakoune_kak_lsp_rejected_edit_changes_nothing() {
    let Some((kak, tmux, kak_lsp)) = tools() else { return skip("kakoune_kak_lsp_rejected_edit_changes_nothing") };
    let outcome = run_kakoune(&kak, &tmux, &kak_lsp, "reject", Via::Command, "Reject", Typing::default());
    assert_eq!(outcome.buffer, format!("{TYPED}\nline two\nline three\n"), "records: {:#?}", outcome.records);
    assert_eq!(outcome.modified, "true");
    assert_eq!(outcome.disk, ON_DISK);
    let results = tool_results(&outcome.records);
    assert_eq!(results[1]["is_error"], true, "{:#}", results[1]);
    assert!(results[1]["content"].as_str().unwrap_or_default().contains("the user chose Reject"), "{:#}", results[1]);
}

/// The server's code action, as kak-lsp runs it (`lsp-code-actions`, then
/// `lsp-execute-command` with the action's arguments, `"wait": false`):
/// the run starts with the action's prompt, and its edit is reviewed and
/// lands as above.
fn kakoune_kak_lsp_code_action_runs_and_its_edit_lands() {
    let Some((kak, tmux, kak_lsp)) = tools() else { return skip("kakoune_kak_lsp_code_action_runs_and_its_edit_lands") };
    let outcome = run_kakoune(&kak, &tmux, &kak_lsp, "codeaction", Via::CodeAction, "", Typing::default());
    let prompt = outcome.records.iter().find(|r| r["type"] == "prompt").map(|r| r["text"].clone());
    assert_eq!(prompt, Some(serde_json::json!("Explain this code.")), "the code action's prompt started the run");
    assert!(outcome.records.iter().any(|r| r["type"] == "run" && r["status"] == "completed"), "{:#?}", outcome.records);
    assert_eq!(outcome.buffer, format!("{TYPED}\nline two\nLINE THREE\n"), "records: {:#?}", outcome.records);
    assert_eq!(outcome.disk, ON_DISK);
    let results = tool_results(&outcome.records);
    assert_eq!(results[1]["is_error"], false, "{:#}", results[1]);
}

/// The user types a new first line while Tandem's question waits in
/// kak-lsp's queue, then chooses Apply, and types a last line once the edit
/// is in: the edit was computed before the typing, so Tandem rebases it
/// onto the new text (kak-lsp never checks versions: sent as it was, it
/// would land on the wrong line) and sends it for the new version; the
/// buffer holds all three of the user's lines and the edit, and the edit
/// is reported applied, once.
fn kakoune_kak_lsp_typing_during_and_after_the_question_keeps_everything() {
    let Some((kak, tmux, kak_lsp)) = tools() else { return skip("kakoune_kak_lsp_typing_during_and_after_the_question_keeps_everything") };
    let typing = Typing { during: Some("typed while asked"), after: Some("typed after the edit") };
    let outcome = run_kakoune(&kak, &tmux, &kak_lsp, "typing", Via::Command, "", typing);
    assert_eq!(outcome.buffer, format!("typed while asked\n{TYPED}\nline two\nLINE THREE\ntyped after the edit\n"), "records: {:#?}", outcome.records);
    assert_eq!(outcome.disk, ON_DISK, "Tandem never wrote the open file to disk");
    let results = tool_results(&outcome.records);
    let content = results[1]["content"].as_str().unwrap_or_default();
    assert_eq!(results[1]["is_error"], false, "{content}");
    assert!(content.contains("Note: the file changed in the editor while the edit waited to be applied (1 line added after line 0)"), "{content}");
    let edits = outcome.records.iter().find(|r| r["type"] == "edits").map(|r| r["edits"].clone());
    let statuses: Vec<serde_json::Value> = edits.as_ref().and_then(|e| e.as_array()).map(|e| e.iter().map(|e| e["status"].clone()).collect()).unwrap_or_default();
    assert_eq!(statuses, [serde_json::json!("applied")], "records: {:#?}", outcome.records);
}

/// This module's tests, in the order they start (see main.rs).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    crate::trials!(
        "kakoune":
        kakoune_kak_lsp_applied_edit_lands_in_the_unsaved_buffer,
        kakoune_kak_lsp_rejected_edit_changes_nothing,
        kakoune_kak_lsp_code_action_runs_and_its_edit_lands,
        kakoune_kak_lsp_typing_during_and_after_the_question_keeps_everything,
    )
}
