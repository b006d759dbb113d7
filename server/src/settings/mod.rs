//! Settings: one loader for every place a setting can come from, lowest
//! first (a later layer wins, key by key):
//!
//! | layer | file | who writes it |
//! |---|---|---|
//! | user | `~/.tandem/settings.json` | the user, for every project |
//! | project | `.tandem/settings.json` | the project, committed |
//! | local | `.tandem/settings.local.json` | the user, for this project (git-ignored) |
//! | editor | `initializationOptions`, then `workspace/configuration` section `tandem` | the editor |
//!
//! Every layer has the keys of the editor's `tandem` section (`provider`,
//! `model`, `script`, `permissionMode`, `maxTurns`, `maxTokens`,
//! `contextWindow`, `thinkingBudget`, `prices`, `saveDocuments`, `textInput`, `timeouts`) plus `env`, `permissions`, `sandbox`, `hooks` and
//! `mcpServers`. Objects merge key by key; the `permissions` lists are
//! concatenated; `hooks` are kept per layer (project hooks need consent, see
//! [`crate::consent`]); `mcpServers` merge by server name and are handed on as raw
//! JSON. An empty string means "not set".
//!
//! A field with a wrong value is dropped, and each problem is reported
//! naming the file and the field ([`SettingsProblem`]). One kind of
//! problem is fatal ([`Severity::Fatal`]): a file whose permission rules
//! cannot be read — it is not JSON (named by line and column), not an
//! object, unreadable, or its `permissions`, `deny` or `ask` lists or one of
//! their rules are malformed. Running without them would drop the user's
//! deny rules silently, so no run starts until the file is fixed. A rule
//! that names no known tool is a warning: it is kept and matches nothing.


use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

pub use crate::permissions::PermissionRules;
pub use crate::scope::Scope;
use crate::tools::permission_mode::PermissionMode;
pub use crate::sandbox::SandboxSettings;

/// Settings files larger than this are not read (they are not settings).
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// One setting that could not be used, and where it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsProblem {
    /// The file's path, or "editor settings".
    pub source: String,
    /// The field (`permissionMode`, `timeouts.promptMs`), empty for the whole file.
    pub field: String,
    pub message: String,
    pub severity: Severity,
    /// Where in the file (line, column, from 1), when the JSON did not parse.
    pub position: Option<(usize, usize)>,
}

/// What a problem does to the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Severity {
    /// The field (or file) is left out; the rest applies.
    #[default]
    Ignored,
    /// Kept as written, but it does nothing (a rule naming no known tool).
    Warning,
    /// The file's permission rules cannot be read: no run starts until it
    /// is fixed, so that its deny rules are never silently dropped.
    Fatal,
}

impl SettingsProblem {
    pub fn is_fatal(&self) -> bool {
        self.severity == Severity::Fatal
    }
}

impl std::fmt::Display for SettingsProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = match self.position {
            Some((line, column)) => format!("{}:{line}:{column}", self.source),
            None => self.source.clone(),
        };
        let field = if self.field.is_empty() { String::new() } else { format!("field \"{}\": ", self.field) };
        match self.severity {
            Severity::Fatal => write!(
                f,
                "{at}: {field}{}; its permission rules cannot be read, so nothing runs until the file is fixed",
                self.message
            ),
            Severity::Warning => write!(f, "{at}: {field}{}", self.message),
            Severity::Ignored if self.field.is_empty() => write!(f, "{at}: {}; the file is ignored", self.message),
            Severity::Ignored => write!(f, "{at}: {field}{}; the field is ignored", self.message),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
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
    /// Waiting for a language server's answer to a code intelligence
    /// question (the editor's, or one Tandem started).
    pub code_intel_ms: u64,
    /// After an edit, waiting for the language servers' diagnostics to
    /// settle (0: no diagnostics are added to edit results).
    pub diagnostics_ms: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { prompt_ms: 120_000, apply_edit_ms: 120_000, verify_ms: 5_000, request_ms: 10_000, code_intel_ms: 10_000, diagnostics_ms: 3_000 }
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
    pub fn code_intel(&self) -> Duration {
        Duration::from_millis(self.code_intel_ms)
    }
    /// The bound on the wait for diagnostics after an edit; `None`: off.
    pub fn diagnostics(&self) -> Option<Duration> {
        (self.diagnostics_ms > 0).then(|| Duration::from_millis(self.diagnostics_ms))
    }
}

/// The effective settings.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub provider: Option<String>,
    pub model: Option<String>,
    /// The provider's base URL: `ANTHROPIC_BASE_URL` when the provider is
    /// `anthropic`, else `OPENAI_BASE_URL` (as the VS Code extension's setting).
    pub base_url: Option<String>,
    /// The scripted provider's script file.
    pub script: Option<String>,
    pub permission_mode: Option<PermissionMode>,
    pub max_turns: Option<usize>,
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens, for models the table lacks.
    pub context_window: Option<u64>,
    /// Anthropic extended thinking budget in tokens (0: off).
    pub thinking_budget: Option<u32>,
    /// Price overrides per model (`session::pricing`), as raw JSON.
    pub prices: Option<Value>,
    pub save_documents: bool,
    /// The editor answers `tandem/textInput` (a line of text from the user).
    pub text_input: bool,
    /// The editor answers `tandem/codeIntel` from its language servers.
    pub code_intel: bool,
    pub timeouts: Timeouts,
    /// Variables for the run (`ANTHROPIC_BASE_URL`, …), as in Claude Code.
    pub env: BTreeMap<String, String>,
    pub permissions: PermissionRules,
    /// Each layer's `hooks` object as written (Claude Code's format).
    pub hooks: Vec<(Scope, Value)>,
    /// `mcpServers`, merged by server name, as raw JSON.
    pub mcp_servers: Map<String, Value>,
    /// `lspServers`, merged by language name, as raw JSON with the layer
    /// each came from (a project's need the user's consent to start).
    pub lsp_servers: BTreeMap<String, (Scope, Value)>,
    pub sandbox: SandboxSettings,
}

impl Settings {
    pub fn permission_mode(&self) -> PermissionMode {
        self.permission_mode.unwrap_or_default()
    }

    /// What these settings add to a shell command's environment: the
    /// `env` variables (credentials among them are still removed by
    /// [`crate::environment::ChildEnv`]).
    pub fn child_env(&self) -> crate::environment::ChildEnv {
        crate::environment::ChildEnv {
            allow: Vec::new(),
            set: self.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        }
    }

    fn provider_is(&self, name: &str) -> bool {
        self.provider.as_deref().is_some_and(|p| p.trim().eq_ignore_ascii_case(name))
    }

    /// A variable lookup for [`crate::agent::config::ProviderConfig::from_lookup`]:
    /// the settings keys first (`provider` → `TANDEM_PROVIDER`, …), then the
    /// settings' `env`, then the process environment.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.lookup_with(name, crate::environment::var)
    }

    pub fn lookup_with(&self, name: &str, environment: impl Fn(&str) -> Option<String>) -> Option<String> {
        let ours = match name {
            "TANDEM_PROVIDER" => self.provider.clone(),
            "TANDEM_MODEL" => self.model.clone(),
            "TANDEM_SCRIPT" => self.script.clone(),
            "TANDEM_MAX_TOKENS" => self.max_tokens.map(|n| n.to_string()),
            "TANDEM_CONTEXT_WINDOW" => self.context_window.map(|n| n.to_string()),
            "TANDEM_THINKING" => self.thinking_budget.map(|n| n.to_string()),
            "TANDEM_PRICES" => self.prices.as_ref().map(|v| v.to_string()),
            "ANTHROPIC_BASE_URL" if self.provider_is("anthropic") => self.base_url.clone(),
            "OPENAI_BASE_URL" if !self.provider_is("anthropic") => self.base_url.clone(),
            _ => None,
        };
        let not_empty = |v: &String| !v.trim().is_empty();
        ours.filter(not_empty)
            .or_else(|| self.env.get(name).cloned().filter(not_empty))
            .or_else(|| environment(name).filter(not_empty))
    }
}

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
type ReadError = (String, Option<(usize, usize)>);

/// A settings file's JSON (`None`: no file, or an empty one).
fn read_file(path: &Path) -> Result<Option<Value>, ReadError> {
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
            if layer.scope == Scope::Editor && !KNOWN_KEYS.contains(&key.as_str()) {
                // An editor sends its whole `tandem` section, with keys that
                // are the plugin's own (VS Code's `serverPath`).
                tracing::debug!(key, "editor setting not used by the server");
                continue;
            }
            if key == "permissions" {
                problems.extend(apply_permissions(&mut settings, layer, value));
            } else if let Err(message) = apply_field(&mut settings, layer, key, value) {
                problems.push(problem(layer, key, &message));
            }
        }
    }
    (settings, problems)
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

fn parse<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|e| e.to_string().replace('`', "\""))
}

fn apply_field(settings: &mut Settings, layer: &Layer, key: &str, value: &Value) -> Result<(), String> {
    match key {
        "provider" => {
            let provider: String = parse(value)?;
            match provider.trim().to_ascii_lowercase().as_str() {
                "anthropic" | "openai" | "openai-compatible" | "scripted" => settings.provider = Some(provider),
                _ => return Err(format!("\"{provider}\" is not a provider: use anthropic, openai or scripted")),
            }
        }
        "model" => settings.model = Some(parse(value)?),
        "baseUrl" => settings.base_url = Some(parse(value)?),
        "script" => settings.script = Some(parse(value)?),
        "permissionMode" => {
            let mode: String = parse(value)?;
            settings.permission_mode = Some(mode.parse()?);
        }
        "maxTurns" => {
            let n: usize = parse(value).map_err(|_| "expected a positive whole number".to_string())?;
            if n == 0 {
                return Err("expected a positive whole number".into());
            }
            settings.max_turns = Some(n);
        }
        "maxTokens" => {
            let n: u32 = parse(value).map_err(|_| "expected a positive whole number".to_string())?;
            if n == 0 {
                return Err("expected a positive whole number".into());
            }
            settings.max_tokens = Some(n);
        }
        "contextWindow" => {
            let n: u64 = parse(value).map_err(|_| "expected a whole number of tokens".to_string())?;
            if n < 1000 {
                return Err("expected a whole number of tokens, at least 1000".into());
            }
            settings.context_window = Some(n);
        }
        "thinkingBudget" => {
            let n: u32 = parse(value).map_err(|_| "expected a whole number of tokens (0: off)".to_string())?;
            if n != 0 && n < crate::agent::config::MIN_THINKING_BUDGET {
                return Err(format!("expected 0 (off) or at least {} tokens", crate::agent::config::MIN_THINKING_BUDGET));
            }
            settings.thinking_budget = Some(n);
        }
        "prices" => {
            crate::thread::pricing::PriceTable::from_json(value)?;
            settings.prices = Some(value.clone());
        }
        "saveDocuments" => settings.save_documents = parse(value)?,
        "textInput" => settings.text_input = parse(value)?,
        "codeIntel" => settings.code_intel = parse(value)?,
        "timeouts" => {
            let Value::Object(fields) = value else { return Err("expected an object".into()) };
            // Field by field, so one bad timeout does not discard the others.
            let mut merged = serde_json::to_value(TimeoutsJson::from(settings.timeouts)).unwrap_or(Value::Null);
            let mut bad = Vec::new();
            for (name, v) in fields {
                let mut candidate = merged.clone();
                candidate[name.as_str()] = v.clone();
                match parse::<Timeouts>(&candidate) {
                    Ok(_) => merged = candidate,
                    Err(err) => bad.push(format!("timeouts.{name}: {err}")),
                }
            }
            settings.timeouts = parse(&merged)?;
            if !bad.is_empty() {
                return Err(bad.join("; "));
            }
        }
        "env" => {
            let Value::Object(vars) = value else { return Err("expected an object of NAME: \"value\"".into()) };
            let mut bad = Vec::new();
            for (name, v) in vars {
                match v {
                    Value::String(s) if s.is_empty() => {}
                    Value::String(s) => {
                        settings.env.insert(name.clone(), s.clone());
                    }
                    Value::Number(n) => {
                        settings.env.insert(name.clone(), n.to_string());
                    }
                    Value::Bool(b) => {
                        settings.env.insert(name.clone(), b.to_string());
                    }
                    Value::Null => {}
                    _ => bad.push(name.clone()),
                }
            }
            if !bad.is_empty() {
                return Err(format!("env.{}: expected a string", bad.join(", env.")));
            }
        }
        // Read by `resolve`, whose problems may be fatal ([`apply_permissions`]).
        "permissions" => {}
        "sandbox" => apply_sandbox(settings, layer, value)?,
        "hooks" => {
            if !value.is_object() {
                return Err("expected an object of events: {\"PreToolUse\": [...]}".into());
            }
            settings.hooks.push((layer.scope, value.clone()));
        }
        // Read by the MCP layer from the files themselves (crate::mcp::config).
        "enableAllProjectMcpServers" | "enabledMcpjsonServers" | "mcpTimeouts" | "$schema" => {}
        "mcpServers" => {
            let Value::Object(servers) = value else { return Err("expected an object of servers by name".into()) };
            for (name, server) in servers {
                settings.mcp_servers.insert(name.clone(), server.clone());
            }
        }
        "lspServers" => {
            let Value::Object(servers) = value else {
                return Err("expected an object of languages: {\"python\": {\"command\": [\"pyright-langserver\", \"--stdio\"], \"filetypes\": [\"py\"]}}".into());
            };
            for (name, server) in servers {
                settings.lsp_servers.insert(name.clone(), (layer.scope, server.clone()));
            }
        }
        _ => return Err(format!("unknown setting; known: {}", KNOWN_KEYS.join(", "))),
    }
    Ok(())
}

pub const KNOWN_KEYS: [&str; 24] = [
    "provider", "model", "baseUrl", "script", "permissionMode", "maxTurns", "maxTokens", "contextWindow", "thinkingBudget", "prices",
    "saveDocuments", "textInput", "codeIntel", "lspServers", "timeouts", "env", "permissions", "sandbox", "hooks", "mcpServers",
    "enableAllProjectMcpServers", "enabledMcpjsonServers", "mcpTimeouts", "$schema",
];

/// `sandbox`: field by field, so one bad field keeps the others; what a
/// project's file may not loosen is refused by name.
fn apply_sandbox(settings: &mut Settings, layer: &Layer, value: &Value) -> Result<(), String> {
    let Value::Object(fields) = value else {
        return Err("expected {\"enabled\": true, \"network\": false, \"allowWrite\": [\"~/.cache/pip\"]}".into());
    };
    let from_project = layer.scope.is_project();
    let loosen = |field: &str| {
        format!("sandbox.{field}: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings")
    };
    let mut bad = Vec::new();
    for (name, v) in fields {
        match (name.as_str(), v) {
            (_, Value::Null) => {}
            ("enabled", Value::Bool(false)) if from_project => bad.push(loosen("enabled")),
            ("enabled", Value::Bool(on)) => settings.sandbox.enabled = *on,
            ("network", Value::Bool(true)) if from_project => bad.push(loosen("network")),
            ("network", Value::Bool(on)) => settings.sandbox.network = *on,
            ("enabled" | "network", _) => bad.push(format!("sandbox.{name}: expected true or false")),
            ("allowWrite", Value::Array(_)) if from_project => bad.push(loosen("allowWrite")),
            ("allowWrite", Value::Array(paths)) => {
                for path in paths {
                    match path.as_str().map(str::trim) {
                        Some(p) if p.starts_with('/') || p == "~" || p.starts_with("~/") => settings.sandbox.allow_write.push(p.to_string()),
                        _ => bad.push(format!("sandbox.allowWrite: {path} is not an absolute path or one starting with ~/")),
                    }
                }
            }
            ("allowWrite", _) => bad.push("sandbox.allowWrite: expected a list of paths such as \"~/.cache/pip\"".to_string()),
            (other, _) => bad.push(format!("sandbox.{other}: unknown; use enabled, network or allowWrite")),
        }
    }
    if bad.is_empty() { Ok(()) } else { Err(bad.join("; ")) }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TimeoutsJson {
    prompt_ms: u64,
    apply_edit_ms: u64,
    verify_ms: u64,
    request_ms: u64,
    code_intel_ms: u64,
    diagnostics_ms: u64,
}

impl From<Timeouts> for TimeoutsJson {
    fn from(t: Timeouts) -> Self {
        TimeoutsJson {
            prompt_ms: t.prompt_ms,
            apply_edit_ms: t.apply_edit_ms,
            verify_ms: t.verify_ms,
            request_ms: t.request_ms,
            code_intel_ms: t.code_intel_ms,
            diagnostics_ms: t.diagnostics_ms,
        }
    }
}

/// The `permissions` object of one layer. A malformed `deny` or `ask` list
/// (or rule in it) is fatal: running without it would run what the user
/// meant to stop. A malformed `allow` rule is left out (that only asks more).
fn apply_permissions(settings: &mut Settings, layer: &Layer, value: &Value) -> Vec<SettingsProblem> {
    let mut problems = Vec::new();
    let mut report = |field: String, message: String, severity: Severity| {
        problems.push(SettingsProblem { source: layer.source.clone(), field, message, severity, position: None });
    };
    let Value::Object(lists) = value else {
        report("permissions".into(), "expected {\"allow\": [...], \"ask\": [...], \"deny\": [...]}".into(), Severity::Fatal);
        return problems;
    };
    for (name, list) in lists {
        let field = format!("permissions.{name}");
        let severity = if name == "allow" { Severity::Ignored } else { Severity::Fatal };
        let target = match name.as_str() {
            "allow" => &mut settings.permissions.allow,
            "ask" => &mut settings.permissions.ask,
            "deny" => &mut settings.permissions.deny,
            // Claude Code's other permission keys are not used by Tandem.
            "defaultMode" => {
                match list.as_str().map(str::parse::<PermissionMode>) {
                    Some(Ok(mode)) => settings.permission_mode = Some(mode),
                    _ => report(field, format!("use one of {}", PermissionMode::NAMES.join(", ")), Severity::Ignored),
                }
                continue;
            }
            "additionalDirectories" | "disableBypassPermissionsMode" => {
                report(field, "a Claude Code setting Tandem does not use".into(), Severity::Warning);
                continue;
            }
            _ => {
                report(field, "unknown; use allow, ask or deny".into(), Severity::Ignored);
                continue;
            }
        };
        let Value::Array(rules) = list else {
            report(field, "expected a list of rules such as \"run_shell(cargo test:*)\"".into(), severity);
            continue;
        };
        for rule in rules {
            match rule.as_str() {
                Some(text) if !text.trim().is_empty() => match crate::permissions::Rule::parse(text) {
                    Ok(parsed) => {
                        target.push((layer.scope, text.trim().to_string()));
                        if let Some(warning) = crate::permissions::rules::unknown_tool(&parsed) {
                            report(field.clone(), warning, Severity::Warning);
                        }
                    }
                    Err(err) => report(field.clone(), format!("\"{text}\": {err}"), severity),
                },
                _ => report(field.clone(), format!("{rule} is not a rule string"), severity),
            }
        }
    }
    problems
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

/// "Always allow" saved: add `rules` to `permissions.allow` in the
/// workspace's `.tandem/settings.local.json`, keeping everything else in
/// it. A file that is not valid JSON is left alone (the error says so).
pub fn save_local_allow(root: &Path, rules: &[String]) -> Result<PathBuf, String> {
    let path = SettingsFiles::with_home(root, None).local;
    // The write happens only if the file still holds what was read here.
    let expected = std::fs::read(&path).ok().map(|bytes| crate::workspace::fingerprint(&bytes));
    let mut value = match read_file(&path) {
        Ok(Some(value)) => value,
        Ok(None) => Value::Object(Map::new()),
        Err((err, _)) => return Err(format!("{}: {err}; not changed", path.display())),
    };
    let Some(object) = value.as_object_mut() else { return Err(format!("{}: not a JSON object", path.display())) };
    let permissions = object.entry("permissions").or_insert_with(|| Value::Object(Map::new()));
    let Some(permissions) = permissions.as_object_mut() else {
        return Err(format!("{}: \"permissions\" is not an object; not changed", path.display()));
    };
    let allow = permissions.entry("allow").or_insert_with(|| Value::Array(Vec::new()));
    let Some(allow) = allow.as_array_mut() else {
        return Err(format!("{}: \"permissions.allow\" is not a list; not changed", path.display()));
    };
    for rule in rules {
        if !allow.iter().any(|r| r.as_str() == Some(rule)) {
            allow.push(Value::String(rule.clone()));
        }
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
    let dir = path.parent().unwrap_or(root);
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    crate::workspace::atomic_write(&path, format!("{text}\n").as_bytes(), expected)
        .map_err(|e| format!("cannot write {}: {e:?}", path.display()))?;
    Ok(path)
}

/// The project's local settings file as the permission layer's place for
/// "Always allow in this project" rules.
pub struct LocalAllowRules(pub PathBuf);

impl crate::permissions::ProjectRules for LocalAllowRules {
    fn save_allow(&self, rules: &[String]) -> Result<PathBuf, String> {
        save_local_allow(&self.0, rules)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layer(scope: Scope, value: Value) -> Layer {
        Layer { scope, source: format!("{scope:?}.json"), value }
    }

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
    fn session_settings_reach_the_session_config_through_lookup() {
        let root = tempfile::tempdir().unwrap();
        let files = SettingsFiles::with_home(root.path(), None);
        let editor = json!({"contextWindow": 20000, "thinkingBudget": 2048, "prices": {"qwen": {"input": 0.5, "output": 1.0}}});
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
        let (_, problems) = load(&files, &[json!({"contextWindow": 10, "thinkingBudget": 5, "prices": {"m": {"input": "x"}}})]);
        assert_eq!(problems.iter().map(|p| p.field.as_str()).collect::<Vec<_>>(), ["contextWindow", "thinkingBudget", "prices"]);
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
    fn unreadable_deny_and_ask_rules_are_fatal_unknown_tools_a_warning() {
        let (settings, problems) = resolve(&[layer(
            Scope::Project,
            json!({"permissions": {"deny": ["Bash(rm:*)", "run_shell(a && b)", "WebSearch"], "ask": "run_shell", "allow": ["Read(src/**)"]}}),
        )]);
        assert_eq!(settings.permissions.deny, vec![(Scope::Project, "Bash(rm:*)".into()), (Scope::Project, "WebSearch".into())]);
        assert_eq!(settings.permissions.allow, vec![(Scope::Project, "Read(src/**)".into())]);
        let text: Vec<String> = problems.iter().map(|p| format!("{:?}: {p}", p.severity)).collect();
        expect_test::expect![[r#"
            [
                "Fatal: Project.json: field \"permissions.deny\": \"run_shell(a && b)\": \"a && b\" is not one simple command (write `cargo test:*` or `git status`); its permission rules cannot be read, so nothing runs until the file is fixed",
                "Warning: Project.json: field \"permissions.deny\": \"WebSearch\" names no tool Tandem knows, so it matches nothing (tools: read_file, write_file, edit_file, list_files, grep_search, run_shell, web_fetch, tool_search, skill, agent, enter_plan_mode, exit_plan_mode; Claude Code's names and mcp__server__tool work too)",
                "Fatal: Project.json: field \"permissions.ask\": expected a list of rules such as \"run_shell(cargo test:*)\"; its permission rules cannot be read, so nothing runs until the file is fixed",
            ]
        "#]].assert_debug_eq(&text);
        let (_, problems) = resolve(&[layer(Scope::Local, json!({"permissions": ["run_shell"]}))]);
        assert!(problems.iter().all(|p| p.is_fatal()) && problems.len() == 1, "{problems:?}");
    }

    #[test]
    fn settings_problems_name_the_field() {
        let (settings, problems) = resolve(&[layer(
            Scope::Project,
            json!({"timeouts": {"promptMs": "soon", "verifyMs": 3}, "permissions": {"allow": ["run_shell(", "read_file"], "nope": []},
                   "env": {"OK": "1", "BAD": {"x": 1}}, "colour": "blue", "provider": "gemini"}),
        )]);
        assert_eq!(settings.timeouts.verify_ms, 3);
        assert_eq!(settings.permissions.allow, vec![(Scope::Project, "read_file".to_string())]);
        assert_eq!(settings.env.get("OK").map(String::as_str), Some("1"));
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        expect_test::expect![[r#"
            [
                "Project.json: field \"timeouts\": timeouts.promptMs: invalid type: string \"soon\", expected u64; the field is ignored",
                "Project.json: field \"permissions.allow\": \"run_shell(\": a rule is Tool or Tool(pattern), with the closing parenthesis last; the field is ignored",
                "Project.json: field \"permissions.nope\": unknown; use allow, ask or deny; the field is ignored",
                "Project.json: field \"env\": env.BAD: expected a string; the field is ignored",
                "Project.json: field \"colour\": unknown setting; known: provider, model, baseUrl, script, permissionMode, maxTurns, maxTokens, contextWindow, thinkingBudget, prices, saveDocuments, textInput, codeIntel, lspServers, timeouts, env, permissions, sandbox, hooks, mcpServers, enableAllProjectMcpServers, enabledMcpjsonServers, mcpTimeouts, $schema; the field is ignored",
                "Project.json: field \"provider\": \"gemini\" is not a provider: use anthropic, openai or scripted; the field is ignored",
            ]
        "#]]
        .assert_debug_eq(&text);
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
        assert_eq!(editor.lookup_with("ANTHROPIC_BASE_URL", environment).as_deref(), Some("http://b"));
        assert_eq!(editor.lookup_with("OPENAI_BASE_URL", environment).as_deref(), Some("http://process"));
    }

    #[test]
    fn always_allow_is_saved_to_the_local_settings_keeping_the_rest() {
        let root = tempfile::tempdir().unwrap();
        let local = root.path().join(".tandem/settings.local.json");
        let saved = save_local_allow(root.path(), &["run_shell(git push:*)".into()]).unwrap();
        assert_eq!(saved, local);
        std::fs::write(&local, r#"{"model": "m", "permissions": {"allow": ["run_shell(git push:*)"], "deny": ["x"]}}"#).unwrap();
        save_local_allow(root.path(), &["run_shell(git push:*)".into(), "web_fetch(domain:docs.rs)".into()]).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
        assert_eq!(value, json!({"model": "m", "permissions": {"allow": ["run_shell(git push:*)", "web_fetch(domain:docs.rs)"], "deny": ["x"]}}));
        std::fs::write(&local, "{broken").unwrap();
        assert!(save_local_allow(root.path(), &["x".into()]).unwrap_err().contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&local).unwrap(), "{broken");
    }

    #[test]
    fn sandbox_settings_merge_and_a_project_cannot_loosen_them() {
        let (settings, problems) = resolve(&[
            layer(Scope::User, json!({"sandbox": {"network": true, "allowWrite": ["~/.cache/pip"]}})),
            layer(Scope::Project, json!({"sandbox": {"enabled": false, "network": true, "allowWrite": ["/"]}})),
            layer(Scope::Local, json!({"sandbox": {"network": false}})),
            layer(Scope::Editor, json!({"sandbox": {"allowWrite": ["/opt/cache", "relative/path"], "colour": 1, "enabled": "yes"}})),
        ]);
        assert_eq!(
            settings.sandbox,
            SandboxSettings { enabled: true, network: false, allow_write: vec!["~/.cache/pip".into(), "/opt/cache".into()] }
        );
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        expect_test::expect![[r#"
            [
                "Project.json: field \"sandbox\": sandbox.enabled: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; sandbox.network: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; sandbox.allowWrite: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; the field is ignored",
                "Editor.json: field \"sandbox\": sandbox.allowWrite: \"relative/path\" is not an absolute path or one starting with ~/; sandbox.colour: unknown; use enabled, network or allowWrite; sandbox.enabled: expected true or false; the field is ignored",
            ]
        "#]]
        .assert_debug_eq(&text);
        let (off, problems) = resolve(&[layer(Scope::User, json!({"sandbox": {"enabled": false}}))]);
        assert!(problems.is_empty());
        assert!(!off.sandbox.enabled);
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
