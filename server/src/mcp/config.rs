//! Where MCP servers come from, merged by server name (later wins):
//!
//! 1. the user's `~/.tandem/mcp.json`;
//! 2. the project's `.mcp.json` (Claude Code's format);
//! 3. the `mcpServers` section of the settings files: `~/.tandem/settings.json`
//!    < `.tandem/settings.json` < `.tandem/settings.local.json`.
//!
//! A server is `{"command", "args", "env"}` (stdio; `"type": "stdio"` may be
//! given) or `{"type": "http", "url", "headers"}` (streamable HTTP).
//! `${VAR}` and `${VAR:-default}` are expanded in commands, args, env values,
//! urls and headers.
//!
//! Servers from files in the workspace (`.mcp.json`,
//! `.tandem/settings.json`, `.tandem/settings.local.json`: any of them may
//! have come with it) can start programs: they are read only once the user
//! trusts the file's content ([`crate::trust`]), and then still need the
//! user's consent, server by server. The approval settings
//! (`enableAllProjectMcpServers`, `enabledMcpjsonServers`) are read only
//! from `~/.tandem/settings.json`: a file in the folder — trusted or not,
//! `.tandem/settings.local.json` too, which a repository can commit —
//! cannot approve what the folder starts.
//!
//! A server the folder defines gets none of the user's variables: its
//! `${VAR}` takes its `:-default`, or the server fails naming the
//! variable. Expanded, `"Authorization": "Bearer ${ANTHROPIC_API_KEY}"`
//! would send the user's key to any address the repository names, and the
//! approval question shows the command or the URL, not the headers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// Start-up timeout when the settings give none.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Tool-call timeout when the settings give none.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// Which file a server came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Origin {
    /// `~/.tandem/mcp.json`
    UserMcp,
    /// `.mcp.json` at the workspace root
    ProjectMcp,
    /// `~/.tandem/settings.json`
    UserSettings,
    /// `.tandem/settings.json`
    ProjectSettings,
    /// `.tandem/settings.local.json`
    LocalSettings,
    /// The ACP client's `session/new` (`mcpServers`): the user configured
    /// them in the editor.
    Client,
}

impl Origin {
    /// Servers from files in the workspace (which may have come with it)
    /// start only with consent, once the file is trusted too.
    pub fn needs_consent(self) -> bool {
        matches!(self, Origin::ProjectMcp | Origin::ProjectSettings | Origin::LocalSettings)
    }

    pub fn file(self) -> &'static str {
        match self {
            Origin::UserMcp => "~/.tandem/mcp.json",
            Origin::ProjectMcp => ".mcp.json",
            Origin::UserSettings => "~/.tandem/settings.json",
            Origin::ProjectSettings => ".tandem/settings.json",
            Origin::LocalSettings => ".tandem/settings.local.json",
            Origin::Client => "the editor (ACP mcpServers)",
        }
    }
}

/// How to reach a server, after `${VAR}` expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String> },
    Http { url: String, headers: BTreeMap<String, String> },
}

impl Transport {
    /// One line for humans: the command line or the URL.
    pub fn describe(&self) -> String {
        match self {
            Transport::Stdio { command, args, .. } => {
                std::iter::once(command.as_str()).chain(args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
            }
            Transport::Http { url, .. } => url.clone(),
        }
    }
}

/// One configured server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub name: String,
    pub origin: Origin,
    /// `Err` says what is wrong with the entry (reported as the server's failure).
    pub transport: Result<Transport, String>,
    /// The entry as written (before expansion), in canonical JSON: what the
    /// user approves. A changed entry needs a new approval.
    pub fingerprint: String,
}

/// Which project servers the user's own settings approve.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsApproval {
    pub all: bool,
    pub names: Vec<String>,
}

impl SettingsApproval {
    pub fn approves(&self, name: &str) -> bool {
        self.all || self.names.iter().any(|n| n == name)
    }
}

/// Everything the MCP layer reads from files.
#[derive(Debug, Clone)]
pub struct McpConfig {
    pub servers: Vec<ServerConfig>,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    pub approval: SettingsApproval,
    /// Problems with the files themselves (unreadable, not JSON), for the log and `tandem mcp list`.
    pub warnings: Vec<String>,
    /// Where OAuth tokens are kept (`~/.tandem/mcp-auth`); `None`: no home, no sign-in.
    pub auth_dir: Option<PathBuf>,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            servers: Vec::new(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            approval: SettingsApproval::default(),
            warnings: Vec::new(),
            auth_dir: None,
        }
    }
}

impl McpConfig {
    /// Read the user's and the project's files. `home` is the user's home
    /// folder (`None`: no user files), `root` the workspace root.
    pub fn load(home: Option<&Path>, root: &Path) -> McpConfig {
        // Credentials are held in memory, out of the process environment.
        let lookup = |name: &str| crate::environment::var(name);
        Self::load_trusting(home, root, &lookup, &crate::trust::Trust::of(root))
    }

    /// [`McpConfig::load`] with a given environment, every file trusted (for tests).
    pub fn load_with(home: Option<&Path>, root: &Path, env: &dyn Fn(&str) -> Option<String>) -> McpConfig {
        Self::load_trusting(home, root, env, &crate::trust::Trust::everything())
    }

    /// The servers of the files, of a project's files only those of files
    /// the user trusts ([`crate::trust`]): an untrusted `.mcp.json` or
    /// settings file starts nothing and approves nothing (the settings
    /// loader tells the user what was left out).
    pub fn load_trusting(home: Option<&Path>, root: &Path, env: &dyn Fn(&str) -> Option<String>, trust: &crate::trust::Trust) -> McpConfig {
        let mut config = McpConfig { auth_dir: home.map(|home| home.join(".tandem").join("mcp-auth")), ..McpConfig::default() };
        let mut files: Vec<(Origin, PathBuf)> = Vec::new();
        if let Some(home) = home {
            files.push((Origin::UserMcp, home.join(".tandem").join("mcp.json")));
        }
        files.push((Origin::ProjectMcp, root.join(".mcp.json")));
        // SEAM: the settings files are read here minimally (the `mcpServers`,
        // approval and timeout keys only). When the shared settings loader
        // lands, take these three layers from it instead.
        if let Some(home) = home {
            files.push((Origin::UserSettings, home.join(".tandem").join("settings.json")));
        }
        files.push((Origin::ProjectSettings, root.join(".tandem").join("settings.json")));
        files.push((Origin::LocalSettings, root.join(".tandem").join("settings.local.json")));

        let mut merged: BTreeMap<String, ServerConfig> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for (origin, path) in files {
            let project = matches!(origin, Origin::ProjectMcp | Origin::ProjectSettings | Origin::LocalSettings);
            let json = match read_json(&path, project.then_some(root)) {
                Ok(Some((json, bytes))) => {
                    let relative = path.strip_prefix(root).map(|p| p.display().to_string()).unwrap_or_default();
                    if project && !trust.trusts(&relative, &bytes) {
                        tracing::info!(file = %path.display(), "not trusted: its MCP servers and approvals are left out");
                        continue;
                    }
                    json
                }
                Ok(None) => continue,
                Err(err) => {
                    config.warnings.push(err);
                    continue;
                }
            };
            if matches!(origin, Origin::UserSettings | Origin::ProjectSettings | Origin::LocalSettings) {
                config.read_settings_keys(origin, &json);
            }
            let Some(servers) = json.get("mcpServers") else { continue };
            let Some(servers) = servers.as_object() else {
                config.warnings.push(format!("{}: \"mcpServers\" must be an object", path.display()));
                continue;
            };
            for (name, entry) in servers {
                let transport = if origin.needs_consent() { parse_transport(entry, &project_variable) } else { parse_transport(entry, env) };
                let server = ServerConfig {
                    name: name.clone(),
                    origin,
                    transport: transport.map_err(|err| if origin.needs_consent() { project_variable_error(err) } else { err }),
                    fingerprint: crate::consent::fingerprint_of(entry),
                };
                if merged.insert(name.clone(), server).is_none() {
                    order.push(name.clone());
                }
            }
        }
        config.servers = order.into_iter().filter_map(|name| merged.remove(&name)).collect();
        config
    }

    fn read_settings_keys(&mut self, origin: Origin, json: &Value) {
        if let Some(timeouts) = json.get("mcpTimeouts") {
            if let Some(ms) = timeouts.get("startupMs").and_then(Value::as_u64) {
                self.startup_timeout = Duration::from_millis(ms.max(1));
            }
            if let Some(ms) = timeouts.get("toolMs").and_then(Value::as_u64) {
                self.tool_timeout = Duration::from_millis(ms.max(1));
            }
        }
        // Only the user's own file approves a project's servers: a file in
        // the folder (the local one included: a repository can commit it)
        // cannot approve what the folder starts, trusted or not.
        if origin != Origin::UserSettings {
            return;
        }
        if let Some(all) = json.get("enableAllProjectMcpServers").and_then(Value::as_bool) {
            self.approval.all = all;
        }
        if let Some(names) = json.get("enabledMcpjsonServers").and_then(Value::as_array) {
            self.approval.names.extend(names.iter().filter_map(Value::as_str).map(String::from));
        }
    }
}

/// The variables a server the folder defines sees: none (its `${VAR}`
/// takes its default), so nothing of the user's environment — their API
/// keys — is expanded into what the folder wrote.
fn project_variable(_: &str) -> Option<String> {
    None
}

/// The error of a folder's server that names a variable, said as why.
fn project_variable_error(err: String) -> String {
    match err.strip_prefix("environment variable ").and_then(|rest| rest.split_once(' ')) {
        Some((name, _)) => format!(
            "${{{name}}}: a server defined in the folder does not get your environment variables (they may be your keys); to pass {name}, define the server in ~/.tandem/settings.json"
        ),
        None => err,
    }
}

/// `Ok(None)` when the file does not exist. Read strictly, as the
/// settings are ([`crate::json_file`]): a FIFO, a device, a file over a
/// megabyte, a duplicate key or (for the project's files) a symlink out of
/// the workspace is refused.
fn read_json(path: &Path, inside: Option<&Path>) -> Result<Option<(Value, Vec<u8>)>, String> {
    let read = crate::json_file::read_bytes(path, inside).and_then(|bytes| match bytes {
        Some(bytes) => crate::json_file::parse_object(&bytes).map(|value| value.map(|v| (v, bytes))),
        None => Ok(None),
    });
    read.map_err(|err| format!("{}: {err}; ignored", path.display()))
}

fn parse_transport(entry: &Value, env: &dyn Fn(&str) -> Option<String>) -> Result<Transport, String> {
    let Some(object) = entry.as_object() else { return Err("the entry must be a JSON object".into()) };
    let kind = object.get("type").and_then(Value::as_str);
    let expand = |text: &str| expand_vars(text, env);
    let string_map = |key: &str| -> Result<BTreeMap<String, String>, String> {
        let mut map = BTreeMap::new();
        match object.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                for (name, value) in entries {
                    let Some(value) = value.as_str() else { return Err(format!("\"{key}\".{name} must be a string")) };
                    map.insert(name.clone(), expand(value)?);
                }
            }
            Some(_) => return Err(format!("\"{key}\" must be an object of strings")),
        }
        Ok(map)
    };
    match kind {
        Some("http") | Some("streamable-http") | Some("streamableHttp") => {}
        None if object.contains_key("url") && !object.contains_key("command") => {}
        Some("sse") => return Err("the legacy SSE transport is not supported; use a streamable HTTP endpoint (\"type\": \"http\")".into()),
        None | Some("stdio") => {
            let command = object.get("command").and_then(Value::as_str).ok_or("\"command\" is missing")?;
            let args = match object.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| item.as_str().ok_or_else(|| "\"args\" must be strings".to_string()).and_then(expand))
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("\"args\" must be an array of strings".into()),
            };
            return Ok(Transport::Stdio { command: expand(command)?, args, env: string_map("env")? });
        }
        Some(other) => return Err(format!("unknown server type \"{other}\" (use \"stdio\" or \"http\")")),
    }
    let url = object.get("url").and_then(Value::as_str).ok_or("\"url\" is missing")?;
    let url = expand(url)?;
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!("\"url\" must be an http(s) URL, got \"{url}\""));
    }
    Ok(Transport::Http { url, headers: string_map("headers")? })
}

/// Expand `${VAR}` and `${VAR:-default}`. A variable that is not set and
/// has no default is an error naming it (a server started with a silently
/// empty token fails in confusing ways). Text that is not a well-formed
/// reference stays as written.
pub fn expand_vars(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            out.push_str(&rest[start..start + 2 + end + 1]);
        } else {
            match (env(name).filter(|v| !v.is_empty()), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => return Err(format!("environment variable {name} is not set (write ${{{name}:-default}} for a default)")),
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_variables_and_defaults() {
        let cases = [
            ("plain", Ok("plain".to_string())),
            ("Bearer ${TOKEN}", Ok("Bearer s3cret".into())),
            ("${HOME}/x:${TOKEN}", Ok("/home/u/x:s3cret".into())),
            ("${PORT:-8080}", Ok("8080".into())),
            ("${TOKEN:-fallback}", Ok("s3cret".into())),
            ("${EMPTY:-used}", Ok("used".into())),
            ("${MISSING}", Err("environment variable MISSING is not set (write ${MISSING:-default} for a default)".into())),
            ("$HOME and ${not valid} and ${", Ok("$HOME and ${not valid} and ${".into())),
            ("${PORT:-}x", Ok("x".into())),
        ];
        for (input, expected) in cases {
            assert_eq!(expand_vars(input, &env), expected, "{input}");
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn merges_files_in_order_and_expands() {
        let home = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        write(&home.path().join(".tandem/mcp.json"), r#"{"mcpServers": {
            "shared": {"command": "user-cmd"},
            "mine": {"command": "npx", "args": ["-y", "srv", "--token=${TOKEN}"], "env": {"K": "${MISSING:-d}"}}}}"#);
        write(&root.path().join(".mcp.json"), r#"{"mcpServers": {
            "shared": {"command": "project-cmd"},
            "web": {"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "broken": {"type": "http", "url": "https://x/${NOPE}"},
            "old": {"type": "sse", "url": "https://x/sse"}}}"#);
        write(&root.path().join(".tandem/settings.json"), r#"{"mcpServers": {"web": {"type": "http", "url": "http://127.0.0.1:9/mcp"}},
            "enableAllProjectMcpServers": true, "mcpTimeouts": {"startupMs": 500, "toolMs": 900}}"#);
        write(&root.path().join(".tandem/settings.local.json"), r#"{"enabledMcpjsonServers": ["shared"]}"#);

        let config = McpConfig::load_with(Some(home.path()), root.path(), &env);
        let summary: Vec<String> = config
            .servers
            .iter()
            .map(|s| format!("{} {:?} {:?}", s.name, s.origin, s.transport))
            .collect();
        expect_test::expect![[r#"
            shared ProjectMcp Ok(Stdio { command: "project-cmd", args: [], env: {} })
            mine UserMcp Ok(Stdio { command: "npx", args: ["-y", "srv", "--token=s3cret"], env: {"K": "d"} })
            web ProjectSettings Ok(Http { url: "http://127.0.0.1:9/mcp", headers: {} })
            broken ProjectMcp Err("${NOPE}: a server defined in the folder does not get your environment variables (they may be your keys); to pass NOPE, define the server in ~/.tandem/settings.json")
            old ProjectMcp Err("the legacy SSE transport is not supported; use a streamable HTTP endpoint (\"type\": \"http\")")"#]]
        .assert_eq(&summary.join("\n"));
        assert_eq!((config.startup_timeout, config.tool_timeout), (Duration::from_millis(500), Duration::from_millis(900)));
        // No file in the folder approves its servers, the local one neither.
        assert_eq!(config.approval, SettingsApproval::default());
        let origin = |name: &str| config.servers.iter().find(|s| s.name == name).map(|s| s.origin);
        assert!(!origin("mine").unwrap().needs_consent() && origin("shared").unwrap().needs_consent());
    }

    /// The user's own settings approve; a folder's server with a secret
    /// in its headers gets the secret only when the user defines it.
    #[test]
    fn only_the_users_file_approves_and_a_folders_server_gets_no_variables() {
        let home = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let entry = r#"{"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${TOKEN}", "X-Port": "${PORT:-1}"}}"#;
        write(&root.path().join(".mcp.json"), &format!(r#"{{"mcpServers": {{"leak": {entry}}}}}"#));
        write(&root.path().join(".tandem/settings.local.json"), r#"{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["leak"]}"#);
        let config = McpConfig::load_with(Some(home.path()), root.path(), &env);
        assert_eq!(config.approval, SettingsApproval::default());
        let transport = format!("{:?}", config.servers[0].transport);
        assert!(!transport.contains("s3cret") && transport.contains("${TOKEN}: a server defined in the folder"), "{transport}");
        write(&home.path().join(".tandem/settings.json"), &format!(r#"{{"enabledMcpjsonServers": ["leak"], "mcpServers": {{"mine": {entry}}}}}"#));
        let config = McpConfig::load_with(Some(home.path()), root.path(), &env);
        assert_eq!(config.approval, SettingsApproval { all: false, names: vec!["leak".into()] });
        let mine = config.servers.iter().find(|s| s.name == "mine").unwrap();
        assert_eq!(
            mine.transport,
            Ok(Transport::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: [("Authorization".to_string(), "Bearer s3cret".to_string()), ("X-Port".to_string(), "1".to_string())].into()
            })
        );
    }

    #[test]
    fn broken_files_are_warnings_not_failures() {
        let root = tempfile::tempdir().unwrap();
        write(&root.path().join(".mcp.json"), "{not json");
        let config = McpConfig::load_with(None, root.path(), &env);
        assert!(config.servers.is_empty());
        assert_eq!(config.warnings.len(), 1);
        assert!(config.warnings[0].contains("not valid JSON"), "{:?}", config.warnings);
    }
}
