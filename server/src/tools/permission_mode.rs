//! Permission modes: part of the contract, since plan mode (a tool's own
//! gate, [`super::plan_mode`]) reports and restores the mode. What each mode
//! allows is decided in one place, the permission layer's policy; front ends
//! only carry out its questions.

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

/// The reason given to the model for a call refused in plan mode.
pub const PLAN_MODE_REFUSAL: &str = "plan mode allows only read-only tools (read_file, list_files, grep_search). Do not make changes now: investigate with read-only tools, then present your plan to the user";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in PermissionMode::NAMES {
            assert_eq!(name.parse::<PermissionMode>().unwrap().as_str(), name);
        }
        assert!("yolo".parse::<PermissionMode>().is_err());
    }
}
