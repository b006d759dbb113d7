//! Turns for the scripted model (`TANDEM_SCRIPT`), as the JSON a script
//! holds: `{"turns": [turn(vec![read("a.txt")]), done()]}`.
//!
//! Included with `#[path = "common/script.rs"] mod script;`.
#![allow(dead_code)]

use serde_json::{json, Value};

/// A turn that makes these calls, with no text.
pub fn turn(calls: Vec<Value>) -> Value {
    json!({"text": "", "tool_calls": calls})
}

/// The final turn: "Done.".
pub fn done() -> Value {
    json!({"text": "Done."})
}

pub fn read(path: &str) -> Value {
    json!({"name": "read_file", "input": {"file_path": path}})
}

pub fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"name": "edit_file", "input": {"file_path": path, "old_string": old, "new_string": new}})
}

pub fn shell(command: &str) -> Value {
    json!({"name": "run_shell", "input": {"command": command}})
}
