//! The conversation's data, as every layer sees it: messages and their
//! blocks, token usage, and how a run ended. A leaf: it imports nothing
//! from the crate, so the thread store (`session/`), the loop (`agent/`)
//! and the front ends share these types without reaching up.
//!
//! [`table`]: what Tandem knows of each model (window, output, thinking,
//! images, caching, prices), read by the providers and the thread alike.
//! [`image`]: images the model sees, checked and carried as base64.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod image;
pub mod table;

pub use image::Image;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One block of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text { text: String },
    /// An image of the user's prompt (a pasted screenshot, `--image`).
    Image(Image),
    ToolUse { id: String, name: String, input: Value },
    /// `images`: what the tool gave the model to see beside its text
    /// (`read_file` of a PNG, an MCP tool's image content).
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    /// Anthropic extended thinking, kept exactly as received: the API
    /// checks the signature when the block is sent back during tool use.
    /// Never sent to an OpenAI-compatible provider.
    Thinking { thinking: String, signature: String },
    /// Thinking the API encrypted; sent back as is.
    RedactedThinking { data: String },
    /// Reasoning an OpenAI-compatible server streamed beside the answer, in
    /// `field`: `reasoning_content` (DeepSeek, llama.cpp) or `reasoning`
    /// (vLLM, OpenRouter, Ollama). Sent back on the assistant message in
    /// the same field (DeepSeek refuses a tool call's turn without it);
    /// never sent to Anthropic.
    Reasoning { text: String, field: String },
    /// An item of OpenAI's Responses API kept to replay as received (a
    /// reasoning item with its `encrypted_content`); only that API reads it.
    ResponsesItem { item: Value },
}

/// One message of the conversation history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Message { role: Role::User, content: vec![ContentBlock::Text { text: text.into() }] }
    }

    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// Token counts, from the provider's own `usage`. `input_tokens` counts
/// every input token, cached or not; the two cache fields say how many of
/// them were read from the prompt cache or written to it (Anthropic), or
/// read from it (OpenAI's `cached_tokens`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_input_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation_input_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage { input_tokens, output_tokens, ..Usage::default() }
    }

    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Completed,
    Cancelled,
    Failed,
    TurnLimit,
    /// The model repeated itself (the same call with the same result, or
    /// the same text) past the nudge.
    Loop,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Failed => "failed",
            RunStatus::TurnLimit => "turn_limit",
            RunStatus::Loop => "loop",
        }
    }
}

