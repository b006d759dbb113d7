//! The `inlineCompletions` settings and the model they name.
//!
//! ```json
//! "inlineCompletions": {"enabled": true, "provider": "llama.cpp", "baseUrl": "http://127.0.0.1:8012",
//!                       "model": "qwen2.5-coder", "debounceMs": 75, "maxTokens": 64, "contextLines": 40,
//!                       "nextEdits": false, "timeoutMs": 10000}
//! ```
//!
//! Off unless `enabled` is true. The endpoint, key, bearer token and
//! `customHeaders` are resolved by the agent's own provider layer
//! ([`ProviderConfig::resolve`]), from the variables of the user's layers
//! and Tandem's environment; only the API, the base URL and the model are
//! the completions' own settings.

use std::time::Duration;

use crate::agent::config::{HttpProviderConfig, ProviderConfig};

/// Which API serves the completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST {baseUrl}/completions` with `prompt` and `suffix`: an
    /// OpenAI-compatible server (Ollama, vLLM, LM Studio). `"openai"`, `"ollama"`.
    Completions,
    /// llama.cpp's `POST {baseUrl}/infill`. `"llama.cpp"`.
    Infill,
    /// Anthropic's Messages API, with a fill-in-the-middle prompt. `"anthropic"`.
    AnthropicChat,
    /// OpenAI's chat completions, with a fill-in-the-middle prompt. `"openai-chat"`.
    OpenAiChat,
}

impl Api {
    pub const NAMES: &'static str = "openai (any OpenAI-compatible /completions: Ollama, vLLM, LM Studio), ollama, llama.cpp, anthropic, openai-chat";

    pub fn parse(name: &str) -> Option<Api> {
        match name.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" | "ollama" => Some(Api::Completions),
            "llama.cpp" | "llamacpp" | "llama-cpp" => Some(Api::Infill),
            "anthropic" => Some(Api::AnthropicChat),
            "openai-chat" => Some(Api::OpenAiChat),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Api::Completions => "openai",
            Api::Infill => "llama.cpp",
            Api::AnthropicChat => "anthropic",
            Api::OpenAiChat => "openai-chat",
        }
    }

    /// The agent's provider whose endpoint and credentials this API's
    /// requests use, and the variables of it that apply.
    fn provider(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Api::AnthropicChat => ("anthropic", &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "TANDEM_CUSTOM_HEADERS"]),
            _ => ("openai", &["OPENAI_API_KEY", "OPENAI_BASE_URL", "TANDEM_CUSTOM_HEADERS"]),
        }
    }
}

pub const DEFAULT_DEBOUNCE_MS: u64 = 75;
pub const DEFAULT_MAX_TOKENS: u32 = 64;
pub const DEFAULT_CONTEXT_LINES: usize = 40;
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// The most tokens a completion may ask for.
pub const MAX_MAX_TOKENS: u32 = 1024;

/// The variables [`InlineSettings::resolve`] looks up: the key or bearer
/// token, the chat providers' base URL when `baseUrl` is not set, and
/// `customHeaders`.
pub const VARIABLES: [&str; 6] = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "TANDEM_CUSTOM_HEADERS"];

/// `inlineCompletions` as the settings layers merged it, field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineSettings {
    pub enabled: bool,
    pub api: Option<Api>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub debounce_ms: u64,
    pub max_tokens: u32,
    pub context_lines: usize,
    pub next_edits: bool,
    pub timeout_ms: u64,
    /// [`VARIABLES`] as the user's own layers set them (their `env`, the
    /// agent's `baseUrl`), never a project's: a repository cannot send the
    /// completions elsewhere, nor under another key, through its `env`.
    pub users_variables: std::collections::BTreeMap<String, String>,
}

impl Default for InlineSettings {
    fn default() -> Self {
        InlineSettings {
            enabled: false,
            api: None,
            model: None,
            base_url: None,
            debounce_ms: DEFAULT_DEBOUNCE_MS,
            max_tokens: DEFAULT_MAX_TOKENS,
            context_lines: DEFAULT_CONTEXT_LINES,
            next_edits: false,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            users_variables: std::collections::BTreeMap::new(),
        }
    }
}

/// Where completions are asked for, resolved from the settings.
#[derive(Clone, PartialEq, Eq)]
pub struct ModelConfig {
    pub api: Api,
    /// Without a trailing `/`.
    pub base_url: String,
    /// The endpoint, key, bearer token and custom headers, as the agent's
    /// provider layer resolved them.
    pub http: HttpProviderConfig,
    pub model: Option<String>,
    pub max_tokens: u32,
    pub context_lines: usize,
    pub debounce: Duration,
    pub timeout: Duration,
    pub next_edits: bool,
}

/// Never prints the key.
impl std::fmt::Debug for ModelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelConfig")
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("http", &self.http)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl InlineSettings {
    /// The model these settings name, with its key from `lookup` (the
    /// settings' variables, then the environment); `None` when they are off.
    pub fn resolve(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<Option<ModelConfig>, String> {
        if !self.enabled {
            return Ok(None);
        }
        let api = self.api.unwrap_or(Api::Completions);
        if self.base_url.is_none() && matches!(api, Api::Completions | Api::Infill) {
            return Err(format!(
                "inlineCompletions.baseUrl is needed for provider {}: the address of the server, such as http://127.0.0.1:8012",
                api.name()
            ));
        }
        let model = self.model.clone().or_else(|| match api {
            Api::AnthropicChat => Some("claude-haiku-4-5".into()),
            Api::OpenAiChat => Some("gpt-4.1-mini".into()),
            _ => None,
        });
        // The agent's resolution, given only what applies to completions:
        // their provider, base URL and model, and that provider's own
        // credentials and headers (no effort, budget or token limit of the
        // agent's, no other provider's base URL).
        let (provider, variables) = api.provider();
        let agent_lookup = |name: &str| match name {
            "TANDEM_PROVIDER" => Some(provider.to_string()),
            "TANDEM_MODEL" => model.clone(),
            "TANDEM_BASE_URL" => self.base_url.clone(),
            _ if variables.contains(&name) => lookup(name),
            _ => None,
        };
        let http = match ProviderConfig::resolve(agent_lookup).map_err(|e| format!("inline completions: {e}"))?.0 {
            ProviderConfig::Anthropic(http) | ProviderConfig::OpenAi(http) => http,
            other => return Err(format!("inline completions: the {provider} provider resolved to another: {other:?}")),
        };
        Ok(Some(ModelConfig {
            api,
            base_url: http.base_url.trim_end_matches('/').to_string(),
            http,
            model,
            max_tokens: self.max_tokens,
            context_lines: self.context_lines,
            debounce: Duration::from_millis(self.debounce_ms),
            timeout: Duration::from_millis(self.timeout_ms),
            next_edits: self.next_edits,
        }))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn off_unless_enabled_and_a_local_server_needs_its_address() {
        let lookup = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-test".to_string());
        assert_eq!(InlineSettings::default().resolve(lookup), Ok(None));
        let on = InlineSettings { enabled: true, ..InlineSettings::default() };
        assert!(on.resolve(lookup).unwrap_err().contains("baseUrl"));
        let local = InlineSettings { base_url: Some("http://127.0.0.1:8012/".into()), api: Some(Api::Infill), ..on.clone() };
        let config = local.resolve(lookup).unwrap().unwrap();
        assert_eq!((config.base_url.as_str(), config.http.api_key.as_deref(), config.model.as_deref()), ("http://127.0.0.1:8012", Some("sk-test"), None));
        assert!(!format!("{config:?}").contains("sk-test"));
        let anthropic = InlineSettings { api: Some(Api::AnthropicChat), ..on };
        let config = anthropic.resolve(|name| (name == "ANTHROPIC_API_KEY").then(|| "ak".to_string())).unwrap().unwrap();
        assert_eq!((config.base_url.as_str(), config.http.api_key.as_deref()), ("https://api.anthropic.com", Some("ak")));
    }
}
