//! `web_fetch`: fetch one http(s) URL and return its content as text.
//!
//! Decisions, in one place:
//! - One request, at most [`MAX_REDIRECTS`] redirects (a loop is named as
//!   such), [`TIMEOUT`] for all of it including the body.
//! - Redirects are followed only on the URL's own host. The permission
//!   subject is that host, so a redirect to another one is not followed:
//!   the result names the new URL ([`redirect_detected`]) and the model
//!   fetches it with a call of its own, which the permission rules for its
//!   host decide.
//! - The body is read as a stream and stops at a byte cap: [`MAX_BODY_BYTES`]
//!   for HTML (markup is much larger than its text), about four bytes per
//!   wanted character for text and JSON. It is never buffered without bound.
//! - The charset comes from a byte-order mark, else the `Content-Type`
//!   header, else (HTML) a `<meta>` tag in the first 1024 bytes, else UTF-8;
//!   encoding_rs decodes it.
//! - HTML becomes Markdown-like text through a real parser ([`html`]); JSON
//!   and text come back as they are; images, audio, video, fonts, PDFs and
//!   archives are refused by their type, and an unlabelled body that looks
//!   binary by its bytes.
//! - Past `max_length` characters the text is cut and says so.
//! - Read-only and concurrency-safe; the permission subject is the URL (its
//!   host is what a rule matches).
//! - The sandbox's network lists (`sandbox.network`: `allow`, `deny`,
//!   `allowLocal`) hold here as for shell commands: a host they refuse is
//!   not fetched, and one they let through is reached at the addresses
//!   they checked ([`WebFetch::client_for`]).

mod html;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use encoding_rs::Encoding;
use schemars::JsonSchema;
use serde::Deserialize;
use url::Url;

use crate::sync::MutexExt;
use crate::tools::ports::network::Network;
use crate::tools::{Tool, ToolContext, ToolError, ToolKind};

pub use html::html_to_text;

/// Characters of text returned when the call does not say.
pub const DEFAULT_MAX_LENGTH: usize = 50_000;
/// The most characters a call may ask for.
pub const MAX_LENGTH_LIMIT: usize = 100_000;
/// For the whole request: connecting, redirects, headers and body.
pub const TIMEOUT: Duration = Duration::from_secs(30);
pub const MAX_REDIRECTS: usize = 10;
/// Raw body bytes read at most.
pub const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;

/// Fetch a URL and return its content as text. For HTML pages, tags are stripped to return readable text. For JSON/text responses, content is returned directly.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebFetchArgs {
    /// The URL to fetch: http:// or https://.
    pub url: String,
    /// The most characters of text to return (default 50000, at most 100000).
    #[serde(default)]
    pub max_length: Option<usize>,
}

pub struct WebFetch {
    timeout: Duration,
    use_system_proxy: bool,
    client: OnceLock<reqwest::Client>,
}

impl Default for WebFetch {
    fn default() -> Self {
        WebFetch { timeout: TIMEOUT, use_system_proxy: true, client: OnceLock::new() }
    }
}

impl WebFetch {
    /// Test-only knob: a short timeout instead of 30 s, and no proxy from
    /// the environment (tests talk to loopback servers only).
    #[cfg(test)]
    pub(crate) fn for_tests(timeout: Duration) -> Self {
        WebFetch { timeout, use_system_proxy: false, client: OnceLock::new() }
    }

    fn client(&self) -> Result<&reqwest::Client, ToolError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let mut builder = builder();
        if !self.use_system_proxy {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| ToolError::model(format!("Error fetching URL: cannot build the HTTP client: {e}")))?;
        Ok(self.client.get_or_init(|| client))
    }

    /// The client for `url` under the run's network lists: the shared one
    /// when the settings list nothing; else one that connects only to the
    /// addresses the lists let through for the URL's host (no proxy, no
    /// second lookup, so a DNS answer cannot change between the check and
    /// the connection). Redirects stay on that host ([`redirect_policy`]).
    async fn client_for(&self, url: &Url, network: &Arc<Network>) -> Result<reqwest::Client, ToolError> {
        if !network.policy.enforced() {
            return self.client().cloned();
        }
        let host = url.host_str().unwrap_or_default().to_string();
        let port = url.port_or_known_default().unwrap_or(443);
        let lists = Arc::clone(network);
        let checked = host.clone();
        let addresses = tokio::task::spawn_blocking(move || lists.resolve(&checked, port))
            .await
            .map_err(|e| ToolError::model(format!("Error fetching URL: the host check failed: {e}")))?
            .map_err(|reason| ToolError::model(format!("Error: the sandbox's network lists refuse this URL: {reason}.")))?;
        let name = host.trim_start_matches('[').trim_end_matches(']');
        builder()
            .no_proxy()
            .resolve_to_addrs(name, &addresses)
            .build()
            .map_err(|e| ToolError::model(format!("Error fetching URL: cannot build the HTTP client: {e}")))
    }
}

/// What every web_fetch client has: the redirect rules and the agent name.
fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().redirect(redirect_policy()).user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION"), " (web_fetch)"))
}

#[async_trait]
impl Tool for WebFetch {
    type Args = WebFetchArgs;
    type Plan = reqwest::Url;
    const NAME: &'static str = "web_fetch";
    const ONLY_READS: bool = true;

    fn kind(&self, args: &Self::Args, _ctx: &ToolContext) -> ToolKind {
        ToolKind::Fetch { url: args.url.clone() }
    }

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        true
    }

    fn max_result_chars(&self) -> usize {
        // The tool cuts its own text (and says so); the executor's cap must not cut it again.
        MAX_LENGTH_LIMIT + 200
    }

    fn summary(&self, args: &Self::Args) -> String {
        args.url.clone()
    }

    async fn plan(&self, args: &Self::Args, _ctx: &ToolContext) -> Result<reqwest::Url, ToolError> {
        parse_url(&args.url)
    }

    async fn call(&self, args: Self::Args, url: reqwest::Url, ctx: &ToolContext) -> Result<String, ToolError> {
        let fetched = self.fetch_under_lists(args, url, ctx).await;
        // A host the lists refused is put to the user now (once per run).
        let turn = ctx.run.questions.locked().clone();
        let answered = ctx.network.ask_refused(turn).await;
        match fetched {
            Err(ToolError::Model(mut text)) if !answered.is_empty() => {
                text.push_str("\n\n");
                text.push_str(&answered.join("\n"));
                Err(ToolError::Model(text))
            }
            other => other,
        }
    }
}

impl WebFetch {
    async fn fetch_under_lists(&self, args: WebFetchArgs, url: reqwest::Url, ctx: &ToolContext) -> Result<String, ToolError> {
        let max_chars = args.max_length.unwrap_or(DEFAULT_MAX_LENGTH).clamp(1, MAX_LENGTH_LIMIT);
        let client = self.client_for(&url, &ctx.network).await?;
        tokio::select! {
            _ = ctx.cancel.cancelled() => Err(ToolError::model("Error: the fetch was cancelled.")),
            result = tokio::time::timeout(self.timeout, fetch(&client, url, max_chars)) => match result {
                Ok(result) => result.map_err(ToolError::Model),
                Err(_) => Err(ToolError::model(format!("Error: Request timed out ({})", seconds(self.timeout)))),
            },
        }
    }
}

/// Only absolute http(s) URLs.
pub fn parse_url(text: &str) -> Result<Url, ToolError> {
    match Url::parse(text.trim()) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(url),
        Ok(_) => Err(ToolError::model("Error: only http(s) URLs are supported")),
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            Err(ToolError::model(format!("Error: \"{text}\" is not a full URL; give it with its scheme, e.g. https://{text}")))
        }
        Err(err) => Err(ToolError::model(format!("Error: invalid URL \"{text}\": {err}"))),
    }
}

fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 { format!("{}s", duration.as_secs()) } else { format!("{:.1}s", duration.as_secs_f64()) }
}

/// Why a redirect was not followed (found again in reqwest's error chain).
#[derive(Debug)]
struct RedirectStop(String);

impl std::fmt::Display for RedirectStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RedirectStop {}

fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        // `previous` holds every URL requested so far, the first included.
        let first_host = attempt.previous().first().and_then(|url| url.host_str());
        if attempt.url().host_str() != first_host {
            // The redirect itself becomes the response (see `redirect_detected`).
            attempt.stop()
        } else if attempt.previous().contains(attempt.url()) {
            let message = format!("redirect loop: {} redirects back to an address already visited", attempt.url());
            attempt.error(RedirectStop(message))
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(RedirectStop(format!("too many redirects (more than {MAX_REDIRECTS})")))
        } else {
            attempt.follow()
        }
    })
}

/// What a response holds, by its `Content-Type` or its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    Html,
    Text,
    Binary,
    /// No usable type: decided from the bytes.
    Unknown,
}

fn kind_of(mime: &str) -> BodyKind {
    let mime = mime.trim().to_ascii_lowercase();
    if mime.is_empty() {
        return BodyKind::Unknown;
    }
    if mime == "text/html" || mime == "application/xhtml+xml" {
        return BodyKind::Html;
    }
    let textual = mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-ndjson"
                | "application/x-sh"
                | "application/sql"
                | "application/graphql"
        );
    if textual {
        return BodyKind::Text;
    }
    let binary = ["image/", "audio/", "video/", "font/", "model/"].iter().any(|p| mime.starts_with(p))
        || matches!(
            mime.as_str(),
            "application/pdf"
                | "application/zip"
                | "application/gzip"
                | "application/x-gzip"
                | "application/x-tar"
                | "application/x-7z-compressed"
                | "application/x-rar-compressed"
                | "application/wasm"
                | "application/vnd.ms-excel"
                | "application/msword"
        )
        || mime.starts_with("application/vnd.openxmlformats");
    if binary { BodyKind::Binary } else { BodyKind::Unknown }
}

/// The type of an unlabelled (or vaguely labelled) body, from its bytes.
fn sniff(bytes: &[u8]) -> BodyKind {
    const MAGIC: &[&[u8]] = &[b"\x89PNG", b"GIF8", b"\xFF\xD8\xFF", b"%PDF", b"PK\x03\x04", b"\x1F\x8B", b"RIFF", b"\0asm"];
    let head = &bytes[..bytes.len().min(8192)];
    if MAGIC.iter().any(|m| head.starts_with(m)) || head.contains(&0) {
        return BodyKind::Binary;
    }
    let start: Vec<u8> = head.iter().skip_while(|b| b.is_ascii_whitespace()).take(64).map(u8::to_ascii_lowercase).collect();
    let start = start.strip_prefix(b"\xef\xbb\xbf".as_slice()).unwrap_or(&start);
    if start.starts_with(b"<!doctype html") || start.starts_with(b"<html") {
        BodyKind::Html
    } else {
        BodyKind::Text
    }
}

fn refuse_binary(url: &Url, mime: &str) -> String {
    let what = if mime.is_empty() { "binary content".to_string() } else { format!("binary content ({mime})") };
    format!("Error: {url} returned {what}. web_fetch returns only HTML, JSON and text; it cannot read images or other binary files.")
}

/// One request, from send to text. `Err` is the message for the model.
async fn fetch(client: &reqwest::Client, url: Url, max_chars: usize) -> Result<String, String> {
    let mut response = client
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "text/html, application/xhtml+xml, application/json;q=0.9, text/plain;q=0.9, */*;q=0.5")
        .send()
        .await
        .map_err(|e| format!("Error fetching URL: {}", describe(&e)))?;
    let status = response.status();
    if let Some(target) = status.is_redirection().then(|| redirect_target(&response)).flatten() {
        return Ok(redirect_detected(&url, &target, status));
    }
    if !status.is_success() {
        return Err(format!("HTTP error: {} {}", status.as_u16(), status.canonical_reason().unwrap_or("")).trim_end().to_string());
    }
    let final_url = response.url().clone();
    let content_type = response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let (mime, charset) = split_content_type(&content_type);
    let mut kind = kind_of(&mime);
    if kind == BodyKind::Binary {
        return Err(refuse_binary(&final_url, &mime));
    }
    let cap = match kind {
        BodyKind::Text => max_chars.saturating_mul(4).saturating_add(4).min(MAX_BODY_BYTES),
        _ => MAX_BODY_BYTES,
    };
    let (body, cut) = read_capped(&mut response, cap).await?;
    if body.is_empty() {
        return Ok("(empty response)".to_string());
    }
    if kind == BodyKind::Unknown {
        kind = sniff(&body);
        if kind == BodyKind::Binary {
            return Err(refuse_binary(&final_url, &mime));
        }
    }
    let meta_charset = if kind == BodyKind::Html { meta_charset(&body) } else { None };
    let encoding = Encoding::for_bom(&body)
        .map(|(encoding, _)| encoding)
        .or_else(|| charset.as_deref().and_then(|c| Encoding::for_label(c.as_bytes())))
        .or_else(|| meta_charset.and_then(|c| Encoding::for_label(c.as_bytes())))
        .unwrap_or(encoding_rs::UTF_8);
    let (decoded, _) = encoding.decode_with_bom_removal(&body);
    let text = match kind {
        BodyKind::Html => html_to_text(&decoded, Some(&final_url), max_chars),
        _ => decoded.into_owned(),
    };
    if text.trim().is_empty() {
        return Ok("(empty response)".to_string());
    }
    Ok(limit(text, max_chars, cut.then_some(body.len())))
}

/// Where a redirect response points, resolved against its own URL.
fn redirect_target(response: &reqwest::Response) -> Option<Url> {
    let location = response.headers().get(reqwest::header::LOCATION)?.to_str().ok()?;
    response.url().join(location).ok()
}

/// The result for a redirect to another host, which is not followed: the
/// model fetches the new URL with a call of its own, so the permission for
/// that host is asked like any other.
fn redirect_detected(requested: &Url, target: &Url, status: reqwest::StatusCode) -> String {
    let host = target.host_str().unwrap_or("another host");
    format!(
        "REDIRECT DETECTED: {requested} redirects to a different host, {host} ({} {}).\nRedirect URL: {target}\n\nweb_fetch follows redirects only within the host that was asked for. To get the content, fetch the new URL: call web_fetch again with url \"{target}\".",
        status.as_u16(),
        status.canonical_reason().unwrap_or("redirect")
    )
}

/// reqwest's top-level error hides the cause; the chain names it. A
/// redirect refusal is said on its own.
fn describe(err: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = Some(err);
    while let Some(e) = source {
        if let Some(stop) = e.downcast_ref::<RedirectStop>() {
            return stop.0.clone();
        }
        source = e.source();
    }
    let mut message = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// The media type (lowercase) and the `charset` parameter.
fn split_content_type(value: &str) -> (String, Option<String>) {
    let mut parts = value.split(';');
    let mime = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.filter_map(|p| p.split_once('=')).find(|(k, _)| k.trim().eq_ignore_ascii_case("charset")).map(|(_, v)| v.trim().trim_matches(['"', '\'']).to_string());
    (mime, charset)
}

/// Read the body until it ends or passes `cap` bytes; says whether it was cut.
async fn read_capped(response: &mut reqwest::Response, cap: usize) -> Result<(Vec<u8>, bool), String> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                body.extend_from_slice(&chunk);
                if body.len() > cap {
                    body.truncate(cap);
                    return Ok((body, true));
                }
            }
            Ok(None) => return Ok((body, false)),
            Err(err) => return Err(format!("Error fetching URL: the body broke off: {}", describe(&err))),
        }
    }
}

/// The charset a `<meta charset>` or `<meta http-equiv="Content-Type">` tag
/// names in the first 1024 bytes (the HTML standard's prescan window).
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let mut rest = head.as_str();
    while let Some(start) = rest.find("<meta") {
        let tag_end = rest[start..].find('>').map(|i| start + i).unwrap_or(rest.len());
        let tag = &rest[start..tag_end];
        if let Some(at) = tag.find("charset=") {
            let value: String = tag[at + "charset=".len()..]
                .trim_start_matches(['"', '\'', ' '])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
                .collect();
            if !value.is_empty() {
                return Some(value);
            }
        }
        rest = &rest[tag_end..];
    }
    None
}

/// Cut the text at `max_chars` characters and say so; note a body cut at
/// the byte cap.
fn limit(text: String, max_chars: usize, cut_at_bytes: Option<usize>) -> String {
    if let Some((end, _)) = text.char_indices().nth(max_chars) {
        return format!("{}\n\n[... truncated at {max_chars} characters]", &text[..end]);
    }
    match cut_at_bytes {
        Some(bytes) => format!("{text}\n\n[... the response was cut after {bytes} bytes]"),
        None => text,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
