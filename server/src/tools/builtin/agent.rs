//! `agent`: launch a sub-agent for one task and return its final text.
//!
//! Types: `explore` and `plan` get the read-only tools, `general` every tool
//! but `agent` (no nesting), and custom agents from `.tandem/agents/*.md`
//! and `.claude/agents/*.md` (the project's, then the user's; the first
//! found wins a name) get the tools their front matter lists (`tools` or
//! `allowed-tools`), with the body as their system prompt. Custom agents are
//! listed in this tool's description for the run
//! ([`describe_custom_agents`]).
//!
//! How a child runs (same provider, workspace view, permission policy;
//! own history and read ledger; nested events; cancelled with the parent)
//! is the loop's, behind [`crate::tools::ports::sub_agent::SubAgents`].

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::support::front_matter::{self, tool_name};
use crate::tools::support::front_matter::{read_bounded, search_dirs, Origin, Skipped};
use crate::tools::{Tool, ToolContext, ToolError};
use crate::tools::ports::sub_agent::{run_child, ChildSpec, ToolChoice};
use crate::workspace::Workspace;

/// Custom agents read at most.
pub const MAX_AGENTS: usize = 100;
pub const MAX_AGENT_BYTES: u64 = 256 * 1024;

const EXPLORE_PROMPT: &str = "You are an exploration sub-agent. Search and read the code to answer the question you are given, quickly and precisely. Use list_files and grep_search to find things, read_file to confirm them; run independent searches together. You cannot change anything. Answer with what you found: the relevant files and lines, and a short explanation.";
const PLAN_PROMPT: &str = "You are a planning sub-agent. Study the code that the task touches and design how to carry it out. You cannot change anything. Answer with a structured plan: the context (what exists and why it matters), numbered steps naming the files and functions to change, the risks, and how to verify the result (tests, commands).";
const GENERAL_PROMPT: &str = "You are a sub-agent carrying out one task for another agent. Use your tools to do the whole task: read before you edit, make the change asked for and no more, and check your work where you can. Answer with what you did and anything left open.";

/// A custom agent from a `.md` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    pub name: String,
    pub description: String,
    /// Tool names it may use (`None`: every tool but `agent`).
    pub tools: Option<Vec<String>>,
    /// The model it asks for (`inherit`, a family alias `sonnet`/`opus`/
    /// `haiku`, or a model id; see [`crate::agent::config::sub_agent_model`]);
    /// it runs on the parent's provider. A project agent's is taken only
    /// when the user trusts the folder's files ([`crate::trust`]): a
    /// cloned repository does not choose what the user pays for.
    pub model: Option<String>,
    /// The model a project agent's file asks for and that is left out
    /// because the file is not trusted (said by the settings' trust
    /// notice, [`untrusted_model`]).
    pub model_untrusted: Option<String>,
    pub system_prompt: String,
    pub path: PathBuf,
    pub origin: Origin,
}

/// Every custom agent found for a workspace, and the files skipped.
#[derive(Debug, Clone, Default)]
pub struct AgentSet {
    pub agents: Vec<AgentDefinition>,
    pub skipped: Vec<Skipped>,
}

impl AgentSet {
    pub fn discover(workspace: &Workspace) -> Self {
        let mut set = AgentSet::default();
        let trust = workspace.trust().trust(workspace.root());
        for (dir, origin) in search_dirs(workspace, "agents") {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut files: Vec<PathBuf> =
                entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md")).collect();
            files.sort();
            for file in files {
                if set.agents.len() >= MAX_AGENTS {
                    set.skip(file, format!("more than {MAX_AGENTS} agents"));
                    continue;
                }
                match load_agent(workspace, &file, origin, &trust) {
                    Ok(agent) if set.get(&agent.name).is_some() || BUILT_IN.contains(&agent.name.as_str()) => {
                        let reason = format!("an agent named \"{}\" exists already (built-in, or found first)", agent.name);
                        set.skip(file, reason);
                    }
                    Ok(agent) => set.agents.push(agent),
                    Err(reason) => set.skip(file, reason),
                }
            }
        }
        set
    }

    fn skip(&mut self, path: PathBuf, reason: String) {
        tracing::warn!(path = %path.display(), %reason, "skipped");
        self.skipped.push(Skipped { path, reason });
    }

    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.iter().find(|a| a.name == name)
    }
}

const BUILT_IN: [&str; 3] = ["explore", "plan", "general"];

fn load_agent(workspace: &Workspace, file: &Path, origin: Origin, trust: &crate::trust::Trust) -> Result<AgentDefinition, String> {
    let text = read_bounded(workspace, file, origin, MAX_AGENT_BYTES)?;
    let doc = front_matter::parse(&text)?;
    let mut model = doc.text("model")?;
    let mut model_untrusted = None;
    if origin == Origin::Project && model.is_some() {
        let relative = file.strip_prefix(workspace.root()).unwrap_or(file).display().to_string();
        if !trust.trusts(&relative, text.as_bytes()) {
            model_untrusted = model.take().filter(|m| asks_for_a_model(m));
        }
    }
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = doc.text("name")?.unwrap_or(stem);
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("the name \"{name}\" must be one word (letters, digits, - and _)"));
    }
    let tools = match doc.list("tools")? {
        Some(tools) => Some(tools),
        None => doc.list("allowed-tools")?,
    };
    let system_prompt = doc.body.trim().to_string();
    if system_prompt.is_empty() {
        return Err("the body (the agent's system prompt) is empty".to_string());
    }
    Ok(AgentDefinition {
        name,
        description: doc.text("description")?.unwrap_or_default(),
        tools: tools.map(|names| names.iter().map(|n| tool_name(n)).collect()),
        model,
        model_untrusted,
        system_prompt,
        path: file.to_path_buf(),
        origin,
    })
}

/// Whether an agent's `model` field asks for a model other than the
/// session's (empty and `inherit` do not).
fn asks_for_a_model(model: &str) -> bool {
    let model = model.trim();
    !model.is_empty() && !model.eq_ignore_ascii_case("inherit")
}

/// The model the project agent file `bytes` asks for, when it asks for one
/// (see [`asks_for_a_model`]): what an untrusted folder's agent is denied.
/// For the settings loader's trust notice; a file that does not parse asks
/// for nothing (the agent loader reports it).
pub fn untrusted_model(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    front_matter::parse(text).ok()?.text("model").ok()?.filter(|m| asks_for_a_model(m))
}

/// Launch a sub-agent to handle a task autonomously. Sub-agents have isolated context and return their result. Types: 'explore' (read-only, fast search), 'plan' (read-only, structured planning), 'general' (full tools).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AgentArgs {
    /// A short (3-5 word) description of the task.
    pub description: String,
    /// The task for the sub-agent: everything it needs to know, since it does not see this conversation.
    pub prompt: String,
    /// explore, plan, general (the default), or a custom agent's name.
    #[serde(default, rename = "type")]
    pub agent_type: Option<String>,
}

pub struct AgentTool;

/// What a call's type resolves to.
pub struct Resolved {
    system_prompt: String,
    tools: ToolChoice,
    /// A custom agent's `model` field (`inherit` for the built-in general agent).
    model: Option<String>,
}

fn resolve(agent_type: Option<&str>, workspace: &Workspace) -> Result<Resolved, String> {
    let name = agent_type.map(str::trim).filter(|t| !t.is_empty()).unwrap_or("general");
    match name {
        "explore" => Ok(Resolved { system_prompt: EXPLORE_PROMPT.to_string(), tools: ToolChoice::ReadOnly, model: None }),
        "plan" => Ok(Resolved { system_prompt: PLAN_PROMPT.to_string(), tools: ToolChoice::ReadOnly, model: None }),
        // The general agent edits and runs commands: the session's model,
        // not the small one the read-only agents run on (`smallModel`).
        "general" => Ok(Resolved { system_prompt: GENERAL_PROMPT.to_string(), tools: ToolChoice::General, model: Some("inherit".into()) }),
        custom => {
            let agents = AgentSet::discover(workspace);
            match agents.get(custom) {
                Some(agent) => Ok(Resolved {
                    system_prompt: agent.system_prompt.clone(),
                    tools: ToolChoice::Only(agent.tools.clone()),
                    model: agent.model.clone(),
                }),
                None => {
                    let mut known: Vec<&str> = BUILT_IN.to_vec();
                    known.extend(agents.agents.iter().map(|a| a.name.as_str()));
                    Err(format!("Unknown agent type: {custom}. Available: {}", known.join(", ")))
                }
            }
        }
    }
}

#[async_trait]
impl Tool for AgentTool {
    type Args = AgentArgs;
    /// What the type resolves to: checked before permission is asked.
    type Plan = Resolved;
    const NAME: &'static str = "agent";
    const STARTS_SUB_AGENTS: bool = true;

    /// The custom agents of the workspace, named with what they do and
    /// their tools.
    fn workspace_description(&self, workspace: &Workspace) -> String {
        let agents = AgentSet::discover(workspace);
        if agents.agents.is_empty() {
            return String::new();
        }
        let mut description = String::from("\n\nCustom agents (give the name as type):");
        for agent in &agents.agents {
            let tools = match &agent.tools {
                Some(tools) => tools.join(", "),
                None => "all tools".to_string(),
            };
            let about = if agent.description.is_empty() { "(no description)" } else { &agent.description };
            description.push_str(&format!("\n- {}: {about} (tools: {tools})", agent.name));
        }
        description
    }

    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<Resolved, ToolError> {
        resolve(args.agent_type.as_deref(), &ctx.workspace).map_err(ToolError::Model)
    }

    fn is_read_only(&self, args: &Self::Args) -> bool {
        // The child's own calls pass every gate themselves; a read-only
        // type makes no change at all.
        matches!(args.agent_type.as_deref().map(str::trim), Some("explore" | "plan"))
    }

    fn is_concurrency_safe(&self, args: &Self::Args) -> bool {
        // Read-only sub-agents may run side by side.
        self.is_read_only(args)
    }

    fn summary(&self, args: &Self::Args) -> String {
        match &args.agent_type {
            Some(t) => format!("{t}: {}", args.description),
            None => args.description.clone(),
        }
    }

    async fn call(&self, args: Self::Args, resolved: Resolved, ctx: &ToolContext) -> Result<String, ToolError> {
        let spec = ChildSpec {
            label: format!("agent {}", args.agent_type.as_deref().unwrap_or("general")),
            system_prompt: resolved.system_prompt,
            prompt: args.prompt,
            tools: resolved.tools,
            model: resolved.model,
        };
        match run_child(ctx, spec).await {
            Ok(text) if text.trim().is_empty() => Ok("(Sub-agent produced no output)".to_string()),
            Ok(text) => Ok(text),
            Err(err) => Err(ToolError::model(format!("Sub-agent error: {err}"))),
        }
    }
}

