//! What the HTTP providers share: their settings ([`HttpProviderConfig`]),
//! the reqwest client, sending a JSON
//! request and turning an error status into a [`ProviderError`], and reading
//! a streamed body as server-sent events under two clocks: an idle timeout
//! (no content event for a while; pings do not count) and the turn's
//! deadline. A 200 answer that is not an event stream (an HTML page from a
//! wrong base URL, a JSON body) is reported with what came back, not retried.

use std::time::Duration;

use tokio::time::Instant;

use super::provider::{http_error, parse_retry_after, ProviderError, RetryPolicy};
use super::sse::{SseDecoder, SseEvent};
use crate::model::table::{ModelInfo, ModelTable};

/// Without a content event for this long, a stream counts as stalled.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// One model turn (every attempt of one request) ends by this deadline.
pub const DEFAULT_TURN_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Error bodies longer than this are cut before they reach a message.
const MAX_ERROR_BODY_BYTES: usize = 8 * 1024;

/// How much of an unexpected body is quoted back.
const QUOTED_BODY_CHARS: usize = 200;

/// The two clocks on a streamed answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// The longest wait for the answer to start or for the next content
    /// event (pings and comments do not count).
    pub idle: Duration,
    /// The whole turn, retries included.
    pub turn: Duration,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits { idle: DEFAULT_IDLE_TIMEOUT, turn: DEFAULT_TURN_TIMEOUT }
    }
}

/// Settings of an HTTP provider.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpProviderConfig {
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub max_tokens: u32,
    pub retry: RetryPolicy,
    /// Anthropic extended thinking budget (`TANDEM_THINKING`); ignored by
    /// OpenAI-compatible providers.
    pub thinking_budget: Option<u32>,
    /// How hard the model works (`effort`, `TANDEM_EFFORT`): Anthropic's
    /// `output_config.effort`, with adaptive thinking where the model takes it.
    pub effort: Option<crate::model::table::Effort>,
    /// The model table with the user's `models` over it.
    pub models: ModelTable,
    /// A bearer token for `Authorization` (`ANTHROPIC_AUTH_TOKEN`: gateways
    /// that take one instead of `x-api-key`).
    pub auth_token: Option<String>,
    /// Headers sent with every request (`customHeaders`), for gateways.
    pub headers: Vec<(String, String)>,
    pub limits: StreamLimits,
    /// The model for the small jobs (`smallModel`, `TANDEM_SMALL_MODEL`):
    /// compaction summaries and sub-agents that name no model. `None`: the
    /// main model.
    pub small_model: Option<String>,
}

impl HttpProviderConfig {
    /// `customHeaders` on a request: every provider sends them.
    pub fn with_custom_headers(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        request
    }

    /// A JSON POST as OpenAI's APIs take it: the key, if any, as a bearer
    /// token (local servers usually need none), and the custom headers.
    pub fn bearer_post(&self, client: &reqwest::Client, url: String, body: &serde_json::Value) -> reqwest::RequestBuilder {
        let mut request = client.post(url).json(body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        self.with_custom_headers(request)
    }
}

/// Never prints the key.
impl std::fmt::Debug for HttpProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpProviderConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("retry", &self.retry)
            .field("limits", &self.limits)
            .field("thinking_budget", &self.thinking_budget)
            .field("effort", &self.effort)
            .field("small_model", &self.small_model)
            .field("auth_token", &self.auth_token.as_ref().map(|_| "[redacted]"))
            // Header values may be credentials too.
            .field("headers", &self.headers.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>())
            .finish()
    }
}

impl HttpProviderConfig {
    /// A config for a test server at `base_url`, retrying without real waits.
    pub fn for_tests(base_url: impl Into<String>, model: &str) -> Self {
        HttpProviderConfig {
            base_url: base_url.into(),
            api_key: Some("test-key".into()),
            model: model.into(),
            max_tokens: 1024,
            retry: RetryPolicy { max_retries: 4, base_delay: Duration::from_millis(1), max_delay: Duration::from_millis(20) },
            thinking_budget: None,
            effort: None,
            models: ModelTable::default(),
            auth_token: None,
            headers: Vec::new(),
            limits: StreamLimits::default(),
            small_model: None,
        }
    }

    /// What the table (and the user's `models`) knows of `model`.
    pub fn info(&self, model: &str) -> ModelInfo {
        self.models.info(model)
    }
}

pub fn client() -> Result<reqwest::Client, ProviderError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ProviderError::Config(format!("cannot build the HTTP client: {e}")))
}

/// What tells the two HTTP APIs apart in messages.
#[derive(Debug)]
pub struct Api {
    /// "Anthropic", "The OpenAI-compatible server".
    pub provider: &'static str,
    /// The environment variable holding the key.
    pub key_var: &'static str,
    /// The environment variable holding the base URL.
    pub base_url_var: &'static str,
    /// The event that ends a complete answer ("message_stop").
    pub end_marker: &'static str,
}

/// Who is being called, for one request.
pub struct Endpoint<'a> {
    pub api: &'static Api,
    /// The model this request asks for.
    pub model: &'a str,
    /// The key, so an error body that quotes it is redacted.
    pub key: Option<&'a str>,
    pub limits: StreamLimits,
    /// When this turn must be over.
    pub deadline: Instant,
}

impl<'a> Endpoint<'a> {
    pub fn new(api: &'static Api, config: &'a HttpProviderConfig, model: &'a str, deadline: Instant) -> Self {
        Endpoint { api, model, key: config.api_key.as_deref(), limits: config.limits, deadline }
    }

    /// Remove the key from text that goes into an error message.
    fn redact(&self, text: &str) -> String {
        match self.key {
            Some(key) if key.len() >= 4 => text.replace(key, "[redacted]"),
            _ => text.to_string(),
        }
    }

    fn stalled(&self) -> ProviderError {
        ProviderError::Stalled(format!(
            "{} sent no content for {} s (the idle timeout; TANDEM_STREAM_IDLE_TIMEOUT_MS sets it)",
            self.api.provider,
            self.limits.idle.as_secs_f32()
        ))
    }

    fn past_deadline(&self) -> ProviderError {
        ProviderError::Deadline(format!(
            "{}'s answer did not finish within the turn deadline of {} s (TANDEM_TURN_TIMEOUT_MS sets it)",
            self.api.provider,
            self.limits.turn.as_secs_f32()
        ))
    }

    /// The next wake-up: the idle timeout from `since`, or the deadline.
    fn next_deadline(&self, since: Instant) -> (Instant, bool) {
        let idle = since + self.limits.idle;
        if idle < self.deadline {
            (idle, false)
        } else {
            (self.deadline, true)
        }
    }

    /// Run `future` until the idle timeout from `since` or the deadline.
    async fn bounded<T>(&self, since: Instant, future: impl std::future::Future<Output = T>) -> Result<T, ProviderError> {
        let (until, is_deadline) = self.next_deadline(since);
        tokio::time::timeout_at(until, future)
            .await
            .map_err(|_| if is_deadline { self.past_deadline() } else { self.stalled() })
    }
}

/// Send the request; a non-2xx answer becomes a [`ProviderError::Http`]
/// carrying the server's own error message and `retry-after`.
pub async fn send(request: reqwest::RequestBuilder, endpoint: &Endpoint<'_>) -> Result<reqwest::Response, ProviderError> {
    let response = endpoint
        .bounded(Instant::now(), request.send())
        .await?
        .map_err(|e| ProviderError::Connection(error_chain(&e)))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = parse_retry_after(response.headers());
    let body = endpoint.bounded(Instant::now(), read_error_body(response)).await.unwrap_or_default();
    let api_message = endpoint.redact(&api_error_message(&body));
    Err(http_error(endpoint.api.provider, status.as_u16(), &api_message, endpoint.api.key_var, endpoint.model, retry_after))
}

async fn read_error_body(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ERROR_BODY_BYTES {
            body.truncate(MAX_ERROR_BODY_BYTES);
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// The message inside `{"error": {"message": …}}` (both APIs use that
/// shape), else the body itself, trimmed.
fn api_error_message(body: &str) -> String {
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(body) {
        if let Some(message) = value.pointer("/error/message").and_then(|m| m.as_str()) {
            return message.to_string();
        }
    }
    body.trim().chars().take(500).collect()
}

/// reqwest's top-level error hides the cause ("error sending request");
/// the chain says "connection refused".
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// True for events that only keep the connection alive.
fn is_keepalive(event: &SseEvent) -> bool {
    event.event == "ping"
}

/// Does this start of a body look like an event stream (a field name or a
/// comment at the start of a line)?
fn looks_like_event_stream(start: &[u8]) -> bool {
    let text = String::from_utf8_lossy(start);
    let first = text.trim_start();
    first.is_empty() || ["data:", "event:", "id:", "retry:", ":"].iter().any(|field| first.starts_with(field))
}

/// The error for a 200 answer that is not an event stream.
fn not_an_event_stream(endpoint: &Endpoint<'_>, response: &reqwest::Response, start: &[u8]) -> ProviderError {
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no content type");
    let mut url = response.url().clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let quoted: String = endpoint.redact(&String::from_utf8_lossy(start)).chars().take(QUOTED_BODY_CHARS).collect();
    ProviderError::NotEventStream(format!(
        "{} answered {} with {content_type}, not an event stream, from {url}. It began: {quoted:?}. Check {} (the base URL): it must point at the API itself.",
        endpoint.api.provider,
        response.status(),
        endpoint.api.base_url_var
    ))
}

/// One attempt at a streamed answer: send `request` and feed its events to
/// `on_event` until the API's end marker. A body that ends before the
/// marker is [`ProviderError::Truncated`] (worth a retry).
pub async fn stream_answer(
    request: reqwest::RequestBuilder,
    endpoint: &Endpoint<'_>,
    on_event: impl FnMut(SseEvent) -> Result<bool, ProviderError>,
) -> Result<(), ProviderError> {
    let response = send(request, endpoint).await?;
    if read_events(response, endpoint, on_event).await? {
        Ok(())
    } else {
        Err(ProviderError::Truncated(format!("the stream ended without {}", endpoint.api.end_marker)))
    }
}

/// Feed the body through the SSE decoder, calling `on_event` for each event
/// until it returns `Ok(true)` (the end-of-message marker) or the body ends.
/// Returns whether the marker was seen: a body that ends without it is a
/// truncated response, which the caller reports.
pub async fn read_events(
    mut response: reqwest::Response,
    endpoint: &Endpoint<'_>,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, ProviderError>,
) -> Result<bool, ProviderError> {
    let declared_stream = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
    // Some servers omit the content type of a real stream; the first bytes
    // decide then.
    let mut checked = declared_stream;
    let mut decoder = SseDecoder::default();
    let mut last_content = Instant::now();
    loop {
        let chunk = match endpoint.bounded(last_content, response.chunk()).await? {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(err) => return Err(ProviderError::Connection(format!("the stream broke: {}", error_chain(&err)))),
        };
        if !checked && !chunk.iter().all(u8::is_ascii_whitespace) {
            if !looks_like_event_stream(&chunk) {
                return Err(not_an_event_stream(endpoint, &response, &chunk));
            }
            checked = true;
        }
        for event in decoder.push(&chunk).map_err(|e| ProviderError::Protocol(e.to_string()))? {
            if !is_keepalive(&event) {
                last_content = Instant::now();
            }
            if on_event(event)? {
                return Ok(true);
            }
        }
    }
    if let Some(event) = decoder.finish().map_err(|e| ProviderError::Protocol(e.to_string()))? {
        // An event without its closing blank line: a complete one is used,
        // a half one means the stream was cut, which is worth a retry.
        return match on_event(event) {
            Err(ProviderError::Protocol(message)) => Err(ProviderError::Truncated(message)),
            other => other,
        };
    }
    Ok(false)
}
