//! Tools that come and go while the process runs (MCP servers): the
//! port the registry asks for the current list.

use std::sync::Arc;

use async_trait::async_trait;

use super::super::DynTool;

/// Tools that come and go while the process runs (MCP servers start, stop
/// and change their tool lists). The registry asks for the current list
/// whenever it is consulted.
///
/// A source may still be starting (an MCP server that has not listed its
/// tools yet): a run waits for it before its first model turn, and so do
/// `tool_search` and a call to a tool the source may yet bring, rather
/// than answering that there is no such tool.
#[async_trait]
pub trait ToolSource: Send + Sync {
    fn tools(&self) -> Vec<Arc<dyn DynTool>>;

    /// What of this source is still starting, each as the user reads it
    /// ("MCP server github"); with `tool`, only what could bring a tool of
    /// that name.
    fn starting(&self, _tool: Option<&str>) -> Vec<String> {
        Vec::new()
    }

    /// Wait until nothing [`starting`](Self::starting) names is starting
    /// any more (it started, or failed), within the source's own start-up
    /// timeout.
    async fn settle(&self, _tool: Option<&str>) {}

    /// Sections this source adds to a thread's system prompt when the
    /// thread starts (an MCP server's instructions); empty: none.
    fn prompt_sections(&self) -> Vec<String> {
        Vec::new()
    }
}
