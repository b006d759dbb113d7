//! End to end in a real editor: a headless Neovim runs the plugin in
//! `editors/nvim`, starts `tandem lsp`, and asks the scripted model to edit a
//! file — while the "user" has unsaved text in it and types again mid-run,
//! and, separately, in a buffer without unsaved changes that the plugin
//! saves on `tandem/saveDocuments`.
//!
//! Neovim answers `applied: true` even when it skips an edit whose version is
//! stale; these tests show the server notices, the model re-reads, and the
//! user's text survives.
//!
//! avante.nvim, a second Neovim ACP client, drives `tandem acp` the same
//! way (tests/nvim/avante_scenario.lua): the final newline its reads drop,
//! its unanswered write after E37, its second process on a running thread.
//! It is not part of this repository and nothing here fetches it: the tests
//! find it (with plenary.nvim and nui.nvim) in `TANDEM_AVANTE` or the tools
//! cache's `avante/`, and skip, saying so, when it is absent. So with
//! lazy.nvim (`TANDEM_LAZY_NVIM` or the cache's `lazy.nvim/`), for the test
//! of the install lines `:help tandem-install` gives.
//!
//! Needs `nvim` 0.11+ on PATH, or the binaries listed in `TANDEM_NVIMS`:
//! each test runs once per Neovim. `.ci/run` installs 0.11.4 and 0.12-dev,
//! lists both and sets `TANDEM_REQUIRE_NVIM=1`, so CI fails rather than skips
//! when one is missing.

use std::path::Path;
use std::process::Command;

use crate::common::notes;
use crate::common::review_fuzz;
use notes::{read_then_edit, NotesWorkspace, ON_DISK};

/// The Neovims to run each test with: the binaries `TANDEM_NVIMS` names
/// (separated by `:`; `.ci/run` names 0.11 and 0.12-dev, which differ in
/// what they advertise, e.g. change annotations), else `nvim` on PATH. None
/// (after saying so) when there is no supported one; with
/// `TANDEM_REQUIRE_NVIM` set, a missing or unsupported one fails the test.
fn nvims(test: &str) -> Vec<std::path::PathBuf> {
    let wanted: Vec<std::path::PathBuf> = match std::env::var("TANDEM_NVIMS") {
        Ok(list) if !list.is_empty() => list.split(':').map(std::path::PathBuf::from).collect(),
        _ => which("nvim").into_iter().collect(),
    };
    let mut found = Vec::new();
    for nvim in wanted {
        let version = Command::new(&nvim).arg("--version").output().map(|o| String::from_utf8_lossy(&o.stdout).to_string()).unwrap_or_default();
        if is_supported_nvim(&version) {
            // Shown with the test's output when it fails: which Neovim it was.
            eprintln!("{test}: with {} ({})", version.lines().next().unwrap_or_default(), nvim.display());
            found.push(nvim);
        } else {
            assert!(std::env::var_os("TANDEM_REQUIRE_NVIM").is_none(), "TANDEM_REQUIRE_NVIM is set but {} is not Neovim 0.11+", nvim.display());
        }
    }
    if found.is_empty() {
        skip(test);
    }
    found
}

/// True for Neovim 0.11 or newer, from the first line of `nvim --version`
/// ("NVIM v0.11.4", "NVIM v0.12.0-dev-…").
fn is_supported_nvim(version: &str) -> bool {
    let Some(number) = version.lines().next().and_then(|line| line.strip_prefix("NVIM v")) else { return false };
    let mut parts = number.split(['.', '-']).map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (0, 11)
}

fn only_neovim_0_11_or_newer_is_accepted() {
    assert!(is_supported_nvim("NVIM v0.11.4\nBuild type: Release"));
    assert!(is_supported_nvim("NVIM v0.12.0-dev-1234+gabc"));
    assert!(is_supported_nvim("NVIM v1.0.0"));
    assert!(!is_supported_nvim("NVIM v0.10.4"));
    assert!(!is_supported_nvim("NVIM v0.1.7"));
    assert!(!is_supported_nvim("VIM - Vi IMproved 9.0"));
}

use crate::common::tools::which;

struct Scenario {
    /// Text the user types on line 1 before asking, left unsaved ("" for none).
    typed: &'static str,
    /// Neovim's didChange debounce in milliseconds.
    debounce_ms: u64,
    /// The scripted model's turns; `{nvim}` in a string is replaced by the
    /// nvim binary's path, `{address}` by the editor's RPC address.
    turns: serde_json::Value,
    /// More environment for the scenario script (SCENARIO_MODE,
    /// SCENARIO_REVIEW, SCENARIO_VIA, SCENARIO_LAYOUT).
    env: Vec<(&'static str, &'static str)>,
}

struct Outcome {
    report: serde_json::Value,
    disk: String,
    /// The tool_result events, in order.
    results: Vec<serde_json::Value>,
    /// The names in the workspace's root after the run.
    files: Vec<String>,
}

/// Run `tests/nvim/LUA` in a headless Neovim in `workspace`, with the
/// scripted model replaying `script` and `env` besides; the scenario's
/// report, checked for errors.
fn run_scenario<'a>(workspace: &NotesWorkspace, nvim: &Path, lua: &str, script: &str, env: impl IntoIterator<Item = (&'a str, &'a std::ffi::OsStr)>) -> serde_json::Value {
    let script_path = workspace.write_script(script);
    let out = workspace.root.join(".git/report.json");
    let status = Command::new(nvim)
        .args(["--headless", "--clean", "-u", "NONE", "-l"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim").join(lua))
        .current_dir(&workspace.root)
        .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"))
        .env("XDG_DATA_HOME", Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"))
        .env("TANDEM_PLUGIN", Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim"))
        .env("TANDEM_PROVIDER", "scripted")
        .env("TANDEM_SCRIPT", &script_path)
        .env("SCENARIO_FILE", &workspace.file)
        .env("SCENARIO_OUT", &out)
        .envs(env)
        .status()
        .expect("run nvim");
    assert!(status.success(), "nvim exited with {status}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("the scenario wrote its report")).expect("report is JSON");
    assert_eq!(report["errors"], serde_json::json!([]), "report: {report:#}");
    report
}

/// Runs a scenario in a headless Neovim on a workspace holding `notes.txt`.
fn run_nvim(nvim: &Path, scenario: Scenario) -> Outcome {
    let workspace = NotesWorkspace::new();
    // The editor's RPC address, fixed in advance: shell commands get an
    // allow-listed environment, so it is written into the script itself.
    let address = workspace.root.join(".git/nvim.sock");
    let turns = scenario
        .turns
        .to_string()
        .replace("{nvim}", &nvim.display().to_string().replace('"', "\\\""))
        .replace("{address}", &address.display().to_string().replace('"', "\\\""));
    let debounce = scenario.debounce_ms.to_string();
    let env = [
        ("SCENARIO_TYPED", scenario.typed.as_ref()),
        ("SCENARIO_PROMPT", "Capitalise line three".as_ref()),
        ("SCENARIO_NVIM_ADDR", address.as_os_str()),
        ("SCENARIO_DEBOUNCE", debounce.as_ref()),
    ]
    .into_iter()
    .chain(scenario.env.iter().map(|&(key, value)| (key, value.as_ref())));
    let report = run_scenario(&workspace, nvim, "ask_scenario.lua", &format!("{{\"turns\": {turns}}}"), env);
    let cancels = scenario.env.iter().any(|&(key, value)| key == "SCENARIO_REVIEW" && value.starts_with("Cancel"));
    if !cancels {
        assert_eq!(report["result"]["status"], "completed", "report: {report:#}");
    }
    let results = report["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .cloned()
        .collect();
    let disk = workspace.disk();
    let files = std::fs::read_dir(&workspace.root)
        .expect("list the workspace")
        .map(|entry| entry.expect("a workspace entry").file_name().to_string_lossy().into_owned())
        .collect();
    Outcome { report, disk, results, files }
}

/// Read, let the user type mid-run (through Neovim's own RPC server, as a
/// keystroke would), edit (refused), re-read, edit again.
fn typing_race(debounce_ms: u64) -> Scenario {
    let type_mid_run = r#""{nvim}" --server "{address}" --remote-expr 'setline(2, "user typed again")'"#;
    Scenario {
        typed: "typed by the user",
        debounce_ms,
        turns: serde_json::json!([
            {"text": "Reading the file.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
            {"text": "Meanwhile the user types.", "tool_calls": [{"name": "run_shell", "input": {"command": type_mid_run}}]},
            {"text": "Editing.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "line three", "new_string": "LINE THREE"}}]},
            {"text": "Re-reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
            {"text": "Editing again.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "line three", "new_string": "LINE THREE"}}]},
            {"text": "Done."}
        ]),
        env: vec![],
    }
}

/// What every typing race must end with; returns the stale edit's result.
fn assert_race_survived(outcome: &Outcome) -> String {
    let report = &outcome.report;
    assert_eq!(
        report["buffer"],
        serde_json::json!(["typed by the user", "user typed again", "LINE THREE"]),
        "the user's unsaved text and the agent's edit are both in the buffer; report: {report:#}"
    );
    assert_eq!(report["modified"], true, "the buffer had unsaved user edits, so it stays unsaved");
    assert_eq!(outcome.disk, ON_DISK, "Tandem never wrote the open file to disk");
    let results = &outcome.results;
    assert_eq!(results.len(), 5, "report: {report:#}");
    let first_read = results[0]["content"].as_str().unwrap_or_default();
    assert!(first_read.contains("typed by the user"), "the agent read the unsaved buffer, not the disk: {first_read}");
    assert_eq!(results[2]["is_error"], true, "the stale edit is refused: {:#}", results[2]);
    assert_eq!(results[4]["is_error"], false, "the edit after re-reading applies: {:#}", results[4]);
    results[2]["content"].as_str().unwrap_or_default().to_string()
}

/// With Neovim's usual debounce the user's typing and the agent's edit race.
/// The didChange may reach the server before its version check (refused
/// before sending), between that check and the applyEdit (superseded), or
/// after Neovim skipped the stale edit while answering `applied: true`
/// (caught by the check of the buffer). Every way, the user's text survives
/// and the model is told. (tests/integration/lsp.rs pins each path down with a
/// scripted client.)
fn neovim_typing_mid_run_survives_whichever_way_the_race_goes() {
    for nvim in nvims("neovim_typing_mid_run_survives_whichever_way_the_race_goes") {
        let stale = assert_race_survived(&run_nvim(&nvim, typing_race(150)));
        assert!(
            stale.contains("was modified externally since your last read (line 2 changed)")
                // The didChange came between the tool's check and the write's.
                || stale.contains("was modified externally since your last read (the user edited it in the editor: line 2 changed)")
                || stale.contains("was superseded by a user edit")
                // The plugin refused the stale edit: the user's line is beside the edit's.
                || stale.contains("the file changed in the editor while the edit waited for its review or to be sent (line 2 changed"),
            "{stale}"
        );
    }
}

/// Neovim holds its didChange back (a long debounce), so the server sends an
/// edit for the old version. Neovim itself would skip it yet answer
/// `applied: true` (and apply it to the wrong lines at version 0); the
/// plugin checks the buffer's version first, sends its pending didChange and
/// refuses, naming both versions; the user's change is on the line beside
/// the edit's, so it is not rebased, and the model is told why.
fn neovim_plugin_refuses_a_stale_edit_and_the_model_is_told_why() {
    for nvim in nvims("neovim_plugin_refuses_a_stale_edit_and_the_model_is_told_why") {
        let stale = assert_race_survived(&run_nvim(&nvim, typing_race(3000)));
        assert!(stale.contains("the file changed in the editor while the edit waited for its review or to be sent (line 2 changed; the editor said: the document changed while the edit was reviewed or on its way: notes.txt is at version"), "{stale}");
    }
}

/// A buffer without unsaved user changes: after the agent's edit the server
/// asks the plugin to save it (`tandem/saveDocuments`), so the next shell
/// command sees the change on disk.
fn neovim_saves_a_clean_buffer_after_the_agent_edits_it() {
    for nvim in nvims("neovim_saves_a_clean_buffer_after_the_agent_edits_it") {
        let outcome = run_nvim(
            &nvim,
            Scenario {
                typed: "",
                debounce_ms: 150,
                turns: serde_json::json!([
                    {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
                    {"text": "Editing.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "line three", "new_string": "LINE THREE"}}]},
                    {"text": "Checking the disk.", "tool_calls": [{"name": "run_shell", "input": {"command": "cat notes.txt"}}]},
                    {"text": "Done."}
                ]),
                env: vec![],
            },
        );
        let report = &outcome.report;
        assert_eq!(report["buffer"], serde_json::json!(["line one", "line two", "LINE THREE"]), "report: {report:#}");
        assert_eq!(report["modified"], false, "the plugin saved the buffer");
        assert_eq!(outcome.disk, "line one\nline two\nLINE THREE\n");
        assert_eq!(outcome.results[1]["is_error"], false, "{:#}", outcome.results[1]);
        let edit = outcome.results[1]["content"].as_str().unwrap_or_default();
        assert!(!edit.contains("unsaved"), "the server saw the didSave, so the edit is reported saved: {edit}");
        let shell = outcome.results[2]["content"].as_str().unwrap_or_default();
        assert!(shell.contains("LINE THREE"), "the shell command saw the saved edit: {shell}");
    }
}

/// The plugin's transcript, messages, statusline, help and health check,
/// as the report of a run through the plugin gives them.
fn lines(report: &serde_json::Value, key: &str) -> Vec<String> {
    report[key].as_array().map(|a| a.iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect()).unwrap_or_default()
}

fn messages(report: &serde_json::Value) -> Vec<String> {
    report["messages"].as_array().map(|a| a.iter().map(|m| m["message"].as_str().unwrap_or_default().to_string()).collect()).unwrap_or_default()
}


/// A [`read_then_edit`] run with nothing typed, in the default mode (the
/// edit is reviewed), with `env` besides (SCENARIO_REVIEW, …).
fn reviewed_edit(nvim: &Path, env: &[(&'static str, &'static str)]) -> Outcome {
    let env = [&[("SCENARIO_MODE", "default")], env].concat();
    run_nvim(nvim, Scenario { typed: "", debounce_ms: 150, turns: read_then_edit(), env })
}

/// What the plugin says when the server withdraws its review.
const REVIEW_WITHDRAWN: &str = "Tandem: the review was withdrawn (the run was cancelled or stopped waiting); the edit was not applied";

/// The buffer and the disk hold what they held before the run.
fn assert_nothing_landed(outcome: &Outcome) {
    let report = &outcome.report;
    assert_eq!(report["buffer"], serde_json::json!(["line one", "line two", "line three"]), "nothing landed: {report:#}");
    assert_eq!(outcome.disk, ON_DISK);
}

/// The plugin's help file.
fn help_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim/doc/tandem.txt")).expect("doc/tandem.txt")
}

/// The keys the legend in `:help tandem-review` names: the indented block
/// after "the keys at its top:", whose columns (two spaces or more apart)
/// start with their keys (single characters or `<Name>`), then say what
/// they do.
fn help_review_keys(help: &str) -> Vec<String> {
    let block = help.split_once("the keys at its\ntop:\n").map(|(_, rest)| rest).expect("the review's key legend in the help");
    let is_key = |token: &str| token.chars().count() == 1 || (token.starts_with('<') && token.ends_with('>'));
    let mut keys = Vec::new();
    for line in block.lines().take_while(|l| l.starts_with("    ")) {
        for column in line.split("  ").map(str::trim).filter(|c| !c.is_empty()) {
            keys.extend(column.split_whitespace().take_while(|t| is_key(t)).map(str::to_string));
        }
    }
    assert!(keys.len() >= 8, "the legend names the review's keys: {keys:?}");
    keys
}

/// The keys `:help tandem-chat` names for the prompt area: the `<Name>`
/// words of the first column of the indented block after "In the prompt
/// area:" (its other entries, `@path`, `#buffer`…, are mentions).
fn help_chat_keys(help: &str) -> Vec<String> {
    let block = help.split_once("In the prompt area:\n").map(|(_, rest)| rest).expect("the chat's keys in the help");
    let mut keys = Vec::new();
    for line in block.lines().take_while(|l| l.starts_with("    ")).filter(|l| !l.starts_with("     ")) {
        let column = line.trim_start().split("  ").next().unwrap_or_default();
        keys.extend(column.split_whitespace().filter(|t| t.starts_with('<') && t.ends_with('>')).map(str::to_string));
    }
    assert!(keys.len() >= 4, "the help names the chat's keys: {keys:?}");
    keys
}

/// The `/` commands `:help tandem-chat` lists (`new`, `resume`, …).
fn help_chat_commands(help: &str) -> Vec<String> {
    let block = help.split_once("(`//text` sends `/text`):\n").map(|(_, rest)| rest).expect("the chat's commands in the help");
    let commands: Vec<String> = block
        .lines()
        .take_while(|l| l.starts_with("    "))
        .filter_map(|l| l.trim_start().strip_prefix('/')?.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(commands.len() >= 5, "the help lists the chat's commands: {commands:?}");
    commands
}

/// The keys `:help tandem-review` names for the side-by-side review: "the
/// keys (A, R, !, q, shown in the winbar)".
fn help_split_review_keys(help: &str) -> Vec<String> {
    let list = help
        .split_once("the keys (")
        .and_then(|(_, rest)| rest.split_once(", shown in the winbar)"))
        .map(|(list, _)| list)
        .expect("the split review's keys in the help");
    list.split(',').map(|k| k.trim().to_string()).collect()
}

/// `named` (the help's) and `answered` (a buffer's normal-mode maps, whose
/// `lhs` Neovim spells `<C-C>`) are the same keys.
fn assert_same_keys(what: &str, named: &[String], answered: &[String]) {
    let norm = |keys: &[String]| {
        let mut keys: Vec<String> = keys.iter().map(|k| if k.starts_with('<') { k.to_uppercase() } else { k.clone() }).collect();
        keys.sort();
        keys.dedup();
        keys
    };
    assert_eq!(norm(named), norm(answered), "{what}: the keys :help names (left) and the keys the buffer answers (right)");
}

/// The default permission mode through the plugin: the server marks the
/// edit for review (the plugin advertises change annotations), the plugin
/// opens its review window (focused, floating, the keys at its top, the
/// diff hunk by hunk); "A" (apply all) applies it. Around it: the statusline, the framed transcript with a link
/// to the changed line, the end message, "no run is active", `:help` with
/// no `:helptags` and `:checkhealth tandem`.
fn neovim_reviews_an_edit_with_its_diff_before_applying_it() {
    for nvim in nvims("neovim_reviews_an_edit_with_its_diff_before_applying_it") {
        let outcome = reviewed_edit(&nvim, &[("SCENARIO_REVIEW", "Apply"), ("SCENARIO_VIA", "plugin")]);
        let report = &outcome.report;
        let reviews = report["reviews"].as_array().expect("reviews");
        assert_eq!(reviews.len(), 1, "one edit, one review: {report:#}");
        let review = &reviews[0];
        assert_eq!(review["status"], "Tandem: review", "the statusline says a review is open");
        let preview = &review["preview"][0];
        assert_eq!(preview["floating"], true, "{review:#}");
        assert_eq!(preview["focused"], true, "the review window takes the focus: {review:#}");
        let diff = lines(preview, "lines");
        assert!(diff[0].starts_with("a apply hunk  r reject hunk  A apply all  R reject all"), "the keys are shown: {diff:#?}");
        assert!(diff.contains(&"> hunk 1/1  notes.txt line 3  [undecided]".to_string()), "{diff:#?}");
        assert!(diff.contains(&"-line three".to_string()) && diff.contains(&"+LINE THREE".to_string()), "{diff:#?}");
        assert_eq!(report["buffer"], serde_json::json!(["line one", "line two", "LINE THREE"]), "report: {report:#}");
        assert_eq!(outcome.results[1]["is_error"], false, "{:#}", outcome.results[1]);
        assert_eq!(report["result"]["edits"][0]["status"], "applied");

        let transcript = lines(report, "transcript");
        assert_eq!(transcript.first().map(String::as_str), Some("## Capitalise line three"), "{transcript:#?}");
        assert!(transcript.contains(&"**— completed —**".to_string()), "{transcript:#?}");
        assert!(transcript.contains(&"- applied: notes.txt:3".to_string()), "the edit links to its line: {transcript:#?}");
        assert!(transcript.iter().any(|l| l == "→ `edit_file notes.txt`"), "{transcript:#?}");

        let messages = messages(report);
        assert!(messages.contains(&"Tandem: run completed. 1 edit: 1 applied. Changed: notes.txt line 3.".to_string()), "{messages:#?}");
        assert!(messages.contains(&"Tandem: no run is active".to_string()), "{messages:#?}");
        assert!(messages.contains(&"Tandem: attached".to_string()), "{messages:#?}");
        assert_eq!(report["status_idle"], "Tandem");
        assert_eq!(report["status_after"], "Tandem");

        assert_eq!(report["help_ok"], true, ":help tandem-review works without :helptags: {report:#}");
        // What :help names is what the plugin has, and the other way round.
        let help = help_text();
        let mut named: Vec<String> = help.split('*').filter_map(|tag| tag.strip_prefix(':').filter(|c| c.starts_with("Tandem")).map(str::to_string)).collect();
        let mut defined: Vec<String> = lines(report, "commands").into_iter().filter(|c| c.starts_with("Tandem")).collect();
        named.sort();
        named.dedup();
        defined.sort();
        assert_eq!(named, defined, ":help tandem's commands (*:Tandem…* tags) and the commands the plugin defines");
        assert_same_keys("the review window", &help_review_keys(&help), &lines(preview, "keys"));
        let health = lines(report, "health").join("\n");
        assert!(health.contains("- ✅ OK tandem "), "{health}");
        // The binary's version against the plugin's (issue 54).
        assert!(health.contains(&format!("- ✅ OK tandem {} (", env!("CARGO_PKG_VERSION"))) && health.contains(", the plugin's version"), "{health}");
        let other = lines(report, "health_other_version").join("\n");
        assert!(other.contains(&format!("WARNING tandem {} (", env!("CARGO_PKG_VERSION"))) && other.contains("and the plugin is 0.0.1-test"), "a plugin of another version: {other}");
        assert!(health.contains("no run is active"), "{health}");
        assert!(health.contains("- ✅ OK provider scripted, model script (provider (TANDEM_PROVIDER) is scripted)"), "the server's decision, from tandem doctor: {health}");
        // The sandbox, as `tandem doctor --json` finds it here.
        assert!(health.contains("shell sandbox"), "{health}");
        if std::env::var_os("TANDEM_REQUIRE_BWRAP").is_some() {
            assert!(health.contains("- ✅ OK shell commands run in a sandbox (bubblewrap"), "{health}");
        }
    }
}

/// The binary the plugin starts on Windows (`tandem.exe` from the
/// installer's folder, the `win32-x64` release), decided by the plugin's
/// own functions with Windows' answers in place of Neovim's
/// (tests/nvim/windows_binary.lua says which).
fn neovim_starts_tandem_exe_on_windows() {
    for nvim in nvims("neovim_starts_tandem_exe_on_windows") {
        let out = Command::new(&nvim)
            .args(["--headless", "-u", "NONE", "-i", "NONE", "-l"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/windows_binary.lua"))
            .env("PLUGIN_DIR", Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim"))
            .output()
            .expect("run nvim");
        assert!(out.status.success(), "nvim -l tests/nvim/windows_binary.lua failed: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// The plugin's installer (lua/tandem/install.lua, a lazy.nvim `build`
/// step) from a local folder standing in for the release: the archive's
/// checksum checked against SHA256SUMS, the binary put under
/// stdpath('data') and used by `require('tandem').cmd()` when `tandem` is
/// not on PATH; a checksum that does not match is refused with nothing
/// installed; a folder that cannot be made is named (issue 54). The
/// archive holds a stand-in binary that says the plugin's version.
fn neovim_installs_the_release_binary_and_refuses_a_bad_checksum() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    for nvim in nvims("neovim_installs_the_release_binary_and_refuses_a_bad_checksum") {
        let dir = tempfile::tempdir().expect("temp dir");
        let version = env!("CARGO_PKG_VERSION");
        let stem = format!("tandem-{version}-linux-x64");
        let archive = format!("{stem}.tar.gz");
        let good = dir.path().join("good");
        let bad = dir.path().join("bad");
        std::fs::create_dir_all(good.join(&stem)).expect("release folder");
        std::fs::create_dir_all(&bad).expect("bad release folder");
        let exe = good.join(&stem).join("tandem");
        std::fs::write(&exe, format!("#!/bin/sh\necho 'tandem {version}'\n")).expect("stand-in binary");
        Command::new("chmod").arg("755").arg(&exe).status().expect("chmod");
        let tar = Command::new("tar").arg("czf").arg(good.join(&archive)).arg("-C").arg(&good).arg(&stem).status().expect("tar");
        assert!(tar.success());
        let sum = Command::new("sha256sum").arg(good.join(&archive)).output().expect("sha256sum");
        let sum = String::from_utf8_lossy(&sum.stdout).split_whitespace().next().expect("a sum").to_string();
        std::fs::write(good.join("SHA256SUMS"), format!("{sum}  {archive}\n")).expect("sums");
        std::fs::copy(good.join(&archive), bad.join(&archive)).expect("copy");
        std::fs::write(bad.join("SHA256SUMS"), format!("{}  {archive}\n", "0".repeat(64))).expect("bad sums");
        std::fs::write(dir.path().join("a-file"), "").expect("a file");
        let out = dir.path().join("out.json");
        let status = Command::new(&nvim)
            .args(["--headless", "-u", "NONE", "-i", "NONE", "-l"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/install.lua"))
            .env("PLUGIN_DIR", Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("INSTALL_SOURCE", &good)
            .env("INSTALL_BAD_SOURCE", &bad)
            .env("INSTALL_BAD_DIR", dir.path().join("bad-bin"))
            .env("INSTALL_FILE", dir.path().join("a-file"))
            .env("INSTALL_OUT", &out)
            .status()
            .expect("run nvim");
        assert!(status.success(), "nvim -l tests/nvim/install.lua failed");
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("the report")).expect("JSON");
        let installed = dir.path().join("data/nvim/tandem/bin/tandem");
        assert_eq!(report["path"], installed.to_string_lossy().as_ref(), "{report:#}");
        let said = Command::new(&installed).arg("--version").output().expect("run the installed binary");
        assert_eq!(String::from_utf8_lossy(&said.stdout).trim(), format!("tandem {version}"));
        assert_eq!(report["cmd"], serde_json::json!([installed.to_string_lossy(), "lsp"]), "setup's command is the installed binary: {report:#}");
        let refused = report["bad_err"].as_str().unwrap_or_default();
        assert!(report["bad_path"].is_null() && refused.contains("does not match SHA256SUMS") && refused.contains("refused, nothing installed"), "{report:#}");
        assert!(!dir.path().join("bad-bin").exists(), "a refused install made its folder");
        let nodir = report["nodir_err"].as_str().unwrap_or_default();
        assert!(report["nodir_path"].is_null() && nodir.contains("cannot create the folder") && nodir.contains("a-file/bin"), "{report:#}");
    }
}

/// With no model configured anywhere, :TandemAsk says so in one line that
/// names `:help tandem-model` (issue 54: the advice took many lines of the
/// message area), and the tag is there.
fn neovim_without_a_model_says_it_in_one_line_with_a_help_tag() {
    for nvim in nvims("neovim_without_a_model_says_it_in_one_line_with_a_help_tag") {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join(".git")).expect("workspace");
        std::fs::write(dir.path().join("notes.txt"), "a note\n").expect("a file");
        let out = dir.path().join("out.json");
        let mut command = Command::new(&nvim);
        for var in crate::common::MODEL_VARIABLES {
            command.env_remove(var);
        }
        let status = command
            .args(["--headless", "-u", "NONE", "-i", "NONE", "-l"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/no_model.lua"))
            .current_dir(dir.path())
            .env("PLUGIN_DIR", Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim"))
            .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"))
            .env("HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("NO_MODEL_OUT", &out)
            .status()
            .expect("run nvim");
        assert!(status.success(), "nvim -l tests/nvim/no_model.lua failed");
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("the report")).expect("JSON");
        assert_eq!(report["attached"], true, "{report:#}");
        let messages = lines(&report, "messages");
        let said: Vec<&String> = messages.iter().filter(|m| m.contains("no model") || m.contains("did not start")).collect();
        assert_eq!(said, ["Tandem: no model is configured: give Tandem a key or a local model, see :help tandem-model"], "{report:#}");
        assert_eq!(report["help"], true, ":help tandem-model: {report:#}");
        assert!(report["help_line"].as_str().unwrap_or_default().contains("*tandem-model*"), "{report:#}");
    }
}

/// The lazy.nvim spec and the vim.pack lines of `:help tandem-install`,
/// as written there, in a fresh Neovim with an empty config and nothing
/// named tandem on PATH: each clones the plugin (a local git repository
/// standing in for GitHub), its build step fetches the release archive
/// and SHA256SUMS over loopback HTTP ($TANDEM_RELEASES standing in for
/// GitHub's releases) and installs the binary, the plugin's commands are
/// there, setup() runs the installed binary and `:checkhealth tandem` has
/// no error and says the binary is the plugin's version (issue 54).
/// lazy.nvim runs with both Neovims, vim.pack with 0.12 (0.11 has none).
/// lazy.nvim comes only from GitHub, so it is looked for like avante.nvim:
/// `TANDEM_LAZY_NVIM` or the tools cache's `lazy.nvim/`.
fn neovim_lazy_nvim_and_vim_pack_install_the_plugin_and_its_binary() {
    let test = "neovim_lazy_nvim_and_vim_pack_install_the_plugin_and_its_binary";
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    let lazy = std::env::var_os("TANDEM_LAZY_NVIM").map(std::path::PathBuf::from).unwrap_or_else(|| crate::common::tools::ci_tools().join("lazy.nvim"));
    let lazy = if lazy.join("lua/lazy/init.lua").is_file() {
        Some(lazy)
    } else {
        crate::common::tools::skipped(format!("{test} (lazy.nvim part): lazy.nvim is not in {}; set TANDEM_LAZY_NVIM to a checkout of it", lazy.display()));
        None
    };
    let help = help_text();
    // The README shows the same lines (what the test runs is what it says).
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README.md");
    let readme: String = readme.lines().map(|line| line.strip_prefix("  ").unwrap_or(line)).collect::<Vec<_>>().join("\n");
    for tag in ["*tandem-lazy.nvim*", "*tandem-vim.pack*"] {
        let block: String = help_block(&help, tag).lines().map(|line| line.strip_prefix("    ").unwrap_or(line)).collect::<Vec<_>>().join("\n");
        assert!(readme.contains(&format!("```lua\n{block}\n```")), "README.md has {tag}'s block of doc/tandem.txt:\n{block}");
    }
    for nvim in nvims(test) {
        let version = Command::new(&nvim).arg("--version").output().map(|o| String::from_utf8_lossy(&o.stdout).to_string()).unwrap_or_default();
        let has_pack = !version.starts_with("NVIM v0.11");
        let mut managers = Vec::new();
        if let Some(lazy) = &lazy {
            let spec = help_block(&help, "*tandem-lazy.nvim*");
            managers.push((
                "lazy.nvim",
                format!(
                    "vim.opt.rtp:prepend({:?})\nrequire('lazy').setup({{\n{spec}\n}}, {{ git = {{ url_format = vim.env.REPOS .. '/%s' }}, rocks = {{ enabled = false }} }})\n",
                    lazy.display().to_string()
                ),
                "lazy/tandem",
            ));
        }
        if has_pack {
            let lines = help_block(&help, "*tandem-vim.pack*");
            assert!(lines.contains("'https://github.com/tandem-agent/tandem'"), "{lines}");
            let lines = lines.replace("'https://github.com/tandem-agent/tandem'", "vim.env.REPOS .. '/tandem-agent/tandem'");
            managers.push(("vim.pack", lines, "site/pack/core/opt/tandem"));
        }
        for (manager, init, plugin_dir) in managers {
            let dir = tempfile::tempdir().expect("temp dir");
            let repos = dir.path().join("repos");
            plugin_repository(&repos.join("tandem-agent/tandem"));
            let release = dir.path().join("release");
            release_folder(&release.join(format!("v{}", env!("CARGO_PKG_VERSION"))));
            let (base_url, served) = serve_files(release);
            std::fs::create_dir_all(dir.path().join("config/nvim")).expect("config folder");
            let init_file = dir.path().join("config/nvim/init.lua");
            std::fs::write(&init_file, &init).expect("init.lua");
            std::fs::write(dir.path().join("notes.txt"), "a note\n").expect("a file");
            let script = dir.path().join("script.json");
            std::fs::write(&script, r#"{"turns": []}"#).expect("script");
            let out = dir.path().join("out.json");
            let output = Command::new(&nvim)
                .args(["--headless", "-i", "NONE", "-c"])
                .arg(format!("luafile {}", Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/plugin_manager_check.lua").display()))
                .current_dir(dir.path())
                .env("PATH", path_without_tandem())
                .env("XDG_CONFIG_HOME", dir.path().join("config"))
                .env("XDG_DATA_HOME", dir.path().join("data"))
                .env("XDG_STATE_HOME", dir.path().join("state"))
                .env("XDG_CACHE_HOME", dir.path().join("cache"))
                .env("REPOS", &repos)
                .env("TANDEM_RELEASES", &base_url)
                .env("TANDEM_PROVIDER", "scripted")
                .env("TANDEM_SCRIPT", &script)
                .env("CHECK_OUT", &out)
                .output()
                .expect("run nvim");
            let said = format!("{manager}: nvim said: {}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
            let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap_or_default()).unwrap_or_else(|_| panic!("no report; {said}"));
            let data = dir.path().join("data/nvim");
            assert!(data.join(plugin_dir).join("editors/nvim/lua/tandem/init.lua").is_file(), "{manager} cloned the plugin: {report:#} {said}");
            let installed = data.join("tandem/bin/tandem");
            let version = Command::new(&installed).arg("--version").output().unwrap_or_else(|e| panic!("{manager}: run {}: {e}; {report:#} {said}", installed.display()));
            assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("tandem {}", env!("CARGO_PKG_VERSION")));
            let archive = format!("/v{0}/tandem-{0}-linux-x64.tar.gz", env!("CARGO_PKG_VERSION"));
            let served = served.lock().expect("served").clone();
            // Once: vim.pack announces a fresh install as an update and an
            // install, and the second finds the binary already there.
            assert_eq!(served, vec![format!("/v{}/SHA256SUMS", env!("CARGO_PKG_VERSION")), archive], "{manager}: what the build step fetched");
            assert_eq!(report["loaded"], true, "{manager}: {report:#}");
            assert_eq!(report["command"], true, "{manager}: the plugin's commands (plugin/tandem.lua): {report:#}");
            assert_eq!(report["cmd"], serde_json::json!([installed.to_string_lossy(), "lsp"]), "{manager}: setup() runs the installed binary: {report:#}");
            let health = lines(&report, "health").join("\n");
            assert!(health.contains(&format!("- ✅ OK tandem {} (", env!("CARGO_PKG_VERSION"))) && health.contains(", the plugin's version"), "{manager}: {health}");
            assert_eq!(report["attached"], true, "{manager}: the server started for a file: {report:#}");
            assert!(health.contains("- ✅ OK running (tandem "), "{manager}: {health}");
            assert!(!health.contains("ERROR") && !health.contains("WARNING"), "{manager}: :checkhealth tandem is not clean: {health}");
            // tandem doctor finds the plugin where the manager put it.
            let copy = format!("- ✅ OK Neovim plugin ({manager}) {} ({})", env!("CARGO_PKG_VERSION"), data.join(plugin_dir).display());
            assert!(health.contains(&copy), "{manager}: {copy} in {health}");
            assert!(health.contains("- ✅ OK model server: the scripted model needs no server"), "{manager}: {health}");
        }
    }
}

/// The `>lua` … `<` block that follows `tag` in the help text.
fn help_block(help: &str, tag: &str) -> String {
    let after = &help[help.find(tag).unwrap_or_else(|| panic!("{tag} in doc/tandem.txt"))..];
    let start = after.find(">lua\n").expect("a >lua block") + ">lua\n".len();
    let end = after[start..].find("\n<").expect("the block's end") + start;
    after[start..end].to_string()
}

/// A git repository at `at` holding the plugin where the real one does
/// (editors/nvim), from this checkout's files.
fn plugin_repository(at: &Path) {
    std::fs::create_dir_all(at.join("editors")).expect("repository folder");
    let copied = Command::new("cp").arg("-r").arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim")).arg(at.join("editors")).status().expect("cp");
    assert!(copied.success());
    for args in [&["init", "-q", "-b", "main"][..], &["add", "-A"], &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "plugin"]] {
        let status = Command::new("git").args(args).current_dir(at).status().expect("git");
        assert!(status.success(), "git {args:?}");
    }
}

/// A release folder as the release workflow makes it: the linux-x64
/// archive (its binary a script running this build's `tandem`) and
/// SHA256SUMS.
fn release_folder(at: &Path) {
    let version = env!("CARGO_PKG_VERSION");
    let stem = format!("tandem-{version}-linux-x64");
    std::fs::create_dir_all(at.join(&stem)).expect("release folder");
    let exe = at.join(&stem).join("tandem");
    std::fs::write(&exe, format!("#!/bin/sh\nexec '{}' \"$@\"\n", env!("CARGO_BIN_EXE_tandem"))).expect("binary");
    Command::new("chmod").arg("755").arg(&exe).status().expect("chmod");
    let archive = format!("{stem}.tar.gz");
    assert!(Command::new("tar").arg("czf").arg(at.join(&archive)).arg("-C").arg(at).arg(&stem).status().expect("tar").success());
    std::fs::remove_dir_all(at.join(&stem)).expect("clean up");
    let sum = Command::new("sha256sum").arg(at.join(&archive)).output().expect("sha256sum");
    let sum = String::from_utf8_lossy(&sum.stdout).split_whitespace().next().expect("a sum").to_string();
    std::fs::write(at.join("SHA256SUMS"), format!("{sum}  {archive}\n")).expect("sums");
}

/// Serves the files under `root` over loopback HTTP (GET, one request per
/// connection) until the test ends; the base URL and the paths asked for.
fn serve_files(root: std::path::PathBuf) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let served = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = served.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = std::io::BufReader::new(&stream);
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            let mut header = String::new();
            while reader.read_line(&mut header).map(|n| n > 0).unwrap_or(false) && header != "\r\n" {
                header.clear();
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            let file = root.join(path.trim_start_matches('/'));
            let mut stream = &stream;
            match std::fs::read(&file) {
                Ok(body) if !path.contains("..") => {
                    log.lock().expect("log").push(path);
                    let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                    let _ = stream.write_all(&body);
                }
                _ => {
                    let _ = write!(stream, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                }
            }
        }
    });
    (base, served)
}

/// PATH without the folders that hold a `tandem` (a developer's
/// ~/.cargo/bin): the plugin must run the binary it installed.
fn path_without_tandem() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':').filter(|dir| !dir.is_empty() && !Path::new(dir).join("tandem").exists()).collect::<Vec<_>>().join(":")
}

/// "Reject" in the plugin's review: nothing lands, and the model is told
/// the user rejected it.
fn neovim_review_reject_leaves_the_buffer_and_tells_the_model() {
    for nvim in nvims("neovim_review_reject_leaves_the_buffer_and_tells_the_model") {
        let outcome = run_nvim(
            &nvim,
            Scenario {
                typed: "typed by the user",
                debounce_ms: 150,
                turns: read_then_edit(),
                env: vec![("SCENARIO_MODE", "default"), ("SCENARIO_REVIEW", "Reject")],
            },
        );
        let report = &outcome.report;
        assert_eq!(report["reviews"].as_array().map(Vec::len), Some(1), "{report:#}");
        assert_eq!(report["buffer"], serde_json::json!(["typed by the user", "line two", "line three"]), "{report:#}");
        assert_eq!(outcome.disk, ON_DISK);
        assert_eq!(outcome.results[1]["is_error"], true, "{:#}", outcome.results[1]);
        let content = outcome.results[1]["content"].as_str().unwrap_or_default();
        assert!(content.contains("the user chose Reject in the Tandem review"), "{content}");
        assert_eq!(report["result"]["edits"][0]["status"], "rejected", "{report:#}");
    }
}

/// Closing the plugin's review without an answer rejects the edit, and
/// says so: a warning at once, the model told, and the end message counts
/// the edit as declined (it said "run completed (1 edit)" before).
fn neovim_closing_the_review_rejects_the_edit_and_says_so() {
    for nvim in nvims("neovim_closing_the_review_rejects_the_edit_and_says_so") {
        let outcome = run_nvim(
            &nvim,
            Scenario {
                typed: "typed by the user",
                debounce_ms: 150,
                turns: read_then_edit(),
                env: vec![("SCENARIO_MODE", "default"), ("SCENARIO_REVIEW", "Close"), ("SCENARIO_VIA", "plugin")],
            },
        );
        let report = &outcome.report;
        assert_eq!(report["buffer"], serde_json::json!(["typed by the user", "line two", "line three"]), "{report:#}");
        assert_eq!(outcome.disk, ON_DISK);
        let content = outcome.results[1]["content"].as_str().unwrap_or_default();
        assert!(content.contains("the user closed the Tandem review without choosing, which rejects the edit"), "{content}");
        let messages = messages(report);
        assert!(messages.contains(&"Tandem: review closed, so the edit to notes.txt was rejected (not applied)".to_string()), "{messages:#?}");
        assert!(messages.contains(&"Tandem: run completed. 1 edit: 1 declined. Not applied: notes.txt (declined).".to_string()), "{messages:#?}");
    }
}

/// `write_file` over an open buffer, reviewed side by side (`diffthis`):
/// the proposed pane holds the whole new content.
fn neovim_split_review_shows_write_file_content() {
    for nvim in nvims("neovim_split_review_shows_write_file_content") {
        let outcome = run_nvim(
            &nvim,
            Scenario {
                typed: "",
                debounce_ms: 150,
                turns: serde_json::json!([
                    {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
                    {"text": "Rewriting.", "tool_calls": [{"name": "write_file", "input": {"file_path": "notes.txt", "content": "brand new\ncontent\n"}}]},
                    {"text": "Done."}
                ]),
                env: vec![("SCENARIO_MODE", "default"), ("SCENARIO_REVIEW", "Apply"), ("SCENARIO_LAYOUT", "split")],
            },
        );
        let report = &outcome.report;
        let preview = report["reviews"][0]["preview"].as_array().cloned().unwrap_or_default();
        assert_eq!(preview.len(), 2, "two panes: {report:#}");
        assert!(preview.iter().all(|pane| pane["diff"] == true && pane["floating"] == false), "{preview:#?}");
        assert_eq!(lines(&preview[0], "lines"), ["line one", "line two", "line three"]);
        assert_eq!(lines(&preview[1], "lines"), ["brand new", "content"]);
        // Each pane answers the keys :help tandem-review names for it.
        for pane in &preview {
            assert_same_keys("a pane of the split review", &help_split_review_keys(&help_text()), &lines(pane, "keys"));
        }
        assert_eq!(report["buffer"], serde_json::json!(["brand new", "content"]), "{report:#}");
    }
}

/// The user unloads the file's buffer while the review is open, then
/// applies the review: nothing is applied (the buffer is not loaded again
/// from the disk to take the edit), and the model is told the document was
/// closed while the edit waited.
fn neovim_closing_the_buffer_during_the_review_applies_nothing() {
    for nvim in nvims("neovim_closing_the_buffer_during_the_review_applies_nothing") {
        let outcome = reviewed_edit(&nvim, &[("SCENARIO_REVIEW", "UnloadFileThenApply"), ("SCENARIO_VIA", "plugin")]);
        let report = &outcome.report;
        assert_eq!(report["file_loaded_at_answer"], false, "{report:#}");
        assert_eq!(report["file_loaded_after"], false, "the edit did not load the buffer again: {report:#}");
        assert_nothing_landed(&outcome);
        assert_eq!(report["modified"], false, "{report:#}");
        let content = outcome.results[1]["content"].as_str().unwrap_or_default();
        assert_eq!(outcome.results[1]["is_error"], true, "{content}");
        assert!(content.contains("the document was closed in the editor while the edit waited"), "{content}");
        assert_eq!(report["result"]["edits"][0]["status"], "not_applied", "{report:#}");
    }
}

/// Cancel means no edit lands: the user cancels while the plugin's review
/// is open and then presses Apply; the run is over, so the plugin applies
/// nothing and says so.
fn neovim_cancel_during_review_applies_nothing() {
    for nvim in nvims("neovim_cancel_during_review_applies_nothing") {
        let outcome = reviewed_edit(&nvim, &[("SCENARIO_REVIEW", "CancelThenApply"), ("SCENARIO_VIA", "plugin")]);
        let report = &outcome.report;
        assert_eq!(report["cancel_seen"], true, "the run ended while the review was open: {report:#}");
        assert_eq!(report["result"]["status"], "cancelled", "{report:#}");
        assert_nothing_landed(&outcome);
        assert!(messages(report).contains(&REVIEW_WITHDRAWN.to_string()), "{report:#}");
        // The statusline through the run: at work, the review, then idle
        // again once the cancel ended the run.
        let statuses = lines(report, "statuses");
        assert!(statuses.iter().any(|s| s == "Tandem: review"), "{statuses:?}");
        assert_eq!(statuses.last().map(String::as_str), Some("Tandem"), "{statuses:?}");
        assert_eq!(report["status_after"], "Tandem", "{report:#}");
        // The statusline as drawn (the 'statusline' :help tandem-status
        // sets, evaluated for the file's window) after each run event: at
        // work before the first tool, then each tool with its file, the
        // review, and idle from the run's end on.
        let drawn: Vec<(String, String)> = report["statuslines"]
            .as_array()
            .expect("statuslines")
            .iter()
            .map(|e| (e["event"].as_str().unwrap_or_default().to_string(), e["statusline"].as_str().unwrap_or_default().to_string()))
            .collect();
        let first_call = drawn.iter().position(|(event, _)| event == "tool_call").unwrap_or_else(|| panic!("{drawn:#?}"));
        assert!(drawn[..first_call].iter().any(|(_, line)| line.ends_with("Tandem: working")), "at work before the first tool: {drawn:#?}");
        assert!(drawn[first_call].1.ends_with("Tandem: read_file notes.txt"), "{drawn:#?}");
        assert!(drawn.iter().any(|(event, line)| event == "tool_call" && line.ends_with("Tandem: edit_file notes.txt")), "{drawn:#?}");
        assert!(report["reviews"][0]["statusline"].as_str().unwrap_or_default().ends_with("Tandem: review"), "{report:#}");
        let end = drawn.iter().position(|(event, _)| event == "end").unwrap_or_else(|| panic!("{drawn:#?}"));
        assert!(drawn[end..].iter().all(|(_, line)| line.ends_with("Tandem") && !line.contains("Tandem:")), "idle once the run ended: {drawn:#?}");
        for key in ["statusline_idle", "statusline_after"] {
            assert!(report[key].as_str().is_some_and(|line| line.ends_with("Tandem") && !line.contains("Tandem:")), "{key}: {report:#}");
        }
    }
}

/// The server withdraws a review (`$/cancelRequest`) when the run is
/// cancelled while a picker plugin's window is open: the plugin closes the
/// picker and the preview, applies nothing (the user's late Apply is
/// ignored) and says so.
fn neovim_withdrawn_review_closes_the_picker_and_applies_nothing() {
    for nvim in nvims("neovim_withdrawn_review_closes_the_picker_and_applies_nothing") {
        let outcome = reviewed_edit(&nvim, &[("SCENARIO_REVIEW", "CancelThenLateApply"), ("SCENARIO_VIA", "plugin")]);
        let report = &outcome.report;
        assert_eq!(report["picker_closed"], true, "the plugin closed the picker when the server withdrew the review: {report:#}");
        assert_eq!(report["previews_left"], 0, "{report:#}");
        assert_eq!(report["result"]["status"], "cancelled", "{report:#}");
        assert_nothing_landed(&outcome);
        assert!(messages(report).contains(&REVIEW_WITHDRAWN.to_string()), "{report:#}");
    }
}

/// The server stops waiting for the review (the applyEdit timeout) and
/// withdraws it; the run goes on. The plugin closes the picker, and the
/// user's Apply that comes after it applies nothing: the model was already
/// told the editor did not answer.
fn neovim_review_timed_out_by_the_server_is_not_applied_late() {
    for nvim in nvims("neovim_review_timed_out_by_the_server_is_not_applied_late") {
        let outcome = reviewed_edit(&nvim, &[("SCENARIO_REVIEW", "LateApply"), ("SCENARIO_APPLY_EDIT_MS", "1000")]);
        let report = &outcome.report;
        assert_eq!(report["picker_closed"], true, "{report:#}");
        assert_eq!(report["previews_left"], 0, "{report:#}");
        assert_nothing_landed(&outcome);
        assert_eq!(outcome.results[1]["is_error"], true, "{:#}", outcome.results[1]);
        let content = outcome.results[1]["content"].as_str().unwrap_or_default();
        assert!(content.contains("did not answer the applyEdit request"), "{content}");
        assert!(messages(report).contains(&REVIEW_WITHDRAWN.to_string()), "{report:#}");
    }
}

/// A run that enters plan mode and asks to leave it (the user reviews the
/// plan), then says "Replanning.", in the default mode with `env` besides.
fn planned_run(nvim: &Path, env: &[(&'static str, &'static str)]) -> Outcome {
    let turns = serde_json::json!([
        {"text": "", "tool_calls": [{"name": "tool_search", "input": {"query": "select:enter_plan_mode"}}]},
        {"text": "", "tool_calls": [{"name": "enter_plan_mode", "input": {}}]},
        {"text": "", "tool_calls": [{"name": "exit_plan_mode", "input": {}}]},
        {"text": "Replanning."}
    ]);
    let env = [&[("SCENARIO_MODE", "default")], env].concat();
    run_nvim(nvim, Scenario { typed: "", debounce_ms: 150, turns, env })
}

/// Plan mode's review in Neovim: "Keep planning", then the plugin asks
/// what should change (`tandem/textInput`, answered through vim.ui.input);
/// the typed text reaches the model as the user's feedback.
fn neovim_keep_planning_sends_the_typed_feedback_to_the_model() {
    for nvim in nvims("neovim_keep_planning_sends_the_typed_feedback_to_the_model") {
        let outcome = planned_run(&nvim, &[("SCENARIO_PLAN_ANSWER", "Keep planning"), ("SCENARIO_TYPED_ANSWER", "Split step 2 into two steps.")]);
        let report = &outcome.report;
        assert_eq!(
            report["inputs"],
            serde_json::json!([{"prompt": "Tandem: Tandem keeps planning. What should change in the plan? "}]),
            "{report:#}"
        );
        assert_eq!(outcome.results[2]["is_error"], false, "{:#}", outcome.results[2]);
        assert_eq!(
            outcome.results[2]["content"],
            "User rejected the plan and wants to keep planning.\n\nUser feedback: Split step 2 into two steps.",
            "{report:#}"
        );
    }
}

/// The run is cancelled while the plugin asks what should change in the
/// plan: the server withdraws `tandem/textInput` and the plugin closes an
/// input plugin's box and says so.
fn neovim_cancel_while_asking_for_plan_feedback_closes_the_input() {
    for nvim in nvims("neovim_cancel_while_asking_for_plan_feedback_closes_the_input") {
        let outcome = planned_run(
            &nvim,
            &[
                ("SCENARIO_VIA", "plugin"),
                ("SCENARIO_REVIEW", "Cancel"),
                ("SCENARIO_PLAN_ANSWER", "Keep planning"),
                ("SCENARIO_INPUT", "CancelThenLate"),
                ("SCENARIO_TYPED_ANSWER", "typed too late"),
            ],
        );
        let report = &outcome.report;
        assert_eq!(report["input_closed"], true, "the plugin closed the input box: {report:#}");
        assert_eq!(report["result"]["status"], "cancelled", "{report:#}");
        assert!(
            messages(report).contains(&"Tandem: the question was withdrawn (the run was cancelled or stopped waiting)".to_string()),
            "{report:#}"
        );
    }
}

/// A code action ("Tandem: explain this code") runs through the plugin: its
/// run has a heading and an end marker in the transcript and an end message.
fn neovim_code_action_runs_are_framed_in_the_transcript() {
    for nvim in nvims("neovim_code_action_runs_are_framed_in_the_transcript") {
        let outcome = run_nvim(
            &nvim,
            Scenario {
                typed: "",
                debounce_ms: 150,
                turns: serde_json::json!([{"text": "It lists three lines."}]),
                env: vec![("SCENARIO_VIA", "codeaction")],
            },
        );
        let report = &outcome.report;
        let transcript = lines(report, "transcript");
        assert_eq!(
            transcript,
            ["## Explain this code.", "", "It lists three lines.", "", "**— completed —**"],
            "{report:#}"
        );
        assert!(messages(report).contains(&"Tandem: run completed. No edits.".to_string()), "{report:#}");
    }
}

/// The model's todo list shows in the transcript as a checklist, each time
/// it changes.
fn neovim_shows_the_todo_list_as_a_checklist_in_the_transcript() {
    for nvim in nvims("neovim_shows_the_todo_list_as_a_checklist_in_the_transcript") {
        let todo = |items: &[(&str, &str)]| {
            let todos: Vec<serde_json::Value> = items.iter().map(|(content, status)| serde_json::json!({"content": content, "status": status})).collect();
            serde_json::json!({"text": "", "tool_calls": [{"name": "todo_write", "input": {"todos": todos}}]})
        };
        let outcome = run_nvim(
            &nvim,
            Scenario {
                typed: "",
                debounce_ms: 150,
                turns: serde_json::json!([
                    todo(&[("Read notes", "in_progress"), ("Answer", "pending")]),
                    todo(&[("Read notes", "completed"), ("Answer", "in_progress")]),
                    {"text": "Done."}
                ]),
                env: vec![],
            },
        );
        let transcript = lines(&outcome.report, "transcript");
        let checklist: Vec<&str> = transcript.iter().map(String::as_str).filter(|l| l.starts_with("**Todo") || l.starts_with("- [")).collect();
        assert_eq!(
            checklist,
            ["**Todo (0/2)**", "- [~] Read notes", "- [ ] Answer", "**Todo (1/2)**", "- [x] Read notes", "- [~] Answer"],
            "{transcript:#?}"
        );
    }
}

fn skip(name: &str) {
    crate::common::tools::skip(name, "TANDEM_REQUIRE_NVIM", "nvim 0.11+ is not on PATH");
}

/// Issue 53: a resumed thread's run undone since (its `edits` event from
/// tandem.transcript says `undone`) is shown undone in the transcript; a
/// run not undone is not.
fn neovim_replay_shows_a_run_undone_since_as_undone() {
    for nvim in nvims("neovim_replay_shows_a_run_undone_since_as_undone") {
        let report = run_scenario(&NotesWorkspace::new(), &nvim, "replay_undone.lua", "{}", []);
        let shown = lines(&report, "lines");
        let first = shown.iter().position(|l| l == "## first").unwrap_or_else(|| panic!("{report:#}"));
        let second = shown.iter().position(|l| l == "## second").unwrap_or_else(|| panic!("{report:#}"));
        let undone = |rows: &[String]| rows.iter().filter(|l| l.contains("undone since")).count();
        assert_eq!(undone(&shown[first..second]), 1, "{report:#}");
        assert_eq!(undone(&shown[second..]), 0, "{report:#}");
        assert!(shown.iter().any(|l| l == "_↶ undone since (:TandemRedo puts it back)_"), "{report:#}");
    }
}

/// :TandemAsk, :TandemNew, then :TandemResume picks the first thread back:
/// the transcript shows its whole past (as it was shown live) and the next
/// :TandemAsk continues it.
fn neovim_resume_shows_the_whole_thread_and_continues_it() {
    for nvim in nvims("neovim_resume_shows_the_whole_thread_and_continues_it") {
        let script = serde_json::json!({"turns": [
            {"text": "", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
            {"text": "It has three lines."}
        ]});
        let report = run_scenario(&NotesWorkspace::new(), &nvim, "resume_scenario.lua", &script.to_string(), []);
        assert_eq!(report["first_status"], "Tandem: run completed. No edits.", "{report:#}");
        let first_run = lines(&report, "after_first");
        assert_eq!(
            first_run,
            [
                "## first question",
                "",
                "",
                "",
                "→ `read_file notes.txt`",
                "  ✓    1 | line one",
                // The rest of the result, folded in the transcript's windows.
                "       2 | line two",
                "       3 | line three",
                "It has three lines.",
                "",
                "**— completed —**"
            ],
            "{report:#}"
        );
        // :TandemNew: a new thread, an empty transcript.
        assert_eq!(report["thread_after_new"], serde_json::Value::Null, "{report:#}");
        assert_eq!(lines(&report, "after_new"), [""], "{report:#}");
        // The picker lists the saved thread by its title.
        let picker = report["picker"].as_array().expect("the picker was shown");
        assert!(picker[0].as_str().unwrap_or_default().contains("first question  (1 runs)"), "{report:#}");
        // Resumed: the transcript shows the thread's past as it was shown live.
        assert_eq!(lines(&report, "after_resume"), first_run, "{report:#}");
        // The next ask continues that thread, below its past.
        assert_eq!(report["second_thread"], report["first_thread"], "{report:#}");
        assert_eq!(report["second_status"], "Tandem: run completed. No edits.", "{report:#}");
        let after_second = lines(&report, "after_second");
        assert_eq!(after_second[..first_run.len()], first_run[..], "{report:#}");
        assert_eq!(after_second[first_run.len()..].first().map(String::as_str), Some(""), "{report:#}");
        assert_eq!(after_second[first_run.len() + 1], "## second question", "{report:#}");
        assert_eq!(after_second.last().map(String::as_str), Some("**— completed —**"), "{report:#}");
    }
}

/// A multi-line shell command asked in the default mode: the plugin shows
/// the whole question (every line of the command) in a float while
/// vim.ui.select offers the actions (a picker plugin would show only one
/// line), and the chosen action is the answer. Returns the outcome and
/// whether `made.txt` was created.
fn multi_line_shell_ask(nvim: &Path, answer: &'static str, env: &[(&'static str, &'static str)]) -> (Outcome, bool) {
    let workspace_marker = "made.txt";
    let outcome = run_nvim(
        nvim,
        Scenario {
            typed: "",
            debounce_ms: 150,
            turns: serde_json::json!([
                {"text": "Building.", "tool_calls": [{"name": "run_shell", "input": {"command": "echo building\ntouch made.txt"}}]},
                {"text": "Done."}
            ]),
            env: [&[("SCENARIO_MODE", "default"), ("SCENARIO_PROMPT_ANSWER", answer)], env].concat(),
        },
    );
    let report = &outcome.report;
    let asked = report["asked"].as_array().cloned().unwrap_or_default();
    assert_eq!(asked.len(), 1, "one question, through the plugin's picker: {report:#}");
    let question = &asked[0];
    let chosen = if answer == "LateAllow" { "Allow once" } else { answer };
    assert_eq!(question["choice"], chosen, "{report:#}");
    let items = question["items"].as_array().cloned().unwrap_or_default();
    assert!(items.contains(&serde_json::json!("Allow once")) && items.contains(&serde_json::json!("Deny")), "{report:#}");
    let floats = question["floats"].as_array().cloned().unwrap_or_default();
    assert_eq!(floats.len(), 1, "the question is shown in a float: {report:#}");
    assert_eq!(floats[0]["floating"], true, "{report:#}");
    let shown = lines(&floats[0], "lines");
    assert!(shown.iter().any(|l| l.contains("echo building")), "every line of the command is shown: {shown:#?}");
    assert!(shown.iter().any(|l| l.contains("touch made.txt")), "every line of the command is shown: {shown:#?}");
    assert!(shown.len() > 2, "the whole message, not one line: {shown:#?}");
    // Answered: the float is closed.
    assert_eq!(report["prompts_left"], 0, "{report:#}");
    let made = outcome.files.iter().any(|name| name == workspace_marker);
    (outcome, made)
}

/// "Deny" in the plugin's question: the command does not run.
fn neovim_shows_a_whole_multi_line_command_and_deny_refuses_it() {
    for nvim in nvims("neovim_shows_a_whole_multi_line_command_and_deny_refuses_it") {
        let (outcome, made) = multi_line_shell_ask(&nvim, "Deny", &[]);
        assert!(!made, "the denied command did not run: {:#}", outcome.report);
        assert_eq!(outcome.results[0]["is_error"], true, "{:#}", outcome.results[0]);
    }
}

/// "Tell Tandem what to do instead" in the plugin's question: the command
/// does not run, vim.ui.input asks what to do instead, and the model reads
/// the typed words with the refusal.
fn neovim_tell_tandem_instead_refuses_the_command_with_the_users_words() {
    for nvim in nvims("neovim_tell_tandem_instead_refuses_the_command_with_the_users_words") {
        let (outcome, made) =
            multi_line_shell_ask(&nvim, "Tell Tandem what to do instead", &[("SCENARIO_TYPED_ANSWER", "only print the plan")]);
        assert!(!made, "the refused command did not run: {:#}", outcome.report);
        assert_eq!(outcome.report["inputs"][0]["prompt"], "Tandem: What should Tandem do instead? ", "{:#}", outcome.report);
        assert_eq!(outcome.results[0]["is_error"], true, "{:#}", outcome.results[0]);
        let content = outcome.results[0]["content"].as_str().unwrap_or_default();
        assert!(content.contains("the user denied it; instead, the user says: only print the plan"), "{content}");
    }
}

/// "Allow once" in the plugin's question: the whole command runs.
fn neovim_shows_a_whole_multi_line_command_and_allow_once_runs_it() {
    for nvim in nvims("neovim_shows_a_whole_multi_line_command_and_allow_once_runs_it") {
        let (outcome, made) = multi_line_shell_ask(&nvim, "Allow once", &[]);
        assert!(made, "the allowed command ran: {:#}", outcome.report);
        assert_eq!(outcome.results[0]["is_error"], false, "{:#}", outcome.results[0]);
        let content = outcome.results[0]["content"].as_str().unwrap_or_default();
        assert!(content.contains("building"), "{content}");
    }
}

/// The server stops waiting for the answer (its prompt timeout) and
/// withdraws the question: the plugin closes the picker and the float, the
/// user's "Allow once" that comes after it is ignored, and the command does
/// not run.
fn neovim_withdrawn_shell_question_closes_the_picker_and_runs_nothing() {
    for nvim in nvims("neovim_withdrawn_shell_question_closes_the_picker_and_runs_nothing") {
        let (outcome, made) = multi_line_shell_ask(&nvim, "LateAllow", &[("SCENARIO_PROMPT_MS", "1000")]);
        let report = &outcome.report;
        assert_eq!(report["prompt_picker_closed"], true, "the plugin closed the picker: {report:#}");
        assert!(!made, "the withdrawn command did not run: {report:#}");
        assert_eq!(outcome.results[0]["is_error"], true, "{:#}", outcome.results[0]);
        assert!(
            messages(report).contains(&"Tandem: the question was withdrawn (the run was cancelled or stopped waiting)".to_string()),
            "{report:#}"
        );
    }
}

/// The saved thread `id` (its file under the tests' XDG data folder), with
/// its JSON strings' escapes undone, to read what the model was sent.
fn thread_file(id: &str) -> String {
    assert!(!id.is_empty(), "no thread id");
    let mut stack = vec![Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n.to_string_lossy() == format!("{id}.jsonl")) {
                let raw = std::fs::read_to_string(&path).expect("the thread file");
                return raw.replace("\\n", "\n").replace("\\\"", "\"");
            }
        }
    }
    panic!("no thread file for {id}");
}

/// The chat (`:TandemChat`, issue 50): `@shot.png` in a message sends the
/// image: the chat passes the mention as an attachment, the server finds a
/// PNG by its bytes and sends it as an image after the message's text (the
/// saved thread's first message holds it, byte for byte), not as text.
fn neovim_chat_sends_an_image_mentioned_with_at() {
    for nvim in nvims("neovim_chat_sends_an_image_mentioned_with_at") {
        let workspace = NotesWorkspace::new();
        const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";
        use base64::Engine as _;
        std::fs::write(workspace.root.join("shot.png"), base64::engine::general_purpose::STANDARD.decode(PNG).expect("base64")).expect("shot.png");
        let script = serde_json::json!({"turns": [{"text": "A red square."}]});
        let report = run_scenario(&workspace, &nvim, "chat_image_scenario.lua", &script.to_string(), []);
        let attachments = report["argument"]["attachments"].as_array().cloned().unwrap_or_default();
        assert_eq!(attachments.len(), 1, "the mention went as an attachment: {report:#}");
        assert!(attachments[0]["uri"].as_str().is_some_and(|u| u.ends_with("/shot.png")), "{report:#}");
        assert_eq!(report["results"][0]["status"], "completed", "{report:#}");
        assert!(lines(&report, "chat").iter().any(|l| l == "A red square."), "{report:#}");
        let thread_id = report["results"][0]["threadId"].as_str().unwrap_or_default().to_string();
        let thread = thread_file(&thread_id);
        let first = thread.lines().find(|l| l.contains("\"type\":\"message\"")).unwrap_or_default();
        assert!(first.contains(&format!("{{\"type\":\"image\",\"media_type\":\"image/png\",\"data\":\"{PNG}\"}}")), "the first message holds the image:\n{first}");
        assert!(!first.contains("attached path=\"shot.png\""), "the image went as text too:\n{first}");
    }
}

/// The chat (`:TandemChat`): a two-line message with an `@file` mention
/// typed below the separator and sent with <CR>; a follow-up on the same
/// thread; `@` completion; tool results folded as they stream; <CR> on the
/// edit's link opens the unsaved buffer (no E37); "fix this error" offered
/// for a diagnostic another source published, and `:TandemFix` asking
/// about it; `#buffer` and `#diagnostics` reaching the model with their
/// content; `/resume` from the picker and by id; `:help tandem-chat`
/// naming the chat's keys and commands, and no others.
fn neovim_chat_round_trip_with_a_follow_up_and_a_mention() {
    for nvim in nvims("neovim_chat_round_trip_with_a_follow_up_and_a_mention") {
        let workspace = NotesWorkspace::new();
        let script = serde_json::json!({"turns": [
            {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
            {"text": "Editing.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "line three", "new_string": "LINE THREE"}}]},
            {"text": "Done: line three is capitalised."}
        ]});
        // (Each run replays the script from its first turn: in the follow-up
        // and the fix, the edit finds nothing left to capitalise.)
        let report = run_scenario(&workspace, &nvim, "chat_scenario.lua", &script.to_string(), []);
        assert_eq!(report["chat_name"].as_str().map(|n| n.ends_with("tandem://transcript")), Some(true), "{report:#}");
        assert_eq!(report["cursor_row"].as_i64(), report["prompt_row"].as_i64().map(|r| r + 1), "the cursor starts on the prompt line: {report:#}");
        assert!(lines(&report, "completion").contains(&"notes.txt".to_string()), "{report:#}");

        let chat = lines(&report, "after_first");
        let heading = chat.iter().position(|l| l == "## Capitalise line three in @notes.txt").unwrap_or_else(|| panic!("{chat:#?}"));
        assert_eq!(chat[heading + 1], "> please", "the message's second line is quoted under its heading: {chat:#?}");
        assert!(chat.iter().any(|l| l == "Done: line three is capitalised."), "{chat:#?}");
        let separator = chat.iter().position(|l| l == "───── message ─────").expect("the prompt area stays");
        assert!(separator > heading, "the run's text grows above the prompt area: {chat:#?}");
        assert_eq!(lines(&report, "prompt_after_send"), vec![String::new()], "the prompt area is emptied after sending");
        assert!(!lines(&report, "folded").is_empty(), "the read_file result's lines are folded: {report:#}");

        let results = report["results"].as_array().expect("results");
        assert_eq!(results.len(), 4, "{report:#}");
        assert_eq!(results[0]["threadId"], results[1]["threadId"], "the follow-up continues the thread: {report:#}");
        let prompts = lines(&report, "saved_prompts");
        assert_eq!(prompts.len(), 4, "{prompts:#?}");
        assert!(prompts[0].starts_with("Capitalise line three in @notes.txt\nplease"), "{prompts:#?}");
        assert_eq!(prompts[1], "And thanks: #selection and @notes.txt:3, please");
        assert_eq!(prompts[3], "Check #buffer against #diagnostics");
        // The thread keeps what each message attached, as the user named it.
        assert_eq!(report["saved_attachments"], serde_json::json!([["notes.txt"], ["notes.txt:3"], [], ["notes.txt"]]), "{report:#}");
        // What the model got with each message: the mentioned file's text as
        // the buffer has it (unsaved), then the selection made before the
        // chat opened and line three alone.
        let thread = thread_file(results[0]["threadId"].as_str().unwrap_or_default());
        assert!(
            thread.contains("<attached path=\"notes.txt\">\n   1 | typed by the user\n   2 | line two\n   3 | line three\n</attached>"),
            "the @notes.txt mention attached the buffer's text:\n{thread}"
        );
        assert!(thread.contains("Selection (lines 2-2):\n```\nline two\n```"), "#selection is the one made before :TandemChat:\n{thread}");
        assert!(thread.contains("<attached path=\"notes.txt\" lines=\"3-3\">\n   3 | "), "@notes.txt:3 attached line three:\n{thread}");
        // #buffer: the file as its buffer had it then (the user's line, the
        // agent's edit); #diagnostics: every one of the buffer's (the fix
        // sent only the one on its line).
        assert!(
            thread.contains("<attached path=\"notes.txt\">\n   1 | typed by the user\n   2 | line two\n   3 | LINE THREE\n</attached>"),
            "#buffer attached the buffer's text:\n{thread}"
        );
        assert!(
            thread.contains("Diagnostics:\n- line 2: error [lint]: line two is wrong\n- line 3: warning [lint]: line three shouts"),
            "#diagnostics sent the buffer's diagnostics:\n{thread}"
        );

        assert_eq!(report["link_line"], "- applied: notes.txt:3", "{report:#}");
        assert_eq!(report["link_error"], serde_json::Value::Null, "{report:#}");
        assert!(report["link_opened"].as_str().unwrap_or_default().ends_with("notes.txt"), "{report:#}");
        assert_eq!(report["link_cursor"], 3);
        assert_eq!(report["link_modified"], true, "the unsaved buffer is shown as it is");

        let actions = lines(&report, "actions");
        assert!(actions.contains(&"Tandem: fix this error (line two is wrong)".to_string()), "{actions:#?}");
        assert_eq!(lines(&report, "fix_prompt"), vec!["## Fix this error: line two is wrong".to_string()], "{report:#}");
        assert_eq!(results[2]["status"], "completed", "{report:#}");
        assert_eq!(report["buffer"], serde_json::json!(["typed by the user", "line two", "LINE THREE"]), "{report:#}");
        assert_eq!(workspace.disk(), ON_DISK, "the open file was never written by Tandem");

        // The chat's commands run, never sent: /new empties the transcript,
        // /resume offers the thread in a picker and shows its past again, so
        // does /resume ID, and /nosuch is said.
        assert_eq!(report["runs_after_commands"], 4, "no command was sent as a message: {report:#}");
        assert_eq!(report["thread_after_new"], serde_json::Value::Null, "{report:#}");
        assert!(!lines(&report, "after_new").iter().any(|l| l.starts_with("## ")), "{report:#}");
        let picker = lines(&report, "picker");
        assert_eq!(picker.len(), 1, "the workspace's one thread: {picker:#?}");
        assert!(picker[0].contains("Capitalise line three in @notes.txt") && picker[0].ends_with("(4 runs)"), "{picker:#?}");
        for key in ["after_picked", "after_resume"] {
            let resumed = lines(&report, key);
            for heading in ["## Capitalise line three in @notes.txt", "## Fix this error: line two is wrong", "## Check #buffer against #diagnostics"] {
                assert!(resumed.contains(&heading.to_string()), "{key}: {resumed:#?}");
            }
        }
        assert!(
            messages(&report).iter().any(|m| m.starts_with("Tandem: /nosuch is not a chat command (/cancel /new /redo /resume /sendreview /tasks /undo; //nosuch sends it")),
            "{report:#}"
        );

        // :help tandem-chat names the keys the chat answers and its
        // commands, and the chat has no others.
        let help = help_text();
        assert_same_keys("the chat", &help_chat_keys(&help), &lines(&report, "chat_keys"));
        let mut commands = lines(&report, "chat_commands");
        commands.sort();
        let mut named = help_chat_commands(&help);
        named.sort();
        assert_eq!(named, commands, ":help tandem-chat's / commands (left) and chat.lua's command table (right)");
    }
}

/// pyright from npm (`.ci/run` installs it in the tools cache and sets
/// `TANDEM_PYRIGHT`); `None` (after saying so) when it is missing, unless
/// `TANDEM_REQUIRE_PYRIGHT` is set.
fn pyright(test: &str) -> Option<std::path::PathBuf> {
    let found = std::env::var_os("TANDEM_PYRIGHT").map(std::path::PathBuf::from).filter(|p| p.is_file()).or_else(|| which("pyright-langserver"));
    if found.is_none() {
        assert!(std::env::var_os("TANDEM_REQUIRE_PYRIGHT").is_none(), "TANDEM_REQUIRE_PYRIGHT is set but there is no pyright-langserver");
        eprintln!("{test}: skipped, no pyright-langserver (set TANDEM_PYRIGHT)");
    }
    found
}

/// The Python project the code intelligence tests work in.
pub const LIB_PY: &str = "def greet(name: str) -> str:\n    return \"Hello, \" + name\n";
pub const APP_PY: &str = "from lib import greet\n\nprint(greet(\"world\"))\nprint(greet(\"again\"))\n";

/// A real language server (pyright) attached to the buffer beside Tandem:
/// the agent's edit introduces a type error and its tool result lists it,
/// marked new, once pyright has published for the edited version; then
/// `code_intel` references and definition are answered by pyright through
/// the plugin (for lib.py, which is not open: the plugin loads it and
/// waits for pyright to attach).
fn neovim_answers_code_intel_from_pyright() {
    let Some(pyright) = pyright("neovim_answers_code_intel_from_pyright") else { return };
    for nvim in nvims("neovim_answers_code_intel_from_pyright") {
        let workspace = NotesWorkspace::new();
        std::fs::write(workspace.root.join("lib.py"), LIB_PY).expect("write lib.py");
        let app = workspace.root.join("app.py");
        std::fs::write(&app, APP_PY).expect("write app.py");
        let script = serde_json::json!({"turns": [
            {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "app.py"}}]},
            {"text": "Breaking it.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "app.py", "old_string": "greet(\"again\")", "new_string": "greet(42)"}}]},
            {"text": "Loading the tool.", "tool_calls": [{"name": "tool_search", "input": {"query": "select:code_intel"}}]},
            {"text": "Who calls greet?", "tool_calls": [{"name": "code_intel", "input": {"operation": "references", "file_path": "lib.py", "line": 1, "symbol": "greet"}}]},
            {"text": "Where is it?", "tool_calls": [{"name": "code_intel", "input": {"operation": "definition", "file_path": "app.py", "line": 3, "symbol": "greet"}}]},
            {"text": "Not there.", "tool_calls": [{"name": "code_intel", "input": {"operation": "hover", "file_path": "app.py", "line": 3, "symbol": "great"}}]},
            {"text": "Done."}
        ]});
        let env = [("SCENARIO_FILE", app.as_os_str()), ("SCENARIO_PYRIGHT", pyright.as_os_str())];
        let report = run_scenario(&workspace, &nvim, "code_intel_scenario.lua", &script.to_string(), env);
        assert_eq!(report["result"]["status"], "completed", "report: {report:#}");
        let results: Vec<&serde_json::Value> = report["events"].as_array().expect("events").iter().filter(|e| e["type"] == "tool_result").collect();
        let content = |i: usize| results[i]["content"].as_str().unwrap_or_default().to_string();
        let edit = content(1);
        assert!(edit.contains("Diagnostics after the edit: app.py: 1 error, 0 warnings (1 new)"), "{edit}");
        assert!(edit.contains("app.py:4:13: error [Pyright reportArgumentType] (new): Argument of type \"Literal[42]\""), "{edit}");
        assert!(!edit.contains("had not settled"), "{edit}");
        let references = content(3);
        expect_test::expect![[r#"
            lib.py:1:5: def greet(name: str) -> str:
            app.py:1:17: from lib import greet
            app.py:3:7: print(greet("world"))
            app.py:4:7: print(greet(42))"#]]
        .assert_eq(&sorted_like_pyright(&references));
        assert_eq!(content(4), "lib.py:1:5: def greet(name: str) -> str:");
        let missing = content(5);
        assert!(missing.starts_with("Error: \"great\" is not on line 3 of app.py. That line has \"print\", \"greet\", \"world\""), "{missing}");
    }
}

/// The reference lines with lib.py first, then app.py in line order
/// (pyright's order of files depends on which it analysed first).
fn sorted_like_pyright(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_by_key(|l| (!l.starts_with("lib.py"), l.split(':').nth(1).and_then(|n| n.parse::<u32>().ok()).unwrap_or(0)));
    lines.join("\n")
}

/// `:TandemUndo` after a run that edited the open buffer, wrote a file
/// that is not open and ran an approved `sh -c 'echo x > made.txt'`: the
/// buffer, the closed file and the made file all go back, and the message
/// lists each file restored; `:TandemRedo` puts them back; undoing twice
/// more goes back once, then says there is nothing to undo.
fn neovim_undo_and_redo_take_a_whole_run_back_and_put_it_back() {
    for nvim in nvims("neovim_undo_and_redo_take_a_whole_run_back_and_put_it_back") {
        let workspace = NotesWorkspace::new();
        let closed = workspace.root.join("other.txt");
        std::fs::write(&closed, "other\n").expect("write the closed file");
        let made = workspace.root.join("made.txt");
        let script = serde_json::json!({"turns": [
            {"text": "", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}, {"name": "read_file", "input": {"file_path": "other.txt"}}]},
            {"text": "", "tool_calls": [
                {"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "line three", "new_string": "LINE THREE"}},
                {"name": "edit_file", "input": {"file_path": "other.txt", "old_string": "other", "new_string": "OTHER"}}
            ]},
            {"text": "", "tool_calls": [{"name": "run_shell", "input": {"command": "sh -c 'echo x > made.txt'"}}]},
            {"text": "Done."}
        ]});
        let env = [("SCENARIO_CLOSED", closed.as_os_str()), ("SCENARIO_MADE", made.as_os_str())];
        let report = run_scenario(&workspace, &nvim, "undo_scenario.lua", &script.to_string(), env);
        let edited = ["line one", "line two", "LINE THREE"];
        let original = ["line one", "line two", "line three"];
        assert!(report["run"].as_str().unwrap_or_default().starts_with("Tandem: run completed."), "{report:#}");
        assert_eq!(report["asked"].as_array().map(Vec::len), Some(1), "the command was asked about: {report:#}");
        assert_eq!(lines(&report["after_run"], "buffer"), edited, "{report:#}");
        assert_eq!(report["after_run"]["closed"], "OTHER\n", "{report:#}");
        assert_eq!(report["after_run"]["made"], "x\n", "{report:#}");

        assert_eq!(lines(&report["after_undo"], "buffer"), original, "{report:#}");
        assert_eq!(report["after_undo"]["closed"], "other\n", "{report:#}");
        assert_eq!(report["after_undo"]["made"], serde_json::Value::Null, "made.txt is removed: {report:#}");
        let undo = report["undo"].as_str().unwrap_or_default();
        let undo_lines: Vec<&str> = undo.lines().collect();
        assert!(undo_lines[0].starts_with("Tandem: undid run-1: 3 restored, 0 unchanged, 0 conflicts"), "{undo}");
        let mut files: Vec<&str> = undo_lines[1..].iter().map(|l| l.trim()).collect();
        files.sort();
        assert_eq!(files, ["restored  made.txt", "restored  notes.txt", "restored  other.txt"], "{undo}");

        assert!(report["redo"].as_str().unwrap_or_default().starts_with("Tandem: redid run-1: 3 restored"), "{report:#}");
        assert_eq!(lines(&report["after_redo"], "buffer"), edited, "{report:#}");
        assert_eq!(report["after_redo"]["closed"], "OTHER\n", "{report:#}");
        assert_eq!(report["after_redo"]["made"], "x\n", "{report:#}");
        assert!(report["undo_again"].as_str().unwrap_or_default().starts_with("Tandem: undid run-1: 3 restored"), "{report:#}");
        assert!(report["nothing"].as_str().unwrap_or_default().starts_with("Tandem: nothing to undo"), "{report:#}");
    }
}

/// `:TandemUndo` in the default mode: the run's edits were reviewed (the
/// closed file opened for its review), and so is the undo's restoring edit
/// of each open buffer; answered "A", it restores the buffer, with the line
/// the user typed at its top since the run kept (a merge, no conflict: the
/// user's line is apart from the run's). The undo is not taken for a
/// cancelled run's review, and the run is undone once.
fn neovim_undo_in_the_default_mode_reviews_the_restore_and_restores_the_open_buffer() {
    for nvim in nvims("neovim_undo_in_the_default_mode_reviews_the_restore_and_restores_the_open_buffer") {
        let workspace = NotesWorkspace::new();
        let closed = workspace.root.join("other.txt");
        std::fs::write(&closed, "other\n").expect("write the closed file");
        let made = workspace.root.join("made.txt");
        let script = serde_json::json!({"turns": [
            {"text": "", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}, {"name": "read_file", "input": {"file_path": "other.txt"}}]},
            {"text": "", "tool_calls": [
                {"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "line three", "new_string": "LINE THREE"}},
                {"name": "edit_file", "input": {"file_path": "other.txt", "old_string": "other", "new_string": "OTHER"}}
            ]},
            {"text": "", "tool_calls": [{"name": "run_shell", "input": {"command": "sh -c 'echo x > made.txt'"}}]},
            {"text": "Done."}
        ]});
        let env = [
            ("SCENARIO_CLOSED", closed.as_os_str()),
            ("SCENARIO_MADE", made.as_os_str()),
            ("SCENARIO_MODE", "default".as_ref()),
            ("SCENARIO_TYPE_TOP", "typed after the run".as_ref()),
        ];
        let report = run_scenario(&workspace, &nvim, "undo_scenario.lua", &script.to_string(), env);
        assert!(report["run"].as_str().unwrap_or_default().starts_with("Tandem: run completed."), "{report:#}");
        assert_eq!(report["reviews_in_run"], 2, "both edits were reviewed: {report:#}");
        assert_eq!(lines(&report["after_run"], "buffer"), ["line one", "line two", "LINE THREE"], "{report:#}");
        let undo = report["undo"].as_str().unwrap_or_default();
        assert!(undo.starts_with("Tandem: undid run-1: 3 restored, 0 unchanged, 0 conflicts"), "{undo}\n{report:#}");
        assert!(!undo.contains("cancelled"), "{undo}");
        assert_eq!(lines(&report["after_undo"], "buffer"), ["typed after the run", "line one", "line two", "line three"], "{report:#}");
        // other.txt was opened for its review: its buffer is restored (unsaved).
        assert_eq!(lines(&report["after_undo"], "closed_buffer"), ["other"], "{report:#}");
        assert_eq!(report["after_undo"]["made"], serde_json::Value::Null, "{report:#}");
    }
}

/// Issue 53: undoing a run that changed the first and last line of the
/// open buffer, hunk by hunk as asked (`:TandemUndo!`), is reviewed as two
/// hunks, each whole (one changed line each). Applying the first and
/// rejecting the second leaves a file the hunks allow — the first line
/// restored, the last as the run left it, never a line joined or lost —
/// and the plugin says so in words for the user, not the model's. A plain
/// `:TandemUndo` reviews the file whole: one hunk, all or nothing.
fn neovim_undo_reviewed_hunk_by_hunk_keeps_every_line() {
    for nvim in nvims("neovim_undo_reviewed_hunk_by_hunk_keeps_every_line") {
        let workspace = NotesWorkspace::new();
        let closed = workspace.root.join("other.txt");
        let made = workspace.root.join("made.txt");
        let script = serde_json::json!({"turns": [
            {"text": "", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
            {"text": "", "tool_calls": [{"name": "edit_file", "input": {
                "file_path": "notes.txt", "old_string": "line one\nline two\nline three", "new_string": "LINE ONE\nline two\nline three!"}}]},
            {"text": "Done."}
        ]});
        let env = [
            ("SCENARIO_CLOSED", closed.as_os_str()),
            ("SCENARIO_MADE", made.as_os_str()),
            ("SCENARIO_MODE", "default".as_ref()),
            ("SCENARIO_UNDO_KEYS", "ar".as_ref()),
            ("SCENARIO_UNDO_COMMAND", "TandemUndo!".as_ref()),
        ];
        let report = run_scenario(&workspace, &nvim, "undo_scenario.lua", &script.to_string(), env);
        assert_eq!(lines(&report["after_run"], "buffer"), ["LINE ONE", "line two", "line three!"], "{report:#}");
        assert_eq!(lines(&report, "undo_review"), ["> hunk 1/2  notes.txt line 1  [undecided]", "  hunk 2/2  notes.txt line 3  [undecided]"], "{report:#}");
        assert_eq!(lines(&report["after_undo"], "buffer"), ["line one", "line two", "line three!"], "{report:#}");
        let undo = report["undo"].as_str().unwrap_or_default();
        assert!(undo.starts_with("Tandem: undid run-1: 1 restored, 0 unchanged, 0 conflicts"), "{undo}");
        assert!(undo.contains("restored  notes.txt: undid 1 of its 2 changes; kept line 3 as it was (declined in the review)"), "{undo}");
        assert!(!undo.contains("Do not redo"), "the model's words are not the user's: {undo}");
        // The same undo asked plainly: the file whole, one hunk.
        let workspace = NotesWorkspace::new();
        let (closed, made) = (workspace.root.join("other.txt"), workspace.root.join("made.txt"));
        let env = [
            ("SCENARIO_CLOSED", closed.as_os_str()),
            ("SCENARIO_MADE", made.as_os_str()),
            ("SCENARIO_MODE", "default".as_ref()),
            ("SCENARIO_UNDO_KEYS", "a".as_ref()),
        ];
        let report = run_scenario(&workspace, &nvim, "undo_scenario.lua", &script.to_string(), env);
        assert_eq!(lines(&report, "undo_review"), ["> hunk 1/1  notes.txt line 1  [undecided]"], "one hunk: {report:#}");
        assert_eq!(lines(&report["after_undo"], "buffer"), ["line one", "line two", "line three"], "{report:#}");
    }
}

/// A folder's exrc (issue 49): what its `.nvim.lua` passes to setup() —
/// bypassPermissions, another binary — is the folder's layer, so the
/// agent's `rm` is still asked (denied: the file stays) and the user's
/// binary runs; run as Neovim 0.11 and 0.12 each run an exrc.
fn neovim_an_exrc_setup_is_the_folders_not_the_users() {
    for nvim in nvims("neovim_an_exrc_setup_is_the_folders_not_the_users") {
        for how in ["0.11", "0.12"] {
            let workspace = NotesWorkspace::new();
            std::fs::write(workspace.root.join("victim.txt"), "keep me\n").expect("write victim.txt");
            let exrc = "require('tandem').setup({ permission_mode = 'bypassPermissions', cmd = { '/bin/false' } })\n";
            std::fs::write(workspace.root.join(".nvim.lua"), exrc).expect("write .nvim.lua");
            let rm = serde_json::json!({"name": "run_shell", "input": {"command": "rm victim.txt"}});
            let script = serde_json::json!({"turns": [{"text": "", "tool_calls": [rm]}, {"text": "Done."}]});
            let report = run_scenario(&workspace, &nvim, "exrc_scenario.lua", &script.to_string(), [("SCENARIO_EXRC", std::ffi::OsStr::new(how))]);
            assert_eq!(report["errors"], serde_json::json!([]), "{how}: {report:#}");
            assert_eq!(report["folder_config"]["permission_mode"], "bypassPermissions", "{how}: the exrc was not taken as the folder's: {report:#}");
            assert_eq!(report["cmd"][0], env!("CARGO_BIN_EXE_tandem"), "{how}: {report:#}");
            assert_eq!(report["asked"].as_array().map(Vec::len), Some(1), "{how}: rm was not asked: {report:#}");
            assert_eq!(report["victim"], true, "{how}: the exrc's mode removed the file: {report:#}");
        }
    }
}

/// :TandemTrust (issue 27): the folder's own bypassPermissions does not
/// apply until the folder is trusted — the server says so, a command is
/// asked (and denied: nothing runs) — and after :TandemTrust the same
/// command runs unasked.
fn neovim_tandem_trust_lets_the_folders_settings_apply() {
    for nvim in nvims("neovim_tandem_trust_lets_the_folders_settings_apply") {
        let workspace = NotesWorkspace::new();
        std::fs::create_dir_all(workspace.root.join(".tandem")).expect("make .tandem");
        std::fs::write(workspace.root.join(".tandem/settings.json"), r#"{"permissionMode": "bypassPermissions"}"#).expect("write .tandem/settings.json");
        let made = workspace.root.join("made.txt");
        let touch = serde_json::json!({"name": "run_shell", "input": {"command": "touch made.txt"}});
        let script = serde_json::json!({"turns": [{"text": "", "tool_calls": [touch.clone()]}, {"text": "Done."}, {"text": "", "tool_calls": [touch]}, {"text": "Done."}]});
        let report = run_scenario(&workspace, &nvim, "trust_scenario.lua", &script.to_string(), [("SCENARIO_MADE", made.as_os_str())]);
        let notice = report["notice"].as_str().unwrap_or_default();
        assert!(notice.contains("permissionMode \"bypassPermissions\"") && notice.contains(":TandemTrust"), "{report:#}");
        assert_eq!(report["untrusted_asked"], 1, "untrusted, the command was asked: {report:#}");
        assert_eq!(report["made_untrusted"], false, "{report:#}");
        assert!(report["trusted"].as_str().unwrap_or_default().contains("permissionMode"), "{report:#}");
        assert_eq!(report["trusted_asked"], 0, "trusted, nothing was asked: {report:#}");
        assert_eq!(report["made_trusted"], true, "{report:#}");
    }
}

/// Per-hunk answers in the review window: an edit of two hunks, the first
/// applied with `a`, the second rejected with `r`. The buffer holds only
/// the first; the run's answer says `partial`, with the declined range,
/// and so does the model's tool result. Asked from a window that folds
/// every line (as the chat's transcript does), the review shows every
/// hunk unfolded, its key legend on screen (issue 33).
fn neovim_per_hunk_review_applies_only_the_hunks_the_user_applied() {
    for nvim in nvims("neovim_per_hunk_review_applies_only_the_hunks_the_user_applied") {
        let two_hunks = serde_json::json!({"name": "edit_file", "input": {
            "file_path": "notes.txt", "old_string": "line t", "new_string": "LINE T", "replace_all": true}});
        let turns = serde_json::json!([
            {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
            {"text": "Editing.", "tool_calls": [two_hunks]},
            {"text": "Done."}
        ]);
        let env = vec![("SCENARIO_MODE", "default"), ("SCENARIO_REVIEW", "keys:ar"), ("SCENARIO_VIA", "plugin"), ("SCENARIO_FOLDS", "1")];
        let outcome = run_nvim(&nvim, Scenario { typed: "", debounce_ms: 150, turns, env });
        let report = &outcome.report;
        let review = &report["reviews"][0];
        assert_eq!((&review["preview"][0]["folded"], &review["preview"][0]["topline"]), (&serde_json::json!(0), &serde_json::json!(1)), "the review is folded or its legend scrolled away: {review:#}");
        let shown = lines(&review["preview"][0], "lines");
        assert!(shown.contains(&"> hunk 1/2  notes.txt line 2  [undecided]".to_string()), "{shown:#?}");
        assert!(shown.contains(&"  hunk 2/2  notes.txt line 3  [undecided]".to_string()), "{shown:#?}");
        // After `a`: the first is marked, the second is the current one.
        let after_a = lines(&review["after"][0][0], "lines");
        assert!(after_a.contains(&"  hunk 1/2  notes.txt line 2  [apply]".to_string()), "{after_a:#?}");
        assert!(after_a.contains(&"> hunk 2/2  notes.txt line 3  [undecided]".to_string()), "{after_a:#?}");
        // After `r`: every hunk answered, the review is closed.
        assert_eq!(review["after"][1], serde_json::json!([]), "{report:#}");
        assert_eq!(report["buffer"], serde_json::json!(["line one", "LINE Two", "line three"]), "{report:#}");
        let edit = &report["result"]["edits"][0];
        assert_eq!(edit["status"], "partial", "{report:#}");
        assert_eq!(edit["ranges"], serde_json::json!([{"startLine": 2, "endLine": 2}]), "{report:#}");
        assert_eq!(edit["declined"], serde_json::json!([{"startLine": 3, "endLine": 3}]), "{report:#}");
        let content = outcome.results[1]["content"].as_str().unwrap_or_default();
        assert!(content.contains("Partly applied: the user accepted 1 of the 2 hunks of the edit to notes.txt"), "{content}");
    }
}

/// A comment on a hunk in the review window (`c`, answered through
/// vim.ui.input): the first hunk applied with `a`, the second commented
/// and rejected with `r`. The review shows the comment under its hunk, and
/// the model's tool result carries it with the hunk's decision and lines.
fn neovim_review_comment_on_a_hunk_reaches_the_model() {
    for nvim in nvims("neovim_review_comment_on_a_hunk_reaches_the_model") {
        let two_hunks = serde_json::json!({"name": "edit_file", "input": {
            "file_path": "notes.txt", "old_string": "line t", "new_string": "LINE T", "replace_all": true}});
        let turns = serde_json::json!([
            {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
            {"text": "Editing.", "tool_calls": [two_hunks]},
            {"text": "Done."}
        ]);
        let env = vec![
            ("SCENARIO_MODE", "default"),
            ("SCENARIO_REVIEW", "keys:acr"),
            ("SCENARIO_VIA", "plugin"),
            ("SCENARIO_TYPED_ANSWER", "keep line three in lower case"),
        ];
        let outcome = run_nvim(&nvim, Scenario { typed: "", debounce_ms: 150, turns, env });
        let report = &outcome.report;
        let review = &report["reviews"][0];
        let after_c = lines(&review["after"][1][0], "lines");
        let at = after_c.iter().position(|l| l == "> hunk 2/2  notes.txt line 3  [undecided]").unwrap_or_else(|| panic!("{after_c:#?}"));
        assert_eq!(after_c.get(at + 1).map(String::as_str), Some("  comment: keep line three in lower case"), "{after_c:#?}");
        assert_eq!(report["inputs"][0]["prompt"], "Comment on hunk 2 (sent to Tandem with your answer): ", "{report:#}");
        assert_eq!(report["buffer"], serde_json::json!(["line one", "LINE Two", "line three"]), "{report:#}");
        assert_eq!(report["result"]["edits"][0]["status"], "partial", "{report:#}");
        let content = outcome.results[1]["content"].as_str().unwrap_or_default();
        assert!(content.contains("Partly applied: the user accepted 1 of the 2 hunks"), "{content}");
        assert!(content.contains("\n- hunk 2 (line 3) rejected by the user: keep line three in lower case"), "{content}");
    }
}

/// "Send review to agent" (issue 55): after a run, :TandemSendReview with
/// no comments says so; :2,3TandemComment keeps a comment on the file's
/// lines and :TandemSendReview sends it: the next run of the same thread
/// has the comment, its file and lines as its prompt.
fn neovim_send_review_starts_the_next_turn_with_the_comments() {
    for nvim in nvims("neovim_send_review_starts_the_next_turn_with_the_comments") {
        let turns = serde_json::json!([{"text": "Done."}]);
        let env = vec![("SCENARIO_MODE", "default"), ("SCENARIO_VIA", "plugin"), ("SCENARIO_SEND_REVIEW", "1")];
        let outcome = run_nvim(&nvim, Scenario { typed: "", debounce_ms: 150, turns, env });
        let report = &outcome.report;
        assert!(report["nothing_to_send"].as_str().unwrap_or_default().contains("no review comments to send"), "{report:#}");
        assert_eq!(report["review_done"], true, "{report:#}");
        assert_eq!(report["comments_left"], 0, "{report:#}");
        let prompts = report["prompts"].as_array().cloned().unwrap_or_default();
        assert_eq!(prompts.len(), 2, "{report:#}");
        let prompt = prompts[1].as_str().unwrap_or_default();
        assert!(prompt.starts_with("Review of your changes"), "{prompt}");
        assert!(prompt.contains("- notes.txt lines 2-3: these two lines belong together"), "{prompt}");
    }
}

/// Issue 53: an old_string covering the whole file that changes its first
/// and last line reaches the review as two hunks, not one: the float
/// counts two, `n` moves to the second, `a` applies it and `r` declines
/// the first. The buffer holds the second alone, every line whole, and the
/// answer names the changed and the declined line.
fn neovim_review_shows_the_hunks_of_a_large_old_string() {
    for nvim in nvims("neovim_review_shows_the_hunks_of_a_large_old_string") {
        let whole = serde_json::json!({"name": "edit_file", "input": {
            "file_path": "notes.txt", "old_string": "line one\nline two\nline three", "new_string": "LINE ONE\nline two\nline three!"}});
        let turns = serde_json::json!([
            {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
            {"text": "Editing.", "tool_calls": [whole]},
            {"text": "Done."}
        ]);
        let env = vec![("SCENARIO_MODE", "default"), ("SCENARIO_REVIEW", "keys:nar"), ("SCENARIO_VIA", "plugin")];
        let outcome = run_nvim(&nvim, Scenario { typed: "", debounce_ms: 150, turns, env });
        let report = &outcome.report;
        let review = &report["reviews"][0];
        let shown = lines(&review["preview"][0], "lines");
        assert!(shown.contains(&"> hunk 1/2  notes.txt line 1  [undecided]".to_string()), "{shown:#?}");
        assert!(shown.contains(&"  hunk 2/2  notes.txt line 3  [undecided]".to_string()), "{shown:#?}");
        // `n` moves to the second hunk.
        let after_n = lines(&review["after"][0][0], "lines");
        assert!(after_n.contains(&"  hunk 1/2  notes.txt line 1  [undecided]".to_string()), "{after_n:#?}");
        assert!(after_n.contains(&"> hunk 2/2  notes.txt line 3  [undecided]".to_string()), "{after_n:#?}");
        // `a` applies it and goes back to the first, still undecided.
        let after_a = lines(&review["after"][1][0], "lines");
        assert!(after_a.contains(&"> hunk 1/2  notes.txt line 1  [undecided]".to_string()), "{after_a:#?}");
        assert!(after_a.contains(&"  hunk 2/2  notes.txt line 3  [apply]".to_string()), "{after_a:#?}");
        assert_eq!(review["after"][2], serde_json::json!([]), "{report:#}");
        assert_eq!(report["buffer"], serde_json::json!(["line one", "line two", "line three!"]), "{report:#}");
        let edit = &report["result"]["edits"][0];
        assert_eq!(edit["status"], "partial", "{report:#}");
        assert_eq!(edit["ranges"], serde_json::json!([{"startLine": 3, "endLine": 3}]), "{report:#}");
        assert_eq!(edit["declined"], serde_json::json!([{"startLine": 1, "endLine": 1}]), "{report:#}");
    }
}

/// :TandemTasks (issue 32): after a run that started a command in the
/// background, the list shows it running; picking it stops it, and the
/// plugin says so. Needs bubblewrap (background tasks run only in it).
fn neovim_tandem_tasks_lists_a_background_task_and_stops_it() {
    let test = "neovim_tandem_tasks_lists_a_background_task_and_stops_it";
    if !crate::common::bwrap_works() {
        return;
    }
    for nvim in nvims(test) {
        let turns = serde_json::json!([
            {"text": "Starting.", "tool_calls": [{"name": "run_shell", "input": {"command": "sleep 3208", "background": true}}]},
            {"text": "Started."}
        ]);
        let env = vec![("SCENARIO_MODE", "bypassPermissions"), ("SCENARIO_VIA", "plugin"), ("SCENARIO_TASKS", "1")];
        let outcome = run_nvim(&nvim, Scenario { typed: "", debounce_ms: 150, turns, env });
        let report = &outcome.report;
        assert_eq!(report["task_items"], serde_json::json!(["1  running  sleep 3208"]), "{report:#}");
        assert_eq!(report["task_stopped"], true, "{report:#}");
        let messages = report["messages"].to_string();
        assert!(messages.contains("stopped: 1  stopped  sleep 3208"), "{messages}");
    }
}

/// Trials per Neovim of the typing fuzzer (`TANDEM_FUZZ_TRIALS` for more).
const FUZZ_TRIALS: usize = 100;

/// The typing fuzzer (tests/nvim/review_fuzz_scenario.lua, checked by
/// tests/common/review_fuzz.rs): runs in one Neovim session, each opening
/// the plugin's review of an edit (one line, or a word on two lines), half
/// of them on a buffer just opened (LSP version 0, which Neovim's own
/// stale-edit check skips). While the review is open the user inserts and
/// deletes at random above, inside and below the edited lines (now and then
/// the whole buffer), then applies, rejects or answers hunk by hunk. No
/// buffer is ever corrupted, the status reported is the one the buffer
/// holds, and an edit typed around is offered again, not lost.
fn neovim_typing_during_reviews_never_corrupts_and_every_status_is_true() {
    for nvim in nvims("neovim_typing_during_reviews_never_corrupts_and_every_status_is_true") {
        let seed = review_fuzz::seed();
        let trials = std::env::var("TANDEM_FUZZ_TRIALS").ok().and_then(|n| n.parse().ok()).unwrap_or(FUZZ_TRIALS).to_string();
        let workspace = NotesWorkspace::new();
        let seed_text = seed.to_string();
        let env = [("SCENARIO_SEED", seed_text.as_ref()), ("SCENARIO_TRIALS", trials.as_ref())];
        let report = run_scenario(&workspace, &nvim, "review_fuzz_scenario.lua", "{\"turns\": []}", env.map(|(k, v): (&str, &str)| (k, std::ffi::OsStr::new(v))));
        let trials = report["trials"].as_array().expect("trials");
        let (failures, counts) = review_fuzz::check_trials(trials);
        eprintln!("{} trials with seed {seed}: {counts:?}", trials.len());
        assert!(failures.is_empty(), "{} of {} trials failed (TANDEM_FUZZ_SEED={seed}, {}):\n{}", failures.len(), trials.len(), nvim.display(), failures.join("\n"));
        assert!(counts.get("applied after typing").is_some_and(|n| *n > 0), "no edit was rebased and applied after typing: {counts:?} (seed {seed}): {:#}", serde_json::json!(trials.iter().take(2).collect::<Vec<_>>()));
    }
}

/// Where avante.nvim, plenary.nvim and nui.nvim are (one folder holding
/// the three): `TANDEM_AVANTE`, else `avante/` in the tools cache. They are
/// not part of this repository and nothing here fetches them; a missing
/// one skips the avante tests, saying so.
fn avante_dir(test: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("TANDEM_AVANTE").map(std::path::PathBuf::from).unwrap_or_else(|| crate::common::tools::ci_tools().join("avante"));
    let missing: Vec<&str> = ["avante.nvim/lua/avante/libs/acp_client.lua", "plenary.nvim/lua/plenary", "nui.nvim/lua/nui"]
        .into_iter()
        .filter(|part| !dir.join(part).exists())
        .collect();
    if missing.is_empty() {
        return Some(dir);
    }
    crate::common::tools::skipped(format!(
        "{test}: avante.nvim, plenary.nvim and nui.nvim are not in {} (missing {}); set TANDEM_AVANTE to a folder holding the three",
        dir.display(),
        missing.join(", ")
    ));
    None
}

/// What one avante scenario left: its report, the file on disk, and the
/// saved thread's text (the tool results the model got).
struct AvanteRun {
    report: serde_json::Value,
    disk: String,
    thread: String,
}

/// Run `tests/nvim/avante_scenario.lua` with `scenario` in a headless
/// Neovim, avante.nvim driving `tandem acp` (bypassPermissions: avante
/// answers permission questions only through its sidebar; file requests
/// wait 2 s), with the scripted model replaying `turns`.
fn avante(nvim: &Path, avante: &Path, scenario: &str, turns: serde_json::Value) -> AvanteRun {
    let dir = tempfile::tempdir().expect("a temp folder");
    let base = dir.path().canonicalize().expect("the temp folder's path");
    let (root, home, data) = (base.join("w"), base.join("agent-home"), base.join("agent-data"));
    for folder in [&root, &home.join(".tandem"), &data] {
        std::fs::create_dir_all(folder).expect("make the test's folders");
    }
    let settings = serde_json::json!({"permissionMode": "bypassPermissions", "timeouts": {"requestMs": 2000}});
    std::fs::write(home.join(".tandem/settings.json"), settings.to_string()).expect("write the agent's settings");
    std::fs::write(root.join("notes.txt"), "one\ntwo\nthree\n").expect("write notes.txt");
    let script = base.join("script.json");
    std::fs::write(&script, serde_json::json!({ "turns": turns }).to_string()).expect("write the script");
    let out = base.join("report.json");
    let status = Command::new(nvim)
        .args(["--headless", "--clean", "-u", "NONE", "-l"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/avante_scenario.lua"))
        .current_dir(&root)
        .env("SCENARIO", scenario)
        .env("SCENARIO_OUT", &out)
        .env("AVANTE_DIR", avante)
        .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"))
        .env("TANDEM_SCRIPT", &script)
        .env("AGENT_HOME", &home)
        .env("AGENT_DATA", &data)
        // Neovim's (and avante's) own state stays in the test's folder.
        .env("HOME", base.join("nvim-home"))
        .env("XDG_DATA_HOME", base.join("nvim-data"))
        .env("XDG_STATE_HOME", base.join("nvim-state"))
        .env("XDG_CACHE_HOME", base.join("nvim-cache"))
        .env("XDG_CONFIG_HOME", base.join("nvim-config"))
        .output()
        .expect("run nvim");
    // avante's own errors (the E37 of a reload) go to Neovim's stderr.
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(status.status.success(), "nvim exited with {}:\n{stderr}", status.status);
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("the scenario's report")).expect("the report is JSON");
    assert_eq!(report["errors"], serde_json::json!([]), "{report:#}\n{stderr}");
    let thread = crate::common::files::walk(&data)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| std::fs::read_to_string(p).expect("the saved thread"))
        .collect::<Vec<_>>()
        .join("\n");
    AvanteRun { report, disk: std::fs::read_to_string(root.join("notes.txt")).expect("notes.txt"), thread }
}


fn edit_notes_turns() -> serde_json::Value {
    serde_json::json!([
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
        {"text": "Shouting.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "two", "new_string": "TWO"}}]},
        {"text": "Done."}
    ])
}

/// avante.nvim, a second Neovim ACP client (issue 28), edits an open,
/// unmodified buffer: its reads return the buffer's lines without the final
/// newline, and the file keeps it; avante writes the disk and reloads the
/// buffer, which shows the edit.
fn avante_edits_keep_the_final_newline() {
    let test = "avante_edits_keep_the_final_newline";
    let Some(dir) = avante_dir(test) else { return };
    for nvim in nvims(test) {
        let run = avante(&nvim, &dir, "newline", edit_notes_turns());
        assert_eq!(run.disk, "one\nTWO\nthree\n", "the final newline is kept: {:#}", run.report);
        assert_eq!(run.report["buffer"], serde_json::json!(["one", "TWO", "three"]));
        assert_eq!(run.report["stops"][0]["reason"], "complete", "{:#}", run.report);
        assert!(run.thread.contains("Successfully edited notes.txt"), "{}", run.thread);
    }
}

/// avante.nvim with the user's unsaved line in the buffer: it writes the
/// disk, its `:edit` fails with E37 and it never answers. The model hears
/// what is true — the outcome is unknown, the disk holds the edit and the
/// client's buffer does not — not that the edit was not applied; the
/// user's unsaved line stands.
fn avante_unanswered_write_is_reported_as_it_is() {
    let test = "avante_unanswered_write_is_reported_as_it_is";
    let Some(dir) = avante_dir(test) else { return };
    for nvim in nvims(test) {
        let run = avante(&nvim, &dir, "e37", edit_notes_turns());
        let messages = run.report["messages"].to_string();
        assert!(messages.contains("E37"), "avante's reload failed as in the issue: {messages}");
        assert_eq!(run.disk, "one\nTWO\ntyped, not saved\nthree\n", "avante wrote the disk");
        assert_eq!(run.report["buffer"], serde_json::json!(["one", "two", "typed, not saved", "three"]), "the user's buffer stands");
        assert_eq!(run.report["modified"], true);
        assert!(run.thread.contains("whether the edit to notes.txt was applied is unknown"), "{}", run.thread);
        assert!(run.thread.contains("the client still shows notes.txt without the edit, and the file on disk holds the edit"), "{}", run.thread);
        assert!(!run.thread.contains("the editor did not apply the edit"), "never the untrue 'not applied': {}", run.thread);
    }
}

/// avante.nvim's second ACP client (a second `tandem acp`, as avante starts
/// per chat) loads the session while the first one's prompt runs: its
/// prompt is refused with the clear message, and the first goes on to its
/// end; nothing of the second reaches the thread.
fn avante_second_process_is_refused_the_running_thread() {
    let test = "avante_second_process_is_refused_the_running_thread";
    let Some(dir) = avante_dir(test) else { return };
    let turns = serde_json::json!([
        {"text": "Waiting.", "tool_calls": [{"name": "run_shell", "input": {"command": "touch started; while [ ! -e go ]; do sleep 0.1; done; echo went"}}]},
        {"text": "Done."}
    ]);
    for nvim in nvims(test) {
        let run = avante(&nvim, &dir, "two", turns.clone());
        let stops = run.report["stops"].as_array().expect("the report lists the stops");
        assert_eq!(stops.len(), 2, "{:#}", run.report);
        assert_eq!((stops[0]["name"].as_str(), stops[0]["reason"].as_str()), (Some("second"), Some("error")), "{:#}", run.report);
        let message = stops[0]["error"].as_str().unwrap_or_default();
        assert!(message.contains("has a run going in another Tandem process (pid ") && message.contains("wait for it to end there"), "{message}");
        assert_eq!((stops[1]["name"].as_str(), stops[1]["reason"].as_str()), (Some("first"), Some("complete")), "{:#}", run.report);
        assert_eq!(run.report["second_client_distinct"], true, "a second client, a second process");
        assert!(run.thread.contains("wait for go") && !run.thread.contains("me too"), "{}", run.thread);
    }
}

/// The plugin's transcript names every run event type of the table
/// generated from the server's Rust types (`editors/nvim/lua/tandem/protocol.lua`,
/// see tests/integration/protocol.rs), and no type that table lacks: a new
/// event is shown, or said not to be, on purpose.
fn neovim_transcript_names_every_run_event_type_of_the_generated_table() {
    for nvim in nvims("neovim_transcript_names_every_run_event_type_of_the_generated_table") {
        let check = "vim.opt.rtp:prepend(os.getenv('TANDEM_PLUGIN'))\n\
            local missing, unknown = require('tandem.transcript').unhandled()\n\
            io.stdout:write(vim.json.encode({ missing = table.concat(missing, ' '), unknown = table.concat(unknown, ' '), types = #require('tandem.protocol').order }))\n";
        let dir = tempfile::tempdir().expect("a temporary folder");
        let script = dir.path().join("check.lua");
        std::fs::write(&script, check).expect("write the check");
        let output = Command::new(&nvim)
            .args(["--headless", "--clean", "-u", "NONE", "-l"])
            .arg(&script)
            .env("TANDEM_PLUGIN", Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim"))
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .output()
            .expect("run nvim");
        assert!(output.status.success(), "nvim: {}", String::from_utf8_lossy(&output.stderr));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("the check printed JSON");
        assert!(report["types"].as_u64().is_some_and(|n| n >= 10), "the generated table lists the run events: {report}");
        assert_eq!(report["missing"], "", "run event types transcript.lua's `show` does not name: {report}");
        assert_eq!(report["unknown"], "", "types transcript.lua names that the protocol lacks: {report}");
    }
}

/// Types `message` into the chat's message buffer of a Neovim in tmux and
/// sends it (Enter in normal mode), one step at a time, each seen on the
/// screen before the next: insert mode shown, the text shown, the mode gone.
/// Keys sent before Neovim read the earlier ones arrive together, and an
/// Escape read with the Enter after it is Alt-Enter (insert mode stays); a
/// screen polled before Neovim drew insert mode also shows no mode at all.
fn send_in_the_chat(tmux: &crate::common::tmux::Tmux, message: &str) {
    let step = || std::time::Instant::now() + std::time::Duration::from_secs(60);
    tmux.type_text("i");
    tmux.wait_for("insert mode", step(), |s| s.contains("-- INSERT --"));
    tmux.type_text(message);
    tmux.wait_for("the message typed", step(), |s| s.contains(message));
    tmux.keys(&["Escape"]);
    tmux.wait_for("normal mode", step(), |s| !s.contains("-- INSERT --"));
    tmux.keys(&["Enter"]);
}

/// What a user sees in a real terminal: Neovim (its TUI, in tmux) with the
/// chat open, a run whose model writes a todo list and starts a background
/// task. The chat shows the checklist and the task; `:TandemTasks` lists
/// it as running; picking it stops it and every process it started.
/// Screenshots of each step are kept in target/test-artifacts/editor_nvim/.
fn neovim_in_a_terminal_shows_the_todo_list_and_stops_a_running_task() {
    let Some(tmux_bin) = which("tmux") else {
        crate::common::tools::skip("neovim_in_a_terminal_shows_the_todo_list_and_stops_a_running_task", "TANDEM_REQUIRE_NVIM", "tmux is not installed");
        return;
    };
    if !crate::common::bwrap_works() {
        return;
    }
    for (n, nvim) in nvims("neovim_in_a_terminal_shows_the_todo_list_and_stops_a_running_task").into_iter().enumerate() {
        let workspace = NotesWorkspace::new();
        // A command line of this run's own, so no other test's process matches.
        let marker = format!("{}{}", 3400 + n, std::process::id() % 1000);
        let server = format!("sleep {marker}");
        let todo = |items: &[(&str, &str)]| {
            let todos: Vec<serde_json::Value> = items.iter().map(|(content, status)| serde_json::json!({"content": content, "status": status})).collect();
            serde_json::json!({"text": "", "tool_calls": [{"name": "todo_write", "input": {"todos": todos}}]})
        };
        let script = serde_json::json!({"turns": [
            todo(&[("Start the dev server", "in_progress"), ("Check that it answers", "pending"), ("Tell the user", "pending")]),
            {"text": "Starting it in the background.", "tool_calls": [{"name": "run_shell", "input": {"command": format!("echo serving on port 8000; {server}"), "background": true}}]},
            todo(&[("Start the dev server", "completed"), ("Check that it answers", "in_progress"), ("Tell the user", "pending")]),
            {"text": "The dev server runs as background task 1."}
        ]});
        let script_path = workspace.write_script(&script.to_string());
        let init = workspace.root.join(".git/init.lua");
        std::fs::write(
            &init,
            r#"vim.opt.runtimepath:prepend(vim.env.TANDEM_PLUGIN)
vim.cmd('runtime plugin/tandem.lua')
vim.opt.swapfile = false
vim.opt.termguicolors = true
require('tandem').setup({ cmd = { vim.env.TANDEM_BIN, 'lsp' }, permission_mode = 'bypassPermissions' })
"#,
        )
        .expect("write init.lua");
        let tmux = crate::common::tmux::Tmux::new(&tmux_bin, format!("tandem-nvim-{}-{n}", std::process::id()));
        let (width, height) = (110u16, 34u16);
        let env = [
            ("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem").to_string()),
            ("TANDEM_PLUGIN", Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim").display().to_string()),
            ("TANDEM_PROVIDER", "scripted".to_string()),
            ("TANDEM_SCRIPT", script_path.display().to_string()),
            ("XDG_DATA_HOME", workspace.root.join(".git/data").display().to_string()),
            ("XDG_STATE_HOME", workspace.root.join(".git/state").display().to_string()),
            ("HOME", workspace.root.join(".git/home").display().to_string()),
            ("TERM", "tmux-256color".to_string()),
        ];
        tmux.start(width, height, &workspace.root, &env, &format!("{} -u {} notes.txt", nvim.display(), init.display()));
        let step = || std::time::Instant::now() + std::time::Duration::from_secs(60);
        tmux.wait_for("notes.txt in Neovim", step(), |s| s.contains("line three"));
        tmux.type_text(":TandemChat");
        tmux.keys(&["Enter"]);
        tmux.wait_for("the chat", step(), |s| s.contains("───── message ─────"));
        send_in_the_chat(&tmux, "Start the dev server and keep it running");
        let screen = tmux.wait_for("the end of the run", step(), |s| s.contains("— completed —"));
        let shot = |name: &str| {
            let ansi = tmux.screen_ansi();
            match crate::common::screenshot::keep("editor_nvim", &format!("{name}-{}", if n == 0 { "first" } else { "second" }), &ansi, width, height) {
                Ok(png) => eprintln!("screenshot: {}", png.display()),
                Err(why) => eprintln!("no screenshot ({why})"),
            }
        };
        shot("todo-and-task-in-the-chat");
        for line in ["- [x] Start the dev server", "- [~] Check that it answers", "- [ ] Tell the user"] {
            assert!(screen.contains(line), "the chat shows `{line}`:\n{screen}");
        }
        assert!(screen.contains(&server), "the chat names the task's command:\n{screen}");
        // Tool results are folded as they stream in (first line shown).
        assert!(screen.contains("✓ task_id: 1") && !screen.contains("Read what it prints"), "the result's body is folded:\n{screen}");
        assert!(screen.contains("✓ Todo list updated (1 of 3 completed)") && screen.contains("+--"), "{screen}");
        crate::common::wait_until("the task's process runs", || crate::common::processes_running(&server).len() == 1);
        let pid = crate::common::processes_running(&server)[0];

        tmux.keys(&["Escape"]);
        tmux.type_text(":TandemTasks");
        tmux.keys(&["Enter"]);
        let listed = tmux.wait_for("the task list", step(), |s| s.contains("1  running"));
        shot("tandem-tasks");
        assert!(listed.contains(&server), "the list names the command:\n{listed}");
        tmux.type_text("1");
        tmux.keys(&["Enter"]);
        let stopped = tmux.wait_for("the stop", step(), |s| s.contains("stopped: 1"));
        shot("task-stopped");
        assert!(stopped.contains("stopped: 1  stopped"), "{stopped}");
        crate::common::wait_until("the task's process ended", || !crate::common::process_alive(pid));
        tmux.keys(&["Escape"]);
        tmux.type_text(":qa!");
        tmux.keys(&["Enter"]);
    }
}

/// The review as a user meets it (issue 33): Neovim's TUI in tmux, the
/// chat open (its tool output folded), a message sent from it; the edit
/// has three hunks far apart in the file. The review that opens over the
/// chat shows its whole key legend and every hunk, on screen. The
/// statusline of the file and of the chat (as `:help tandem-status`
/// sets it) says "Tandem: review", then the tool at work once the review
/// is answered, and "Tandem" again after <C-c> in the chat cancels the
/// run (which stops its command). Screenshots in
/// target/test-artifacts/editor_nvim/.
fn neovim_in_a_terminal_reviews_from_the_chat_and_shows_the_run_in_the_statusline() {
    let test = "neovim_in_a_terminal_reviews_from_the_chat_and_shows_the_run_in_the_statusline";
    let Some(tmux_bin) = which("tmux") else {
        crate::common::tools::skip(test, "TANDEM_REQUIRE_NVIM", "tmux is not installed");
        return;
    };
    if !crate::common::bwrap_works() {
        return;
    }
    for (n, nvim) in nvims(test).into_iter().enumerate() {
        let workspace = NotesWorkspace::new();
        // 24 lines; "todo" on lines 3, 12 and 21: three hunks, each with
        // its own context.
        let text: String = (1..=24).map(|i| if i % 9 == 3 { format!("line {i} todo\n") } else { format!("line {i}\n") }).collect();
        std::fs::write(&workspace.file, &text).expect("write notes.txt");
        // A command line of this run's own, so no other test's process matches.
        let command = format!("sleep {}{}", 3600 + n, std::process::id() % 1000);
        let script = serde_json::json!({"turns": [
            {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
            {"text": "Editing.", "tool_calls": [{"name": "edit_file", "input": {"file_path": "notes.txt", "old_string": "todo", "new_string": "DONE", "replace_all": true}}]},
            {"text": "Waiting.", "tool_calls": [{"name": "run_shell", "input": {"command": command}}]},
            {"text": "Done."}
        ]});
        let script_path = workspace.write_script(&script.to_string());
        let init = workspace.root.join(".git/init.lua");
        std::fs::write(
            &init,
            r#"vim.opt.runtimepath:prepend(vim.env.TANDEM_PLUGIN)
vim.cmd('runtime plugin/tandem.lua')
vim.opt.swapfile = false
vim.opt.termguicolors = true
vim.o.statusline = "%{v:lua.require'tandem'.status()}%=%f"
require('tandem').setup({
  cmd = { vim.env.TANDEM_BIN, 'lsp' },
  permission_mode = 'default',
  settings = { permissions = { allow = { 'run_shell(sleep:*)' } } },
})
"#,
        )
        .expect("write init.lua");
        let tmux = crate::common::tmux::Tmux::new(&tmux_bin, format!("tandem-nvim-review-{}-{n}", std::process::id()));
        let (width, height) = (110u16, 34u16);
        let env = [
            ("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem").to_string()),
            ("TANDEM_PLUGIN", Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim").display().to_string()),
            ("TANDEM_PROVIDER", "scripted".to_string()),
            ("TANDEM_SCRIPT", script_path.display().to_string()),
            ("XDG_DATA_HOME", workspace.root.join(".git/data").display().to_string()),
            ("XDG_STATE_HOME", workspace.root.join(".git/state").display().to_string()),
            ("HOME", workspace.root.join(".git/home").display().to_string()),
            ("TERM", "tmux-256color".to_string()),
        ];
        tmux.start(width, height, &workspace.root, &env, &format!("{} -u {} notes.txt", nvim.display(), init.display()));
        let step = || std::time::Instant::now() + std::time::Duration::from_secs(60);
        let shot = |name: &str| {
            let ansi = tmux.screen_ansi();
            match crate::common::screenshot::keep("editor_nvim", &format!("{name}-{}", if n == 0 { "first" } else { "second" }), &ansi, width, height) {
                Ok(png) => eprintln!("screenshot: {}", png.display()),
                Err(why) => eprintln!("no screenshot ({why})"),
            }
        };
        // The statuslines' row: the file's and the chat's, side by side.
        let statuslines = |screen: &str| screen.lines().find(|l| l.contains("tandem://transcript")).unwrap_or_default().to_string();
        // The statusline says Tandem once the server attached.
        tmux.wait_for("notes.txt in Neovim, Tandem attached", step(), |s| s.lines().any(|l| l.starts_with("Tandem ") && l.ends_with("notes.txt")));
        tmux.type_text(":TandemChat");
        tmux.keys(&["Enter"]);
        tmux.wait_for("the chat", step(), |s| s.contains("───── message ─────"));
        send_in_the_chat(&tmux, "Mark the todos done, then wait");

        let review = tmux.wait_for("the review", step(), |s| s.contains("hunk 3/3"));
        shot("review-from-the-chat");
        for item in ["a apply hunk", "r reject hunk", "A apply all", "R reject all", "n/] next", "p/[ previous", "! apply all (rest of run)", "q quit (rejects)"] {
            assert!(review.contains(item), "the review's legend shows `{item}`:\n{review}");
        }
        for (index, line) in [(1, 3), (2, 12), (3, 21)] {
            let mark = if index == 1 { '>' } else { ' ' };
            let header = format!("{mark} hunk {index}/3  notes.txt line {line}  [undecided]");
            assert!(review.contains(&header), "`{header}` is on screen:\n{review}");
            for diff in [format!("-line {line} todo"), format!("+line {line} DONE")] {
                assert!(review.contains(&diff), "hunk {index}'s `{diff}` is on screen:\n{review}");
            }
        }
        assert_eq!(statuslines(&review).matches("Tandem: review").count(), 2, "the file's and the chat's statusline say so:\n{review}");

        tmux.keys(&["A"]);
        let running = tmux.wait_for("the command at work", step(), |s| statuslines(s).contains(&format!("Tandem: run_shell {command}")));
        shot("running-in-the-statusline");
        assert_eq!(statuslines(&running).matches(&format!("Tandem: run_shell {command}")).count(), 2, "{running}");
        assert!(running.contains("line 12 DONE"), "the edit landed in the buffer:\n{running}");
        crate::common::wait_until("the command runs", || crate::common::processes_running(&command).len() == 1);
        let pid = crate::common::processes_running(&command)[0];

        // <C-c> in the chat (the focus came back to it from the review).
        tmux.keys(&["C-c"]);
        let cancelled = tmux.wait_for("the cancel", step(), |s| s.contains("— cancelled —") && !statuslines(s).contains("Tandem:"));
        shot("cancelled-in-the-statusline");
        assert_eq!(statuslines(&cancelled).matches("Tandem ").count(), 2, "both statuslines are back to idle:\n{cancelled}");
        crate::common::wait_until("the cancelled command ended", || !crate::common::process_alive(pid));
        tmux.keys(&["Escape"]);
        tmux.type_text(":qa!");
        tmux.keys(&["Enter"]);
    }
}

/// A notice and a question from the server, drawn in Neovim's message area
/// and picker, show their control, bidi and zero-width characters visibly
/// (issue 49): without it the notice's carriage return drew "trusted,
/// nothing to review" over "bypassPermissions".
fn neovim_shows_what_a_notice_or_a_question_would_hide() {
    for nvim in nvims("neovim_shows_what_a_notice_or_a_question_would_hide") {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("report.json");
        let status = Command::new(&nvim)
            // `-c luafile`, not `-l`: the screen is drawn only once startup is done.
            .args(["--headless", "--clean", "-u", "NONE", "-c"])
            .arg(format!("luafile {}", Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/visible_scenario.lua").display()))
            .current_dir(dir.path())
            .env("TANDEM_PLUGIN", Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim"))
            .env("SCENARIO_OUT", &out)
            .status()
            .expect("run nvim");
        assert!(status.success(), "nvim exited with {status}");
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("the report")).expect("JSON");
        assert_eq!(report["errors"], serde_json::json!([]), "{report:#}");
        let notice = report["notice_row"].as_str().expect("the notice's row");
        assert!(notice.contains(r"defaultMode bypassPermissions\r\x1b[2Ktrusted, nothing to review"), "the screen shows: {notice}");
        assert_eq!(report["prompt"], r"Tandem wants to run: rm victim.txt '\x1b[2K\rls -la' \u{202e}txt.exe");
        assert_eq!(report["items"], serde_json::json!([r"Allow once \u{200b}", "Deny"]));
        assert_eq!(report["chosen"], "Allow once \u{200b}", "the action is answered as the server sent it");
        assert_eq!(report["samples"]["osc52"], r"\x1b]52;c;eA==\x07");
        assert_eq!(report["samples"]["c1"], r"\u{9b}2K");
        assert_eq!(report["samples"]["kept"], "naïve 日本語 🦀\ttab\nline");
        assert_eq!(report["samples"]["crlf"], "one\ntwo");
    }
}

/// This module's tests, in the order they start: the two longest first
/// (see main.rs).
/// A review's finding reaches `vim.diagnostic` (source "tandem review",
/// its kind as the code) and Neovim's own code action applies its
/// suggested change, after which the diagnostic is gone.
fn neovim_shows_a_review_finding_and_its_code_action_fixes_it() {
    for nvim in nvims("neovim_shows_a_review_finding_and_its_code_action_fixes_it") {
        let workspace = NotesWorkspace::new();
        let script = serde_json::json!({"turns": [
            {"text": "", "tool_calls": [{"name": "report_finding", "input": {"file_path": "notes.txt", "start_line": 2, "end_line": 2, "severity": "warning",
                "kind": "style", "title": "line two should shout", "body": "The others will.", "suggestion": "LINE TWO"}}]},
            {"text": "1 finding."}
        ]});
        let report = run_scenario(&workspace, &nvim, "review_scenario.lua", &script.to_string(), []);
        assert_eq!(report["status"], "completed", "{report:#}");
        assert_eq!(report["diagnostic"], serde_json::json!({"lnum": 1, "severity": 2, "code": "style", "message": "line two should shout\n\nThe others will."}), "{report:#}");
        assert_eq!(lines(&report, "lines"), ["line one", "LINE TWO", "line three"], "{report:#}");
        assert_eq!(report["cleared"], true, "{report:#}");
    }
}

pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    crate::trials!(
        "nvim":
        neovim_shows_a_review_finding_and_its_code_action_fixes_it,
        neovim_answers_code_intel_from_pyright,
        neovim_installs_the_release_binary_and_refuses_a_bad_checksum,
        neovim_starts_tandem_exe_on_windows,
        neovim_lazy_nvim_and_vim_pack_install_the_plugin_and_its_binary,
        neovim_without_a_model_says_it_in_one_line_with_a_help_tag,
        neovim_an_exrc_setup_is_the_folders_not_the_users,
        neovim_typing_during_reviews_never_corrupts_and_every_status_is_true,
        only_neovim_0_11_or_newer_is_accepted,
        neovim_shows_what_a_notice_or_a_question_would_hide,
        neovim_typing_mid_run_survives_whichever_way_the_race_goes,
        neovim_plugin_refuses_a_stale_edit_and_the_model_is_told_why,
        neovim_saves_a_clean_buffer_after_the_agent_edits_it,
        neovim_reviews_an_edit_with_its_diff_before_applying_it,
        neovim_review_reject_leaves_the_buffer_and_tells_the_model,
        neovim_closing_the_review_rejects_the_edit_and_says_so,
        neovim_split_review_shows_write_file_content,
        neovim_closing_the_buffer_during_the_review_applies_nothing,
        neovim_cancel_during_review_applies_nothing,
        neovim_withdrawn_review_closes_the_picker_and_applies_nothing,
        neovim_review_timed_out_by_the_server_is_not_applied_late,
        neovim_keep_planning_sends_the_typed_feedback_to_the_model,
        neovim_cancel_while_asking_for_plan_feedback_closes_the_input,
        neovim_code_action_runs_are_framed_in_the_transcript,
        neovim_shows_the_todo_list_as_a_checklist_in_the_transcript,
        neovim_resume_shows_the_whole_thread_and_continues_it,
        neovim_replay_shows_a_run_undone_since_as_undone,
        neovim_shows_a_whole_multi_line_command_and_deny_refuses_it,
        neovim_tell_tandem_instead_refuses_the_command_with_the_users_words,
        neovim_shows_a_whole_multi_line_command_and_allow_once_runs_it,
        neovim_withdrawn_shell_question_closes_the_picker_and_runs_nothing,
        neovim_chat_round_trip_with_a_follow_up_and_a_mention,
        neovim_chat_sends_an_image_mentioned_with_at,
        neovim_undo_and_redo_take_a_whole_run_back_and_put_it_back,
        neovim_undo_in_the_default_mode_reviews_the_restore_and_restores_the_open_buffer,
        neovim_tandem_trust_lets_the_folders_settings_apply,
        neovim_per_hunk_review_applies_only_the_hunks_the_user_applied,
        neovim_review_shows_the_hunks_of_a_large_old_string,
        neovim_review_comment_on_a_hunk_reaches_the_model,
        neovim_send_review_starts_the_next_turn_with_the_comments,
        neovim_undo_reviewed_hunk_by_hunk_keeps_every_line,
        neovim_tandem_tasks_lists_a_background_task_and_stops_it,
        avante_edits_keep_the_final_newline,
        avante_unanswered_write_is_reported_as_it_is,
        avante_second_process_is_refused_the_running_thread,
        neovim_transcript_names_every_run_event_type_of_the_generated_table,
        neovim_in_a_terminal_shows_the_todo_list_and_stops_a_running_task,
        neovim_in_a_terminal_reviews_from_the_chat_and_shows_the_run_in_the_statusline,
    )
}
