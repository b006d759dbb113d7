//! Prices per million tokens for the known Anthropic and OpenAI models,
//! overridable in settings (`prices`, or `TANDEM_PRICES` as JSON):
//! `{"my-model": {"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 1.25}}`.
//! A model matches the longest table entry its name starts with
//! (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`). Unknown models (a
//! local server's) have no estimate rather than a wrong one.

use serde::Deserialize;

use crate::model::Usage;

/// US dollars per million tokens.
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

const fn price(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price { input, output, cache_read: Some(cache_read), cache_write: Some(cache_write) }
}

/// Public list prices (standard tier) as of late 2025.
const BUILTIN: &[(&str, Price)] = &[
    ("claude-opus-4-5", price(5.0, 25.0, 0.50, 6.25)),
    ("claude-opus-4-1", price(15.0, 75.0, 1.50, 18.75)),
    ("claude-opus-4", price(15.0, 75.0, 1.50, 18.75)),
    ("claude-sonnet-4", price(3.0, 15.0, 0.30, 3.75)),
    ("claude-3-7-sonnet", price(3.0, 15.0, 0.30, 3.75)),
    ("claude-3-5-sonnet", price(3.0, 15.0, 0.30, 3.75)),
    ("claude-haiku-4-5", price(1.0, 5.0, 0.10, 1.25)),
    ("claude-3-5-haiku", price(0.80, 4.0, 0.08, 1.0)),
    ("claude-3-haiku", price(0.25, 1.25, 0.03, 0.30)),
    ("claude-3-opus", price(15.0, 75.0, 1.50, 18.75)),
    ("gpt-5-nano", price(0.05, 0.40, 0.005, 0.05)),
    ("gpt-5-mini", price(0.25, 2.0, 0.025, 0.25)),
    ("gpt-5", price(1.25, 10.0, 0.125, 1.25)),
    ("gpt-4.1-nano", price(0.10, 0.40, 0.025, 0.10)),
    ("gpt-4.1-mini", price(0.40, 1.60, 0.10, 0.40)),
    ("gpt-4.1", price(2.0, 8.0, 0.50, 2.0)),
    ("gpt-4o-mini", price(0.15, 0.60, 0.075, 0.15)),
    ("gpt-4o", price(2.50, 10.0, 1.25, 2.50)),
    ("o4-mini", price(1.10, 4.40, 0.275, 1.10)),
    ("o3-mini", price(1.10, 4.40, 0.55, 1.10)),
    ("o3", price(2.0, 8.0, 0.50, 2.0)),
    ("o1", price(15.0, 60.0, 7.50, 15.0)),
];

/// The built-in prices plus the user's overrides (which win).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    overrides: Vec<(String, Price)>,
}

impl PriceTable {
    /// Overrides from a settings object `{"model": {"input": …, "output": …}}`.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, String> {
        let map: std::collections::BTreeMap<String, Price> = serde_json::from_value(value.clone())
            .map_err(|e| format!("prices must map model names to {{\"input\", \"output\", \"cacheRead\", \"cacheWrite\"}} per million tokens: {e}"))?;
        Ok(PriceTable { overrides: map.into_iter().collect() })
    }

    pub fn price(&self, model: &str) -> Option<Price> {
        longest_prefix(self.overrides.iter().map(|(k, v)| (k.as_str(), *v)), model)
            .or_else(|| longest_prefix(BUILTIN.iter().map(|(k, v)| (*k, *v)), model))
    }

    /// The cost of `usage` on `model`, in dollars; `None` for unknown models.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.price(model).map(|p| cost(&p, usage))
    }
}

fn longest_prefix<'a>(entries: impl Iterator<Item = (&'a str, Price)>, model: &str) -> Option<Price> {
    entries.filter(|(name, _)| model.starts_with(name)).max_by_key(|(name, _)| name.len()).map(|(_, p)| p)
}

/// `input_tokens` includes the cached tokens; each part is priced at its rate.
pub fn cost(price: &Price, usage: &Usage) -> f64 {
    let cached = usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    let plain = usage.input_tokens.saturating_sub(cached);
    let per = |tokens: u64, rate: f64| tokens as f64 * rate / 1_000_000.0;
    per(plain, price.input)
        + per(usage.cache_read_input_tokens, price.cache_read.unwrap_or(price.input))
        + per(usage.cache_creation_input_tokens, price.cache_write.unwrap_or(price.input))
        + per(usage.output_tokens, price.output)
}

/// `$0.0123`, with enough digits to tell small runs apart.
pub fn format_cost(dollars: f64) -> String {
    if dollars >= 1.0 { format!("${dollars:.2}") } else { format!("${dollars:.4}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_overrides_beat_the_table() {
        let table = PriceTable::default();
        assert_eq!(table.price("claude-sonnet-4-5-20250929").unwrap().input, 3.0);
        assert_eq!(table.price("gpt-4o-mini-2024-07-18").unwrap().input, 0.15);
        assert_eq!(table.price("gpt-4o").unwrap().input, 2.5);
        assert!(table.price("qwen2.5-coder-0.5b-instruct").is_none());
        let table = PriceTable::from_json(&serde_json::json!({"qwen": {"input": 0, "output": 0}, "gpt-4o": {"input": 1, "output": 2}})).unwrap();
        assert_eq!(table.cost("qwen2.5-coder", &Usage::new(1000, 1000)), Some(0.0));
        assert_eq!(table.price("gpt-4o-mini").unwrap().input, 1.0);
        assert!(PriceTable::from_json(&serde_json::json!({"m": {"input": "cheap"}})).is_err());
    }

    #[test]
    fn cached_tokens_are_priced_at_their_rates() {
        let p = price(3.0, 15.0, 0.30, 3.75);
        // 1M input of which 600k read from cache and 200k written; 100k output.
        let usage = Usage { cache_read_input_tokens: 600_000, cache_creation_input_tokens: 200_000, ..Usage::new(1_000_000, 100_000) };
        let dollars = cost(&p, &usage);
        assert!((dollars - (0.2 * 3.0 + 0.6 * 0.30 + 0.2 * 3.75 + 0.1 * 15.0)).abs() < 1e-9, "{dollars}");
        assert_eq!(format_cost(0.01234), "$0.0123");
    }
}
