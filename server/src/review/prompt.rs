//! The review's prompt: the level's instructions, the project's rules
//! (`.tandem/REVIEW.md`), what was skipped, and each file's diff.

use super::scope::{describe_skipped, Collected, Skipped};
use super::ReviewRequest;
use crate::workspace::Workspace;

/// The most of `.tandem/REVIEW.md` read, in bytes.
pub const MAX_RULES_BYTES: u64 = 64 * 1024;

/// How hard the review looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Level {
    /// A quick pass: the bugs that matter, nothing else.
    #[default]
    Quick,
    /// A thorough review: correctness, edge cases, security, tests, design;
    /// reading around the changes.
    Thorough,
}

impl Level {
    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "quick" => Some(Level::Quick),
            "thorough" => Some(Level::Thorough),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Quick => "quick",
            Level::Thorough => "thorough",
        }
    }

    fn instructions(self) -> &'static str {
        match self {
            Level::Quick => "This is a quick review: look for the problems that matter (bugs, crashes, security holes, data loss, broken contracts) in the changed lines. Report only what you are confident of; skip style and taste. Read other files only when a change cannot be judged without them.",
            Level::Thorough => "This is a thorough review: check correctness and edge cases, error handling, security, concurrency, performance, tests that are missing or wrong, and whether the change fits the code around it. Read the surrounding code and the callers of what changed before you judge.",
        }
    }
}

/// A review ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewPrompt {
    /// What the model is asked.
    pub prompt: String,
    /// The files reviewed, as the workspace names them.
    pub files: Vec<String>,
    /// The files left out, and why.
    pub skipped: Vec<Skipped>,
    /// `.tandem/REVIEW.md` was read into the prompt.
    pub rules: bool,
}

impl ReviewPrompt {
    /// One line for the user: how many files, what was skipped.
    pub fn describe(&self) -> String {
        let mut line = format!("Reviewing {} file(s)", self.files.len());
        if !self.skipped.is_empty() {
            line.push_str(&format!("; skipped {}", describe_skipped(&self.skipped)));
        }
        if self.rules {
            line.push_str("; with the rules of .tandem/REVIEW.md");
        }
        line.push('.');
        line
    }
}

/// The project's review rules, read confined to the workspace (an open
/// buffer's text counts); `None`: there are none, or they cannot be read
/// (a link out of the workspace, too large: said in the log).
fn project_rules(workspace: &Workspace) -> Option<String> {
    let path = super::rules_path(workspace.root());
    match workspace.read_confined(&path, Some(workspace.roots()), MAX_RULES_BYTES) {
        Ok(Some(text)) if !text.trim().is_empty() => Some(text.to_string()),
        Ok(_) => None,
        Err(why) => {
            tracing::warn!(%why, "skipping .tandem/REVIEW.md");
            None
        }
    }
}

pub(super) fn build(workspace: &Workspace, request: &ReviewRequest, collected: Collected) -> ReviewPrompt {
    let rules = project_rules(workspace);
    let mut prompt = format!(
        "Review {}. {}\n\n\
         Report each finding with the report_finding tool, once per finding, on the lines of the file as it is now in the workspace (for a diff: the lines of its + side). \
         Give a suggestion only when you can write the exact replacement of those lines. You cannot change files or run commands in this review. \
         When you are done, answer with a short summary: how many findings, and whether the change is ready.\n",
        request.scope.describe(),
        request.level.instructions()
    );
    if let Some(rules) = &rules {
        prompt.push_str(&format!("\nThe project's review rules (.tandem/REVIEW.md):\n<review-rules>\n{}\n</review-rules>\n", rules.trim_end()));
    }
    if !collected.skipped.is_empty() {
        prompt.push_str(&format!("\nLeft out of this review (do not review them): {}.\n", describe_skipped(&collected.skipped)));
    }
    for file in &collected.files {
        prompt.push_str(&format!("\n<file path=\"{}\">\n{}\n</file>\n", file.path, file.diff.trim_end()));
    }
    ReviewPrompt { prompt, files: collected.files.iter().map(|f| f.path.clone()).collect(), skipped: collected.skipped, rules: rules.is_some() }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::scope::{FileDiff, Scope};
    use super::*;

    #[test]
    fn the_prompt_holds_the_level_the_rules_the_skips_and_the_diffs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".tandem")).unwrap();
        std::fs::write(dir.path().join(".tandem/REVIEW.md"), "Every unsafe block needs a SAFETY comment.\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let collected = Collected { files: vec![FileDiff { path: "a.rs".into(), diff: "+fn a() {}\n".into() }], skipped: vec![Skipped { path: "b.png".into(), reason: "binary".into() }] };
        let request = ReviewRequest { scope: Scope::Uncommitted, level: Level::Thorough };
        let review = build(&workspace, &request, collected);
        assert!(review.prompt.starts_with("Review the uncommitted changes. This is a thorough review"), "{}", review.prompt);
        assert!(review.prompt.contains("<review-rules>\nEvery unsafe block needs a SAFETY comment.\n</review-rules>"));
        assert!(review.prompt.contains("Left out of this review (do not review them): b.png (binary)."));
        assert!(review.prompt.contains("<file path=\"a.rs\">\n+fn a() {}\n</file>"));
        assert_eq!(review.describe(), "Reviewing 1 file(s); skipped b.png (binary); with the rules of .tandem/REVIEW.md.");
    }

    #[cfg(unix)]
    #[test]
    fn rules_that_link_out_of_the_workspace_are_not_read() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "the secret").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".tandem")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join(".tandem/REVIEW.md")).unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let collected = Collected { files: vec![FileDiff { path: "a.rs".into(), diff: "+x\n".into() }], skipped: Vec::new() };
        let review = build(&workspace, &ReviewRequest::default(), collected);
        assert!(!review.prompt.contains("the secret"));
        assert!(!review.rules);
    }
}
