//! MCP servers in the editor: started when the workspace opens (never
//! blocking a run), reported to the user (`window/showMessage` when one
//! fails, `window/logMessage` when one is ready), project servers approved
//! through a prompt (remembered per workspace), a remote server that needs
//! the user to sign in signed in through a prompt and the browser
//! (`window/showDocument` of the authorization address), and `tandem.mcpStatus`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, ClientLink};
use crate::mcp::{McpManager, Report};

pub const MCP_STATUS_COMMAND: &str = "tandem.mcpStatus";

const ALLOW: &str = "Allow";
const DONT_ALLOW: &str = "Don't allow";
const SIGN_IN: &str = "Sign in";
const NOT_NOW: &str = "Not now";

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
                Report::Failed { name, reason } if reason.starts_with(crate::mcp::NEEDS_AUTHORIZATION) => {
                    if let Some(manager) = weak.upgrade() {
                        sign_in(&manager, Arc::clone(&client), name, prompt_timeout).await;
                    }
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

/// Offer to sign in to a remote server that wants it; on yes, open the
/// authorization address in the user's browser (`window/showDocument`,
/// external) and start the server again once signed in.
async fn sign_in(manager: &Arc<McpManager>, client: Arc<dyn ClientLink>, name: &str, timeout: Duration) {
    let action = |title: &str| MessageActionItem { title: title.to_string(), properties: Default::default() };
    let params = ShowMessageRequestParams {
        typ: MessageType::WARNING,
        message: format!("Tandem: the MCP server \"{name}\" needs you to sign in. Open the sign-in page in your browser?"),
        actions: Some(vec![action(SIGN_IN), action(NOT_NOW)]),
    };
    let Ok(params) = serde_json::to_value(params) else { return };
    let answer = request_with_timeout(&*client, methods::SHOW_MESSAGE_REQUEST, params, timeout).await;
    if answer.ok().and_then(|a| a.get("title").and_then(Value::as_str).map(str::to_string)).as_deref() != Some(SIGN_IN) {
        return;
    }
    let opener = Arc::clone(&client);
    let show = move |url: &str| {
        let url = url.to_string();
        tokio::spawn(async move {
            let shown = request_with_timeout(&*opener, methods::SHOW_DOCUMENT, json!({"uri": url, "external": true}), timeout).await;
            if shown.is_err() {
                let message = format!("Tandem: open this address in a browser to sign in: {url}");
                opener.notify(methods::SHOW_MESSAGE, json!({"type": 3, "message": message})).await;
            }
        });
    };
    match manager.login(name, crate::mcp::oauth::LOGIN_TIMEOUT, show).await {
        Ok(_) => {
            if let Err(err) = manager.retry(name) {
                tracing::warn!(%err, "cannot start the MCP server again");
            }
        }
        Err(reason) => {
            let message = format!("Tandem: cannot sign in to the MCP server {name}: {reason}");
            client.notify(methods::SHOW_MESSAGE, json!({"type": 1, "message": message})).await;
        }
    }
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
