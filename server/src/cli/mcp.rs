//! `tandem mcp list`: every configured MCP server, where it comes from, its
//! state (starting, ready, failed with the reason, needs approval) and its
//! tools. Approved servers are started (in parallel, each within its
//! start-up timeout) to list their tools, then stopped.

use std::process::ExitCode;
use std::time::Duration;

use tandem::mcp::config::McpConfig;
use tandem::mcp::{Approvals, McpManager, ServerState};

/// Beyond the longest start-up timeout, how long `list` waits for servers.
const LIST_MARGIN: Duration = Duration::from_secs(2);

#[allow(clippy::print_stdout)]
pub async fn list(json: bool, approve: Vec<String>) -> anyhow::Result<ExitCode> {
    let root = std::env::current_dir()?;
    let config = McpConfig::load(dirs::home_dir().as_deref(), &root);
    let wait = config.startup_timeout + LIST_MARGIN;
    let manager = McpManager::new(config, &root, Approvals::from_command_line(approve));
    manager.start();
    manager.wait_settled(wait).await;
    let statuses = manager.statuses();
    manager.shutdown().await;
    if json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"servers": statuses}))?);
        return Ok(ExitCode::SUCCESS);
    }
    for warning in manager.warnings() {
        println!("warning: {warning}");
    }
    // Servers in files of a folder not trusted yet are not listed: say so.
    let (_, problems) = tandem::host::load_settings(&root);
    if let Some(notice) = tandem::settings::trust_notice(&problems) {
        println!("warning: {notice}");
    }
    if statuses.is_empty() {
        println!("No MCP servers configured (~/.tandem/mcp.json, .mcp.json, mcpServers in .tandem/settings.json).");
        return Ok(ExitCode::SUCCESS);
    }
    for status in &statuses {
        println!("{}  [{}]  {}", status.name, status.source, status.target);
        println!("  {}", status.state.label());
        if status.state == ServerState::NeedsApproval {
            println!("  approve with: tandem ask --mcp-approve {} …  (or in the editor's prompt)", status.name);
        }
        for tool in &status.tools {
            println!("  - {tool}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
