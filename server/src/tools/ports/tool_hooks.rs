//! What the executor asks of the user's tool hooks: the contract's side of
//! `PreToolUse` and `PostToolUse`. The hooks layer implements
//! [`ToolHooks`]; the executor runs both around every call (the one place
//! tool hooks run), and hands the `PreToolUse` answer to the permission
//! policy in [`PermissionRequest::hook`](crate::tools::PermissionRequest::hook).

use async_trait::async_trait;

use crate::tools::{PermissionRequest, ToolResult};

/// What the `PreToolUse` hooks said about a call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PreHook {
    /// No hook, or no opinion: the policy decides.
    #[default]
    None,
    /// Exit 2 or a deny answer: refused, the reason goes to the model.
    Block(String),
    /// Allowed without asking (deny rules still apply).
    Allow(String),
    /// Asked, whatever the rules and the mode say.
    Ask(String),
}

/// The user's hooks around tool calls.
#[async_trait]
pub trait ToolHooks: Send + Sync {
    /// Before the permission decision. Hooks that fail or time out are
    /// logged and do not block.
    async fn pre_tool_use(&self, request: &PermissionRequest) -> PreHook;

    /// After the call ran: a blocking answer is a note for the model,
    /// appended to the result (the call has already run).
    async fn post_tool_use(&self, request: &PermissionRequest, result: &ToolResult) -> Option<String>;
}
