//! MCP servers in the editor: started when the workspace opens (never
//! blocking a run), reported to the user (`window/showMessage` when one
//! fails, `window/logMessage` when one is ready), project servers approved
//! through a prompt (remembered per workspace), and `tandem.mcpStatus`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, ClientLink};
use crate::mcp::{McpManager, Report};

pub const MCP_STATUS_COMMAND: &str = "tandem.mcpStatus";

const ALLOW: &str = "Allow";
const DONT_ALLOW: &str = "Don't allow";

/// Start the approved servers and report what happens to each.
pub fn start(manager: &Arc<McpManager>, client: Arc<dyn ClientLink>, prompt_timeout: Duration) {
    for warning in manager.warnings() {
        let client = Arc::clone(&client);
        let message = format!("Tandem: MCP configuration: {warning}");
        tokio::spawn(async move { client.notify(methods::SHOW_MESSAGE, json!({"type": 2, "message": message})).await });
    }
    manager.start();
    let weak = Arc::downgrade(manager);
    manager.spawn_reporter(move |report| {
        let client = Arc::clone(&client);
        let weak = weak.clone();
        tokio::spawn(async move {
            match &report {
                Report::Ready { .. } => {
                    client.notify(methods::LOG_MESSAGE, json!({"type": 3, "message": format!("Tandem: {}", report.message())})).await;
                }
                Report::Failed { .. } => {
                    client.notify(methods::SHOW_MESSAGE, json!({"type": 2, "message": format!("Tandem: {}", report.message())})).await;
                }
                Report::NeedsApproval { name, source, target } => {
                    if ask_approval(&*client, name, source, target, prompt_timeout).await {
                        if let Some(manager) = weak.upgrade() {
                            if let Err(err) = manager.approve(name) {
                                tracing::warn!(%err, "cannot approve the MCP server");
                            }
                        }
                    }
                }
            }
        });
    });
}

/// Ask whether a project server may start. No answer means no.
async fn ask_approval(client: &dyn ClientLink, name: &str, source: &str, target: &str, timeout: Duration) -> bool {
    let action = |title: &str| MessageActionItem { title: title.to_string(), properties: Default::default() };
    let params = ShowMessageRequestParams {
        typ: MessageType::WARNING,
        message: format!("Tandem: the project's MCP server \"{name}\" ({source}) wants to run: {target}. Allow it in this workspace?"),
        actions: Some(vec![action(ALLOW), action(DONT_ALLOW)]),
    };
    let Ok(params) = serde_json::to_value(params) else { return false };
    match request_with_timeout(client, methods::SHOW_MESSAGE_REQUEST, params, timeout).await {
        Ok(answer) => answer.get("title").and_then(Value::as_str) == Some(ALLOW),
        Err(err) => {
            tracing::info!(server = name, %err, "MCP approval prompt got no answer; the server stays off");
            false
        }
    }
}

/// `tandem.mcpStatus`: every server, its state and its tools.
pub fn status(manager: &McpManager) -> Value {
    json!({"servers": manager.statuses()})
}
