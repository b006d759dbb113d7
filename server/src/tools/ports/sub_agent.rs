//! What tools ask of sub-agents (the `agent` tool, forked skills): the
//! contract's side of a run inside a run. A tool describes the child it
//! wants ([`ChildSpec`]) and calls [`run_child`]; whoever runs the loop
//! (the agent layer) installs a [`SubAgents`] in the run's scope for as long
//! as the run lasts. `tools/` never imports the loop.

use async_trait::async_trait;
use crate::sync::MutexExt;

use crate::tools::{DynTool, ToolContext};

/// Which of the parent's tools a child gets (never `agent`: a child runs
/// no children of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The tools whose every call only reads or fetches
    /// ([`Tool::ONLY_READS`](crate::tools::Tool::ONLY_READS)): what `explore` and
    /// `plan` sub-agents get.
    ReadOnly,
    /// Everything the parent has but `agent`.
    General,
    /// These names (`None`: like [`ToolChoice::General`]).
    Only(Option<Vec<String>>),
}

impl ToolChoice {
    pub fn allows(&self, tool: &dyn DynTool) -> bool {
        if tool.starts_sub_agents() {
            return false;
        }
        match self {
            ToolChoice::ReadOnly => tool.only_reads(),
            ToolChoice::General | ToolChoice::Only(None) => true,
            ToolChoice::Only(Some(names)) => names.iter().any(|n| n == tool.name()),
        }
    }
}

/// What a child is asked to do.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    /// For logs: "agent explore", "skill review".
    pub label: String,
    /// Its system prompt (the environment is appended).
    pub system_prompt: String,
    /// Its first user message.
    pub prompt: String,
    pub tools: ToolChoice,
    /// The model it asks for, as an agent's `model` field says it; `None`:
    /// the parent's.
    pub model: Option<String>,
}

/// Runs children for the calls of one run; implemented by the loop.
#[async_trait]
pub trait SubAgents: Send + Sync {
    /// Run a child for the call `parent.call_id` and return its final text;
    /// `Err` says why it failed, for the tool's error result.
    async fn run_child(&self, parent: &ToolContext, spec: ChildSpec) -> Result<String, String>;
}

/// Run a child for the call `ctx.call_id` and wait for its final text
/// (cancelled with the parent). `Err` says why it failed.
pub async fn run_child(ctx: &ToolContext, spec: ChildSpec) -> Result<String, String> {
    let runner = ctx.run.children.locked().clone();
    let Some(runner) = runner else {
        return Err("sub-agents run only inside an agent run".to_string());
    };
    tokio::select! {
        _ = ctx.cancel.cancelled() => Err("cancelled with the parent run".to_string()),
        answer = runner.run_child(ctx, spec) => answer,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::ToolChoice;
    use crate::tools::support::test_fixture::text_fixture;
    use crate::tools::{ToolKind, ToolRegistry};

    /// A call of each built-in tool, with the least input it takes.
    fn sample_input(name: &str) -> serde_json::Value {
        match name {
            "read_file" => json!({"file_path": "a.txt"}),
            "list_files" => json!({"pattern": "*"}),
            "grep_search" => json!({"pattern": "x"}),
            "web_fetch" => json!({"url": "http://127.0.0.1:9/"}),
            "code_intel" => json!({"operation": "diagnostics", "file_path": "a.txt"}),
            "write_file" => json!({"file_path": "a.txt", "content": "x"}),
            "edit_file" => json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
            "run_shell" => json!({"command": "true"}),
            _ => json!({}),
        }
    }

    #[test]
    fn read_only_children_get_the_tools_whose_calls_only_read_and_nothing_that_changes() {
        let f = text_fixture(&[("a.txt", "a\n")]);
        let registry = ToolRegistry::builtin();
        let mut given = Vec::new();
        for tool in registry.all() {
            let name = tool.name().to_string();
            let prepared = Arc::clone(&tool).prepare(&sample_input(&name), &f.ctx);
            if ToolChoice::ReadOnly.allows(tool.as_ref()) {
                let prepared = prepared.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(matches!(prepared.traits.kind, ToolKind::Read { .. } | ToolKind::Fetch { .. }), "{name}: {:?}", prepared.traits.kind);
                assert!(prepared.traits.read_only, "{name}");
                given.push(name);
            } else if let Ok(prepared) = prepared {
                // Every tool left out could do more than read: its kind says
                // so, or it says nothing (Other, which fails closed).
                assert!(!matches!(prepared.traits.kind, ToolKind::Read { .. } | ToolKind::Fetch { .. }) || !tool.only_reads(), "{name}");
            }
        }
        given.sort();
        assert_eq!(given, ["grep_search", "list_files", "read_file", "web_fetch"]);
        // Edits and commands never reach a read-only child.
        for name in ["write_file", "edit_file", "run_shell", "agent"] {
            let tool = registry.get(name).unwrap();
            assert!(!ToolChoice::ReadOnly.allows(tool.as_ref()), "{name}");
        }
        assert!(!ToolChoice::General.allows(registry.get("agent").unwrap().as_ref()));
        assert!(ToolChoice::Only(Some(vec!["run_shell".into()])).allows(registry.get("run_shell").unwrap().as_ref()));
    }
}
