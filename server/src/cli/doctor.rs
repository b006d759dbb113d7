//! `tandem doctor`: what this machine and this folder's settings give
//! Tandem, in plain words, for the user to check before a run (and for
//! `:checkhealth tandem`, which runs `tandem doctor --json`): which model
//! endpoint a run would talk to and why (the one decision every front end
//! makes, `host::endpoint`); whether shell commands run in a sandbox, and
//! why not; whether the folder's own settings files are trusted, and what
//! was ignored until they are; whether inline completions are on, with the
//! shown / accepted counts of the last language-server sessions in this
//! folder (kept locally, for tuning `debounceMs`); whether the model's
//! server answers with the key; which other copies of Tandem are installed
//! (a `tandem` on PATH, the Neovim plugin and its binary, the VS Code
//! extension) and whether they are this version. It ends with what is
//! missing, each with its fix.

use std::process::ExitCode;

use tandem::sandbox::Availability;

use super::terminal::{self, errln, outln};

/// Print the report; exit 1 when something the user expects is missing
/// (no sandbox can start), 0 otherwise (a sandbox switched off by the
/// user's own settings is their choice, said but not a failure; a missing
/// or conflicting model provider is said as a warning). With `json`, one
/// object: `{"version", "workspace", "provider": {"provider", "model",
/// "base_url"?, "reason"} | {"error"}, "sandbox": {"state": "ready" |
/// "disabled" | "unavailable", "description", "notice"?, "network":
/// {"description", "allow", "deny", "allowLocal"}}, "trust":
/// {"state", "files", "notice"?}, "modelServer"?: {"ok", "message"},
/// "installed": [{"what", "path", "version"}], "missing": [{"what",
/// "fix"}]}` (see [`trust_report`]). `offline`: the model's server is not
/// asked. `editor`: an editor's settings over the files (`--editor-settings`).
pub async fn doctor(root: &std::path::Path, json: bool, offline: bool, editor: Option<&str>) -> anyhow::Result<ExitCode> {
    let editor: Vec<serde_json::Value> = match editor {
        Some(text) => vec![serde_json::from_str(text).map_err(|e| anyhow::anyhow!("--editor-settings is not a JSON object: {e}"))?],
        None => Vec::new(),
    };
    let (settings, problems) = tandem::host::load_settings_with(root, &editor).map_err(|fatal| anyhow::anyhow!("{fatal}"))?;
    // What needs trust is said in the trust report below, once.
    for problem in problems.iter().filter(|p| !p.needs_trust()) {
        errln!("tandem: settings: {problem}");
    }
    let endpoint = tandem::host::endpoint(&settings);
    let sandbox = tandem::host::sandbox(&settings, &[root.to_path_buf()]);
    let ok = !matches!(sandbox, Availability::Unavailable(_));
    let network = &settings.sandbox.network;
    let trust = trust_report(root, &problems);
    let inline = &settings.inline_completions;
    let sessions = tandem::completion::telemetry::sessions(root);
    let model = settings.inline_model();
    // Asked only when there is an endpoint (its error already says what
    // to set), and not with --offline.
    let server = match &endpoint {
        Ok(_) if !offline => Some(tandem::host::probe_model(&settings, PROBE_TIMEOUT).await),
        _ => None,
    };
    let copies = installed_copies().await;
    let missing = missing(&endpoint, server.as_ref(), &sandbox, &trust, &copies);
    let instructions = tandem::host::instructions::report(root);
    if json {
        let state = match sandbox {
            Availability::Ready(_) => "ready",
            Availability::Disabled => "disabled",
            Availability::Unavailable(_) => "unavailable",
        };
        let provider = match &endpoint {
            Ok(endpoint) => serde_json::to_value(endpoint)?,
            Err(error) => serde_json::json!({"error": error}),
        };
        let mut report = serde_json::json!({
            "version": env!("CARGO_PKG_VERSION"),
            "workspace": root,
            "provider": provider,
            "sandbox": {"state": state, "description": sandbox.describe(), "network": {
                "description": network_line(&sandbox, network),
                "allow": network.allow, "deny": network.deny, "allowLocal": network.allow_local,
            }},
        });
        if let Some(notice) = sandbox.notice() {
            report["sandbox"]["notice"] = serde_json::json!(notice);
        }
        report["trust"] = trust;
        report["instructions"] = instructions;
        if let Some(server) = &server {
            report["modelServer"] = match server {
                Ok(said) => serde_json::json!({"ok": true, "message": said}),
                Err(why) => serde_json::json!({"ok": false, "message": why}),
            };
        }
        report["installed"] = serde_json::json!(copies
            .iter()
            .map(|copy| serde_json::json!({"what": copy.what, "path": copy.path, "version": copy.version}))
            .collect::<Vec<_>>());
        report["missing"] = serde_json::json!(missing.iter().map(|(what, fix)| serde_json::json!({"what": what, "fix": fix})).collect::<Vec<_>>());
        report["inlineCompletions"] = serde_json::json!({
            "enabled": inline.enabled,
            "provider": model.as_ref().ok().and_then(Option::as_ref).map(|m| m.api.name()),
            "baseUrl": model.as_ref().ok().and_then(Option::as_ref).map(|m| m.base_url.clone()),
            "problem": model.as_ref().err(),
            "sessions": sessions,
        });
        terminal::out_json_pretty(&report);
        return Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }
    outln!("tandem {}", env!("CARGO_PKG_VERSION"));
    outln!("workspace: {}", root.display());
    match &endpoint {
        Ok(endpoint) => outln!("model: {}", endpoint.describe()),
        Err(error) => outln!("model: WARNING: {error}"),
    }
    match &server {
        Some(Ok(said)) => outln!("model server: {said}"),
        Some(Err(why)) => outln!("model server: WARNING: {why}"),
        None => {}
    }
    outln!("sandbox: {}{}", if ok { "" } else { "WARNING: " }, sandbox.describe());
    outln!("network: {}", network_line(&sandbox, network));
    if matches!(sandbox, Availability::Disabled) {
        if let Some(notice) = sandbox.notice() {
            outln!("  {notice}");
        }
    }
    match &model {
        Ok(Some(model)) => outln!("inline completions: on ({} at {})", model.api.name(), model.base_url),
        Ok(None) => outln!("inline completions: off (see docs/completions.md)"),
        Err(problem) => outln!("inline completions: WARNING: {problem}"),
    }
    for session in sessions.iter().take(5) {
        let started = chrono::DateTime::from_timestamp(i64::try_from(session.started).unwrap_or(0), 0)
            .map_or_else(|| session.started.to_string(), |t| t.format("%Y-%m-%d %H:%M UTC").to_string());
        let rate = if session.shown == 0 { String::new() } else { format!(" ({:.0}%)", 100.0 * session.accepted as f64 / session.shown as f64) };
        outln!(
            "  session {started}: {} requests, {} shown, {} accepted{rate}; {} from the cache, {} dropped as stale, {} model failures",
            session.requests, session.shown, session.accepted, session.cache_hits, session.stale, session.failures
        );
    }
    let files = trust["files"].as_object().cloned().unwrap_or_default();
    match trust["state"].as_str() {
        Some("no project files") => outln!("trust: this folder has no settings files of its own (nothing to trust)"),
        Some("trusted") => outln!("trust: this folder's settings files are trusted"),
        _ => outln!("trust: WARNING: this folder's settings files are not trusted: they may only tighten"),
    }
    for (file, state) in &files {
        outln!("  {file}: {}", state.as_str().unwrap_or_default());
    }
    if let Some(notice) = trust["notice"].as_str() {
        for line in notice.lines() {
            outln!("  {line}");
        }
    }
    outln!("instructions (the system prompt's; each folder's AGENTS.md and the rules with paths load when the agent first works there):");
    for file in instructions["files"].as_array().into_iter().flatten() {
        let name = file["name"].as_str().unwrap_or_default();
        match file["notice"].as_str() {
            Some(notice) => outln!("  {name}: WARNING: {notice}"),
            None => outln!("  {name}: {} characters", file["chars"]),
        }
    }
    for rule in instructions["scopedRules"].as_array().into_iter().flatten() {
        outln!("  {} (for {})", rule["name"].as_str().unwrap_or_default(), rule["paths"].as_str().unwrap_or_default());
    }
    for skipped in instructions["skipped"].as_array().into_iter().flatten() {
        outln!("  WARNING: {}", skipped.as_str().unwrap_or_default());
    }
    outln!("  memory: {} entries in {}", instructions["memory"]["entries"], instructions["memory"]["folder"].as_str().unwrap_or("(no home folder)"));
    outln!("installed:");
    outln!("  this tandem: {} ({})", env!("CARGO_PKG_VERSION"), std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default());
    for copy in &copies {
        let version = copy.version.as_deref().unwrap_or("version unknown");
        let warning = if copy.version.as_deref() == Some(env!("CARGO_PKG_VERSION")) { "" } else { "WARNING: " };
        outln!("  {}: {warning}{version} ({})", copy.what, copy.path.display());
    }
    if missing.is_empty() {
        outln!("missing: nothing");
    } else {
        outln!("missing:");
        for (what, fix) in &missing {
            outln!("  - {what}");
            outln!("    fix: {fix}");
        }
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// How long `tandem doctor` waits for the model's server (and for another
/// copy's `--version`): `:checkhealth tandem` waits 10 s for all of it.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// Another installed copy of Tandem, and the version it says.
struct Copy {
    what: &'static str,
    path: std::path::PathBuf,
    version: Option<String>,
}

/// The copies of Tandem this user has installed where the installers put
/// them: `tandem` binaries on PATH (other than this one), the Neovim
/// plugin as lazy.nvim or vim.pack cloned it and the binary its installer
/// or Mason put beside it, and the VS Code extension (VS Code, its server,
/// VSCodium, Cursor, code-server).
async fn installed_copies() -> Vec<Copy> {
    let home = dirs::home_dir().unwrap_or_default();
    let data = tandem::environment::var("XDG_DATA_HOME").map(std::path::PathBuf::from).unwrap_or_else(|| home.join(".local/share"));
    let mut copies = Vec::new();
    let this = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    let path = tandem::environment::var("PATH").unwrap_or_default();
    let mut binaries: Vec<(&'static str, std::path::PathBuf)> = std::env::split_paths(&path).map(|dir| ("tandem on PATH", dir.join("tandem"))).collect();
    binaries.push(("Neovim plugin's binary", data.join("nvim/tandem/bin/tandem")));
    binaries.push(("Mason's tandem", data.join("nvim/mason/bin/tandem")));
    let mut seen = Vec::new();
    for (what, binary) in binaries {
        let Ok(real) = std::fs::canonicalize(&binary) else { continue };
        if Some(&real) == this.as_ref() || seen.contains(&real) || !real.is_file() {
            continue;
        }
        seen.push(real);
        copies.push(Copy { what, version: binary_version(&binary).await, path: binary });
    }
    let nvim = data.join("nvim");
    let mut plugins = vec![("Neovim plugin (lazy.nvim)", nvim.join("lazy/tandem"))];
    for pack in read_dirs(&nvim.join("site/pack")) {
        for kind in ["start", "opt"] {
            plugins.push(("Neovim plugin (vim.pack)", pack.join(kind).join("tandem")));
        }
    }
    for (what, dir) in plugins {
        let file = dir.join("editors/nvim/lua/tandem/version.lua");
        if let Ok(text) = std::fs::read_to_string(&file) {
            let version = text.lines().find_map(|line| line.trim().strip_prefix("return '").and_then(|v| v.strip_suffix('\'')).map(str::to_string));
            copies.push(Copy { what, path: dir, version });
        }
    }
    let extensions = [".vscode/extensions", ".vscode-server/extensions", ".vscode-oss/extensions", ".cursor/extensions"].map(|dir| home.join(dir));
    for dir in extensions.into_iter().chain([data.join("code-server/extensions")]) {
        for extension in read_dirs(&dir) {
            let is_tandem = extension.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("tandem.tandem-"));
            if !is_tandem {
                continue;
            }
            let version = std::fs::read_to_string(extension.join("package.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                .and_then(|manifest| manifest["version"].as_str().map(str::to_string));
            copies.push(Copy { what: "VS Code extension", path: extension, version });
        }
    }
    copies
}

/// The folders in `dir` (none when it cannot be read).
fn read_dirs(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(dir).map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect()).unwrap_or_default();
    found.sort();
    found
}

/// What `binary --version` says after "tandem " (bounded; `None` when it
/// does not answer so).
async fn binary_version(binary: &std::path::Path) -> Option<String> {
    let run = tokio::process::Command::new(binary).arg("--version").stdin(std::process::Stdio::null()).kill_on_drop(true).output();
    let output = tokio::time::timeout(PROBE_TIMEOUT, run).await.ok()?.ok()?;
    String::from_utf8_lossy(&output.stdout).trim().strip_prefix("tandem ").map(str::to_string)
}

/// What is missing for a run here, each with what to do about it.
fn missing(
    endpoint: &Result<tandem::host::Endpoint, String>,
    server: Option<&Result<String, String>>,
    sandbox: &Availability,
    trust: &serde_json::Value,
    copies: &[Copy],
) -> Vec<(String, String)> {
    let mut missing = Vec::new();
    if let Err(error) = endpoint {
        let first = error.lines().next().unwrap_or_default().trim_end_matches(". Set one of:").to_string();
        missing.push((
            format!("a model: {first}"),
            "set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL (a local server) in the environment or in ~/.tandem/settings.json (\"env\": {…}); `tandem doctor` above lists the choices".to_string(),
        ));
    }
    match server {
        Some(Err(why)) if why.contains("refuses the key") => missing.push((
            format!("a key the model's server takes: {why}"),
            "check the key: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) / OPENAI_API_KEY, in the environment or the \"env\" of ~/.tandem/settings.json".to_string(),
        )),
        Some(Err(why)) => missing.push((
            format!("the model's server: {why}"),
            "start the server (ollama serve, llama-server …), or set baseUrl (or OPENAI_BASE_URL / ANTHROPIC_BASE_URL) to where it listens".to_string(),
        )),
        _ => {}
    }
    if let Availability::Unavailable(_) = sandbox {
        missing.push((
            format!("a sandbox for shell commands: {}", sandbox.describe()),
            // What the platform's sandbox needs is the sandbox's to say (sandbox/).
            sandbox.notice().unwrap_or_else(|| "what the sandbox line above says it needs".to_string()),
        ));
    }
    if trust["state"] == "not trusted" {
        missing.push((
            "trust in this folder's settings files (until then they may only tighten)".to_string(),
            "`tandem trust` in this folder, if you trust its settings files as they are".to_string(),
        ));
    }
    for copy in copies.iter().filter(|copy| copy.version.as_deref() != Some(env!("CARGO_PKG_VERSION"))) {
        let version = copy.version.as_deref().unwrap_or("of an unknown version");
        let fix = match copy.what {
            "VS Code extension" => format!("install the extension of {0} (its .vsix for your platform from the release v{0}), or the tandem of {version}", env!("CARGO_PKG_VERSION")),
            "tandem on PATH" => format!("one version for all: replace {} (cargo install tandem-agent --locked --version {}) or remove it", copy.path.display(), env!("CARGO_PKG_VERSION")),
            _ => format!("update the plugin and run require('tandem.install').install() (see :help tandem-install) so both are {}", env!("CARGO_PKG_VERSION")),
        };
        missing.push((format!("the same version: the {} at {} is {version}, this tandem {}", copy.what, copy.path.display(), env!("CARGO_PKG_VERSION")), fix));
    }
    missing
}

/// The folder's trust: `{"state": "trusted" | "not trusted" | "no project
/// files", "files": {".tandem/settings.json": "trusted" | "changed since
/// trusted" | "not trusted"}, "notice"?: what was ignored and how to trust}`.
fn trust_report(root: &std::path::Path, problems: &[tandem::settings::SettingsProblem]) -> serde_json::Value {
    use tandem::trust::{project_files, read_project_file, FileTrust, Trust};
    let trust = Trust::of(root);
    let mut files = serde_json::Map::new();
    for relative in project_files(root) {
        // Read as the loaders read: a FIFO `.mcp.json` must not hang doctor.
        let bytes = match read_project_file(root, &relative) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            Err(refusal) => {
                files.insert(relative, serde_json::json!(format!("not read: {refusal}")));
                continue;
            }
        };
        let state = match trust.file(&relative, &bytes) {
            FileTrust::Trusted => "trusted",
            FileTrust::Changed => "changed since trusted",
            FileTrust::NotTrusted => "not trusted",
        };
        files.insert(relative, serde_json::json!(state));
    }
    let state = if files.is_empty() {
        "no project files"
    } else if files.values().all(|s| s == "trusted") {
        "trusted"
    } else {
        "not trusted"
    };
    let mut report = serde_json::json!({"state": state, "files": files});
    if let Some(notice) = tandem::settings::trust_notice(problems) {
        report["notice"] = serde_json::json!(notice);
    }
    report
}

/// What shell commands reach of the network: the lists, when a sandbox
/// holds commands to them.
fn network_line(sandbox: &Availability, network: &tandem::tools::ports::network::NetworkPolicy) -> String {
    match sandbox {
        Availability::Ready(_) => network.describe(),
        _ if network.enforced() => {
            "shell commands reach the whole network: without a sandbox, sandbox.network's lists do not hold for them (web_fetch still obeys them)".to_string()
        }
        _ => "shell commands reach the whole network: they run without a sandbox".to_string(),
    }
}
