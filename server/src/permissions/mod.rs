//! Permissions: which calls run, which are refused, which someone must
//! answer — decided in one place, [`policy::Policy`], from the mode, the
//! rules in settings ([`rules`]) and what the call does (its [`ToolKind`];
//! for shell commands, their structure: [`shell`]).

pub mod policy;
pub mod rules;
pub mod shell;

pub use policy::{AskInfo, Call, Policy, Verdict};
pub use rules::Rule;

use std::path::PathBuf;

/// What a call does, as every layer above tools/ sees it. Fail closed:
/// `Other` is not read-only.
// FIXME(pipeline): becomes `pub use crate::tools::ToolKind` when the
// lead's pipeline (issue 7) lands; the variants are the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolKind {
    /// Absolute, resolved paths (may be empty: "the workspace").
    Read { paths: Vec<PathBuf> },
    /// Absolute, resolved.
    Edit { path: PathBuf },
    /// The whole command text, every line.
    Execute { command: String },
    Fetch { url: String },
    Other,
}
