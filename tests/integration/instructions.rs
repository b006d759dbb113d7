//! Issue 58: instructions that scale. A repository with nested `AGENTS.md`
//! files, an `AGENTS.override.md` and path-scoped rules runs `tandem ask`
//! against a loopback model that reads in some folders: each request holds
//! exactly the files of the folders touched so far, top down, after the
//! results of the calls that first touched them; the system prompt holds
//! only the root's files and the rules without paths, and stays the same
//! from request to request; a follow-up run loads only what is new.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{json, Value};

use crate::common;
use common::mock_model::{MockModel, MockResponse};
use common::turns;

struct Repo {
    _temp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

impl Repo {
    fn new() -> Repo {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let (root, home) = (base.join("repo"), base.join("home"));
        for (name, text) in [
            ("AGENTS.md", "ROOT-AGENTS\n"),
            (".tandem/rules/style.md", "STYLE-ALWAYS\n"),
            (".tandem/rules/api.md", "---\npaths: src/api/**\n---\nAPI-RULE\n"),
            (".claude/rules/docs.md", "---\npaths: [\"docs/**/*.md\"]\n---\nDOCS-RULE\n"),
            ("src/AGENTS.md", "SRC-AGENTS\n"),
            ("src/api/AGENTS.md", "API-AGENTS\n"),
            ("src/api/CLAUDE.md", "API-CLAUDE\n"),
            ("src/api/handler.rs", "fn handle() {}\n"),
            ("src/web/AGENTS.md", "WEB-AGENTS\n"),
            ("src/web/app.ts", "export {};\n"),
            ("docs/AGENTS.md", "DOCS-AGENTS-OVERRIDDEN\n"),
            ("docs/AGENTS.override.md", "DOCS-OVERRIDE\n"),
            ("docs/guide.md", "# Guide\n"),
        ] {
            write(&root.join(name), text);
        }
        std::fs::create_dir_all(&home).unwrap();
        Repo { _temp: temp, root, home }
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&self.root).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        for var in common::MODEL_VARIABLES {
            command.env_remove(var);
        }
        command.env("HOME", &self.home).env("XDG_DATA_HOME", self.home.join("data")).env("XDG_CACHE_HOME", self.home.join("cache")).args(args);
        command
    }

    /// `tandem ARGS`: whether it succeeded, and its stdout and stderr.
    async fn run(&self, args: &[&str]) -> (bool, String) {
        let output = self.command(args).output().await.unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        (output.status.success(), text.replace(&self.home.display().to_string(), "HOME"))
    }

    async fn ask(&self, mock: &MockModel, args: &[&str]) -> Vec<Value> {
        let mut command = self.command(&[]);
        command
            .env("TANDEM_PROVIDER", "anthropic")
            .env("ANTHROPIC_BASE_URL", &mock.url)
            .env("ANTHROPIC_API_KEY", "test-key")
            .arg("ask")
            .arg("--json")
            .args(args);
        let output = command.output().await.unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
    }
}

fn read(id: &str, path: &str) -> (String, String, Value) {
    (id.to_string(), "read_file".to_string(), json!({"file_path": path}))
}

fn calls(list: &[(String, String, Value)]) -> MockResponse {
    let borrowed: Vec<(&str, &str, Value)> = list.iter().map(|(id, name, input)| (id.as_str(), name.as_str(), input.clone())).collect();
    turns::tools("", &borrowed)
}

/// The instruction files the request's last message brings, in order.
fn brought(body: &Value) -> Vec<String> {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str().unwrap().strip_prefix("<instructions file=\"").map(|rest| rest.split('"').next().unwrap().to_string()))
        .collect()
}

#[tokio::test]
async fn each_request_holds_the_files_of_the_folders_touched_so_far_in_order() {
    let repo = Repo::new();
    let mock = MockModel::start(vec![
        calls(&[read("r1", "src/api/handler.rs")]),
        calls(&[("l1".into(), "list_files".into(), json!({"pattern": "*.md", "path": "docs"})), read("r2", "docs/guide.md")]),
        calls(&[read("r3", "src/api/handler.rs")]),
        turns::text("done"),
        // The follow-up run.
        calls(&[read("r4", "src/api/handler.rs"), read("r5", "src/web/app.ts")]),
        turns::text("done again"),
    ])
    .await;
    let events = repo.ask(&mock, &["read around"]).await;
    let thread = events.iter().find(|e| e["type"] == "end").and_then(|e| e["thread_id"].as_str()).unwrap().to_string();
    repo.ask(&mock, &["--resume", &thread, "more"]).await;

    let requests = mock.requests();
    assert_eq!(requests.len(), 6);
    let per_request: Vec<Vec<String>> = requests.iter().map(|r| brought(&r.body)).collect();
    assert_eq!(
        per_request,
        vec![
            vec![],
            vec!["src/AGENTS.md", "src/api/AGENTS.md", "src/api/CLAUDE.md", ".tandem/rules/api.md"],
            vec!["docs/AGENTS.override.md", ".claude/rules/docs.md"],
            vec![],
            vec![],
            vec!["src/web/AGENTS.md"],
        ]
    );
    // The blocks follow the results of their calls and hold the files' text.
    let second = requests[1].body["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(second[0]["type"], "tool_result");
    for (index, text) in [(1, "SRC-AGENTS"), (2, "API-AGENTS"), (3, "API-CLAUDE"), (4, "API-RULE")] {
        assert!(second[index]["text"].as_str().unwrap().contains(text), "{}", second[index]);
    }
    // Over the two runs each file came once; the overridden one never.
    let everything: String = requests.iter().map(|r| r.body.to_string()).collect();
    assert!(!everything.contains("DOCS-AGENTS-OVERRIDDEN"));
    assert_eq!(requests[5].body.to_string().matches("SRC-AGENTS").count(), 1, "the follow-up's history holds it once");
    // The system prompt: the root's file and the rule without paths, the
    // same bytes in every request (the prompt cache holds).
    let system = requests[0].body["system"].to_string();
    assert!(system.contains("ROOT-AGENTS") && system.contains("STYLE-ALWAYS"), "{system}");
    for scoped in ["SRC-AGENTS", "API-AGENTS", "API-RULE", "DOCS-RULE", "WEB-AGENTS", "DOCS-OVERRIDE"] {
        assert!(!system.contains(scoped), "{scoped} is in the system prompt");
    }
    for request in &requests[1..] {
        assert_eq!(request.body["system"], requests[0].body["system"]);
    }
}

/// The user's memory of the project: written and listed by `tandem memory`,
/// in the system prompt of the next run, gone from it once removed.
#[tokio::test]
async fn tandem_memory_entries_reach_the_system_prompt_and_the_cli_manages_them() {
    let repo = Repo::new();
    let (ok, out) = repo.run(&["memory"]).await;
    assert!(ok && out.starts_with("No memory for this project yet (HOME/.tandem/memory/repo-"), "{out}");
    let (ok, out) = repo.run(&["memory", "add", "testing", "Run", "MEMORY-MAKE-CHECK", "before", "committing."]).await;
    assert!(ok && out.starts_with("Saved HOME/.tandem/memory/repo-") && out.trim_end().ends_with("/testing.md."), "{out}");
    let (ok, out) = repo.run(&["memory", "list"]).await;
    assert!(ok && out.contains("\n  testing: Run MEMORY-MAKE-CHECK before committing.\n"), "{out}");
    let (ok, out) = repo.run(&["memory", "show", "testing"]).await;
    assert!(ok, "{out}");
    assert_eq!(out, "Run MEMORY-MAKE-CHECK before committing.\n");
    // Edited in the user's editor (here one that rewrites the file).
    let mut edit = repo.command(&["memory", "edit", "testing"]);
    edit.env("VISUAL", "sed -i s/MEMORY-MAKE-CHECK/MEMORY-EDITED/");
    let edited = edit.output().await.unwrap();
    assert!(edited.status.success(), "{}", String::from_utf8_lossy(&edited.stderr));
    assert_eq!(repo.run(&["memory", "show", "testing"]).await.1, "Run MEMORY-EDITED before committing.\n");
    // An editor that fails leaves no new entry behind.
    let mut edit = repo.command(&["memory", "edit", "fresh"]);
    edit.env("VISUAL", "false");
    let failed = edit.output().await.unwrap();
    assert!(!failed.status.success() && String::from_utf8_lossy(&failed.stderr).contains("no entry was made"), "{failed:?}");
    assert!(repo.run(&["memory", "show", "fresh"]).await.1.contains("no memory entry \"fresh\""));
    // Bad input: a clear error, nothing written or lost.
    let (ok, out) = repo.run(&["memory", "show", "../../etc/passwd"]).await;
    assert!(!ok && out.contains("is not an entry name"), "{out}");
    let (ok, out) = repo.run(&["memory", "remove", "nothing"]).await;
    assert!(!ok && out.contains("no memory entry \"nothing\""), "{out}");

    let mock = MockModel::start(vec![turns::text("ok"), turns::text("ok")]).await;
    repo.ask(&mock, &["hello"]).await;
    let (ok, out) = repo.run(&["memory", "remove", "testing"]).await;
    assert!(ok && out.starts_with("Removed "), "{out}");
    repo.ask(&mock, &["hello"]).await;
    let requests = mock.requests();
    let with = requests[0].body["system"].to_string();
    assert!(with.contains("# Memory") && with.contains("## testing\\nRun MEMORY-EDITED before committing."), "{with}");
    assert!(!requests[1].body["system"].to_string().contains("MEMORY-EDITED"), "a new conversation after the removal");
}

/// A 2 MB `AGENTS.md` and a rule whose glob does not compile: the model is
/// told the file was not read (and none of it is sent), `tandem doctor`
/// tells the user both, and the rules with paths are listed there.
#[tokio::test]
async fn a_2_mb_agents_md_is_said_to_the_model_and_in_doctor() {
    let repo = Repo::new();
    let mut huge = "HUGE-INSTRUCTIONS ".repeat(2 * 1024 * 1024 / 18 + 1);
    huge.truncate(2 * 1024 * 1024);
    write(&repo.root.join("AGENTS.md"), &huge);
    write(&repo.root.join(".claude/rules/broken.md"), "---\npaths: \"src/[\"\n---\nNever.\n");
    let mock = MockModel::start(vec![turns::text("ok")]).await;
    let mut ask = repo.command(&["ask", "hello"]);
    ask.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "test-key");
    let output = ask.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // The user at the terminal is told too (the log's warnings go to stderr).
    assert!(stderr.contains("AGENTS.md was not read: it is 2097152 bytes, over the limit of 1048576 bytes (1 MB) for an instruction file"), "{stderr}");
    let system = mock.requests()[0].body["system"].to_string();
    assert!(system.contains("## AGENTS.md\\n[AGENTS.md was not read: it is 2097152 bytes, over the limit of 1048576 bytes (1 MB)"), "{}", &system[..system.len().min(3000)]);
    assert!(!system.contains("HUGE-INSTRUCTIONS"));
    let (_, doctor) = repo.run(&["doctor", "--offline"]).await;
    for line in [
        "  AGENTS.md: WARNING: AGENTS.md was not read: it is 2097152 bytes, over the limit of 1048576 bytes (1 MB) for an instruction file\n",
        "  .tandem/rules/style.md: 13 characters\n",
        "  .tandem/rules/api.md (for src/api/**)\n",
        "  WARNING: .claude/rules/broken.md: the glob `src/[` does not compile",
        "  memory: 0 entries in HOME/.tandem/memory/repo-",
    ] {
        assert!(doctor.contains(line), "{line:?} is not in:\n{doctor}");
    }
}
