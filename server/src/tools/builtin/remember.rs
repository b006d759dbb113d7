//! `remember` (deferred): the agent proposes a note for the user's memory
//! of this project ([`crate::workspace::memory`]). The call is asked like
//! any call that changes something (its kind is `Other`): the user reads
//! the whole note in the question and accepts or declines it; only an
//! accepted note is saved. What is saved stays the user's to edit or
//! remove with `tandem memory`.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::{Tool, ToolContext, ToolError};
use crate::workspace::memory::Memory;

/// Longest note the agent may propose, in characters: short enough to be
/// read whole in the question.
pub const MAX_NOTE_CHARS: usize = 1_000;

/// Propose a note for the user's memory of this project: a lasting fact worth knowing in later
/// conversations (how to build or test, a convention the user asked for, a pitfall found). The
/// user is asked and may decline; an accepted note is in the system prompt of every later
/// conversation here, and the user can edit or remove it. A note with the name of an existing
/// one replaces it. Never store secrets or what the repository's files already say.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RememberArgs {
    /// A short name: letters, digits, '-', '_' (e.g. "testing").
    pub name: String,
    /// The note, a few lines at most.
    pub text: String,
}

pub struct Remember;

#[async_trait]
impl Tool for Remember {
    type Args = RememberArgs;
    type Plan = Memory;
    const NAME: &'static str = "remember";

    fn deferred(&self) -> bool {
        true
    }

    /// What the question shows: the whole note, on one line.
    fn summary(&self, args: &Self::Args) -> String {
        let text: Vec<&str> = args.text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        format!("this note in your memory of the project, as \"{}\": {}", args.name.trim(), text.join(" / "))
    }

    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<Memory, ToolError> {
        let Some(home) = ctx.workspace.home() else { return Err(ToolError::model("Error: the user's home folder is unknown, so there is no memory to write to.")) };
        let memory = Memory::at(home, ctx.workspace.root());
        memory.path_of(args.name.trim()).map_err(|reason| ToolError::model(format!("Error: {reason}.")))?;
        let chars = args.text.trim().chars().count();
        if chars == 0 {
            return Err(ToolError::model("Error: the note is empty."));
        }
        if chars > MAX_NOTE_CHARS {
            return Err(ToolError::model(format!("Error: the note is {chars} characters; keep it under {MAX_NOTE_CHARS} so the user can read it whole.")));
        }
        Ok(memory)
    }

    async fn call(&self, args: Self::Args, memory: Memory, _ctx: &ToolContext) -> Result<String, ToolError> {
        let name = args.name.trim();
        memory.save(name, args.text.trim()).map_err(|reason| ToolError::model(format!("Error: {reason}.")))?;
        Ok(format!("Saved to the user's memory of this project as \"{name}\"; later conversations here start with it. The user can edit or remove it with `tandem memory`."))
    }
}
