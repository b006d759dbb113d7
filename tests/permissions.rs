//! Permissions in a real `tandem ask` with no terminal to answer (stdin is
//! not a tty): an asked call becomes a denial the model is told about,
//! rules in `.tandem/settings.json` allow and deny on what a call does, and
//! known read-only commands run without asking.

#![allow(clippy::unwrap_used)]

#[path = "common/script.rs"]
mod script;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use script::shell;
use serde_json::{json, Value};

struct Run {
    _temp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Run {
    fn new(settings: Option<Value>) -> Self {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let (root, home) = (base.join("work"), base.join("home"));
        std::fs::create_dir_all(root.join(".tandem")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        if let Some(settings) = settings {
            std::fs::write(root.join(".tandem/settings.json"), settings.to_string()).unwrap();
        }
        Run { _temp: temp, root, home }
    }

    /// Run the scripted calls, one per turn; returns the tool results.
    fn ask(&self, calls: &[Value], args: &[&str]) -> Vec<(bool, String)> {
        let mut turns: Vec<Value> = calls.iter().map(|c| json!({"tool_calls": [c]})).collect();
        turns.push(json!({"text": "Done."}));
        let script = self.home.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("TANDEM_PROVIDER", "scripted")
            .env("TANDEM_SCRIPT", &script)
            .stdin(Stdio::null());
        command.args(["ask", "--json"]).args(args).arg("go");
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["type"] == "tool_result")
            .map(|e| (e["is_error"].as_bool().unwrap(), e["content"].as_str().unwrap().to_string()))
            .collect()
    }
}

#[test]
fn headless_ask_becomes_a_denial_the_model_is_told_how_to_lift() {
    let run = Run::new(None);
    let results = run.ask(&[shell("touch made.txt"), shell("ls")], &[]);
    expect_test::expect![[r#"
        (true, "Permission denied for run_shell: run_shell touch made.txt needs permission (`touch made.txt` is not known to be read-only); no one can answer in this run: allow it in `.tandem/settings.json` with \"permissions\": {\"allow\": [\"run_shell(touch made.txt)\"]}, or rerun with `--permission-mode bypassPermissions`. Do not retry the same call; ask the user or take another approach.")"#]]
    .assert_eq(&format!("{:?}", results[0]));
    assert!(!run.root.join("made.txt").exists());
    // A known read-only command runs without asking.
    assert!(!results[1].0, "{results:?}");
}

#[test]
fn headless_edit_needs_accept_edits() {
    let run = Run::new(None);
    let write = json!({"name": "write_file", "input": {"file_path": "new.txt", "content": "hi\n"}});
    let results = run.ask(std::slice::from_ref(&write), &[]);
    assert!(results[0].0 && results[0].1.contains("rerun with `--permission-mode acceptEdits`"), "{results:?}");
    assert!(!run.root.join("new.txt").exists());
    let results = run.ask(&[write], &["--permission-mode", "acceptEdits"]);
    assert!(!results[0].0, "{results:?}");
    assert_eq!(std::fs::read_to_string(run.root.join("new.txt")).unwrap(), "hi\n");
}

#[test]
fn settings_rules_allow_and_deny_on_what_the_call_does() {
    let run = Run::new(Some(json!({"permissions": {
        "allow": ["run_shell(touch:*)", "edit_file(src/**)"],
        "deny": ["read_file(./.env)", "run_shell(touch secret.txt)"]
    }})));
    std::fs::create_dir_all(run.root.join("src")).unwrap();
    std::fs::write(run.root.join(".env"), "TOKEN=x\n").unwrap();
    let results = run.ask(
        &[
            shell("touch made.txt"),
            shell("touch secret.txt"),
            json!({"name": "read_file", "input": {"file_path": ".env"}}),
            // The edit rule covers write_file too: rules match the kind.
            json!({"name": "write_file", "input": {"file_path": "src/a.rs", "content": "fn a() {}\n"}}),
            json!({"name": "write_file", "input": {"file_path": "b.rs", "content": "fn b() {}\n"}}),
        ],
        &[],
    );
    let summary: Vec<String> = results.iter().map(|(error, text)| format!("{error}: {}", text.lines().next().unwrap_or(""))).collect();
    expect_test::expect![[r#"
        [
            "false: (no output)",
            "true: Permission denied for run_shell: the rule `run_shell(touch secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call. Do not retry the same call; ask the user or take another approach.",
            "true: Permission denied for read_file: the rule `read_file(./.env)` in permissions.deny (.tandem/settings.json) forbids this call. Do not retry the same call; ask the user or take another approach.",
            "false: Successfully wrote to src/a.rs (1 line)",
            "true: Permission denied for write_file: write_file b.rs needs permission; rerun with `--permission-mode acceptEdits` or allow it in `.tandem/settings.json`. Do not retry the same call; ask the user or take another approach.",
        ]
    "#]]
    .assert_debug_eq(&summary);
    assert!(run.root.join("made.txt").exists() && !run.root.join("secret.txt").exists());
}

#[test]
fn deny_rules_hold_when_bypassing_permissions() {
    let run = Run::new(Some(json!({"permissions": {"deny": ["run_shell(rm:*)"]}})));
    std::fs::write(run.root.join("keep.txt"), "x").unwrap();
    let results = run.ask(&[shell("ls && rm keep.txt")], &["--permission-mode", "bypassPermissions"]);
    assert!(results[0].0 && results[0].1.contains("run_shell(rm:*)"), "{results:?}");
    assert!(run.root.join("keep.txt").exists());
}

fn user_settings(run: &Run, settings: Value) {
    std::fs::create_dir_all(run.home.join(".tandem")).unwrap();
    std::fs::write(run.home.join(".tandem/settings.json"), settings.to_string()).unwrap();
}

#[test]
fn pre_tool_use_hook_that_exits_2_blocks_and_the_model_reads_its_stderr() {
    let run = Run::new(None);
    user_settings(&run, json!({"hooks": {"PreToolUse": [{"matcher": "run_shell", "hooks": [
        {"type": "command", "command": "cat > seen.json; echo 'ls is not allowed here' >&2; exit 2"}
    ]}]}}));
    let results = run.ask(&[shell("ls"), json!({"name": "list_files", "input": {"pattern": "*"}})], &[]);
    assert!(results[0].0 && results[0].1.contains("the PreToolUse hook blocked it: ls is not allowed here"), "{results:?}");
    // The matcher is on the tool's name: list_files is not blocked.
    assert!(!results[1].0, "{results:?}");
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(run.root.join("seen.json")).unwrap()).unwrap();
    assert_eq!((seen["tool_name"].as_str(), seen["tool_kind"]["command"].as_str()), (Some("run_shell"), Some("ls")));
}

#[test]
fn pre_tool_use_hook_can_allow_what_would_be_asked_but_not_what_is_denied() {
    let allow = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "ok by policy"}}'"#;
    let run = Run::new(Some(json!({"permissions": {"deny": ["run_shell(rm:*)"]}})));
    user_settings(&run, json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": allow}]}]}}));
    let results = run.ask(&[shell("touch made.txt"), shell("rm -f made.txt")], &[]);
    assert!(!results[0].0, "{results:?}");
    assert!(results[1].0 && results[1].1.contains("run_shell(rm:*)"), "{results:?}");
    assert!(run.root.join("made.txt").exists());
}

#[test]
fn hooks_that_time_out_or_crash_are_reported_and_do_not_block() {
    let run = Run::new(None);
    user_settings(&run, json!({"hooks": {
        "PreToolUse": [{"hooks": [{"type": "command", "command": "sleep 20", "timeout": 0.3}, {"type": "command", "command": "exit 7"}]}],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "echo 'remember to run the tests' >&2; exit 2"}]}]
    }}));
    let results = run.ask(&[shell("ls")], &[]);
    assert!(!results[0].0, "{results:?}");
    assert!(results[0].1.ends_with("[PostToolUse hook] remember to run the tests"), "{results:?}");
}

#[test]
fn project_hooks_do_not_run_without_consent() {
    let run = Run::new(Some(json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]}})));
    let results = run.ask(&[shell("ls")], &[]);
    assert!(!results[0].0, "{results:?}");
    assert!(!run.root.join("hook-ran").exists(), "a project hook ran without consent");
    // Approved (as a terminal run would remember it), the same hooks run.
    let settings = tandem::settings::load(&tandem::settings::SettingsFiles::with_home(&run.root, Some(&run.home)), &[]).0;
    let store = tandem::consent::ConsentStore::at(run.home.join("data/tandem/consent.json"));
    let approved = tandem::hooks::project_hooks(&settings).unwrap().to_string();
    store.approve(&run.root, tandem::consent::HOOKS, tandem::consent::PROJECT, &approved).unwrap();
    run.ask(&[shell("ls")], &[]);
    assert!(run.root.join("hook-ran").exists(), "an approved project hook did not run");
}
