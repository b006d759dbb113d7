//! The layers: which files are read (user, project, local), the editor's
//! layers over them, and how they merge, lowest first, key by key through
//! the [key table](super::keys).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::keys::{self, Apply};
use super::{Scope, Settings, SettingsProblem, Severity};

/// Settings files larger than this are not read (they are not settings).
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// One layer of raw settings and where it came from.
#[derive(Debug, Clone)]
pub struct Layer {
    pub scope: Scope,
    /// A path, or "editor settings".
    pub source: String,
    pub value: Value,
}

/// The settings files of a workspace.
#[derive(Debug, Clone)]
pub struct SettingsFiles {
    /// `~/.tandem/settings.json` (`None` when there is no home folder).
    pub user: Option<PathBuf>,
    pub project: PathBuf,
    pub local: PathBuf,
}

impl SettingsFiles {
    /// The files for a workspace rooted at `root`, with the user's home.
    pub fn for_workspace(root: &Path) -> Self {
        Self::with_home(root, dirs::home_dir().as_deref())
    }

    pub fn with_home(root: &Path, home: Option<&Path>) -> Self {
        SettingsFiles {
            user: home.map(|h| h.join(".tandem").join("settings.json")),
            project: root.join(".tandem").join("settings.json"),
            local: root.join(".tandem").join("settings.local.json"),
        }
    }

    /// Read the three files: missing files are no layer, broken ones a problem.
    pub fn read(&self) -> (Vec<Layer>, Vec<SettingsProblem>) {
        let mut layers = Vec::new();
        let mut problems = Vec::new();
        let files = [(Scope::User, self.user.as_ref()), (Scope::Project, Some(&self.project)), (Scope::Local, Some(&self.local))];
        for (scope, path) in files {
            let Some(path) = path else { continue };
            match read_file(path) {
                Ok(Some(value)) => layers.push(Layer { scope, source: path.display().to_string(), value }),
                Ok(None) => {}
                Err((message, position)) => problems.push(SettingsProblem {
                    source: path.display().to_string(),
                    field: String::new(),
                    message,
                    severity: Severity::Fatal,
                    position,
                }),
            }
        }
        (layers, problems)
    }
}

/// Why a settings file cannot be read, and where (line, column) when its
/// JSON does not parse.
pub(super) type ReadError = (String, Option<(usize, usize)>);

/// A settings file's JSON (`None`: no file, or an empty one).
pub(super) fn read_file(path: &Path) -> Result<Option<Value>, ReadError> {
    let metadata = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err((format!("cannot read it: {err}"), None)),
    };
    if metadata.len() > MAX_SETTINGS_BYTES {
        return Err((format!("it is {} bytes; settings files are at most {MAX_SETTINGS_BYTES}", metadata.len()), None));
    }
    let text = std::fs::read_to_string(path).map_err(|err| (format!("cannot read it: {err}"), None))?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(&text).map_err(|err| {
        // serde_json's message ends with " at line L column C": the position is kept apart.
        let message = err.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        (format!("not valid JSON: {message}"), Some((err.line(), err.column())))
    })?;
    if !value.is_object() {
        return Err(("expected a JSON object at the top".into(), None));
    }
    Ok(Some(value))
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
                Some(Apply::Field(apply)) => {
                    if let Err(message) = apply(&mut settings, layer, value) {
                        problems.push(problem(layer, key, &message));
                    }
                }
                Some(Apply::Checked(apply)) => problems.extend(apply(&mut settings, layer, value)),
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
        layers.push(Layer { scope: Scope::Editor, source: "editor settings".into(), value: editor_section(value) });
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
        let files = SettingsFiles::with_home(root.path(), Some(home.path()));
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
        let files = SettingsFiles::with_home(root.path(), None);
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
