//! `tandem mcp list`: every configured MCP server, where it comes from, its
//! state (starting, ready, failed with the reason, needs approval) and its
//! tools. Approved servers are started (in parallel, each within its
//! start-up timeout) to list their tools, then stopped.
//!
//! `tandem mcp login NAME` / `logout NAME`: OAuth for a remote server
//! ([`tandem::mcp::oauth`]); the terminal prints the address to open.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tandem::host::{CodeIntelFrom, FrontEnd, Host, McpServers};
use tandem::mcp::ServerState;
use tandem::workspace::Workspace;

use super::terminal::{self, errln, outln};

/// Beyond the longest start-up timeout, how long `list` waits for servers.
const LIST_MARGIN: Duration = Duration::from_secs(2);

/// The servers as a run here gets them (project ones approved or not), not started.
fn servers(approve: Vec<String>) -> anyhow::Result<(Host, Vec<tandem::settings::SettingsProblem>)> {
    let workspace = Arc::new(Workspace::new(std::env::current_dir()?)?);
    // As `tandem ask` reads them, but what an untrusted folder's files
    // asked for is said below, with the servers.
    let (settings, problems) = tandem::host::load_settings(workspace.root()).map_err(|fatal| anyhow::anyhow!("{fatal}"))?;
    for problem in problems.iter().filter(|p| !p.needs_trust()) {
        errln!("tandem: settings: {problem}");
    }
    // The servers the host gives a run here, as a run would get them.
    let (host, _) = Host::open(FrontEnd {
        workspace,
        settings: Arc::new(std::sync::RwLock::new(settings)),
        prompter: None,
        mode: None,
        rules_in_project: false,
        hooks: Default::default(),
        mcp: Some(McpServers { approve, front_end: Vec::new() }),
        code_intel: CodeIntelFrom::None,
        record: false,
    });
    Ok((host, problems))
}

pub async fn list(json: bool, approve: Vec<String>) -> anyhow::Result<ExitCode> {
    let (host, problems) = servers(approve)?;
    let Some(manager) = host.mcp() else { return Ok(ExitCode::SUCCESS) };
    let wait = manager.startup_timeout() + LIST_MARGIN;
    manager.start();
    manager.wait_settled(wait).await;
    let statuses = manager.statuses();
    manager.shutdown().await;
    if json {
        terminal::out_json_pretty(&serde_json::json!({"servers": statuses}));
        return Ok(ExitCode::SUCCESS);
    }
    for warning in manager.warnings() {
        outln!("warning: {warning}");
    }
    // Servers in files of a folder not trusted yet are not listed: say so.
    if let Some(notice) = tandem::settings::trust_notice(&problems) {
        outln!("warning: {notice}");
    }
    if statuses.is_empty() {
        outln!("No MCP servers configured (~/.tandem/mcp.json, .mcp.json, mcpServers in .tandem/settings.json).");
        return Ok(ExitCode::SUCCESS);
    }
    for status in &statuses {
        outln!("{}  [{}]  {}", status.name, status.source, status.target);
        outln!("  {}", status.state.label());
        if status.state == ServerState::NeedsApproval {
            outln!("  approve with: tandem ask --mcp-approve {} …  (or in the editor's prompt)", status.name);
        }
        for tool in &status.tools {
            outln!("  - {tool}");
        }
        for resource in &status.resources {
            outln!("  resource @{}:{}  ({})", status.name, resource.uri, resource.name);
        }
        for prompt in &status.prompts {
            let arguments: Vec<String> =
                prompt.arguments.iter().map(|(name, required)| if *required { name.clone() } else { format!("[{name}]") }).collect();
            outln!("  prompt /{}:{} {}", status.name, prompt.name, arguments.join(" "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn login(name: &str) -> anyhow::Result<ExitCode> {
    let (host, _) = servers(Vec::new())?;
    let Some(manager) = host.mcp() else { return Ok(ExitCode::SUCCESS) };
    let show = |url: &str| {
        errln!("To sign in to {name}, open this address in a browser:");
        // Alone on its line, so it can be copied (or read by a program).
        outln!("{url}");
    };
    match manager.login(name, tandem::mcp::oauth::LOGIN_TIMEOUT, show).await {
        Ok(path) => {
            errln!("Signed in to {name}; the tokens are in {}.", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(reason) => {
            errln!("tandem: cannot sign in to {name}: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}

pub async fn logout(name: &str) -> anyhow::Result<ExitCode> {
    use tandem::mcp::oauth::Logout;
    let (host, _) = servers(Vec::new())?;
    let Some(manager) = host.mcp() else { return Ok(ExitCode::SUCCESS) };
    match manager.logout(name).await {
        Ok(Logout::NotSignedIn) => outln!("Not signed in to {name}."),
        Ok(Logout::Revoked) => outln!("Signed out of {name}: the tokens are revoked and deleted."),
        Ok(Logout::Deleted { not_revoked }) => outln!("Signed out of {name}: the tokens are deleted here, not revoked ({not_revoked})."),
        Err(reason) => {
            errln!("tandem: cannot sign out of {name}: {reason}");
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}
