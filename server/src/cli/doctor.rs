//! `tandem doctor`: what this machine and this folder's settings give
//! Tandem, in plain words, for the user to check before a run (and for
//! `:checkhealth tandem`, which runs `tandem doctor --json`): which model
//! endpoint a run would talk to and why (the one decision every front end
//! makes, `host::endpoint`); whether shell commands run in a sandbox, and
//! why not; whether the folder's own settings files are trusted, and what
//! was ignored until they are; whether inline completions are on, with the
//! shown / accepted counts of the last language-server sessions in this
//! folder (kept locally, for tuning `debounceMs`).

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
/// {"state", "files", "notice"?}}` (see [`trust_report`]). `editor`: an
/// editor's settings over the files (`--editor-settings`).
pub fn doctor(root: &std::path::Path, json: bool, editor: Option<&str>) -> anyhow::Result<ExitCode> {
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
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
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
