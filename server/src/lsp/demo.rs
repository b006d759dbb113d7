//! The editor act of `tandem demo`: the real language server in-process,
//! over a pipe, driven by a small in-process editor. The editor opens a
//! file and types a line it does not save; the scripted agent reads the
//! buffer (unsaved line included); while Tandem's permission prompt is up
//! the user types again; the agent's edit, planned on the text it read, is
//! refused; it re-reads, the user approves "Apply edit?", and the edit
//! arrives as a versioned, minimal `workspace/applyEdit` — with both typed
//! lines intact and nothing written to disk.
//!
//! Call [`editor_act`]; it narrates through `say` and returns the checks
//! (`(passed, what)`) for the caller to print as `✓ verified: …`.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use ropey::Rope;
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc;
use tower_lsp_server::ls_types::TextEdit;

use super::documents::path_to_uri;
use super::edits::{apply_as_editor, apply_text_edits};
use super::position::PositionEncoding;
use crate::wire::{frame_json, FrameReader};

const GREET_RS: &str = "pub fn greet() -> &'static str {\n    \"Hello, world\"\n}\n";
const FIRST_TYPED: &str = "// TODO(user): say it louder\n";
const SECOND_TYPED: &str = "/// The greeting (typed while Tandem was asking).\n";
/// Every wait on the server is bounded.
const WAIT: Duration = Duration::from_secs(20);

fn script() -> Value {
    let read = json!({"name": "read_file", "input": {"file_path": "src/greet.rs"}});
    let edit = json!({"name": "edit_file", "input": {"file_path": "src/greet.rs", "old_string": "\"Hello, world\"", "new_string": "\"Hello, Tandem\""}});
    json!({"turns": [
        {"text": "Let me look at the greeting in your editor.", "tool_calls": [read]},
        {"text": "Let me check the build first.", "tool_calls": [{"name": "run_shell", "input": {"command": "mkdir -p target && echo build ok"}}]},
        {"text": "Now the edit.", "tool_calls": [edit]},
        {"text": "You changed the file since I read it; reading it again.", "tool_calls": [read]},
        {"text": "My edit leaves your lines alone.", "tool_calls": [edit]},
        {"text": "Done: the greeting says \"Hello, Tandem\", and your unsaved lines are kept."}
    ]})
}

/// The in-process editor: framed JSON-RPC over a pipe, and its buffer.
struct Editor {
    writer: WriteHalf<DuplexStream>,
    incoming: mpsc::UnboundedReceiver<Value>,
    next_id: i64,
    uri: String,
    text: String,
    version: i32,
}

async fn read_frames(reader: ReadHalf<DuplexStream>, out: mpsc::UnboundedSender<Value>) {
    let mut reader = FrameReader::new(reader);
    while let Ok(Some(message)) = reader.next_json().await {
        if out.send(message).is_err() {
            return;
        }
    }
}

impl Editor {
    async fn send(&mut self, message: Value) -> anyhow::Result<()> {
        self.writer.write_all(&frame_json(&message)).await?;
        Ok(())
    }

    async fn notify(&mut self, method: &str, params: Value) -> anyhow::Result<()> {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params})).await
    }

    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<i64> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        Ok(id)
    }

    async fn respond(&mut self, id: &Value, result: Value) -> anyhow::Result<()> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result})).await
    }

    /// The next message from the server, bounded by [`WAIT`].
    async fn next(&mut self) -> anyhow::Result<Value> {
        tokio::time::timeout(WAIT, self.incoming.recv())
            .await
            .context("the server did not answer in time")?
            .context("the server closed the connection")
    }

    /// The user types `text` at the start of `line`.
    async fn type_line(&mut self, line: u32, text: &str) -> anyhow::Result<()> {
        let at = json!({"line": line, "character": 0});
        let mut rope = Rope::from_str(&self.text);
        let edit: TextEdit = serde_json::from_value(json!({"range": {"start": at, "end": at}, "newText": text}))?;
        apply_text_edits(&mut rope, &[edit], PositionEncoding::Utf16);
        self.text = rope.to_string();
        self.version += 1;
        let params = json!({
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [{"range": {"start": at, "end": at}, "text": text}],
        });
        self.notify("textDocument/didChange", params).await
    }

    /// A round trip: once answered, earlier notifications are applied.
    async fn barrier(&mut self) -> anyhow::Result<()> {
        let zero = json!({"line": 0, "character": 0});
        let id = self
            .request("textDocument/codeAction", json!({"textDocument": {"uri": self.uri}, "range": {"start": zero, "end": zero}, "context": {"diagnostics": []}}))
            .await?;
        loop {
            let message = self.next().await?;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return Ok(());
            }
        }
    }
}

/// Run the editor act in `root` (an empty folder). `say` gets the narration.
pub async fn editor_act(root: &Path, mut say: impl FnMut(&str)) -> anyhow::Result<Vec<(bool, String)>> {
    let root = root.canonicalize()?;
    std::fs::create_dir_all(root.join("src"))?;
    let file = root.join("src/greet.rs");
    std::fs::write(&file, GREET_RS)?;
    let script_path = root.join(".tandem-demo-script.json");
    std::fs::write(&script_path, script().to_string())?;

    let (client_end, server_end) = tokio::io::duplex(256 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let server = tokio::spawn(super::serve(server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client_end);
    let (tx, incoming) = mpsc::unbounded_channel();
    tokio::spawn(read_frames(client_read, tx));
    let uri = path_to_uri(&file).context("file URI")?.as_str().to_string();
    let mut editor = Editor { writer: client_write, incoming, next_id: 0, uri, text: GREET_RS.to_string(), version: 1 };

    let root_uri = path_to_uri(&root).context("root URI")?.as_str().to_string();
    let init = editor
        .request(
            "initialize",
            json!({"rootUri": root_uri, "capabilities": {}, "initializationOptions": {"tandem": {
                "provider": "scripted", "script": script_path.to_string_lossy(), "permissionMode": "default"
            }}}),
        )
        .await?;
    while editor.next().await?["id"] != json!(init) {}
    editor.notify("initialized", json!({})).await?;
    let open = json!({"textDocument": {"uri": editor.uri, "languageId": "rust", "version": 1, "text": GREET_RS}});
    editor.notify("textDocument/didOpen", open).await?;
    say("editor: opens src/greet.rs");
    editor.type_line(0, FIRST_TYPED).await?;
    say(&format!("editor: the user types {:?} and does not save", FIRST_TYPED.trim_end()));

    let ask = editor
        .request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "Make the greeting say Hello, Tandem"}]}))
        .await?;
    say("editor: runs \"Tandem: ask\" — Make the greeting say Hello, Tandem");
    let mut results: Vec<(bool, String)> = Vec::new();
    let mut apply_edit_params = None;
    let answer = loop {
        let message = editor.next().await?;
        let method = message["method"].as_str().unwrap_or_default().to_string();
        match method.as_str() {
            "tandem/runEvent" => {
                let event = &message["params"]["event"];
                match event["type"].as_str() {
                    Some("tool_call") => say(&format!("agent: {} {}", event["name"].as_str().unwrap_or(""), event["input"])),
                    Some("tool_result") => {
                        let content = event["content"].as_str().unwrap_or("").to_string();
                        let first = content.lines().next().unwrap_or("").to_string();
                        say(&format!("  → {}{first}", if event["is_error"] == true { "error: " } else { "" }));
                        results.push((event["is_error"] == true, content));
                    }
                    _ => {}
                }
            }
            "window/showMessageRequest" => {
                let prompt = message["params"]["message"].as_str().unwrap_or("").to_string();
                say(&format!("editor prompt: {prompt}"));
                if prompt.contains("shell command") {
                    // The user types while Tandem is waiting for the answer.
                    editor.type_line(1, SECOND_TYPED).await?;
                    editor.barrier().await?;
                    say(&format!("editor: meanwhile the user types {:?}; then clicks \"Allow once\"", SECOND_TYPED.trim_end()));
                    editor.respond(&message["id"], json!({"title": "Allow once"})).await?;
                } else {
                    say("editor: the user clicks \"Apply\"");
                    editor.respond(&message["id"], json!({"title": "Apply"})).await?;
                }
            }
            "workspace/applyEdit" => {
                let change = &message["params"]["edit"]["documentChanges"][0];
                let version = change["textDocument"]["version"].as_i64().unwrap_or(-1);
                say(&format!("editor: workspace/applyEdit for version {version}: {}", change["edits"]));
                let edits: Vec<TextEdit> = serde_json::from_value(change["edits"].clone())?;
                let applied = match apply_as_editor(&message["params"], &editor.text, editor.version, PositionEncoding::Utf16) {
                    Ok(applied) => {
                        editor.notify("textDocument/didChange", applied.did_change()).await?;
                        editor.text = applied.text;
                        editor.version = applied.version;
                        true
                    }
                    Err(_) => false,
                };
                editor.respond(&message["id"], json!({"applied": applied})).await?;
                apply_edit_params = Some((version, edits));
            }
            "" if message["id"] == json!(ask) => break message,
            _ => {}
        }
    };
    let final_text = editor.text.clone();
    let _ = editor.request("shutdown", Value::Null).await;
    let _ = editor.notify("exit", Value::Null).await;
    drop(editor);
    let _ = tokio::time::timeout(WAIT, server).await;
    let _ = std::fs::remove_file(&script_path);

    let status = answer["result"]["status"].as_str().unwrap_or("(no answer)").to_string();
    say(&format!("tandem.ask answered: {status} — {}", answer["result"]["text"].as_str().unwrap_or("")));
    let expected = format!("{FIRST_TYPED}{SECOND_TYPED}{}", GREET_RS.replace("Hello, world", "Hello, Tandem"));
    let checks = vec![
        (status == "completed", "the run completed".to_string()),
        (
            results.first().is_some_and(|(error, text)| !error && text.contains("TODO(user)")),
            "read_file saw the unsaved line in the editor buffer, not the disk".to_string(),
        ),
        (
            results.get(2).is_some_and(|(error, text)| *error && text.contains("modified externally since your last read")),
            "the edit planned on the old text was refused: the user had typed since the read".to_string(),
        ),
        (
            matches!(&apply_edit_params, Some((3, edits)) if edits.len() == 1 && edits[0].range.start.line == edits[0].range.end.line),
            "the edit arrived as one versioned, minimal TextEdit (version 3, one line)".to_string(),
        ),
        (final_text == expected, "the buffer holds the edit and both typed lines".to_string()),
        (std::fs::read_to_string(&file)? == GREET_RS, "nothing was written to disk: the buffer stays unsaved".to_string()),
    ];
    Ok(checks)
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_editor_act_passes_its_checks() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut narration = Vec::new();
        let checks = super::editor_act(dir.path(), |line| narration.push(line.to_string())).await.expect("the act runs");
        let failed: Vec<_> = checks.iter().filter(|(ok, _)| !ok).collect();
        assert!(failed.is_empty(), "failed: {failed:?}\n{}", narration.join("\n"));
    }
}
