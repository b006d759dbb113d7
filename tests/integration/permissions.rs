//! Permissions in a real `tandem ask` with no terminal to answer (stdin is
//! not a tty): an asked call becomes a denial the model is told about,
//! rules in `.tandem/settings.json` allow and deny on what a call does, and
//! known read-only commands run without asking.

#![allow(clippy::unwrap_used)]

use crate::common::script;

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
    let calls = [
        shell("touch made.txt"),
        shell("touch secret.txt"),
        json!({"name": "read_file", "input": {"file_path": ".env"}}),
        // The edit rule covers write_file too: rules match the kind.
        json!({"name": "write_file", "input": {"file_path": "src/a.rs", "content": "fn a() {}\n"}}),
        json!({"name": "write_file", "input": {"file_path": "b.rs", "content": "fn b() {}\n"}}),
    ];
    // Until the folder is trusted its allow rules do nothing; its deny rules hold.
    let untrusted = run.ask(&calls, &[]);
    assert!(untrusted[1].1.contains("forbids this call") && untrusted[2].1.contains("forbids this call"), "{untrusted:?}");
    assert!(untrusted[3].0 && !run.root.join("src/a.rs").exists(), "an untrusted allow rule let a write through: {untrusted:?}");
    let results = run.ask(&calls, &["--trust"]);
    let summary: Vec<String> = results.iter().map(|(error, text)| format!("{error}: {}", text.lines().next().unwrap_or(""))).collect();
    expect_test::expect![[r#"
        [
            "true: Command failed (exit code 1)",
            "true: Permission denied for run_shell: the rule `run_shell(touch secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call. Do not retry the same call; ask the user or take another approach.",
            "true: Permission denied for read_file: the rule `read_file(./.env)` in permissions.deny (.tandem/settings.json) forbids this call. Do not retry the same call; ask the user or take another approach.",
            "false: Successfully wrote to src/a.rs (1 line)",
            "true: Permission denied for write_file: write_file b.rs needs permission; rerun with `--permission-mode acceptEdits` or allow it in `.tandem/settings.json`. Do not retry the same call; ask the user or take another approach.",
        ]
    "#]]
    .assert_debug_eq(&summary);
    // Allowed by a rule in the default mode, the command ran unasked: in
    // the sandbox's read-only profile, so it wrote nothing.
    assert!(!run.root.join("made.txt").exists() && !run.root.join("secret.txt").exists());
    // In acceptEdits what a rule allows is approved: it may write the workspace.
    let results = run.ask(&[shell("touch made.txt"), shell("touch secret.txt")], &["--permission-mode", "acceptEdits", "--trust"]);
    assert!(!results[0].0 && results[1].0, "{results:?}");
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

/// The files under the workspace, as relative paths (`.tandem/` too).
fn files(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path.clone());
            }
            out.push(path.strip_prefix(root).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

/// The issue's classes, with payloads of our own, in `default` mode with
/// nobody to ask: only read-only commands may run, so none of these may
/// change anything on disk. Each would, if it ran (bash expands what the
/// text hides).
#[test]
fn commands_that_would_write_or_run_code_run_nothing_in_default_mode() {
    let run = Run::new(None);
    std::fs::write(run.root.join("notes.txt"), "my uncommitted lines\n").unwrap();
    std::fs::write(run.root.join("list.txt"), "ls\n").unwrap();
    // A repository whose own files would run code: a `.gitconfig` for
    // `HOME=$PWD`, and a crate whose build script `cargo check` runs.
    assert!(Command::new("git").args(["init", "-q"]).current_dir(&run.root).status().is_ok_and(|s| s.success()));
    std::fs::write(run.root.join(".gitconfig"), "[core]\n\tfsmonitor = \"touch pwned-fsmonitor; false\"\n").unwrap();
    std::fs::write(run.root.join("Cargo.toml"), "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2021\"\n").unwrap();
    std::fs::write(run.root.join("build.rs"), "fn main() { std::fs::write(\"pwned-build\", \"\").unwrap(); }\n").unwrap();
    std::fs::create_dir_all(run.root.join("src")).unwrap();
    std::fs::write(run.root.join("src/lib.rs"), "").unwrap();
    let before = files(&run.root);
    let payloads = [
        // Words judged as written, not as bash expands them.
        "find . -name notes.txt {-delete,}",
        "find . -name notes.txt $'-\\x64elete'",
        "find . -name notes.txt ${u:--delete}",
        "find . -maxdepth 1 -name notes.txt -exe${u}c touch pwned-exec \\;",
        "find . -maxdepth 0 $(echo -fprint) pwned-subst",
        "x='a[$(touch pwned-arith)]'; echo $((x))",
        "x='a[$(touch pwned-test)]'; [[ $x -eq 0 ]]",
        "x='$(touch pwned-prompt)'; echo ${x@P}",
        "find . -maxdepth 0 ${u:--fprint} pwned-default",
        "rg ${u:---pre=./list.txt} x notes.txt",
        "x=notes.txt; ls -l -- $x; touch pwned-plain",
        // Option spellings.
        "sort -opwned-glued notes.txt",
        "sort -uo pwned-bundled notes.txt",
        "sort --outp=pwned-abbrev notes.txt",
        "uniq notes.txt -- -pwned-after-dashes",
        // Read-only names that write or run others.
        "tree -o pwned-tree .",
        "xargs -I ls touch pwned-xargs < list.txt",
        "timeout 5 touch pwned-timeout",
        // Reads of what is not the workspace: every process's environment.
        "ps eww",
        "ps auxe",
        "fd -x touch pwned-fd",
        "fd . -X touch pwned-fd-batch",
        "git grep -Otouch notes",
        "git grep --open-files-in-pager=touch notes",
        "sort -S 1 --compress-program=sh notes.txt",
        "cargo check",
        "cargo build --offline",
        // Redirects and tee.
        "echo clobbered > notes.txt",
        "echo clobbered > note[s].txt",
        "echo x > pwne{d-brace,}",
        "mkdir -p .tandem; echo '{\"permissions\":{\"allow\":[\"run_shell\"]}}' > .tande[m]/settings.json",
        "ls | tee pwned-tee",
        "printf x >> pwned-append",
        // Directory tracking.
        "cd {.,} 2>/dev/null; touch pwned-cd",
        "CDPATH=/tmp; cd . && echo x > pwned-cdpath",
        "pushd src > /dev/null; pushd +1 > /dev/null; touch pwned-pushd",
        // Environment.
        "HOME=$PWD; git status",
        "HOME=$PWD git status",
    ];
    let calls: Vec<Value> = payloads.iter().map(|p| shell(p)).collect();
    let results = run.ask(&calls, &["--permission-mode", "default"]);
    assert_eq!(results.len(), payloads.len());
    for (payload, (is_error, text)) in payloads.iter().zip(&results) {
        assert!(*is_error && text.contains("needs permission"), "{payload} ran: {text}");
    }
    assert_eq!(std::fs::read_to_string(run.root.join("notes.txt")).unwrap(), "my uncommitted lines\n");
    assert_eq!(files(&run.root), before, "a command changed the workspace");
    // The same redirect in acceptEdits is an edit: it runs.
    let results = run.ask(&[shell("echo appended >> notes.txt")], &["--permission-mode", "acceptEdits"]);
    assert!(!results[0].0, "{results:?}");
    assert_eq!(std::fs::read_to_string(run.root.join("notes.txt")).unwrap(), "my uncommitted lines\nappended\n");
}

/// A deny rule holds whatever wrapper or spelling runs the command, and
/// a command name only known when it runs never passes it.
#[test]
fn deny_rules_hold_through_wrappers_and_spellings() {
    let run = Run::new(Some(json!({"permissions": {"deny": ["Bash(rm:*)"]}})));
    std::fs::write(run.root.join("keep.txt"), "x").unwrap();
    let payloads = [
        "/bin/rm keep.txt", "command rm keep.txt", "env rm keep.txt", "env -i PATH=/usr/bin:/bin rm keep.txt", "nice -n 1 rm keep.txt",
        "timeout 5 rm keep.txt", "nohup rm keep.txt", "echo keep.txt | xargs rm", "echo keep.txt | xargs -I ls rm ls",
        "sh -c 'rm keep.txt'", "bash -c 'true && rm keep.txt'", "find . -name keep.txt -delete", "find . -name keep.txt -exec rm {} \\;",
        "$(echo rm) keep.txt", "X=rm; $X keep.txt", "eval 'rm keep.txt'", "r''m keep.txt", "\\rm keep.txt",
    ];
    let calls: Vec<Value> = payloads.iter().map(|p| shell(p)).collect();
    let results = run.ask(&calls, &["--permission-mode", "bypassPermissions"]);
    for (payload, (is_error, text)) in payloads.iter().zip(&results) {
        assert!(*is_error && text.contains("run_shell(rm:*)"), "{payload}: {text}");
    }
    assert!(run.root.join("keep.txt").exists(), "keep.txt was removed");
}

/// Issue 49: `env - rm victim.txt` (env's lone `-`, which is `-i`) walked
/// past a deny rule for `rm`. Every form env takes a command in is seen
/// through, in `bypassPermissions` (nothing is asked: only the rule stands).
#[test]
fn deny_rules_see_through_env_in_every_form() {
    let run = Run::new(Some(json!({"permissions": {"deny": ["Bash(rm:*)"]}})));
    std::fs::write(run.root.join("victim.txt"), "x").unwrap();
    let payloads = [
        "env - rm victim.txt", "env - A=1 rm victim.txt", "env -i - rm victim.txt", "env -- - rm victim.txt", "env -i rm victim.txt",
        "env -u HOME rm victim.txt", "env -uHOME rm victim.txt", "env --unset=HOME rm victim.txt", "env -C . rm victim.txt",
        "env --chdir . rm victim.txt", "env -- rm victim.txt", "env A=1 B=2 rm victim.txt", "env -i -- A=1 rm victim.txt",
        "env -iv -u X -C . -- A=1 rm victim.txt", "env -S 'rm victim.txt'", "env -S'rm victim.txt'", "env -iS 'rm victim.txt'",
        "env -u X -S 'A=1 rm victim.txt'", "env --split-string='rm victim.txt'", "env - env -i env rm victim.txt",
        "env - sh -c 'rm victim.txt'", "env --ignore rm victim.txt",
    ];
    let calls: Vec<Value> = payloads.iter().map(|p| shell(p)).collect();
    let results = run.ask(&calls, &["--permission-mode", "bypassPermissions"]);
    assert_eq!(results.len(), payloads.len());
    for (payload, (is_error, text)) in payloads.iter().zip(&results) {
        assert!(*is_error && text.contains("run_shell(rm:*)"), "{payload}: {text}");
    }
    assert!(run.root.join("victim.txt").exists(), "victim.txt was removed");
}

/// A read deny rule (in Claude Code's spelling) stops every tool that
/// reads: the shell too, and through a symlink.
#[test]
fn read_deny_rules_cover_the_shell_and_symlinks() {
    let run = Run::new(Some(json!({"permissions": {"deny": ["Read(./secret.txt)"]}})));
    std::fs::write(run.root.join("secret.txt"), "TOPSECRET").unwrap();
    std::os::unix::fs::symlink(run.root.join("secret.txt"), run.root.join("innocent.txt")).unwrap();
    let calls = [
        shell("cat secret.txt"), shell("cat ./sub/../secret.txt"), shell("cat innocent.txt"), shell("head -c 100 < secret.txt"),
        shell("grep -r TOP secret.txt"), json!({"name": "read_file", "input": {"file_path": "secret.txt"}}),
        json!({"name": "read_file", "input": {"file_path": "innocent.txt"}}),
        json!({"name": "grep_search", "input": {"pattern": "TOP", "path": "innocent.txt"}}),
    ];
    let results = run.ask(&calls, &["--permission-mode", "bypassPermissions"]);
    assert_eq!(results.len(), calls.len());
    for (call, (is_error, text)) in calls.iter().zip(&results) {
        assert!(*is_error && !text.contains("TOPSECRET") && text.contains("read_file(./secret.txt)"), "{call}: {text}");
    }
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
    // Allowed without a question, it ran unasked: read-only.
    assert!(results[0].0 && results[0].1.contains("Read-only file system"), "{results:?}");
    assert!(results[1].0 && results[1].1.contains("run_shell(rm:*)"), "{results:?}");
    assert!(!run.root.join("made.txt").exists());
    // In acceptEdits the hook's allow is an approval: it writes.
    let results = run.ask(&[shell("touch made.txt"), shell("rm -f made.txt")], &["--permission-mode", "acceptEdits"]);
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
    let results = run.ask(&[shell("ls")], &["--trust"]);
    assert!(!results[0].0, "{results:?}");
    assert!(!run.root.join("hook-ran").exists(), "a project hook ran without consent");
    // Approved (as a terminal run would remember it), the same hooks run.
    let files = tandem::settings::SettingsFiles::with_home(&run.root, Some(&run.home)).with_trust(tandem::trust::TrustSource::Everything);
    let settings = tandem::settings::load(&files, &[]).0;
    let store = tandem::consent::ConsentStore::at(run.home.join("data/tandem/consent.json"));
    let approved = tandem::consent::fingerprint_of(&tandem::hooks::project_hooks(&settings.hooks).unwrap());
    store.approve(&run.root, tandem::consent::HOOKS, tandem::consent::PROJECT, &approved).unwrap();
    // Approved but in a folder not trusted: they do not run.
    run.ask(&[shell("ls")], &[]);
    assert!(!run.root.join("hook-ran").exists(), "a project hook ran in a folder that is not trusted");
    run.ask(&[shell("ls")], &["--trust"]);
    assert!(run.root.join("hook-ran").exists(), "an approved project hook did not run");
}

// ------------------------------------------------ UserPromptSubmit and Stop

/// What a `tandem ask --json` run printed and how it ended.
struct Ended {
    code: Option<i32>,
    events: Vec<Value>,
    stderr: String,
}

impl Run {
    /// Run a script of whole turns with `prompt`; any exit status.
    fn ask_turns(&self, turns: &[Value], prompt: &str, args: &[&str]) -> Ended {
        let script = self.home.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("TANDEM_PROVIDER", "scripted")
            .env("TANDEM_SCRIPT", &script)
            .stdin(Stdio::null())
            .args(["ask", "--json"])
            .args(args)
            .arg(prompt)
            .output()
            .unwrap();
        let events = String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        Ended { code: output.status.code(), events, stderr: String::from_utf8_lossy(&output.stderr).into_owned() }
    }

    /// Every message of the saved thread, as JSON (what the model was sent).
    fn saved_messages(&self) -> Vec<Value> {
        let mut files = Vec::new();
        let mut dirs = vec![self.home.join("data/tandem/threads")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                // (Run checkpoints live beside the threads, in checkpoints/.)
                if path.is_dir() {
                    if path.file_name().is_some_and(|n| n != "checkpoints") {
                        dirs.push(path)
                    }
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    files.push(path)
                }
            }
        }
        assert_eq!(files.len(), 1, "{files:?}");
        std::fs::read_to_string(&files[0])
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|r| r["type"] == "message")
            .map(|r| r["message"].clone())
            .collect()
    }
}

impl Ended {
    fn end(&self) -> &Value {
        self.events.iter().find(|e| e["type"] == "end").expect("an end event")
    }

    fn hook_messages(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["type"] == "hook")
            .map(|e| format!("{}: {}", e["name"].as_str().unwrap(), e["message"].as_str().unwrap()))
            .collect()
    }
}

/// The text of a saved message's content blocks.
fn message_text(message: &Value) -> String {
    message["content"].as_array().unwrap().iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("")
}

fn text_turn(text: &str) -> Value {
    json!({"text": text})
}

#[test]
fn user_prompt_submit_hook_adds_context_the_model_reads() {
    let run = Run::new(None);
    user_settings(&run, json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "cat > prompt-seen.json; echo 'This repository builds with make, not cargo.'"}
    ]}]}}));
    let ended = run.ask_turns(&[text_turn("Use make.")], "how do I build this?", &[]);
    assert_eq!((ended.code, ended.end()["status"].as_str()), (Some(0), Some("completed")), "{}", ended.stderr);
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(run.root.join("prompt-seen.json")).unwrap()).unwrap();
    assert_eq!((seen["hook_event_name"].as_str(), seen["prompt"].as_str()), (Some("UserPromptSubmit"), Some("how do I build this?")));
    let messages = run.saved_messages();
    expect_test::expect![[r#"
        how do I build this?

        [Context added by the user's UserPromptSubmit hook]
        This repository builds with make, not cargo."#]]
    .assert_eq(&message_text(&messages[0]));
    assert_eq!(ended.hook_messages(), vec!["UserPromptSubmit: added to the prompt: This repository builds with make, not cargo.".to_string()]);
}

#[test]
fn user_prompt_submit_hook_that_exits_2_blocks_the_prompt_before_the_model_sees_it() {
    let run = Run::new(None);
    user_settings(&run, json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "if grep -q deploy; then echo 'no deploys on Friday' >&2; exit 2; fi"}
    ]}]}}));
    let touch = json!({"tool_calls": [{"name": "run_shell", "input": {"command": "touch deployed"}}]});
    let ended = run.ask_turns(&[touch, text_turn("Deployed.")], "deploy it", &["--permission-mode", "bypassPermissions"]);
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert_eq!(ended.end()["status"], "failed");
    assert_eq!(ended.end()["text"], "The UserPromptSubmit hook blocked this prompt, so it was not sent: no deploys on Friday");
    assert!(!run.root.join("deployed").exists(), "the blocked prompt's run went ahead");
    // The model was never asked: no tool call, no turn, nothing saved but the run's end.
    assert!(!ended.events.iter().any(|e| e["type"] == "tool_call" || e["type"] == "status"), "{:?}", ended.events);
    assert_eq!(run.saved_messages(), Vec::<Value>::new());
    // The same hook lets another prompt through.
    let ended = run.ask_turns(&[text_turn("Hello.")], "say hello", &[]);
    assert_eq!(ended.end()["status"], "completed", "{}", ended.stderr);
}

#[test]
fn user_prompt_submit_hook_json_block_decision_blocks_with_its_reason() {
    let run = Run::new(None);
    user_settings(&run, json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": r#"echo '{"decision": "block", "reason": "prompts may not name secrets"}'"#}
    ]}]}}));
    let ended = run.ask_turns(&[text_turn("never sent")], "print the secret", &[]);
    assert_eq!(ended.end()["text"], "The UserPromptSubmit hook blocked this prompt, so it was not sent: prompts may not name secrets");
}

/// A Stop hook that sends the agent back until `done.txt` exists, and logs
/// each event it gets.
const STOP_UNTIL_DONE: &str = "cat >> stop-events.jsonl; echo >> stop-events.jsonl; if [ ! -e done.txt ]; then echo 'done.txt is missing: create it before you stop' >&2; exit 2; fi";

#[test]
fn stop_hook_sends_the_agent_back_to_work_until_it_is_satisfied() {
    let run = Run::new(None);
    user_settings(&run, json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": STOP_UNTIL_DONE}]}]}}));
    let turns = [
        text_turn("All finished."),
        json!({"tool_calls": [{"name": "run_shell", "input": {"command": "touch done.txt"}}]}),
        text_turn("Created done.txt; finished now."),
    ];
    let ended = run.ask_turns(&turns, "finish the task", &["--permission-mode", "bypassPermissions"]);
    assert_eq!((ended.code, ended.end()["status"].as_str()), (Some(0), Some("completed")), "{}", ended.stderr);
    assert_eq!(ended.end()["text"], "Created done.txt; finished now.");
    assert!(run.root.join("done.txt").exists());
    assert_eq!(ended.hook_messages(), vec!["Stop: asked the agent to continue: done.txt is missing: create it before you stop".to_string()]);
    // The model read the hook's reason as the next message after its answer.
    let texts: Vec<String> = run.saved_messages().iter().map(message_text).collect();
    assert_eq!(texts[1], "All finished.");
    assert_eq!(texts[2], "[A Stop hook of the user's did not let you finish yet. Its reason:]\ndone.txt is missing: create it before you stop");
    // The hook saw each stop, the second with stop_hook_active.
    let log = std::fs::read_to_string(run.root.join("stop-events.jsonl")).unwrap();
    let stops: Vec<Value> = log.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let seen: Vec<(bool, &str)> = stops.iter().map(|s| (s["stop_hook_active"].as_bool().unwrap(), s["last_assistant_message"].as_str().unwrap())).collect();
    assert_eq!(seen, vec![(false, "All finished."), (true, "Created done.txt; finished now.")]);
    assert!(stops.iter().all(|s| s["hook_event_name"] == "Stop"));
}

#[test]
fn stop_hook_that_is_never_satisfied_ends_the_run_after_a_bounded_number_of_continuations() {
    let run = Run::new(None);
    user_settings(&run, json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": STOP_UNTIL_DONE}]}]}}));
    let max = tandem::agent::MAX_STOP_CONTINUATIONS;
    // More answers than the bound: the run must end before it uses them all.
    let turns: Vec<Value> = (0..max + 5).map(|i| text_turn(&format!("Finished ({i})."))).collect();
    let ended = run.ask_turns(&turns, "finish the task", &[]);
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert_eq!(ended.end()["status"], "failed");
    assert_eq!(
        ended.end()["text"].as_str().unwrap(),
        format!("The Stop hook sent the agent back to work {max} times in this run and asked again; the run ends here. Its last reason: done.txt is missing: create it before you stop")
    );
    let stops = std::fs::read_to_string(run.root.join("stop-events.jsonl")).unwrap().lines().filter(|l| !l.trim().is_empty()).count();
    assert_eq!(stops, max + 1, "the hook runs once per answer: the first and one per continuation");
}

#[test]
fn stop_hook_asking_for_more_at_the_turn_limit_ends_at_the_turn_limit() {
    let run = Run::new(None);
    user_settings(&run, json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": STOP_UNTIL_DONE}]}]}}));
    let ended = run.ask_turns(&[text_turn("Finished."), text_turn("Again.")], "finish the task", &["--max-turns", "1"]);
    assert_eq!(ended.end()["status"], "turn_limit", "{}", ended.stderr);
    assert_eq!(
        ended.hook_messages(),
        vec!["Stop: asked the agent to continue, but the run reached its turn limit: done.txt is missing: create it before you stop".to_string()]
    );
}

#[test]
fn prompt_and_stop_hooks_that_fail_are_shown_and_do_not_block() {
    let run = Run::new(None);
    user_settings(&run, json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo broken >&2; exit 3"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "sleep 20", "timeout": 0.3}]}]
    }}));
    let ended = run.ask_turns(&[text_turn("Hello.")], "say hello", &[]);
    assert_eq!((ended.code, ended.end()["status"].as_str()), (Some(0), Some("completed")), "{}", ended.stderr);
    expect_test::expect![[r#"
        [
            "UserPromptSubmit: UserPromptSubmit hook `echo broken >&2; exit 3` failed (exit code 3): broken",
            "Stop: Stop hook `sleep 20` timed out after 0.3 s",
        ]
    "#]]
    .assert_debug_eq(&ended.hook_messages());
}

#[test]
fn prompt_and_stop_hooks_run_for_the_users_run_not_for_its_sub_agents() {
    let run = Run::new(None);
    let log = "cat >> hook-events.jsonl; echo >> hook-events.jsonl";
    user_settings(&run, json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": log}]}],
        "Stop": [{"hooks": [{"type": "command", "command": log}]}]
    }}));
    let turns = [
        json!({"tool_calls": [{"name": "agent", "input": {"description": "look", "prompt": "What is here?", "type": "explore"}}]}),
        text_turn("Nothing much."),
        text_turn("The sub-agent found nothing much."),
    ];
    let ended = run.ask_turns(&turns, "look around", &[]);
    assert_eq!(ended.end()["text"], "The sub-agent found nothing much.", "{}", ended.stderr);
    let events: Vec<String> = std::fs::read_to_string(run.root.join("hook-events.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let event: Value = serde_json::from_str(l).unwrap();
            format!("{} {}", event["hook_event_name"].as_str().unwrap(), event["prompt"].as_str().or(event["last_assistant_message"].as_str()).unwrap())
        })
        .collect();
    assert_eq!(events, vec!["UserPromptSubmit look around".to_string(), "Stop The sub-agent found nothing much.".to_string()]);
}
