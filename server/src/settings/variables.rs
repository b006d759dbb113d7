//! The environment as the settings see it: the provider and context
//! configuration read variables (`TANDEM_PROVIDER`, `TANDEM_MODEL`, …,
//! `ANTHROPIC_BASE_URL`), and a settings key that stands for one (the
//! [key table](super::keys)'s `variable`) wins over the settings' `env`,
//! which wins over the process environment. Shell commands get the `env`
//! variables too.

use super::{keys, Settings};

impl Settings {
    /// What these settings add to a shell command's environment: the
    /// `env` variables (credentials among them are still removed by
    /// [`crate::environment::ChildEnv`]), and the `shell` setting.
    pub fn child_env(&self) -> crate::environment::ChildEnv {
        crate::environment::ChildEnv {
            allow: Vec::new(),
            set: self.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            per_child: None,
            shell: self.shell.clone(),
        }
    }

    /// A variable lookup for [`crate::agent::config::ProviderConfig::from_lookup`]:
    /// the settings keys first (`provider` → `TANDEM_PROVIDER`, …), then the
    /// settings' `env`, then the process environment.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.lookup_with(name, crate::environment::var)
    }

    /// The model inline completions go to, with its key: `inlineCompletions`
    /// and the variables of the user's own layers, then the process
    /// environment (never a project's `env` or `baseUrl`).
    pub fn inline_model(&self) -> Result<Option<crate::completion::ModelConfig>, String> {
        self.inline_model_with(crate::environment::var)
    }

    pub fn inline_model_with(&self, environment: impl Fn(&str) -> Option<String>) -> Result<Option<crate::completion::ModelConfig>, String> {
        let inline = &self.inline_completions;
        inline.resolve(|name| inline.users_variables.get(name).cloned().or_else(|| environment(name)))
    }

    /// Where the value [`Settings::lookup`] finds for the variable `name`
    /// was set, in words (`"provider" in ~/.tandem/settings.json`,
    /// `OPENAI_BASE_URL in the "env" of …`); `None` when it is the process
    /// environment's, or unset: the message then names the variable.
    pub fn origin_of(&self, name: &str) -> Option<String> {
        let not_empty = |v: &String| !v.trim().is_empty();
        let place = |source: &String| if source == "editor settings" { "the editor's settings".to_string() } else { source.clone() };
        if let Some(key) = keys::for_variable(name) {
            let ours = key.variable.as_ref().and_then(|variable| (variable.value)(self, name)).filter(not_empty);
            if ours.is_some() {
                return self.origins.get(key.name).map(|source| match source.starts_with("--") {
                    // A command-line flag is named as it was typed.
                    true => source.clone(),
                    false => format!("\"{}\" in {}", key.name, place(source)),
                });
            }
        }
        if self.env.get(name).is_some_and(not_empty) {
            return self.origins.get(&format!("env.{name}")).map(|source| format!("{name} in the \"env\" of {}", place(source)));
        }
        None
    }

    pub fn lookup_with(&self, name: &str, environment: impl Fn(&str) -> Option<String>) -> Option<String> {
        let ours = keys::for_variable(name).and_then(|key| key.variable.as_ref()).and_then(|variable| (variable.value)(self, name));
        let not_empty = |v: &String| !v.trim().is_empty();
        ours.filter(not_empty)
            .or_else(|| self.env.get(name).cloned().filter(not_empty))
            .or_else(|| environment(name).filter(not_empty))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::{load, resolve, test_layer as layer, Scope, SettingsFiles};
    use serde_json::json;

    #[test]
    fn session_settings_reach_the_session_config_through_lookup() {
        let root = tempfile::tempdir().unwrap();
        let files = SettingsFiles::with_home(root.path(), None).with_trust(crate::trust::TrustSource::Everything);
        let editor = json!({"contextWindow": 20000, "thinkingBudget": 2048, "prices": {"qwen": {"input": 0.5, "output": 1.0}}, "effort": "xhigh",
            "models": {"qwen2.5": {"maxOutputTokens": 4096}}, "customHeaders": {"x-gateway-key": "gk"}});
        let (settings, problems) = load(&files, &[editor]);
        assert_eq!(problems, vec![]);
        let lookup = |name: &str| settings.lookup_with(name, |_| None);
        let config = crate::thread::ContextConfig::from_lookup("qwen2.5", lookup).unwrap();
        assert_eq!(config.context_window, 20000);
        assert_eq!(config.prices.price("qwen2.5").map(|p| p.input), Some(0.5));
        let Ok(crate::agent::config::ProviderConfig::Anthropic(http)) =
            crate::agent::config::ProviderConfig::from_lookup(|n| if n == "TANDEM_PROVIDER" { Some("anthropic".into()) } else { lookup(n) })
        else {
            panic!("anthropic expected")
        };
        assert_eq!(http.thinking_budget, Some(2048));
        // The editor's `effort`, `models` and `customHeaders` reach the provider as the files' do.
        assert_eq!(http.effort, Some(crate::model::table::Effort::XHigh));
        assert_eq!(http.headers, vec![("x-gateway-key".to_string(), "gk".to_string())]);
        assert_eq!(http.info("qwen2.5").max_output, 4096);
        let (_, problems) = load(&files, &[json!({"contextWindow": 10, "thinkingBudget": 5, "prices": {"m": {"input": "x"}}})]);
        assert_eq!(problems.iter().map(|p| p.field.as_str()).collect::<Vec<_>>(), ["contextWindow", "thinkingBudget", "prices"]);
    }

    #[test]
    fn settings_win_over_their_env_and_the_environment() {
        let (settings, _) = resolve(&[layer(
            Scope::Local,
            json!({"provider": "openai", "env": {"OPENAI_BASE_URL": "http://settings", "TANDEM_MODEL": "from-env-map", "EMPTY": ""}}),
        )]);
        let environment = |name: &str| match name {
            "OPENAI_BASE_URL" => Some("http://process".to_string()),
            "TANDEM_PROVIDER" => Some("anthropic".to_string()),
            "EMPTY" => Some("process".to_string()),
            _ => None,
        };
        assert_eq!(settings.lookup_with("TANDEM_PROVIDER", environment).as_deref(), Some("openai"));
        assert_eq!(settings.lookup_with("OPENAI_BASE_URL", environment).as_deref(), Some("http://settings"));
        assert_eq!(settings.lookup_with("TANDEM_MODEL", environment).as_deref(), Some("from-env-map"));
        assert_eq!(settings.lookup_with("EMPTY", environment).as_deref(), Some("process"));
        let (editor, problems) = resolve(&[layer(Scope::Editor, json!({"serverPath": "/x/tandem", "baseUrl": "http://b", "provider": "anthropic"}))]);
        assert!(problems.is_empty(), "an editor's own keys are not problems: {problems:?}");
        assert_eq!(editor.lookup_with("TANDEM_BASE_URL", environment).as_deref(), Some("http://b"));
        assert_eq!(editor.lookup_with("OPENAI_BASE_URL", environment).as_deref(), Some("http://process"));
    }
}
