//! Settings for a language-server session: the settings files of the
//! workspace (`~/.tandem/settings.json` < `.tandem/settings.json` <
//! `.tandem/settings.local.json`, see [`crate::settings`]), overlaid by
//! `initializationOptions` (either the settings object itself or
//! `{"tandem": {...}}`), overlaid by the client's `workspace/configuration`
//! section `tandem`. All of them override the environment. Each may say
//! which of its values the user set and which a folder set
//! (`{"layers": {"user": {...}, "folder": {...}}}`, see
//! [`crate::settings::editor_layers`]): a folder's may only tighten.
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
//! saving those buffers (and sending `didSave`); `textInput: true`, that it
//! answers `tandem/textInput` `{"prompt"}` with `{"text"}`, a line the user
//! typed (`null` when dismissed).

use serde_json::Value;

pub use crate::tools::permission_mode::PermissionMode;
pub use crate::settings::{Settings, SettingsFiles, SettingsProblem, Timeouts};

/// The editor's raw layers, kept so a later `workspace/configuration`
/// answer can be overlaid on the initialization options again.
#[derive(Debug, Clone, Default)]
pub struct SettingsLayers {
    pub init: Value,
    pub configuration: Value,
}

impl SettingsLayers {
    /// The effective settings from the editor's layers alone; problems are logged.
    pub fn resolve(&self) -> Settings {
        let (settings, problems) = self.resolve_with_files(None);
        problems.iter().for_each(|p| tracing::warn!("{p}"));
        settings
    }

    /// The effective settings: the workspace's settings files, then the
    /// editor's layers. Every unusable field is a problem, none is fatal.
    pub fn resolve_with_files(&self, files: Option<&SettingsFiles>) -> (Settings, Vec<SettingsProblem>) {
        let editor = [self.init.clone(), self.configuration.clone()];
        match files {
            Some(files) => crate::settings::load(files, &editor),
            None => crate::settings::load_editor(&editor),
        }
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

    #[test]
    fn editor_settings_override_the_settings_files() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join(".tandem")).unwrap();
        std::fs::write(root.path().join(".tandem/settings.json"), r#"{"model": "file", "maxTurns": 3, "permissionMode": "plan"}"#).unwrap();
        let files = SettingsFiles::with_home(root.path(), None).with_trust(crate::trust::TrustSource::Everything);
        let layers = SettingsLayers { init: json!({"tandem": {"model": "init"}}), configuration: json!({"permissionMode": ""}) };
        let (settings, problems) = layers.resolve_with_files(Some(&files));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((settings.model.as_deref(), settings.max_turns), (Some("init"), Some(3)));
        assert_eq!(settings.permission_mode(), PermissionMode::Plan);
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
