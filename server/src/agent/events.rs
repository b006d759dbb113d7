//! Run events: one stream for the terminal printer, `tandem ask --json` (one
//! object per line) and the editor's `tandem/runEvent`. The JSON shape is a
//! contract (docs/protocol.md, "Run events"): fields may be added, never renamed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Completed,
    Cancelled,
    Failed,
    TurnLimit,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Failed => "failed",
            RunStatus::TurnLimit => "turn_limit",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    /// A piece of the model's answer, as it streams.
    Text { text: String },
    /// The model asked for a tool call.
    ToolCall { id: String, name: String, input: Value },
    /// What went back to the model for a call.
    ToolResult { id: String, is_error: bool, content: String },
    /// After each model turn; `usage` is the run's running total.
    Status { turn: usize, usage: Usage },
    /// A model request failed and is sent again after `delay_ms`: what that
    /// attempt streamed (text, tool calls) is void.
    Retry { attempt: u32, delay_ms: u64, reason: String },
    /// The run is over.
    End { status: RunStatus, text: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_matches_the_contract() {
        let events = [
            RunEvent::Text { text: "hi".into() },
            RunEvent::ToolCall { id: "toolu_1".into(), name: "edit_file".into(), input: serde_json::json!({"a": 1}) },
            RunEvent::ToolResult { id: "toolu_1".into(), is_error: false, content: "ok".into() },
            RunEvent::Status { turn: 2, usage: Usage { input_tokens: 1234, output_tokens: 56 } },
            RunEvent::End { status: RunStatus::TurnLimit, text: "done".into() },
        ];
        let lines: Vec<String> = events.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
        expect_test::expect![[r#"
            {"type":"text","text":"hi"}
            {"type":"tool_call","id":"toolu_1","name":"edit_file","input":{"a":1}}
            {"type":"tool_result","id":"toolu_1","is_error":false,"content":"ok"}
            {"type":"status","turn":2,"usage":{"input_tokens":1234,"output_tokens":56}}
            {"type":"end","status":"turn_limit","text":"done"}"#]]
        .assert_eq(&lines.join("\n"));
    }
}
