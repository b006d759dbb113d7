//! `report_finding`: a review's finding, reported as data. Offered only in
//! review runs (`tandem review`, `tandem.review`, ACP's `/review`), beside
//! the read-only tools. Each call is checked against the file as it is now
//! (an open buffer's text counts): a path outside the workspace, lines past
//! the end, an empty title are an error the model reads and can correct,
//! never a finding made up from what it meant.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::protocol::{Finding, RelatedPlace, Severity};
use crate::sync::MutexExt;
use crate::tools::{Tool, ToolContext, ToolError, ToolKind};

/// Most findings one review run may report.
pub const MAX_FINDINGS: usize = 50;
/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Longest body, in characters.
pub const MAX_BODY_CHARS: usize = 4_000;
/// Longest suggestion, in characters.
pub const MAX_SUGGESTION_CHARS: usize = 20_000;
/// Most related places per finding.
pub const MAX_RELATED: usize = 10;

/// Report one finding of your review: a problem on lines of one file. Call it once per finding,
/// as soon as you are sure of it; the user sees each one in their editor's problem list, on
/// those lines. Report only real problems you can point at; never restate the diff. The lines
/// are the file's lines as it is now, from 1.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportFindingArgs {
    /// The file, relative to the workspace root.
    pub file_path: String,
    /// The first line the finding is about, from 1.
    pub start_line: u32,
    /// The last line the finding is about (inclusive; the same as start_line for one line).
    pub end_line: u32,
    /// error: a bug, a security hole, something that breaks. warning: likely wrong or risky.
    /// info: a remark (style, a simpler way, a missing test).
    pub severity: Severity,
    /// What is wrong, in one line.
    pub title: String,
    /// Why it matters and what to do about it.
    pub body: String,
    /// The replacement text for lines start_line..end_line, whole lines, exactly as they should
    /// read (leave it out when you propose no change, or the fix is elsewhere).
    #[serde(default)]
    pub suggestion: Option<String>,
    /// The kind of finding, one short word: bug, security, performance, style, test, docs.
    #[serde(default)]
    pub kind: Option<String>,
    /// Other places the finding involves (the caller it breaks, the other half of a race).
    #[serde(default)]
    pub related: Vec<RelatedArgs>,
}

/// Another place a finding involves.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelatedArgs {
    /// The file, relative to the workspace root.
    pub file_path: String,
    /// The line, from 1.
    pub line: u32,
    /// What is there, in a few words.
    pub message: String,
}

pub struct ReportFinding;

/// Lines of `text`, as editors count them (a last line without its newline counts).
fn line_count(text: &str) -> u32 {
    u32::try_from(crate::diff::split_lines(text).len()).unwrap_or(u32::MAX).max(1)
}

/// Lines `start..=end` (from 1) of `text`, without their line breaks, joined by `\n`.
pub fn lines_of(text: &str, start: u32, end: u32) -> String {
    let skip = start.saturating_sub(1) as usize;
    let take = (end.saturating_sub(start) as usize) + 1;
    text.lines().skip(skip).take(take).collect::<Vec<_>>().join("\n")
}

impl ReportFinding {
    /// The file as the workspace names it, and its text now.
    fn file_text(path: &str, ctx: &ToolContext) -> Result<(String, std::sync::Arc<str>), ToolError> {
        let resolved = ctx.workspace.resolve(path).map_err(|err| ToolError::model(format!("Error: file_path {path}: {}", err.message())))?;
        let file = ctx
            .workspace
            .read(&resolved)
            .map_err(|err| ToolError::model(format!("{} Findings cannot be on it: report them on files that exist, by their path in the workspace.", err.message(path))))?;
        Ok((ctx.workspace.display_path(&resolved), file.text))
    }

    /// The file as the workspace names it, and its number of lines now.
    fn file_lines(path: &str, ctx: &ToolContext) -> Result<(String, u32), ToolError> {
        let (name, text) = Self::file_text(path, ctx)?;
        Ok((name, line_count(&text)))
    }

    fn check_text(name: &str, text: &str, max: usize, one_line: bool) -> Result<(), ToolError> {
        if text.trim().is_empty() {
            return Err(ToolError::model(format!("Error: {name} is empty: say it in words.")));
        }
        let chars = text.chars().count();
        if chars > max {
            return Err(ToolError::model(format!("Error: {name} has {chars} characters; keep it under {max}.")));
        }
        if one_line && text.trim().contains('\n') {
            return Err(ToolError::model(format!("Error: {name} must be one line; put the rest in body.")));
        }
        Ok(())
    }

    fn check_kind(kind: Option<&str>) -> Result<String, ToolError> {
        let kind = kind.map(str::trim).filter(|k| !k.is_empty()).unwrap_or("review").to_ascii_lowercase();
        let ok = kind.len() <= 32 && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return Err(ToolError::model(format!("Error: kind \"{kind}\" is not one short word (letters, digits, '-'): use bug, security, performance, style, test or docs.")));
        }
        Ok(kind)
    }
}

#[async_trait]
impl Tool for ReportFinding {
    type Args = ReportFindingArgs;
    /// The finding, checked (its id given when it is kept).
    type Plan = Finding;
    const NAME: &'static str = "report_finding";

    fn kind(&self, args: &Self::Args, ctx: &ToolContext) -> ToolKind {
        // It reads the file to check the lines; it changes nothing but
        // what the user is shown.
        ToolKind::Read { paths: vec![ctx.workspace.resolve_lenient(&args.file_path)] }
    }

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        format!("{}:{} {}", args.file_path, args.start_line, args.title.lines().next().unwrap_or_default())
    }

    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<Finding, ToolError> {
        if ctx.run.findings.locked().len() >= MAX_FINDINGS {
            return Err(ToolError::model(format!("Error: this review already reported {MAX_FINDINGS} findings, the most one review may; finish with a short summary.")));
        }
        Self::check_text("title", &args.title, MAX_TITLE_CHARS, true)?;
        Self::check_text("body", &args.body, MAX_BODY_CHARS, false)?;
        if let Some(suggestion) = &args.suggestion {
            let chars = suggestion.chars().count();
            if chars > MAX_SUGGESTION_CHARS {
                return Err(ToolError::model(format!("Error: suggestion has {chars} characters; keep it under {MAX_SUGGESTION_CHARS}, or describe the change in body.")));
            }
        }
        let kind = Self::check_kind(args.kind.as_deref())?;
        let (file_path, text) = Self::file_text(&args.file_path, ctx)?;
        let lines = line_count(&text);
        if args.start_line == 0 || args.end_line < args.start_line {
            return Err(ToolError::model(format!("Error: lines {}-{} are not a range: lines count from 1 and end_line is at least start_line.", args.start_line, args.end_line)));
        }
        if args.end_line > lines {
            return Err(ToolError::model(format!("Error: {file_path} has {lines} lines now; lines {}-{} are past its end. Read it again and give its current lines.", args.start_line, args.end_line)));
        }
        if args.related.len() > MAX_RELATED {
            return Err(ToolError::model(format!("Error: {} related places; give at most {MAX_RELATED}.", args.related.len())));
        }
        let mut related = Vec::new();
        for place in &args.related {
            let (path, lines) = Self::file_lines(&place.file_path, ctx)?;
            if place.line == 0 || place.line > lines {
                return Err(ToolError::model(format!("Error: related line {} of {path} is not a line of it (it has {lines}).", place.line)));
            }
            Self::check_text("a related place's message", &place.message, MAX_TITLE_CHARS, true)?;
            related.push(RelatedPlace { file_path: path, line: place.line, message: place.message.trim().to_string() });
        }
        let title = args.title.trim().to_string();
        let same = ctx.run.findings.locked().iter().find(|f| f.file_path == file_path && f.start_line == args.start_line && f.title == title).map(|f| f.id.clone());
        if let Some(id) = same {
            return Err(ToolError::model(format!("Error: this finding was already reported as {id}; report each finding once.")));
        }
        Ok(Finding {
            id: String::new(),
            file_path,
            start_line: args.start_line,
            end_line: args.end_line,
            severity: args.severity,
            kind,
            title,
            body: args.body.trim().to_string(),
            suggestion: args.suggestion.clone(),
            related,
            lines_text: Some(lines_of(&text, args.start_line, args.end_line)),
        })
    }

    async fn call(&self, _args: Self::Args, finding: Finding, ctx: &ToolContext) -> Result<String, ToolError> {
        let finding = ctx.run.add_finding(finding);
        Ok(format!("Finding {} reported: {}:{}-{} ({}) {}", finding.id, finding.file_path, finding.start_line, finding.end_line, finding.severity.as_str(), finding.title))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Arc;

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(Arc::new(crate::workspace::Workspace::new(dir).unwrap()))
    }

    fn args(value: serde_json::Value) -> ReportFindingArgs {
        serde_json::from_value(value).unwrap()
    }

    fn error_of(result: Result<Finding, ToolError>) -> String {
        match result {
            Err(ToolError::Model(message)) => message,
            other => panic!("expected a model error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_finding_is_checked_against_the_file_and_numbered() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn a() {\n    let x = 1;\n}\n").unwrap();
        let ctx = ctx(dir.path());
        let tool = ReportFinding;
        let good = args(serde_json::json!({"file_path": "a.rs", "start_line": 2, "end_line": 2, "severity": "warning", "title": "unused x", "body": "x is never read", "suggestion": "", "kind": "Style"}));
        let plan = tool.plan(&good, &ctx).await.unwrap();
        let text = tool.call(good, plan, &ctx).await.unwrap();
        assert_eq!(text, "Finding F1 reported: a.rs:2-2 (warning) unused x");
        let kept = ctx.run.findings.locked().clone();
        assert_eq!((kept[0].id.as_str(), kept[0].kind.as_str(), kept[0].suggestion.as_deref()), ("F1", "style", Some("")));
        let again = args(serde_json::json!({"file_path": "a.rs", "start_line": 2, "end_line": 2, "severity": "warning", "title": "unused x", "body": "again"}));
        assert!(error_of(tool.plan(&again, &ctx).await).contains("already reported as F1"));
    }

    #[tokio::test]
    async fn malformed_findings_are_errors_for_the_model() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "one\ntwo\n").unwrap();
        let ctx = ctx(dir.path());
        let tool = ReportFinding;
        let cases = [
            (serde_json::json!({"file_path": "a.rs", "start_line": 2, "end_line": 5, "severity": "error", "title": "t", "body": "b"}), "has 2 lines now"),
            (serde_json::json!({"file_path": "a.rs", "start_line": 0, "end_line": 1, "severity": "error", "title": "t", "body": "b"}), "not a range"),
            (serde_json::json!({"file_path": "a.rs", "start_line": 2, "end_line": 1, "severity": "error", "title": "t", "body": "b"}), "not a range"),
            (serde_json::json!({"file_path": "a.rs", "start_line": 1, "end_line": 1, "severity": "error", "title": " ", "body": "b"}), "title is empty"),
            (serde_json::json!({"file_path": "a.rs", "start_line": 1, "end_line": 1, "severity": "error", "title": "a\nb", "body": "b"}), "one line"),
            (serde_json::json!({"file_path": "gone.rs", "start_line": 1, "end_line": 1, "severity": "error", "title": "t", "body": "b"}), "file not found: gone.rs"),
            (serde_json::json!({"file_path": "../x.rs", "start_line": 1, "end_line": 1, "severity": "error", "title": "t", "body": "b"}), "file_path ../x.rs"),
            (serde_json::json!({"file_path": "a.rs", "start_line": 1, "end_line": 1, "severity": "error", "title": "t", "body": "b", "kind": "two words"}), "not one short word"),
            (serde_json::json!({"file_path": "a.rs", "start_line": 1, "end_line": 1, "severity": "error", "title": "t", "body": "b", "related": [{"file_path": "a.rs", "line": 9, "message": "m"}]}), "related line 9"),
        ];
        for (input, expected) in cases {
            let message = error_of(tool.plan(&args(input.clone()), &ctx).await);
            assert!(message.contains(expected), "{input}: {message}");
        }
        assert!(serde_json::from_value::<ReportFindingArgs>(serde_json::json!({"file_path": "a.rs", "start_line": 1, "end_line": 1, "severity": "fatal", "title": "t", "body": "b"})).is_err());
        assert!(ctx.run.findings.locked().is_empty());
    }
}
