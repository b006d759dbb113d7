//! Prices per million tokens for the known Anthropic and OpenAI models
//! (from the model table, [`crate::model::table`]), overridable in settings (`prices`, or `TANDEM_PRICES` as JSON):
//! `{"my-model": {"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 1.25}}`.
//! An override matches the longest entry a model's name starts with; the
//! table finds a model as providers spell it (`claude-sonnet-4-5-20250929`,
//! `anthropic/claude-opus-4-7` → their rows). Unknown models (a
//! local server's) have no estimate rather than a wrong one.

use crate::model::Usage;

pub use crate::model::table::Price;

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
            .or_else(|| crate::model::table::ModelTable::default().info(model).price)
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
        assert_eq!(table.price("anthropic/claude-opus-4-7").unwrap().output, 25.0);
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
        let p = Price { input: 3.0, output: 15.0, cache_read: Some(0.30), cache_write: Some(3.75) };
        // 1M input of which 600k read from cache and 200k written; 100k output.
        let usage = Usage { cache_read_input_tokens: 600_000, cache_creation_input_tokens: 200_000, ..Usage::new(1_000_000, 100_000) };
        let dollars = cost(&p, &usage);
        assert!((dollars - (0.2 * 3.0 + 0.6 * 0.30 + 0.2 * 3.75 + 0.1 * 15.0)).abs() < 1e-9, "{dollars}");
        assert_eq!(format_cost(0.01234), "$0.0123");
    }
}
