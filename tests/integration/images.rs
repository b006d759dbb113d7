//! Images end to end through `tandem ask`, against loopback mocks of each
//! API that check the wire shape the way the real ones do: `read_file` of
//! a PNG reaches Anthropic as an `image` block inside the `tool_result`,
//! the Responses API as an `input_image` in the `function_call_output`,
//! and chat completions (whose tool messages carry no image) as a user
//! message right after the tool message; a model the table says sees no
//! images gets a line of text instead, and a cut-off PNG an error result.

#![allow(clippy::unwrap_used)]

use std::process::Stdio;

use crate::common;
use common::mock_model::{MockModel, MockResponse, RecordedRequest};
use common::turns::{message_end, message_start, text, tool_block};
use serde_json::{json, Value};
use tokio::process::Command;

/// A whole 2x2 PNG (red), as base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";

fn png() -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(PNG).unwrap()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shot.png"), png()).unwrap();
    dir
}

fn tandem(dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    for var in common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    command.env("XDG_DATA_HOME", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"));
    command.env("HOME", dir.join(".home"));
    command
}

async fn ask(mut command: Command) -> (Option<i32>, Vec<Value>, String) {
    let output = command.output().await.unwrap();
    let events = String::from_utf8(output.stdout).unwrap().lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    (output.status.code(), events, String::from_utf8(output.stderr).unwrap())
}

// ---- Anthropic ----

/// The Messages API's check on image blocks: a base64 source with one of
/// the four media types and data that decodes, else a 400 naming the block.
fn anthropic_image_rules(request: &RecordedRequest) -> Option<MockResponse> {
    let bad = |message: &str| {
        Some(MockResponse::error(400, &json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}).to_string()))
    };
    for message in request.body["messages"].as_array()? {
        for block in message["content"].as_array().into_iter().flatten() {
            let inner: Vec<&Value> = match block["content"].as_array() {
                Some(parts) => parts.iter().collect(),
                None => vec![block],
            };
            for part in inner.into_iter().filter(|p| p["type"] == "image") {
                let source = &part["source"];
                if source["type"] != "base64" || !["image/png", "image/jpeg", "image/gif", "image/webp"].contains(&source["media_type"].as_str().unwrap_or("")) {
                    return bad("messages: image source must be base64 with a supported media_type");
                }
                use base64::Engine as _;
                if base64::engine::general_purpose::STANDARD.decode(source["data"].as_str().unwrap_or("!")).is_err() {
                    return bad("messages: image data is not valid base64");
                }
            }
            if block.get("images").is_some() {
                return bad("messages: Extra inputs are not permitted");
            }
        }
    }
    None
}

fn read_shot(path: &str) -> MockResponse {
    MockResponse::sse(&(message_start() + &tool_block(0, "toolu_1", "read_file", &json!({"file_path": path})) + &message_end("tool_use")))
}

fn ask_anthropic(dir: &std::path::Path, mock: &MockModel, model: &str) -> Command {
    let mut command = tandem(dir);
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "k").env("TANDEM_MODEL", model);
    command.args(["ask", "--json", "what is in shot.png?"]);
    command
}

#[tokio::test]
async fn a_png_read_reaches_anthropic_as_an_image_block_in_the_tool_result() {
    let mock = MockModel::start_with_rules(vec![read_shot("shot.png"), text("A red square.")], vec![anthropic_image_rules]).await;
    let dir = workspace();
    let (code, events, stderr) = ask(ask_anthropic(dir.path(), &mock, "claude-sonnet-4-5")).await;
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{:?}", mock.log());
    let result = &requests[1].body["messages"][2]["content"][0];
    assert_eq!(
        result,
        &json!({
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [
                {"type": "text", "text": "shot.png is a PNG image (2x2 pixels, 73 bytes); it is attached for you to see."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
            ],
            "is_error": false,
            "cache_control": {"type": "ephemeral"}
        })
    );
    // What the front ends show is the text: the run event carries no pixels.
    let shown = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(shown["content"], "shot.png is a PNG image (2x2 pixels, 73 bytes); it is attached for you to see.");
}

/// A model the table says sees no images gets a line saying so; a cut-off
/// PNG is an error result; neither reaches the API as an image.
#[tokio::test]
async fn a_text_only_model_and_a_cut_png_get_plain_text() {
    let mock = MockModel::start_with_rules(vec![read_shot("shot.png"), text("I cannot see it.")], vec![anthropic_image_rules]).await;
    let dir = workspace();
    let (code, _, stderr) = ask(ask_anthropic(dir.path(), &mock, "claude-3-5-haiku")).await;
    assert_eq!(code, Some(0), "{stderr}");
    let result = &mock.requests()[1].body["messages"][2]["content"][0];
    assert_eq!(
        result["content"],
        "shot.png is a PNG image (2x2 pixels, 73 bytes); it is attached for you to see.\n[image image/png, 1 KB: not sent, because the model claude-3-5-haiku does not take image input (if it does, say so in the models setting: {\"claude-3-5-haiku\": {\"images\": true}})]"
    );

    let mock = MockModel::start_with_rules(vec![read_shot("cut.png"), text("It is damaged.")], vec![anthropic_image_rules]).await;
    let whole = png();
    std::fs::write(dir.path().join("cut.png"), &whole[..whole.len() - 15]).unwrap();
    let (code, _, stderr) = ask(ask_anthropic(dir.path(), &mock, "claude-sonnet-4-5")).await;
    assert_eq!(code, Some(0), "{stderr}");
    let result = &mock.requests()[1].body["messages"][2]["content"][0];
    assert_eq!(result["is_error"], true);
    assert_eq!(result["content"], "Error: cut.png is a PNG image whose data is cut off or damaged (it ends inside a chunk), so it cannot be shown.");
}

// ---- Chat completions ----

fn chunk(delta: Value, finish: Option<&str>) -> String {
    format!("data: {}\n\n", json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
}

/// OpenAI's check: a `tool` message's content is a string (or text parts),
/// and every tool call is answered by the tool messages right after it.
fn chat_rules(request: &RecordedRequest) -> Option<MockResponse> {
    let messages = request.body["messages"].as_array()?;
    for (i, message) in messages.iter().enumerate() {
        if message["role"] == "tool" && message["content"].as_array().is_some_and(|parts| parts.iter().any(|p| p["type"] != "text")) {
            return Some(MockResponse::error(400, r#"{"error":{"message":"Invalid 'messages': a tool message may only carry text.","type":"invalid_request_error"}}"#));
        }
        if let Some(calls) = message["tool_calls"].as_array() {
            let answered = messages[i + 1..].iter().take(calls.len()).all(|m| m["role"] == "tool");
            if !answered {
                return Some(MockResponse::error(400, r#"{"error":{"message":"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.","type":"invalid_request_error"}}"#));
            }
        }
    }
    None
}

#[tokio::test]
async fn a_png_read_reaches_chat_completions_in_a_user_message_after_the_tool_message() {
    let call = chunk(json!({"tool_calls": [{"index": 0, "id": "call_0", "type": "function", "function": {"name": "read_file", "arguments": "{\"file_path\":\"shot.png\"}"}}]}), Some("tool_calls")) + "data: [DONE]\n\n";
    let answer = chunk(json!({"content": "A red square."}), Some("stop")) + "data: [DONE]\n\n";
    let mock = MockModel::start_with_rules(vec![MockResponse::sse(&call), MockResponse::sse(&answer)], vec![chat_rules]).await;
    let dir = workspace();
    let mut command = tandem(dir.path());
    command.env("OPENAI_BASE_URL", &mock.url).env("TANDEM_MODEL", "gpt-4.1").args(["ask", "--json", "what is in shot.png?"]);
    let (code, events, stderr) = ask(command).await;
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{:?}", mock.log());
    let messages = &requests[1].body["messages"];
    assert_eq!(messages[3], json!({"role": "tool", "tool_call_id": "call_0", "content": "shot.png is a PNG image (2x2 pixels, 73 bytes); it is attached for you to see."}));
    assert_eq!(
        messages[4],
        json!({"role": "user", "content": [
            {"type": "text", "text": "The image from tool call call_0:"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}}
        ]})
    );
    assert_eq!(messages.as_array().unwrap().len(), 5);
}

// ---- Responses ----

fn responses_event(n: &mut u64, mut data: Value) -> String {
    data["sequence_number"] = json!(*n);
    *n += 1;
    format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap())
}

fn responses_turn(call: Option<&Value>, text: Option<&str>) -> String {
    let mut n = 0;
    let mut body = responses_event(&mut n, json!({"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}}));
    if let Some(call) = call {
        body += &responses_event(&mut n, json!({"type": "response.output_item.done", "output_index": 0, "item": call}));
    }
    if let Some(text) = text {
        body += &responses_event(&mut n, json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": text}));
    }
    body + &responses_event(&mut n, json!({"type": "response.completed", "response": {"id": "r", "status": "completed", "usage": {"input_tokens": 10, "output_tokens": 5}}}))
}

/// The Open Responses check on a `function_call_output`: a string, or a
/// list of `input_text`, `input_image` and `input_file` parts.
fn responses_rules(request: &RecordedRequest) -> Option<MockResponse> {
    for item in request.body["input"].as_array()?.iter().filter(|i| i["type"] == "function_call_output") {
        let ok = match &item["output"] {
            Value::String(_) => true,
            Value::Array(parts) => parts.iter().all(|p| match p["type"].as_str() {
                Some("input_text") => p["text"].is_string(),
                Some("input_image") => p["image_url"].as_str().is_some_and(|u| u.starts_with("data:image/")),
                _ => false,
            }),
            _ => false,
        };
        if !ok {
            return Some(MockResponse::error(400, r#"{"error":{"message":"Invalid value for 'input[].output'.","type":"invalid_request_error","param":"input","code":"invalid_value"}}"#));
        }
    }
    None
}

#[tokio::test]
async fn a_png_read_reaches_the_responses_api_as_an_input_image_in_the_call_output() {
    let call = json!({"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1", "name": "read_file", "arguments": "{\"file_path\":\"shot.png\"}"});
    let mock = MockModel::start_with_rules(
        vec![MockResponse::sse(&responses_turn(Some(&call), None)), MockResponse::sse(&responses_turn(None, Some("A red square.")))],
        vec![responses_rules],
    )
    .await;
    let dir = workspace();
    let mut command = tandem(dir.path());
    command
        .env("TANDEM_PROVIDER", "openai-responses")
        .env("OPENAI_BASE_URL", &mock.url)
        .env("OPENAI_API_KEY", "sk-test")
        .env("TANDEM_MODEL", "gpt-5.5")
        .args(["ask", "--json", "what is in shot.png?"]);
    let (code, events, stderr) = ask(command).await;
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{:?}", mock.log());
    let output = requests[1].body["input"].as_array().unwrap().iter().find(|i| i["type"] == "function_call_output").unwrap().clone();
    assert_eq!(
        output,
        json!({"type": "function_call_output", "call_id": "call_1", "output": [
            {"type": "input_text", "text": "shot.png is a PNG image (2x2 pixels, 73 bytes); it is attached for you to see."},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}"), "detail": "auto"}
        ]})
    );
}

// ---- A long thread ----

/// Six images read over two runs of one thread (the second `--continue`d
/// from the saved thread): each request carries the last four, the older
/// ones as a line of text; compacting it sends none to the summary.
#[tokio::test]
async fn a_resumed_thread_sends_only_its_last_four_images_and_compaction_none() {
    let dir = workspace();
    for n in 1..=6 {
        std::fs::write(dir.path().join(format!("shot{n}.png")), png()).unwrap();
    }
    let reads: Vec<MockResponse> = (1..=5)
        .map(|n| MockResponse::sse(&(message_start() + &tool_block(0, &format!("toolu_{n}"), "read_file", &json!({"file_path": format!("shot{n}.png")})) + &message_end("tool_use"))))
        .chain([text("Five squares.")])
        .collect();
    let mock = MockModel::start_with_rules(reads, vec![anthropic_image_rules]).await;
    let images_in = |body: &Value| -> (usize, usize) {
        let text = body["messages"].to_string();
        (text.matches("\"type\":\"image\"").count(), text.matches("left out to save context").count())
    };
    let (code, _, stderr) = ask(ask_anthropic(dir.path(), &mock, "claude-sonnet-4-5")).await;
    assert_eq!(code, Some(0), "{stderr}");
    let counts: Vec<(usize, usize)> = mock.requests().iter().map(|r| images_in(&r.body)).collect();
    assert_eq!(counts, [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (4, 1)]);

    let mock = MockModel::start_with_rules(
        vec![MockResponse::sse(&(message_start() + &tool_block(0, "toolu_6", "read_file", &json!({"file_path": "shot6.png"})) + &message_end("tool_use"))), text("Six.")],
        vec![anthropic_image_rules],
    )
    .await;
    let mut command = tandem(dir.path());
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "k").env("TANDEM_MODEL", "claude-sonnet-4-5");
    command.args(["ask", "--json", "--continue", "and shot6.png?"]);
    let (code, _, stderr) = ask(command).await;
    assert_eq!(code, Some(0), "{stderr}");
    let requests = mock.requests();
    assert_eq!(requests.iter().map(|r| images_in(&r.body)).collect::<Vec<_>>(), [(4, 1), (4, 2)]);
    // The newest image is the one sent last; the oldest went first.
    let last = requests[1].body["messages"].to_string();
    assert!(last.contains("shot6.png is a PNG image") && last.find("left out to save context").unwrap() < last.find("shot3.png is a PNG").unwrap());

    let mock = MockModel::start(vec![text("Summary: six red squares were read."), text("Done.")]).await;
    let mut command = tandem(dir.path());
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "k").env("TANDEM_MODEL", "claude-sonnet-4-5");
    command.args(["ask", "--json", "--continue", "--compact", "go on"]);
    let (code, events, stderr) = ask(command).await;
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    let summary = &mock.requests()[0].body;
    assert_eq!(images_in(summary).0, 0, "{summary}");
    assert!(!summary.to_string().contains(PNG));
    assert!(summary.to_string().contains("image(s) shown to the assistant, not included here"));
}

// ---- Prompt images ----

/// `tandem ask --image`: each image after the prompt's text, named among
/// the prompt's attachments; a text-only model fails the run before any
/// request; a cut-off image is refused before the session starts.
#[tokio::test]
async fn ask_with_image_sends_it_after_the_prompt_and_refuses_what_cannot_go() {
    let dir = workspace();
    std::fs::write(dir.path().join("b.png"), png()).unwrap();
    let mock = MockModel::start_with_rules(vec![text("Two red squares.")], vec![anthropic_image_rules]).await;
    let mut command = ask_anthropic_with(dir.path(), &mock, "claude-sonnet-4-5");
    command.args(["--image", "shot.png", "--image", "b.png", "compare them"]);
    let (code, events, stderr) = ask(command).await;
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    let requests = mock.requests();
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}});
    let mut last = image.clone();
    last["cache_control"] = json!({"type": "ephemeral"});
    assert_eq!(requests[0].body["messages"][0]["content"], json!([{"type": "text", "text": "compare them"}, image, last]));

    let mock = MockModel::start(vec![text("never asked")]).await;
    let mut command = ask_anthropic_with(dir.path(), &mock, "claude-3-5-haiku");
    command.args(["--image", "shot.png", "what is it?"]);
    let (code, events, _) = ask(command).await;
    assert_eq!(code, Some(1));
    assert!(mock.requests().is_empty());
    let end = events.iter().find(|e| e["type"] == "end").unwrap();
    assert_eq!(end["status"], "failed");
    assert_eq!(
        end["text"],
        "The model claude-3-5-haiku does not take image input, so the prompt (with its image) was not sent. Choose a model that sees images, or, if this one does, say so in the models setting: {\"claude-3-5-haiku\": {\"images\": true}}."
    );

    let whole = png();
    std::fs::write(dir.path().join("cut.png"), &whole[..40]).unwrap();
    std::fs::write(dir.path().join("logo.svg"), "<svg xmlns=\"http://www.w3.org/2000/svg\"/>").unwrap();
    for (file, says) in [
        ("cut.png", "--image: cut.png is a PNG image whose data is cut off or damaged (it ends before the IEND chunk), so it cannot be shown."),
        ("logo.svg", "--image: logo.svg is not a PNG, JPEG, GIF or WebP image (the only image formats sent to the model)."),
    ] {
        let mut command = ask_anthropic_with(dir.path(), &mock, "claude-sonnet-4-5");
        command.args(["--image", file, "what is it?"]);
        let (code, _, stderr) = ask(command).await;
        assert_ne!(code, Some(0));
        assert!(stderr.contains(says), "{stderr}");
    }
    assert!(mock.requests().is_empty());
}

fn ask_anthropic_with(dir: &std::path::Path, mock: &MockModel, model: &str) -> Command {
    let mut command = tandem(dir);
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "k").env("TANDEM_MODEL", model);
    command.args(["ask", "--json"]);
    command
}

// ---- tandem chat ----

/// `tandem chat` in tmux: `@shot.png` in a message attaches the image
/// (sent after the message's text; `@notes.md` stays text); a mentioned
/// image that is cut off is said and the message is not sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_attaches_an_image_mentioned_with_at() {
    let Some(tmux_bin) = common::tools::which("tmux") else {
        common::tools::skip("chat_attaches_an_image_mentioned_with_at", "TANDEM_REQUIRE_TMUX", "tmux is not installed");
        return;
    };
    let mock = MockModel::start_with_rules(vec![text("A red square.")], vec![anthropic_image_rules]).await;
    let dir = workspace();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("notes.md"), "notes\n").unwrap();
    std::fs::write(root.join("cut.png"), &png()[..40]).unwrap();
    let url = mock.url.clone();
    let requests = tokio::task::spawn_blocking(move || {
        let tmux = common::tmux::Tmux::new(&tmux_bin, format!("tandem-chat-image-{}", std::process::id()));
        let env = [
            ("TANDEM_PROVIDER", "anthropic".to_string()),
            ("ANTHROPIC_BASE_URL", url),
            ("ANTHROPIC_API_KEY", "k".to_string()),
            ("TANDEM_MODEL", "claude-sonnet-4-5".to_string()),
            ("XDG_DATA_HOME", root.join(".data").display().to_string()),
            ("HOME", root.join(".home").display().to_string()),
            ("NO_COLOR", "1".to_string()),
        ];
        let command = format!("{} chat; echo CHAT-EXITED-$?; sleep 60", env!("CARGO_BIN_EXE_tandem"));
        tmux.start(160, 50, &root, &env, &command);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        tmux.wait_for("the chat's greeting", deadline, |s| s.contains("Tandem chat in") && s.contains("›"));
        tmux.type_text("what is @shot.png? see @notes.md");
        tmux.keys(&["Enter"]);
        tmux.wait_for("the answer", deadline, |s| s.contains("A red square."));
        tmux.type_text("and @cut.png?");
        tmux.keys(&["Enter"]);
        tmux.wait_for("the refusal", deadline, |s| s.contains("tandem: not sent: cut.png is a PNG image whose data is cut off or damaged"));
        tmux.keys(&["C-d"]);
        tmux.wait_for("the chat to end", deadline, |s| s.contains("CHAT-EXITED-0"));
    });
    requests.await.unwrap();
    let requests = mock.requests();
    assert_eq!(requests.len(), 1, "the cut image's message was not sent: {:?}", mock.log());
    let content = &requests[0].body["messages"][0]["content"];
    // notes.md is attached as its text (`@path`), shot.png as the image
    // only: never as text of its bytes.
    let text = content[0]["text"].as_str().unwrap_or_default();
    assert!(text.ends_with("what is @shot.png? see @notes.md"), "{content}");
    assert!(text.contains("<attached path=\"notes.md\">\n   1 | notes\n</attached>"), "{content}");
    assert!(!text.contains("shot.png\""), "the image is not attached as text: {content}");
    assert_eq!(content[1]["source"], json!({"type": "base64", "media_type": "image/png", "data": PNG}));
    assert_eq!(content.as_array().unwrap().len(), 2, "{content}");
}

// ---- tandem lsp ----

/// `tandem.ask` over LSP: its `images` (the VS Code panel's pasted ones)
/// and an attached image file (the Neovim chat's `@shot.png`, sent as an
/// attachment) reach the model as images after the prompt's text, a text
/// attachment stays text; a cut-off pasted image is an InvalidParams
/// error naming it, and nothing runs.
#[tokio::test(flavor = "multi_thread")]
async fn lsp_ask_sends_pasted_and_attached_images() {
    use common::lsp_client::{uri, LspClient};
    let mock = MockModel::start_with_rules(vec![text("Two squares.")], vec![anthropic_image_rules]).await;
    let dir = workspace();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.md"), "the notes\n").unwrap();
    let url = mock.url.clone();
    let (answer, refused) = tokio::task::spawn_blocking(move || {
        let home = root.join(".home").display().to_string();
        let data = root.join(".data").display().to_string();
        let env = [("HOME", home.as_str()), ("XDG_DATA_HOME", data.as_str()), ("TANDEM_PROVIDER", "anthropic"), ("ANTHROPIC_BASE_URL", url.as_str()), ("ANTHROPIC_API_KEY", "k"), ("TANDEM_MODEL", "claude-sonnet-4-5")];
        let mut client = LspClient::start(&root, &env);
        let init = client.initialize(json!({}), json!({}));
        assert!(init.get("result").is_some(), "{init}");
        let ask = json!({"command": "tandem.ask", "arguments": [{
            "prompt": "compare @shot.png with the pasted one; see @notes.md",
            "attachments": [{"uri": uri(&root.join("shot.png"))}, {"uri": uri(&root.join("notes.md"))}],
            "images": [{"data": PNG, "name": "pasted.png"}]
        }]});
        let answer = client.request("workspace/executeCommand", ask);
        let whole = png();
        use base64::Engine as _;
        let cut = base64::engine::general_purpose::STANDARD.encode(&whole[..whole.len() - 15]);
        let refused = client.request("workspace/executeCommand", json!({"command": "tandem.ask", "arguments": [{"prompt": "and this?", "images": [{"data": cut, "name": "pasted.png"}]}]}));
        client.shutdown();
        (answer, refused)
    })
    .await
    .unwrap();
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1, "the refused ask sent nothing: {:?}", mock.log());
    let content = requests[0].body["messages"][0]["content"].as_array().unwrap().clone();
    let kinds: Vec<&str> = content.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "image", "image"], "{content:?}");
    let text = content[0]["text"].as_str().unwrap();
    assert!(text.contains("<attached path=\"notes.md\">\n   1 | the notes\n</attached>"), "{text}");
    assert!(!text.contains("attached path=\"shot.png\""), "the image went as text too: {text}");
    for image in &content[1..] {
        assert_eq!(image["source"], json!({"type": "base64", "media_type": "image/png", "data": PNG}));
    }
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["message"], "tandem.ask: pasted.png is a PNG image whose data is cut off or damaged (it ends inside a chunk), so it cannot be shown.");
}
