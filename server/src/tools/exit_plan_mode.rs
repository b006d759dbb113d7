//! `exit_plan_mode` (deferred): show the plan to the user and leave plan
//! mode when they approve it.
//!
//! Who is asked is the front end's [`PlanReview`] in the run's scope: the
//! editor opens the plan file (`window/showDocument`) and offers "Execute",
//! "Execute and accept edits" and "Keep planning"; a terminal on a tty asks
//! the same. With nobody to ask (`--json`, no tty, sub-agents) the run
//! leaves plan mode and the model gets the plan back.

use std::path::Path;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolError, ToolKind};

/// What the user answered about a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanAnswer {
    Execute,
    ExecuteAcceptEdits,
    KeepPlanning { feedback: String },
}

/// Shows a plan to the user and waits for the answer (`None`: nobody answered).
#[async_trait]
pub trait PlanReview: Send + Sync {
    async fn review(&self, plan_file: &Path, plan: &str) -> Option<PlanAnswer>;
}

/// Plans larger than this are cut when read back.
pub const MAX_PLAN_CHARS: usize = 40_000;

/// Exit plan mode after you have finished writing your plan to the plan file. The user will review and approve the plan before you proceed with implementation.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitPlanModeArgs {}

pub struct ExitPlanMode;

#[async_trait]
impl Tool for ExitPlanMode {
    type Args = ExitPlanModeArgs;
    type Plan = ();
    const NAME: &'static str = "exit_plan_mode";

    fn kind(&self, _args: &Self::Args, _ctx: &ToolContext) -> ToolKind {
        ToolKind::Other
    }

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        // Leaving plan mode is the user's decision, made in the review.
        true
    }

    fn deferred(&self) -> bool {
        true
    }

    fn summary(&self, _args: &Self::Args) -> String {
        String::new()
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, _args: Self::Args, (): (), ctx: &ToolContext) -> Result<String, ToolError> {
        let state = ctx.run.plan.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if !state.active {
            return Ok("Not in plan mode.".to_string());
        }
        let file = state.file.clone().unwrap_or_else(|| super::enter_plan_mode::new_plan_file(ctx.workspace.root()));
        let plan = match ctx.workspace.read(&file) {
            Ok(text) => match text.text.char_indices().nth(MAX_PLAN_CHARS) {
                Some((end, _)) => format!("{}\n[... plan cut at {MAX_PLAN_CHARS} characters]", &text.text[..end]),
                None => text.text.to_string(),
            },
            Err(_) => "(No plan file found)".to_string(),
        };
        let reviewer = ctx.run.plan_review.clone();
        let answer = match reviewer {
            Some(reviewer) => {
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return Err(ToolError::model("Error: the run was cancelled during the plan review.")),
                    answer = reviewer.review(&file, &plan) => answer,
                }
            }
            None => None,
        };
        let restore = if state.restore_mode.is_empty() { "default".to_string() } else { state.restore_mode.clone() };
        let leave = |accept_edits: bool| {
            let mut plan_state = ctx.run.plan.lock().unwrap_or_else(|e| e.into_inner());
            plan_state.active = false;
            plan_state.accept_edits |= accept_edits;
        };
        Ok(match answer {
            None => {
                leave(false);
                format!("Exited plan mode. Permission mode restored to: {restore}\n\n## Your Plan:\n{plan}")
            }
            Some(PlanAnswer::Execute) => {
                leave(false);
                format!("User approved the plan. Permission mode restored to: {restore}\n\n## Approved Plan:\n{plan}")
            }
            Some(PlanAnswer::ExecuteAcceptEdits) => {
                leave(true);
                *ctx.run.permission_mode.lock().unwrap_or_else(|e| e.into_inner()) = "acceptEdits".to_string();
                format!("User approved the plan. Permission mode set to: acceptEdits\n\n## Approved Plan:\n{plan}")
            }
            Some(PlanAnswer::KeepPlanning { feedback }) => {
                let feedback = if feedback.trim().is_empty() { "(none given)".to_string() } else { feedback };
                format!("User rejected the plan and wants to keep planning.\n\nUser feedback: {feedback}")
            }
        })
    }
}
