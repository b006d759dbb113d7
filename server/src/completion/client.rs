//! The HTTP side: one JSON request per completion, its answer read with a
//! bound on size ([`MAX_ANSWER_BYTES`]: a server that sends 100 KB or
//! never stops is cut off) and time (the settings' `timeoutMs`). Dropping
//! the future (a `$/cancelRequest`, a newer keystroke) closes the
//! connection at once, which tells llama.cpp to stop generating.
//!
//! A server whose `/completions` refuses `suffix` (llama.cpp's does, vLLM's
//! too) or whose `/infill` says the model cannot fill in the middle is
//! remembered for the session: completions go on from the prefix alone,
//! with one log line saying why.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use super::config::{Api, ModelConfig};
use super::prompt;
use super::window::Window;

/// The most bytes of an answer read.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// Why the model gave nothing. Logged, never shown to the user as an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// The server could not be reached.
    Unreachable(String),
    /// An error status, with the start of the body.
    Status(u16, String),
    /// The answer was larger than [`MAX_ANSWER_BYTES`].
    TooLarge,
    /// No complete answer within the timeout.
    Timeout(Duration),
    /// The answer was not what the API returns.
    BadAnswer(String),
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Unreachable(e) => write!(f, "the completion model cannot be reached: {e}"),
            ModelError::Status(status, body) => write!(f, "the completion model answered {status}: {body}"),
            ModelError::TooLarge => write!(f, "the completion model's answer was larger than {MAX_ANSWER_BYTES} bytes; cut off"),
            ModelError::Timeout(t) => write!(f, "the completion model did not answer within {} ms (inlineCompletions.timeoutMs)", t.as_millis()),
            ModelError::BadAnswer(e) => write!(f, "the completion model's answer could not be read: {e}"),
        }
    }
}

/// One session's connection to the completion model.
#[derive(Debug)]
pub struct ModelClient {
    http: reqwest::Client,
    /// The `/completions` server refused `suffix`.
    no_suffix: AtomicBool,
    /// The `/infill` server said the model cannot fill in the middle.
    no_infill: AtomicBool,
}

impl Default for ModelClient {
    fn default() -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        ModelClient { http, no_suffix: AtomicBool::new(false), no_infill: AtomicBool::new(false) }
    }
}

/// Does this error body say the FIM part of the request is not supported?
fn refuses(body: &str, what: &str) -> bool {
    let body = body.to_ascii_lowercase();
    body.contains(what) && (body.contains("support") || body.contains("unknown") || body.contains("not allowed"))
}

impl ModelClient {
    /// The model's text for the middle at `window`.
    pub async fn fill_in_the_middle(&self, config: &ModelConfig, window: &Window, file_name: &str) -> Result<String, ModelError> {
        let deadline = Instant::now() + config.timeout;
        let model = config.model.as_deref();
        match config.api {
            Api::Infill if !self.no_infill.load(Ordering::Relaxed) => {
                let body = prompt::infill_body(model, window, config.max_tokens);
                let url = format!("{}/infill", config.base_url.trim_end_matches("/v1"));
                match self.post(config, &url, &body, deadline).await {
                    Ok(answer) => text_at(&answer, &["content"]),
                    Err(ModelError::Status(status, body)) if (400..=501).contains(&status) && refuses(&body, "infill") => {
                        tracing::warn!("{url} does not fill in the middle ({body}); completing from the prefix through /v1/completions");
                        self.no_infill.store(true, Ordering::Relaxed);
                        self.completions(config, window, deadline, false).await
                    }
                    Err(err) => Err(err),
                }
            }
            Api::Infill => self.completions(config, window, deadline, false).await,
            Api::Completions => {
                let with_suffix = !self.no_suffix.load(Ordering::Relaxed);
                match self.completions(config, window, deadline, with_suffix).await {
                    Err(ModelError::Status(status, body)) if with_suffix && (400..500).contains(&status) && refuses(&body, "suffix") => {
                        tracing::warn!(
                            "{}/completions does not take a suffix ({body}); completing from the prefix alone (for llama.cpp use provider \"llama.cpp\")",
                            config.base_url
                        );
                        self.no_suffix.store(true, Ordering::Relaxed);
                        self.completions(config, window, deadline, false).await
                    }
                    other => other,
                }
            }
            Api::AnthropicChat | Api::OpenAiChat => {
                let user = prompt::chat_fim_user(window, file_name);
                let answer = self.chat(config, prompt::CHAT_FIM_SYSTEM, &user, config.max_tokens, deadline).await?;
                Ok(prompt::strip_fence(&answer).to_string())
            }
        }
    }

    async fn completions(&self, config: &ModelConfig, window: &Window, deadline: Instant, with_suffix: bool) -> Result<String, ModelError> {
        let body = prompt::completions_body(config.model.as_deref(), window, config.max_tokens, with_suffix);
        // llama.cpp's root serves its OpenAI API under /v1.
        let base = if config.api == Api::Infill && !config.base_url.ends_with("/v1") {
            format!("{}/v1", config.base_url)
        } else {
            config.base_url.clone()
        };
        let answer = self.post(config, &format!("{base}/completions"), &body, deadline).await?;
        text_at(&answer, &["choices", "0", "text"])
    }

    /// One chat turn: `system`, then `user`; the answer's text. For a
    /// completions server (llama.cpp, Ollama) the same server's chat API.
    pub async fn chat(&self, config: &ModelConfig, system: &str, user: &str, max_tokens: u32, deadline: Instant) -> Result<String, ModelError> {
        if config.api == Api::AnthropicChat {
            let mut body = json!({
                "max_tokens": max_tokens,
                "system": system,
                "messages": [{"role": "user", "content": user}],
                "temperature": 0,
            });
            body["model"] = json!(config.model.clone().unwrap_or_default());
            let answer = self.post(config, &format!("{}/v1/messages", config.base_url.trim_end_matches("/v1")), &body, deadline).await?;
            return text_at(&answer, &["content", "0", "text"]);
        }
        let mut body = json!({
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": false,
        });
        if let Some(model) = &config.model {
            body["model"] = json!(model);
        }
        let base = if config.api == Api::Infill && !config.base_url.ends_with("/v1") {
            format!("{}/v1", config.base_url)
        } else {
            config.base_url.clone()
        };
        let answer = self.post(config, &format!("{base}/chat/completions"), &body, deadline).await?;
        text_at(&answer, &["choices", "0", "message", "content"])
    }

    async fn post(&self, config: &ModelConfig, url: &str, body: &Value, deadline: Instant) -> Result<Value, ModelError> {
        let timeout = config.timeout;
        let exchange = async {
            // The agent's requests, headers and all: one provider layer.
            let request = match config.api {
                Api::AnthropicChat => crate::agent::anthropic::post(&config.http, &self.http, url.to_string(), body),
                _ => config.http.bearer_post(&self.http, url.to_string(), body),
            };
            let mut response = request.send().await.map_err(|e| ModelError::Unreachable(redact(&e.to_string(), config)))?;
            let status = response.status().as_u16();
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| ModelError::Unreachable(redact(&e.to_string(), config)))? {
                if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err(ModelError::TooLarge);
                }
                bytes.extend_from_slice(&chunk);
            }
            let text = String::from_utf8_lossy(&bytes);
            if !(200..300).contains(&status) {
                let start: String = text.chars().take(300).collect();
                return Err(ModelError::Status(status, redact(&start, config)));
            }
            serde_json::from_str::<Value>(&text).map_err(|e| ModelError::BadAnswer(format!("{e}: {}", text.chars().take(120).collect::<String>())))
        };
        tokio::time::timeout_at(deadline, exchange).await.map_err(|_| ModelError::Timeout(timeout))?
    }
}

fn redact(text: &str, config: &ModelConfig) -> String {
    let mut text = text.to_string();
    let secrets = [config.http.api_key.as_ref(), config.http.auth_token.as_ref()];
    for secret in secrets.into_iter().flatten().chain(config.http.headers.iter().map(|(_, value)| value)) {
        if secret.len() >= 4 {
            text = text.replace(secret.as_str(), "[redacted]");
        }
    }
    text
}

/// The string at `path` (object keys and array indices) in `answer`.
fn text_at(answer: &Value, path: &[&str]) -> Result<String, ModelError> {
    let mut at = answer;
    for key in path {
        at = match key.parse::<usize>() {
            Ok(i) => at.get(i),
            Err(_) => at.get(*key),
        }
        .ok_or_else(|| ModelError::BadAnswer(format!("no {} in the answer", path.join("."))))?;
    }
    at.as_str().map(str::to_string).ok_or_else(|| ModelError::BadAnswer(format!("{} is not text", path.join("."))))
}
