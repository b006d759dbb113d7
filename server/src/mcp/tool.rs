//! One MCP tool as a Tandem tool: `mcp__SERVER__TOOL`, deferred, its
//! description and input schema passed through unchanged, its result turned
//! into text and the images the model sees. Neither read-only nor concurrency-safe unless the server
//! annotates it `readOnlyHint: true`; otherwise asked about like a shell
//! command.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use serde_json::Value;

use super::server::McpServer;
use crate::model::Image;
use crate::tools::{
    CallBody, CallTraits, DynTool, PreparedCall, ToolContext, ToolDefinition, ToolError, ToolKind, ToolOutput, DEFAULT_MAX_RESULT_CHARS,
};

/// The providers' limit on tool names (Anthropic and OpenAI: 64, `[a-zA-Z0-9_-]`).
pub const MAX_TOOL_NAME_LEN: usize = 64;

pub struct McpTool {
    pub(super) server: Weak<McpServer>,
    pub(super) server_name: String,
    /// The name the model sees: `mcp__SERVER__TOOL`.
    pub(super) name: String,
    /// The name the server knows.
    pub(super) remote_name: String,
    pub(super) description: String,
    pub(super) input_schema: Value,
    pub(super) read_only: bool,
}

impl McpTool {
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    pub fn read_only(&self) -> bool {
        self.read_only
    }

}

impl DynTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn definition(&self) -> ToolDefinition {
        ToolDefinition { name: self.name.clone(), description: self.description.clone(), input_schema: self.input_schema.clone() }
    }

    fn deferred(&self) -> bool {
        true
    }

    /// The server validates against its own schema; here only the shape
    /// MCP requires (arguments are an object). The permission subject is
    /// the tool's name ([`ToolKind::Other`]), so rules match it by pattern
    /// (`mcp__github__*`) and the default mode asks like a shell command.
    fn prepare(self: Arc<Self>, input: &Value, _ctx: &ToolContext) -> Result<PreparedCall, String> {
        let Value::Object(arguments) = input else {
            return Err(format!("expected a JSON object, got {input}"));
        };
        let traits = CallTraits {
            kind: ToolKind::Other,
            read_only: self.read_only,
            concurrency_safe: self.read_only,
            summary: short_json(input, 80),
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
        };
        let name = self.name.clone();
        Ok(PreparedCall::new(name, traits, Box::new(McpCall { tool: self, arguments: arguments.clone() })))
    }
}

/// One prepared call of an MCP tool.
struct McpCall {
    tool: Arc<McpTool>,
    arguments: serde_json::Map<String, Value>,
}

#[async_trait]
impl CallBody for McpCall {
    async fn plan(&mut self, _ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        Ok(None)
    }

    async fn call(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(server) = self.tool.server.upgrade() else {
            return Err(ToolError::model(format!("Error: the MCP server {} is no longer configured.", self.tool.server_name)));
        };
        server.call_tool(&self.tool.remote_name, self.arguments, ctx).await
    }
}

/// `mcp__SERVER__TOOL` with every character the providers refuse replaced
/// by `_`, cut to [`MAX_TOOL_NAME_LEN`] (with a short hash of the full name
/// so two long names stay distinct).
pub fn tool_name(server: &str, tool: &str) -> String {
    let full = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if full.len() <= MAX_TOOL_NAME_LEN {
        return full;
    }
    let hash = format!("{:08x}", fnv1a(full.as_bytes()) as u32);
    let keep = MAX_TOOL_NAME_LEN - hash.len() - 1;
    // Only ASCII is left after sanitising, so byte slicing is safe.
    format!("{}_{hash}", &full[..keep])
}

/// The start every tool name of `server` has: `mcp__SERVER__`.
pub fn tool_prefix(server: &str) -> String {
    format!("mcp__{}__", sanitize(server))
}

fn sanitize(part: &str) -> String {
    part.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

fn short_json(value: &Value, max_chars: usize) -> String {
    let text = value.to_string();
    if text.chars().count() <= max_chars {
        return text;
    }
    let cut: String = text.chars().take(max_chars).collect();
    format!("{cut}…")
}

/// What the model gets for a `tools/call` result: text content as is,
/// images passed through for it to see (each one also named in the text,
/// where it stands; one that is not a whole PNG, JPEG, GIF or WebP within
/// the size limits is said instead), audio and resources as a one-line
/// description, structured content as JSON when there is nothing else.
/// `Err` (the text) when the server set `isError`.
pub fn result_output(result: &Value) -> Result<ToolOutput, String> {
    let mut parts: Vec<String> = Vec::new();
    let mut images = Vec::new();
    for block in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or("");
        let part = match field("type") {
            "text" => field("text").to_string(),
            "image" => match mcp_image(field("data")) {
                Ok(image) => {
                    let line = format!("[image {} {}: attached]", images.len() + 1, image.media_type);
                    images.push(image);
                    line
                }
                Err(why) => format!("[image {}, {} not shown: {why}]", or_unknown(field("mimeType")), approx_size(field("data"))),
            },
            "audio" => format!("[audio {}, {} not shown]", or_unknown(field("mimeType")), approx_size(field("data"))),
            "resource" => {
                let resource = block.get("resource").unwrap_or(&Value::Null);
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
                let mime = resource.get("mimeType").and_then(Value::as_str).unwrap_or("unknown type");
                // Its text is the result's as much as a text block's is.
                match resource.get("text").and_then(Value::as_str) {
                    Some(text) => format!("[embedded resource {uri} ({mime})]\n{text}"),
                    None => {
                        let size = approx_size(resource.get("blob").and_then(Value::as_str).unwrap_or(""));
                        format!("[embedded resource {uri} ({mime}), {size}, not shown]")
                    }
                }
            }
            "resource_link" => {
                // Kept whole: what the link names is for the model to go on with.
                let about: Vec<&str> = ["name", "mimeType", "description"].into_iter().map(field).filter(|v| !v.is_empty()).collect();
                format!("[resource link {}{}]", field("uri"), if about.is_empty() { String::new() } else { format!(" ({})", about.join("; ")) })
            }
            other => format!("[{} content not shown]", or_unknown(other)),
        };
        parts.push(part);
    }
    let mut text = parts.join("\n");
    // Structured output is kept, unless a text block already is its JSON
    // (as the protocol asks servers to send it, for older clients).
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        let said = result
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .any(|t| serde_json::from_str::<Value>(t).ok().as_ref() == Some(structured));
        if text.is_empty() {
            text = structured.to_string();
        } else if !said {
            text = format!("{text}\nstructured content: {structured}");
        }
    }
    if text.is_empty() {
        text = "(no output)".to_string();
    }
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        Err(text)
    } else {
        Ok(ToolOutput { text, images })
    }
}

/// An MCP image's base64, checked as a file's bytes are (its `mimeType`
/// is the server's word; the bytes say what it is).
fn mcp_image(data: &str) -> Result<Image, String> {
    use base64::Engine as _;
    // The base64 of an image over the limit is refused before decoding it.
    if data.len() as u64 > crate::model::image::MAX_IMAGE_BYTES / 3 * 4 + 4 {
        return Err(format!("over the {}-byte limit for an image sent to the model", crate::model::image::MAX_IMAGE_BYTES));
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.trim()).map_err(|e| format!("its data is not base64 ({e})"))?;
    Image::from_bytes(&bytes, "the image").map_err(|why| why.trim_end_matches('.').to_string())
}

fn or_unknown(text: &str) -> &str {
    if text.is_empty() { "unknown type" } else { text }
}

/// The decoded size of base64 data, roughly, for humans.
fn approx_size(base64: &str) -> String {
    let bytes = base64.len() / 4 * 3;
    if bytes >= 1024 { format!("{} KB", bytes / 1024) } else { format!("{bytes} bytes") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_sanitised_and_bounded() {
        assert_eq!(tool_name("github", "create_issue"), "mcp__github__create_issue");
        assert_eq!(tool_name("my server", "get.file/v2"), "mcp__my_server__get_file_v2");
        assert_eq!(tool_name("ünï", "ok-1"), "mcp___n___ok-1");
        let long = tool_name("a-very-long-server-name-indeed", "and_an_even_longer_tool_name_that_goes_on_and_on");
        assert_eq!(long.len(), MAX_TOOL_NAME_LEN);
        assert!(long.starts_with("mcp__a-very-long-server-name-indeed__and_"), "{long}");
        let other = tool_name("a-very-long-server-name-indeed", "and_an_even_longer_tool_name_that_goes_on_and_off");
        assert_ne!(long, other, "the hash keeps cut names apart");
    }

    #[test]
    fn results_become_text() {
        let result = json!({"content": [
            {"type": "text", "text": "sum: 5"},
            {"type": "image", "data": "A".repeat(4096), "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
        ]});
        expect_test::expect![[r#"
            sum: 5
            [image image/png, 3 KB not shown: the image is not a PNG, JPEG, GIF or WebP image (the only image formats sent to the model)]
            [embedded resource file:///a.txt (text/plain)]
            hello
            [resource link file:///b (b)]
            [audio audio/wav, 3 bytes not shown]"#]]
        .assert_eq(&result_output(&result).unwrap().text);
        let text = |result: Value| result_output(&result).map(|output| output.text);
        assert_eq!(text(json!({"content": [{"type": "text", "text": "bad"}], "isError": true})), Err("bad".into()));
        assert_eq!(text(json!({"content": [], "structuredContent": {"a": 1}})), Ok(r#"{"a":1}"#.into()));
        assert_eq!(text(json!({"content": []})), Ok("(no output)".into()));
        // Structured output beside a text that is not it is kept; one the text already is, not twice.
        assert_eq!(
            text(json!({"content": [{"type": "text", "text": "Sunny"}], "structuredContent": {"t": 30}})),
            Ok("Sunny\nstructured content: {\"t\":30}".into())
        );
        assert_eq!(text(json!({"content": [{"type": "text", "text": "{\"t\": 30}"}], "structuredContent": {"t": 30}})), Ok("{\"t\": 30}".into()));
        let link = json!({"content": [{"type": "resource_link", "uri": "demo://r/1", "name": "r1", "mimeType": "text/plain", "description": "The first"}]});
        assert_eq!(text(link), Ok("[resource link demo://r/1 (r1; text/plain; The first)]".into()));
    }

    /// An image the server returns reaches the model as an image; one that
    /// is not a whole image is said in the text.
    #[test]
    fn image_content_is_passed_through() {
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD.encode(crate::model::image::samples::png(4, 4));
        let cut = base64::engine::general_purpose::STANDARD.encode(&crate::model::image::samples::png(4, 4)[..40]);
        let result = json!({"content": [
            {"type": "text", "text": "the chart:"},
            {"type": "image", "data": png, "mimeType": "image/png"},
            {"type": "image", "data": cut, "mimeType": "image/png"},
            {"type": "image", "data": "%%%", "mimeType": "image/png"}
        ]});
        let output = result_output(&result).unwrap();
        expect_test::expect![[r#"
            the chart:
            [image 1 image/png: attached]
            [image image/png, 42 bytes not shown: the image is a PNG image whose data is cut off or damaged (it ends before the IEND chunk), so it cannot be shown]
            [image image/png, 0 bytes not shown: its data is not base64 (Invalid symbol 37, offset 0.)]"#]]
        .assert_eq(&output.text);
        assert_eq!(output.images.len(), 1);
        assert_eq!(output.images[0].data, png);
    }
}
