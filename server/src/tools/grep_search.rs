//! `grep_search`: PLACEHOLDER — being implemented.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolError};

/// PLACEHOLDER description.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepSearchArgs {
    /// PLACEHOLDER
    pub file_path: String,
}

pub struct GrepSearch;

#[async_trait]
impl Tool for GrepSearch {
    type Args = GrepSearchArgs;
    const NAME: &'static str = "grep_search";

    fn summary(&self, args: &Self::Args) -> String {
        args.file_path.clone()
    }

    async fn call(&self, _args: Self::Args, _ctx: &ToolContext) -> Result<String, ToolError> {
        Err(ToolError::model("not implemented yet"))
    }
}
