//! A thread's past, as run events: what a transcript view shows when it
//! opens a thread it did not watch live (`tandem.transcript`). Rebuilt from
//! the thread's records, so it holds the whole thread, the turns a
//! compaction replaced included.
//!
//! The events are the run events of docs/protocol.md (`text`, `thinking`,
//! `tool_call`, `tool_result`, `compact`, `end`) plus `prompt`, which opens
//! each run with what the user asked, and `edits`, which follows a run's
//! `end` with what became of its edits (an edit's `tool_result` carries its
//! `edit` as the live event did). Sub-agents' own turns are not part of
//! the thread (only their parent call and its result are), and tool calls
//! carry no `kind` or `summary` (the thread keeps only their input: the
//! host works them out again, `Host::describe_past_calls`).

use std::collections::VecDeque;

use serde_json::{json, Value};

use super::history::Record;
use crate::model::{ContentBlock, Message, Role};

/// Events returned at most: the most recent ones.
pub const MAX_EVENTS: usize = 2000;

/// A tool result's or a tool input string's characters kept; the rest is
/// cut (transcript views show the first lines).
pub const MAX_CONTENT_CHARS: usize = 2000;

/// A thread's past events, oldest first, and how many older ones were left
/// out to stay within [`MAX_EVENTS`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    pub events: VecDeque<Value>,
    pub omitted: usize,
}

impl Transcript {
    fn push(&mut self, event: Value) {
        if self.events.len() == MAX_EVENTS {
            self.events.pop_front();
            self.omitted += 1;
        }
        self.events.push_back(event);
    }
}

/// Replay records into events.
pub fn from_records(records: impl IntoIterator<Item = Record>) -> Transcript {
    let mut out = Transcript::default();
    // The user message that follows a `Prompt` record is that prompt with
    // the editor's context: the `prompt` event already stands for it.
    let mut prompt_message_next = false;
    let mut last_text = String::new();
    // The calls of the run so far that have no result yet.
    let mut open_calls: Vec<String> = Vec::new();
    for record in records {
        match record {
            Record::Prompt { text, attachments } => {
                let mut prompt = json!({"type": "prompt", "text": text});
                if !attachments.is_empty() {
                    prompt["attachments"] = json!(attachments);
                }
                out.push(prompt);
                prompt_message_next = true;
            }
            Record::Message { message } => {
                let is_prompt = message.role == Role::User && message.content.iter().all(|b| matches!(b, ContentBlock::Text { .. }));
                if is_prompt && std::mem::take(&mut prompt_message_next) {
                    continue;
                }
                if message.role == Role::Assistant {
                    last_text = message.text();
                }
                for block in &message.content {
                    match block {
                        ContentBlock::ToolUse { id, .. } => open_calls.push(id.clone()),
                        ContentBlock::ToolResult { tool_use_id, .. } => open_calls.retain(|id| id != tool_use_id),
                        _ => {}
                    }
                }
                push_message(&mut out, &message);
            }
            Record::Compact { before_tokens, after_tokens, .. } => {
                out.push(json!({"type": "compact", "before_tokens": before_tokens, "after_tokens": after_tokens}));
            }
            Record::Run { status, text, usage, cost_usd, .. } => {
                // A call the run ended during (cancelled) got no result:
                // shown as one, so that its card is not left running.
                for id in open_calls.drain(..) {
                    out.push(json!({"type": "tool_result", "id": id, "is_error": true, "content": "The run ended before this call finished."}));
                }
                let text = text.unwrap_or_else(|| std::mem::take(&mut last_text));
                let mut end = json!({"type": "end", "status": status.as_str(), "text": text});
                if let Some(usage) = usage {
                    end["usage"] = json!(usage);
                }
                if let Some(cost) = cost_usd {
                    end["cost_usd"] = json!(cost);
                }
                out.push(end);
                last_text.clear();
            }
            Record::Edits { edits, summary, checkpoint } => {
                // Each edit's status on its call's result, as the run's
                // events showed it, and the run's list after its end.
                for edit in &edits {
                    let Some(call) = edit.get("toolCallId").and_then(|c| c.as_str()) else { continue };
                    if let Some(result) = out.events.iter_mut().rev().find(|e| e["type"] == "tool_result" && e["id"] == call) {
                        result["edit"] = edit.clone();
                    }
                }
                let mut event = json!({"type": "edits", "edits": edits});
                if let Some(summary) = summary {
                    event["summary"] = json!(summary);
                }
                if let Some(checkpoint) = checkpoint {
                    event["checkpoint"] = json!(checkpoint);
                }
                out.push(event);
            }
            // The list as it stood then: a transcript view shows it again.
            Record::Todos { todos } => out.push(json!({"type": "todo", "todos": todos})),
            // A review's findings, as the run's `finding` events showed
            // them: a transcript view lists them again.
            Record::Findings { findings, .. } => findings.into_iter().for_each(|finding| out.push(json!({"type": "finding", "finding": finding}))),
            Record::Meta { .. }
            | Record::Tasks { .. }
            | Record::Title { .. }
            | Record::System { .. }
            | Record::Stub { .. }
            | Record::Tools { .. }
            | Record::Grants { .. }
            | Record::Reads { .. }
            | Record::Turn { .. } => {}
        }
    }
    out
}

/// A thread kept in memory only (no session file): its current history.
pub fn from_messages(messages: &[Message]) -> Transcript {
    from_records(messages.iter().cloned().map(|message| Record::Message { message }))
}

fn push_message(out: &mut Transcript, message: &Message) {
    for block in &message.content {
        match block {
            ContentBlock::Text { text } if message.role == Role::User => out.push(json!({"type": "prompt", "text": text})),
            ContentBlock::Text { text } => out.push(json!({"type": "text", "text": text})),
            ContentBlock::Thinking { thinking, .. } => out.push(json!({"type": "thinking", "text": thinking})),
            // The prompt's attachments name its images; a transcript carries no pixels.
            ContentBlock::RedactedThinking { .. } | ContentBlock::Image(_) => {}
            ContentBlock::Reasoning { text, .. } if !text.trim().is_empty() => out.push(json!({"type": "thinking", "text": text})),
            ContentBlock::Reasoning { .. } | ContentBlock::ResponsesItem { .. } => {}
            ContentBlock::ToolUse { id, name, input } => {
                out.push(json!({"type": "tool_call", "id": id, "name": name, "input": cut_strings(input)}))
            }
            ContentBlock::ToolResult { tool_use_id, content, is_error, .. } => out.push(json!({
                "type": "tool_result", "id": tool_use_id, "is_error": is_error, "content": cut(content)
            })),
        }
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_CONTENT_CHARS) {
        Some((end, _)) => format!("{}\n[... cut: the transcript keeps the first {MAX_CONTENT_CHARS} characters ...]", &text[..end]),
        None => text.to_string(),
    }
}

/// A tool input with its long strings cut (a written file's content).
fn cut_strings(input: &Value) -> Value {
    match input {
        Value::String(s) => Value::String(cut(s)),
        Value::Array(items) => Value::Array(items.iter().map(cut_strings).collect()),
        Value::Object(fields) => Value::Object(fields.iter().map(|(k, v)| (k.clone(), cut_strings(v))).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunStatus;

    fn assistant(content: Vec<ContentBlock>) -> Record {
        Record::Message { message: Message { role: Role::Assistant, content } }
    }

    /// A run cancelled while its edit waited in the editor has the call and
    /// no result: the transcript shows a result for it (so a card is not
    /// left "running") carrying what became of the edit.
    #[test]
    fn a_call_the_run_ended_during_gets_a_result_with_its_edit() {
        let edit = json!({"uri": "file:///w/app.py", "status": "not_applied", "ranges": [], "toolCallId": "t2"});
        let records = vec![
            Record::Prompt { text: "rename".into(), attachments: Vec::new() },
            assistant(vec![ContentBlock::ToolUse { id: "t2".into(), name: "edit_file".into(), input: json!({"file_path": "app.py"}) }]),
            Record::Run { status: RunStatus::Cancelled, at_ms: 1, text: Some("The run was cancelled.".into()), usage: None, cost_usd: None },
            Record::Edits { edits: vec![edit.clone()], summary: Some("1 edit: 1 not applied.".into()), checkpoint: None },
        ];
        let events = from_records(records).events;
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["prompt", "tool_call", "tool_result", "end", "edits"]);
        assert_eq!((&events[2]["id"], &events[2]["is_error"], &events[2]["edit"]), (&json!("t2"), &json!(true), &edit));
    }

    #[test]
    fn runs_replay_as_prompt_calls_results_and_end_including_turns_a_compaction_replaced() {
        let records = vec![
            Record::Prompt { text: "read a".into(), attachments: vec!["a.txt".into()] },
            Record::Message { message: Message::user_text("The user is looking at a.txt.\n\nread a") },
            assistant(vec![
                ContentBlock::Text { text: "Reading.".into() },
                ContentBlock::ToolUse { id: "t1".into(), name: "read_file".into(), input: json!({"file_path": "a.txt"}) },
            ]),
            Record::Message {
                message: Message {
                    role: Role::User,
                    content: vec![ContentBlock::ToolResult { tool_use_id: "t1".into(), content: "x".repeat(MAX_CONTENT_CHARS + 5), is_error: false, images: Vec::new() }],
                },
            },
            Record::Stub { tool_use_id: "t1".into(), content: "[cleared]".into() },
            assistant(vec![ContentBlock::Text { text: "It is x.".into() }]),
            Record::Run { status: RunStatus::Completed, at_ms: 1, text: None, usage: Some(crate::model::Usage::new(120, 7)), cost_usd: Some(0.0012) },
            Record::Prompt { text: "go on".into(), attachments: Vec::new() },
            Record::Message { message: Message::user_text("go on") },
            Record::Compact { messages: vec![Message::user_text("SUMMARY")], before_tokens: 900, after_tokens: 100 },
            Record::Run { status: RunStatus::Failed, at_ms: 2, text: Some("the model is overloaded".into()), usage: None, cost_usd: None },
        ];
        let transcript = from_records(records);
        let shown: Vec<String> = transcript
            .events
            .iter()
            .map(|e| {
                let mut e = e.clone();
                if let Some(content) = e.get_mut("content") {
                    *content = json!(content.as_str().unwrap().len());
                }
                e.to_string()
            })
            .collect();
        expect_test::expect![[r#"
            {"type":"prompt","text":"read a","attachments":["a.txt"]}
            {"type":"text","text":"Reading."}
            {"type":"tool_call","id":"t1","name":"read_file","input":{"file_path":"a.txt"}}
            {"type":"tool_result","id":"t1","is_error":false,"content":2062}
            {"type":"text","text":"It is x."}
            {"type":"end","status":"completed","text":"It is x.","usage":{"input_tokens":120,"output_tokens":7},"cost_usd":0.0012}
            {"type":"prompt","text":"go on"}
            {"type":"compact","before_tokens":900,"after_tokens":100}
            {"type":"end","status":"failed","text":"the model is overloaded"}"#]]
        .assert_eq(&shown.join("\n"));
        assert_eq!(transcript.omitted, 0);
    }

    #[test]
    fn a_reviews_findings_are_shown_again_as_finding_events() {
        let finding = crate::protocol::Finding {
            id: "F1".into(),
            file_path: "a.rs".into(),
            start_line: 2,
            end_line: 3,
            severity: crate::protocol::Severity::Warning,
            kind: "bug".into(),
            title: "off by one".into(),
            body: "the loop skips the last item".into(),
            suggestion: None,
            related: Vec::new(),
            lines_text: Some("not saved".into()),
        };
        let transcript = from_records([Record::Findings { findings: vec![finding], lines: Vec::new() }]);
        let shown: Vec<String> = transcript.events.iter().map(|e| e.to_string()).collect();
        expect_test::expect![[r#"{"type":"finding","finding":{"id":"F1","file_path":"a.rs","start_line":2,"end_line":3,"severity":"warning","kind":"bug","title":"off by one","body":"the loop skips the last item"}}"#]]
            .assert_eq(&shown.join("\n"));
    }

    #[test]
    fn only_the_most_recent_events_are_kept() {
        let records = (0..MAX_EVENTS + 3).map(|i| Record::Prompt { text: format!("p{i}"), attachments: Vec::new() });
        let transcript = from_records(records);
        assert_eq!(transcript.events.len(), MAX_EVENTS);
        assert_eq!(transcript.omitted, 3);
        assert_eq!(transcript.events[0]["text"], "p3");
    }
}
