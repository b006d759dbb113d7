//! Settings: one loader for every place a setting can come from, lowest
//! first (a later layer wins, key by key):
//!
//! | layer | file | who writes it |
//! |---|---|---|
//! | user | `~/.tandem/settings.json` | the user, for every project |
//! | project | `.tandem/settings.json` | the project, committed |
//! | local | `.tandem/settings.local.json` | the user, for this project (git-ignored) |
//! | editor | `initializationOptions`, then `workspace/configuration` section `tandem` | the editor: `layers.user` (or an untagged section) is the user's, `layers.folder` a folder's, which may only tighten ([`editor_layers`]) |
//!
//! Every layer has the keys of the editor's `tandem` section (`provider`,
//! `model`, `script`, `permissionMode`, `maxTurns`, `maxTokens`,
//! `contextWindow`, `thinkingBudget`, `effort`, `models`, `prices`, `saveDocuments`, `textInput`, `timeouts`) plus `env`, `permissions`, `sandbox`, `hooks` and
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
//!
//! Split by phase: [`layers`] (which files, precedence, merging),
//! [`keys`] (the one key table: how each key is parsed, validated and
//! merged, the variable it stands for, where it is documented),
//! [`variables`] (the `TANDEM_*` lookups the provider and context
//! configuration read through) and [`writer`] (what Tandem writes to a
//! settings file).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::permissions::PermissionRules;
pub use crate::sandbox::SandboxSettings;
pub use crate::scope::Scope;
use crate::tools::permission_mode::PermissionMode;

mod keys;
mod layers;
mod variables;
mod writer;

pub use layers::{editor_layers, editor_section, load, load_editor, resolve, Layer, SettingsFiles, EDITOR_FOLDER_SOURCE};
pub use crate::trust::TrustSource;
pub use writer::{save_local_allow, LocalAllowRules};

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
    /// Left out because the folder's files are not trusted yet
    /// ([`crate::trust`]): a project file may only tighten until then.
    /// Front ends say these once, together ([`trust_notice`]).
    NeedsTrust,
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
            Severity::NeedsTrust => write!(f, "{at}: {field}{}: ignored until you trust this folder", self.message),
            Severity::Ignored if self.field.is_empty() => write!(f, "{at}: {}; the file is ignored", self.message),
            Severity::Ignored => write!(f, "{at}: {field}{}; the field is ignored", self.message),
        }
    }
}

/// The waits, in milliseconds (`timeouts` in the settings: they merge
/// field by field, through this type's JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
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
    /// `smallModel`: the model for compaction summaries and sub-agents
    /// that name none (unset: `model`).
    pub small_model: Option<String>,
    /// The chosen provider's base URL (`TANDEM_BASE_URL`): with no provider
    /// named, it chooses the one it belongs to (see `agent::config`).
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
    /// `effort` (`low` … `max`), as its name.
    pub effort: Option<String>,
    /// `models`: descriptions of models the table lacks, merged by name, as raw JSON.
    pub models: Option<Value>,
    /// `customHeaders`, from the user's own layers only, as raw JSON.
    pub custom_headers: Option<Value>,
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
    /// `autoAllowSandboxed`, from the user's own layers only: in the
    /// `default` mode, a shell command the sandbox contains runs without
    /// a question (as in `acceptEdits`).
    pub auto_allow_sandboxed: bool,
    /// `shell`, from the user's own layers only: the bash `run_shell` and
    /// hooks run with on Windows, instead of the Git Bash found on PATH.
    pub shell: Option<std::path::PathBuf>,
    /// `inlineCompletions`, merged field by field.
    pub inline_completions: crate::completion::InlineSettings,
    /// Where each key's value came from (the layer's source: a file's
    /// path, "editor settings", or a command-line flag), and `env.NAME`
    /// for each variable of `env`: what errors name ([`Settings::origin_of`]).
    pub origins: BTreeMap<String, String>,
}

impl Settings {
    pub fn permission_mode(&self) -> PermissionMode {
        self.permission_mode.unwrap_or_default()
    }
}

impl SettingsProblem {
    pub fn needs_trust(&self) -> bool {
        self.severity == Severity::NeedsTrust
    }
}

/// What the folder's untrusted files asked for and Tandem left out, in one
/// message with how to trust the folder (`None`: nothing was left out).
/// Every front end says it once: the terminal on stderr, the editor with
/// `window/showMessage`, an ACP client as a message, `tandem doctor`.
pub fn trust_notice(problems: &[SettingsProblem]) -> Option<String> {
    let ignored: Vec<&SettingsProblem> = problems.iter().filter(|p| p.needs_trust()).collect();
    if ignored.is_empty() {
        return None;
    }
    let mut by_file: Vec<(String, Vec<String>)> = Vec::new();
    for problem in ignored {
        let what = if problem.field.is_empty() { problem.message.clone() } else { format!("{} {}", problem.field, problem.message).trim().to_string() };
        match by_file.iter_mut().find(|(file, _)| *file == problem.source) {
            Some((_, items)) => items.push(what),
            None => by_file.push((problem.source.clone(), vec![what])),
        }
    }
    let mut text = String::from(
        "This folder's own settings are not trusted yet (they came with the folder), so Tandem ignored what they would loosen or start:",
    );
    for (file, items) in by_file {
        text.push_str(&format!("\n- {file}: {}", items.join("; ")));
    }
    text.push_str(&format!(
        "\nTheir deny and ask rules, a stricter mode and a stricter sandbox still apply. To let the rest apply: {}.",
        crate::trust::HOW_TO_TRUST
    ));
    Some(text)
}

/// A layer for tests, named after its scope (`Project.json`), trusted.
#[cfg(test)]
fn test_layer(scope: Scope, value: Value) -> Layer {
    Layer { scope, source: format!("{scope:?}.json"), value, trusted: true }
}

/// An untrusted project layer for tests.
#[cfg(test)]
fn untrusted_layer(scope: Scope, value: Value) -> Layer {
    Layer { scope, source: format!("{scope:?}.json"), value, trusted: false }
}
