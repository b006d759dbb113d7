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

pub use crate::protocol::{RunStatus, Usage};

