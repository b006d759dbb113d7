//! The model table: what Tandem knows of each model it may talk to — its
//! context window, the most output tokens it writes, how it thinks
//! (adaptive thinking steered by an effort, a thinking budget, or not at
//! all), which efforts it takes, whether it sees images, whether it caches
//! prompts, and its prices — in one place, for the providers (the request
//! body's shape), the thread (the window, compaction, the cost estimate). A leaf, so the
//! providers above and the thread store below read the same table.
//!
//! A model is found by its name as a provider or gateway spells it: a
//! provider prefix (`anthropic/claude-opus-4-7`, Bedrock's
//! `us.anthropic.claude-…-v1:0`), a date suffix (`claude-sonnet-4-5-20250929`,
//! `gpt-4.1-2025-04-14`, Vertex's `@20250929`), `-latest`, or dots for
//! dashes in a Claude version (`claude-opus-4.7`) all name the same row.
//! `models` in the settings (`TANDEM_MODELS`, JSON) describes any other
//! model, or corrects a row: `{"qwen3-coder": {"contextWindow": 65536}}`.
//! A model neither knows works on safe defaults, and
//! [`ModelInfo::assumed`] says which were assumed (a run's first event
//! says it).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;


/// US dollars per million tokens (the cost estimate's rates; `prices` in
/// the settings overrides them).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Reading cached input.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Writing input to the cache (Anthropic charges extra; OpenAI does not).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

/// How hard a model thinks and works (`effort`, `--effort`): Anthropic's
/// `output_config.effort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effort {
    Low,
    Medium,
    High,
    XHigh,
    Max,
}

impl Effort {
    /// Every level, lowest first.
    pub const ALL: [Effort; 5] = [Effort::Low, Effort::Medium, Effort::High, Effort::XHigh, Effort::Max];
    /// The levels as the settings spell them, for messages.
    pub const NAMES: &'static str = "low, medium, high, xhigh or max";

    pub fn parse(text: &str) -> Option<Effort> {
        Effort::ALL.into_iter().find(|e| e.as_str().eq_ignore_ascii_case(text.trim()))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::XHigh => "xhigh",
            Effort::Max => "max",
        }
    }
}

/// How a model thinks, which decides the shape of the request's
/// `thinking` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thinking {
    /// `thinking: {"type": "adaptive"}` with `output_config.effort`; a
    /// thinking budget (`type: "enabled"`) is refused with a 400.
    /// `always_on`: the model thinks even when the request says nothing.
    Adaptive { always_on: bool },
    /// Adaptive thinking preferred; a budget still accepted (deprecated):
    /// the 4.6 models.
    AdaptiveOrBudget,
    /// Only `thinking: {"type": "enabled", "budget_tokens": N}`.
    Budget,
    /// No thinking.
    None,
}

impl Thinking {
    pub fn takes_budget(self) -> bool {
        matches!(self, Thinking::AdaptiveOrBudget | Thinking::Budget)
    }

    pub fn takes_adaptive(self) -> bool {
        matches!(self, Thinking::Adaptive { .. } | Thinking::AdaptiveOrBudget)
    }

    fn parse(text: &str) -> Option<Thinking> {
        match text {
            "adaptive" => Some(Thinking::Adaptive { always_on: false }),
            "budget" => Some(Thinking::Budget),
            "none" => Some(Thinking::None),
            _ => None,
        }
    }
}

/// What Tandem knows of one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// The table's name for it (`claude-opus-4-7`), or the name asked
    /// for when the table does not know it.
    pub name: String,
    pub context_window: u64,
    /// The most output tokens one response may have.
    pub max_output: u32,
    pub thinking: Thinking,
    /// The efforts it takes (empty: none).
    pub efforts: Vec<Effort>,
    /// It reads images.
    pub images: bool,
    /// It caches prompt prefixes (Anthropic's `cache_control`, OpenAI's
    /// automatic caching).
    pub caching: bool,
    /// An OpenAI reasoning model (GPT-5, the o-series): on the Responses
    /// API it is asked for reasoning summaries, which other models refuse.
    pub reasoning_summaries: bool,
    pub price: Option<Price>,
    /// What was assumed rather than known, in words ("a 32768-token
    /// window"); empty for a known model.
    pub assumed: Vec<String>,
}

impl ModelInfo {
    /// One sentence for the run's first event, when anything was assumed.
    pub fn assumption_note(&self) -> Option<String> {
        (!self.assumed.is_empty()).then(|| {
            format!(
                "{} is not in Tandem's model table, so it assumed {} (describe it in the `models` setting)",
                self.name,
                self.assumed.join(", ")
            )
        })
    }

    /// Whether `effort` can be sent to this model: `Err` says why not, and
    /// what it does take.
    pub fn check_effort(&self, effort: Effort) -> Result<(), String> {
        if self.efforts.contains(&effort) {
            return Ok(());
        }
        let takes = match self.efforts.as_slice() {
            [] => "takes no effort setting".to_string(),
            levels => format!("takes {}", levels.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")),
        };
        let other = if self.thinking.takes_budget() && self.efforts.is_empty() { "; use thinkingBudget for its thinking" } else { "" };
        Err(format!("effort \"{}\" is not one model {} takes: it {takes}{other}", effort.as_str(), self.name))
    }
}

/// One row of the built-in table.
struct Row {
    name: &'static str,
    window: u64,
    output: u32,
    thinking: Thinking,
    efforts: &'static [Effort],
    images: bool,
    price: Price,
}

const fn price(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price { input, output, cache_read: Some(cache_read), cache_write: Some(cache_write) }
}

use Effort::{High, Low, Max, Medium, XHigh};

const ALL_EFFORTS: &[Effort] = &[Low, Medium, High, XHigh, Max];
const UP_TO_MAX_NO_XHIGH: &[Effort] = &[Low, Medium, High, Max];
const UP_TO_HIGH: &[Effort] = &[Low, Medium, High];
const NO_EFFORT: &[Effort] = &[];

const ADAPTIVE: Thinking = Thinking::Adaptive { always_on: false };
const ALWAYS_ADAPTIVE: Thinking = Thinking::Adaptive { always_on: true };

const M: u64 = 1_000_000;

/// Anthropic's models (public model pages, standard tier, late 2026).
/// The 4.7 models and everything after take adaptive thinking only.
const CLAUDE: &[Row] = &[
    Row { name: "claude-fable-5-1", window: M, output: 128_000, thinking: ALWAYS_ADAPTIVE, efforts: ALL_EFFORTS, images: true, price: price(10.0, 50.0, 1.0, 12.5) },
    Row { name: "claude-opus-5-5", window: M, output: 128_000, thinking: ALWAYS_ADAPTIVE, efforts: ALL_EFFORTS, images: true, price: price(4.0, 20.0, 0.20, 5.0) },
    Row { name: "claude-sonnet-5-5", window: M, output: 128_000, thinking: ADAPTIVE, efforts: ALL_EFFORTS, images: true, price: price(2.0, 10.0, 0.20, 2.50) },
    // Haiku 5.5's prices rise past 100k prompt tokens; these are the first tier.
    Row { name: "claude-haiku-5-5", window: M, output: 128_000, thinking: ADAPTIVE, efforts: ALL_EFFORTS, images: true, price: price(0.10, 0.50, 0.01, 0.125) },
    Row { name: "claude-opus-5", window: M, output: 128_000, thinking: ADAPTIVE, efforts: ALL_EFFORTS, images: true, price: price(5.0, 25.0, 0.50, 6.25) },
    Row { name: "claude-sonnet-5", window: M, output: 128_000, thinking: ADAPTIVE, efforts: ALL_EFFORTS, images: true, price: price(2.0, 10.0, 0.20, 2.50) },
    Row { name: "claude-opus-4-8", window: M, output: 128_000, thinking: ADAPTIVE, efforts: ALL_EFFORTS, images: true, price: price(5.0, 25.0, 0.50, 6.25) },
    Row { name: "claude-opus-4-7", window: M, output: 128_000, thinking: ADAPTIVE, efforts: ALL_EFFORTS, images: true, price: price(5.0, 25.0, 0.50, 6.25) },
    Row { name: "claude-opus-4-6", window: M, output: 128_000, thinking: Thinking::AdaptiveOrBudget, efforts: UP_TO_MAX_NO_XHIGH, images: true, price: price(5.0, 25.0, 0.50, 6.25) },
    Row { name: "claude-sonnet-4-6", window: M, output: 64_000, thinking: Thinking::AdaptiveOrBudget, efforts: UP_TO_MAX_NO_XHIGH, images: true, price: price(3.0, 15.0, 0.30, 3.75) },
    Row { name: "claude-opus-4-5", window: 200_000, output: 64_000, thinking: Thinking::Budget, efforts: UP_TO_HIGH, images: true, price: price(5.0, 25.0, 0.50, 6.25) },
    Row { name: "claude-sonnet-4-5", window: 200_000, output: 64_000, thinking: Thinking::Budget, efforts: NO_EFFORT, images: true, price: price(3.0, 15.0, 0.30, 3.75) },
    Row { name: "claude-haiku-4-5", window: 200_000, output: 64_000, thinking: Thinking::Budget, efforts: NO_EFFORT, images: true, price: price(1.0, 5.0, 0.10, 1.25) },
    Row { name: "claude-opus-4-1", window: 200_000, output: 32_000, thinking: Thinking::Budget, efforts: NO_EFFORT, images: true, price: price(15.0, 75.0, 1.50, 18.75) },
    Row { name: "claude-opus-4", window: 200_000, output: 32_000, thinking: Thinking::Budget, efforts: NO_EFFORT, images: true, price: price(15.0, 75.0, 1.50, 18.75) },
    Row { name: "claude-sonnet-4", window: 200_000, output: 64_000, thinking: Thinking::Budget, efforts: NO_EFFORT, images: true, price: price(3.0, 15.0, 0.30, 3.75) },
    Row { name: "claude-3-7-sonnet", window: 200_000, output: 64_000, thinking: Thinking::Budget, efforts: NO_EFFORT, images: true, price: price(3.0, 15.0, 0.30, 3.75) },
    Row { name: "claude-3-5-sonnet", window: 200_000, output: 8_192, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(3.0, 15.0, 0.30, 3.75) },
    Row { name: "claude-3-5-haiku", window: 200_000, output: 8_192, thinking: Thinking::None, efforts: NO_EFFORT, images: false, price: price(0.80, 4.0, 0.08, 1.0) },
    Row { name: "claude-3-haiku", window: 200_000, output: 4_096, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(0.25, 1.25, 0.03, 0.30) },
    Row { name: "claude-3-opus", window: 200_000, output: 4_096, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(15.0, 75.0, 1.50, 18.75) },
];

/// OpenAI's models. Their reasoning is not steered from here (`effort` is
/// Anthropic's), so every row says no thinking style; caching is automatic.
const OPENAI: &[Row] = &[
    Row { name: "gpt-5.5", window: 1_050_000, output: 128_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(5.0, 30.0, 0.50, 5.0) },
    Row { name: "gpt-5.4", window: 1_050_000, output: 128_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(2.50, 15.0, 0.25, 2.50) },
    Row { name: "gpt-5.2", window: 400_000, output: 128_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(1.75, 14.0, 0.175, 1.75) },
    Row { name: "gpt-5.1", window: 400_000, output: 128_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(1.25, 10.0, 0.125, 1.25) },
    Row { name: "gpt-5", window: 400_000, output: 128_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(1.25, 10.0, 0.125, 1.25) },
    Row { name: "gpt-5-mini", window: 400_000, output: 128_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(0.25, 2.0, 0.025, 0.25) },
    Row { name: "gpt-5-nano", window: 400_000, output: 128_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(0.05, 0.40, 0.005, 0.05) },
    Row { name: "gpt-4.1", window: 1_047_576, output: 32_768, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(2.0, 8.0, 0.50, 2.0) },
    Row { name: "gpt-4.1-mini", window: 1_047_576, output: 32_768, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(0.40, 1.60, 0.10, 0.40) },
    Row { name: "gpt-4.1-nano", window: 1_047_576, output: 32_768, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(0.10, 0.40, 0.025, 0.10) },
    Row { name: "gpt-4o", window: 128_000, output: 16_384, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(2.50, 10.0, 1.25, 2.50) },
    Row { name: "gpt-4o-mini", window: 128_000, output: 16_384, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(0.15, 0.60, 0.075, 0.15) },
    Row { name: "o4-mini", window: 200_000, output: 100_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(1.10, 4.40, 0.275, 1.10) },
    Row { name: "o3", window: 200_000, output: 100_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(2.0, 8.0, 0.50, 2.0) },
    Row { name: "o3-mini", window: 200_000, output: 100_000, thinking: Thinking::None, efforts: NO_EFFORT, images: false, price: price(1.10, 4.40, 0.55, 1.10) },
    Row { name: "o1", window: 200_000, output: 100_000, thinking: Thinking::None, efforts: NO_EFFORT, images: true, price: price(15.0, 60.0, 7.50, 15.0) },
];

/// The current model of each Claude family, which the `sonnet`, `opus`
/// and `haiku` aliases name (Claude Code's aliases).
pub const CLAUDE_FAMILIES: [(&str, &str); 3] = [("sonnet", "claude-sonnet-5-5"), ("opus", "claude-opus-5-5"), ("haiku", "claude-haiku-5-5")];

/// For a model the table does not know: small enough for most local
/// servers' default.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 32_768;
/// The output limit assumed for a model the table does not know.
pub const DEFAULT_MAX_OUTPUT: u32 = 16_384;
/// The window every Claude model has at least.
const CLAUDE_MIN_WINDOW: u64 = 200_000;

/// The name a row is found by: no provider prefix, no date or version
/// suffix, lower case; a Claude version's dots as dashes.
pub fn canonical(model: &str) -> String {
    let mut name = model.trim().to_ascii_lowercase();
    // `anthropic/claude-…` (OpenRouter, LiteLLM), `openai/gpt-…`.
    if let Some((_, rest)) = name.rsplit_once('/') {
        name = rest.to_string();
    }
    // Bedrock: `us.anthropic.claude-…-v1:0`, `anthropic.claude-…`.
    if let Some(at) = name.find("anthropic.") {
        name = name[at + "anthropic.".len()..].to_string();
    }
    // Bedrock's `…-v1:0` (an Ollama tag such as `qwen3:32b` names another model and stays).
    if let Some((base, tail)) = name.rsplit_once(':') {
        if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) {
            name = base.to_string();
        }
    }
    // Vertex: `claude-…@20250929`.
    if let Some((base, _)) = name.split_once('@') {
        name = base.to_string();
    }
    // A context-window marker some tools append (`[1m]`).
    if let Some((base, _)) = name.split_once('[') {
        name = base.to_string();
    }
    if let Some(base) = name.strip_suffix("-latest") {
        name = base.to_string();
    }
    if name.starts_with("claude") {
        if let Some(base) = name.strip_suffix("-v1") {
            name = base.to_string();
        }
    }
    name = strip_date(&name);
    if name.starts_with("claude") {
        name = name.replace('.', "-");
    }
    name
}

/// `…-20250929` or `…-2025-04-14` off the end.
fn strip_date(name: &str) -> String {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((base, tail)) = name.rsplit_once('-') {
        if tail.len() == 8 && digits(tail) {
            return base.to_string();
        }
    }
    let parts: Vec<&str> = name.rsplitn(4, '-').collect();
    if let [day, month, year, base] = parts.as_slice() {
        if year.len() == 4 && month.len() == 2 && day.len() == 2 && digits(year) && digits(month) && digits(day) {
            return (*base).to_string();
        }
    }
    name.to_string()
}

fn from_row(row: &Row) -> ModelInfo {
    ModelInfo {
        name: row.name.to_string(),
        context_window: row.window,
        max_output: row.output,
        thinking: row.thinking,
        efforts: row.efforts.to_vec(),
        images: row.images,
        caching: true,
        reasoning_summaries: ["gpt-5", "o1", "o3", "o4"].iter().any(|family| row.name.starts_with(family)),
        price: Some(row.price),
        assumed: Vec::new(),
    }
}

/// A user's description of a model (`models` in the settings); every
/// field optional, over the table's row or the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelSpec {
    pub context_window: Option<u64>,
    pub max_output_tokens: Option<u32>,
    /// "adaptive", "budget" or "none".
    pub thinking: Option<String>,
    /// The efforts it takes.
    pub efforts: Option<Vec<String>>,
    pub images: Option<bool>,
    pub caching: Option<bool>,
}

/// The built-in table with the user's descriptions over it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelTable {
    /// By [`canonical`] name.
    specs: BTreeMap<String, ModelSpec>,
}

impl ModelTable {
    /// The `models` setting: `{"name": {"contextWindow": …, "maxOutputTokens": …,
    /// "thinking": "adaptive" | "budget" | "none", "efforts": [...], "images": bool,
    /// "caching": bool}}`.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let specs: BTreeMap<String, ModelSpec> = serde_json::from_value(value.clone()).map_err(|e| {
            format!("models must map model names to {{\"contextWindow\", \"maxOutputTokens\", \"thinking\", \"efforts\", \"images\", \"caching\"}}: {e}")
        })?;
        for (name, spec) in &specs {
            if let Some(window) = spec.context_window.filter(|w| *w < 1000) {
                return Err(format!("models.{name}.contextWindow: {window} is not a context window (at least 1000 tokens)"));
            }
            if spec.max_output_tokens == Some(0) {
                return Err(format!("models.{name}.maxOutputTokens: expected at least 1"));
            }
            if let Some(thinking) = spec.thinking.as_deref().filter(|t| Thinking::parse(t).is_none()) {
                return Err(format!("models.{name}.thinking: \"{thinking}\" is not a thinking style: use adaptive, budget or none"));
            }
            for effort in spec.efforts.iter().flatten() {
                if Effort::parse(effort).is_none() {
                    return Err(format!("models.{name}.efforts: \"{effort}\" is not an effort: use {}", Effort::NAMES));
                }
            }
        }
        Ok(ModelTable { specs: specs.into_iter().map(|(name, spec)| (canonical(&name), spec)).collect() })
    }

    /// Read `TANDEM_MODELS` (JSON) through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        match lookup("TANDEM_MODELS").filter(|v| !v.trim().is_empty()) {
            None => Ok(ModelTable::default()),
            Some(text) => {
                let value: Value = serde_json::from_str(&text).map_err(|e| format!("TANDEM_MODELS (models) is not JSON: {e}"))?;
                Self::from_json(&value)
            }
        }
    }

    /// What is known of `model`: its row, the user's description over it,
    /// or safe defaults (each one named in [`ModelInfo::assumed`]).
    pub fn info(&self, model: &str) -> ModelInfo {
        let name = canonical(model);
        let row = CLAUDE.iter().chain(OPENAI).find(|row| row.name == name);
        let spec = self.specs.get(&name);
        let mut info = match row {
            Some(row) => from_row(row),
            None => {
                let claude = name.starts_with("claude");
                ModelInfo {
                    name: model.trim().to_string(),
                    context_window: if claude { CLAUDE_MIN_WINDOW } else { DEFAULT_CONTEXT_WINDOW },
                    max_output: DEFAULT_MAX_OUTPUT,
                    thinking: Thinking::None,
                    efforts: Vec::new(),
                    images: false,
                    caching: claude,
                    reasoning_summaries: false,
                    price: None,
                    assumed: Vec::new(),
                }
            }
        };
        if let Some(spec) = spec {
            if let Some(window) = spec.context_window {
                info.context_window = window;
            }
            if let Some(output) = spec.max_output_tokens {
                info.max_output = output;
            }
            if let Some(thinking) = spec.thinking.as_deref().and_then(Thinking::parse) {
                info.thinking = thinking;
                if !thinking.takes_adaptive() && spec.efforts.is_none() {
                    info.efforts.clear();
                }
            }
            match &spec.efforts {
                Some(efforts) => info.efforts = efforts.iter().filter_map(|e| Effort::parse(e)).collect(),
                // An adaptive model described without its efforts takes them all.
                None if info.thinking.takes_adaptive() && info.efforts.is_empty() => info.efforts = Effort::ALL.to_vec(),
                None => {}
            }
            if let Some(images) = spec.images {
                info.images = images;
            }
            if let Some(caching) = spec.caching {
                info.caching = caching;
            }
        }
        if row.is_none() {
            let given = spec.cloned().unwrap_or_default();
            if given.context_window.is_none() {
                info.assumed.push(format!("a {}-token context window", info.context_window));
            }
            if given.max_output_tokens.is_none() {
                info.assumed.push(format!("at most {} output tokens", info.max_output));
            }
            if given.thinking.is_none() {
                info.assumed.push("no thinking unless asked".into());
            }
            if given.images.is_none() {
                info.assumed.push("no image input".into());
            }
        }
        info
    }
}

/// The model an alias (`sonnet`, `opus`, `haiku`) names, if it is one.
pub fn family_model(alias: &str) -> Option<&'static str> {
    CLAUDE_FAMILIES.iter().find(|(family, _)| alias.trim().eq_ignore_ascii_case(family)).map(|(_, model)| *model)
}

/// The built-in prices by table name, for the cost estimate.
pub fn prices() -> Vec<(String, Price)> {
    CLAUDE.iter().chain(OPENAI).map(|row| (row.name.to_string(), row.price)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_providers_and_gateways_spell_them_find_the_row() {
        let cases = [
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("anthropic/claude-opus-4-7", "claude-opus-4-7"),
            ("anthropic/claude-opus-4.7", "claude-opus-4-7"),
            ("us.anthropic.claude-opus-4-6-v1:0", "claude-opus-4-6"),
            ("anthropic.claude-opus-4-6-v1", "claude-opus-4-6"),
            ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
            ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
            ("Claude-Opus-5-5", "claude-opus-5-5"),
            ("claude-opus-4-6[1m]", "claude-opus-4-6"),
            ("gpt-4.1-2025-04-14", "gpt-4.1"),
            ("openai/gpt-5.5", "gpt-5.5"),
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ];
        let table = ModelTable::default();
        for (asked, row) in cases {
            let info = table.info(asked);
            assert_eq!(info.name, row, "{asked}");
            assert!(info.assumed.is_empty(), "{asked}: {:?}", info.assumed);
        }
        // A longer name is not its prefix's row: an unknown Opus is not Opus 4.
        assert!(!table.info("claude-opus-4-9").assumed.is_empty());
    }

    #[test]
    fn each_generation_thinks_its_own_way() {
        let table = ModelTable::default();
        let shape = |m: &str| {
            let info = table.info(m);
            (info.thinking, info.efforts.len(), info.context_window)
        };
        assert_eq!(shape("claude-opus-4-7"), (Thinking::Adaptive { always_on: false }, 5, M));
        assert_eq!(shape("claude-opus-5-5"), (Thinking::Adaptive { always_on: true }, 5, M));
        assert_eq!(shape("claude-sonnet-4-6"), (Thinking::AdaptiveOrBudget, 4, M));
        assert_eq!(shape("claude-sonnet-4-5"), (Thinking::Budget, 0, 200_000));
        assert_eq!(shape("claude-3-5-haiku"), (Thinking::None, 0, 200_000));
        let err = table.info("claude-sonnet-4-6").check_effort(Effort::XHigh).unwrap_err();
        assert_eq!(err, "effort \"xhigh\" is not one model claude-sonnet-4-6 takes: it takes low, medium, high, max");
        let err = table.info("claude-haiku-4-5").check_effort(Effort::Low).unwrap_err();
        assert_eq!(err, "effort \"low\" is not one model claude-haiku-4-5 takes: it takes no effort setting; use thinkingBudget for its thinking");
    }

    #[test]
    fn an_unknown_model_says_what_was_assumed_and_the_settings_describe_it() {
        let table = ModelTable::default();
        let local = table.info("qwen3-coder:30b");
        assert_eq!((local.context_window, local.max_output, local.thinking, local.images), (DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT, Thinking::None, false));
        expect_test::expect!["qwen3-coder:30b is not in Tandem's model table, so it assumed a 32768-token context window, at most 16384 output tokens, no thinking unless asked, no image input (describe it in the `models` setting)"]
            .assert_eq(&local.assumption_note().unwrap());
        assert_eq!(table.info("claude-next").context_window, 200_000);
        let table = ModelTable::from_json(&serde_json::json!({
            "qwen3-coder": {"contextWindow": 65536, "maxOutputTokens": 8192, "images": false, "thinking": "none"},
            "my-claude-gateway-alias": {"thinking": "adaptive"},
            "claude-sonnet-4-5": {"contextWindow": 1000000},
        }))
        .unwrap();
        let described = table.info("qwen3-coder");
        assert_eq!((described.context_window, described.max_output), (65536, 8192));
        assert!(described.assumed.is_empty(), "{:?}", described.assumed);
        let alias = table.info("my-claude-gateway-alias");
        assert_eq!((alias.thinking, alias.efforts.len()), (Thinking::Adaptive { always_on: false }, 5));
        assert_eq!(table.info("claude-sonnet-4-5-20250929").context_window, 1_000_000);
        for bad in [
            serde_json::json!({"m": {"contextWindow": 10}}),
            serde_json::json!({"m": {"thinking": "deep"}}),
            serde_json::json!({"m": {"efforts": ["extreme"]}}),
            serde_json::json!({"m": {"window": 1}}),
            serde_json::json!(["m"]),
        ] {
            assert!(ModelTable::from_json(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn aliases_name_the_current_models_and_every_row_has_a_price() {
        assert_eq!(family_model("Sonnet"), Some("claude-sonnet-5-5"));
        assert_eq!(family_model("gpt"), None);
        for (_, model) in CLAUDE_FAMILIES {
            assert!(ModelTable::default().info(model).assumed.is_empty(), "{model}");
        }
        assert_eq!(prices().len(), CLAUDE.len() + OPENAI.len());
        let table = ModelTable::default();
        assert!(table.info("gpt-5.5").reasoning_summaries && table.info("o4-mini").reasoning_summaries);
        assert!(!table.info("gpt-4.1").reasoning_summaries && !table.info("qwen3").reasoning_summaries);
    }
}
