//! Permission modes for a run, as a [`PermissionPolicy`] for the executor.
//!
//! The executor asks the policy only about calls a tool says need
//! permission (by default, every call that is not read-only); the tools
//! themselves still refuse what is never allowed (paths outside the
//! workspace). Headless runs have no one to ask, so:
//!
//! | mode | headless (`tandem ask`) |
//! |---|---|
//! | `default` | workspace work is allowed: edits, writes, shell commands |
//! | `acceptEdits` | the same (in the editor it skips edit review) |
//! | `bypassPermissions` | the same (in the editor it skips every prompt) |
//! | `plan` | read-only calls only; anything else is refused with an error telling the model to present its plan |
//!
//! In the editor, `default` asks the user; that policy lives in `lsp/`.

use async_trait::async_trait;

use crate::tools::executor::{PermissionDecision, PermissionPolicy, PermissionRequest};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PermissionMode {
    #[default]
    Default,
    AcceptEdits,
    BypassPermissions,
    Plan,
}

impl PermissionMode {
    pub const NAMES: [&'static str; 4] = ["default", "acceptEdits", "bypassPermissions", "plan"];

    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::Plan => "plan",
        }
    }
}

impl std::str::FromStr for PermissionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(PermissionMode::Default),
            "acceptEdits" | "accept-edits" => Ok(PermissionMode::AcceptEdits),
            "bypassPermissions" | "bypass-permissions" => Ok(PermissionMode::BypassPermissions),
            "plan" => Ok(PermissionMode::Plan),
            other => Err(format!("unknown permission mode \"{other}\": use one of {}", PermissionMode::NAMES.join(", "))),
        }
    }
}

/// The headless policy for a mode.
#[derive(Debug, Clone, Copy)]
pub struct HeadlessPolicy {
    pub mode: PermissionMode,
}

/// The reason given to the model for a call refused in plan mode.
pub const PLAN_MODE_REFUSAL: &str = "plan mode allows only read-only tools (read_file, list_files, grep_search). Do not make changes now: investigate with read-only tools, then present your plan to the user";

#[async_trait]
impl PermissionPolicy for HeadlessPolicy {
    async fn decide(&self, request: &PermissionRequest) -> PermissionDecision {
        match self.mode {
            PermissionMode::Plan if !request.read_only => PermissionDecision::Deny(PLAN_MODE_REFUSAL.to_string()),
            _ => PermissionDecision::Allow,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(read_only: bool) -> PermissionRequest {
        PermissionRequest {
            accept_edits: false,
            tool: "t".into(),
            kind: crate::tools::ToolKind::Other,
            read_only,
            summary: "t".into(),
            preview: None,
            input: serde_json::json!({}),
        }
    }

    #[tokio::test]
    async fn plan_refuses_only_changes() {
        let plan = HeadlessPolicy { mode: PermissionMode::Plan };
        assert_eq!(plan.decide(&request(true)).await, PermissionDecision::Allow);
        assert!(matches!(plan.decide(&request(false)).await, PermissionDecision::Deny(_)));
        for mode in [PermissionMode::Default, PermissionMode::AcceptEdits, PermissionMode::BypassPermissions] {
            assert_eq!(HeadlessPolicy { mode }.decide(&request(false)).await, PermissionDecision::Allow);
        }
    }

    #[test]
    fn names_round_trip() {
        for name in PermissionMode::NAMES {
            assert_eq!(name.parse::<PermissionMode>().unwrap().as_str(), name);
        }
        assert!("yolo".parse::<PermissionMode>().is_err());
    }
}
