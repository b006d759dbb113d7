//! The scripted model: replays a JSON script, one turn per request, with no
//! key and no network. `tandem demo` and tests use it.
//!
//! The format (docs/protocol.md, "Scripted model"):
//! `{"turns": [{"text": "…", "tool_calls": [{"name": "…", "input": {…}}]}, …]}`.
//! Each call gets the id `toolu_script_<turn>_<n>` (both 1-based) unless the
//! script gives one. A request past the last turn is a provider error.
//! A turn may name the `model` it answers as: a request that asks for
//! another model (a sub-agent's `model` field, or none: `script`) is then a
//! provider error, so a script can show which model each request named.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::events::Usage;
use super::provider::{ModelRequest, ModelResponse, Provider, ProviderError, ResponseBuilder, StopReason, StreamEvent, ToolCall};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub turns: Vec<ScriptTurn>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptCall>,
    /// The model the request must ask for (`None`: any).
    #[serde(default)]
    pub model: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCall {
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    #[serde(default = "empty_object")]
    pub input: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

pub struct ScriptedProvider {
    script: Script,
    /// Where the script came from, for error messages.
    source: String,
    next_turn: AtomicUsize,
}

impl ScriptedProvider {
    pub fn new(script: Script, source: impl Into<String>) -> Self {
        ScriptedProvider { script, source: source.into(), next_turn: AtomicUsize::new(0) }
    }

    pub fn from_json(json: &str, source: impl Into<String>) -> Result<Self, ProviderError> {
        let source = source.into();
        let script: Script = serde_json::from_str(json).map_err(|e| {
            ProviderError::Config(format!(
                "the script {source} is not valid: {e}. Expected {{\"turns\": [{{\"text\": \"…\", \"tool_calls\": [{{\"name\": \"…\", \"input\": {{…}}}}]}}]}}"
            ))
        })?;
        Ok(Self::new(script, source))
    }

    pub fn from_file(path: &Path) -> Result<Self, ProviderError> {
        let json = std::fs::read_to_string(path)
            .map_err(|e| ProviderError::Config(format!("cannot read the script {} (TANDEM_SCRIPT): {e}", path.display())))?;
        Self::from_json(&json, path.display().to_string())
    }

    /// Turns consumed so far.
    pub fn turns_used(&self) -> usize {
        self.next_turn.load(Ordering::SeqCst)
    }
}

/// The scripted provider's own model name.
pub const SCRIPT_MODEL: &str = "script";

/// A rough token count (four characters a token), so summaries show
/// something proportionate for the offline model.
fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

#[async_trait]
impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        SCRIPT_MODEL
    }

    async fn stream(&self, request: &ModelRequest<'_>, events: &mpsc::UnboundedSender<StreamEvent>) -> Result<ModelResponse, ProviderError> {
        let index = self.next_turn.fetch_add(1, Ordering::SeqCst);
        let Some(turn) = self.script.turns.get(index) else {
            return Err(ProviderError::ScriptExhausted(format!(
                "the scripted model has no turn left: {} has {} turn(s) and request {} asked for another",
                self.source,
                self.script.turns.len(),
                index + 1
            )));
        };
        let asked = request.model.unwrap_or(SCRIPT_MODEL);
        if let Some(expected) = turn.model.as_deref().filter(|expected| *expected != asked) {
            return Err(ProviderError::Config(format!(
                "turn {} of the script {} answers as the model {expected}, but the request asked for {asked}",
                index + 1,
                self.source
            )));
        }
        let mut builder = ResponseBuilder::default();
        builder.push_text(&turn.text, events);
        for (n, call) in turn.tool_calls.iter().enumerate() {
            let id = call.id.clone().unwrap_or_else(|| format!("toolu_script_{}_{}", index + 1, n + 1));
            let input_error =
                (!call.input.is_object()).then(|| format!("Tool call not executed: the input for {} must be a JSON object.", call.name));
            builder.push_tool_use(ToolCall { id, name: call.name.clone(), input: call.input.clone(), input_error }, events);
        }
        let sent_chars = request.system.len() + serde_json::to_string(request.messages).map(|s| s.len()).unwrap_or(0);
        let received_chars = turn.text.len() + turn.tool_calls.iter().map(|c| c.name.len() + c.input.to_string().len()).sum::<usize>();
        builder.usage = Usage::new(estimate_tokens(sent_chars), estimate_tokens(received_chars));
        builder.stop_reason = Some(if turn.tool_calls.is_empty() { StopReason::EndTurn } else { StopReason::ToolUse });
        Ok(builder.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn replays_turns_with_ids_then_fails_past_the_end() {
        let provider = ScriptedProvider::from_json(
            r#"{"turns": [
                {"text": "I'll read it first.", "tool_calls": [{"name": "read_file", "input": {"file_path": "notes.txt"}}]},
                {"text": "Done."}
            ]}"#,
            "test.json",
        )
        .unwrap();
        let (tx, _rx) = mpsc::unbounded_channel();
        let request = ModelRequest { model: None, system: "", messages: &[], tools: &[] };
        let first = provider.stream(&request, &tx).await.unwrap();
        assert_eq!(first.tool_calls[0].id, "toolu_script_1_1");
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        let second = provider.stream(&request, &tx).await.unwrap();
        assert_eq!(second.message.text(), "Done.");
        let err = provider.stream(&request, &tx).await.unwrap_err();
        expect_test::expect!["the scripted model has no turn left: test.json has 2 turn(s) and request 3 asked for another"]
            .assert_eq(&err.to_string());
        assert!(!err.is_retryable());
    }

    #[tokio::test]
    async fn a_turn_naming_a_model_answers_only_a_request_for_it() {
        let script = r#"{"turns": [{"text": "fast", "model": "small"}, {"text": "own", "model": "script"}, {"text": "fast", "model": "small"}]}"#;
        let provider = ScriptedProvider::from_json(script, "m.json").unwrap();
        let (tx, _rx) = mpsc::unbounded_channel();
        let small = ModelRequest { model: Some("small"), system: "", messages: &[], tools: &[] };
        let own = ModelRequest { model: None, ..small.clone() };
        assert_eq!(provider.stream(&small, &tx).await.unwrap().message.text(), "fast");
        assert_eq!(provider.stream(&own, &tx).await.unwrap().message.text(), "own");
        let err = provider.stream(&own, &tx).await.unwrap_err();
        expect_test::expect!["turn 3 of the script m.json answers as the model small, but the request asked for script"].assert_eq(&err.to_string());
    }

    #[test]
    fn a_bad_script_says_what_is_expected() {
        let err = ScriptedProvider::from_json(r#"{"turns": [{"txt": "typo"}]}"#, "s.json").err().unwrap();
        assert!(err.to_string().contains("unknown field `txt`"), "{err}");
    }
}
