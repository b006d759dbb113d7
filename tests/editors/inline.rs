//! Inline completions in real editors (issue 30): headless Neovim 0.12
//! (its own `vim.lsp.inline_completion`, set up by the plugin) and the
//! packaged VS Code extension in code-server, typing in a Python file, the
//! ghost text shown, and the accept key inserting it; in Neovim, next edits
//! given the diagnostics another source published on the buffer.
//!
//! The model is a loopback fill-in-the-middle mock (deterministic, so the
//! exact text is checked), and a **real local model**: llama.cpp's
//! `llama-server` serving Qwen2.5-Coder-0.5B on the CPU, which `.ci/tools`
//! builds and fetches once into the tools cache (`TANDEM_LLAMA_SERVER`,
//! `TANDEM_LLAMA_MODEL`). Where the model cannot be had the real-model
//! tests say so and skip; `.ci/run` sets `TANDEM_REQUIRE_LLAMA=1`, so CI
//! fails instead.

#![allow(clippy::unwrap_used)]

use crate::common::{fim_mock, llama};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fim_mock::{FimMock, Reply};
use llama::llama;
use serde_json::{json, Value};

/// A backstop for an editor that never exits (its own waits are shorter).
const EDITOR_LIMIT: Duration = Duration::from_secs(420);

/// One editor at a time: each takes a core or two.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

const SOURCE: &str = "import math\n\n\ndef area_of_circle(radius):\n    return math.pi * radius ** 2\n\n\ndef perimeter_of_circle(radius):\n";

/// The Neovim that has `vim.lsp.inline_completion` (0.12), from
/// `TANDEM_NVIMS` (else `nvim` on PATH); None (after saying so) without one.
fn nvim_with_inline_completion(test: &str) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var("TANDEM_NVIMS") {
        Ok(list) if !list.is_empty() => list.split(':').map(PathBuf::from).collect(),
        _ => vec![PathBuf::from("nvim")],
    };
    for nvim in candidates {
        let has = Command::new(&nvim)
            .args(["--headless", "--clean", "-u", "NONE", "-l", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child.stdin.take().unwrap().write_all(b"io.stdout:write(vim.lsp.inline_completion and 'yes' or 'no')")?;
                child.wait_with_output()
            })
            .map(|out| String::from_utf8_lossy(&out.stdout).contains("yes"))
            .unwrap_or(false);
        if has {
            return Some(nvim);
        }
    }
    crate::common::tools::skip(test, "TANDEM_REQUIRE_NVIM", "no Neovim in TANDEM_NVIMS has vim.lsp.inline_completion (0.12)");
    None
}

/// Run tests/nvim/inline_scenario.lua in a headless Neovim on `geometry.py`
/// (SOURCE) with these `inlineCompletions`; its report.
fn neovim_scenario(nvim: &Path, inline: Value, typed: &str) -> Value {
    neovim_scenario_typing(nvim, inline, typed, "")
}

/// The same, with `typed_after` typed once the ghost text shows, at once
/// before the accept key.
fn neovim_scenario_typing(nvim: &Path, inline: Value, typed: &str, typed_after: &str) -> Value {
    neovim_script(nvim, "inline_scenario.lua", inline, &[("SCENARIO_TYPED", typed), ("SCENARIO_TYPED_AFTER", typed_after)])
}

/// Run a script of tests/nvim in a headless Neovim on `geometry.py`
/// (SOURCE) with these `inlineCompletions` (`SCENARIO_INLINE`) and more
/// environment; its report (`SCENARIO_OUT`), which has no errors.
fn neovim_script(nvim: &Path, script: &str, inline: Value, env: &[(&str, &str)]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("work");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("geometry.py"), SOURCE).unwrap();
    let out = dir.path().join("report.json");
    // SCENARIO_USER_SETTINGS: the user's ~/.tandem/settings.json.
    if let Some((_, settings)) = env.iter().find(|(name, _)| *name == "SCENARIO_USER_SETTINGS") {
        std::fs::create_dir_all(dir.path().join("home/.tandem")).unwrap();
        std::fs::write(dir.path().join("home/.tandem/settings.json"), settings).unwrap();
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(nvim)
        .args(["--headless", "--clean", "-u", "NONE", "-S"])
        .arg(manifest.join("tests/nvim").join(script))
        .arg("geometry.py")
        .current_dir(&root)
        .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"))
        .env("TANDEM_PLUGIN", manifest.join("editors/nvim"))
        .env("SCENARIO_INLINE", inline.to_string())
        .envs(env.iter().copied())
        .env("SCENARIO_OUT", &out)
        .env("SCENARIO_WAIT_MS", "180000")
        .env("HOME", dir.path().join("home"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("TANDEM_PROVIDER", "scripted")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + EDITOR_LIMIT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("Neovim did not finish the scenario within {} s", EDITOR_LIMIT.as_secs());
        }
        // Polling the editor's exit, bounded by the deadline.
        std::thread::sleep(Duration::from_millis(50));
    }
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("no report: {e}"))).unwrap();
    assert_eq!(report["errors"], json!([]), "{report:#}");
    assert_eq!(std::fs::read_to_string(root.join("geometry.py")).unwrap(), SOURCE, "nothing reaches the disk");
    report
}

/// The lines of a report field.
fn lines(report: &Value, key: &str) -> Vec<String> {
    report[key].as_array().unwrap_or_else(|| panic!("no {key}: {report:#}")).iter().map(|l| l.as_str().unwrap().to_string()).collect()
}

/// The checks both Neovim tests make: the ghost text was shown after what
/// was typed, and the key inserted it there.
fn assert_shown_and_accepted(report: &Value, typed_line: &str) -> String {
    assert_eq!((report["advertised"].as_bool(), report["mapping"].as_str()), (Some(true), Some("Tandem: accept the inline completion")), "{report:#}");
    assert_eq!(report["shown"], true, "no ghost text: {report:#}");
    let ghost = report["ghost"].as_str().unwrap().to_string();
    assert!(!ghost.trim().is_empty(), "{report:#}");
    assert_eq!(lines(report, "lines_shown").last().map(String::as_str), Some(typed_line), "the ghost text is virtual, not in the buffer: {report:#}");
    assert_eq!(report["accepted"], true, "the key did not accept: {report:#}");
    let after = lines(report, "lines").join("\n");
    let expected_end = format!("{typed_line}{ghost}");
    assert!(after.ends_with(&expected_end), "after accepting:\n{after}\nexpected it to end with:\n{expected_end}");
    assert_eq!(report["ghost_after"], "", "{report:#}");
    ghost
}

fn neovim_shows_the_models_ghost_text_and_tab_inserts_it() {
    let Some(nvim) = nvim_with_inline_completion("neovim_shows_the_models_ghost_text_and_tab_inserts_it") else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mock = FimMock::start(Reply::Json(FimMock::infill("2 * math.pi * radius")));
    let report = neovim_scenario(&nvim, json!({"enabled": true, "provider": "llama.cpp", "baseUrl": mock.url, "debounceMs": 0}), "return ");
    let ghost = assert_shown_and_accepted(&report, "    return ");
    assert_eq!(ghost, "2 * math.pi * radius");
    // The model saw the buffer as typed, the unsaved line included.
    let received = mock.received();
    let last = received.last().unwrap();
    assert_eq!(last.path, "/infill");
    assert!(last.body["input_prefix"].as_str().unwrap().ends_with("def perimeter_of_circle(radius):\n    return "), "{:?}", last.body);
}

/// Completions turned on in the user's own settings file, not in setup():
/// the plugin enables Neovim's inline completion and maps the key once the
/// server says it offers them.
fn neovim_shows_ghost_text_when_the_users_settings_file_turns_completions_on() {
    let test = "neovim_shows_ghost_text_when_the_users_settings_file_turns_completions_on";
    let Some(nvim) = nvim_with_inline_completion(test) else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mock = FimMock::start(Reply::Json(FimMock::infill("2 * math.pi * radius")));
    let settings = json!({"inlineCompletions": {"enabled": true, "provider": "llama.cpp", "baseUrl": mock.url, "debounceMs": 0}}).to_string();
    let report = neovim_script(
        &nvim,
        "inline_scenario.lua",
        Value::Null,
        &[("SCENARIO_TYPED", "return "), ("SCENARIO_TYPED_AFTER", ""), ("SCENARIO_USER_SETTINGS", &settings)],
    );
    assert_eq!(assert_shown_and_accepted(&report, "    return "), "2 * math.pi * radius");
}

fn typing_the_start_of_the_ghost_text_and_tab_at_once_inserts_it_once() {
    // The user types the suggestion's first characters and Tab before a
    // newer suggestion can come (Neovim asks again only 200 ms after the
    // last keystroke; the model holds every later request): the item shown
    // is the one made for the line before those characters.
    let Some(nvim) = nvim_with_inline_completion("typing_the_start_of_the_ghost_text_and_tab_at_once_inserts_it_once") else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mock = FimMock::start(Reply::Held(FimMock::infill("")));
    mock.push(Reply::Json(FimMock::infill("2 * math.pi * radius")));
    let report = neovim_scenario_typing(
        &nvim,
        json!({"enabled": true, "provider": "llama.cpp", "baseUrl": mock.url, "debounceMs": 0, "timeoutMs": 60000}),
        "return ",
        "2 *",
    );
    assert_eq!(report["ghost"], "2 * math.pi * radius", "{report:#}");
    assert_eq!(report["accepted"], true, "{report:#}");
    assert_eq!(lines(&report, "lines").last().map(String::as_str), Some("    return 2 * math.pi * radius"), "{report:#}");
    // Something else typed: the old suggestion is not put in after it.
    let mock = FimMock::start(Reply::Held(FimMock::infill("")));
    mock.push(Reply::Json(FimMock::infill("2 * math.pi * radius")));
    let report = neovim_scenario_typing(
        &nvim,
        json!({"enabled": true, "provider": "llama.cpp", "baseUrl": mock.url, "debounceMs": 0, "timeoutMs": 60000}),
        "return ",
        "3.14",
    );
    assert_eq!(lines(&report, "lines").last().map(String::as_str), Some("    return 3.14"), "{report:#}");
}

/// Issue 30: next edits are given the diagnostics Neovim has for the
/// buffer. Another source (a linter, as a language server would) publishes
/// an error on the buffer; with `nextEdits` on, the user's typing makes a
/// next-edit request, for which Tandem asks the editor (`tandem/codeIntel`,
/// answered by the plugin from `vim.diagnostic.get`), and the model's
/// prompt holds the error.
fn neovim_gives_next_edits_the_buffers_diagnostics() {
    let Some(nvim) = nvim_with_inline_completion("neovim_gives_next_edits_the_buffers_diagnostics") else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mock = FimMock::start(Reply::Json(FimMock::infill("2 * math.pi * radius")));
    // No rewrite in the asked format: no next-edit item, the ghost text is the completion.
    mock.route("/v1/chat/completions", Reply::Json(FimMock::chat("nothing to change")));
    let diagnostics = json!([{"lnum": 4, "col": 11, "end_lnum": 4, "end_col": 15, "severity": 1, "source": "linter", "message": "\"math\" is possibly unbound"}]);
    let report = neovim_script(
        &nvim,
        "inline_scenario.lua",
        json!({"enabled": true, "provider": "llama.cpp", "baseUrl": mock.url, "debounceMs": 0, "nextEdits": true}),
        &[("SCENARIO_TYPED", "return "), ("SCENARIO_TYPED_AFTER", ""), ("SCENARIO_DIAGNOSTICS", &diagnostics.to_string())],
    );
    assert_eq!(assert_shown_and_accepted(&report, "    return "), "2 * math.pi * radius");
    let prompts: Vec<String> = mock
        .received()
        .iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .map(|r| r.body["messages"][1]["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(!prompts.is_empty(), "no next-edit request: {:?}", mock.received().iter().map(|r| r.path.clone()).collect::<Vec<_>>());
    assert!(
        prompts.iter().any(|p| p.contains("\nDiagnostics:\nline 5: error: \"math\" is possibly unbound\n")),
        "the buffer's diagnostic is in no next-edit prompt:\n{}",
        prompts.join("\n-----\n")
    );
}

fn neovim_inline_completion_from_a_real_local_model() {
    let Some(nvim) = nvim_with_inline_completion("neovim_inline_completion_from_a_real_local_model") else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(llama) = llama("neovim_inline_completion_from_a_real_local_model") else { return };
    let inline = json!({"enabled": true, "provider": "llama.cpp", "baseUrl": llama.url, "maxTokens": 24, "timeoutMs": 120000});
    let report = neovim_scenario(&nvim, inline, "return ");
    let ghost = assert_shown_and_accepted(&report, "    return ");
    eprintln!("the model's ghost text in Neovim: {ghost:?}");
}

/// Issue 30: Neovim 0.12 cannot take a later registration of
/// `textDocument/inlineCompletion` (it says `dynamicRegistration = false`),
/// so turning completions on while Tandem runs
/// (`workspace/didChangeConfiguration`) tells the user, through Neovim's
/// own `vim.notify`, to restart the Tandem server.
fn neovim_is_told_to_restart_the_server_when_inline_completions_are_turned_on() {
    let Some(nvim) = nvim_with_inline_completion("neovim_is_told_to_restart_the_server_when_inline_completions_are_turned_on") else { return };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mock = FimMock::start(Reply::Json(FimMock::infill("2 * math.pi * radius")));
    let report = neovim_script(&nvim, "inline_restart.lua", json!({"enabled": false, "provider": "llama.cpp", "baseUrl": mock.url, "debounceMs": 0}), &[]);
    assert_eq!((report["dynamic_registration"].as_bool(), report["advertised_at_start"].as_bool()), (Some(false), Some(false)), "{report:#}");
    assert_eq!(report["told"], true, "no restart message: {report:#}");
    let message = &report["message"];
    assert!(message["text"].as_str().unwrap().contains("inline completions are now on"), "{report:#}");
    assert_eq!(message["level"], json!(2), "an information message (vim.log.levels.INFO): {report:#}");
}

/// This module's tests, in the order they start (see main.rs).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    crate::trials!(
        "inline":
        neovim_shows_the_models_ghost_text_and_tab_inserts_it,
        neovim_shows_ghost_text_when_the_users_settings_file_turns_completions_on,
        typing_the_start_of_the_ghost_text_and_tab_at_once_inserts_it_once,
        neovim_gives_next_edits_the_buffers_diagnostics,
        neovim_inline_completion_from_a_real_local_model,
        neovim_is_told_to_restart_the_server_when_inline_completions_are_turned_on,
    )
}
