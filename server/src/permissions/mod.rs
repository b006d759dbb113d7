//! Permissions: which calls run, which are refused, which someone must
//! answer — decided in one place, [`policy::Policy`], from the mode, the
//! rules in settings ([`rules`]) and what the call does (its [`ToolKind`];
//! for shell commands, their structure: [`shell`]).

pub mod headless;
pub mod policy;
pub mod rules;
pub mod shell;

pub use policy::{AskInfo, Call, Policy, Verdict};
pub use rules::Rule;

pub use crate::tools::ToolKind;

use crate::hooks::{HookEvent, Hooks};
use crate::tools::executor::PermissionRequest;

/// What the `PreToolUse` hooks said about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreHook {
    /// No hook, or no opinion: the policy decides.
    None,
    /// Exit 2 or a deny answer: refused, the reason goes to the model.
    Block(String),
    /// Allowed without asking (deny rules still apply).
    Allow(String),
    /// Asked, whatever the rules and the mode say.
    Ask(String),
}

/// Run the `PreToolUse` hooks for a call. Hooks that fail or time out are
/// logged and do not block.
pub async fn pre_tool_use(hooks: &Hooks, request: &PermissionRequest) -> PreHook {
    if hooks.is_empty() {
        return PreHook::None;
    }
    let payload = serde_json::json!({
        "tool_name": request.tool,
        "tool_input": request.input,
        "tool_kind": request.kind,
    });
    let outcome = hooks.run(HookEvent::PreToolUse, Some(&request.tool), payload).await;
    for failure in &outcome.failures {
        tracing::warn!("{failure}");
    }
    match (outcome.block, outcome.decision) {
        (Some(reason), _) => PreHook::Block(reason),
        (None, Some((decision, reason))) if decision == "allow" => PreHook::Allow(reason),
        (None, Some((_, reason))) => PreHook::Ask(reason),
        (None, None) => PreHook::None,
    }
}

impl Policy {
    /// The verdict for a call after its `PreToolUse` hooks.
    pub fn decide_with_hook(&self, call: Call<'_>, hook: PreHook) -> Verdict {
        match hook {
            PreHook::None => self.decide(call),
            PreHook::Block(reason) => Verdict::Deny(format!("the PreToolUse hook blocked it: {reason}")),
            PreHook::Allow(_) => match self.deny_reason(call) {
                Some(reason) => Verdict::Deny(reason),
                None => self.allowed_verdict(call),
            },
            PreHook::Ask(reason) => match self.deny_reason(call) {
                Some(reason) => Verdict::Deny(reason),
                None => Verdict::Ask(AskInfo { reasons: vec![format!("the PreToolUse hook asks: {reason}")], always: Vec::new() }),
            },
        }
    }
}
