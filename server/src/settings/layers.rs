//! The layers: which files are read (user, project, local), the editor's
//! layers over them, and how they merge, lowest first, key by key through
//! the [key table](super::keys).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::keys::{self, Apply};
use super::{Scope, Settings, SettingsProblem, Severity};

/// One layer of raw settings and where it came from.
#[derive(Debug, Clone)]
pub struct Layer {
    pub scope: Scope,
    /// A path, or "editor settings".
    pub source: String,
    pub value: Value,
    /// The user trusts what it says ([`crate::trust`]): the user's and the
    /// editor's layers always; a project file once its folder is trusted
    /// with this content. An untrusted layer may only tighten.
    pub trusted: bool,
}

impl Layer {
    /// A layer of the user's own (their file, their editor's settings).
    pub fn users(scope: Scope, source: impl Into<String>, value: Value) -> Self {
        Layer { scope, source: source.into(), value, trusted: true }
    }
}

/// The settings files of a workspace.
#[derive(Debug, Clone)]
pub struct SettingsFiles {
    /// The workspace root: the project's files must be inside it.
    pub root: PathBuf,
    /// `~/.tandem/settings.json` (`None` when there is no home folder).
    pub user: Option<PathBuf>,
    pub project: PathBuf,
    pub local: PathBuf,
    /// Where the trust of the project's files is looked up (each read).
    pub trust: crate::trust::TrustSource,
}

impl SettingsFiles {
    /// The files for a workspace rooted at `root`, with the user's home.
    pub fn for_workspace(root: &Path) -> Self {
        Self::with_home(root, dirs::home_dir().as_deref())
    }

    pub fn with_home(root: &Path, home: Option<&Path>) -> Self {
        SettingsFiles {
            root: root.to_path_buf(),
            user: home.map(|h| h.join(".tandem").join("settings.json")),
            project: root.join(".tandem").join("settings.json"),
            local: root.join(".tandem").join("settings.local.json"),
            trust: crate::trust::TrustSource::User,
        }
    }

    /// The same files, their trust taken from `trust`.
    pub fn with_trust(mut self, trust: crate::trust::TrustSource) -> Self {
        self.trust = trust;
        self
    }

    /// Read the three files: missing files are no layer, broken ones a
    /// problem. A project file is trusted when the bytes read are the ones
    /// the user trusted (the same bytes are parsed: nothing can change in
    /// between); an untrusted `.mcp.json` with servers is named too (the
    /// MCP loader leaves them out).
    pub fn read(&self) -> (Vec<Layer>, Vec<SettingsProblem>) {
        let mut layers = Vec::new();
        let mut problems = Vec::new();
        let trust = self.trust.trust(&self.root);
        let files = [(Scope::User, self.user.as_ref()), (Scope::Project, Some(&self.project)), (Scope::Local, Some(&self.local))];
        for (scope, path) in files {
            let Some(path) = path else { continue };
            // A project's file may link only to a file of the project; the
            // user's may live anywhere (a dotfiles checkout).
            let inside = scope.is_project().then_some(self.root.as_path());
            let read = crate::json_file::read_bytes(path, inside).and_then(|bytes| match bytes {
                Some(bytes) => crate::json_file::parse_object(&bytes).map(|value| value.map(|v| (v, bytes))),
                None => Ok(None),
            });
            match read {
                Ok(Some((value, bytes))) => {
                    let trusted = !scope.is_project() || trust.trusts(&self.relative(path), &bytes);
                    let source = self.source(path, scope, &trust, &bytes);
                    layers.push(Layer { scope, source, value, trusted });
                }
                Ok(None) => {}
                Err(err) => problems.push(SettingsProblem {
                    source: path.display().to_string(),
                    field: String::new(),
                    message: err.message,
                    severity: Severity::Fatal,
                    position: err.position,
                }),
            }
        }
        problems.extend(self.untrusted_mcp_servers(&trust));
        problems.extend(self.untrusted_agent_models(&trust));
        (layers, problems)
    }

    /// `path` relative to the root, as the trust store names it.
    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).unwrap_or(path).display().to_string()
    }

    /// How a layer names its file: the path, and for an untrusted file
    /// that was trusted before, that it changed since.
    fn source(&self, path: &Path, scope: Scope, trust: &crate::trust::Trust, bytes: &[u8]) -> String {
        let shown = path.display().to_string();
        if scope.is_project() && trust.file(&self.relative(path), bytes) == crate::trust::FileTrust::Changed {
            return format!("{shown} (changed since you trusted the folder)");
        }
        shown
    }

    /// The models the folder's untrusted agent files ask for, which their
    /// sub-agents do not get (they run on the session's model).
    fn untrusted_agent_models(&self, trust: &crate::trust::Trust) -> Vec<SettingsProblem> {
        let mut problems = Vec::new();
        for relative in crate::trust::agent_files(&self.root) {
            let path = self.root.join(&relative);
            let Ok(Some(bytes)) = crate::json_file::read_bytes(&path, Some(&self.root)) else { continue };
            if trust.trusts(&relative, &bytes) {
                continue;
            }
            let Some(model) = crate::tools::builtin::agent::untrusted_model(&bytes) else { continue };
            problems.push(SettingsProblem {
                source: self.source(&path, Scope::Project, trust, &bytes),
                field: "model".into(),
                message: format!("({model}; until the folder is trusted the agent runs on the session's model)"),
                severity: Severity::NeedsTrust,
                position: None,
            });
        }
        problems
    }

    /// The servers of an untrusted `.mcp.json`, which do not start.
    fn untrusted_mcp_servers(&self, trust: &crate::trust::Trust) -> Option<SettingsProblem> {
        let path = self.root.join(".mcp.json");
        let bytes = crate::json_file::read_bytes(&path, Some(&self.root)).ok()??;
        if trust.trusts(".mcp.json", &bytes) {
            return None;
        }
        let value = crate::json_file::parse_object(&bytes).ok()??;
        let servers = value.get("mcpServers")?.as_object()?;
        if servers.is_empty() {
            return None;
        }
        let names: Vec<&str> = servers.keys().map(String::as_str).collect();
        let source = self.source(&path, Scope::Project, trust, &bytes);
        Some(SettingsProblem {
            source,
            field: "mcpServers".into(),
            message: format!("({})", names.join(", ")),
            severity: Severity::NeedsTrust,
            position: None,
        })
    }
}

/// Why a settings file cannot be read, and where (line, column) when its
/// JSON does not parse.
pub(super) type ReadError = (String, Option<(usize, usize)>);

/// A settings file's JSON (`None`: no file, or an empty one), read
/// strictly ([`crate::json_file`]): not a regular file, over a megabyte, a
/// duplicate key or a symlink out of `inside` is an error.
pub(super) fn read_file(path: &Path, inside: Option<&Path>) -> Result<Option<Value>, ReadError> {
    crate::json_file::read_object(path, inside).map_err(|err| (err.message, err.position))
}

/// The `tandem` section of an editor settings object: `{"tandem": {...}}`
/// or the object itself.
pub fn editor_section(value: &Value) -> Value {
    match value.get("tandem") {
        Some(inner) if inner.is_object() => inner.clone(),
        _ if value.is_object() => value.clone(),
        _ => Value::Object(Map::new()),
    }
}

/// Merge layers (lowest first) into the effective settings, collecting a
/// problem for every field that cannot be used.
pub fn resolve(layers: &[Layer]) -> (Settings, Vec<SettingsProblem>) {
    let mut settings = Settings::default();
    let mut problems = Vec::new();
    for layer in layers {
        let Value::Object(map) = &layer.value else {
            if !layer.value.is_null() {
                problems.push(problem(layer, "", "expected a JSON object"));
            }
            continue;
        };
        for (key, value) in map {
            if is_unset(value) {
                continue;
            }
            match keys::find(key).map(|key| &key.apply) {
                // An editor sends its whole `tandem` section, with keys that
                // are the plugin's own (VS Code's `serverPath`).
                None if layer.scope == Scope::Editor => tracing::debug!(key, "editor setting not used by the server"),
                None => problems.push(problem(layer, key, &format!("unknown setting; known: {}", keys::names()))),
                // Until the folder is trusted, a project file sets only the
                // keys that tighten (and those only to tighten).
                Some(Apply::Field(_) | Apply::ReadElsewhere) if !layer.trusted => problems.push(needs_trust(layer, key, value)),
                Some(Apply::Field(apply)) => {
                    if let Err(message) = apply(&mut settings, layer, value) {
                        problems.push(problem(layer, key, &message));
                    }
                }
                Some(Apply::Tightening(apply)) => problems.extend(apply(&mut settings, layer, value)),
                Some(Apply::UserOnly(_)) if layer.scope.is_project() => problems.push(problem(
                    layer,
                    key,
                    "a project's settings cannot set it; set it in ~/.tandem/settings.json or the editor's settings",
                )),
                Some(Apply::UserOnly(apply)) => {
                    if let Err(message) = apply(&mut settings, layer, value) {
                        problems.push(problem(layer, key, &message));
                    }
                }
                Some(Apply::ReadElsewhere | Apply::Ignored) => {}
            }
        }
    }
    settings.inline_completions.users_variables = users_variables(layers, &settings);
    (settings, problems)
}

/// The variables inline completions read, as the layers that are not the
/// repository's set them (the process environment comes after, at lookup).
fn users_variables(layers: &[Layer], settings: &Settings) -> std::collections::BTreeMap<String, String> {
    let users;
    let from = if layers.iter().any(|layer| layer.scope.is_project()) {
        let theirs: Vec<Layer> = layers.iter().filter(|layer| !layer.scope.is_project()).cloned().collect();
        users = resolve(&theirs).0;
        &users
    } else {
        settings
    };
    crate::completion::config::VARIABLES
        .iter()
        .filter_map(|name| from.lookup_with(name, |_| None).map(|value| ((*name).to_string(), value)))
        .collect()
}

/// `null` and `""` mean "not set".
fn is_unset(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// A key an untrusted project file set, left out: what it asked for.
fn needs_trust(layer: &Layer, key: &str, value: &Value) -> SettingsProblem {
    SettingsProblem { source: layer.source.clone(), field: key.to_string(), message: keys::describe(value), severity: Severity::NeedsTrust, position: None }
}

fn problem(layer: &Layer, field: &str, message: &str) -> SettingsProblem {
    SettingsProblem {
        source: layer.source.clone(),
        field: field.to_string(),
        message: message.to_string(),
        severity: Severity::Ignored,
        position: None,
    }
}

/// Read the settings files of a workspace and merge them with the given
/// editor layers (lowest first).
pub fn load(files: &SettingsFiles, editor_layers: &[Value]) -> (Settings, Vec<SettingsProblem>) {
    let (mut layers, mut problems) = files.read();
    for value in editor_layers {
        if value.is_null() {
            continue;
        }
        layers.push(Layer::users(Scope::Editor, "editor settings", editor_section(value)));
    }
    let (settings, more) = resolve(&layers);
    problems.extend(more);
    (settings, problems)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::test_layer as layer;
    use super::*;
    use crate::tools::permission_mode::PermissionMode;
    use serde_json::json;

    #[test]
    fn each_settings_layer_overrides_the_one_below() {
        let home = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let files = SettingsFiles::with_home(root.path(), Some(home.path())).with_trust(crate::trust::TrustSource::Everything);
        std::fs::create_dir_all(home.path().join(".tandem")).unwrap();
        std::fs::create_dir_all(root.path().join(".tandem")).unwrap();
        let write = |path: &Path, v: Value| std::fs::write(path, v.to_string()).unwrap();
        write(
            files.user.as_ref().unwrap(),
            json!({"provider": "openai", "model": "user-model", "maxTurns": 7, "env": {"A": "user", "B": "user"},
                   "timeouts": {"promptMs": 1}, "permissions": {"allow": ["run_shell(make:*)"]}}),
        );
        write(&files.project, json!({"model": "project-model", "env": {"B": "project"}, "permissions": {"deny": ["read_file(./.env)"]}}));
        write(&files.local, json!({"model": "local-model", "permissionMode": "acceptEdits", "timeouts": {"verifyMs": 2}}));
        let (settings, problems) = load(&files, &[json!({"tandem": {"model": ""}}), json!({"maxTurns": 9})]);
        assert_eq!(problems, vec![]);
        assert_eq!(settings.provider.as_deref(), Some("openai"));
        // The editor's empty string is "not set": the local file's model stays.
        assert_eq!(settings.model.as_deref(), Some("local-model"));
        assert_eq!(settings.max_turns, Some(9));
        assert_eq!(settings.permission_mode(), PermissionMode::AcceptEdits);
        assert_eq!((settings.timeouts.prompt_ms, settings.timeouts.verify_ms, settings.timeouts.request_ms), (1, 2, 10_000));
        assert_eq!(settings.env.get("A").map(String::as_str), Some("user"));
        assert_eq!(settings.env.get("B").map(String::as_str), Some("project"));
        assert_eq!(settings.permissions.allow, vec![(Scope::User, "run_shell(make:*)".to_string())]);
        assert_eq!(settings.permissions.deny, vec![(Scope::Project, "read_file(./.env)".to_string())]);
    }

    #[test]
    fn a_settings_file_that_does_not_parse_is_fatal_and_named_by_line_and_column() {
        let root = tempfile::tempdir().unwrap();
        let files = SettingsFiles::with_home(root.path(), None).with_trust(crate::trust::TrustSource::Everything);
        std::fs::create_dir_all(root.path().join(".tandem")).unwrap();
        std::fs::write(&files.project, "{\"model\": \"x\",, }").unwrap();
        std::fs::write(&files.local, json!({"model": "kept", "permissionMode": "yolo", "maxTurns": -3}).to_string()).unwrap();
        let (settings, problems) = load(&files, &[]);
        assert_eq!(problems.iter().map(|p| p.is_fatal()).collect::<Vec<_>>(), [true, false, false]);
        assert_eq!(problems[0].position, Some((1, 15)));
        assert_eq!(settings.model.as_deref(), Some("kept"));
        assert_eq!(settings.permission_mode(), PermissionMode::Default);
        assert_eq!(settings.max_turns, None);
        let text: Vec<String> = problems.iter().map(|p| p.to_string().replace(&root.path().display().to_string(), "ROOT")).collect();
        expect_test::expect![[r#"
            [
                "ROOT/.tandem/settings.json:1:15: not valid JSON: key must be a string; its permission rules cannot be read, so nothing runs until the file is fixed",
                "ROOT/.tandem/settings.local.json: field \"permissionMode\": unknown permission mode \"yolo\": use one of default, acceptEdits, bypassPermissions, plan; the field is ignored",
                "ROOT/.tandem/settings.local.json: field \"maxTurns\": expected a positive whole number; the field is ignored",
            ]
        "#]]
        .assert_debug_eq(&text);
    }

    #[test]
    fn hooks_and_mcp_servers_keep_their_layers() {
        let (settings, problems) = resolve(&[
            layer(Scope::User, json!({"hooks": {"Stop": []}, "mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}})),
            layer(Scope::Project, json!({"hooks": {"PreToolUse": []}, "mcpServers": {"b": {"command": "z"}}})),
        ]);
        assert!(problems.is_empty());
        assert_eq!(settings.hooks.iter().map(|(s, _)| *s).collect::<Vec<_>>(), vec![Scope::User, Scope::Project]);
        assert_eq!(settings.mcp_servers.get("b"), Some(&json!({"command": "z"})));
        assert_eq!(settings.mcp_servers.len(), 2);
    }
}
