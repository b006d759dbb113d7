//! Hooks in the editor: the real `tandem lsp` with the scripted model and
//! real hook scripts. `UserPromptSubmit` and `Stop` hooks run for
//! `tandem.ask`; the project's hooks run only after the user approved them
//! in the editor's prompt, which is asked once and remembered.
//!
//! Each test has its own `HOME` (the user's settings) and data folder (the
//! consent store), beside its workspace.

#![allow(clippy::unwrap_used)]

use crate::common::lsp_client;

use std::path::PathBuf;

use lsp_client::{Fixture, LspClient};
use serde_json::{json, Value};

const SHOW_MESSAGE_REQUEST: &str = "window/showMessageRequest";

/// A workspace with its own home and data folder.
struct Setup {
    f: Fixture,
    home: PathBuf,
    data: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let f = Fixture::new(&[]);
        let home = f.root.parent().unwrap().join("home");
        let data = f.root.parent().unwrap().join("data");
        std::fs::create_dir_all(home.join(".tandem")).unwrap();
        std::fs::create_dir_all(f.root.join(".tandem")).unwrap();
        Setup { f, home, data }
    }

    fn user_settings(&self, settings: Value) {
        std::fs::write(self.home.join(".tandem/settings.json"), settings.to_string()).unwrap();
    }

    fn project_settings(&self, settings: Value) {
        std::fs::write(self.f.root.join(".tandem/settings.json"), settings.to_string()).unwrap();
    }

    fn start(&self, turns: Value, options: Value) -> LspClient {
        let (home, data) = (self.home.to_string_lossy().to_string(), self.data.to_string_lossy().to_string());
        // The project's hooks are the test's own: the folder is trusted (consent is still asked).
        self.f.start_trusted(turns, json!({}), options, &[("HOME", &home), ("XDG_DATA_HOME", &data)])
    }

    fn exists(&self, name: &str) -> bool {
        self.f.path(name).exists()
    }
}

fn ask(client: &mut LspClient, prompt: &str) -> Value {
    let answer = client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": prompt}]}));
    answer["result"].clone()
}

fn text(text: &str) -> Value {
    json!({"text": text})
}

fn shell(command: &str) -> Value {
    json!({"text": "", "tool_calls": [{"name": "run_shell", "input": {"command": command}}]})
}

fn hook_events(client: &LspClient) -> Vec<String> {
    client
        .run_events()
        .iter()
        .filter(|e| e["type"] == "hook")
        .map(|e| format!("{}: {}", e["name"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect()
}

fn prompts(client: &LspClient) -> usize {
    client.seen.iter().filter(|m| m["method"] == SHOW_MESSAGE_REQUEST).count()
}

#[test]
fn prompt_and_stop_hooks_run_for_tandem_ask_in_the_editor() {
    let s = Setup::new();
    s.user_settings(json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command":
            "if grep -q deploy; then echo 'no deploys from the editor' >&2; exit 2; fi; echo 'The tests are in t/.'"}]}],
        "Stop": [{"hooks": [{"type": "command", "command":
            "if [ ! -e done.txt ]; then echo 'create done.txt before you stop' >&2; exit 2; fi"}]}]
    }}));
    let turns = json!([text("All done."), shell("touch done.txt"), text("Now it is done.")]);
    let mut client = s.start(turns, json!({"tandem": {"permissionMode": "bypassPermissions"}}));
    // Blocked: the model is not asked (the script's first turn is still there for the next run).
    let blocked = ask(&mut client, "deploy it");
    assert_eq!(blocked["status"], "failed", "{blocked}");
    assert_eq!(blocked["text"], "The UserPromptSubmit hook blocked this prompt, so it was not sent: no deploys from the editor");
    assert!(!client.run_events().iter().any(|e| e["type"] == "status"), "the model was called");
    // Let through with context; the Stop hook sends the agent back once.
    let answer = ask(&mut client, "finish the task");
    assert_eq!((answer["status"].as_str(), answer["text"].as_str()), (Some("completed"), Some("Now it is done.")), "{answer}");
    assert!(s.exists("done.txt"));
    assert_eq!(
        hook_events(&client),
        vec![
            "UserPromptSubmit: added to the prompt: The tests are in t/.".to_string(),
            "Stop: asked the agent to continue: create done.txt before you stop".to_string(),
        ]
    );
    client.shutdown();
}

/// A project hook of two lines: the prompt must show both.
const PROJECT_HOOK: &str = "echo checking > /dev/null\ntouch project-hook-ran";

fn project_hooks(s: &Setup) {
    s.project_settings(json!({"hooks": {"PreToolUse": [{"matcher": "run_shell", "hooks": [{"type": "command", "command": PROJECT_HOOK}]}]}}));
}

#[test]
fn project_hooks_are_approved_in_the_editor_once_and_remembered() {
    let s = Setup::new();
    project_hooks(&s);
    let mut client = s.start(json!([shell("ls"), text("Listed.")]), json!({}));
    let prompt = client.server_request(SHOW_MESSAGE_REQUEST);
    let message = prompt["params"]["message"].as_str().unwrap();
    expect_test::expect![[r#"
        Tandem: this project's settings want to run these hooks on your machine (each with `sh -c` in the workspace, on every matching event):

        From .tandem/settings.json:
        - PreToolUse (run_shell): echo checking > /dev/null
            touch project-hook-ran

        Run them in this workspace? Tandem remembers the answer until the hooks change."#]]
    .assert_eq(message);
    let actions: Vec<&str> = prompt["params"]["actions"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(actions, ["Run them", "Not now"]);
    // A run asked while the prompt is up waits for the answer and uses it.
    let ask_id = client.send_request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "list the files"}]}));
    client.respond(&prompt["id"], json!({"title": "Run them"}));
    let answer = client.response(ask_id);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    assert!(s.exists("project-hook-ran"), "the approved project hook did not run");
    let consent = std::fs::read_to_string(s.data.join("tandem/consent.json")).unwrap();
    assert!(consent.contains("touch project-hook-ran"), "{consent}");
    client.shutdown();

    // The next session remembers the approval: no prompt, the hook runs.
    std::fs::remove_file(s.f.path("project-hook-ran")).unwrap();
    let mut client = s.start(json!([shell("ls"), text("Listed.")]), json!({}));
    let answer = ask(&mut client, "list the files again");
    assert_eq!(answer["status"], "completed", "{answer}");
    assert!(s.exists("project-hook-ran"), "the remembered approval was not used");
    assert_eq!(prompts(&client), 0, "asked again about approved hooks");
    client.shutdown();

    // A changed hook is asked about again, and runs only once approved.
    s.project_settings(json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "touch changed-hook-ran"}]}]}}));
    let mut client = s.start(json!([shell("ls"), text("Listed.")]), json!({}));
    let prompt = client.server_request(SHOW_MESSAGE_REQUEST);
    assert!(prompt["params"]["message"].as_str().unwrap().contains("- PreToolUse: touch changed-hook-ran"), "{prompt}");
    client.respond(&prompt["id"], json!({"title": "Not now"}));
    let answer = ask(&mut client, "list the files");
    assert_eq!(answer["status"], "completed", "{answer}");
    assert!(!s.exists("changed-hook-ran"), "a changed project hook ran without a new approval");
    client.shutdown();
}

#[test]
fn declined_project_hooks_never_run_and_are_not_asked_about_again_in_the_session() {
    let s = Setup::new();
    project_hooks(&s);
    let turns = json!([shell("ls"), text("Listed."), shell("ls"), text("Listed again.")]);
    let mut client = s.start(turns, json!({}));
    let prompt = client.server_request(SHOW_MESSAGE_REQUEST);
    client.respond(&prompt["id"], json!({"title": "Not now"}));
    let answer = ask(&mut client, "list");
    assert_eq!(answer["status"], "completed", "{answer}");
    let answer = ask(&mut client, "list again");
    assert_eq!(answer["status"], "completed", "{answer}");
    assert!(!s.exists("project-hook-ran"), "a declined project hook ran");
    assert_eq!(prompts(&client), 1, "asked again in the same session");
    client.shutdown();
}

/// A hook that starts a program with `setsid` (out of its process group
/// and session) and one that does so and then outlasts its timeout: what
/// they started does not outlive them — nor `tandem lsp` — though the
/// first hook ended at once and the second one was killed.
#[cfg(target_os = "linux")]
#[test]
fn what_a_hook_starts_with_setsid_does_not_outlive_it() {
    let s = Setup::new();
    let detach = |name: &str, n: u32| {
        let pid_file = s.home.join(format!("{name}.pid"));
        let start = format!(
            "setsid sh -c 'echo $$ > {pid}; exec {sleep}' </dev/null >/dev/null 2>&1 & while [ ! -s {pid} ]; do sleep 0.05; done",
            pid = pid_file.display(),
            sleep = crate::common::sleeper(n)
        );
        (pid_file, start)
    };
    let (quick_pid, quick) = detach("quick", 4501);
    let (slow_pid, slow) = detach("slow", 4502);
    s.user_settings(json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": quick},
        {"type": "command", "command": format!("{slow}; sleep 600"), "timeout": 2}
    ]}]}}));
    let mut client = s.start(json!([text("Done.")]), json!({}));
    let answer = ask(&mut client, "hello");
    assert_eq!(answer["status"], "completed", "{answer}");
    let pid = |file: &PathBuf| std::fs::read_to_string(file).unwrap().trim().parse::<i32>().unwrap();
    let (quick_pid, slow_pid) = (pid(&quick_pid), pid(&slow_pid));
    // The hook that timed out: what it started is gone while the server runs.
    crate::common::wait_until("the timed-out hook's program is gone", || !crate::common::process_alive(slow_pid));
    client.shutdown();
    crate::common::wait_until("the first hook's program is gone", || !crate::common::process_alive(quick_pid));
    for n in [4501, 4502] {
        assert!(crate::common::processes_running(&crate::common::sleeper(n)).is_empty(), "{} outlived tandem lsp", crate::common::sleeper(n));
    }
}
