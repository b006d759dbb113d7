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
