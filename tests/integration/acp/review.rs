//! ACP's `/review` through the Python SDK: the command is advertised with
//! `available_commands_update`, a review run's finding comes as the
//! `report_finding` tool call and a message that names it, and a scope
//! with nothing in it says so and ends the turn.

use serde_json::json;

use super::{updates, Setup};

fn git(dir: &std::path::Path, args: &[&str]) {
    let output = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

fn repository(setup: &Setup) {
    let root = setup.root();
    git(&root, &["init", "-q"]);
    setup.file("lib.rs", "fn div(a: i32, b: i32) -> i32 {\n    a + b\n}\n");
    git(&root, &["add", "lib.rs"]);
    git(&root, &["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "one"]);
}

#[test]
fn review_is_a_slash_command_whose_findings_the_client_is_shown() {
    let finding = json!({"name": "report_finding", "input": {"file_path": "lib.rs", "start_line": 2, "end_line": 2, "severity": "error", "kind": "bug",
        "title": "division by zero panics", "body": "b may be 0."}});
    let setup = Setup::new(vec![json!({"tool_calls": [finding]}), json!({"text": "1 finding."})]);
    repository(&setup);
    setup.file("lib.rs", "fn div(a: i32, b: i32) -> i32 {\n    a / b\n}\n");
    let Some(report) = setup.editor(json!({"prompts": ["/review --level thorough"]})) else { return };
    assert_eq!(report["errors"], json!([]));
    assert_eq!(report["stop_reasons"], json!(["end_turn"]));
    let commands = updates(&report, "available_commands_update");
    let names: Vec<&str> = commands[0]["availableCommands"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert!(names.contains(&"review"), "{names:?}");
    let calls: Vec<&str> = updates(&report, "tool_call").iter().filter_map(|c| c["title"].as_str()).collect();
    assert!(calls.iter().any(|t| t.contains("lib.rs:2 division by zero panics")), "{calls:?}");
    let said: String = updates(&report, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert!(said.contains("[Tandem] Reviewing 1 file(s)."), "{said}");
    assert!(said.contains("**Finding F1** (error, bug) `lib.rs:2`: division by zero panics\nb may be 0."), "{said}");

    // Committed: nothing to review, said, and no model turn is taken.
    git(&setup.root(), &["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "two"]);
    setup.script(vec![]);
    let Some(report) = setup.editor(json!({"prompts": ["/review"]})) else { return };
    assert_eq!(report["stop_reasons"], json!(["end_turn"]), "{}", report["errors"]);
    let said: String = updates(&report, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert_eq!(said, "Nothing to review: the uncommitted changes hold no changes.");
}
