//! A review's findings: what `report_finding` reports, as data (never
//! parsed from the model's prose). A finding is a run event
//! ([`super::RunEvent::Finding`]), kept in the thread, and what `tandem
//! lsp` publishes as a diagnostic.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A bug, a security hole, something that breaks.
    Error,
    /// Likely wrong, or a risk worth a look.
    Warning,
    /// A remark: style, a simpler way, a missing test.
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One finding of a review, on lines of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Its id in its run, in report order: `F1`, `F2`…
    pub id: String,
    /// The file, as the workspace names it (relative to its root).
    pub file_path: String,
    /// The first line it is about, from 1.
    pub start_line: u32,
    /// The last line it is about, from 1, inclusive.
    pub end_line: u32,
    pub severity: Severity,
    /// What kind of finding it is, a short slug (`bug`, `security`,
    /// `performance`, `style`, `test`, `review` when the model named none):
    /// the diagnostic's `code`, and what a dismissal remembers.
    pub kind: String,
    /// One line.
    pub title: String,
    /// Why it matters and what to do.
    pub body: String,
    /// The replacement text for lines `start_line..=end_line`, whole
    /// lines (`None`: no change is proposed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// Other places the finding involves (another file, another line).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<RelatedPlace>,
    /// The text of lines `start_line..=end_line` when it was reported, so
    /// a front end places the finding on the text as it is now or drops
    /// it, never on lines that changed meanwhile. In this process only:
    /// not part of the JSON.
    #[serde(skip)]
    #[schemars(skip)]
    pub lines_text: Option<String>,
}

/// Another place a finding involves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RelatedPlace {
    pub file_path: String,
    pub line: u32,
    pub message: String,
}
