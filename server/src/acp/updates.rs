//! Run events as ACP `session/update`s: the model's text as
//! `agent_message_chunk`, thinking as `agent_thought_chunk`, each tool call
//! as `tool_call` (its ACP `kind`, title, locations and raw input, the
//! command of a shell call) and its result as `tool_call_update` (status,
//! the output, a `diff` for an edit the client wrote). A thread's saved
//! past (its transcript) maps the same way for `session/load`.
//!
//! Calls are known by their [`ToolKind`] and summary, never by a tool's
//! name or its input fields.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, MessageId, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate, TextContent, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind as AcpKind,
};
use serde_json::Value;

use crate::checkpoint::RunText;
use crate::host::RunEvent;
use crate::tools::todo::{TodoItem, TodoStatus};
use crate::tools::ToolKind;
use crate::workspace::{hunk_labels, replacements, EditStatus};

/// The longest tool output shown in a `tool_call_update`, in characters;
/// the model got the whole (capped) result, the client a readable part.
pub const MAX_SHOWN_OUTPUT_CHARS: usize = 20_000;

/// An edit the client wrote, for the `diff` of its call: the text before
/// and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenDiff {
    pub old_text: String,
    pub new_text: String,
}

/// Most bytes of text the per-hunk diffs of one edit carry together (each
/// holds the whole file twice): past it, the edit is one diff.
const MAX_HUNK_DIFFS_BYTES: usize = 4 * 1024 * 1024;

/// An edit of `path` as ACP diffs, one per hunk of the change (the hunks
/// the editors review: whole lines, or a change within one line), so a
/// client shows each on its own and the user reviews it hunk by hunk. Each
/// diff is the old text and the old text with only that hunk applied, so
/// the client places it at its lines among their context; its
/// `_meta.tandem` numbers it and says what it does (`{"hunk": 1, "hunks":
/// 2, "label": "line 1: \"a\" → \"b\""}`). One diff of the whole change
/// for a new file (`old_text` none), a change of one hunk, or a file too
/// large for the copies.
pub fn edit_diffs(path: &Path, old_text: Option<&str>, new_text: &str) -> Vec<ToolCallContent> {
    let whole = || vec![ToolCallContent::Diff(Diff::new(path, new_text).old_text(old_text.map(str::to_string)))];
    let Some(old) = old_text else { return whole() };
    if old.len().max(new_text.len()).saturating_mul(4) > MAX_HUNK_DIFFS_BYTES {
        return whole();
    }
    let hunks = replacements(old, new_text);
    let copies = hunks.len().saturating_mul(2 * old.len() + new_text.len());
    if hunks.len() < 2 || copies > MAX_HUNK_DIFFS_BYTES {
        return whole();
    }
    let count = hunks.len();
    hunks
        .iter()
        .zip(hunk_labels(old, &hunks))
        .enumerate()
        .map(|(n, (hunk, label))| {
            // The replacements are of `old`'s own ranges, in order.
            let (Some(before), Some(after)) = (old.get(..hunk.range.start), old.get(hunk.range.end..)) else { return whole().remove(0) };
            let one = format!("{before}{}{after}", hunk.text);
            let mut meta = serde_json::Map::new();
            meta.insert("tandem".into(), serde_json::json!({"hunk": n + 1, "hunks": count, "label": label}));
            ToolCallContent::Diff(Diff::new(path, one).old_text(old.to_string()).meta(meta))
        })
        .collect()
}

/// The ACP kind of a Tandem call.
pub fn acp_kind(kind: &ToolKind) -> AcpKind {
    match kind {
        ToolKind::Read { .. } => AcpKind::Read,
        ToolKind::Edit { .. } => AcpKind::Edit,
        ToolKind::Execute { .. } => AcpKind::Execute,
        ToolKind::Fetch { .. } => AcpKind::Fetch,
        ToolKind::Other => AcpKind::Other,
    }
}

/// The files a call touches, for the client to follow along.
pub fn locations(kind: &ToolKind) -> Vec<ToolCallLocation> {
    match kind {
        ToolKind::Read { paths } => paths.iter().map(ToolCallLocation::new).collect(),
        ToolKind::Edit { path } => vec![ToolCallLocation::new(path)],
        _ => Vec::new(),
    }
}

pub fn text_block(text: impl Into<String>) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

fn text_content(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(text_block(text))
}

/// A call's title: the tool and what it works on ("run_shell cargo test").
pub fn title(name: &str, summary: &str) -> String {
    if summary.is_empty() {
        name.to_string()
    } else {
        format!("{name} {summary}")
    }
}

/// Cut `text` to [`MAX_SHOWN_OUTPUT_CHARS`], saying how much was left out.
pub fn shown_output(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_OUTPUT_CHARS) {
        Some((end, _)) => format!("{}\n[... {} more characters]", &text[..end], text[end..].chars().count()),
        None => text.to_string(),
    }
}

/// The `tool_call` that announces a call.
pub fn tool_call(id: &str, name: &str, input: &Value, kind: &ToolKind, summary: &str) -> ToolCall {
    let mut call = ToolCall::new(id.to_string(), title(name, summary))
        .kind(acp_kind(kind))
        .status(ToolCallStatus::InProgress)
        .locations(locations(kind))
        .raw_input(input.clone());
    if let ToolKind::Execute { command } = kind {
        call = call.content(vec![text_content(format!("```sh\n{command}\n```"))]);
    }
    call
}

/// The todo list as an ACP `plan`: the whole list each time (the client
/// replaces its plan with each update, as `todo_write` replaces the list).
/// Tandem's items have no priority; each is `medium`.
pub fn plan(todos: &[TodoItem]) -> SessionUpdate {
    let entries = todos
        .iter()
        .map(|todo| {
            let status = match todo.status {
                TodoStatus::Pending => PlanEntryStatus::Pending,
                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                TodoStatus::Completed => PlanEntryStatus::Completed,
            };
            PlanEntry::new(todo.content.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

/// The `tool_call_update` that closes a call: its status and output, or
/// the diff of the edit the client wrote.
/// `changed`: the files a shell command wrote, created or deleted, given
/// to the client as the call's locations.
pub fn tool_result(id: &str, is_error: bool, content: &str, diff: Option<(PathBuf, WrittenDiff)>, changed: Vec<PathBuf>) -> ToolCallUpdate {
    tool_result_of_edit(id, is_error, content, diff, changed, None)
}

/// [`tool_result`] of an edit call, with what became of the edit: ACP's
/// statuses are only `completed` and `failed`, so the edit's own status
/// (docs/protocol.md: applied, rejected, superseded, unknown, …) is in the
/// update's `_meta` as `{"tandem": {"editStatus": …}}` and, when the edit
/// did not land, in the title the client shows ("edit_file a.txt
/// (declined)").
pub fn tool_result_of_edit(
    id: &str,
    is_error: bool,
    content: &str,
    diff: Option<(PathBuf, WrittenDiff)>,
    changed: Vec<PathBuf>,
    edit: Option<(EditStatus, &str)>,
) -> ToolCallUpdate {
    let status = match edit {
        Some((edit, _)) if !edit.landed() => ToolCallStatus::Failed,
        _ if is_error => ToolCallStatus::Failed,
        _ => ToolCallStatus::Completed,
    };
    let mut shown = Vec::new();
    if let Some((path, diff)) = diff.filter(|_| !is_error) {
        shown.extend(edit_diffs(&path, Some(&diff.old_text), &diff.new_text));
    }
    shown.push(text_content(shown_output(content)));
    let mut fields = ToolCallUpdateFields::new().status(status).content(shown).raw_output(Value::String(content.to_string()));
    if !changed.is_empty() {
        fields = fields.locations(changed.into_iter().map(ToolCallLocation::new).collect::<Vec<_>>());
    }
    if let Some((edit, title)) = edit.filter(|(edit, _)| !edit.landed()) {
        fields = fields.title(format!("{title} ({})", edit.words()));
    }
    let mut update = ToolCallUpdate::new(id.to_string(), fields);
    if let Some((edit, _)) = edit {
        let mut meta = serde_json::Map::new();
        meta.insert("tandem".into(), serde_json::json!({"editStatus": edit.as_str()}));
        update.meta = Some(meta);
    }
    update
}

/// A `task_output` result as the client shows it: its first line (the
/// task, its state, the bytes read), then what the task printed as a
/// terminal shows it, in a fenced block long enough for any backticks in it.
fn task_output_shown(content: &str) -> String {
    let Some((head, output)) = content.split_once(":\n") else { return content.to_string() };
    let mut fence = "```".to_string();
    while output.contains(&fence) {
        fence.push('`');
    }
    format!("{head}:\n{fence}text\n{}\n{fence}", output.trim_end_matches('\n'))
}

/// Turns one run's events into session updates, remembering which calls
/// are edits (for their diff).
#[derive(Default)]
pub struct UpdateMapper {
    /// The edit calls in flight: their file and title.
    edits: HashMap<String, (PathBuf, String)>,
    /// The shell calls in flight (their updates name what they changed).
    commands: std::collections::HashSet<String>,
    /// The `task_output` calls in flight: their result shows the task's
    /// output as a terminal's, in a code block.
    task_reads: std::collections::HashSet<String>,
    /// The message the text (or thinking: true) chunks go to now, by its
    /// id (ACP's `messageId`): a call or another kind of chunk between
    /// two chunks starts a new message.
    message: Option<(bool, String)>,
}

impl UpdateMapper {
    /// The updates for `event`; `take_edit` hands over the diff of an edit
    /// the client wrote to this path, if any, and what became of the
    /// latest edit of it (`None`: nothing reached the client). The files a
    /// shell command changed are its result's `effects`.
    pub fn map(
        &mut self,
        event: &RunEvent,
        mut take_edit: impl FnMut(&std::path::Path) -> (Option<WrittenDiff>, Option<EditStatus>),
    ) -> Vec<SessionUpdate> {
        // A sub-agent's calls are shown like the parent's (their ids are
        // unique); its text is the parent call's business, not the chat's.
        let (event, parents) = event.unnest();
        let chunk = matches!(event, RunEvent::Text { .. } | RunEvent::Thinking { .. } | RunEvent::Compact { .. } | RunEvent::Hook { .. }) && parents.is_empty();
        if !chunk && !matches!(event, RunEvent::Todo { .. }) {
            self.message = None;
        }
        match event {
            RunEvent::Text { text } if parents.is_empty() && !text.is_empty() => {
                vec![SessionUpdate::AgentMessageChunk(self.chunk(false, text.clone()))]
            }
            RunEvent::Thinking { text } if parents.is_empty() => {
                vec![SessionUpdate::AgentThoughtChunk(self.chunk(true, text.clone()))]
            }
            RunEvent::ToolCall { id, name, input, kind, summary } => {
                if let ToolKind::Edit { path } = kind {
                    self.edits.insert(id.clone(), (path.clone(), title(name, summary)));
                }
                if let ToolKind::Execute { .. } = kind {
                    self.commands.insert(id.clone());
                }
                if name == "task_output" {
                    self.task_reads.insert(id.clone());
                }
                vec![SessionUpdate::ToolCall(tool_call(id, name, input, kind, summary))]
            }
            RunEvent::ToolResult { id, is_error, content, effects, .. } => {
                let changed: Vec<PathBuf> =
                    if self.commands.remove(id) { effects.iter().filter(|e| e.by_command.is_some()).map(|e| e.path.clone()).collect() } else { Vec::new() };
                if self.task_reads.remove(id) && !*is_error {
                    return vec![SessionUpdate::ToolCallUpdate(tool_result(id, false, &task_output_shown(content), None, changed))];
                }
                let Some((path, title)) = self.edits.remove(id) else {
                    return vec![SessionUpdate::ToolCallUpdate(tool_result(id, *is_error, content, None, changed))];
                };
                let (diff, status) = take_edit(&path);
                // An edit that reached no client sink: written on disk by
                // the workspace, or refused before it was tried.
                let status = status.or(match (*is_error, diff.is_some()) {
                    (false, true) => Some(EditStatus::Applied),
                    (false, false) => Some(EditStatus::Written),
                    (true, _) => None,
                });
                let diff = diff.map(|diff| (path, diff));
                vec![SessionUpdate::ToolCallUpdate(tool_result_of_edit(id, *is_error, content, diff, changed, status.map(|s| (s, title.as_str()))))]
            }
            RunEvent::Compact { before_tokens, after_tokens, .. } if parents.is_empty() => {
                let note = format!("(The conversation was compacted: about {before_tokens} tokens became {after_tokens}.)");
                vec![SessionUpdate::AgentThoughtChunk(self.chunk(true, note))]
            }
            // A sub-agent's list is its own business, not the session's plan.
            RunEvent::Todo { todos } if parents.is_empty() => vec![plan(todos)],
            // A review's finding, as a message the user reads beside the
            // `report_finding` call that made it.
            RunEvent::Finding { finding } => {
                let lines = if finding.start_line == finding.end_line { finding.start_line.to_string() } else { format!("{}-{}", finding.start_line, finding.end_line) };
                let mut text = format!("\n**Finding {}** ({}, {}) `{}:{lines}`: {}\n{}\n", finding.id, finding.severity.as_str(), finding.kind, finding.file_path, finding.title, finding.body);
                if let Some(suggestion) = &finding.suggestion {
                    text.push_str(&format!("Suggested replacement:\n```\n{suggestion}\n```\n"));
                }
                vec![SessionUpdate::AgentMessageChunk(self.chunk(false, text))]
            }
            RunEvent::Hook { name, message } if parents.is_empty() => {
                vec![SessionUpdate::AgentMessageChunk(self.chunk(false, format!("\n[{name} hook] {message}\n")))]
            }
            // What the sandbox refused (a host its network lists refused, the
            // run's notice that it runs without one), where the user reads:
            // a sub-agent's too, since the user answers for its hosts.
            RunEvent::Sandbox { message } => {
                self.message = None;
                vec![SessionUpdate::AgentMessageChunk(self.chunk(false, format!("\n[sandbox] {message}\n")))]
            }
            _ => Vec::new(),
        }
    }

    /// A chunk of the current message of its kind, or of a new one.
    fn chunk(&mut self, thought: bool, text: String) -> ContentChunk {
        let id = match &self.message {
            Some((kind, id)) if *kind == thought => id.clone(),
            _ => {
                let id = format!("msg-{}", fresh_id());
                self.message = Some((thought, id.clone()));
                id
            }
        };
        ContentChunk::new(text_block(text)).message_id(MessageId::new(id))
    }
}

/// A fresh id, unique across sessions and processes: the time and 64
/// random bits.
fn fresh_id() -> String {
    format!("{:x}-{:016x}", chrono::Utc::now().timestamp_millis(), rand::random::<u64>())
}

/// A saved thread's past (its transcript events, docs/protocol.md, marked
/// with what became of each run's checkpoint and each call's kind) as the
/// updates `session/load` replays: the user's prompts, the answers, the
/// thinking, each call and its result. An edit call's result says what
/// became of the edit, as the live one did, and the last call that edited
/// a file in a run carries the run's change to it as diffs (`run_texts`:
/// the files a run's checkpoint changed, as text). A run undone since (by
/// any front end or process) shows each of its edits undone: the title
/// says so, a line of the content says how to put it back, and `_meta`
/// holds `{"tandem": {"editStatus": …, "undone": true}}`.
pub fn replay(events: &[Value], run_texts: impl Fn(&str) -> Vec<RunText>) -> Vec<SessionUpdate> {
    let runs = past_runs(events, &run_texts);
    let mut updates = Vec::new();
    let mut run = 0;
    // The edit calls seen: their file and title.
    let mut edits: HashMap<&str, (PathBuf, String)> = HashMap::new();
    for event in events {
        let text = || event.get("text").and_then(Value::as_str).unwrap_or_default().to_string();
        let id = event.get("id").and_then(Value::as_str).unwrap_or_default();
        match event.get("type").and_then(Value::as_str) {
            Some("prompt") => {
                run += 1;
                updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(text_block(text()))));
            }
            Some("text") => updates.push(SessionUpdate::AgentMessageChunk(ContentChunk::new(text_block(text())))),
            Some("thinking") => updates.push(SessionUpdate::AgentThoughtChunk(ContentChunk::new(text_block(text())))),
            Some("tool_call") => {
                let name = event.get("name").and_then(Value::as_str).unwrap_or_default();
                let input = event.get("input").cloned().unwrap_or(Value::Null);
                // The kind the server worked out again from the kept input;
                // none when the tool is gone or the input was cut short.
                edits.remove(id);
                let call = match past_kind(event) {
                    Some(kind) => {
                        let summary = event.get("summary").and_then(Value::as_str).unwrap_or_default();
                        if let ToolKind::Edit { path } = &kind {
                            edits.insert(id, (path.clone(), title(name, summary)));
                        }
                        tool_call(id, name, &input, &kind, summary)
                    }
                    None => ToolCall::new(id.to_string(), name.to_string()).status(ToolCallStatus::InProgress).raw_input(input),
                };
                updates.push(SessionUpdate::ToolCall(call));
            }
            Some("tool_result") => {
                let is_error = event.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                let content = event.get("content").and_then(Value::as_str).unwrap_or_default();
                let Some((path, title)) = edits.remove(id) else {
                    updates.push(SessionUpdate::ToolCallUpdate(tool_result(id, is_error, content, None, Vec::new())));
                    continue;
                };
                let past = runs.get(&run);
                // What became of the edit, as its live result said (kept
                // by an editor's run), else as the call's result says.
                let status = event.get("edit").and_then(|e| serde_json::from_value::<EditStatus>(e["status"].clone()).ok());
                let status = status.or((!is_error).then_some(EditStatus::Applied));
                let diff = past.and_then(|p| p.diffs.get(id)).map(|(before, after)| (path.clone(), WrittenDiff { old_text: before.clone(), new_text: after.clone() }));
                let mut update = tool_result_of_edit(id, is_error, content, diff, Vec::new(), status.map(|s| (s, title.as_str())));
                if past.is_some_and(|p| p.undone) && status.is_some_and(EditStatus::landed) {
                    mark_undone(&mut update, &title);
                }
                updates.push(SessionUpdate::ToolCallUpdate(update));
            }
            Some("todo") => {
                // A list the thread saved in a newer shape than this build reads is left out.
                if let Ok(todos) = serde_json::from_value::<Vec<TodoItem>>(event.get("todos").cloned().unwrap_or(Value::Null)) {
                    updates.push(plan(&todos));
                }
            }
            _ => {}
        }
    }
    updates
}

/// What a past run's edits are shown with: whether it is undone now, and
/// the diff (before, after) each of its edit calls carries.
#[derive(Default)]
struct PastRun {
    undone: bool,
    diffs: HashMap<String, (String, String)>,
}

/// Each run of `events` (numbered from 1, as its `prompt` comes) that
/// left a checkpoint: whether it is undone, and the run's change to each
/// file it edited, given to the last call that edited the file without
/// an error. A file a run created or deleted is shown from or to nothing.
fn past_runs(events: &[Value], run_texts: &impl Fn(&str) -> Vec<RunText>) -> HashMap<usize, PastRun> {
    let mut runs: HashMap<usize, PastRun> = HashMap::new();
    // Per run: the call that last edited each file, and the checkpoint.
    let mut last_edits: HashMap<usize, HashMap<PathBuf, String>> = HashMap::new();
    let mut calls: HashMap<&str, PathBuf> = HashMap::new();
    let mut checkpoints: Vec<(usize, String)> = Vec::new();
    let mut run = 0;
    for event in events {
        let id = event.get("id").and_then(Value::as_str).unwrap_or_default();
        match event.get("type").and_then(Value::as_str) {
            Some("prompt") => run += 1,
            Some("tool_call") => match past_kind(event) {
                Some(ToolKind::Edit { path }) => {
                    calls.insert(id, path);
                }
                // An id used again (a scripted model's) is this call's now.
                _ => {
                    calls.remove(id);
                }
            },
            Some("tool_result") => {
                let failed = event.get("is_error").and_then(Value::as_bool) == Some(true);
                if let Some(path) = calls.remove(id).filter(|_| !failed) {
                    last_edits.entry(run).or_default().insert(path, id.to_string());
                }
            }
            Some("edits") => {
                if event.get("undone").and_then(Value::as_bool) == Some(true) {
                    runs.entry(run).or_default().undone = true;
                }
                if let Some(checkpoint) = event.get("checkpoint").and_then(Value::as_str) {
                    checkpoints.push((run, checkpoint.to_string()));
                }
            }
            _ => {}
        }
    }
    for (run, checkpoint) in checkpoints {
        let Some(last) = last_edits.get(&run) else { continue };
        for file in run_texts(&checkpoint) {
            if let Some(id) = last.get(&file.path) {
                let shown = (file.before.unwrap_or_default(), file.after.unwrap_or_default());
                runs.entry(run).or_default().diffs.insert(id.clone(), shown);
            }
        }
    }
    runs
}

/// A past call's kind, as the transcript gives it (none: not worked out again).
fn past_kind(event: &Value) -> Option<ToolKind> {
    event.get("kind").and_then(|kind| serde_json::from_value(kind.clone()).ok())
}

/// An edit's result shown undone: its run was undone since.
fn mark_undone(update: &mut ToolCallUpdate, title: &str) {
    update.fields.title = Some(format!("{title} (undone since)"));
    let note = text_content("↶ Undone since (by `tandem undo` or an editor's undo): this change is no longer in the file; `tandem redo` puts it back.");
    update.fields.content.get_or_insert_with(Vec::new).push(note);
    let meta = update.meta.get_or_insert_with(serde_json::Map::new);
    if let Some(tandem) = meta.get_mut("tandem").and_then(Value::as_object_mut) {
        tandem.insert("undone".into(), Value::Bool(true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The updates as JSON lines, each message id as `m1`, `m2`, … in the
    /// order they first appear (they are random).
    fn wire(updates: &[SessionUpdate]) -> String {
        const KEY: &str = "\"messageId\":\"";
        let mut ids: Vec<String> = Vec::new();
        let mut lines = Vec::new();
        for update in updates {
            let mut line = serde_json::to_string(update).unwrap();
            if let Some(at) = line.find(KEY) {
                let from = at + KEY.len();
                let to = from + line[from..].find('"').unwrap();
                let id = line[from..to].to_string();
                assert!(id.starts_with("msg-"), "{id}");
                let n = ids.iter().position(|seen| *seen == id).unwrap_or_else(|| {
                    ids.push(id);
                    ids.len() - 1
                });
                line.replace_range(from..to, &format!("m{}", n + 1));
            }
            lines.push(line);
        }
        lines.join("\n")
    }

    /// Chunks of one message share its id; a call, or a chunk of the other
    /// kind, in between starts a new message.
    #[test]
    fn a_messages_chunks_share_its_id() {
        let mut mapper = UpdateMapper::default();
        let text = |t: &str| RunEvent::Text { text: t.into() };
        let call = RunEvent::ToolCall { id: "t1".into(), name: "read_file".into(), input: json!({}), kind: ToolKind::Other, summary: String::new() };
        let events = [text("a"), text("b"), RunEvent::Thinking { text: "hm".into() }, text("c"), call, text("d"), text("e")];
        let mut updates = Vec::new();
        for event in &events {
            updates.extend(mapper.map(event, |_| (None, None)));
        }
        let ids: Vec<String> = wire(&updates)
            .lines()
            .filter_map(|l| l.split("\"messageId\":\"").nth(1).map(|rest| rest.trim_end_matches("\"}").to_string()))
            .collect();
        assert_eq!(ids, ["m1", "m1", "m2", "m3", "m4", "m4"]);
    }

    /// Issue 53: an edit of two distant lines is two diffs, each the file
    /// with only its hunk, numbered and labelled, so a client reviews them
    /// one by one; one hunk, a new file or a file too large is one diff.
    #[test]
    fn an_edit_is_one_diff_per_hunk() {
        let old = "def greet(name):\n    return name\n\n\nprint(greet('ann'))\n";
        let new = old.replace("greet", "welcome");
        let diffs: Vec<String> = edit_diffs(Path::new("/w/app.py"), Some(old), &new).iter().map(|d| serde_json::to_string(d).unwrap()).collect();
        expect_test::expect![[r#"
            {"type":"diff","path":"/w/app.py","oldText":"def greet(name):\n    return name\n\n\nprint(greet('ann'))\n","newText":"def welcome(name):\n    return name\n\n\nprint(greet('ann'))\n","_meta":{"tandem":{"hunk":1,"hunks":2,"label":"line 1: \"def greet(name):\" → \"def welcome(name):\""}}}
            {"type":"diff","path":"/w/app.py","oldText":"def greet(name):\n    return name\n\n\nprint(greet('ann'))\n","newText":"def greet(name):\n    return name\n\n\nprint(welcome('ann'))\n","_meta":{"tandem":{"hunk":2,"hunks":2,"label":"line 5: \"print(greet('ann'))\" → \"print(welcome('ann'))\""}}}"#]]
        .assert_eq(&diffs.join("\n"));
        let one = |old: Option<&str>, new: &str| edit_diffs(Path::new("/w/a"), old, new);
        assert_eq!(one(Some("a\nb\n"), "a\nB\n"), vec![ToolCallContent::Diff(Diff::new("/w/a", "a\nB\n").old_text("a\nb\n".to_string()))]);
        assert_eq!(one(None, "new\n"), vec![ToolCallContent::Diff(Diff::new("/w/a", "new\n"))]);
        let big = "x\n".repeat(MAX_HUNK_DIFFS_BYTES / 4);
        let changed = format!("y{}y", &big[1..big.len() - 1]);
        assert_eq!(one(Some(&big), &changed).len(), 1, "a large file's hunks are one diff");
    }

    #[test]
    fn a_run_maps_to_chunks_calls_and_a_diff() {
        let mut mapper = UpdateMapper::default();
        let events = [
            RunEvent::Text { text: "Reading.".into() },
            RunEvent::Thinking { text: "hmm".into() },
            RunEvent::ToolCall {
                id: "toolu_1".into(),
                name: "edit_file".into(),
                input: json!({"file_path": "notes.txt"}),
                kind: ToolKind::Edit { path: "/w/notes.txt".into() },
                summary: "notes.txt".into(),
            },
            RunEvent::ToolResult { id: "toolu_1".into(), is_error: false, content: "Successfully edited notes.txt".into(), effects: Vec::new(), edit: None },
            RunEvent::ToolCall {
                id: "toolu_2".into(),
                name: "run_shell".into(),
                input: json!({"command": "ls"}),
                kind: ToolKind::Execute { command: "ls".into() },
                summary: "ls".into(),
            },
            RunEvent::ToolResult {
                id: "toolu_2".into(),
                is_error: true,
                content: "Command failed (exit code 2)".into(),
                effects: vec![crate::protocol::FileEffect { by_command: Some("ls".into()), ..crate::protocol::FileEffect::new("/w/out.txt".into(), EditStatus::Written) }],
                edit: None,
            },
            RunEvent::ToolCall {
                id: "toolu_4".into(),
                name: "edit_file".into(),
                input: json!({"file_path": "b.txt"}),
                kind: ToolKind::Edit { path: "/w/b.txt".into() },
                summary: "b.txt".into(),
            },
            RunEvent::ToolResult { id: "toolu_4".into(), is_error: true, content: "Error: the user rejected the edit".into(), effects: Vec::new(), edit: None },
            RunEvent::Nested { parent: "toolu_3".into(), event: Box::new(RunEvent::Text { text: "inner".into() }) },
            RunEvent::Todo {
                todos: vec![
                    TodoItem { id: "1".into(), content: "Read notes.txt".into(), status: TodoStatus::Completed },
                    TodoItem { id: "2".into(), content: "Run ls".into(), status: TodoStatus::InProgress },
                    TodoItem { id: "3".into(), content: "Report".into(), status: TodoStatus::Pending },
                ],
            },
        ];
        let mut updates = Vec::new();
        for event in &events {
            updates.extend(mapper.map(
                event,
                |path| match path.to_str() {
                    Some("/w/notes.txt") => (Some(WrittenDiff { old_text: "a\n".into(), new_text: "b\n".into() }), Some(EditStatus::Applied)),
                    _ => (None, Some(EditStatus::Rejected)),
                },
            ));
        }
        expect_test::expect![[r#"
            {"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Reading."},"messageId":"m1"}
            {"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"},"messageId":"m2"}
            {"sessionUpdate":"tool_call","toolCallId":"toolu_1","title":"edit_file notes.txt","kind":"edit","status":"in_progress","locations":[{"path":"/w/notes.txt"}],"rawInput":{"file_path":"notes.txt"}}
            {"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"completed","content":[{"type":"diff","path":"/w/notes.txt","oldText":"a\n","newText":"b\n"},{"type":"content","content":{"type":"text","text":"Successfully edited notes.txt"}}],"rawOutput":"Successfully edited notes.txt","_meta":{"tandem":{"editStatus":"applied"}}}
            {"sessionUpdate":"tool_call","toolCallId":"toolu_2","title":"run_shell ls","kind":"execute","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"```sh\nls\n```"}}],"rawInput":{"command":"ls"}}
            {"sessionUpdate":"tool_call_update","toolCallId":"toolu_2","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Command failed (exit code 2)"}}],"locations":[{"path":"/w/out.txt"}],"rawOutput":"Command failed (exit code 2)"}
            {"sessionUpdate":"tool_call","toolCallId":"toolu_4","title":"edit_file b.txt","kind":"edit","status":"in_progress","locations":[{"path":"/w/b.txt"}],"rawInput":{"file_path":"b.txt"}}
            {"sessionUpdate":"tool_call_update","toolCallId":"toolu_4","status":"failed","title":"edit_file b.txt (declined)","content":[{"type":"content","content":{"type":"text","text":"Error: the user rejected the edit"}}],"rawOutput":"Error: the user rejected the edit","_meta":{"tandem":{"editStatus":"rejected"}}}
            {"sessionUpdate":"plan","entries":[{"content":"Read notes.txt","priority":"medium","status":"completed"},{"content":"Run ls","priority":"medium","status":"in_progress"},{"content":"Report","priority":"medium","status":"pending"}]}"#]]
        .assert_eq(&wire(&updates));
    }

    #[test]
    fn a_tasks_output_is_shown_as_a_terminals() {
        let mut mapper = UpdateMapper::default();
        let call = RunEvent::ToolCall { id: "t1".into(), name: "task_output".into(), input: json!({"task_id": "1"}), kind: ToolKind::Other, summary: "1".into() };
        let content = "task 1 (`npm run dev`): running, 2 processes; 40 bytes of output in all; bytes 0..40 since your last read:\nready on :3000\n```x```\n";
        let result = RunEvent::ToolResult { id: "t1".into(), is_error: false, content: content.into(), effects: Vec::new(), edit: None };
        let mut updates = mapper.map(&call, |_| (None, None));
        updates.extend(mapper.map(&result, |_| (None, None)));
        let shown = serde_json::to_value(&updates[1]).unwrap()["content"][0]["content"]["text"].as_str().unwrap().to_string();
        assert_eq!(shown, "task 1 (`npm run dev`): running, 2 processes; 40 bytes of output in all; bytes 0..40 since your last read:\n````text\nready on :3000\n```x```\n````");
        // Nothing new: no block.
        let quiet = "task 1 (`npm run dev`): running, 2 processes; 40 bytes of output in all; nothing new since your last read.";
        assert_eq!(task_output_shown(quiet), quiet);
    }

    #[test]
    fn a_transcript_replays_prompts_answers_and_calls() {
        let events = [
            json!({"type": "prompt", "text": "fix it"}),
            json!({"type": "text", "text": "Done."}),
            json!({"type": "tool_call", "id": "toolu_1", "name": "read_file", "input": {"file_path": "a"}}),
            json!({"type": "tool_result", "id": "toolu_1", "is_error": false, "content": "1 | a"}),
            json!({"type": "todo", "todos": [{"id": "1", "content": "Read a", "status": "completed"}]}),
            json!({"type": "end", "status": "completed"}),
        ];
        expect_test::expect![[r#"
            {"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"fix it"}}
            {"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done."}}
            {"sessionUpdate":"tool_call","toolCallId":"toolu_1","title":"read_file","status":"in_progress","rawInput":{"file_path":"a"}}
            {"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"1 | a"}}],"rawOutput":"1 | a"}
            {"sessionUpdate":"plan","entries":[{"content":"Read a","priority":"medium","status":"completed"}]}"#]]
        .assert_eq(&wire(&replay(&events, |_| Vec::new())));
    }

    /// Issue 53: a replayed edit has its kind and file, its status, and the
    /// run's change to the file as its diff (on the run's last call that
    /// edited it without failing); a run undone since says so on each
    /// edit that landed; a failed edit and a call reusing an id get no diff.
    #[test]
    fn a_replayed_edit_has_its_diff_and_an_undone_run_says_so() {
        let edit = |id: &str| json!({"type": "tool_call", "id": id, "name": "edit_file", "input": {}, "kind": {"type": "edit", "path": "/w/a.txt"}, "summary": "a.txt"});
        let result = |id: &str, is_error: bool| json!({"type": "tool_result", "id": id, "is_error": is_error, "content": if is_error { "Error: no match" } else { "Successfully edited a.txt" }});
        let events = [
            json!({"type": "prompt", "text": "first"}),
            edit("e1"),
            result("e1", false),
            edit("e2"),
            result("e2", true),
            json!({"type": "end", "status": "completed"}),
            json!({"type": "edits", "edits": [], "checkpoint": "c1", "undone": true}),
            json!({"type": "prompt", "text": "second"}),
            json!({"type": "tool_call", "id": "e2", "name": "read_file", "input": {}}),
            json!({"type": "tool_result", "id": "e2", "is_error": false, "content": "1 | a"}),
            json!({"type": "end", "status": "completed"}),
            json!({"type": "edits", "edits": [], "checkpoint": "c2", "undone": false}),
        ];
        let texts = |id: &str| match id {
            "c1" | "c2" => vec![RunText { path: "/w/a.txt".into(), before: Some("a\n".into()), after: Some("A\n".into()) }],
            _ => Vec::new(),
        };
        let updates: Vec<Value> = replay(&events, texts).iter().map(|u| serde_json::to_value(u).unwrap()).collect();
        let results: Vec<&Value> = updates.iter().filter(|u| u["sessionUpdate"] == "tool_call_update").collect();
        assert_eq!(results.len(), 3, "{updates:#?}");
        let (landed, failed, read) = (results[0], results[1], results[2]);
        assert_eq!(updates[1]["kind"], "edit");
        assert_eq!(landed["status"], "completed");
        assert_eq!(landed["title"], "edit_file a.txt (undone since)");
        assert_eq!(landed["_meta"]["tandem"], json!({"editStatus": "applied", "undone": true}));
        assert_eq!(landed["content"][0], json!({"type": "diff", "path": "/w/a.txt", "oldText": "a\n", "newText": "A\n"}));
        assert!(landed["content"].as_array().unwrap().iter().any(|c| c["content"]["text"].as_str().is_some_and(|t| t.starts_with("↶ Undone since"))));
        assert_eq!(failed["status"], "failed");
        assert!(failed.get("_meta").is_none() && !failed["content"].as_array().unwrap().iter().any(|c| c["type"] == "diff"), "{failed}");
        assert_eq!(read["content"], json!([{"type": "content", "content": {"type": "text", "text": "1 | a"}}]), "{read}");
    }

    #[test]
    fn long_output_is_cut_and_says_so() {
        let text = "x".repeat(MAX_SHOWN_OUTPUT_CHARS + 5);
        assert!(shown_output(&text).ends_with("[... 5 more characters]"));
    }
}
