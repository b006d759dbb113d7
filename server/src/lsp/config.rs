//! Settings for a language-server session: `initializationOptions` (either
//! the settings object itself or `{"tandem": {...}}`), overlaid by the
//! client's `workspace/configuration` section `tandem`; both override the
//! environment (`TANDEM_PROVIDER`, `TANDEM_MODEL`).
//!
//! An empty or blank string means "not set", wherever it appears: editors
//! send their settings' empty defaults (VS Code sends `"provider": ""`),
//! and those must let the environment and the lower layer apply.
//!
//! ```json
//! {"tandem": {
//!   "provider": "scripted", "model": "…", "permissionMode": "acceptEdits",
//!   "saveDocuments": true,
//!   "timeouts": {"promptMs": 120000, "applyEditMs": 120000, "verifyMs": 5000}
//! }}
//! ```
//!
//! `saveDocuments: true` is the client's promise that it answers the
//! server → client request `tandem/saveDocuments` `{"uris": [...]}` by
//! saving those buffers (and sending `didSave`).

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

pub use crate::agent::permission::PermissionMode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Timeouts {
    /// Waiting for the user to answer a permission prompt or "Apply edit?".
    pub prompt_ms: u64,
    /// Waiting for the answer to `workspace/applyEdit` (the user may be
    /// looking at a refactor preview).
    pub apply_edit_ms: u64,
    /// After `applied: true`, waiting for the `didChange` that shows it.
    pub verify_ms: u64,
    /// Other requests: progress creation, configuration, saving.
    pub request_ms: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { prompt_ms: 120_000, apply_edit_ms: 120_000, verify_ms: 5_000, request_ms: 10_000 }
    }
}

impl Timeouts {
    pub fn prompt(&self) -> Duration {
        Duration::from_millis(self.prompt_ms)
    }
    pub fn apply_edit(&self) -> Duration {
        Duration::from_millis(self.apply_edit_ms)
    }
    pub fn verify(&self) -> Duration {
        Duration::from_millis(self.verify_ms)
    }
    pub fn request(&self) -> Duration {
        Duration::from_millis(self.request_ms)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    pub provider: Option<String>,
    pub model: Option<String>,
    /// The scripted provider's script file.
    pub script: Option<String>,
    pub permission_mode: Option<String>,
    pub max_turns: Option<usize>,
    pub save_documents: bool,
    pub timeouts: Timeouts,
}

impl Settings {
    pub fn permission_mode(&self) -> PermissionMode {
        self.permission_mode.as_deref().and_then(|m| m.parse().ok()).unwrap_or_default()
    }

    /// An environment lookup where these settings win over the process
    /// environment (for `ProviderConfig::from_lookup`).
    pub fn lookup(&self, name: &str) -> Option<String> {
        let ours = match name {
            "TANDEM_PROVIDER" => self.provider.clone(),
            "TANDEM_MODEL" => self.model.clone(),
            "TANDEM_SCRIPT" => self.script.clone(),
            _ => None,
        };
        ours.filter(|value| !value.trim().is_empty())
            .or_else(|| crate::environment::var(name).filter(|value| !value.trim().is_empty()))
    }
}

/// The settings object inside initialization options or a configuration
/// answer: `{"tandem": {...}}` or the object itself.
fn section(value: &Value) -> Value {
    match value.get("tandem") {
        Some(inner) if inner.is_object() => inner.clone(),
        _ if value.is_object() => value.clone(),
        _ => Value::Object(Default::default()),
    }
}

/// `null` and blank strings are "not set": they override nothing.
fn is_unset(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.trim().is_empty(),
        _ => false,
    }
}

/// Overlay `top` on `base`, object by object; unset values are skipped.
fn merge(base: &mut Value, top: Value) {
    match (base, top) {
        (Value::Object(base), Value::Object(top)) => {
            for (key, value) in top {
                if is_unset(&value) {
                    continue;
                }
                merge(base.entry(key).or_insert(Value::Null), value);
            }
        }
        (base, top) => *base = top,
    }
}

/// The raw layers, kept so a later `workspace/configuration` answer can be
/// overlaid on the initialization options again.
#[derive(Debug, Clone, Default)]
pub struct SettingsLayers {
    pub init: Value,
    pub configuration: Value,
}

impl SettingsLayers {
    /// The effective settings; an invalid layer is logged and ignored.
    pub fn resolve(&self) -> Settings {
        let mut merged = Value::Object(Default::default());
        for layer in [&self.init, &self.configuration] {
            let layer = section(layer);
            let mut candidate = merged.clone();
            merge(&mut candidate, layer);
            match serde_json::from_value::<Settings>(candidate.clone()) {
                Ok(_) => merged = candidate,
                Err(err) => tracing::warn!(%err, "ignoring invalid tandem settings"),
            }
        }
        serde_json::from_value(merged).unwrap_or_default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn configuration_overrides_initialization_options() {
        let layers = SettingsLayers {
            init: json!({"tandem": {"model": "a", "saveDocuments": true, "timeouts": {"verifyMs": 100}}}),
            configuration: json!({"model": "b", "permissionMode": "acceptEdits", "timeouts": {"promptMs": 7}}),
        };
        let settings = layers.resolve();
        assert_eq!(settings.model.as_deref(), Some("b"));
        assert!(settings.save_documents);
        assert_eq!(settings.permission_mode(), PermissionMode::AcceptEdits);
        assert_eq!((settings.timeouts.verify_ms, settings.timeouts.prompt_ms, settings.timeouts.apply_edit_ms), (100, 7, 120_000));
        let bad = SettingsLayers { init: json!({"saveDocuments": "yes"}), configuration: Value::Null };
        assert!(!bad.resolve().save_documents);
    }

    /// VS Code sends its settings' empty defaults; they must not hide the
    /// environment or the initialization options.
    #[test]
    fn empty_values_are_not_set() {
        let layers = SettingsLayers {
            init: json!({"tandem": {"model": "from-init", "provider": "", "permissionMode": ""}}),
            configuration: json!({"model": "", "provider": "  ", "script": "", "permissionMode": "", "timeouts": {}}),
        };
        let settings = layers.resolve();
        assert_eq!(settings.model.as_deref(), Some("from-init"));
        assert_eq!(settings.provider, None);
        assert_eq!(settings.script, None);
        assert_eq!(settings.permission_mode(), PermissionMode::Default);
        // An empty value set directly is not set either: the lookup falls
        // through to the process environment.
        let direct = Settings { provider: Some(String::new()), ..Settings::default() };
        assert_eq!(direct.lookup("TANDEM_PROVIDER"), std::env::var("TANDEM_PROVIDER").ok().filter(|v| !v.trim().is_empty()));
        assert_eq!(settings.lookup("TANDEM_MODEL").as_deref(), Some("from-init"));
    }
}
