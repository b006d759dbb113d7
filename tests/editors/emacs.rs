//! End to end in a real Emacs with eglot: `emacs -nw` runs inside tmux (an
//! interactive session, so eglot's idle timers and prompts behave as for a
//! user), loads tests/emacs/ask_scenario.el, types unsaved text and asks
//! Tandem through eglot; this test answers eglot's own "Server wants to
//! edit … Proceed?" and Tandem's review prompt with keystrokes.
//!
//! One more runs `emacs --batch` (nothing to answer): a review's finding
//! in Flymake (tests/emacs/review_scenario.el).
//!
//! Needs `emacs` (28+) with Debian's elpa-eglot and `tmux`. `.ci/run`
//! installs them and sets `TANDEM_REQUIRE_EMACS=1`, so CI fails rather than
//! skips when they are missing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::notes;
use crate::common::tmux;
use notes::{read_then_edit, NotesWorkspace, ON_DISK};
use crate::common::tools::which;
use tmux::Tmux;

fn tools() -> Option<(PathBuf, PathBuf)> {
    let emacs = which("emacs")?;
    let tmux = which("tmux")?;
    let eglot = std::fs::read_dir("/usr/share/emacs/site-lisp/elpa").ok()?.flatten().any(|e| e.file_name().to_string_lossy().starts_with("eglot-"));
    eglot.then_some((emacs, tmux))
}

fn skip(name: &str) {
    crate::common::tools::skip(name, "TANDEM_REQUIRE_EMACS", "emacs with elpa-eglot and tmux are not installed");
}


struct Scenario {
    mode: &'static str,
    /// `nil` turns eglot's own confirmation off (SCENARIO_CONFIRM).
    confirm: &'static str,
    /// In order: text that shows a prompt on screen, and the keys that
    /// answer it.
    answers: Vec<(&'static str, Vec<&'static str>)>,
    /// `codeaction`: run the server's code action with eglot's synchronous
    /// `eglot-execute-command` (SCENARIO_VIA); else an asynchronous ask.
    via: &'static str,
    /// Emacs is busy this long after sending the code action's command
    /// (SCENARIO_BUSY_MS; 0: not).
    busy_ms: u64,
    /// A line the user types at the top while eglot's own confirmation is
    /// showing, which the scenario then answers y (SCENARIO_TYPE_DURING).
    type_during: Option<&'static str>,
    /// How long the user reads eglot's "Proceed?" before answering it.
    think: Duration,
}

struct Outcome {
    report: serde_json::Value,
    disk: String,
    results: Vec<serde_json::Value>,
    /// What the screen showed at each prompt.
    screens: Vec<String>,
}

fn run_emacs(emacs: &Path, tmux: &Path, name: &str, scenario: Scenario) -> Outcome {
    let workspace = NotesWorkspace::new();
    let (root, file) = (&workspace.root, &workspace.file);
    let script = workspace.write_script(&serde_json::json!({"turns": read_then_edit()}).to_string());
    let out = root.join(".git/report.json");
    // Each Emacs gets its own HOME: natively compiled Emacs writes its
    // eln-cache under ~/.emacs.d, and two Emacs compiling the same file
    // into one shared cache race on the rename (seen in CI: "Renaming: No
    // such file or directory … xterm-….eln").
    let home = tempfile::tempdir().expect("temp home");
    let scenario_el = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/emacs/ask_scenario.el");
    // Killed (with Emacs in it) however the test ends.
    let session = Tmux::new(tmux, format!("tandem-test-{}-{name}", std::process::id()));
    let env = [
        ("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem").to_string()),
        ("XDG_DATA_HOME", Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data").display().to_string()),
        ("TANDEM_PROVIDER", "scripted".into()),
        ("TANDEM_SCRIPT", script.display().to_string()),
        ("SCENARIO_FILE", file.display().to_string()),
        ("SCENARIO_TYPED", "typed by the user".into()),
        ("SCENARIO_MODE", scenario.mode.into()),
        ("SCENARIO_CONFIRM", scenario.confirm.into()),
        ("SCENARIO_VIA", scenario.via.into()),
        ("SCENARIO_BUSY_MS", scenario.busy_ms.to_string()),
        ("SCENARIO_TYPE_DURING", scenario.type_during.unwrap_or_default().to_string()),
        ("SCENARIO_PROMPT", "Capitalise line three".into()),
        ("SCENARIO_OUT", out.display().to_string()),
        ("TERM", "xterm-256color".into()),
        ("HOME", home.path().display().to_string()),
    ];
    session.start(200, 50, root, &env, &format!("'{}' -nw -Q -l '{}'", emacs.display(), scenario_el.display()));

    // Answer each prompt when it is on screen; then wait for the report.
    // Bounded: 120 s for the whole run, which takes a few seconds even
    // beside four code-servers. (A run once seen not ended at 60 s, the
    // edit on screen, was not slow: eglot had lost its place in the
    // server's output; see the busy tests below.)
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut answers = scenario.answers.into_iter();
    let mut next = answers.next();
    let mut screens = Vec::new();
    let mut last_screen = String::new();
    // The keystroke after the edit showed, and when it was last sent.
    let mut keystroke: Option<(Vec<&str>, Instant)> = None;
    while !out.exists() {
        assert!(Instant::now() < deadline, "the run did not finish in 120 s; screen:\n{last_screen}");
        last_screen = session.screen();
        if let Some((prompt, keys)) = &next {
            if last_screen.contains(prompt) {
                screens.push(last_screen.clone());
                if *prompt == EGLOT_CONFIRM {
                    std::thread::sleep(scenario.think);
                }
                session.keys(keys);
                if keys.contains(&KEYSTROKE) {
                    keystroke = Some((vec![KEYSTROKE], Instant::now()));
                }
                next = answers.next();
                continue;
            }
        }
        // A user goes on typing: eglot's idle timer for the edit's
        // didChange may have been set after the keystroke was read (a
        // loaded machine), and then only a later keystroke sends it.
        if let Some((keys, at)) = &mut keystroke {
            if at.elapsed() > Duration::from_secs(3) {
                session.keys(keys);
                *at = Instant::now();
            }
        }
        // Waiting on the screen: tmux has no event for "the pane changed".
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(next.as_ref().is_none_or(|(prompt, _)| *prompt == EDIT_SHOWN), "a prompt never appeared: {next:?}; screen:\n{last_screen}");
    // Emacs writes the report, then exits.
    let report: serde_json::Value = loop {
        if let Ok(text) = std::fs::read_to_string(&out) {
            if let Ok(report) = serde_json::from_str(&text) {
                break report;
            }
        }
        assert!(Instant::now() < deadline, "no complete report");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(report["errors"], serde_json::json!([]), "report: {report:#}");
    let results = report["events"].as_array().expect("events").iter().filter(|e| e["type"] == "tool_result").cloned().collect();
    let disk = workspace.disk();
    Outcome { report, disk, results, screens }
}

const EGLOT_CONFIRM: &str = "Proceed? (y or n)";

/// "y" to eglot's confirmation, then, once the edit shows in the buffer,
/// the user's next keystroke: eglot 1.9 sends the edit's didChange from an
/// idle timer, and a timer set while Emacs is already idle waits for input.
/// Both keys at once raced on a loaded machine (CI: the edit on screen, no
/// didChange, the run never confirmed).
fn yes_then_a_keystroke() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![(EGLOT_CONFIRM, vec!["y"]), (EDIT_SHOWN, vec![KEYSTROKE])]
}

/// The user's keystroke after an edit: the cursor one to the right,
/// leaving the text alone. Sent again every 3 s until the run ends.
const KEYSTROKE: &str = "C-f";

/// The edited line in the buffer. Not a prompt: a run that ended before the
/// test saw it needed no keystroke.
const EDIT_SHOWN: &str = "LINE THREE";

/// acceptEdits: eglot still asks ("Server wants to edit … Proceed?"); "y"
/// and the user's next keystroke (eglot sends didChange when idle after
/// one). The unsaved typing and the agent's edit are both in the buffer,
/// the disk is untouched, the edit is confirmed.
fn emacs_eglot_confirmed_edit_lands_in_the_unsaved_buffer() {
    let Some((emacs, tmux)) = tools() else { return skip("emacs_eglot_confirmed_edit_lands_in_the_unsaved_buffer") };
    let outcome = run_emacs(
        &emacs,
        &tmux,
        "confirm",
        Scenario { mode: "acceptEdits", confirm: "confirm", answers: yes_then_a_keystroke(), via: "ask", busy_ms: 0, type_during: None, think: Duration::ZERO },
    );
    let report = &outcome.report;
    assert_eq!(report["buffer"], "typed by the user\nline two\nLINE THREE\n", "report: {report:#}");
    assert_eq!(report["modified"], true);
    assert_eq!(outcome.disk, ON_DISK, "Tandem never wrote the open file to disk");
    assert!(outcome.results[0]["content"].as_str().unwrap_or_default().contains("typed by the user"), "the agent read the unsaved buffer");
    assert_eq!(outcome.results[1]["is_error"], false, "{:#}", outcome.results[1]);
    assert_eq!(report["result"]["edits"][0]["status"], "applied", "{report:#}");
}

/// "n" at eglot's prompt: eglot answers with a JSON-RPC error; nothing
/// lands, and the model is told what the editor said.
fn emacs_eglot_refused_edit_is_reported_with_eglots_words() {
    let Some((emacs, tmux)) = tools() else { return skip("emacs_eglot_refused_edit_is_reported_with_eglots_words") };
    let outcome = run_emacs(
        &emacs,
        &tmux,
        "refuse",
        Scenario { mode: "acceptEdits", confirm: "confirm", answers: vec![(EGLOT_CONFIRM, vec!["n"])], via: "ask", busy_ms: 0, type_during: None, think: Duration::ZERO },
    );
    let report = &outcome.report;
    assert_eq!(report["buffer"], "typed by the user\nline two\nline three\n", "report: {report:#}");
    assert_eq!(outcome.disk, ON_DISK);
    let content = outcome.results[1]["content"].as_str().unwrap_or_default();
    assert_eq!(outcome.results[1]["is_error"], true, "{content}");
    assert!(content.contains("the editor refused the edit: User cancelled server edit"), "{content}");
}

/// The default mode with `eglot-confirm-server-initiated-edits` nil (the
/// README's advice): one review, Tandem's own prompt (eglot has no change
/// annotations) offering "Apply" first, taken with Enter; eglot does not
/// ask again.
fn emacs_default_mode_reviews_once_with_confirmation_off() {
    let Some((emacs, tmux)) = tools() else { return skip("emacs_default_mode_reviews_once_with_confirmation_off") };
    let outcome = run_emacs(
        &emacs,
        &tmux,
        "review",
        Scenario { mode: "default", confirm: "nil", answers: vec![("Choose an option: Apply", vec!["Enter", KEYSTROKE])], via: "ask", busy_ms: 0, type_during: None, think: Duration::ZERO },
    );
    let report = &outcome.report;
    assert!(outcome.screens[0].contains("notes.txt"), "the prompt names the file: {}", outcome.screens[0]);
    assert_eq!(report["buffer"], "typed by the user\nline two\nLINE THREE\n", "report: {report:#}");
    assert_eq!(outcome.disk, ON_DISK);
    assert_eq!(report["result"]["edits"][0]["status"], "applied", "{report:#}");
}

/// eglot runs code actions with the synchronous `eglot-execute-command`,
/// which gives up after 10 s and sends no `didChange` while it waits. The
/// server's code actions ask with `"wait": false`: the command returns at
/// once with the run id, the edit is confirmed by eglot's `didChange`, and
/// the run ends with the `end` event.
fn emacs_eglot_code_action_returns_at_once_and_the_edit_is_confirmed() {
    let Some((emacs, tmux)) = tools() else { return skip("emacs_eglot_code_action_returns_at_once_and_the_edit_is_confirmed") };
    let outcome = run_emacs(
        &emacs,
        &tmux,
        "codeaction",
        Scenario { mode: "acceptEdits", confirm: "confirm", answers: yes_then_a_keystroke(), via: "codeaction", busy_ms: 0, type_during: None, think: Duration::ZERO },
    );
    let report = &outcome.report;
    assert_eq!(report["result"]["runId"], "run-1", "the command answered at once: {report:#}");
    assert!(report["result"].get("status").is_none(), "an answer at once, not the run's end: {report:#}");
    assert_eq!(report["end"]["status"], "completed", "{report:#}");
    assert_eq!(report["buffer"], "typed by the user\nline two\nLINE THREE\n", "report: {report:#}");
    assert_eq!(outcome.disk, ON_DISK);
    assert_eq!(outcome.results[1]["is_error"], false, "the edit was confirmed: {:#}", outcome.results[1]);
}

/// Emacs busy for 500 ms after sending the code action's command (longer
/// than the server's pause after its answer), reading its output in 1 MB
/// pieces: the answer and the server's `workspace/configuration` behind it
/// come in one read, and eglot's jsonrpc handles nothing after the answer.
/// The log message the server sends a second later makes it read on; the
/// run starts once the request is answered.
fn emacs_eglot_busy_after_a_code_action_still_gets_the_runs_edit() {
    busy_code_action("emacs_eglot_busy_after_a_code_action_still_gets_the_runs_edit", "busy", Duration::ZERO);
}

/// As above, and the user reads eglot's "Proceed?" for 3 s before the
/// "y". eglot asks inside its process filter, and Emacs 28's jsonrpc runs
/// the filter again for output that arrives while it asks, inserting it
/// where the edit's message ends, ahead of bytes already waiting: the log
/// messages the server used to send while the run lasted (one a second
/// after the answer, then 2 s later) came then, and when the first had
/// been read as its header alone (written apart from its body), eglot
/// never found a message start again and the run's `end` went unread. 2 of
/// 4 runs failed so on a quiet machine; the whole busy test above failed
/// so, rarely, beside four code-servers. Now nothing unasked follows the
/// run's start and every frame goes in one write.
fn emacs_eglot_busy_after_a_code_action_and_slow_to_answer_still_reads_the_runs_end() {
    busy_code_action("emacs_eglot_busy_after_a_code_action_and_slow_to_answer_still_reads_the_runs_end", "slowanswer", Duration::from_secs(3));
}

/// Emacs busy for 500 ms after the code action's command, the user taking
/// `think` at eglot's "Proceed?": the run ends completed, its edit applied.
fn busy_code_action(test: &str, name: &str, think: Duration) {
    let Some((emacs, tmux)) = tools() else { return skip(test) };
    let outcome = run_emacs(
        &emacs,
        &tmux,
        name,
        Scenario { mode: "acceptEdits", confirm: "confirm", answers: yes_then_a_keystroke(), via: "codeaction", busy_ms: 500, type_during: None, think },
    );
    let report = &outcome.report;
    assert_eq!(report["result"]["runId"], "run-1", "{report:#}");
    assert_eq!(report["end"]["status"], "completed", "{report:#}");
    assert_eq!(report["buffer"], "typed by the user\nline two\nLINE THREE\n", "report: {report:#}");
    assert_eq!(outcome.results[1]["is_error"], false, "{:#}", outcome.results[1]);
}

/// The user types a line at the top of the file while eglot asks "Server
/// wants to edit … Proceed?", then answers y: eglot refuses the edit, its
/// version being stale ("Edits on `notes.txt' require version …"); Tandem
/// rebases the edit onto the new text (the typed line is apart from the
/// edited one) and sends it again, eglot asks again, and the edit lands
/// next to both of the user's lines, reported applied. Then the user types
/// after the edit landed: still applied.
fn emacs_eglot_typing_during_the_offer_is_rebased_and_the_edit_lands() {
    let Some((emacs, tmux)) = tools() else { return skip("emacs_eglot_typing_during_the_offer_is_rebased_and_the_edit_lands") };
    let outcome = run_emacs(
        &emacs,
        &tmux,
        "typeduring",
        Scenario { mode: "acceptEdits", confirm: "confirm", answers: vec![], via: "ask", busy_ms: 0, type_during: Some("typed during the offer"), think: Duration::ZERO },
    );
    let report = &outcome.report;
    assert_eq!(report["buffer"], "typed during the offer\ntyped by the user\nline two\nLINE THREE\n", "report: {report:#}");
    assert_eq!(outcome.disk, ON_DISK, "Tandem never wrote the open file to disk");
    assert_eq!(report["confirms"], 2, "eglot asked again for the rebased edit: {report:#}");
    let (is_error, content) = (&outcome.results[1]["is_error"], outcome.results[1]["content"].as_str().unwrap_or_default());
    assert_eq!(is_error, false, "{content}");
    assert!(content.contains("Note: the file changed in the editor while the edit waited to be applied (1 line added after line 0)"), "{content}");
    assert_eq!(report["result"]["edits"][0]["status"], "applied", "{report:#}");
    assert_eq!(report["result"]["edits"].as_array().map(Vec::len), Some(1), "one edit, one entry: {report:#}");
}

/// This module's tests, in the order they start (see main.rs).
/// A review's finding in Flymake: eglot (in `emacs --batch`: nothing to
/// answer) sends `tandem.review` of notes.txt, and Flymake, eglot's
/// diagnostics front end, shows the finding on its line as a warning, its
/// source and kind in the text (tests/emacs/review_scenario.el).
fn emacs_eglot_flymake_shows_a_review_finding() {
    let Some((emacs, _)) = tools() else { return skip("emacs_eglot_flymake_shows_a_review_finding") };
    let workspace = NotesWorkspace::new();
    let script = workspace.write_script(
        &serde_json::json!({"turns": [
            {"text": "", "tool_calls": [{"name": "report_finding", "input": {"file_path": "notes.txt", "start_line": 2, "end_line": 2, "severity": "warning",
                "kind": "style", "title": "line two should shout", "body": "The others will."}}]},
            {"text": "1 finding."}
        ]})
        .to_string(),
    );
    let out = workspace.root.join(".git/report.json");
    let home = tempfile::tempdir().expect("temp home");
    let status = std::process::Command::new(&emacs)
        .args(["--batch", "-Q", "-l"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/emacs/review_scenario.el"))
        .current_dir(&workspace.root)
        .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"))
        .env("XDG_DATA_HOME", Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"))
        .env("TANDEM_PROVIDER", "scripted")
        .env("TANDEM_SCRIPT", &script)
        .env("SCENARIO_FILE", &workspace.file)
        .env("SCENARIO_OUT", &out)
        .env("HOME", home.path())
        .stdin(std::process::Stdio::null())
        .status()
        .expect("run emacs");
    assert!(status.success(), "emacs exited with {status}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("the scenario wrote its report")).expect("JSON");
    assert_eq!(report["errors"], serde_json::json!([]), "{report:#}");
    assert_eq!(report["status"], "completed", "{report:#}");
    assert_eq!(
        report["diagnostics"],
        serde_json::json!([{"line": 2, "type": "eglot-warning", "text": "tandem review [style]: line two should shout\n\nThe others will."}]),
        "{report:#}"
    );
}

pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    crate::trials!(
        "emacs":
        emacs_eglot_flymake_shows_a_review_finding,
        emacs_eglot_busy_after_a_code_action_and_slow_to_answer_still_reads_the_runs_end,
        emacs_eglot_confirmed_edit_lands_in_the_unsaved_buffer,
        emacs_eglot_refused_edit_is_reported_with_eglots_words,
        emacs_default_mode_reviews_once_with_confirmation_off,
        emacs_eglot_code_action_returns_at_once_and_the_edit_is_confirmed,
        emacs_eglot_busy_after_a_code_action_still_gets_the_runs_edit,
        emacs_eglot_typing_during_the_offer_is_rebased_and_the_edit_lands,
    )
}
