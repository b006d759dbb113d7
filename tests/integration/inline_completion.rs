//! `textDocument/inlineCompletion` through the real `tandem lsp`, against a
//! loopback fill-in-the-middle mock (`common/fim_mock.rs`): the prompt holds
//! the unsaved buffer around the cursor, stale and cancelled requests give
//! nothing and close their model request, other requests are answered while
//! a completion waits, a 1 MB document sends a window, a failing model gives
//! an empty answer, the cache rebases, next edits replace a range and are
//! given the editor's diagnostics, a multi-MB paste keeps every prompt a
//! window, llama.cpp's refusal to fill in the middle falls back to the
//! prefix, Anthropic's Messages API is spoken for a chat model, a
//! repository's own settings cannot turn any of it on, and turning it on or
//! off in the editor's settings registers or unregisters the provider (or,
//! for an editor that cannot take a registration, says to restart).

#![allow(clippy::unwrap_used)]

use crate::common::fim_mock;
use crate::common::lsp_client;

use fim_mock::{FimMock, Reply};
use lsp_client::LspClient;
use serde_json::{json, Value};

const SOURCE: &str = "def add(a, b):\n    return a\n\nprint(add(1, 2))\n";

struct Setup {
    _temp: tempfile::TempDir,
    root: std::path::PathBuf,
    data: std::path::PathBuf,
    /// The last `initialize` answer.
    initialized: std::cell::RefCell<Value>,
}

impl Setup {
    fn new(files: &[(&str, &str)]) -> Setup {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap().join("work");
        let data = temp.path().canonicalize().unwrap().join("data");
        std::fs::create_dir_all(&root).unwrap();
        for (name, text) in files {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Setup { _temp: temp, root, data, initialized: std::cell::RefCell::new(Value::Null) }
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("HOME", self.root.parent().unwrap().join("home").display().to_string()),
            ("XDG_DATA_HOME", self.data.display().to_string()),
            ("TANDEM_PROVIDER", "scripted".into()),
        ]
    }

    /// The server with these `inlineCompletions` settings from the editor.
    fn start(&self, inline: Value) -> LspClient {
        self.start_with(inline, json!({}))
    }

    fn start_with(&self, inline: Value, capabilities: Value) -> LspClient {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut client = LspClient::start(&self.root, &env);
        let options = if inline.is_null() { json!({}) } else { json!({"tandem": {"inlineCompletions": inline}}) };
        let response = client.initialize(capabilities, options);
        assert!(response.get("result").is_some(), "{response}");
        *self.initialized.borrow_mut() = response;
        client
    }
}

fn settings(mock: &FimMock, extra: Value) -> Value {
    let mut settings = json!({"enabled": true, "provider": "openai", "baseUrl": format!("{}/v1", mock.url), "debounceMs": 0});
    for (k, v) in extra.as_object().unwrap() {
        settings[k] = v.clone();
    }
    settings
}

fn params(uri: &str, line: u32, character: u32, trigger: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}, "context": {"triggerKind": trigger}})
}

const INVOKED: u32 = 1;
const AUTOMATIC: u32 = 2;

/// The items of a response (panics on an error or `null`).
fn items(response: &Value) -> Vec<Value> {
    assert!(response.get("error").is_none(), "{response}");
    response["result"]["items"].as_array().unwrap_or_else(|| panic!("no item list: {response}")).clone()
}

/// The user replaces line `line` of the client's copy with `text`.
fn replace_line(client: &mut LspClient, uri: &str, line: u32, text: &str) {
    let (content, version) = client.documents.get(uri).cloned().unwrap();
    let old = content.lines().nth(line as usize).unwrap().to_string();
    let range = json!({"start": {"line": line, "character": 0}, "end": {"line": line, "character": old.len()}});
    let new = lsp_client::apply_edits(&content, &[(range.clone(), text.to_string())]);
    client.documents.insert(uri.to_string(), (new, version + 1));
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version + 1}, "contentChanges": [{"range": range, "text": text}]}),
    );
}

#[test]
fn the_prompt_holds_the_unsaved_buffer_around_the_cursor_and_the_item_replaces_from_the_line_start() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion(" + b")));
    let mut client = setup.start(settings(&mock, json!({"model": "qwen-fim"})));
    assert_eq!(setup.initialized.borrow()["result"]["capabilities"]["inlineCompletionProvider"], json!(true));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    // Unsaved: the disk still has `return a`.
    replace_line(&mut client, &uri, 1, "    return a  # unsaved");
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    let items = items(&response);
    assert_eq!(items.len(), 1, "{response}");
    assert_eq!(items[0]["insertText"], "    return a + b");
    assert_eq!(items[0]["range"], json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 12}}));
    assert_eq!(items[0]["command"]["command"], "tandem.inlineCompletionAccepted");
    let received = mock.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].path, "/v1/completions");
    let body = &received[0].body;
    assert_eq!(body["prompt"], "def add(a, b):\n    return a");
    assert_eq!(body["suffix"], "  # unsaved\n\nprint(add(1, 2))\n");
    assert_eq!((body["model"].as_str(), body["temperature"].as_i64()), (Some("qwen-fim"), Some(0)));
    // The suggestion on disk is untouched: nothing but the buffer changed.
    assert_eq!(std::fs::read_to_string(setup.root.join("a.py")).unwrap(), SOURCE);
    client.shutdown();
}

#[test]
fn off_unless_configured_and_a_repository_cannot_turn_it_on_or_point_it_elsewhere() {
    let mock = FimMock::start(Reply::Json(FimMock::completion("x")));
    let project = json!({"inlineCompletions": {"enabled": true, "provider": "openai", "baseUrl": format!("{}/v1", mock.url), "debounceMs": 0}}).to_string();
    let setup = Setup::new(&[("a.py", SOURCE), (".tandem/settings.json", &project), (".tandem/settings.local.json", &project)]);
    let mut client = setup.start(Value::Null);
    let capabilities = setup.initialized.borrow()["result"]["capabilities"].clone();
    assert!(capabilities.get("inlineCompletionProvider").is_none(), "{capabilities}");
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(response["result"], Value::Null, "{response}");
    // The user's own settings turn it on; the project's address is still not used.
    let own = FimMock::start(Reply::Json(FimMock::completion(" + b")));
    let mut client = setup.start(json!({"enabled": true, "baseUrl": format!("{}/v1", own.url), "debounceMs": 0}));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(items(&response)[0]["insertText"], "    return a + b");
    assert_eq!((mock.received().len(), own.received().len()), (0, 1));
    client.shutdown();
}

#[test]
fn a_repositorys_env_or_base_url_cannot_redirect_a_chat_providers_completions() {
    // The user asks for a chat model's completions, with the base URL from
    // their own settings' env; the repository names another address, through
    // its env and the agent's baseUrl, and its own key.
    let own = FimMock::start(Reply::Json(FimMock::chat(" + b")));
    let theirs = FimMock::start(Reply::Json(FimMock::chat(" - b")));
    let user = json!({"env": {"OPENAI_BASE_URL": format!("{}/v1", own.url), "OPENAI_API_KEY": "sk-user"}}).to_string();
    let project = json!({"baseUrl": format!("{}/v1", theirs.url), "env": {"OPENAI_BASE_URL": format!("{}/v1", theirs.url), "OPENAI_API_KEY": "sk-theirs"}}).to_string();
    let setup = Setup::new(&[("a.py", SOURCE), ("../home/.tandem/settings.json", &user), (".tandem/settings.json", &project), (".tandem/settings.local.json", &project)]);
    let mut client = setup.start(json!({"enabled": true, "provider": "openai-chat", "debounceMs": 0}));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(items(&response)[0]["insertText"], "    return a + b", "{response}");
    assert_eq!(theirs.received().len(), 0, "the repository's address heard the buffer");
    let received = own.received();
    assert_eq!((received.len(), received[0].path.as_str()), (1, "/v1/chat/completions"));
    let headers = received[0].headers.to_ascii_lowercase();
    assert!(headers.contains("authorization: bearer sk-user\r\n"), "{headers}");
    client.shutdown();
}

#[test]
fn a_request_whose_document_changed_before_the_model_answered_gives_nothing_and_closes_the_model_request() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Held(FimMock::completion(" + b")));
    let mut client = setup.start(settings(&mock, json!({})));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let id = client.send_request("textDocument/inlineCompletion", params(&uri, 1, 12, AUTOMATIC));
    mock.wait_for_requests(1);
    replace_line(&mut client, &uri, 1, "    return a +");
    let response = client.response(id);
    assert_eq!(response["result"], Value::Null, "stale: {response}");
    mock.wait_for_closed(1);
    client.shutdown();
}

#[test]
fn cancel_request_aborts_the_model_request_at_once() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Held(FimMock::completion(" + b")));
    let mut client = setup.start(settings(&mock, json!({})));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let id = client.send_request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    mock.wait_for_requests(1);
    client.notify("$/cancelRequest", json!({"id": id}));
    let response = client.response(id);
    assert_eq!(response["error"]["code"], -32800, "{response}");
    mock.wait_for_closed(1);
    client.shutdown();
}

#[test]
fn other_requests_are_answered_while_a_completion_waits_for_the_model() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Held(FimMock::completion(" + b")));
    let mut client = setup.start(settings(&mock, json!({})));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let id = client.send_request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    mock.wait_for_requests(1);
    // Code actions, document sync and commands go on.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}, "context": {"diagnostics": []}}),
    );
    assert!(actions["result"].is_array(), "{actions}");
    let threads = client.request("workspace/executeCommand", json!({"command": "tandem.threads", "arguments": []}));
    assert!(threads.get("result").is_some(), "{threads}");
    mock.release();
    assert_eq!(items(&client.response(id))[0]["insertText"], "    return a + b");
    client.shutdown();
}

#[test]
fn a_newer_request_supersedes_one_in_its_debounce_before_the_model_is_asked() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion(" + b")));
    // A long debounce, so the second request surely comes within it.
    let mut client = setup.start(settings(&mock, json!({"debounceMs": 3000})));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let first = client.send_request("textDocument/inlineCompletion", params(&uri, 1, 11, AUTOMATIC));
    let second = client.send_request("textDocument/inlineCompletion", params(&uri, 1, 12, AUTOMATIC));
    assert_eq!(client.response(first)["result"], Value::Null);
    assert_eq!(items(&client.response(second))[0]["insertText"], "    return a + b");
    assert_eq!(mock.received().len(), 1, "the superseded request never reached the model");
    assert_eq!(mock.received()[0].body["prompt"], "def add(a, b):\n    return a");
    client.shutdown();
}

#[test]
fn a_one_megabyte_document_sends_a_window_around_the_cursor() {
    let line = "value = compute(value, 12345)  # padding padding padding\n";
    let big: String = line.repeat((1 << 20) / line.len() + 1);
    let setup = Setup::new(&[("big.py", &big)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion("1")));
    let mut client = setup.start(settings(&mock, json!({"contextLines": 100000})));
    let uri = client.open(&setup.root.join("big.py"), &big);
    let middle = (big.lines().count() / 2) as u32;
    let response = client.request("textDocument/inlineCompletion", params(&uri, middle, 8, INVOKED));
    assert_eq!(items(&response)[0]["insertText"], "value = 1");
    let body = &mock.received()[0].body;
    let (prompt, suffix) = (body["prompt"].as_str().unwrap(), body["suffix"].as_str().unwrap());
    assert!(prompt.len() <= 12 * 1024 && suffix.len() <= 4 * 1024, "{} + {} bytes", prompt.len(), suffix.len());
    assert!(prompt.ends_with("\nvalue = ") && suffix.starts_with("compute(value"), "{:?} | {:?}", &prompt[prompt.len() - 20..], &suffix[..20]);
    client.shutdown();
}

#[test]
fn a_failing_slow_or_flooding_model_gives_an_empty_answer_never_an_error() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Status(500, "{\"error\": \"overloaded\"}".into()));
    let mut client = setup.start(settings(&mock, json!({"timeoutMs": 3000})));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let ask = |client: &mut LspClient| client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(items(&ask(&mut client)), Vec::<Value>::new());
    // 100 KB of text, only whitespace, the suffix again, junk, a body that
    // never ends, no answer within timeoutMs.
    for reply in [
        Reply::Json(FimMock::completion(&"x = 1\n".repeat(20_000))),
        Reply::Json(FimMock::completion("  \n\t\n")),
        Reply::Json(FimMock::completion("\n\nprint(add(1, 2))\n")),
        Reply::Status(200, "<html>not json</html>".into()),
        Reply::Endless,
        // Slower than timeoutMs.
        Reply::Held(FimMock::completion(" + b")),
    ] {
        mock.push(reply);
    }
    replace_line(&mut client, &uri, 0, "def add(a, b):  # big");
    let big = items(&ask(&mut client));
    let text = big[0]["insertText"].as_str().unwrap();
    assert!(text.len() < 5000 && text.lines().count() <= 40, "{} bytes", text.len());
    for n in 0..5 {
        // Another prefix each time, so the cache has nothing for it.
        replace_line(&mut client, &uri, 0, &format!("def add(a, b):  # {n}"));
        let response = ask(&mut client);
        assert_eq!(items(&response), Vec::<Value>::new(), "{response}");
    }
    mock.wait_for_closed(2);
    // Nothing listens: still an empty answer.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = closed.local_addr().unwrap();
    drop(closed);
    let mut client = setup.start(json!({"enabled": true, "baseUrl": format!("http://{address}/v1"), "debounceMs": 0}));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(items(&response), Vec::<Value>::new(), "{response}");
    // Past the end of the document, a document never opened: nothing.
    let past = client.request("textDocument/inlineCompletion", params(&uri, 99, 0, INVOKED));
    assert_eq!(past["result"], Value::Null, "{past}");
    let other = uri.replace("a.py", "b.py");
    assert_eq!(client.request("textDocument/inlineCompletion", params(&other, 0, 0, INVOKED))["result"], Value::Null);
    client.shutdown();
}

#[test]
fn a_server_that_refuses_the_suffix_is_asked_with_the_prefix_alone_and_llama_cpp_gets_infill() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion(" + b")));
    mock.push(Reply::Status(400, "{\"error\":{\"code\":400,\"message\":\"Unsupported param: suffix\",\"type\":\"invalid_request_error\"}}".into()));
    let mut client = setup.start(settings(&mock, json!({})));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    for n in 0..2 {
        replace_line(&mut client, &uri, 0, &format!("def add(a, b):  # {n}"));
        let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
        assert_eq!(items(&response)[0]["insertText"], "    return a + b");
    }
    let paths_and_suffix: Vec<(String, bool)> = mock.received().iter().map(|r| (r.path.clone(), r.body.get("suffix").is_some())).collect();
    assert_eq!(paths_and_suffix, [("/v1/completions".into(), true), ("/v1/completions".into(), false), ("/v1/completions".into(), false)]);
    client.shutdown();

    let infill = FimMock::start(Reply::Json(FimMock::infill(" + b")));
    let mut client = setup.start(json!({"enabled": true, "provider": "llama.cpp", "baseUrl": infill.url, "debounceMs": 0, "maxTokens": 24}));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(items(&response)[0]["insertText"], "    return a + b");
    let request = &infill.received()[0];
    assert_eq!(request.path, "/infill");
    assert_eq!((request.body["input_prefix"].as_str(), request.body["input_suffix"].as_str()), (Some("def add(a, b):\n    return a"), Some("\n\nprint(add(1, 2))\n")));
    assert_eq!(request.body["n_predict"], 24);
    client.shutdown();
}

#[test]
fn the_same_prefix_is_served_from_the_cache_and_typing_the_start_of_a_suggestion_rebases_it() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion(" + b  # the sum")));
    let mut client = setup.start(settings(&mock, json!({})));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let first = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, AUTOMATIC));
    assert_eq!(items(&first)[0]["insertText"], "    return a + b  # the sum");
    // The user types " + " (the start of the suggestion).
    replace_line(&mut client, &uri, 1, "    return a + ");
    let rebased = client.request("textDocument/inlineCompletion", params(&uri, 1, 15, AUTOMATIC));
    assert_eq!(items(&rebased)[0]["insertText"], "    return a + b  # the sum");
    assert_eq!(items(&rebased)[0]["range"]["end"], json!({"line": 1, "character": 15}));
    // Deleted again: the same prefix as the first time.
    replace_line(&mut client, &uri, 1, "    return a");
    let again = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, AUTOMATIC));
    assert_eq!(items(&again)[0]["insertText"], "    return a + b  # the sum");
    assert_eq!(mock.received().len(), 1, "the model was asked once");
    client.shutdown();
}

#[test]
fn a_next_edit_follows_the_last_edit_with_a_range_replacing_item() {
    let text = "def total(items):\n    return sum(items)\n\nprint(total([1]))\nprint(total([2]))\n";
    let setup = Setup::new(&[("a.py", text)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion("")));
    let rewrite = "<|editable_region_start|>def total_of(items):\n    return sum(items)\n\nprint(total_of([1]))\nprint(total_of([2]))\n<|editable_region_end|>";
    let mut client = setup.start_with(settings(&mock, json!({"nextEdits": true})), json!({"experimental": {"inlineCompletionEditsAnywhere": true}}));
    let uri = client.open(&setup.root.join("a.py"), text);
    // The user renames the function; its calls still use the old name.
    replace_line(&mut client, &uri, 0, "def total_of(items):");
    mock.route("/v1/chat/completions", Reply::Json(FimMock::chat(rewrite)));
    let response = client.request("textDocument/inlineCompletion", params(&uri, 0, 12, INVOKED));
    let items = items(&response);
    assert_eq!(items.len(), 1, "{response}");
    assert_eq!(items[0]["insertText"], "_of([1]))\nprint(total_of");
    assert_eq!(items[0]["range"], json!({"start": {"line": 3, "character": 11}, "end": {"line": 4, "character": 11}}));
    let chat = mock.received().into_iter().find(|r| r.path == "/v1/chat/completions").unwrap();
    let prompt = chat.body["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("-def total(items):\n+def total_of(items):\n"), "{prompt}");
    assert!(prompt.contains("<|user_cursor_is_here|>"), "{prompt}");
    // An editor that did not say it shows edits away from the cursor gets none.
    let mut plain = setup.start(settings(&mock, json!({"nextEdits": true})));
    let uri = plain.open(&setup.root.join("a.py"), text);
    replace_line(&mut plain, &uri, 0, "def total_of(items):");
    let response = plain.request("textDocument/inlineCompletion", params(&uri, 0, 12, INVOKED));
    assert_eq!(response["result"]["items"], json!([]), "{response}");
    client.shutdown();
    plain.shutdown();
}

#[test]
fn shown_and_accepted_counts_reach_tandem_doctor() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion(" + b")));
    let mut client = setup.start(settings(&mock, json!({})));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let item = items(&client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED)))[0].clone();
    let command = &item["command"];
    let accepted = client.request("workspace/executeCommand", json!({"command": command["command"], "arguments": command["arguments"]}));
    assert!(accepted.get("error").is_none(), "{accepted}");
    client.shutdown();
    let env = setup.env();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["doctor", "--json"])
        .current_dir(&setup.root)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    let session = &report["inlineCompletions"]["sessions"][0];
    assert_eq!((session["shown"].as_u64(), session["accepted"].as_u64(), session["requests"].as_u64()), (Some(1), Some(1), Some(1)), "{report}");
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("doctor")
        .current_dir(&setup.root)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("1 shown, 1 accepted"), "{text}");
}

/// The editor's settings change: `workspace/didChangeConfiguration` with
/// these `inlineCompletions`.
fn change_settings(client: &mut LspClient, inline: Value) {
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"tandem": {"inlineCompletions": inline}}}));
}

const DYNAMIC: &str = r#"{"textDocument": {"inlineCompletion": {"dynamicRegistration": true}}}"#;

/// Issue 30: an editor that registers providers dynamically (vscode-languageclient)
/// gets no static `inlineCompletionProvider`; turning completions on in its
/// settings registers `textDocument/inlineCompletion`, off unregisters it
/// (same id), and requests follow at once.
#[test]
fn an_editor_with_dynamic_registration_follows_enabled_without_a_restart() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion(" + b")));
    let mut client = setup.start_with(settings(&mock, json!({"enabled": false})), serde_json::from_str(DYNAMIC).unwrap());
    let capabilities = setup.initialized.borrow()["result"]["capabilities"].clone();
    assert!(capabilities.get("inlineCompletionProvider").is_none(), "{capabilities}");
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(response["result"], Value::Null, "off: {response}");

    change_settings(&mut client, settings(&mock, json!({})));
    let register = client.server_request("client/registerCapability");
    let registration = &register["params"]["registrations"][0];
    assert_eq!((registration["method"].as_str(), registration["id"].as_str()), (Some("textDocument/inlineCompletion"), Some("tandem-inline-completion")), "{register}");
    client.respond(&register["id"], Value::Null);
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(items(&response)[0]["insertText"], "    return a + b");

    change_settings(&mut client, settings(&mock, json!({"enabled": false})));
    let unregister = client.server_request("client/unregisterCapability");
    let unregistration = &unregister["params"]["unregisterations"][0];
    assert_eq!((unregistration["method"].as_str(), unregistration["id"].as_str()), (Some("textDocument/inlineCompletion"), Some("tandem-inline-completion")), "{unregister}");
    client.respond(&unregister["id"], Value::Null);
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(response["result"], Value::Null, "off again: {response}");
    assert_eq!(mock.received().len(), 1);
    assert!(!client.seen.iter().any(|m| m["method"] == "window/showMessage"), "a restart message for an editor that follows: {:#?}", client.seen);
    client.shutdown();

    // On from the start: registered once the client is initialized, not advertised.
    let mut client = setup.start_with(settings(&mock, json!({})), serde_json::from_str(DYNAMIC).unwrap());
    assert!(setup.initialized.borrow()["result"]["capabilities"].get("inlineCompletionProvider").is_none());
    let register = client.server_request("client/registerCapability");
    assert_eq!(register["params"]["registrations"][0]["id"], "tandem-inline-completion");
    client.respond(&register["id"], Value::Null);
    client.shutdown();
}

/// Issue 30: an editor that learns of the provider only at `initialize`
/// (Neovim 0.12 says `dynamicRegistration = false`) is told, once per
/// change, that the server must be restarted; requests follow the settings
/// at once all the same.
#[test]
fn an_editor_without_dynamic_registration_is_told_to_restart_the_server() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion(" + b")));
    let is_restart_message = |m: &Value| m["method"] == "window/showMessage" && m["params"]["message"].as_str().is_some_and(|t| t.contains("Restart the Tandem server"));
    let mut client = setup.start(settings(&mock, json!({})));
    assert_eq!(setup.initialized.borrow()["result"]["capabilities"]["inlineCompletionProvider"], json!(true));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    change_settings(&mut client, settings(&mock, json!({"enabled": false})));
    let message = client.wait_for("the restart message", is_restart_message);
    assert_eq!(message["params"]["type"], 3, "{message}");
    assert!(message["params"]["message"].as_str().unwrap().contains("now off"), "{message}");
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(response["result"], Value::Null, "{response}");
    // The same settings again say nothing more; back as at start neither.
    change_settings(&mut client, settings(&mock, json!({"enabled": false})));
    change_settings(&mut client, settings(&mock, json!({})));
    client.barrier(&uri);
    assert_eq!(client.seen.iter().filter(|m| is_restart_message(m)).count(), 1, "{:#?}", client.seen);
    assert!(!client.seen.iter().any(|m| m["method"] == "client/registerCapability"));
    client.shutdown();

    let mut client = setup.start(settings(&mock, json!({"enabled": false})));
    assert!(setup.initialized.borrow()["result"]["capabilities"].get("inlineCompletionProvider").is_none());
    change_settings(&mut client, settings(&mock, json!({})));
    let message = client.wait_for("the restart message", is_restart_message);
    assert!(message["params"]["message"].as_str().unwrap().contains("now on"), "{message}");
    client.shutdown();
}

/// The user pastes `text` at (line, character) of the client's copy: one
/// `didChange`, however large.
fn paste(client: &mut LspClient, uri: &str, line: u32, character: u32, text: &str) {
    let (content, version) = client.documents.get(uri).cloned().unwrap();
    let at = json!({"line": line, "character": character});
    let range = json!({"start": at, "end": at});
    let new = lsp_client::apply_edits(&content, &[(range.clone(), text.to_string())]);
    client.documents.insert(uri.to_string(), (new, version + 1));
    client.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": version + 1}, "contentChanges": [{"range": range, "text": text}]}));
}

/// Issue 30 (faults): a completion waiting for the model when a multi-MB
/// paste arrives goes stale (its model request closed); one asked right
/// after the paste, with the `didChange` still being taken in, is answered
/// for the pasted text, and every prompt is a window: the fill-in-the-middle
/// one, and the next-edit one whose recent edit is the paste ("too large to
/// show"). A paste of one 2 MB line gives an insertion at the cursor and no
/// next-edit request (the region would be the whole line).
#[test]
fn a_completion_during_and_right_after_a_huge_paste_is_answered_for_the_pasted_text_with_bounded_prompts() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion("row_1")));
    mock.push(Reply::Held(FimMock::completion(" + b")));
    mock.route("/v1/chat/completions", Reply::Json(FimMock::chat("no markers: no next edit")));
    let mut client = setup.start_with(settings(&mock, json!({"nextEdits": true})), json!({"experimental": {"inlineCompletionEditsAnywhere": true}}));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    // Typing, no edit yet: only the fill-in-the-middle request, held.
    let waiting = client.send_request("textDocument/inlineCompletion", params(&uri, 1, 12, AUTOMATIC));
    mock.wait_for_requests(1);
    // About 4 MB of lines pasted on the empty line 2, ending mid-line.
    let rows: String = (0..160_000).map(|i| format!("row_{i} = compute({i})\n")).collect();
    let pasted = format!("{rows}total = row_0 + ");
    assert!(pasted.len() > 4_000_000);
    paste(&mut client, &uri, 2, 0, &pasted);
    let (line, character) = (2 + 160_000, "total = row_0 + ".len() as u32);
    let after = client.send_request("textDocument/inlineCompletion", params(&uri, line, character, AUTOMATIC));
    let stale = client.response(waiting);
    assert_eq!(stale["result"], Value::Null, "the request from before the paste: {stale}");
    mock.wait_for_closed(1);
    let response = client.response(after);
    let items = items(&response);
    assert_eq!(items.len(), 1, "{response}");
    assert_eq!(items[0]["insertText"], "total = row_0 + row_1");
    assert_eq!(items[0]["range"], json!({"start": {"line": line, "character": 0}, "end": {"line": line, "character": character}}));
    let received = mock.received();
    let fim: Vec<_> = received.iter().filter(|r| r.path == "/v1/completions").collect();
    assert_eq!(fim.len(), 2, "{received:?}");
    let (prompt, suffix) = (fim[1].body["prompt"].as_str().unwrap(), fim[1].body["suffix"].as_str().unwrap());
    assert!(prompt.len() <= 12 * 1024 && prompt.ends_with("row_159999 = compute(159999)\ntotal = row_0 + "), "{} bytes", prompt.len());
    assert_eq!(suffix, "\nprint(add(1, 2))\n");
    let chats: Vec<_> = received.iter().filter(|r| r.path == "/v1/chat/completions").collect();
    assert_eq!(chats.len(), 1, "one next-edit request, after the paste: {received:?}");
    let chat = chats[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(chat.len() <= 32 * 1024, "a next-edit prompt of {} bytes", chat.len());
    assert!(chat.contains("--- a.py line 3\n-(too large to show)\n+(too large to show)\n"), "{}", &chat[..chat.len().min(400)]);
    assert!(chat.contains("row_159998 = compute(159998)\n") && !chat.contains("row_1000 = compute(1000)\n"), "the excerpt is the cursor's neighbourhood");

    // One line of 2 MB (minified code), the cursor at its end.
    let line_text = "x=1;".repeat(1 << 19);
    paste(&mut client, &uri, line + 1, 0, &line_text);
    let response = client.request("textDocument/inlineCompletion", params(&uri, line + 1, line_text.len() as u32, INVOKED));
    let items = self::items(&response);
    assert_eq!(items.len(), 1, "{response}");
    let cursor = json!({"line": line + 1, "character": line_text.len()});
    assert_eq!((&items[0]["insertText"], &items[0]["range"]), (&json!("row_1"), &json!({"start": cursor, "end": cursor})), "a plain insertion");
    let received = mock.received();
    let last = received.iter().rev().find(|r| r.path == "/v1/completions").unwrap();
    // Pasted at the start of the last line: what was there follows the cursor.
    assert_eq!((last.body["prompt"].as_str().unwrap().len(), last.body["suffix"].as_str()), (12 * 1024, Some("print(add(1, 2))\n")));
    assert_eq!(received.iter().filter(|r| r.path == "/v1/chat/completions").count(), 1, "no next-edit request for a 2 MB line");
    client.shutdown();
}

/// Issue 30 (faults): llama.cpp's `/infill` answering 501 "Infill is not
/// supported by this model" (a model without fill-in-the-middle tokens, as
/// llama.cpp's server says it) gives a completion from the prefix alone
/// through the same server's `/v1/completions`, and later requests of the
/// session go there at once.
#[test]
fn llama_cpp_saying_its_model_cannot_fill_in_the_middle_falls_back_to_the_prefix_alone() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion(" + b")));
    // llama.cpp's server (tools/server) for a model without FIM tokens.
    let refusal = json!({"error": {"code": 501, "message": "Infill is not supported by this model: prefix token is missing. suffix token is missing. middle token is missing. ", "type": "not_supported_error"}});
    mock.push(Reply::Status(501, refusal.to_string()));
    let mut client = setup.start(json!({"enabled": true, "provider": "llama.cpp", "baseUrl": mock.url, "debounceMs": 0, "maxTokens": 24}));
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    for n in 0..2 {
        replace_line(&mut client, &uri, 0, &format!("def add(a, b):  # {n}"));
        let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
        assert_eq!(items(&response)[0]["insertText"], "    return a + b", "{response}");
    }
    let received = mock.received();
    let paths: Vec<&str> = received.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/infill", "/v1/completions", "/v1/completions"]);
    for (request, n) in received[1..].iter().zip(0..) {
        assert_eq!(request.body["prompt"], format!("def add(a, b):  # {n}\n    return a"));
        assert!(request.body.get("suffix").is_none(), "{}", request.body);
        assert_eq!(request.body["max_tokens"], 24);
    }
    client.shutdown();
}

/// Issue 30: a chat model's fill-in-the-middle prompt through Anthropic's
/// Messages API: `POST /v1/messages` with the key in `x-api-key` (never a
/// bearer token) and `anthropic-version`, the file with the cursor marked,
/// the answer read from `content[0].text` and cleaned of a code fence.
#[test]
fn an_anthropic_chat_model_fills_in_the_middle_through_the_messages_api() {
    let setup = Setup::new(&[("a.py", SOURCE)]);
    let answer = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
                        "content": [{"type": "text", "text": "```python\n + b\n```"}], "stop_reason": "end_turn",
                        "usage": {"input_tokens": 40, "output_tokens": 6}});
    let mock = FimMock::start(Reply::Json(answer));
    let env = setup.env();
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.push(("ANTHROPIC_API_KEY", "sk-ant-test-key"));
    let mut client = LspClient::start(&setup.root, &env);
    let inline = json!({"enabled": true, "provider": "anthropic", "baseUrl": mock.url, "debounceMs": 0, "maxTokens": 40});
    let response = client.initialize(json!({}), json!({"tandem": {"inlineCompletions": inline}}));
    assert_eq!(response["result"]["capabilities"]["inlineCompletionProvider"], json!(true), "{response}");
    let uri = client.open(&setup.root.join("a.py"), SOURCE);
    let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    assert_eq!(items(&response)[0]["insertText"], "    return a + b", "{response}");
    let received = mock.received();
    assert_eq!((received.len(), received[0].path.as_str()), (1, "/v1/messages"));
    let headers = received[0].headers.to_ascii_lowercase();
    assert!(headers.contains("x-api-key: sk-ant-test-key\r\n") && headers.contains("anthropic-version: 2023-06-01\r\n"), "{headers}");
    assert!(!headers.contains("authorization:"), "{headers}");
    let body = &received[0].body;
    assert_eq!((body["model"].as_str(), body["max_tokens"].as_u64()), (Some("claude-haiku-4-5"), Some(40)));
    assert!(body["system"].as_str().unwrap().contains("<CURSOR>"), "{body}");
    let user = body["messages"][0]["content"].as_str().unwrap();
    assert_eq!(body["messages"][0]["role"], "user");
    assert!(user.contains("File: a.py\n") && user.contains("def add(a, b):\n    return a<CURSOR>\n\nprint(add(1, 2))\n"), "{user}");
    client.shutdown();
}

/// Issue 30: next edits are fed the diagnostics the editor has. With
/// `codeIntel` on (the editor plugins say so), the server asks the editor
/// for the file's diagnostics (`tandem/codeIntel`, operation
/// `diagnostics`, which the plugins answer from `vim.diagnostic.get` and
/// `vscode.languages.getDiagnostics`); those near the region are in the
/// model's prompt, one line each, and the far ones are not.
#[test]
fn a_next_edit_prompt_holds_the_editors_diagnostics_of_the_region() {
    let text = "def total(items):\n    return sum(items)\n\nprint(total([1]))\nprint(total([2]))\n";
    let far = "x = 0\n".repeat(60);
    let text = format!("{text}{far}");
    let setup = Setup::new(&[("a.py", &text)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion("")));
    mock.route("/v1/chat/completions", Reply::Json(FimMock::chat("<|editable_region_start|>def total_of(items):\n<|editable_region_end|>")));
    let env = setup.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut client = LspClient::start(&setup.root, &env);
    let options = json!({"tandem": {"codeIntel": true, "inlineCompletions": settings(&mock, json!({"nextEdits": true}))}});
    client.initialize(json!({"experimental": {"inlineCompletionEditsAnywhere": true}}), options);
    let uri = client.open(&setup.root.join("a.py"), &text);
    replace_line(&mut client, &uri, 0, "def total_of(items):");
    let id = client.send_request("textDocument/inlineCompletion", params(&uri, 0, 12, INVOKED));
    let diagnostic = |line: u32, severity: u32, message: &str| {
        json!({"range": {"start": {"line": line, "character": 6}, "end": {"line": line, "character": 11}}, "severity": severity, "source": "Pyright", "message": message})
    };
    let mut asked = 0;
    let response = loop {
        let message = client.next_request_or_response(id);
        if message.get("method").is_none() {
            break message;
        }
        if message["method"] == "tandem/codeIntel" {
            assert_eq!((message["params"]["operation"].as_str(), message["params"]["uri"].as_str()), (Some("diagnostics"), Some(uri.as_str())), "{message}");
            asked += 1;
            let diagnostics = json!([
                diagnostic(3, 1, "\"total\" is not defined\n  (reportUndefinedVariable)"),
                diagnostic(4, 2, "\"total\" is possibly unbound"),
                diagnostic(50, 1, "far from the region"),
            ]);
            client.respond(&message["id"], json!({"diagnostics": diagnostics, "settled": true}));
        } else {
            client.respond(&message["id"], Value::Null);
        }
    };
    assert_eq!(asked, 1, "{response}");
    assert!(response.get("error").is_none(), "{response}");
    let chat = mock.received().into_iter().find(|r| r.path == "/v1/chat/completions").unwrap();
    let prompt = chat.body["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("\nDiagnostics:\nline 4: error: \"total\" is not defined\nline 5: warning: \"total\" is possibly unbound\n\n"), "{prompt}");
    assert!(!prompt.contains("far from the region"), "{prompt}");
    client.shutdown();
}

const STALE_SOURCE: &str = "def add(a, b):\n    x = 1; \n    return x\n";

/// The user types `text` at (line, character) of the client's copy; the
/// `didChange` is sent at once.
fn type_at(client: &mut LspClient, uri: &str, line: u32, character: u32, text: &str) {
    paste(client, uri, line, character, text);
}

/// What the client's copy of `uri` becomes with `item` applied.
fn applied(client: &LspClient, uri: &str, item: &Value) -> String {
    let (content, _) = client.documents.get(uri).cloned().unwrap();
    lsp_client::apply_edits(&content, &[(item["range"].clone(), item["insertText"].as_str().unwrap().to_string())])
}

/// Issue 50, the first case: asked at `    x = 1; ` with the model slow, the
/// user types `y`; the model's `total = a + b` was for the text before the
/// `y` and must not be offered for the text after it (it would make
/// `total = a + by`). Sent right behind the request, as a fast typist's
/// keystroke is, and after the model was asked.
#[test]
fn an_answer_for_text_the_user_has_typed_past_is_not_offered() {
    let setup = Setup::new(&[("a.py", STALE_SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion("total = a + b")));
    let mut client = setup.start(settings(&mock, json!({})));
    let uri = client.open(&setup.root.join("a.py"), STALE_SOURCE);
    // The keystroke right behind the request, many times over. An answer
    // may cross the keystroke on the wire (the editor drops it: its request
    // was for the text before); what must not happen is an answer for the
    // old position in the new text, so each item must be for the text the
    // request was sent at, and the model is never asked with the `y` after
    // the cursor.
    for n in 0..20u32 {
        let before = client.documents.get(&uri).unwrap().0.clone();
        let id = client.send_request("textDocument/inlineCompletion", params(&uri, 1, 11 + n, AUTOMATIC));
        type_at(&mut client, &uri, 1, 11 + n, "y");
        let response = client.response(id);
        for item in response["result"]["items"].as_array().into_iter().flatten() {
            let text = lsp_client::apply_edits(&before, &[(item["range"].clone(), item["insertText"].as_str().unwrap().to_string())]);
            let line = format!("    x = 1; {}total = a + b", "y".repeat(n as usize));
            assert_eq!(text.lines().nth(1), Some(line.as_str()), "keystroke {n}: {response}");
        }
    }
    for request in mock.received() {
        assert_eq!(request.body["suffix"], "\n    return x\n", "the model was asked at the old position in the new text: {:?}", request.body);
    }
    // The keystroke while the model answers.
    mock.set_default(Reply::Held(FimMock::completion("total = a + b")));
    let asked = mock.received().len();
    let id = client.send_request("textDocument/inlineCompletion", params(&uri, 1, 31, AUTOMATIC));
    mock.wait_for_requests(asked + 1);
    type_at(&mut client, &uri, 1, 31, "z");
    let response = client.response(id);
    assert_eq!(response["result"], Value::Null, "an answer for the text before `z`: {response}");
    mock.wait_for_closed(1);
    client.shutdown();
}

/// Issue 50, the second case: the model answered `total = a + b` at
/// `    x = 1; `; the user typed `y`, which does not begin it, and asks again
/// with the model failing: the cache has nothing for `    x = 1; y` (it
/// would give `ytotal = a + b`); typing `t`, which does begin it, is served
/// the rest.
#[test]
fn the_cache_serves_a_suggestion_only_where_the_typed_text_begins_it() {
    let setup = Setup::new(&[("a.py", STALE_SOURCE)]);
    let mock = FimMock::start(Reply::Json(FimMock::completion("total = a + b")));
    let mut client = setup.start(settings(&mock, json!({})));
    let uri = client.open(&setup.root.join("a.py"), STALE_SOURCE);
    let first = client.request("textDocument/inlineCompletion", params(&uri, 1, 11, INVOKED));
    assert_eq!(items(&first)[0]["insertText"], "    x = 1; total = a + b");
    mock.set_default(Reply::Status(500, "{\"error\": \"overloaded\"}".into()));
    type_at(&mut client, &uri, 1, 11, "y");
    let after_y = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    for item in items(&after_y) {
        let text = applied(&client, &uri, &item);
        assert!(!text.contains("ytotal"), "a cached suggestion the typed `y` does not begin: {after_y}");
    }
    assert_eq!(mock.received().len(), 2, "the model was asked for `y`");
    // Back to the first text, then `t` typed: the rest of the suggestion.
    replace_line(&mut client, &uri, 1, "    x = 1; t");
    let after_t = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
    let item = &items(&after_t)[0];
    assert_eq!(applied(&client, &uri, item), "def add(a, b):\n    x = 1; total = a + b\n    return x\n");
    client.shutdown();
}

/// Issue 50, one provider layer: a completion request is made by the
/// agent's own request builder, so it carries what the agent's requests
/// carry — the user's `customHeaders` and `ANTHROPIC_AUTH_TOKEN` as a
/// bearer token beside the key on Anthropic; the headers and the key as a
/// bearer token on an OpenAI-compatible server — and a repository's
/// `customHeaders` reach neither.
#[test]
fn a_completion_request_carries_the_agents_custom_headers_and_bearer_token() {
    let answer = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
                        "content": [{"type": "text", "text": " + b"}], "stop_reason": "end_turn", "usage": {"input_tokens": 40, "output_tokens": 6}});
    let anthropic = FimMock::start(Reply::Json(answer));
    let local = FimMock::start(Reply::Json(FimMock::completion(" + b")));
    let user = json!({"customHeaders": {"x-gateway-key": "gw-user"}, "env": {"ANTHROPIC_AUTH_TOKEN": "tok-user", "ANTHROPIC_API_KEY": "sk-ant-user", "OPENAI_API_KEY": "sk-user"}}).to_string();
    let project = json!({"customHeaders": {"x-gateway-key": "gw-theirs", "x-theirs": "1"}}).to_string();
    let setup = Setup::new(&[("a.py", SOURCE), ("../home/.tandem/settings.json", &user), (".tandem/settings.json", &project)]);
    for (mock, provider, expected) in [
        (&anthropic, "anthropic", ["x-gateway-key: gw-user\r\n", "authorization: bearer tok-user\r\n", "x-api-key: sk-ant-user\r\n"]),
        (&local, "openai", ["x-gateway-key: gw-user\r\n", "authorization: bearer sk-user\r\n", "content-type: application/json\r\n"]),
    ] {
        let mut client = setup.start(json!({"enabled": true, "provider": provider, "baseUrl": mock.url, "debounceMs": 0}));
        let uri = client.open(&setup.root.join("a.py"), SOURCE);
        let response = client.request("textDocument/inlineCompletion", params(&uri, 1, 12, INVOKED));
        assert_eq!(items(&response)[0]["insertText"], "    return a + b", "{provider}: {response}");
        let headers = mock.received()[0].headers.to_ascii_lowercase();
        for header in expected {
            assert!(headers.contains(header), "{provider}: no {header:?} in {headers}");
        }
        assert!(!headers.contains("gw-theirs") && !headers.contains("x-theirs"), "{provider}: {headers}");
        client.shutdown();
    }
}
