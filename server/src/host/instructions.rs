//! What `tandem doctor` says of a folder's instructions: the files a new
//! conversation's system prompt would hold, the rules scoped to paths, the
//! rule files skipped, and the user's memory of the project.

use std::path::Path;

use crate::agent::instructions;

/// The instruction files the system prompt of a new conversation here
/// would hold (with what a bound left out), the rules scoped to paths, the
/// rule files skipped, and the user's memory of the project.
pub fn report(root: &Path) -> serde_json::Value {
    let Ok(workspace) = crate::workspace::Workspace::new(root) else { return serde_json::json!({"files": []}) };
    let files: Vec<serde_json::Value> = instructions::load(&workspace)
        .iter()
        .map(|file| serde_json::json!({"name": file.name, "chars": file.text.chars().count(), "notice": file.notice}))
        .collect();
    let rules = instructions::rules::load(&workspace);
    let scoped: Vec<serde_json::Value> =
        rules.rules.iter().filter_map(|rule| rule.paths.as_ref().map(|paths| serde_json::json!({"name": rule.name, "paths": paths.join(", ")}))).collect();
    let skipped: Vec<String> = rules.skipped.iter().map(|(name, reason)| format!("{name}: {reason}; skipped")).collect();
    let memory = workspace.home().map(|home| crate::workspace::memory::Memory::at(home, workspace.root()));
    let entries = memory.as_ref().map_or(0, |memory| memory.entries().0.len());
    serde_json::json!({
        "files": files,
        "scopedRules": scoped,
        "skipped": skipped,
        "memory": {"folder": memory.as_ref().map(|m| m.dir().display().to_string()), "entries": entries},
    })
}
