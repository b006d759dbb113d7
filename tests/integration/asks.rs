//! Fewer questions, none less safe (issue 57), by effect, with real
//! bubblewrap through `tandem lsp` and a client that answers every
//! `window/showMessageRequest` as a user would:
//!
//! - "Allow commands like this for this session": a run of 40 commands of
//!   4 shapes asks 4 times, and each command did what it says;
//! - `acceptEdits` runs a command the sandbox contains without a question,
//!   and that command still cannot read the home folder's secrets, reach an
//!   agent's socket, or write outside the workspace; one that names a path
//!   outside the walls is asked;
//! - `"autoAllowSandboxed": true` does the same in `default`, from the
//!   user's own settings only: a project's file asking for it is refused.
//!
//! Without bubblewrap these tests skip, unless `TANDEM_REQUIRE_BWRAP` is
//! set (`.ci/run` sets it), when they fail.

#![allow(clippy::unwrap_used)]
#![cfg(target_os = "linux")]

use crate::common;
use crate::common::lsp_client;
use crate::common::script::shell;

use std::os::unix::net::UnixListener;
use std::path::PathBuf;

use serde_json::{json, Value};

const LIKE_THIS: &str = "Allow commands like this for this session";

/// A home folder with a secret and an agent listening in it, and the
/// workspace beside it.
struct Place {
    _temp: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
    outside: PathBuf,
    agent: (PathBuf, UnixListener),
}

impl Place {
    fn new() -> Place {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let (home, root, outside) = (base.join("home"), base.join("work"), base.join("outside"));
        for dir in [&home.join(".ssh"), &home.join(".tandem"), &root, &outside] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(home.join(".ssh/id_ed25519"), "TOP-SECRET key\n").unwrap();
        std::fs::write(root.join("notes.txt"), "my notes\n").unwrap();
        let socket = home.join("agent.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        listener.set_nonblocking(true).unwrap();
        Place { _temp: temp, home, root, outside, agent: (socket, listener) }
    }

    fn user_settings(&self, settings: Value) {
        std::fs::write(self.home.join(".tandem/settings.json"), settings.to_string()).unwrap();
    }

    /// Run `commands` (one `run_shell` call per turn) through `tandem lsp`
    /// with `options` as the editor's settings, answering every question
    /// with `answer`: the tool results (failed, text) and the questions.
    fn run(&self, commands: &[String], options: Value, answer: &str, args: &[&str]) -> (Vec<(bool, String)>, Vec<String>) {
        let mut turns: Vec<Value> = commands.iter().map(|c| json!({"text": "", "tool_calls": [shell(c)]})).collect();
        turns.push(json!({"text": "Done."}));
        let script = self.home.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let (script, home) = (script.display().to_string(), self.home.display().to_string());
        let data = self.home.join(".local/share").display().to_string();
        let env = [("TANDEM_PROVIDER", "scripted"), ("TANDEM_SCRIPT", script.as_str()), ("HOME", home.as_str()), ("XDG_DATA_HOME", data.as_str())];
        let mut client = lsp_client::LspClient::start_with_args(&self.root, args, &env);
        assert!(client.initialize(json!({}), options).get("result").is_some());
        let id = client.send_request("workspace/executeCommand", lsp_client::ask_params("go"));
        let mut questions = Vec::new();
        loop {
            let message = client.next_request_or_response(id);
            if message.get("method").is_none() {
                assert_eq!(message["result"]["status"], "completed", "{message}");
                break;
            }
            if message["method"] == "window/showMessageRequest" {
                questions.push(message["params"]["message"].as_str().unwrap_or_default().to_string());
                let offered: Vec<&str> = message["params"]["actions"].as_array().unwrap().iter().filter_map(|a| a["title"].as_str()).collect();
                // An answer the question does not offer is "Allow once".
                let chosen = if offered.contains(&answer) { answer } else { offered[0] };
                client.respond(&message["id"], json!({"title": chosen}));
            } else {
                client.respond(&message["id"], Value::Null);
            }
        }
        let results = client.tool_results();
        client.shutdown();
        (results, questions)
    }

    fn agent_reached(&self) -> bool {
        self.agent.1.accept().is_ok()
    }
}

#[test]
fn forty_commands_of_four_shapes_are_asked_four_times() {
    if !common::bwrap_works() {
        return;
    }
    let place = Place::new();
    let shapes = ["touch made{}.txt", "mkdir folder{}", "cp notes.txt copy{}.txt", "ln -s notes.txt link{}.txt"];
    let commands: Vec<String> = (0..40).map(|i| shapes[i % 4].replace("{}", &i.to_string())).collect();
    let (results, questions) = place.run(&commands, json!({}), LIKE_THIS, &[]);
    assert_eq!(questions.len(), 4, "{questions:#?}");
    // Each question named the shape the answer allows.
    for (question, shape) in questions.iter().zip(["touch", "mkdir", "cp", "ln"]) {
        assert!(question.ends_with(&format!("(writes inside the workspace only, no network): {shape}")), "{question}");
    }
    assert_eq!(results.len(), 40);
    assert!(results.iter().all(|(failed, _)| !failed), "{results:#?}");
    // Every command did what it says, the 36 unasked ones too.
    for i in 0..40 {
        let made = match i % 4 {
            0 => place.root.join(format!("made{i}.txt")),
            1 => place.root.join(format!("folder{i}")),
            2 => place.root.join(format!("copy{i}.txt")),
            _ => place.root.join(format!("link{i}.txt")),
        };
        assert!(std::fs::symlink_metadata(&made).is_ok(), "{} is missing", made.display());
    }
    // Another shape, and the same shape past the walls, are asked again.
    let outside = place.outside.join("x.txt").display().to_string();
    let (results, questions) = place.run(&["rm -f made0.txt".to_string(), format!("touch {outside}")], json!({}), "Deny", &[]);
    assert_eq!(questions.len(), 2, "{questions:#?}");
    assert!(results.iter().all(|(failed, _)| *failed), "{results:#?}");
    assert!(place.root.join("made0.txt").exists() && !place.outside.join("x.txt").exists());
}

/// A program in the workspace that tries each way out, and says which worked.
const PROBE: &str = r#"
import os, socket, sys
home, outside = sys.argv[1], sys.argv[2]
def attempt(name, action):
    try:
        action()
        print(name, "yes")
    except Exception as err:
        print(name, "no", type(err).__name__)
attempt("read-secret", lambda: open(os.path.join(home, ".ssh/id_ed25519")).read())
def agent():
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.path.join(home, "agent.sock"))
attempt("agent", agent)
attempt("write-outside", lambda: open(os.path.join(outside, "escaped.txt"), "w").write("x"))
attempt("write-home", lambda: open(os.path.join(home, "escaped.txt"), "w").write("x"))
attempt("write-tmp", lambda: open("/tmp/tandem-asks-escaped.txt", "w").write("x"))
attempt("write-workspace", lambda: open("made-by-probe.txt", "w").write("x"))
"#;

#[test]
fn accept_edits_runs_what_the_sandbox_contains_unasked_and_it_stays_inside() {
    if !common::bwrap_works() {
        return;
    }
    let place = Place::new();
    std::fs::write(place.root.join("probe.py"), PROBE).unwrap();
    let _ = std::fs::remove_file("/tmp/tandem-asks-escaped.txt");
    let probe = format!("python3 probe.py {} {}", place.home.display(), place.outside.display());
    let (results, questions) = place.run(&[probe, "touch made.txt".to_string()], json!({"permissionMode": "acceptEdits"}), "Deny", &[]);
    // `python3 probe.py …` names the home folder: a path outside the
    // walls is asked (and denied here); `touch made.txt` runs unasked.
    assert_eq!(questions.len(), 1, "{questions:#?}");
    assert!(results[0].0 && !results[1].0, "{results:#?}");
    assert!(place.root.join("made.txt").exists());
    // The same probe, its paths written inside the workspace, is contained:
    // unasked, and every way out is shut.
    std::fs::write(place.root.join("where.txt"), format!("{}\n{}\n", place.home.display(), place.outside.display())).unwrap();
    let inside = PROBE.replace("home, outside = sys.argv[1], sys.argv[2]", "home, outside = open('where.txt').read().split()");
    std::fs::write(place.root.join("probe.py"), inside).unwrap();
    let (results, questions) = place.run(&["python3 probe.py".to_string()], json!({"permissionMode": "acceptEdits"}), "Deny", &[]);
    assert!(questions.is_empty(), "{questions:#?}");
    let output = &results[0].1;
    for shut in ["read-secret no", "agent no", "write-outside no", "write-home no"] {
        assert!(output.contains(shut), "{shut}: {output}");
    }
    assert!(output.contains("write-workspace yes"), "{output}");
    assert!(!place.agent_reached(), "a contained command reached the agent");
    assert!(!place.outside.join("escaped.txt").exists() && !place.home.join("escaped.txt").exists());
    // Its /tmp is its own: nothing it wrote there is left on the machine.
    assert!(!std::path::Path::new("/tmp/tandem-asks-escaped.txt").exists(), "{output}");
    assert!(!output.contains("TOP-SECRET"), "{output}");
}

#[test]
fn auto_allow_sandboxed_comes_from_the_users_settings_only() {
    if !common::bwrap_works() {
        return;
    }
    let place = Place::new();
    let outside = format!("touch {}", place.outside.join("x.txt").display());
    let commands = ["touch one.txt".to_string(), "mkdir two".to_string(), outside];
    // Without it, `default` asks.
    let (_, questions) = place.run(&commands[..1], json!({}), "Deny", &[]);
    assert_eq!(questions.len(), 1);
    assert!(!place.root.join("one.txt").exists());
    // The user's own settings: unasked, but not past the walls.
    place.user_settings(json!({"autoAllowSandboxed": true}));
    let (results, questions) = place.run(&commands, json!({}), "Deny", &[]);
    assert_eq!(questions.len(), 1, "{questions:#?}");
    assert!(questions[0].contains(&place.outside.display().to_string()), "{questions:#?}");
    assert!(!results[0].0 && !results[1].0 && results[2].0, "{results:#?}");
    assert!(place.root.join("one.txt").exists() && place.root.join("two").is_dir() && !place.outside.join("x.txt").exists());
    // The editor's settings are the user's too.
    place.user_settings(json!({}));
    let (_, questions) = place.run(&["touch three.txt".to_string()], json!({"autoAllowSandboxed": true}), "Deny", &[]);
    assert!(questions.is_empty(), "{questions:#?}");
    // A project's file, trusted even, cannot set it.
    std::fs::create_dir_all(place.root.join(".tandem")).unwrap();
    std::fs::write(place.root.join(".tandem/settings.json"), json!({"autoAllowSandboxed": true}).to_string()).unwrap();
    let (_, questions) = place.run(&["touch four.txt".to_string()], json!({}), "Deny", &["--trust"]);
    assert_eq!(questions.len(), 1, "{questions:#?}");
    assert!(!place.root.join("four.txt").exists());
}
