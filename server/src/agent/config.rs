//! Which provider a run talks to, and how: read from the environment
//! (`TANDEM_PROVIDER`, `TANDEM_MODEL`, `TANDEM_SCRIPT`, the SDKs'
//! `ANTHROPIC_*` / `OPENAI_*` variables, `TANDEM_MAX_TOKENS`,
//! `TANDEM_THINKING`), or through a lookup that puts settings first.
//!
//! Which provider is one decision ([`ProviderConfig::resolve`]), said in
//! words ([`Endpoint`]: `tandem doctor`, the editors and each run's first
//! event show it):
//! 1. the provider named (`provider`, `TANDEM_PROVIDER`);
//! 2. else the one the set base URL belongs to: the settings' `baseUrl`
//!    (`TANDEM_BASE_URL`) to the OpenAI-compatible provider (to Anthropic
//!    when its host is Anthropic's), `ANTHROPIC_BASE_URL` to Anthropic,
//!    `OPENAI_BASE_URL` to the OpenAI-compatible one (both of these set:
//!    an error, the choice is not clear);
//! 3. else the key found: `ANTHROPIC_API_KEY`, then `OPENAI_API_KEY`;
//! 4. else an error that says exactly how to configure one.
//!
//! A setting that cannot apply to the chosen provider is an error naming
//! it, never ignored: the other provider's base URL where the chosen one
//! would go to its public API, a `baseUrl` for the scripted model, a
//! thinking budget for an OpenAI-compatible server.

use std::path::PathBuf;
use std::time::Duration;

use super::anthropic::{self, AnthropicProvider};
use super::http::StreamLimits;
use super::openai::{self, OpenAiProvider};
use super::provider::{Provider, ProviderError, RetryPolicy};
use super::scripted::ScriptedProvider;
use crate::model::table::{Effort, ModelInfo, ModelTable, Thinking};

/// The current Sonnet: the `sonnet` alias's model.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-5-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-5.5";

/// The model each family alias of an agent's `model` field names on
/// Anthropic (Claude Code's aliases): the model table's current ones.
pub const ANTHROPIC_FAMILY_MODELS: [(&str, &str); 3] = crate::model::table::CLAUDE_FAMILIES;

/// The model a sub-agent asks for, from its `model` field, on the
/// provider `provider` (its [`Provider::name`]) whose own model is
/// `session_model`. `None` means the session's model:
/// - no field, an empty one, or `inherit`;
/// - a family alias (`sonnet`, `opus`, `haiku`) when the session's model is
///   of that family already (it stays pinned to the user's version), or on
///   a provider other than Anthropic (the aliases name Anthropic's models);
///
/// otherwise a family alias is that family's current model, and anything
/// else is passed through as the provider's model id.
pub fn sub_agent_model(provider: &str, session_model: &str, requested: Option<&str>) -> Option<String> {
    let requested = requested.map(str::trim).filter(|m| !m.is_empty())?;
    if requested.eq_ignore_ascii_case("inherit") {
        return None;
    }
    let family = ANTHROPIC_FAMILY_MODELS.iter().find(|(alias, _)| requested.eq_ignore_ascii_case(alias));
    match family {
        Some((alias, model)) => {
            let same_family = session_model.to_ascii_lowercase().contains(alias);
            (provider == "anthropic" && !same_family).then(|| model.to_string())
        }
        None => Some(requested.to_string()),
    }
}
pub const DEFAULT_MAX_TOKENS: u32 = 16_384;
/// The output limit when adaptive thinking is on (its thinking counts
/// against it): room to think and still answer.
pub const ADAPTIVE_MAX_TOKENS: u32 = 32_000;
/// The smallest thinking budget Anthropic's API accepts.
pub const MIN_THINKING_BUDGET: u32 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Anthropic,
    OpenAi,
    /// OpenAI's Responses API (`openai-responses`), on the OpenAI variables.
    OpenAiResponses,
    Scripted,
}

pub use super::http::HttpProviderConfig;

/// Headers from `customHeaders` (`TANDEM_CUSTOM_HEADERS`, a JSON object of
/// header names to string values).
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("customHeaders (TANDEM_CUSTOM_HEADERS) is not JSON: {e}"))?;
    let serde_json::Value::Object(map) = value else {
        return Err("customHeaders must be an object of header names to values: {\"x-gateway-key\": \"…\"}".into());
    };
    let mut headers = Vec::new();
    for (name, value) in map {
        let Some(text) = value.as_str() else { return Err(format!("customHeaders.{name}: expected a string")) };
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(format!("customHeaders: \"{name}\" is not a header name"));
        }
        if reqwest::header::HeaderValue::from_str(text).is_err() {
            return Err(format!("customHeaders.{name}: the value is not a valid header value (no line breaks or control characters)"));
        }
        headers.push((name, text.to_string()));
    }
    Ok(headers)
}

/// What the configured thinking settings do on `info`'s model, checked
/// before any request: an effort it does not take is an error; a budget
/// on a model that thinks only adaptively becomes adaptive thinking, said
/// in the returned note. Unknown models get what was asked (the API
/// answers for them).
fn check_thinking(info: &ModelInfo, effort: Option<Effort>, budget: Option<u32>) -> Result<Option<String>, ProviderError> {
    if let Some(effort) = effort {
        if info.assumed.is_empty() {
            info.check_effort(effort).map_err(|e| ProviderError::Config(format!("{e} (setting effort, TANDEM_EFFORT or --effort)")))?;
        }
    }
    match (budget, info.thinking) {
        (Some(budget), Thinking::Adaptive { .. }) if effort.is_none() && info.assumed.is_empty() => Ok(Some(format!(
            "thinkingBudget {budget} does not apply to {}, which thinks adaptively only: it thinks adaptively, and effort sets how hard",
            info.name
        ))),
        (Some(budget), Thinking::None) if info.assumed.is_empty() => {
            Ok(Some(format!("thinkingBudget {budget} does not apply to {}, which does not think: it is not sent", info.name)))
        }
        _ => Ok(None),
    }
}

/// The endpoint a run talks to, and why that one: what `tandem doctor`,
/// the editors and a run's first event (`provider`) show. Never a key.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Endpoint {
    /// "anthropic", "openai" (any OpenAI-compatible server) or "scripted".
    pub provider: String,
    pub model: String,
    /// The API's base URL; `None` for the scripted model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Why this provider, in words ("baseUrl is set to http://…").
    pub reason: String,
}

impl Endpoint {
    /// One line for people: "openai (http://localhost:11434/v1), model qwen3: baseUrl is set …".
    pub fn describe(&self) -> String {
        let at = self.base_url.as_deref().map(|url| format!(" at {url}")).unwrap_or_default();
        format!("{}{at}, model {} ({})", self.provider, self.model, self.reason)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderConfig {
    Anthropic(HttpProviderConfig),
    OpenAi(HttpProviderConfig),
    OpenAiResponses(HttpProviderConfig),
    Scripted { script: PathBuf },
}

/// The message for a run with no provider configured.
pub const NOT_CONFIGURED: &str = "no model provider is configured. Set one of:
  ANTHROPIC_API_KEY=sk-ant-…                 Anthropic (optional: ANTHROPIC_BASE_URL, TANDEM_MODEL)
  OPENAI_API_KEY=sk-…                        OpenAI (optional: OPENAI_BASE_URL, TANDEM_MODEL)
  OPENAI_BASE_URL=http://localhost:11434/v1  any OpenAI-compatible server: Ollama, llama.cpp, vLLM,
                                             LM Studio (set TANDEM_MODEL to the model's name)
  TANDEM_PROVIDER=scripted TANDEM_SCRIPT=FILE  replay a scripted model, offline
TANDEM_PROVIDER=anthropic|openai|openai-responses|scripted picks one explicitly
(openai-responses: OpenAI's Responses API, on the OPENAI_* variables).
Or put the same in your own ~/.tandem/settings.json: {\"provider\": \"openai\", \"model\": \"…\", \"env\": {\"OPENAI_BASE_URL\": \"…\"}}
(a folder's .tandem/settings.json applies only after `tandem trust`; see docs/settings.md).
To see Tandem work with no key and no network, run `tandem demo`.";

/// The host of a URL, lower-cased ("api.anthropic.com").
fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    host.split(':').next().unwrap_or_default().to_ascii_lowercase()
}

/// Does a neutral base URL (`baseUrl`) name Anthropic's API?
fn is_anthropic_url(url: &str) -> bool {
    let host = url_host(url);
    host == "anthropic.com" || host.ends_with(".anthropic.com")
}

/// A lookup of `ORIGIN` + a variable's name answers where the settings set
/// its value (`"provider" in ~/.tandem/settings.json`), or nothing when it
/// is the environment's: messages name a value where it was set, never as
/// an environment variable it did not come from.
pub const ORIGIN: &str = "origin:";

/// A value in a message: `NAME=value` from the environment, else the value
/// and where it was set.
fn set_as(get: &dyn Fn(&str) -> Option<String>, variable: &str, value: &str) -> String {
    match get(&format!("{ORIGIN}{variable}")) {
        Some(origin) => format!("\"{value}\" ({origin})"),
        None => format!("{variable}={value}"),
    }
}

/// Which provider, and why (see the module doc): steps 1–4.
fn choose(get: &dyn Fn(&str) -> Option<String>) -> Result<(ProviderKind, String), ProviderError> {
    if let Some(named) = get("TANDEM_PROVIDER") {
        let kind = match named.to_ascii_lowercase().as_str() {
            "anthropic" => ProviderKind::Anthropic,
            "openai" | "openai-compatible" => ProviderKind::OpenAi,
            "openai-responses" => ProviderKind::OpenAiResponses,
            "scripted" => ProviderKind::Scripted,
            _ => {
                return Err(ProviderError::Config(format!(
                    "{} is not a provider: use anthropic, openai (any OpenAI-compatible server), openai-responses (OpenAI's Responses API) or scripted",
                    set_as(get, "TANDEM_PROVIDER", &named)
                )))
            }
        };
        return Ok((kind, match get(&format!("{ORIGIN}TANDEM_PROVIDER")) {
            Some(origin) => format!("provider is {named} ({origin})"),
            None => format!("provider (TANDEM_PROVIDER) is {named}"),
        }));
    }
    if let Some(url) = get("TANDEM_BASE_URL") {
        let kind = if is_anthropic_url(&url) { ProviderKind::Anthropic } else { ProviderKind::OpenAi };
        return Ok((kind, format!("no provider is named and baseUrl is set to {url}")));
    }
    match (get("ANTHROPIC_BASE_URL"), get("OPENAI_BASE_URL")) {
        (Some(anthropic), Some(openai)) => {
            return Err(ProviderError::Config(format!(
                "both ANTHROPIC_BASE_URL ({anthropic}) and OPENAI_BASE_URL ({openai}) are set and no provider is named, so which one a run would use is not clear: set provider (TANDEM_PROVIDER) to anthropic or openai, or remove one of them"
            )))
        }
        (Some(url), None) => return Ok((ProviderKind::Anthropic, format!("no provider is named and ANTHROPIC_BASE_URL is set to {url}"))),
        (None, Some(url)) => return Ok((ProviderKind::OpenAi, format!("no provider is named and OPENAI_BASE_URL is set to {url}"))),
        (None, None) => {}
    }
    if get("ANTHROPIC_API_KEY").is_some() {
        return Ok((ProviderKind::Anthropic, "no provider or base URL is set, and ANTHROPIC_API_KEY is".into()));
    }
    if get("OPENAI_API_KEY").is_some() {
        return Ok((ProviderKind::OpenAi, "no provider or base URL is set, and OPENAI_API_KEY is".into()));
    }
    Err(ProviderError::Config(NOT_CONFIGURED.to_string()))
}

/// The chosen provider's base URL: `baseUrl`, else its own variable, else
/// its public API. A setting that cannot apply to it is an error naming it.
fn base_url(kind: ProviderKind, reason: &str, get: &dyn Fn(&str) -> Option<String>) -> Result<Option<String>, ProviderError> {
    let (own, other, public, name) = match kind {
        ProviderKind::Anthropic => ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", anthropic::DEFAULT_BASE_URL, "anthropic"),
        ProviderKind::OpenAi => ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", openai::DEFAULT_BASE_URL, "openai"),
        ProviderKind::OpenAiResponses => ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", openai::DEFAULT_BASE_URL, "openai-responses"),
        ProviderKind::Scripted => {
            if let Some(url) = get("TANDEM_BASE_URL") {
                return Err(ProviderError::Config(format!(
                    "baseUrl ({url}) does not apply to the scripted provider, which sends nothing anywhere ({reason}): remove baseUrl, or name the provider it is for"
                )));
            }
            return Ok(None);
        }
    };
    let set = get("TANDEM_BASE_URL").map(|url| ("TANDEM_BASE_URL", url)).or_else(|| get(own).map(|url| (own, url)));
    if let Some((variable, url)) = set {
        // A value that is no URL would fail each request with a message
        // about the request; say it here, where it was set.
        if !(url.starts_with("http://") || url.starts_with("https://")) || url_host(&url).is_empty() {
            return Err(ProviderError::Config(format!(
                "{} is not a base URL: use http://HOST[:PORT][/PATH] or https://…",
                set_as(get, variable, &url)
            )));
        }
        return Ok(Some(url));
    }
    // The other provider's base URL, while this one would go to its public
    // API: whoever set it meant the requests to go there, not here.
    if let Some(url) = get(other) {
        return Err(ProviderError::Config(format!(
            "{other} ({url}) does not apply to the {name} provider ({reason}), whose requests would go to its public API at {public}: set baseUrl (or {own}) for {name}, set provider to the one {other} is for, or remove {other}"
        )));
    }
    Ok(Some(public.to_string()))
}

impl ProviderConfig {
    /// Read Tandem's environment (with the credentials held in memory).
    pub fn from_env() -> Result<Self, ProviderError> {
        Self::from_lookup(crate::environment::var)
    }

    /// Read settings through `lookup` (the environment, or a test table).
    /// Empty values count as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ProviderError> {
        Self::resolve(lookup).map(|(config, _)| config)
    }

    /// The one decision: the provider, its configuration, and the
    /// [`Endpoint`] that says in words what it is and why.
    pub fn resolve(lookup: impl Fn(&str) -> Option<String>) -> Result<(Self, Endpoint), ProviderError> {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let (kind, reason) = choose(&get)?;
        let base_url = base_url(kind, &reason, &get)?;
        let max_tokens = match get("TANDEM_MAX_TOKENS") {
            Some(v) => v.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                ProviderError::Config(format!("{} is not a positive whole number", set_as(&get, "TANDEM_MAX_TOKENS", &v)))
            })?,
            None => DEFAULT_MAX_TOKENS,
        };
        let model = get("TANDEM_MODEL");
        // An alias names the family's current model on Anthropic, as `model` does.
        let small_model = get("TANDEM_SMALL_MODEL").map(|small| match kind {
            ProviderKind::Anthropic => crate::model::table::family_model(&small).map_or(small, str::to_string),
            _ => small,
        });
        let thinking_budget = match get("TANDEM_THINKING") {
            None => None,
            Some(v) if matches!(v.as_str(), "0" | "off" | "false") => None,
            Some(v) => Some(v.parse::<u32>().ok().filter(|n| *n >= MIN_THINKING_BUDGET).ok_or_else(|| {
                ProviderError::Config(format!("{} is not a thinking budget: use a number of tokens, at least {MIN_THINKING_BUDGET} (or 0 for off)", set_as(&get, "TANDEM_THINKING", &v)))
            })?),
        };
        let name = match kind {
            ProviderKind::OpenAiResponses => "openai-responses",
            _ => "openai",
        };
        if let (Some(budget), ProviderKind::OpenAi | ProviderKind::OpenAiResponses) = (thinking_budget, kind) {
            return Err(ProviderError::Config(format!(
                "thinkingBudget (TANDEM_THINKING={budget}) does not apply to the {name} provider ({reason}): extended thinking is Anthropic's; set it to 0 or remove it"
            )));
        }
        let effort = match get("TANDEM_EFFORT") {
            None => None,
            Some(v) => Some(Effort::parse(&v).ok_or_else(|| ProviderError::Config(format!("effort (TANDEM_EFFORT) \"{v}\" is not an effort: use {}", Effort::NAMES)))?),
        };
        if let (Some(effort), ProviderKind::OpenAi | ProviderKind::OpenAiResponses) = (effort, kind) {
            return Err(ProviderError::Config(format!(
                "effort ({}) does not apply to the {name} provider ({reason}): it is Anthropic's output_config.effort; remove it",
                effort.as_str()
            )));
        }
        let models = ModelTable::from_lookup(get).map_err(ProviderError::Config)?;
        let headers = match get("TANDEM_CUSTOM_HEADERS") {
            Some(text) => parse_headers(&text).map_err(ProviderError::Config)?,
            None => Vec::new(),
        };
        let millis = |name: &str, default: Duration| -> Result<Duration, ProviderError> {
            match get(name) {
                Some(v) => v.parse::<u64>().ok().filter(|n| *n > 0).map(Duration::from_millis).ok_or_else(|| {
                    ProviderError::Config(format!("{name}={v} is not a positive whole number of milliseconds"))
                }),
                None => Ok(default),
            }
        };
        let limits = StreamLimits {
            idle: millis("TANDEM_STREAM_IDLE_TIMEOUT_MS", super::http::DEFAULT_IDLE_TIMEOUT)?,
            turn: millis("TANDEM_TURN_TIMEOUT_MS", super::http::DEFAULT_TURN_TIMEOUT)?,
        };
        let mut notes = Vec::new();
        let url = base_url.clone().unwrap_or_default();
        let model_name = match (model, kind) {
            // `opus`, `sonnet`, `haiku` name the current model of the family.
            (Some(model), ProviderKind::Anthropic) => crate::model::table::family_model(&model).map_or(model, str::to_string),
            (Some(model), _) => model,
            (None, ProviderKind::OpenAi | ProviderKind::OpenAiResponses) => DEFAULT_OPENAI_MODEL.to_string(),
            (None, _) => DEFAULT_ANTHROPIC_MODEL.to_string(),
        };
        let info = models.info(&model_name);
        if kind != ProviderKind::Scripted {
            notes.extend(info.assumption_note());
        }
        if kind == ProviderKind::Anthropic {
            notes.extend(check_thinking(&info, effort, thinking_budget)?);
        }
        // Unless the user set one: with adaptive thinking on, the thinking
        // counts against the limit too, so it is larger; never past the
        // model's own limit.
        let adaptive_on = kind == ProviderKind::Anthropic
            && info.thinking.takes_adaptive()
            && (effort.is_some() || info.thinking == Thinking::Adaptive { always_on: true } || (thinking_budget.is_some() && !info.thinking.takes_budget()));
        let max_tokens = match get("TANDEM_MAX_TOKENS") {
            Some(_) => max_tokens,
            None if adaptive_on => ADAPTIVE_MAX_TOKENS.min(info.max_output),
            None => max_tokens.min(info.max_output),
        };
        let endpoint = |provider: &str, model: &str| {
            let mut reason = reason.clone();
            for note in &notes {
                reason.push_str("; ");
                reason.push_str(note);
            }
            Endpoint { provider: provider.into(), model: model.into(), base_url: base_url.clone(), reason }
        };
        let config = match kind {
            ProviderKind::Anthropic => ProviderConfig::Anthropic(HttpProviderConfig {
                base_url: url,
                api_key: get("ANTHROPIC_API_KEY"),
                model: model_name.clone(),
                max_tokens,
                retry: RetryPolicy::default(),
                thinking_budget,
                effort,
                models: models.clone(),
                auth_token: get("ANTHROPIC_AUTH_TOKEN"),
                headers: headers.clone(),
                limits,
                small_model: small_model.clone(),
            }),
            ProviderKind::OpenAi | ProviderKind::OpenAiResponses => {
                let http = HttpProviderConfig {
                base_url: url,
                api_key: get("OPENAI_API_KEY"),
                model: model_name.clone(),
                max_tokens,
                retry: RetryPolicy::default(),
                // Thinking blocks are Anthropic's; never sent elsewhere.
                thinking_budget: None,
                effort: None,
                models: models.clone(),
                auth_token: None,
                headers: headers.clone(),
                limits,
                small_model: small_model.clone(),
                };
                if kind == ProviderKind::OpenAi { ProviderConfig::OpenAi(http) } else { ProviderConfig::OpenAiResponses(http) }
            }
            ProviderKind::Scripted => ProviderConfig::Scripted {
                script: get("TANDEM_SCRIPT").map(PathBuf::from).ok_or_else(|| {
                    ProviderError::Config("TANDEM_PROVIDER=scripted needs TANDEM_SCRIPT=FILE, a JSON script of model turns (see docs/protocol.md, \"Scripted model\")".into())
                })?,
            },
        };
        let endpoint = match &config {
            ProviderConfig::Anthropic(http) => endpoint("anthropic", &http.model),
            ProviderConfig::OpenAi(http) => endpoint("openai", &http.model),
            ProviderConfig::OpenAiResponses(http) => endpoint("openai-responses", &http.model),
            ProviderConfig::Scripted { .. } => endpoint("scripted", super::scripted::SCRIPT_MODEL),
        };
        Ok((config, endpoint))
    }

    /// Build the provider. The Anthropic API needs a key; say so before the
    /// first request rather than after a 401.
    pub fn build(self) -> Result<Box<dyn Provider>, ProviderError> {
        match self {
            ProviderConfig::Anthropic(config) => {
                if config.api_key.is_none() && config.auth_token.is_none() && config.base_url.trim_end_matches('/') == anthropic::DEFAULT_BASE_URL {
                    return Err(ProviderError::Config(
                        "the anthropic provider needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), in the environment or in the \"env\" of ~/.tandem/settings.json".into(),
                    ));
                }
                Ok(Box::new(AnthropicProvider::new(config)?))
            }
            ProviderConfig::OpenAi(config) => Ok(Box::new(OpenAiProvider::new(config)?)),
            ProviderConfig::OpenAiResponses(config) => Ok(Box::new(super::responses::ResponsesProvider::new(config)?)),
            ProviderConfig::Scripted { script } => Ok(Box::new(ScriptedProvider::from_file(&script)?)),
        }
    }
}

/// Whether a provider's API answers, as `tandem doctor` asks: a `GET` of
/// its model list with the run's credentials and headers, bounded by
/// `timeout`. `Ok(what)` when the server answers (the key accepted, or no
/// model list there); `Err(why)` when it cannot be reached or refuses the
/// key. The scripted model is always there.
pub async fn probe(config: &ProviderConfig, timeout: Duration) -> Result<String, String> {
    let (http, url) = match config {
        ProviderConfig::Scripted { .. } => return Ok("the scripted model needs no server".to_string()),
        ProviderConfig::Anthropic(http) => (http, format!("{}/v1/models", http.base_url.trim_end_matches('/'))),
        ProviderConfig::OpenAi(http) | ProviderConfig::OpenAiResponses(http) => (http, format!("{}/models", http.base_url.trim_end_matches('/'))),
    };
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let mut request = client.get(&url);
    request = match config {
        ProviderConfig::Anthropic(http) => {
            let mut request = request.header("anthropic-version", anthropic::API_VERSION);
            if let Some(key) = &http.api_key {
                request = request.header("x-api-key", key);
            }
            if let Some(token) = &http.auth_token {
                request = request.bearer_auth(token);
            }
            request
        }
        _ => match &http.api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        },
    };
    let response = http.with_custom_headers(request).send().await.map_err(|e| format!("{} is not reachable: {}", http.base_url, super::http::error_chain(&e)))?;
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return Err(format!("{} answers, but refuses the key (HTTP {} to GET {url})", http.base_url, status.as_u16()));
    }
    if status.is_success() {
        return Ok(format!("{} answers (GET {url}: HTTP {})", http.base_url, status.as_u16()));
    }
    // A server without a model list (some local servers) still answers.
    Ok(format!("{} answers (GET {url}: HTTP {}, no model list there)", http.base_url, status.as_u16()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Result<ProviderConfig, ProviderError> {
        ProviderConfig::from_lookup(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    }

    /// The advice names the user's own settings file: a folder's
    /// `.tandem/settings.json` is ignored until trusted, so pointing a new
    /// user there gave the same advice again (issue 54).
    #[test]
    fn the_no_provider_advice_names_the_users_own_settings() {
        assert!(NOT_CONFIGURED.contains("your own ~/.tandem/settings.json"), "{NOT_CONFIGURED}");
        for line in NOT_CONFIGURED.lines().filter(|l| l.contains(".tandem/settings.json")) {
            assert!(line.contains("~/.tandem/settings.json") || line.contains("only after `tandem trust`"), "a line points at the folder's file alone: {line}");
        }
    }

    #[test]
    fn a_sub_agent_model_field_resolves_per_provider() {
        let cases = [
            // (provider, session model, field) → the model asked for (None: the session's)
            ("anthropic", "claude-sonnet-4-5", None, None),
            ("anthropic", "claude-sonnet-4-5", Some("  "), None),
            ("anthropic", "claude-sonnet-4-5", Some("inherit"), None),
            ("anthropic", "claude-sonnet-4-5", Some("haiku"), Some("claude-haiku-5-5")),
            ("anthropic", "claude-sonnet-4-5", Some("Opus"), Some("claude-opus-5-5")),
            ("anthropic", "claude-sonnet-4-20250514", Some("sonnet"), None),
            ("anthropic", "claude-opus-4-5", Some("sonnet"), Some("claude-sonnet-5-5")),
            ("openai", "qwen3-coder", Some("haiku"), None),
            ("openai", "qwen3-coder", Some("qwen3:0.6b"), Some("qwen3:0.6b")),
            ("anthropic", "claude-sonnet-4-5", Some("claude-3-5-haiku-latest"), Some("claude-3-5-haiku-latest")),
            ("scripted", "script", Some("fast"), Some("fast")),
        ];
        for (provider, session, field, expected) in cases {
            assert_eq!(sub_agent_model(provider, session, field).as_deref(), expected, "{provider} {session} {field:?}");
        }
    }

    #[test]
    fn a_small_model_alias_names_the_current_model_on_anthropic_only() {
        let Ok(ProviderConfig::Anthropic(a)) = config(&[("ANTHROPIC_API_KEY", "k"), ("TANDEM_SMALL_MODEL", "haiku")]) else { panic!() };
        assert_eq!(a.small_model.as_deref(), crate::model::table::family_model("haiku"));
        let Ok(ProviderConfig::OpenAi(o)) = config(&[("OPENAI_API_KEY", "o"), ("TANDEM_SMALL_MODEL", "haiku")]) else { panic!() };
        assert_eq!(o.small_model.as_deref(), Some("haiku"));
        let Ok(ProviderConfig::Anthropic(unset)) = config(&[("ANTHROPIC_API_KEY", "k")]) else { panic!() };
        assert_eq!(unset.small_model, None);
    }

    #[test]
    fn defaults_follow_which_keys_are_set() {
        let Ok(ProviderConfig::Anthropic(a)) = config(&[("ANTHROPIC_API_KEY", "k"), ("OPENAI_API_KEY", "o")]) else { panic!() };
        assert_eq!((a.base_url.as_str(), a.model.as_str()), ("https://api.anthropic.com", DEFAULT_ANTHROPIC_MODEL));
        let Ok(ProviderConfig::OpenAi(o)) = config(&[("OPENAI_BASE_URL", "http://localhost:11434/v1"), ("TANDEM_MODEL", "qwen3")]) else { panic!() };
        assert_eq!((o.api_key, o.model.as_str()), (None, "qwen3"));
        let Ok(ProviderConfig::OpenAi(o)) = config(&[("TANDEM_PROVIDER", "openai"), ("ANTHROPIC_API_KEY", "k")]) else { panic!() };
        assert_eq!(o.base_url, "https://api.openai.com/v1");
    }

    /// The one decision, as a table: what is set → the provider, where its
    /// requests go, and why (or the error naming the setting).
    #[test]
    fn the_provider_is_one_decision_said_in_words() {
        let cases: &[&[(&str, &str)]] = &[
            // The VS Code walkthrough's "Use a local model" with an Anthropic key stored.
            &[("ANTHROPIC_API_KEY", "k"), ("TANDEM_BASE_URL", "http://localhost:11434/v1")],
            &[("ANTHROPIC_API_KEY", "k"), ("OPENAI_BASE_URL", "http://localhost:8080/v1")],
            &[("OPENAI_API_KEY", "o"), ("ANTHROPIC_BASE_URL", "http://proxy:4000")],
            &[("TANDEM_BASE_URL", "https://api.anthropic.com"), ("ANTHROPIC_API_KEY", "k")],
            &[("TANDEM_PROVIDER", "anthropic"), ("TANDEM_BASE_URL", "http://localhost:11434"), ("ANTHROPIC_API_KEY", "k")],
            &[("ANTHROPIC_API_KEY", "k"), ("OPENAI_API_KEY", "o")],
            &[("OPENAI_API_KEY", "o")],
            &[("TANDEM_PROVIDER", "openai"), ("ANTHROPIC_BASE_URL", "http://proxy:4000"), ("OPENAI_API_KEY", "o")],
            &[("TANDEM_PROVIDER", "anthropic"), ("OPENAI_BASE_URL", "http://localhost:11434/v1"), ("OPENAI_BASE_URL", "x")],
            &[("TANDEM_PROVIDER", "openai"), ("ANTHROPIC_BASE_URL", "http://proxy:4000"), ("OPENAI_BASE_URL", "http://localhost:8080/v1")],
            &[("ANTHROPIC_BASE_URL", "http://a"), ("OPENAI_BASE_URL", "http://o")],
            &[("TANDEM_PROVIDER", "scripted"), ("TANDEM_SCRIPT", "s.json"), ("TANDEM_BASE_URL", "http://localhost:11434/v1")],
            &[("TANDEM_BASE_URL", "http://localhost:11434/v1"), ("TANDEM_THINKING", "2048")],
        ];
        let lines: Vec<String> = cases
            .iter()
            .map(|vars| match ProviderConfig::resolve(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())) {
                Ok((_, endpoint)) => endpoint.describe(),
                Err(err) => format!("error: {err}"),
            })
            .collect();
        expect_test::expect![[r#"
            openai at http://localhost:11434/v1, model gpt-5.5 (no provider is named and baseUrl is set to http://localhost:11434/v1)
            openai at http://localhost:8080/v1, model gpt-5.5 (no provider is named and OPENAI_BASE_URL is set to http://localhost:8080/v1)
            anthropic at http://proxy:4000, model claude-sonnet-5-5 (no provider is named and ANTHROPIC_BASE_URL is set to http://proxy:4000)
            anthropic at https://api.anthropic.com, model claude-sonnet-5-5 (no provider is named and baseUrl is set to https://api.anthropic.com)
            anthropic at http://localhost:11434, model claude-sonnet-5-5 (provider (TANDEM_PROVIDER) is anthropic)
            anthropic at https://api.anthropic.com, model claude-sonnet-5-5 (no provider or base URL is set, and ANTHROPIC_API_KEY is)
            openai at https://api.openai.com/v1, model gpt-5.5 (no provider or base URL is set, and OPENAI_API_KEY is)
            error: ANTHROPIC_BASE_URL (http://proxy:4000) does not apply to the openai provider (provider (TANDEM_PROVIDER) is openai), whose requests would go to its public API at https://api.openai.com/v1: set baseUrl (or OPENAI_BASE_URL) for openai, set provider to the one ANTHROPIC_BASE_URL is for, or remove ANTHROPIC_BASE_URL
            error: OPENAI_BASE_URL (http://localhost:11434/v1) does not apply to the anthropic provider (provider (TANDEM_PROVIDER) is anthropic), whose requests would go to its public API at https://api.anthropic.com: set baseUrl (or ANTHROPIC_BASE_URL) for anthropic, set provider to the one OPENAI_BASE_URL is for, or remove OPENAI_BASE_URL
            openai at http://localhost:8080/v1, model gpt-5.5 (provider (TANDEM_PROVIDER) is openai)
            error: both ANTHROPIC_BASE_URL (http://a) and OPENAI_BASE_URL (http://o) are set and no provider is named, so which one a run would use is not clear: set provider (TANDEM_PROVIDER) to anthropic or openai, or remove one of them
            error: baseUrl (http://localhost:11434/v1) does not apply to the scripted provider, which sends nothing anywhere (provider (TANDEM_PROVIDER) is scripted): remove baseUrl, or name the provider it is for
            error: thinkingBudget (TANDEM_THINKING=2048) does not apply to the openai provider (no provider is named and baseUrl is set to http://localhost:11434/v1): extended thinking is Anthropic's; set it to 0 or remove it"#]].assert_eq(&lines.join("\n"));
    }

    #[test]
    fn nothing_configured_says_how_and_points_at_the_demo() {
        let err = config(&[("ANTHROPIC_API_KEY", "  ")]).unwrap_err().to_string();
        for needle in ["ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "TANDEM_PROVIDER=scripted", "tandem demo"] {
            assert!(err.contains(needle), "{needle} missing from {err}");
        }
    }

    #[test]
    fn bad_values_are_named() {
        expect_test::expect!["TANDEM_PROVIDER=gemini is not a provider: use anthropic, openai (any OpenAI-compatible server), openai-responses (OpenAI's Responses API) or scripted"]
            .assert_eq(&config(&[("TANDEM_PROVIDER", "gemini")]).unwrap_err().to_string());
        assert!(config(&[("TANDEM_PROVIDER", "scripted")]).unwrap_err().to_string().contains("TANDEM_SCRIPT"));
        assert!(config(&[("ANTHROPIC_API_KEY", "k"), ("TANDEM_MAX_TOKENS", "lots")]).unwrap_err().to_string().contains("TANDEM_MAX_TOKENS"));
    }
}
