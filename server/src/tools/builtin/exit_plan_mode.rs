//! `exit_plan_mode` (deferred): show the plan to the user and leave plan
//! mode when they approve it (see [`plan_mode`](crate::tools::plan_mode) for who
//! is asked).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::sync::MutexExt;
use crate::tools::plan_mode::{self, PlanAnswer};
use crate::tools::{PermissionMode, Tool, ToolContext, ToolError};

/// Exit plan mode after you have finished writing your plan to the plan file. The user will review and approve the plan before you proceed with implementation.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitPlanModeArgs {}

pub struct ExitPlanMode;

#[async_trait]
impl Tool for ExitPlanMode {
    type Args = ExitPlanModeArgs;
    type Plan = ();
    const NAME: &'static str = "exit_plan_mode";


    fn is_read_only(&self, _args: &Self::Args) -> bool {
        // Leaving plan mode is the user's decision, made in the review.
        true
    }

    fn deferred(&self) -> bool {
        true
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, _args: Self::Args, (): (), ctx: &ToolContext) -> Result<String, ToolError> {
        let state = plan_mode::current(ctx);
        if !state.active {
            return Ok("Not in plan mode.".to_string());
        }
        let file = state.file.clone().unwrap_or_else(|| plan_mode::new_plan_file(ctx.workspace.root()));
        let plan = plan_mode::read_plan(ctx, &file);
        let reviewer = ctx.run.plan_review.clone();
        let turn = ctx.run.questions.locked().clone();
        let answer = match reviewer {
            Some(reviewer) => {
                // The review waits its turn in the run's events, behind the
                // plan's last writes.
                let review = async {
                    if let Some(turn) = turn {
                        turn.wait(crate::protocol::QuestionKind::Plan).await;
                    }
                    reviewer.review(&file, &plan).await
                };
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return Err(ToolError::model("Error: the run was cancelled during the plan review.")),
                    answer = review => answer,
                }
            }
            None => None,
        };
        let restore = state.restore_mode.as_str();
        Ok(match answer {
            None => {
                plan_mode::leave(ctx, false);
                format!("Exited plan mode. Permission mode restored to: {restore}\n\n## Your Plan:\n{plan}")
            }
            Some(PlanAnswer::Execute) => {
                plan_mode::leave(ctx, false);
                format!("User approved the plan. Permission mode restored to: {restore}\n\n## Approved Plan:\n{plan}")
            }
            Some(PlanAnswer::ExecuteAcceptEdits) => {
                plan_mode::leave(ctx, true);
                format!("User approved the plan. Permission mode set to: {}\n\n## Approved Plan:\n{plan}", PermissionMode::AcceptEdits.as_str())
            }
            Some(PlanAnswer::KeepPlanning { feedback }) => {
                let feedback = if feedback.trim().is_empty() { "(none given)".to_string() } else { feedback };
                format!("User rejected the plan and wants to keep planning.\n\nUser feedback: {feedback}")
            }
        })
    }
}
