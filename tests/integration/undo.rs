//! `tandem undo` / `tandem redo` after a headless `tandem ask` (the real
//! binary, the scripted model): the run edited a file, wrote a new one and
//! ran shell commands that made and deleted files; undo takes all of it
//! back and keeps a line the user added since, redo puts it back, and a
//! change in the run's own lines is a conflict left as it is.

#![allow(clippy::unwrap_used)]

use crate::common::script;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::json;

struct Folder {
    _temp: tempfile::TempDir,
    root: std::path::PathBuf,
    data: std::path::PathBuf,
    script: std::path::PathBuf,
}

fn folder() -> Folder {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let data = temp.path().join("data");
    let script = temp.path().join("script.json");
    Folder { root, data, script, _temp: temp }
}

impl Folder {
    fn tandem(&self, args: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&self.root).stdin(Stdio::null());
        for var in crate::common::MODEL_VARIABLES {
            command.env_remove(var);
        }
        command.env("XDG_DATA_HOME", &self.data).env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", &self.script);
        command.args(args).output().unwrap()
    }
    fn file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(name)).ok()
    }
    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.root.join(name), text).unwrap();
    }
}

fn text(output: &Output) -> (String, String) {
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn write_file(path: &str, content: &str) -> serde_json::Value {
    json!({"name": "write_file", "input": {"file_path": path, "content": content}})
}

/// A run that edits a.txt, writes new.txt and, in shell commands, makes
/// made.txt and deletes gone.txt.
fn run(f: &Folder) -> String {
    let turns = json!({"turns": [
        script::turn(vec![script::read("a.txt")]),
        script::turn(vec![script::edit("a.txt", "two", "TWO"), write_file("new.txt", "new\n")]),
        script::turn(vec![script::shell("sh -c 'echo x > made.txt' && rm gone.txt")]),
        script::done(),
    ]});
    std::fs::write(&f.script, turns.to_string()).unwrap();
    let output = f.tandem(&["ask", "--permission-mode", "bypassPermissions", "change things"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    stderr
}

#[test]
fn tandem_undo_takes_back_a_headless_run_keeping_the_user_s_line_and_redo_puts_it_back() {
    let f = folder();
    f.write("a.txt", "one\ntwo\nthree\n");
    f.write("gone.txt", "still here\n");
    let stderr = run(&f);
    assert!(stderr.contains("changed 4 file(s); `tandem undo` restores them"), "{stderr}");
    assert_eq!(f.file("a.txt").unwrap(), "one\nTWO\nthree\n");
    assert_eq!(f.file("made.txt").unwrap(), "x\n");
    assert_eq!(f.file("gone.txt"), None);
    // The user adds a line after the run.
    f.write("a.txt", "one\nTWO\nthree\nmine\n");

    let output = f.tandem(&["undo"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let mut lines: Vec<&str> = stdout.lines().collect();
    let summary = lines.pop().unwrap();
    lines.sort();
    assert_eq!(
        lines,
        [
            "restored  a.txt: merged with changes made since the run",
            "restored  gone.txt",
            "restored  made.txt",
            "restored  new.txt",
        ]
    );
    assert!(summary.starts_with("run-") && summary.ends_with(" undone: 4 restored, 0 unchanged, 0 conflict(s)"), "{summary}");
    assert_eq!(f.file("a.txt").unwrap(), "one\ntwo\nthree\nmine\n");
    assert_eq!(f.file("new.txt"), None);
    assert_eq!(f.file("made.txt"), None);
    assert_eq!(f.file("gone.txt").unwrap(), "still here\n");

    let output = f.tandem(&["undo"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).1.contains("nothing to undo"), "{:?}", text(&output));

    let output = f.tandem(&["redo", "--json"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let answer: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(answer["files"].as_array().unwrap().len(), 4, "{answer}");
    assert!(answer["files"].as_array().unwrap().iter().all(|f| f["status"] == "restored"), "{answer}");
    assert_eq!(f.file("a.txt").unwrap(), "one\nTWO\nthree\nmine\n");
    assert_eq!(f.file("new.txt").unwrap(), "new\n");
    assert_eq!(f.file("made.txt").unwrap(), "x\n");
    assert_eq!(f.file("gone.txt"), None);
}

#[test]
fn tandem_undo_leaves_a_file_changed_in_the_run_s_lines_as_it_is_and_exits_1() {
    let f = folder();
    f.write("a.txt", "one\ntwo\nthree\n");
    f.write("gone.txt", "still here\n");
    run(&f);
    f.write("a.txt", "one\nTWO and more\nthree\n");
    let output = f.tandem(&["undo"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("conflict  a.txt: changed since the run in the lines the run changed; your text is left as it is"), "{stdout}");
    assert_eq!(f.file("a.txt").unwrap(), "one\nTWO and more\nthree\n");
    assert_eq!(f.file("new.txt"), None, "the other files are restored");
    assert!(!Path::new(&f.root.join("made.txt")).exists());
}

#[test]
fn tandem_undo_of_an_unknown_run_says_so() {
    let f = folder();
    let output = f.tandem(&["undo", "run-nope"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).1.contains("no checkpoint of run run-nope in this workspace"), "{:?}", text(&output));
}

use crate::common::lsp_client;

/// The host attaches the checkpoint recorder for every front end: an edit
/// made by a `tandem lsp` run (a file not open in the editor, written on
/// disk) is taken back by `tandem undo` in the same folder.
#[test]
fn a_tandem_lsp_run_is_recorded_so_tandem_undo_takes_it_back() {
    let f = lsp_client::Fixture::new(&[("a.txt", "one\ntwo\n")]);
    let data = f.root.parent().unwrap().join("data");
    let data_text = data.to_string_lossy().to_string();
    let turns = json!([script::turn(vec![script::read("a.txt")]), script::turn(vec![script::edit("a.txt", "two", "TWO")]), script::done()]);
    let mut client = f.start_with_env(turns, json!({}), json!({"tandem": {"permissionMode": "acceptEdits"}}), &[("XDG_DATA_HOME", &data_text)]);
    let answer = client.request("workspace/executeCommand", lsp_client::ask_params("shout two"));
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let run_id = answer["result"]["runId"].as_str().unwrap().to_string();
    client.shutdown();
    assert_eq!(std::fs::read_to_string(f.path("a.txt")).unwrap(), "one\nTWO\n");

    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["undo", &run_id])
        .current_dir(&f.root)
        .env("XDG_DATA_HOME", &data)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("restored  a.txt"), "{stdout}");
    assert_eq!(std::fs::read_to_string(f.path("a.txt")).unwrap(), "one\ntwo\n");
}
