//! `enter_plan_mode` (deferred): put the run in plan mode (see
//! [`plan_mode`](crate::tools::plan_mode) for what that allows).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use crate::sync::MutexExt;

use crate::tools::plan_mode;
use crate::tools::{Tool, ToolContext, ToolError};

/// Enter plan mode to switch to a read-only planning phase. In plan mode, you can only read files and write to the plan file. Use this when you need to explore the codebase and design an implementation plan before making changes.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EnterPlanModeArgs {}

pub struct EnterPlanMode;

#[async_trait]
impl Tool for EnterPlanMode {
    type Args = EnterPlanModeArgs;
    type Plan = ();
    const NAME: &'static str = "enter_plan_mode";


    fn is_read_only(&self, _args: &Self::Args) -> bool {
        // It only narrows what the run may do.
        true
    }

    fn deferred(&self) -> bool {
        true
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, _args: Self::Args, (): (), ctx: &ToolContext) -> Result<String, ToolError> {
        let mode = *ctx.run.permission_mode.locked();
        let Some(file) = plan_mode::enter(ctx, mode) else {
            return Ok("Already in plan mode.".to_string());
        };
        let shown = ctx.workspace.display_path(&file);
        Ok(format!(
            "Entered plan mode. You are now in read-only mode.\n\nYour plan file is {shown}: it is the only file you can edit. Explore the code, write your plan there (context, steps, verification), then call exit_plan_mode."
        ))
    }
}
