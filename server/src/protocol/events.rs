//! Run events: one stream for the terminal printer, `tandem ask --json` (one
//! object per line) and the editor's `tandem/runEvent`. The JSON shape is a
//! contract (docs/protocol.md, "Run events"): fields may be added, never renamed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::edits::{ChangedFile, FileEffect, RunEdit};
use super::review::Finding;
use super::run::{RunStatus, TaskStatus, TodoItem, ToolKind, Usage};

/// The JSON Schema (`schemars`) is what the editor plugins' shapes are
/// generated from (`tests/integration/protocol.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    /// The run's first event: the model endpoint it talks to, and why that
    /// one (never a key).
    Provider {
        provider: String,
        model: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base_url: Option<String>,
        reason: String,
    },
    /// A piece of the model's answer, as it streams.
    Text { text: String },
    /// The model asked for a tool call. `kind` says what it does (paths,
    /// command, URL) and `summary` sums it up for people: front ends use
    /// these, never the tool's name or input fields.
    ToolCall {
        id: String,
        name: String,
        input: Value,
        #[serde(default)]
        kind: ToolKind,
        #[serde(default)]
        summary: String,
    },
    /// What went back to the model for a call.
    ToolResult {
        id: String,
        is_error: bool,
        content: String,
        /// What the call did to files (an edit tool's change, whatever
        /// became of it; the files a shell command changed), in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        effects: Vec<FileEffect>,
        /// What became of the call's change to a file, as the editor's
        /// front end reports it (`tandem/runEvent`, `tandem.transcript`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edit: Option<RunEdit>,
    },
    /// What a call did to a file changed after its result went out: an
    /// edit whose outcome was `unknown` (the editor said `applied: true`
    /// and its buffer showed nothing in time, or the run stopped waiting)
    /// landed after all. `effect` replaces the call's effect on that file.
    EffectChanged { call_id: String, effect: FileEffect },
    /// The run asks the user something and waits for the answer: a front
    /// end puts the question to the user when it reaches this event, so
    /// the question never overtakes the events before it. Answered by the
    /// front end, not shown as an event (`tandem/runEvent` never carries it).
    Question { id: String, kind: QuestionKind },
    /// After each model turn; `usage` is the run's running total.
    Status { turn: usize, usage: Usage },
    /// A model request failed and is sent again after `delay_ms`: what that
    /// attempt streamed (text, tool calls) is void.
    Retry { attempt: u32, delay_ms: u64, reason: String },
    /// A thinking block (Anthropic extended thinking), complete; front ends
    /// show it collapsed.
    Thinking { text: String },
    /// The history was compacted into a summary: the estimated context
    /// size before and after, in tokens.
    Compact { before_tokens: u64, after_tokens: u64, reason: String },
    /// A `UserPromptSubmit` or `Stop` hook did something the user should
    /// know: blocked the prompt, added context, asked the agent to go on,
    /// or failed. `name` is the hook event's name.
    Hook { name: String, message: String },
    /// The run's shell commands run without a sandbox (switched off in the
    /// settings, or none can start here): the first event of such a run.
    Sandbox { message: String },
    /// The run waits for `what` ("MCP server github") to start before it
    /// goes on: before its first model turn, or in a call that needs it.
    Waiting { what: String },
    /// The model's todo list, whole, each time it changes (`todo_write`).
    Todo { todos: Vec<TodoItem> },
    /// A review's finding, as `report_finding` reported it (a review run
    /// only: `tandem review`, `tandem.review`, ACP's `/review`).
    Finding { finding: Finding },
    /// A background task of the run's thread started (`run_shell` with
    /// `background`): its id and its command.
    TaskStarted { task_id: String, command: String },
    /// A background task of the run's thread ended: by itself (`exited`,
    /// with its exit code, 128 + the signal when one killed it), or
    /// `stopped` (by `task_stop`, the user, or its session's end).
    TaskEnded {
        task_id: String,
        command: String,
        status: TaskStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// Its last lines of output.
        #[serde(default)]
        last_lines: Vec<String>,
    },
    /// The run is over. `usage` is the run's total; `cost_usd` the estimate
    /// from the price table, when the model's prices are known.
    End {
        status: RunStatus,
        text: String,
        #[serde(default)]
        usage: Usage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// The saved thread, to continue it (`tandem ask --resume`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread_id: Option<String>,
        /// The run's id, when its front end named it (an editor's run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_id: Option<String>,
        /// The files the run changed (an edit landed, at least in part, or
        /// a command changed it), as the workspace shows them, sorted.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changed_files: Vec<String>,
        /// What the run's calls did to files, in the order they did it,
        /// each with its call (a sub-agent's calls included), as the
        /// calls' results and the `effect_changed` events left them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        effects: Vec<ChangedFile>,
    },
    /// A sub-agent's event (its text, tool calls and results), nested under
    /// the parent's call `parent`. On the wire it is the inner event with a
    /// `parent` field added: `{"type": "tool_call", …, "parent": "toolu_…"}`.
    /// Not a type of its own in the schema: every event may carry `parent`.
    #[serde(untagged)]
    #[schemars(skip)]
    Nested {
        parent: String,
        #[serde(flatten, serialize_with = "serialize_inner")]
        event: Box<RunEvent>,
    },
}

/// What a [`RunEvent::Question`] asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QuestionKind {
    /// May this call run? `question` is what the user reads (the command,
    /// what made it asked).
    Permission { tool: String, kind: ToolKind, question: String },
    /// Apply this edit of `path`?
    Review { path: std::path::PathBuf },
    /// Is this plan good to carry out (`exit_plan_mode`)?
    Plan,
}

/// The inner event as a JSON value first: serializing it straight into the
/// flattened map would instantiate the serializer for ever deeper nesting.
fn serialize_inner<S: serde::Serializer>(event: &RunEvent, serializer: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(event).map_err(serde::ser::Error::custom)?.serialize(serializer)
}

impl RunEvent {
    /// The event itself and the chain of parent calls above it, outermost first.
    pub fn unnest(&self) -> (&RunEvent, Vec<&str>) {
        let mut parents = Vec::new();
        let mut event = self;
        while let RunEvent::Nested { parent, event: inner } = event {
            parents.push(parent.as_str());
            event = inner;
        }
        (event, parents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_matches_the_contract() {
        let events = [
            RunEvent::Text { text: "hi".into() },
            RunEvent::ToolCall {
                id: "toolu_1".into(),
                name: "edit_file".into(),
                input: serde_json::json!({"a": 1}),
                kind: ToolKind::Edit { path: "/w/a.rs".into() },
                summary: "a.rs".into(),
            },
            RunEvent::ToolResult { id: "toolu_1".into(), is_error: false, content: "ok".into(), effects: Vec::new(), edit: None },
            RunEvent::Status { turn: 2, usage: Usage::new(1234, 56) },
            RunEvent::Status { turn: 3, usage: Usage { cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, ..Usage::new(1234, 56) } },
            RunEvent::Thinking { text: "hmm".into() },
            RunEvent::Compact { before_tokens: 17000, after_tokens: 900, reason: "context 85% full".into() },
            RunEvent::Todo { todos: vec![TodoItem { id: "1".into(), content: "Run the tests".into(), status: super::super::run::TodoStatus::InProgress }] },
            RunEvent::TaskStarted { task_id: "1".into(), command: "npm run dev".into() },
            RunEvent::TaskEnded { task_id: "1".into(), command: "npm run dev".into(), status: TaskStatus::Exited, exit_code: Some(1), last_lines: vec!["Error: port 3000 in use".into()] },
            RunEvent::End { status: RunStatus::TurnLimit, text: "done".into(), usage: Usage::new(1234, 56), cost_usd: Some(0.0045), thread_id: Some("20261130-120000-abcdef".into()), run_id: None, changed_files: Vec::new(), effects: Vec::new() },
            RunEvent::Question { id: "q1".into(), kind: QuestionKind::Review { path: "/w/a.rs".into() } },
            RunEvent::EffectChanged { call_id: "toolu_1".into(), effect: FileEffect { ranges: vec![super::super::edits::LineSpan { start: 2, end: 2 }], ..FileEffect::new("/w/a.rs".into(), super::super::edits::EditStatus::Applied) } },
            RunEvent::End {
                status: RunStatus::Completed,
                text: "done".into(),
                usage: Usage::new(1, 2),
                cost_usd: None,
                thread_id: None,
                run_id: Some("run-1".into()),
                changed_files: vec!["a.rs".into()],
                effects: vec![ChangedFile { call_id: "toolu_1".into(), effect: FileEffect::new("/w/a.rs".into(), super::super::edits::EditStatus::Rejected) }],
            },
            RunEvent::Nested {
                parent: "toolu_1".into(),
                event: Box::new(RunEvent::ToolResult { id: "toolu_2".into(), is_error: false, content: "ok".into(), effects: Vec::new(), edit: None }),
            },
        ];
        let lines: Vec<String> = events.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
        expect_test::expect![[r#"
            {"type":"text","text":"hi"}
            {"type":"tool_call","id":"toolu_1","name":"edit_file","input":{"a":1},"kind":{"type":"edit","path":"/w/a.rs"},"summary":"a.rs"}
            {"type":"tool_result","id":"toolu_1","is_error":false,"content":"ok"}
            {"type":"status","turn":2,"usage":{"input_tokens":1234,"output_tokens":56}}
            {"type":"status","turn":3,"usage":{"input_tokens":1234,"output_tokens":56,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200}}
            {"type":"thinking","text":"hmm"}
            {"type":"compact","before_tokens":17000,"after_tokens":900,"reason":"context 85% full"}
            {"type":"todo","todos":[{"id":"1","content":"Run the tests","status":"in_progress"}]}
            {"type":"task_started","task_id":"1","command":"npm run dev"}
            {"type":"task_ended","task_id":"1","command":"npm run dev","status":"exited","exit_code":1,"last_lines":["Error: port 3000 in use"]}
            {"type":"end","status":"turn_limit","text":"done","usage":{"input_tokens":1234,"output_tokens":56},"cost_usd":0.0045,"thread_id":"20261130-120000-abcdef"}
            {"type":"question","id":"q1","kind":{"type":"review","path":"/w/a.rs"}}
            {"type":"effect_changed","call_id":"toolu_1","effect":{"path":"/w/a.rs","status":"applied","ranges":[{"startLine":2,"endLine":2}]}}
            {"type":"end","status":"completed","text":"done","usage":{"input_tokens":1,"output_tokens":2},"run_id":"run-1","changed_files":["a.rs"],"effects":[{"call_id":"toolu_1","path":"/w/a.rs","status":"rejected"}]}
            {"parent":"toolu_1","type":"tool_result","id":"toolu_2","is_error":false,"content":"ok"}"#]]
        .assert_eq(&lines.join("\n"));
    }
}
