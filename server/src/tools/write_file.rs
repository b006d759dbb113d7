//! `write_file`: PLACEHOLDER — being implemented.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolError};

/// PLACEHOLDER description.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteFileArgs {
    /// PLACEHOLDER
    pub file_path: String,
}

pub struct WriteFile;

#[async_trait]
impl Tool for WriteFile {
    type Args = WriteFileArgs;
    const NAME: &'static str = "write_file";

    fn summary(&self, args: &Self::Args) -> String {
        args.file_path.clone()
    }

    async fn call(&self, _args: Self::Args, _ctx: &ToolContext) -> Result<String, ToolError> {
        Err(ToolError::model("not implemented yet"))
    }
}
