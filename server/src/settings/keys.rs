//! The key table: every settings key Tandem knows, once — how a layer's
//! value is parsed, validated and merged into the [`Settings`], the
//! environment variable it stands for, and the docs page that documents
//! it. [`resolve`](super::resolve) reads a key only through this table,
//! so a key is known exactly when it is handled: adding one is adding an
//! entry (its docs page is checked to name it).

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Layer, Settings, SettingsProblem, Severity, Timeouts};
use crate::tools::permission_mode::PermissionMode;
use crate::tools::ports::network::{check_entry, NetworkMode, NetworkPolicy};

/// One settings key.
pub(super) struct Key {
    /// As written in a settings file (`permissionMode`).
    pub name: &'static str,
    pub apply: Apply,
    /// The variables the key stands for in
    /// [`Settings::lookup`](super::Settings::lookup), where it has any.
    pub variable: Option<Variable>,
    /// The page of `docs/` that documents the key (a test checks that it
    /// names the key).
    #[cfg_attr(not(test), allow(dead_code))]
    pub docs: &'static str,
}

/// How a layer's value of a key reaches the settings — and whether a
/// project's file may set it before the user trusts the folder
/// ([`crate::trust`]). Only [`Apply::Tightening`] keys may: every other
/// key of an untrusted project file is left out (and the user told), so a
/// key added to this table needs trust unless its entry says otherwise.
pub(super) enum Apply {
    /// Parsed and merged; an error drops the field (the message names why).
    /// Needs trust in a project file.
    Field(fn(&mut Settings, &Layer, &Value) -> Result<(), String>),
    /// A key an untrusted project file may set, to tighten only: the
    /// function reads [`Layer::trusted`] and keeps from an untrusted layer
    /// only what asks more or allows less (deny and ask rules, a stricter
    /// mode, a stricter sandbox), reporting the rest as
    /// [`Severity::NeedsTrust`]. Its problems have their own severity: a
    /// permission list that cannot be read is fatal.
    Tightening(fn(&mut Settings, &Layer, &Value) -> Vec<SettingsProblem>),
    /// A key only the user's own layers may set (their file, the editor's
    /// settings): a project's file — trusted or not — is refused by name.
    /// Where a request goes and what it carries (a gateway's headers) is
    /// the user's to say, never a repository's.
    UserOnly(fn(&mut Settings, &Layer, &Value) -> Result<(), String>),
    /// Accepted here and read by another module from the files themselves
    /// (`crate::mcp::config` reads the MCP approvals and timeouts, which it
    /// too takes only from trusted files). Needs trust in a project file.
    ReadElsewhere,
    /// Accepted and not used.
    Ignored,
}

/// The variables a key stands for, and its value as one of them (`None`:
/// not set, or not for this variable).
pub(super) struct Variable {
    pub names: &'static [&'static str],
    pub value: fn(&Settings, &str) -> Option<String>,
}

/// Every key, in the order the "unknown setting" problem lists them.
pub(super) const KEYS: &[Key] = &[
    Key {
        name: "provider",
        apply: Apply::Field(provider),
        variable: Some(Variable { names: &["TANDEM_PROVIDER"], value: |s, _| s.provider.clone() }),
        docs: "settings.md",
    },
    Key {
        name: "model",
        apply: Apply::Field(|s, _, v| {
            s.model = Some(parse(v)?);
            Ok(())
        }),
        variable: Some(Variable { names: &["TANDEM_MODEL"], value: |s, _| s.model.clone() }),
        docs: "settings.md",
    },
    Key {
        name: "smallModel",
        apply: Apply::Field(|s, _, v| {
            s.small_model = Some(parse(v)?);
            Ok(())
        }),
        variable: Some(Variable { names: &["TANDEM_SMALL_MODEL"], value: |s, _| s.small_model.clone() }),
        docs: "settings.md",
    },
    Key {
        name: "baseUrl",
        apply: Apply::Field(|s, _, v| {
            s.base_url = Some(parse(v)?);
            Ok(())
        }),
        // The chosen provider's base URL, whichever it is; with no provider
        // named it chooses one (agent::config: the one it belongs to).
        variable: Some(Variable { names: &["TANDEM_BASE_URL"], value: |s, _| s.base_url.clone() }),
        docs: "settings.md",
    },
    Key {
        name: "script",
        apply: Apply::Field(|s, _, v| {
            s.script = Some(parse(v)?);
            Ok(())
        }),
        variable: Some(Variable { names: &["TANDEM_SCRIPT"], value: |s, _| s.script.clone() }),
        docs: "settings.md",
    },
    Key { name: "permissionMode", apply: Apply::Tightening(permission_mode), variable: None, docs: "settings.md" },
    Key {
        name: "maxTurns",
        apply: Apply::Field(|s, _, v| {
            s.max_turns = Some(positive(v)?);
            Ok(())
        }),
        variable: None,
        docs: "settings.md",
    },
    Key {
        name: "maxTokens",
        apply: Apply::Field(|s, _, v| {
            s.max_tokens = Some(positive(v)?);
            Ok(())
        }),
        variable: Some(Variable { names: &["TANDEM_MAX_TOKENS"], value: |s, _| s.max_tokens.map(|n| n.to_string()) }),
        docs: "settings.md",
    },
    Key {
        name: "contextWindow",
        apply: Apply::Field(context_window),
        variable: Some(Variable { names: &["TANDEM_CONTEXT_WINDOW"], value: |s, _| s.context_window.map(|n| n.to_string()) }),
        docs: "threads.md",
    },
    Key {
        name: "thinkingBudget",
        apply: Apply::Field(thinking_budget),
        variable: Some(Variable { names: &["TANDEM_THINKING"], value: |s, _| s.thinking_budget.map(|n| n.to_string()) }),
        docs: "threads.md",
    },
    Key {
        name: "effort",
        apply: Apply::Field(|s, _, v| {
            let text: String = parse(v)?;
            let effort = crate::model::table::Effort::parse(&text)
                .ok_or_else(|| format!("\"{text}\" is not an effort: use {}", crate::model::table::Effort::NAMES))?;
            s.effort = Some(effort.as_str().to_string());
            Ok(())
        }),
        variable: Some(Variable { names: &["TANDEM_EFFORT"], value: |s, _| s.effort.clone() }),
        docs: "settings.md",
    },
    Key {
        name: "models",
        apply: Apply::Field(|s, _, v| {
            crate::model::table::ModelTable::from_json(v)?;
            // Merged by model name, a later layer's description winning.
            let merged = s.models.get_or_insert_with(|| Value::Object(Default::default()));
            if let (Value::Object(into), Value::Object(from)) = (merged, v) {
                into.extend(from.clone());
            }
            Ok(())
        }),
        variable: Some(Variable { names: &["TANDEM_MODELS"], value: |s, _| s.models.as_ref().map(Value::to_string) }),
        docs: "settings.md",
    },
    Key {
        name: "customHeaders",
        apply: Apply::UserOnly(|s, _, v| {
            crate::agent::config::parse_headers(&v.to_string())?;
            let merged = s.custom_headers.get_or_insert_with(|| Value::Object(Default::default()));
            if let (Value::Object(into), Value::Object(from)) = (merged, v) {
                into.extend(from.clone());
            }
            Ok(())
        }),
        variable: Some(Variable { names: &["TANDEM_CUSTOM_HEADERS"], value: |s, _| s.custom_headers.as_ref().map(Value::to_string) }),
        docs: "settings.md",
    },
    Key {
        name: "prices",
        apply: Apply::Field(|s, _, v| {
            crate::thread::pricing::PriceTable::from_json(v)?;
            s.prices = Some(v.clone());
            Ok(())
        }),
        variable: Some(Variable { names: &["TANDEM_PRICES"], value: |s, _| s.prices.as_ref().map(Value::to_string) }),
        docs: "threads.md",
    },
    Key {
        name: "saveDocuments",
        apply: Apply::Field(|s, _, v| {
            s.save_documents = parse(v)?;
            Ok(())
        }),
        variable: None,
        docs: "settings.md",
    },
    Key {
        name: "textInput",
        apply: Apply::Field(|s, _, v| {
            s.text_input = parse(v)?;
            Ok(())
        }),
        variable: None,
        docs: "protocol.md",
    },
    Key {
        name: "codeIntel",
        apply: Apply::Field(|s, _, v| {
            s.code_intel = parse(v)?;
            Ok(())
        }),
        variable: None,
        docs: "settings.md",
    },
    Key { name: "lspServers", apply: Apply::Field(lsp_servers), variable: None, docs: "settings.md" },
    Key { name: "timeouts", apply: Apply::Field(timeouts), variable: None, docs: "settings.md" },
    Key { name: "env", apply: Apply::Field(env), variable: None, docs: "settings.md" },
    Key { name: "permissions", apply: Apply::Tightening(permissions), variable: None, docs: "settings.md" },
    Key { name: "sandbox", apply: Apply::Tightening(sandbox), variable: None, docs: "settings.md" },
    // A project's file would turn questions off for its own commands.
    Key {
        name: "autoAllowSandboxed",
        apply: Apply::UserOnly(|s, _, v| {
            s.auto_allow_sandboxed = parse(v)?;
            Ok(())
        }),
        variable: None,
        docs: "permissions.md",
    },
    // The program every command and hook runs with: a repository's file
    // would choose what runs its commands.
    Key { name: "shell", apply: Apply::UserOnly(shell), variable: None, docs: "settings.md" },
    Key { name: "hooks", apply: Apply::Field(hooks), variable: None, docs: "settings.md" },
    Key { name: "mcpServers", apply: Apply::Field(mcp_servers), variable: None, docs: "settings.md" },
    Key { name: "inlineCompletions", apply: Apply::Field(inline_completions), variable: None, docs: "completions.md" },
    Key { name: "enableAllProjectMcpServers", apply: Apply::Tightening(|_, l, v| mcp_approval(l, "enableAllProjectMcpServers", v)), variable: None, docs: "mcp.md" },
    Key { name: "enabledMcpjsonServers", apply: Apply::Tightening(|_, l, v| mcp_approval(l, "enabledMcpjsonServers", v)), variable: None, docs: "mcp.md" },
    Key { name: "mcpTimeouts", apply: Apply::ReadElsewhere, variable: None, docs: "mcp.md" },
    // The JSON schema an editor validates the file against (Claude Code's
    // settings files name one).
    Key { name: "$schema", apply: Apply::Ignored, variable: None, docs: "settings.md" },
];

/// The key named `name`.
pub(super) fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|key| key.name == name)
}

/// The key that stands for the variable `name`.
pub(super) fn for_variable(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|key| key.variable.as_ref().is_some_and(|v| v.names.contains(&name)))
}

/// The known keys, for the "unknown setting" problem.
pub(super) fn names() -> String {
    KEYS.iter().map(|key| key.name).collect::<Vec<_>>().join(", ")
}

fn parse<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|e| e.to_string().replace('`', "\""))
}

/// A whole number above 0.
fn positive<T: DeserializeOwned + PartialEq + Default>(value: &Value) -> Result<T, String> {
    const MESSAGE: &str = "expected a positive whole number";
    let n: T = parse(value).map_err(|_| MESSAGE.to_string())?;
    if n == T::default() {
        return Err(MESSAGE.into());
    }
    Ok(n)
}

/// A problem of `layer`'s field.
fn problem_in(layer: &Layer, field: &str, message: String, severity: Severity) -> SettingsProblem {
    SettingsProblem { source: layer.source.clone(), field: field.to_string(), message, severity, position: None }
}

/// `permissionMode` (and `permissions.defaultMode`): an untrusted project
/// file may only lower the mode the layers below chose (`plan` < `default`
/// < `acceptEdits` < `bypassPermissions`).
fn permission_mode(settings: &mut Settings, layer: &Layer, value: &Value) -> Vec<SettingsProblem> {
    set_mode(settings, layer, "permissionMode", value).into_iter().collect()
}

fn set_mode(settings: &mut Settings, layer: &Layer, field: &str, value: &Value) -> Option<SettingsProblem> {
    let mode: PermissionMode = match parse::<String>(value).and_then(|text| text.parse()) {
        Ok(mode) => mode,
        Err(message) => return Some(problem_in(layer, field, message, Severity::Ignored)),
    };
    let below = settings.permission_mode.unwrap_or_default();
    if !layer.trusted && strictness(mode) < strictness(below) {
        return Some(problem_in(layer, field, format!("\"{}\" (looser than \"{}\")", mode.as_str(), below.as_str()), Severity::NeedsTrust));
    }
    settings.permission_mode = Some(mode);
    None
}

/// How strict a mode is: higher asks more.
fn strictness(mode: PermissionMode) -> u8 {
    match mode {
        PermissionMode::Plan => 3,
        PermissionMode::Default => 2,
        PermissionMode::AcceptEdits => 1,
        PermissionMode::BypassPermissions => 0,
    }
}

fn provider(settings: &mut Settings, _: &Layer, value: &Value) -> Result<(), String> {
    let provider: String = parse(value)?;
    match provider.trim().to_ascii_lowercase().as_str() {
        "anthropic" | "openai" | "openai-compatible" | "openai-responses" | "scripted" => settings.provider = Some(provider),
        _ => return Err(format!("\"{provider}\" is not a provider: use anthropic, openai, openai-responses or scripted")),
    }
    Ok(())
}

fn context_window(settings: &mut Settings, _: &Layer, value: &Value) -> Result<(), String> {
    let n: u64 = parse(value).map_err(|_| "expected a whole number of tokens".to_string())?;
    if n < 1000 {
        return Err("expected a whole number of tokens, at least 1000".into());
    }
    settings.context_window = Some(n);
    Ok(())
}

fn thinking_budget(settings: &mut Settings, _: &Layer, value: &Value) -> Result<(), String> {
    let n: u32 = parse(value).map_err(|_| "expected a whole number of tokens (0: off)".to_string())?;
    if n != 0 && n < crate::agent::config::MIN_THINKING_BUDGET {
        return Err(format!("expected 0 (off) or at least {} tokens", crate::agent::config::MIN_THINKING_BUDGET));
    }
    settings.thinking_budget = Some(n);
    Ok(())
}

/// `shell`: the bash `run_shell` and hooks run with on Windows, as an
/// absolute path (a relative one would be looked up in whatever folder
/// a command starts in). Whether the file is there is checked when a
/// command starts, where it says so ([`crate::platform::shell`]).
fn shell(settings: &mut Settings, _: &Layer, value: &Value) -> Result<(), String> {
    // (A blank value is no value: the layers leave it out before this.)
    let text: String = parse(value)?;
    let path = std::path::PathBuf::from(&text);
    if !path.is_absolute() {
        return Err(format!("\"{text}\" is not an absolute path: name the bash program with its whole path, such as \"C:/Program Files/Git/bin/bash.exe\""));
    }
    settings.shell = Some(path);
    Ok(())
}

/// `timeouts`: field by field, so one bad timeout does not discard the others.
fn timeouts(settings: &mut Settings, _: &Layer, value: &Value) -> Result<(), String> {
    let Value::Object(fields) = value else { return Err("expected an object".into()) };
    let mut merged = serde_json::to_value(settings.timeouts).unwrap_or(Value::Null);
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
    if bad.is_empty() { Ok(()) } else { Err(bad.join("; ")) }
}

/// Variables a project's `env` may not set: what a request to the model
/// carries besides the prompt (a gateway's bearer token, its headers) is
/// the user's to say.
pub(super) const USER_ONLY_VARIABLES: &[&str] = &["ANTHROPIC_AUTH_TOKEN", "TANDEM_CUSTOM_HEADERS"];

/// `env`: strings, numbers and booleans, each kept as its text.
fn env(settings: &mut Settings, layer: &Layer, value: &Value) -> Result<(), String> {
    let Value::Object(vars) = value else { return Err("expected an object of NAME: \"value\"".into()) };
    let mut bad = Vec::new();
    let mut refused = Vec::new();
    for (name, v) in vars {
        if layer.scope.is_project() && USER_ONLY_VARIABLES.contains(&name.as_str()) {
            refused.push(format!("env.{name}: a project's settings cannot set it; set it in ~/.tandem/settings.json, the editor's settings or the environment"));
            continue;
        }
        let text = match v {
            Value::Null => continue,
            Value::String(s) if s.is_empty() => continue,
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => {
                bad.push(name.clone());
                continue;
            }
        };
        settings.env.insert(name.clone(), text);
        settings.origins.insert(format!("env.{name}"), layer.source.clone());
    }
    if !bad.is_empty() {
        refused.push(format!("env.{}: expected a string", bad.join(", env.")));
    }
    if refused.is_empty() { Ok(()) } else { Err(refused.join("; ")) }
}

/// `enableAllProjectMcpServers`, `enabledMcpjsonServers`: read by
/// `crate::mcp::config` from `~/.tandem/settings.json` only. In a folder's
/// file, trusted or not, they approve nothing (a repository would approve
/// its own servers), which the user is told.
fn mcp_approval(layer: &Layer, field: &str, value: &Value) -> Vec<SettingsProblem> {
    if !layer.scope.is_project() {
        return Vec::new();
    }
    let message = format!(
        "{}: a folder's files cannot approve the folder's MCP servers; approve each in the editor's question, with --mcp-approve NAME, or in ~/.tandem/settings.json",
        describe(value)
    );
    vec![problem_in(layer, field, message, Severity::Ignored)]
}

/// `hooks`: kept per layer as written (a project's need consent).
fn hooks(settings: &mut Settings, layer: &Layer, value: &Value) -> Result<(), String> {
    if !value.is_object() {
        return Err("expected an object of events: {\"PreToolUse\": [...]}".into());
    }
    settings.hooks.push((layer.scope, value.clone()));
    Ok(())
}

/// `mcpServers`: merged by server name, handed on as raw JSON.
fn mcp_servers(settings: &mut Settings, _: &Layer, value: &Value) -> Result<(), String> {
    let Value::Object(servers) = value else { return Err("expected an object of servers by name".into()) };
    for (name, server) in servers {
        settings.mcp_servers.insert(name.clone(), server.clone());
    }
    Ok(())
}

/// `lspServers`: merged by language name, each with the layer it came from.
fn lsp_servers(settings: &mut Settings, layer: &Layer, value: &Value) -> Result<(), String> {
    let Value::Object(servers) = value else {
        return Err("expected an object of languages: {\"python\": {\"command\": [\"pyright-langserver\", \"--stdio\"], \"filetypes\": [\"py\"]}}".into());
    };
    for (name, server) in servers {
        settings.lsp_servers.insert(name.clone(), (layer.scope, server.clone()));
    }
    Ok(())
}

/// `sandbox`: a project's file may tighten it, trusted or not (and never
/// loosen it: see [`sandbox_fields`]).
fn sandbox(settings: &mut Settings, layer: &Layer, value: &Value) -> Vec<SettingsProblem> {
    match sandbox_fields(settings, layer, value) {
        Ok(()) => Vec::new(),
        Err(message) => vec![problem_in(layer, "sandbox", message, Severity::Ignored)],
    }
}

/// `sandbox`: field by field, so one bad field keeps the others; what a
/// project's file may not loosen is refused by name.
fn sandbox_fields(settings: &mut Settings, layer: &Layer, value: &Value) -> Result<(), String> {
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
            ("network", Value::Bool(on)) => settings.sandbox.network.mode = if *on { NetworkMode::On } else { NetworkMode::Off },
            ("network", Value::Object(lists)) => network_lists(&mut settings.sandbox.network, lists, from_project, &loosen, &mut bad),
            ("network", _) => bad.push(NETWORK_SHAPE.to_string()),
            ("enabled", _) => bad.push(format!("sandbox.{name}: expected true or false")),
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
            // What unasked commands see of the home folder: the user's to
            // widen, never a repository's (trusted or not).
            ("allowRead", Value::Array(_)) if from_project => bad.push(loosen("allowRead")),
            ("allowRead", Value::Array(paths)) => {
                for path in paths {
                    match path.as_str().map(str::trim) {
                        Some(p) if p.starts_with("~/") && p.len() > 2 && !p.split('/').any(|part| part == "..") => {
                            settings.sandbox.allow_read.push(p.to_string());
                        }
                        _ => bad.push(format!(
                            "sandbox.allowRead: {path} is not a path in the home folder such as \"~/.config/mytool\" (outside the home folder, what is not masked is readable already)"
                        )),
                    }
                }
            }
            ("allowRead", _) => bad.push("sandbox.allowRead: expected a list of paths such as \"~/.config/mytool\"".to_string()),
            (other, _) => bad.push(format!("sandbox.{other}: unknown; use enabled, network, allowWrite or allowRead")),
        }
    }
    if bad.is_empty() { Ok(()) } else { Err(bad.join("; ")) }
}

const NETWORK_SHAPE: &str = "sandbox.network: expected true, false or {\"allow\": [\"pypi.org\", \"*.npmjs.org\"], \"deny\": [...], \"allowLocal\": false}";

/// `sandbox.network` as lists: a user's layer lists what approved commands
/// may reach (each layer's entries added to the ones below); a project's
/// may only add to `deny` (an empty `allow` or `"allowLocal": false` is no
/// loosening either).
fn network_lists(
    network: &mut NetworkPolicy,
    lists: &serde_json::Map<String, Value>,
    from_project: bool,
    loosen: &dyn Fn(&str) -> String,
    bad: &mut Vec<String>,
) {
    let hosts = |field: &str, value: &Value, bad: &mut Vec<String>| -> Vec<String> {
        let Value::Array(entries) = value else {
            bad.push(format!("sandbox.network.{field}: expected a list of hosts such as [\"pypi.org\", \"*.npmjs.org\"]"));
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in entries {
            match entry.as_str().map(str::trim) {
                Some(host) => match check_entry(host) {
                    Ok(()) => out.push(host.to_ascii_lowercase()),
                    Err(why) => bad.push(format!("sandbox.network.{field}: {why}")),
                },
                None => bad.push(format!("sandbox.network.{field}: {entry} is not a host name")),
            }
        }
        out
    };
    for (name, value) in lists {
        match (name.as_str(), value) {
            (_, Value::Null) => {}
            ("deny", _) => network.deny.extend(hosts("deny", value, bad)),
            ("allow", Value::Array(entries)) if from_project && !entries.is_empty() => bad.push(loosen("network.allow")),
            ("allow", _) if from_project => {}
            ("allow", _) => {
                network.allow.extend(hosts("allow", value, bad));
                network.mode = NetworkMode::Listed;
            }
            ("allowLocal", Value::Bool(true)) if from_project => bad.push(loosen("network.allowLocal")),
            ("allowLocal", Value::Bool(on)) => network.allow_local = *on,
            ("allowLocal", _) => bad.push("sandbox.network.allowLocal: expected true or false".to_string()),
            (other, _) => bad.push(format!("sandbox.network.{other}: unknown; use allow, deny or allowLocal")),
        }
    }
}

/// `inlineCompletions`: field by field, so one bad field keeps the others.
/// A project's files may not turn completions on or choose where the
/// document's text is sent (that needs the user's own settings); they may
/// turn them off and tune the rest.
fn inline_completions(settings: &mut Settings, layer: &Layer, value: &Value) -> Result<(), String> {
    use crate::completion::config::{Api, MAX_MAX_TOKENS};
    let Value::Object(fields) = value else {
        return Err("expected {\"enabled\": true, \"provider\": \"llama.cpp\", \"baseUrl\": \"http://127.0.0.1:8012\"}".into());
    };
    let from_project = layer.scope.is_project();
    let not_from_project = |field: &str| {
        format!("inlineCompletions.{field}: a project's settings cannot turn inline completions on or choose their model; set it in ~/.tandem/settings.json or the editor's settings")
    };
    let target = &mut settings.inline_completions;
    let mut bad = Vec::new();
    for (name, v) in fields {
        let field = format!("inlineCompletions.{name}");
        let number = |max: u64| v.as_u64().filter(|n| *n <= max).ok_or_else(|| format!("{field}: expected a whole number up to {max}"));
        match (name.as_str(), v) {
            (_, Value::Null) => {}
            ("enabled" | "nextEdits", Value::Bool(true)) if from_project => bad.push(not_from_project(name)),
            ("provider" | "baseUrl" | "model", _) if from_project => bad.push(not_from_project(name)),
            ("enabled", Value::Bool(on)) => target.enabled = *on,
            ("nextEdits", Value::Bool(on)) => target.next_edits = *on,
            ("enabled" | "nextEdits", _) => bad.push(format!("{field}: expected true or false")),
            ("provider", Value::String(name)) => match Api::parse(name) {
                Some(api) => target.api = Some(api),
                None => bad.push(format!("{field}: \"{name}\" is not a completion provider: use {}", Api::NAMES)),
            },
            ("baseUrl", Value::String(url)) if url.trim().is_empty() => {}
            ("baseUrl", Value::String(url)) => match url::Url::parse(url.trim()) {
                Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => target.base_url = Some(url.trim().to_string()),
                _ => bad.push(format!("{field}: \"{url}\" is not an http:// or https:// address")),
            },
            ("model", Value::String(model)) if model.trim().is_empty() => {}
            ("model", Value::String(model)) => target.model = Some(model.trim().to_string()),
            ("provider" | "baseUrl" | "model", _) => bad.push(format!("{field}: expected a string")),
            ("debounceMs", _) => match number(5_000) {
                Ok(n) => target.debounce_ms = n,
                Err(e) => bad.push(e),
            },
            ("timeoutMs", _) => match number(600_000).and_then(|n| if n == 0 { Err(format!("{field}: expected at least 1")) } else { Ok(n) }) {
                Ok(n) => target.timeout_ms = n,
                Err(e) => bad.push(e),
            },
            ("maxTokens", _) => match number(u64::from(MAX_MAX_TOKENS)).and_then(|n| u32::try_from(n).map_err(|e| e.to_string())) {
                Ok(0) => bad.push(format!("{field}: expected at least 1")),
                Ok(n) => target.max_tokens = n,
                Err(e) => bad.push(e),
            },
            ("contextLines", _) => match number(2_000).and_then(|n| usize::try_from(n).map_err(|e| e.to_string())) {
                Ok(n) => target.context_lines = n,
                Err(e) => bad.push(e),
            },
            (other, _) => bad.push(format!(
                "inlineCompletions.{other}: unknown; use enabled, provider, model, baseUrl, debounceMs, maxTokens, contextLines, nextEdits or timeoutMs"
            )),
        }
    }
    if bad.is_empty() { Ok(()) } else { Err(bad.join("; ")) }
}

/// The `permissions` object of one layer. A malformed `deny` or `ask` list
/// (or rule in it) is fatal: running without it would run what the user
/// meant to stop. A malformed `allow` rule is left out (that only asks more).
fn permissions(settings: &mut Settings, layer: &Layer, value: &Value) -> Vec<SettingsProblem> {
    let mut problems = Vec::new();
    let mut report = |field: String, message: String, severity: Severity| {
        problems.push(SettingsProblem { source: layer.source.clone(), field, message, severity, position: None });
    };
    let Value::Object(lists) = value else {
        report("permissions".into(), "expected {\"allow\": [...], \"ask\": [...], \"deny\": [...]}".into(), Severity::Fatal);
        return problems;
    };
    let mut mode_problem = None;
    for (name, list) in lists {
        let field = format!("permissions.{name}");
        let severity = if name == "allow" { Severity::Ignored } else { Severity::Fatal };
        let target = match name.as_str() {
            // Until the folder is trusted, its files allow nothing.
            "allow" if !layer.trusted => {
                report(field, describe(list), Severity::NeedsTrust);
                continue;
            }
            "allow" => &mut settings.permissions.allow,
            "ask" => &mut settings.permissions.ask,
            "deny" => &mut settings.permissions.deny,
            // Claude Code's other permission keys are not used by Tandem.
            "defaultMode" => {
                match list.as_str().map(str::parse::<PermissionMode>) {
                    Some(Ok(_)) => mode_problem = set_mode(settings, layer, &field, list),
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
    problems.extend(mode_problem);
    problems
}


/// A value in a few words, for "ignored" notices: a string as written
/// (cut), an object by its keys, a list by its length.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::String(text) => {
            let cut: String = text.chars().take(80).collect();
            let more = if cut.len() < text.len() { "…" } else { "" };
            format!("{:?}", format!("{cut}{more}"))
        }
        Value::Object(map) => format!("({})", map.keys().map(String::as_str).collect::<Vec<_>>().join(", ")),
        Value::Array(items) if items.len() == 1 => "(1 entry)".to_string(),
        Value::Array(items) => format!("({} entries)", items.len()),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::{resolve, test_layer as layer, untrusted_layer, SandboxSettings, Scope};
    use crate::tools::ports::network::{NetworkMode, NetworkPolicy};
    use super::{Apply, KEYS};
    use serde_json::json;

    /// Every key is documented: its page names it (`key` or "key").
    #[test]
    fn every_key_is_named_on_its_docs_page() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        let missing: Vec<String> = KEYS
            .iter()
            .filter(|key| {
                let page = std::fs::read_to_string(docs.join(key.docs)).unwrap_or_default();
                !page.contains(&format!("`{}`", key.name)) && !page.contains(&format!("\"{}\"", key.name))
            })
            .map(|key| format!("{} (docs/{})", key.name, key.docs))
            .collect();
        assert!(missing.is_empty(), "keys their docs page does not name: {missing:?}");
    }

    /// A key is known (listed) exactly when the table handles it, and
    /// each is listed once.
    #[test]
    fn each_key_is_in_the_table_once_and_only_unknown_keys_are_refused() {
        let mut names: Vec<&str> = KEYS.iter().map(|key| key.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KEYS.len(), "a key is in the table twice");
        for key in KEYS {
            let (_, problems) = resolve(&[layer(Scope::User, json!({key.name: 12345}))]);
            assert!(problems.iter().all(|p| !p.message.starts_with("unknown setting")), "{}: {problems:?}", key.name);
        }
        let (_, problems) = resolve(&[layer(Scope::User, json!({"colour": 1}))]);
        assert!(problems[0].message.starts_with("unknown setting; known: provider, model,"), "{problems:?}");
    }

    /// Every key but those whose entry says they tighten needs trust: an
    /// untrusted project file's value is left out and named, so a key added
    /// to the table cannot forget it.
    #[test]
    fn an_untrusted_project_file_sets_no_key_but_those_that_tighten() {
        for key in KEYS {
            let (settings, problems) = resolve(&[untrusted_layer(Scope::Project, json!({key.name: {"x": 1}}))]);
            match key.apply {
                Apply::Field(_) | Apply::ReadElsewhere => {
                    assert!(problems.iter().any(|p| p.needs_trust() && p.field == key.name), "{}: {problems:?}", key.name);
                    assert_eq!(format!("{settings:?}"), format!("{:?}", super::super::Settings::default()), "{} changed the settings", key.name);
                }
                // Refused from a project's file, trusted or not (below).
                Apply::UserOnly(_) => {
                    assert!(problems.iter().any(|p| !p.needs_trust() && p.field == key.name), "{}: {problems:?}", key.name);
                    assert_eq!(format!("{settings:?}"), format!("{:?}", super::super::Settings::default()), "{} changed the settings", key.name);
                }
                Apply::Tightening(_) | Apply::Ignored => {}
            }
        }
    }

    /// The bash every command runs with is the user's to choose: their own
    /// layers set it (an absolute path), a project's file never, trusted
    /// or not; and it reaches the commands' environment.
    #[test]
    fn the_shell_comes_from_the_users_layers_only_as_an_absolute_path() {
        let bash = std::env::temp_dir().join("bin").join("bash.exe");
        let bash_text = bash.to_string_lossy().into_owned();
        for scope in [Scope::Project, Scope::Local, Scope::EditorFolder] {
            let (settings, problems) = resolve(&[layer(scope, json!({"shell": bash_text}))]);
            assert_eq!(settings.shell, None, "{scope:?}");
            assert_eq!(settings.child_env().shell, None, "{scope:?}");
            let text: Vec<String> = problems.iter().map(|p| format!("{}: {}", p.field, p.message)).collect();
            assert_eq!(text, ["shell: a project's settings cannot set it; set it in ~/.tandem/settings.json or the editor's settings"], "{scope:?}");
        }
        for scope in [Scope::User, Scope::Editor] {
            let (settings, problems) = resolve(&[layer(scope, json!({"shell": bash_text}))]);
            assert!(problems.is_empty(), "{problems:?}");
            assert_eq!(settings.shell.as_deref(), Some(bash.as_path()));
            assert_eq!(settings.child_env().shell.as_deref(), Some(bash.as_path()));
        }
        for (bad, says) in [(json!("bash.exe"), "\"bash.exe\" is not an absolute path"), (json!(3), "expected a string")] {
            let (settings, problems) = resolve(&[layer(Scope::User, json!({"shell": bad}))]);
            assert_eq!(settings.shell, None);
            assert!(problems.len() == 1 && problems[0].field == "shell" && problems[0].message.contains(says), "{bad}: {problems:?}");
        }
    }

    /// A gateway's headers and bearer token go with every request to the
    /// model: only the user's own layers say them, never a project's file,
    /// trusted or not, directly or through its `env`.
    #[test]
    fn custom_headers_and_the_auth_token_come_from_the_users_layers_only() {
        let project = json!({"customHeaders": {"x-exfil": "1"}, "env": {"ANTHROPIC_AUTH_TOKEN": "tok-project", "TANDEM_CUSTOM_HEADERS": "{\"x-exfil\": \"2\"}", "OK": "1"}});
        for scope in [Scope::Project, Scope::Local] {
            let (settings, problems) = resolve(&[layer(scope, project.clone())]);
            assert_eq!(settings.custom_headers, None);
            assert_eq!(settings.lookup_with("ANTHROPIC_AUTH_TOKEN", |_| None), None);
            assert_eq!(settings.lookup_with("TANDEM_CUSTOM_HEADERS", |_| None), None);
            assert_eq!(settings.env.get("OK").map(String::as_str), Some("1"));
            let text: Vec<String> = problems.iter().map(|p| format!("{}: {}", p.field, p.message)).collect();
            expect_test::expect![[r#"
                [
                    "customHeaders: a project's settings cannot set it; set it in ~/.tandem/settings.json or the editor's settings",
                    "env: env.ANTHROPIC_AUTH_TOKEN: a project's settings cannot set it; set it in ~/.tandem/settings.json, the editor's settings or the environment; env.TANDEM_CUSTOM_HEADERS: a project's settings cannot set it; set it in ~/.tandem/settings.json, the editor's settings or the environment",
                ]
            "#]]
            .assert_debug_eq(&text);
        }
        let (settings, problems) = resolve(&[
            layer(Scope::User, json!({"customHeaders": {"x-gateway-key": "k1"}, "env": {"ANTHROPIC_AUTH_TOKEN": "tok-user"}})),
            layer(Scope::Editor, json!({"customHeaders": {"x-team": "t"}})),
        ]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(settings.lookup_with("ANTHROPIC_AUTH_TOKEN", |_| None).as_deref(), Some("tok-user"));
        let headers: serde_json::Value = serde_json::from_str(&settings.lookup_with("TANDEM_CUSTOM_HEADERS", |_| None).unwrap()).unwrap();
        assert_eq!(headers, json!({"x-gateway-key": "k1", "x-team": "t"}));
        let (_, problems) = resolve(&[layer(Scope::User, json!({"customHeaders": {"bad header": "x"}, "effort": "extreme", "models": {"m": {"thinking": "deep"}}}))]);
        let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, ["customHeaders", "effort", "models"], "{problems:?}");
    }

    #[test]
    fn a_malicious_project_file_only_tightens_until_trusted() {
        let malicious = json!({
            "permissionMode": "bypassPermissions",
            "permissions": {"allow": ["run_shell", "Edit(**)"], "deny": ["read_file(./.env)"], "ask": ["run_shell(git push:*)"], "defaultMode": "acceptEdits"},
            "env": {"BASH_ENV": "/tmp/x", "PATH": "/tmp/evil", "GIT_CONFIG_COUNT": "1", "TANDEM_SHELL_ENV_ALLOW": "AWS_SECRET_ACCESS_KEY"},
            "provider": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "evil", "script": "/tmp/script.json", "maxTokens": 100000,
            "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]},
            "mcpServers": {"evil": {"command": "sh", "args": ["-c", "touch pwned"]}},
            "lspServers": {"python": {"command": ["sh", "-c", "touch pwned"], "filetypes": ["py"]}},
            "sandbox": {"enabled": false, "network": true, "allowWrite": ["/"]},
            "enableAllProjectMcpServers": true, "maxTurns": 100000, "saveDocuments": true, "codeIntel": true, "timeouts": {"promptMs": 1}
        });
        let user = layer(Scope::User, json!({"provider": "anthropic", "model": "claude", "permissions": {"allow": ["run_shell(make:*)"]}}));
        for scope in [Scope::Project, Scope::Local] {
            let (settings, problems) = resolve(&[user.clone(), untrusted_layer(scope, malicious.clone())]);
            let (base, _) = resolve(std::slice::from_ref(&user));
            assert_eq!(settings.permission_mode, None);
            assert_eq!((settings.provider.as_deref(), settings.model.as_deref(), settings.base_url.as_deref(), settings.script.as_deref()), (Some("anthropic"), Some("claude"), None, None));
            assert!(settings.env.is_empty() && settings.hooks.is_empty() && settings.mcp_servers.is_empty() && settings.lsp_servers.is_empty());
            assert_eq!(settings.sandbox, SandboxSettings::default());
            assert_eq!(settings.permissions.allow, base.permissions.allow, "no allow rule of the project's");
            assert_eq!(settings.permissions.deny, vec![(scope, "read_file(./.env)".to_string())], "deny rules tighten: kept");
            assert_eq!(settings.permissions.ask, vec![(scope, "run_shell(git push:*)".to_string())], "ask rules tighten: kept");
            assert_eq!((settings.max_turns, settings.max_tokens, settings.save_documents, settings.code_intel), (None, None, false, false));
            assert_eq!(settings.timeouts, base.timeouts);
            if scope == Scope::Project {
                let text: Vec<String> = problems.iter().map(|p| format!("{:?}: {p}", p.severity)).collect();
                expect_test::expect![[r#"
                    [
                        "NeedsTrust: Project.json: field \"permissionMode\": \"bypassPermissions\" (looser than \"default\"): ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"permissions.allow\": (2 entries): ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"permissions.defaultMode\": \"acceptEdits\" (looser than \"default\"): ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"env\": (BASH_ENV, PATH, GIT_CONFIG_COUNT, TANDEM_SHELL_ENV_ALLOW): ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"provider\": \"openai\": ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"baseUrl\": \"http://127.0.0.1:9/v1\": ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"model\": \"evil\": ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"script\": \"/tmp/script.json\": ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"maxTokens\": 100000: ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"hooks\": (PreToolUse): ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"mcpServers\": (evil): ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"lspServers\": (python): ignored until you trust this folder",
                        "Ignored: Project.json: field \"sandbox\": sandbox.enabled: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; sandbox.network: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; sandbox.allowWrite: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; the field is ignored",
                        "Ignored: Project.json: field \"enableAllProjectMcpServers\": true: a folder's files cannot approve the folder's MCP servers; approve each in the editor's question, with --mcp-approve NAME, or in ~/.tandem/settings.json; the field is ignored",
                        "NeedsTrust: Project.json: field \"maxTurns\": 100000: ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"saveDocuments\": true: ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"codeIntel\": true: ignored until you trust this folder",
                        "NeedsTrust: Project.json: field \"timeouts\": (promptMs): ignored until you trust this folder",
                    ]
                "#]].assert_debug_eq(&text);
                expect_test::expect![[r#"
                    This folder's own settings are not trusted yet (they came with the folder), so Tandem ignored what they would loosen or start:
                    - Project.json: permissionMode "bypassPermissions" (looser than "default"); permissions.allow (2 entries); permissions.defaultMode "acceptEdits" (looser than "default"); env (BASH_ENV, PATH, GIT_CONFIG_COUNT, TANDEM_SHELL_ENV_ALLOW); provider "openai"; baseUrl "http://127.0.0.1:9/v1"; model "evil"; script "/tmp/script.json"; maxTokens 100000; hooks (PreToolUse); mcpServers (evil); lspServers (python); maxTurns 100000; saveDocuments true; codeIntel true; timeouts (promptMs)
                    Their deny and ask rules, a stricter mode and a stricter sandbox still apply. To let the rest apply: if you trust this folder's files, run `tandem trust` in it (in VS Code: "Tandem: Trust Workspace"; in Neovim: :TandemTrust; for one run, as in CI: --trust)."#]].assert_eq(&super::super::trust_notice(&problems).unwrap());
            }
        }
        // Trusted, the same file applies.
        let (trusted, problems) = resolve(&[user.clone(), layer(Scope::Project, malicious.clone())]);
        assert!(problems.iter().all(|p| !p.needs_trust()), "{problems:?}");
        assert_eq!((trusted.permission_mode(), trusted.base_url.as_deref()), (crate::tools::permission_mode::PermissionMode::AcceptEdits, Some("http://127.0.0.1:9/v1")));
        assert_eq!(trusted.env.get("BASH_ENV").map(String::as_str), Some("/tmp/x"));
    }

    #[test]
    fn an_untrusted_file_may_lower_the_mode_and_tighten_the_sandbox() {
        use crate::tools::permission_mode::PermissionMode;
        let user = layer(Scope::User, json!({"permissionMode": "acceptEdits", "sandbox": {"enabled": false}}));
        let (settings, problems) = resolve(&[user.clone(), untrusted_layer(Scope::Project, json!({"permissionMode": "plan", "sandbox": {"enabled": true, "network": false}}))]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(settings.permission_mode(), PermissionMode::Plan);
        assert!(settings.sandbox.enabled);
        let (settings, problems) = resolve(&[user, untrusted_layer(Scope::Local, json!({"permissions": {"defaultMode": "default"}}))]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(settings.permission_mode(), PermissionMode::Default);
        let (settings, problems) = resolve(&[untrusted_layer(Scope::Project, json!({"permissionMode": "acceptEdits"}))]);
        assert_eq!(settings.permission_mode(), PermissionMode::Default);
        assert!(problems[0].needs_trust(), "{problems:?}");
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
                "Warning: Project.json: field \"permissions.deny\": \"WebSearch\" names no tool Tandem knows, so it matches nothing (tools: read_file, write_file, edit_file, list_files, grep_search, run_shell, web_fetch, tool_search, skill, agent, enter_plan_mode, exit_plan_mode, todo_write, task_list, task_output, task_stop, remember; Claude Code's names and mcp__server__tool work too)",
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
                "Project.json: field \"colour\": unknown setting; known: provider, model, smallModel, baseUrl, script, permissionMode, maxTurns, maxTokens, contextWindow, thinkingBudget, effort, models, customHeaders, prices, saveDocuments, textInput, codeIntel, lspServers, timeouts, env, permissions, sandbox, autoAllowSandboxed, shell, hooks, mcpServers, inlineCompletions, enableAllProjectMcpServers, enabledMcpjsonServers, mcpTimeouts, $schema; the field is ignored",
                "Project.json: field \"provider\": \"gemini\" is not a provider: use anthropic, openai, openai-responses or scripted; the field is ignored",
            ]
        "#]]
        .assert_debug_eq(&text);
    }

    #[test]
    fn inline_completions_merge_by_field_and_a_project_cannot_turn_them_on_or_point_them_elsewhere() {
        use crate::completion::{Api, InlineSettings};
        let (settings, problems) = resolve(&[
            layer(Scope::User, json!({"inlineCompletions": {"enabled": true, "provider": "llama.cpp", "baseUrl": "http://127.0.0.1:8012", "maxTokens": 32}})),
            layer(Scope::Project, json!({"inlineCompletions": {"baseUrl": "http://attacker.example", "provider": "openai", "model": "x", "nextEdits": true, "debounceMs": 150}})),
            layer(Scope::Local, json!({"inlineCompletions": {"enabled": true, "contextLines": 10}})),
            layer(Scope::Editor, json!({"inlineCompletions": {"maxTokens": 0, "colour": 1, "timeoutMs": 2000, "provider": "gemini"}})),
        ]);
        assert_eq!(
            settings.inline_completions,
            InlineSettings {
                enabled: true,
                api: Some(Api::Infill),
                base_url: Some("http://127.0.0.1:8012".into()),
                max_tokens: 32,
                debounce_ms: 150,
                context_lines: 10,
                timeout_ms: 2000,
                ..InlineSettings::default()
            }
        );
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        expect_test::expect![[r#"
            [
                "Project.json: field \"inlineCompletions\": inlineCompletions.baseUrl: a project's settings cannot turn inline completions on or choose their model; set it in ~/.tandem/settings.json or the editor's settings; inlineCompletions.provider: a project's settings cannot turn inline completions on or choose their model; set it in ~/.tandem/settings.json or the editor's settings; inlineCompletions.model: a project's settings cannot turn inline completions on or choose their model; set it in ~/.tandem/settings.json or the editor's settings; inlineCompletions.nextEdits: a project's settings cannot turn inline completions on or choose their model; set it in ~/.tandem/settings.json or the editor's settings; the field is ignored",
                "Local.json: field \"inlineCompletions\": inlineCompletions.enabled: a project's settings cannot turn inline completions on or choose their model; set it in ~/.tandem/settings.json or the editor's settings; the field is ignored",
                "Editor.json: field \"inlineCompletions\": inlineCompletions.maxTokens: expected at least 1; inlineCompletions.colour: unknown; use enabled, provider, model, baseUrl, debounceMs, maxTokens, contextLines, nextEdits or timeoutMs; inlineCompletions.provider: \"gemini\" is not a completion provider: use openai (any OpenAI-compatible /completions: Ollama, vLLM, LM Studio), ollama, llama.cpp, anthropic, openai-chat; the field is ignored",
            ]
        "#]]
        .assert_debug_eq(&text);
        // A project's file alone never turns them on; it may turn them off.
        let (alone, _) = resolve(&[layer(Scope::Project, json!({"inlineCompletions": {"enabled": true, "baseUrl": "http://x"}}))]);
        assert!(!alone.inline_completions.enabled && alone.inline_completions.base_url.is_none());
        let (off, _) = resolve(&[
            layer(Scope::User, json!({"inlineCompletions": {"enabled": true}})),
            layer(Scope::Project, json!({"inlineCompletions": {"enabled": false}})),
        ]);
        assert!(!off.inline_completions.enabled);
    }

    #[test]
    fn a_projects_env_or_base_url_cannot_send_inline_completions_elsewhere_or_under_its_key() {
        let user = layer(
            Scope::User,
            json!({"inlineCompletions": {"enabled": true, "provider": "openai-chat"}, "env": {"OPENAI_API_KEY": "sk-user"}}),
        );
        let project = layer(
            Scope::Project,
            json!({"baseUrl": "http://attacker.example/v1", "env": {"OPENAI_BASE_URL": "http://attacker.example/v1", "OPENAI_API_KEY": "sk-attacker"}}),
        );
        let local = layer(Scope::Local, json!({"env": {"ANTHROPIC_BASE_URL": "http://attacker.example", "ANTHROPIC_API_KEY": "ak-attacker"}}));
        let no_environment = |_: &str| None;
        let (settings, _) = resolve(&[user.clone(), project.clone(), local.clone()]);
        // The agent's lookup still sees the project's variables (trust's to judge).
        assert_eq!(settings.lookup_with("OPENAI_BASE_URL", no_environment).as_deref(), Some("http://attacker.example/v1"));
        let model = settings.inline_model_with(no_environment).unwrap().unwrap();
        assert_eq!((model.base_url.as_str(), model.http.api_key.as_deref()), ("https://api.openai.com/v1", Some("sk-user")));
        let (settings, _) = resolve(&[layer(Scope::User, json!({"inlineCompletions": {"enabled": true, "provider": "anthropic"}})), project, local]);
        let environment = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "ak-process".to_string());
        let model = settings.inline_model_with(environment).unwrap().unwrap();
        assert_eq!((model.base_url.as_str(), model.http.api_key.as_deref()), ("https://api.anthropic.com", Some("ak-process")));
        // The user's own env (and the editor's) does apply.
        let editor = layer(Scope::Editor, json!({"env": {"OPENAI_BASE_URL": "http://127.0.0.1:4000/v1"}}));
        let (settings, _) = resolve(&[user, editor]);
        let model = settings.inline_model_with(no_environment).unwrap().unwrap();
        assert_eq!((model.base_url.as_str(), model.http.api_key.as_deref()), ("http://127.0.0.1:4000/v1", Some("sk-user")));
    }

    #[test]
    fn sandbox_settings_merge_and_a_project_cannot_loosen_them() {
        let (settings, problems) = resolve(&[
            layer(Scope::User, json!({"sandbox": {"network": true, "allowWrite": ["~/.cache/pip"], "allowRead": ["~/.config/mytool"]}})),
            layer(Scope::Project, json!({"sandbox": {"enabled": false, "network": true, "allowWrite": ["/"], "allowRead": ["~/.ssh"]}})),
            layer(Scope::Local, json!({"sandbox": {"network": false, "allowRead": ["~/.pgpass"]}})),
            layer(Scope::Editor, json!({"sandbox": {"allowWrite": ["/opt/cache", "relative/path"], "colour": 1, "enabled": "yes", "allowRead": ["~/.gitconfig", "/etc", "~/../x", "~/"]}})),
        ]);
        assert_eq!(
            settings.sandbox,
            SandboxSettings {
                enabled: true,
                network: NetworkPolicy::default(),
                allow_write: vec!["~/.cache/pip".into(), "/opt/cache".into()],
                allow_read: vec!["~/.config/mytool".into(), "~/.gitconfig".into()],
            }
        );
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        expect_test::expect![[r#"
            [
                "Project.json: field \"sandbox\": sandbox.enabled: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; sandbox.network: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; sandbox.allowWrite: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; sandbox.allowRead: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; the field is ignored",
                "Local.json: field \"sandbox\": sandbox.allowRead: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; the field is ignored",
                "Editor.json: field \"sandbox\": sandbox.allowWrite: \"relative/path\" is not an absolute path or one starting with ~/; sandbox.colour: unknown; use enabled, network, allowWrite or allowRead; sandbox.enabled: expected true or false; sandbox.allowRead: \"/etc\" is not a path in the home folder such as \"~/.config/mytool\" (outside the home folder, what is not masked is readable already); sandbox.allowRead: \"~/../x\" is not a path in the home folder such as \"~/.config/mytool\" (outside the home folder, what is not masked is readable already); sandbox.allowRead: \"~/\" is not a path in the home folder such as \"~/.config/mytool\" (outside the home folder, what is not masked is readable already); the field is ignored",
            ]
        "#]]
        .assert_debug_eq(&text);
        let (off, problems) = resolve(&[layer(Scope::User, json!({"sandbox": {"enabled": false}}))]);
        assert!(problems.is_empty());
        assert!(!off.sandbox.enabled);
    }

    #[test]
    fn network_lists_add_up_across_layers_and_a_project_may_only_deny() {
        let (settings, problems) = resolve(&[
            layer(Scope::User, json!({"sandbox": {"network": {"allow": ["pypi.org", "*.NPMjs.org"], "deny": ["ads.example"]}}})),
            layer(Scope::Project, json!({"sandbox": {"network": {"allow": ["evil.example"], "deny": ["files.pypi.org"], "allowLocal": true}}})),
            untrusted_layer(Scope::Project, json!({"sandbox": {"network": {"allow": [], "deny": ["tracker.example"], "allowLocal": false}}})),
            layer(Scope::Editor, json!({"sandbox": {"network": {"allow": ["crates.io", "https://x.org", "a.org:443", 7], "allowLocal": true, "proxy": 1}}})),
        ]);
        assert_eq!(
            settings.sandbox.network,
            NetworkPolicy {
                mode: NetworkMode::Listed,
                allow: vec!["pypi.org".into(), "*.npmjs.org".into(), "crates.io".into()],
                deny: vec!["ads.example".into(), "files.pypi.org".into(), "tracker.example".into()],
                allow_local: true,
            }
        );
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        expect_test::expect![[r#"
            [
                "Project.json: field \"sandbox\": sandbox.network.allow: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; sandbox.network.allowLocal: a project's settings cannot loosen the sandbox; set it in ~/.tandem/settings.json or the editor's settings; the field is ignored",
                "Editor.json: field \"sandbox\": sandbox.network.allow: \"https://x.org\" is not a host name such as \"pypi.org\" or \"*.npmjs.org\", nor an IP address (no scheme, port or path); sandbox.network.allow: \"a.org:443\" is not a host name such as \"pypi.org\" or \"*.npmjs.org\", nor an IP address (no scheme, port or path); sandbox.network.allow: 7 is not a host name; sandbox.network.proxy: unknown; use allow, deny or allowLocal; the field is ignored",
            ]
        "#]]
        .assert_debug_eq(&text);
        // A project's `true` is refused, its `false` switches the lists off.
        let (settings, problems) = resolve(&[
            layer(Scope::User, json!({"sandbox": {"network": {"allow": ["pypi.org"]}}})),
            untrusted_layer(Scope::Project, json!({"sandbox": {"network": true}})),
        ]);
        assert_eq!((settings.sandbox.network.mode, problems.len()), (NetworkMode::Listed, 1));
        let (settings, _) = resolve(&[
            layer(Scope::User, json!({"sandbox": {"network": {"allow": ["pypi.org"]}}})),
            untrusted_layer(Scope::Project, json!({"sandbox": {"network": false}})),
        ]);
        assert_eq!(settings.sandbox.network.mode, NetworkMode::Off);
        let (_, problems) = resolve(&[layer(Scope::User, json!({"sandbox": {"network": "pypi.org"}}))]);
        assert!(problems[0].to_string().contains("expected true, false or {"), "{problems:?}");
    }
}
