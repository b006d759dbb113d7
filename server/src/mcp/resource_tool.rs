//! `mcp_resource`: the model lists and reads the MCP servers' resources
//! (`resources/list` as the servers last listed them, `resources/read`).
//! Read-only, as an MCP tool the server marks `readOnlyHint` is: it only
//! reads what a server the user configured offers. Deferred, and offered
//! only while a ready server has resources.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::server::{McpServer, ServerState};
use crate::tools::{CallBody, CallTraits, DynTool, PreparedCall, ToolContext, ToolDefinition, ToolError, ToolKind, ToolOutput, DEFAULT_MAX_RESULT_CHARS};

/// The tool's name.
pub const NAME: &str = "mcp_resource";

pub struct ResourceTool {
    /// The servers with resources when the tool was listed.
    pub(super) servers: Vec<Weak<McpServer>>,
}

impl DynTool for ResourceTool {
    fn name(&self) -> &str {
        NAME
    }

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: NAME.to_string(),
            description: "List or read the resources of the MCP servers (documents, records and the like they offer). \
                Without `uri`: the resources of `server` (or of every server), each with its URI. With `server` and `uri`: the resource's text."
                .to_string(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The MCP server's name"},
                    "uri": {"type": "string", "description": "The resource's URI, as listed"}
                }
            }),
        }
    }

    fn deferred(&self) -> bool {
        true
    }

    fn prepare(self: Arc<Self>, input: &Value, _ctx: &ToolContext) -> Result<PreparedCall, String> {
        let text = |key: &str| match input.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
            Some(other) => Err(format!("`{key}` must be a non-empty string, got {other}")),
        };
        let (server, uri) = (text("server")?, text("uri")?);
        if uri.is_some() && server.is_none() {
            return Err("reading a resource needs `server` too (the name its list gave)".to_string());
        }
        let summary = match (&server, &uri) {
            (Some(server), Some(uri)) => format!("@{server}:{uri}"),
            (Some(server), None) => format!("list {server}"),
            _ => "list".to_string(),
        };
        let traits = CallTraits { kind: ToolKind::Other, read_only: true, concurrency_safe: true, summary, max_result_chars: DEFAULT_MAX_RESULT_CHARS };
        Ok(PreparedCall::new(NAME, traits, Box::new(ResourceCall { tool: self, server, uri })))
    }
}

struct ResourceCall {
    tool: Arc<ResourceTool>,
    server: Option<String>,
    uri: Option<String>,
}

#[async_trait]
impl CallBody for ResourceCall {
    async fn plan(&mut self, _ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        Ok(None)
    }

    async fn call(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let servers: Vec<Arc<McpServer>> = self.tool.servers.iter().filter_map(Weak::upgrade).collect();
        let names = || servers.iter().map(|s| s.name().to_string()).collect::<Vec<_>>().join(", ");
        let chosen: Vec<&Arc<McpServer>> = match &self.server {
            Some(name) => match servers.iter().find(|s| s.name() == name) {
                Some(server) => vec![server],
                None => return Err(ToolError::model(format!("Error: no MCP server named {name} has resources; these do: {}", names()))),
            },
            None => servers.iter().collect(),
        };
        if let (Some(server), Some(uri)) = (chosen.first(), &self.uri) {
            if server.state() != ServerState::Ready {
                return Err(ToolError::model(format!("Error: the MCP server {} is not running.", server.name())));
            }
            let text = server.read_resource(uri, &ctx.cancel).await.map_err(|why| ToolError::model(format!("Error: {why}")))?;
            return Ok(text.into());
        }
        let mut out = String::new();
        for server in chosen {
            for resource in server.resources() {
                let mime = resource.mime_type.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
                out.push_str(&format!("{} {} {}{mime}\n", server.name(), resource.uri, resource.name));
            }
        }
        if out.is_empty() {
            out.push_str("No resources.");
        }
        Ok(out.into())
    }
}
