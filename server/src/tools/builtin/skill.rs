//! `skill`: load a skill's instructions into the conversation (inline), or
//! run the skill as a sub-agent whose system prompt it is (fork).
//!
//! A skill is a folder holding a `SKILL.md`, found in the project's
//! `.tandem/skills/` and `.claude/skills/`, then the user's
//! `~/.tandem/skills/` and `~/.claude/skills/`; on a name clash the first
//! found wins, so the project wins over the user. The front matter gives
//! `name` (default: the folder's name), `description`, `when_to_use`,
//! `allowed-tools`, `user-invocable` and `context: fork|inline`; the body is
//! the prompt template (`$ARGUMENTS`, `${ARGUMENTS}`, `${CLAUDE_SKILL_DIR}`,
//! `${TANDEM_SKILL_DIR}` are filled in). A malformed `SKILL.md` is skipped
//! with the reason (in the log and in `tandem skills`); it never breaks a run.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::support::front_matter::{self, read_bounded, search_dirs, tool_name};
pub use crate::tools::support::front_matter::{Origin, Skipped};
use crate::tools::{Tool, ToolContext, ToolError};
use crate::workspace::Workspace;

/// Skills read at most (the rest are reported as skipped).
pub const MAX_SKILLS: usize = 200;
/// A `SKILL.md` larger than this is skipped.
pub const MAX_SKILL_BYTES: u64 = 256 * 1024;

/// How a skill runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillContext {
    /// Its prompt goes into the conversation.
    Inline,
    /// It runs as a sub-agent and its answer comes back.
    Fork,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub when_to_use: Option<String>,
    /// Tool names the skill may use when forked (`None`: the sub-agent default).
    pub allowed_tools: Option<Vec<String>>,
    pub user_invocable: bool,
    pub context: SkillContext,
    /// The folder holding `SKILL.md`.
    pub dir: PathBuf,
    pub origin: Origin,
    /// The body: the prompt template.
    pub template: String,
}

impl Skill {
    /// The prompt with the arguments and the skill's folder filled in.
    pub fn prompt(&self, args: &str) -> String {
        let dir = self.dir.display().to_string();
        self.template
            .replace("${ARGUMENTS}", args)
            .replace("$ARGUMENTS", args)
            .replace("${CLAUDE_SKILL_DIR}", &dir)
            .replace("${TANDEM_SKILL_DIR}", &dir)
    }
}

/// Every skill found for a workspace, and the files skipped.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    pub skills: Vec<Skill>,
    pub skipped: Vec<Skipped>,
}

impl SkillSet {
    pub fn discover(workspace: &Workspace) -> Self {
        let mut set = SkillSet::default();
        for (dir, origin) in search_dirs(workspace, "skills") {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut folders: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()).collect();
            folders.sort();
            for folder in folders {
                let file = folder.join("SKILL.md");
                if !file.is_file() && workspace.buffer(&file).is_none() {
                    continue;
                }
                if set.skills.len() >= MAX_SKILLS {
                    set.skip(file, format!("more than {MAX_SKILLS} skills"));
                    continue;
                }
                match load_skill(workspace, &folder, &file, origin) {
                    Ok(skill) if set.get(&skill.name).is_some() => {
                        let reason = format!("a skill named \"{}\" was found first (the project's win over the user's)", skill.name);
                        set.skip(file, reason);
                    }
                    Ok(skill) => set.skills.push(skill),
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

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The "Available Skills" system-prompt section (empty without skills).
    pub fn prompt_section(&self) -> String {
        if self.skills.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "# Available Skills\nSkills are instructions for particular tasks. When a task matches a skill, call the skill tool with its name (and the task's details as args) before doing the work.\n\n",
        );
        for skill in &self.skills {
            out.push_str(&format!("- {}: {}", skill.name, one_line(&skill.description)));
            if let Some(when) = &skill.when_to_use {
                out.push_str(&format!(" When to use: {}", one_line(when)));
            }
            out.push('\n');
        }
        out
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn load_skill(workspace: &Workspace, folder: &Path, file: &Path, origin: Origin) -> Result<Skill, String> {
    let text = read_bounded(workspace, file, origin, MAX_SKILL_BYTES)?;
    let doc = front_matter::parse(&text)?;
    let folder_name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = doc.text("name")?.unwrap_or(folder_name);
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("the name \"{name}\" must be one word (letters, digits, - and _)"));
    }
    let description = match doc.text("description")? {
        Some(d) => d,
        None => doc.body.lines().map(|l| l.trim().trim_start_matches('#').trim()).find(|l| !l.is_empty()).unwrap_or("").to_string(),
    };
    let context = match doc.text("context")?.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("inline") => SkillContext::Inline,
        Some("fork") => SkillContext::Fork,
        Some(other) => return Err(format!("`context` must be fork or inline, not \"{other}\"")),
    };
    let allowed_tools = doc.list("allowed-tools")?.map(|names| names.iter().map(|n| tool_name(n)).collect());
    Ok(Skill {
        name,
        description,
        when_to_use: doc.text("when_to_use")?,
        allowed_tools,
        user_invocable: doc.flag("user-invocable")?.unwrap_or(true),
        context,
        dir: folder.to_path_buf(),
        origin,
        template: doc.body,
    })
}

/// Run a skill: its instructions for a task. Skills are listed in the system prompt under "Available Skills"; call this with a skill's name when the task matches it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SkillArgs {
    /// The skill's name, as listed under "Available Skills".
    pub skill_name: String,
    /// The task details or arguments for the skill (fills in its $ARGUMENTS).
    #[serde(default)]
    pub args: Option<String>,
}

#[derive(Default)]
pub struct SkillTool;

#[async_trait]
impl Tool for SkillTool {
    type Args = SkillArgs;
    type Plan = ();
    const NAME: &'static str = "skill";

    /// The "Available Skills" section: each skill with when to use it.
    fn prompt_section(&self, workspace: &Workspace) -> String {
        SkillSet::discover(workspace).prompt_section()
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        // Loading instructions changes nothing; a forked skill's own calls
        // pass the permission gates themselves.
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        args.skill_name.clone()
    }

    async fn call(&self, args: Self::Args, (): (), ctx: &ToolContext) -> Result<String, ToolError> {
        let skills = SkillSet::discover(&ctx.workspace);
        let Some(skill) = skills.get(args.skill_name.trim()) else {
            return Err(ToolError::model(format!("Unknown skill: {}", args.skill_name)));
        };
        let prompt = skill.prompt(args.args.as_deref().unwrap_or(""));
        match skill.context {
            SkillContext::Inline => Ok(format!("[Skill \"{}\" activated]\n\n{prompt}", skill.name)),
            SkillContext::Fork => fork(skill, prompt, args.args.as_deref().unwrap_or(""), ctx).await,
        }
    }
}

/// A forked skill: a sub-agent whose system prompt is the skill, limited to
/// its allowed tools; its final text comes back.
async fn fork(skill: &Skill, prompt: String, args: &str, ctx: &ToolContext) -> Result<String, ToolError> {
    let task = if args.trim().is_empty() { format!("Carry out the skill \"{}\".", skill.name) } else { args.to_string() };
    let spec = crate::tools::ports::sub_agent::ChildSpec {
        label: format!("skill {}", skill.name),
        system_prompt: prompt,
        prompt: task,
        tools: crate::tools::ports::sub_agent::ToolChoice::Only(skill.allowed_tools.clone()),
        // A skill's front matter names no model: the parent's.
        model: None,
    };
    match crate::tools::ports::sub_agent::run_child(ctx, spec).await {
        Ok(text) if text.trim().is_empty() => Ok("(Skill produced no output)".to_string()),
        Ok(text) => Ok(text),
        Err(err) => Err(ToolError::model(format!("Skill fork error: {err}"))),
    }
}
