//! What tools ask of sub-agents (the `agent` tool, forked skills): the
//! contract's side of a run inside a run. A tool describes the child it
//! wants ([`ChildSpec`]) and calls [`run_child`]; whoever runs the loop
//! (the agent layer) installs a [`SubAgents`] in the run's scope for as long
//! as the run lasts. `tools/` never imports the loop.

use async_trait::async_trait;

use super::ToolContext;

/// Tools that only read: what `explore` and `plan` sub-agents get.
pub const READ_ONLY_TOOLS: &[&str] = &["read_file", "list_files", "grep_search", "web_fetch"];

/// Which of the parent's tools a child gets (never `agent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// [`READ_ONLY_TOOLS`].
    ReadOnly,
    /// Everything the parent has but `agent`.
    General,
    /// These names (`None`: like [`ToolChoice::General`]).
    Only(Option<Vec<String>>),
}

impl ToolChoice {
    pub fn allows(&self, name: &str) -> bool {
        if name == super::agent::AgentTool::NAME_STR {
            return false;
        }
        match self {
            ToolChoice::ReadOnly => READ_ONLY_TOOLS.contains(&name),
            ToolChoice::General | ToolChoice::Only(None) => true,
            ToolChoice::Only(Some(names)) => names.iter().any(|n| n == name),
        }
    }

    /// Every tool it allows only reads (so several such children may run at once).
    pub fn is_read_only(&self) -> bool {
        match self {
            ToolChoice::ReadOnly => true,
            ToolChoice::General | ToolChoice::Only(None) => false,
            ToolChoice::Only(Some(names)) => names.iter().all(|n| READ_ONLY_TOOLS.contains(&n.as_str())),
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
    let runner = ctx.run.children.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let Some(runner) = runner else {
        return Err("sub-agents run only inside an agent run".to_string());
    };
    tokio::select! {
        _ = ctx.cancel.cancelled() => Err("cancelled with the parent run".to_string()),
        answer = runner.run_child(ctx, spec) => answer,
    }
}
