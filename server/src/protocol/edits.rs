//! What became of a run's edits: each edit's status (the one list of status
//! strings every front end reports), the lines it changed, what one call
//! did to one file, and the `tandem.ask` answer that lists them.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::run::{RunStatus, Usage};

/// An edit's outcome as `tandem.ask`'s answer (`edits[].status`), the run
/// events and the editors' messages name it. These strings are a contract
/// (docs/protocol.md); this is the one place that spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditStatus {
    /// Every hunk is in the editor's buffer.
    Applied,
    /// Some hunks landed, the others were declined in the review.
    Partial,
    /// The user declined the whole edit.
    Rejected,
    /// The editor did not apply it.
    NotApplied,
    /// The user changed the text first.
    Superseded,
    /// A file that was not open, written on disk.
    Written,
    /// Nobody knows whether it landed: the editor never answered, or
    /// answered `applied: true` and the buffer did not show it in time, or
    /// the run stopped waiting. The agent must read the file again.
    Unknown,
}

impl EditStatus {
    pub const ALL: [EditStatus; 7] = [
        EditStatus::Applied,
        EditStatus::Partial,
        EditStatus::Rejected,
        EditStatus::NotApplied,
        EditStatus::Superseded,
        EditStatus::Unknown,
        EditStatus::Written,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EditStatus::Applied => "applied",
            EditStatus::Partial => "partial",
            EditStatus::Rejected => "rejected",
            EditStatus::NotApplied => "not_applied",
            EditStatus::Superseded => "superseded",
            EditStatus::Written => "written",
            EditStatus::Unknown => "unknown",
        }
    }

    /// The words for people ("2 applied, 1 declined").
    pub fn words(self) -> &'static str {
        match self {
            EditStatus::Applied => "applied",
            EditStatus::Partial => "partly applied",
            EditStatus::Rejected => "declined",
            EditStatus::NotApplied => "not applied",
            EditStatus::Superseded => "superseded",
            EditStatus::Written => "written",
            EditStatus::Unknown => "unknown",
        }
    }

    /// The words a run's summary counts it under: `written` is `applied`
    /// to the user, the file has the change either way.
    pub fn label(self) -> &'static str {
        match self {
            EditStatus::Written => EditStatus::Applied.words(),
            other => other.words(),
        }
    }

    /// The change is (at least partly) in the file.
    pub fn landed(self) -> bool {
        matches!(self, EditStatus::Applied | EditStatus::Partial | EditStatus::Written)
    }
}

/// Lines `start..=end`, 1-based, of a text. A change that removed lines
/// without putting any in their place spans the one line where they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LineSpan {
    #[serde(rename = "startLine")]
    pub start: usize,
    #[serde(rename = "endLine")]
    pub end: usize,
}

impl LineSpan {
    /// The lines the bytes `start..end` of `text` cover.
    pub fn of(text: &str, start: usize, end: usize) -> LineSpan {
        let line_at = |offset: usize| text.as_bytes()[..offset.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1;
        let first = line_at(start);
        // The last byte of the range, not the one after it: a hunk that
        // ends with its newline ends on its own line.
        let last = if end > start { line_at(end - 1) } else { first };
        LineSpan { start: first, end: last }
    }
}

impl std::fmt::Display for LineSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.start == self.end {
            write!(f, "line {}", self.start)
        } else {
            write!(f, "lines {}-{}", self.start, self.end)
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What one call did to one file: an edit tool's change (reviewed in the
/// editor or written on disk) or a shell command's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileEffect {
    /// The file (absolute, resolved path).
    pub path: PathBuf,
    pub status: EditStatus,
    /// The lines it changed, in the text after it (a partial edit's landed
    /// hunks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranges: Vec<LineSpan>,
    /// A partial edit's declined hunks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declined: Vec<LineSpan>,
    /// A shell command changed the file, not an edit tool: the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_command: Option<String>,
    /// The command deleted the file.
    #[serde(default, skip_serializing_if = "is_false")]
    pub deleted: bool,
    /// Refused before anything was written or offered to the editor (the
    /// file changed since it was read, or could not be read): no file was
    /// touched. An editor's list of the run's edits leaves it out.
    #[serde(default, skip_serializing_if = "is_false")]
    pub untried: bool,
}

impl FileEffect {
    /// An edit tool's change with `status` and no lines known yet.
    pub fn new(path: PathBuf, status: EditStatus) -> Self {
        FileEffect { path, status, ranges: Vec::new(), declined: Vec::new(), by_command: None, deleted: false, untried: false }
    }
}

/// What one call of a run did to one file, as the run's end lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChangedFile {
    /// The call that did it.
    pub call_id: String,
    #[serde(flatten)]
    pub effect: FileEffect,
}

/// One edit of a run as the editor's front end reports it: an entry of
/// `tandem.ask`'s `edits`, the `edit` of the `tool_result` of the call that
/// made it, and what a thread keeps of its run's edits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunEdit {
    /// The file's URI.
    pub uri: String,
    pub status: EditStatus,
    /// The lines it changed, in the text after it (a partial edit's landed
    /// hunks).
    #[serde(default)]
    pub ranges: Vec<LineSpan>,
    /// A partial edit's declined hunks (only on a `partial` edit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declined: Option<Vec<LineSpan>>,
    /// A shell command changed the file, not an edit tool: the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The command deleted the file.
    #[serde(default, skip_serializing_if = "is_false")]
    pub deleted: bool,
    /// The call that made it, where it is known (in the answer's `edits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl RunEdit {
    /// `effect` as the editor names its file (`uri`).
    pub fn new(uri: String, effect: &FileEffect) -> Self {
        RunEdit {
            uri,
            status: effect.status,
            ranges: effect.ranges.clone(),
            declined: (effect.status == EditStatus::Partial).then(|| effect.declined.clone()),
            command: effect.by_command.clone(),
            deleted: effect.by_command.is_some() && effect.deleted,
            tool_call_id: None,
        }
    }
}

/// The answer to `tandem.ask` once its run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskAnswer {
    pub run_id: String,
    pub status: RunStatus,
    /// The model's last answer, or why the run failed.
    pub text: String,
    /// The run's edits, in the order they were made.
    pub edits: Vec<RunEdit>,
    /// The edits worded as every front end words them ("2 edits: 1
    /// applied, 1 partly applied. Changed: …"); none for no edits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The run's thread, to continue it (`threadId` of the next ask).
    pub thread_id: String,
    /// The estimate from the price table, when the model's prices are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub usage: Usage,
}

/// The answer to `tandem.ask` with `"wait": false`, at once: the run's end
/// comes as its `end` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskStarted {
    pub run_id: String,
    pub thread_id: String,
}

/// What the user decided of one hunk of an agent's edit in a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HunkDecision {
    Accepted,
    Rejected,
}

/// The user's comment on one hunk of an agent's edit, with what they
/// decided of it: an editor's review sends these with its answer (the
/// `comments` of a `workspace/applyEdit` result, an ACP permission
/// outcome's `_meta.tandem.comments`), and the model reads them in the
/// edit's tool result, in the same run ([`review_comments_note`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HunkComment {
    /// The hunk's number in the review, from 1; 0 for a comment on the
    /// whole edit.
    pub hunk: usize,
    /// Its lines in the file as it was before the edit, when the editor
    /// knows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<LineSpan>,
    pub decision: HunkDecision,
    pub comment: String,
}

/// Characters of one comment the model is given, at most: a pasted log
/// is cut, not sent whole.
pub const MAX_COMMENT_CHARS: usize = 4000;

/// The user's comments on an edit of `display`, worded for the model so it
/// acts on them in the same run: "hunk 2 (lines 10-14) rejected by the
/// user: use a match". `None` when no comment says anything.
pub fn review_comments_note(display: &str, comments: &[HunkComment]) -> Option<String> {
    let mut lines = Vec::new();
    for c in comments {
        let text = c.comment.trim();
        if text.is_empty() {
            continue;
        }
        let text: String = match text.char_indices().nth(MAX_COMMENT_CHARS) {
            Some((cut, _)) => format!("{} [...]", &text[..cut]),
            None => text.to_string(),
        };
        let place = c.lines.map(|l| format!(" ({l})")).unwrap_or_default();
        let verdict = match c.decision {
            HunkDecision::Accepted => "accepted by the user, with a comment",
            HunkDecision::Rejected => "rejected by the user",
        };
        // Hunk 0: a comment on the whole edit (an ACP client's `comment`).
        let what = if c.hunk == 0 { "the whole edit".to_string() } else { format!("hunk {}", c.hunk) };
        lines.push(format!("- {what}{place} {verdict}: {text}"));
    }
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "The user's review comments on this edit to {display} (act on them now, in this run: redo a rejected hunk the way the comment asks, adjust an accepted one):\n{}",
        lines.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_as_the_editor_reports_it() {
        let partial = FileEffect {
            ranges: vec![LineSpan { start: 1, end: 1 }],
            declined: vec![LineSpan { start: 5, end: 6 }],
            ..FileEffect::new("/w/app.py".into(), EditStatus::Partial)
        };
        let by_command = FileEffect { by_command: Some("make".into()), deleted: true, ..FileEffect::new("/w/out.o".into(), EditStatus::Written) };
        // `deleted` is a command's word: an edit tool's effect never says it.
        let odd = FileEffect { deleted: true, ..FileEffect::new("/w/a.txt".into(), EditStatus::Rejected) };
        let lines: Vec<String> = [
            RunEdit::new("file:///w/app.py".into(), &partial),
            RunEdit { tool_call_id: Some("toolu_1".into()), ..RunEdit::new("file:///w/out.o".into(), &by_command) },
            RunEdit::new("file:///w/a.txt".into(), &odd),
        ]
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
        expect_test::expect![[r#"
            {"uri":"file:///w/app.py","status":"partial","ranges":[{"startLine":1,"endLine":1}],"declined":[{"startLine":5,"endLine":6}]}
            {"uri":"file:///w/out.o","status":"written","ranges":[],"command":"make","deleted":true,"toolCallId":"toolu_1"}
            {"uri":"file:///w/a.txt","status":"rejected","ranges":[]}"#]]
        .assert_eq(&lines.join("\n"));
        assert_eq!(serde_json::to_string(&by_command).unwrap(), r#"{"path":"/w/out.o","status":"written","by_command":"make","deleted":true}"#);
    }

    #[test]
    fn each_status_is_spelt_as_serde_writes_it() {
        for status in EditStatus::ALL {
            assert_eq!(serde_json::to_value(status).unwrap(), serde_json::json!(status.as_str()));
        }
        assert_eq!(EditStatus::Written.label(), "applied");
        assert_eq!(EditStatus::ALL.into_iter().filter(|s| s.landed()).count(), 3);
    }

    #[test]
    fn review_comments_are_worded_for_the_model_hunk_by_hunk() {
        let comments = [
            HunkComment { hunk: 2, lines: Some(LineSpan { start: 10, end: 14 }), decision: HunkDecision::Rejected, comment: " use a match here ".into() },
            HunkComment { hunk: 1, lines: None, decision: HunkDecision::Accepted, comment: "good, but rename x".into() },
            HunkComment { hunk: 3, lines: None, decision: HunkDecision::Rejected, comment: "  ".into() },
        ];
        let whole = HunkComment { hunk: 0, lines: None, decision: HunkDecision::Rejected, comment: "not now".into() };
        assert!(review_comments_note("a.rs", &[whole]).unwrap().ends_with("\n- the whole edit rejected by the user: not now"));
        expect_test::expect![[r#"
            The user's review comments on this edit to a.rs (act on them now, in this run: redo a rejected hunk the way the comment asks, adjust an accepted one):
            - hunk 2 (lines 10-14) rejected by the user: use a match here
            - hunk 1 accepted by the user, with a comment: good, but rename x"#]]
        .assert_eq(&review_comments_note("a.rs", &comments).unwrap());
        assert_eq!(review_comments_note("a.rs", &comments[2..]), None, "a blank comment says nothing");
        let long = HunkComment { comment: "x".repeat(MAX_COMMENT_CHARS + 10), ..comments[0].clone() };
        assert!(review_comments_note("a.rs", &[long]).unwrap().ends_with("x [...]"));
        let parsed: HunkComment = serde_json::from_str(r#"{"hunk":1,"lines":{"startLine":3,"endLine":3},"decision":"accepted","comment":"ok"}"#).unwrap();
        assert_eq!(parsed.decision, HunkDecision::Accepted);
    }
}
