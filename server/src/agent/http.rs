//! What the two HTTP providers share: the reqwest client, sending a JSON
//! request and turning an error status into a [`ProviderError`], and reading
//! a streamed body as server-sent events.

use std::time::Duration;

use super::provider::{http_error, parse_retry_after, ProviderError};
use super::sse::{SseDecoder, SseEvent};

/// Longest silence inside a stream before the connection counts as broken.
/// Anthropic pings well within this; a local model may think for long.
pub const STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Error bodies longer than this are cut before they reach a message.
const MAX_ERROR_BODY_BYTES: usize = 8 * 1024;

pub fn client() -> Result<reqwest::Client, ProviderError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(STREAM_IDLE_TIMEOUT)
        .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ProviderError::Config(format!("cannot build the HTTP client: {e}")))
}

/// Who is being called, for error messages.
pub struct Endpoint<'a> {
    /// "Anthropic", "The OpenAI-compatible server".
    pub provider: &'a str,
    /// The environment variable holding the key.
    pub key_var: &'a str,
    pub model: &'a str,
}

/// Send the request; a non-2xx answer becomes a [`ProviderError::Http`]
/// carrying the server's own error message and `retry-after`.
pub async fn send(request: reqwest::RequestBuilder, endpoint: &Endpoint<'_>) -> Result<reqwest::Response, ProviderError> {
    let response = request.send().await.map_err(|e| ProviderError::Connection(error_chain(&e)))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = parse_retry_after(response.headers());
    let body = read_error_body(response).await;
    let api_message = api_error_message(&body);
    Err(http_error(endpoint.provider, status.as_u16(), &api_message, endpoint.key_var, endpoint.model, retry_after))
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

/// Feed the body through the SSE decoder, calling `on_event` for each event
/// until it returns `Ok(true)` (the end-of-message marker) or the body ends.
/// Returns whether the marker was seen: a body that ends without it is a
/// truncated response, which the caller reports.
pub async fn read_events(
    mut response: reqwest::Response,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, ProviderError>,
) -> Result<bool, ProviderError> {
    let mut decoder = SseDecoder::default();
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(err) => return Err(ProviderError::Connection(format!("the stream broke: {}", error_chain(&err)))),
        };
        for event in decoder.push(&chunk).map_err(|e| ProviderError::Protocol(e.to_string()))? {
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
