//! Permissions: which calls run, which are refused, which someone must
//! answer — decided in one place, [`policy::Policy`], from the mode, the
//! rules in settings ([`rules`]) and what the call does (its [`ToolKind`];
//! for shell commands, their structure: [`shell`]); carried out by the one
//! [`Gate`], the run's [`crate::tools::PermissionGate`], over the front
//! end's [`Prompter`] ([`headless`] is the terminal's).
//!
//! The words: the executor asks the gate about a
//! [`crate::tools::PermissionRequest`] and acts on its
//! [`crate::tools::PermissionDecision`]; inside, the policy judges the
//! request's [`Call`] and gives a [`RuleVerdict`]; the user's reply is an
//! [`Answer`] (or a [`Review`] of an edit).

pub mod gate;
pub mod headless;
pub mod masks;
pub mod policy;
pub mod protected;
pub mod rules;
pub mod shell;

pub use gate::{allow_host_label, allow_host_saved_label, ask_text, told_instead, Answer, Gate, Offers, Prompter, Review, ALLOW_LIKE_THIS, INSTEAD_PROMPT, TELL_INSTEAD};
pub use policy::{AskInfo, Call, Containment, Policy, RuleVerdict};
pub use rules::{PermissionRules, Rule};

pub use crate::tools::{PreHook, ToolKind};

/// Where "Always allow in this project" keeps its rules, for every later
/// thread: the settings layer implements it (`.tandem/settings.local.json`).
pub trait ProjectRules: Send + Sync {
    /// Add these allow rules; the file written, or why nothing was.
    fn save_allow(&self, rules: &[String]) -> Result<std::path::PathBuf, String>;

    /// Add `host` to `sandbox.network.allow` in the user's settings (the
    /// answer "always allow HOST"); the file written, or why nothing was.
    fn save_network_allow(&self, host: &str) -> Result<std::path::PathBuf, String> {
        Err(format!("{host} was not saved: this session has no user settings to save it in (it is allowed for the session)"))
    }
}

/// Keeps nothing (a run with no project to save into: the demo, tests).
pub struct NoProjectRules;

impl ProjectRules for NoProjectRules {
    fn save_allow(&self, _rules: &[String]) -> Result<std::path::PathBuf, String> {
        Err("rules cannot be saved in this run".to_string())
    }
}

impl Policy {
    /// The verdict for a call after its `PreToolUse` hooks.
    pub fn decide_with_hook(&self, call: Call<'_>, hook: PreHook) -> RuleVerdict {
        match hook {
            PreHook::None => self.decide(call),
            PreHook::Block(reason) => RuleVerdict::Deny(format!("the PreToolUse hook blocked it: {reason}")),
            // A hook's "allow" does not open a protected path either.
            PreHook::Allow(_) => match self.deny_reason(call).or_else(|| self.object_read_denial(call)) {
                Some(reason) => RuleVerdict::Deny(reason),
                None => self.protected_on_its_own(call).unwrap_or_else(|| self.allowed_verdict(call)),
            },
            PreHook::Ask(reason) => match self.deny_reason(call) {
                Some(reason) => RuleVerdict::Deny(reason),
                None => RuleVerdict::Ask(AskInfo { reasons: vec![format!("the PreToolUse hook asks: {reason}")], ..AskInfo::default() }),
            },
        }
    }
}
