//! Conversations that last, against the loopback model: follow-ups on one
//! thread (history and read ledger carry over), `--continue`/`--resume`
//! across processes, context management (stubs, compaction, the one retry
//! after a context-length error), prompt caching, thinking blocks, loop
//! detection, and the recorded llama.cpp streams.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::process::Stdio;

use common::mock_model::{MockModel, MockResponse};
use common::{fixture, render_events, request, workspace};
use serde_json::{json, Value};
use tandem::agent::anthropic::AnthropicProvider;
use tandem::agent::config::HttpProviderConfig;
use tandem::agent::openai::OpenAiProvider;
use tandem::agent::{self, Provider, RunEvent, RunOutcome, RunRequest, RunStatus};
use tandem::thread::{Thread, ContextConfig};
use tandem::tools::{Executor, ToolContext, ToolRegistry};

// ---------------------------------------------------------------- helpers

fn event(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

enum Block<'a> {
    Text(&'a str),
    Tool(&'a str, &'a str, Value),
    Thinking(&'a str, &'a str),
}

/// One Anthropic streamed message with these blocks; `input_tokens` as the
/// usage the mock reports, plus optional cache counts.
fn anthropic_message(input_tokens: u64, cache: (u64, u64), blocks: &[Block<'_>]) -> String {
    let usage = json!({"input_tokens": input_tokens, "output_tokens": 1, "cache_read_input_tokens": cache.0, "cache_creation_input_tokens": cache.1});
    let mut out = event("message_start", json!({"type": "message_start", "message": {"id": "msg_s", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "usage": usage}}));
    let mut stop = "end_turn";
    for (index, block) in blocks.iter().enumerate() {
        match block {
            Block::Text(text) => {
                out += &event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}));
                out += &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}));
            }
            Block::Tool(id, name, input) => {
                stop = "tool_use";
                out += &event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
                out += &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}));
            }
            Block::Thinking(thinking, signature) => {
                out += &event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}));
                // Split so the text is assembled from pieces.
                let (a, b) = thinking.split_at(thinking.len() / 2);
                for piece in [a, b] {
                    out += &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}));
                }
                out += &event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": signature}}));
            }
        }
        out += &event("content_block_stop", json!({"type": "content_block_stop", "index": index}));
    }
    out += &event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}));
    out + &event("message_stop", json!({"type": "message_stop"}))
}

fn reply(input_tokens: u64, blocks: &[Block<'_>]) -> MockResponse {
    MockResponse::sse(&anthropic_message(input_tokens, (0, 0), blocks))
}

fn text(t: &str) -> MockResponse {
    reply(100, &[Block::Text(t)])
}

fn read(id: &str, path: &str) -> MockResponse {
    reply(100, &[Block::Tool(id, "read_file", json!({"file_path": path}))])
}

fn anthropic(mock: &MockModel) -> AnthropicProvider {
    AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-test")).unwrap()
}

fn executor() -> Executor {
    Executor::new(ToolRegistry::builtin()).with_results_dir(None)
}

fn thread(ctx: &ToolContext) -> Thread {
    Thread::new("test-thread", ctx.workspace.root().to_path_buf())
}

async fn run_in(provider: &dyn Provider, ctx: &ToolContext, conversation: &mut Thread, config: &ContextConfig, request: RunRequest) -> (RunOutcome, Vec<RunEvent>) {
    let (tx, mut rx) = agent::event_channel();
    let outcome = agent::run_thread(provider, &executor(), ctx.clone(), conversation, config, request, tx).await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (outcome, events)
}

fn roles_and_text(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let blocks: Vec<String> = m["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| match b["type"].as_str().unwrap() {
                    "text" => format!("text:{}", b["text"].as_str().unwrap().lines().next().unwrap_or("")),
                    "tool_use" => format!("tool_use:{}", b["name"].as_str().unwrap()),
                    "tool_result" => format!("tool_result:{}", b["content"].as_str().unwrap().lines().next().unwrap_or("")),
                    other => other.to_string(),
                })
                .collect();
            format!("{} {}", m["role"].as_str().unwrap(), blocks.join(" | "))
        })
        .collect()
}

// ---------------------------------------------------------------- threads

/// Two runs of a thread over `a.txt` ("one\n"): the model reads it in the
/// first, and in the second edits "one" to "two", then says `last`.
struct ReadThenEdit {
    mock: MockModel,
    dir: tempfile::TempDir,
    ctx: ToolContext,
    config: ContextConfig,
}

impl ReadThenEdit {
    async fn start(last: &str) -> Self {
        let mock = MockModel::start(vec![
            read("toolu_r", "a.txt"),
            text("It says one."),
            reply(100, &[Block::Tool("toolu_e", "edit_file", json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}))]),
            text(last),
        ])
        .await;
        let (dir, ctx) = workspace();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        ReadThenEdit { mock, dir, ctx, config: ContextConfig::for_model("claude-test") }
    }

    async fn run(&self, conversation: &mut Thread, prompt: &str) -> (RunOutcome, Vec<RunEvent>) {
        run_in(&anthropic(&self.mock), &self.ctx, conversation, &self.config, request(prompt)).await
    }

    fn a_txt(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("a.txt")).unwrap()
    }
}

/// The edit's result: (is_error, content).
fn edit_result(events: &[RunEvent]) -> (bool, String) {
    events
        .iter()
        .find_map(|e| match e {
            RunEvent::ToolResult { id, is_error, content, .. } if id == "toolu_e" => Some((*is_error, content.clone())),
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn a_follow_up_holds_the_earlier_turns_and_edits_a_file_read_before() {
    let t = ReadThenEdit::start("Changed.").await;
    let mut conversation = thread(&t.ctx);
    let (first, _) = t.run(&mut conversation, "what does a.txt say?").await;
    assert_eq!(first.status, RunStatus::Completed);
    let (second, events) = t.run(&mut conversation, "now make it two").await;
    assert_eq!(second.status, RunStatus::Completed, "{events:?}");
    assert_eq!(t.a_txt(), "two\n");

    let requests = t.mock.requests();
    expect_test::expect![[r#"
        user text:what does a.txt say?
        assistant tool_use:read_file
        user tool_result:   1 | one
        assistant text:It says one.
        user text:now make it two"#]]
    .assert_eq(&roles_and_text(&requests[2].body).join("\n"));
    let (is_error, content) = edit_result(&events);
    assert!(!is_error && content.starts_with("Successfully edited a.txt"), "{content}");
}

#[tokio::test]
async fn a_follow_up_edit_is_refused_when_the_user_changed_the_file_in_between() {
    let t = ReadThenEdit::start("I will read it again.").await;
    let mut conversation = thread(&t.ctx);
    t.run(&mut conversation, "what does a.txt say?").await;
    std::fs::write(t.dir.path().join("a.txt"), "one\nand the user's line\n").unwrap();
    let (_, events) = t.run(&mut conversation, "now make it two").await;
    let (is_error, content) = edit_result(&events);
    assert!(is_error && content.contains("a.txt was modified externally since your last read"), "{content}");
    assert_eq!(t.a_txt(), "one\nand the user's line\n");
}

#[tokio::test]
async fn threads_do_not_share_read_ledgers() {
    let t = ReadThenEdit::start("Oops.").await;
    let mut first = thread(&t.ctx);
    t.run(&mut first, "read a.txt").await;
    let mut other = Thread::new("other", t.ctx.workspace.root().to_path_buf());
    let (_, events) = t.run(&mut other, "make it two").await;
    let (is_error, content) = edit_result(&events);
    assert!(is_error && content.contains("You must read this file before editing"), "{content}");
    assert_eq!(t.a_txt(), "one\n");
}

// ---------------------------------------------------------------- the terminal

fn tandem(dir: &std::path::Path, data: &std::path::Path, mock: &MockModel) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    for var in crate::common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    command
        .env("XDG_DATA_HOME", data)
        .env("NO_COLOR", "1")
        .env("TANDEM_PROVIDER", "anthropic")
        .env("ANTHROPIC_BASE_URL", &mock.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-secret-test-key");
    command
}

async fn ask(dir: &std::path::Path, data: &std::path::Path, responses: Vec<MockResponse>, args: &[&str]) -> (MockModel, Vec<Value>) {
    let mock = MockModel::start(responses).await;
    let mut command = tandem(dir, data, &mock);
    command.arg("ask").arg("--json").args(args);
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    (mock, stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
}

/// `tandem ask --resume` of a thread another process is running (an editor
/// window's server holds its run lock): refused with the reason, nothing
/// asked of the model, its file untouched; once the lock is let go, it runs.
#[tokio::test]
async fn resuming_a_thread_another_process_is_running_is_refused_until_it_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (_, events) = ask(dir.path(), data.path(), vec![text("Noted.")], &["remember the number 7"]).await;
    let thread_id = events.last().unwrap()["thread_id"].as_str().unwrap().to_string();
    let session = crate::common::files::walk(data.path()).into_iter().find(|p| p.ends_with(format!("{thread_id}.jsonl"))).unwrap();
    let saved = std::fs::read(&session).unwrap();

    // Held here as the other process holds it (an advisory lock on the
    // thread's lock file, with the holder's pid in it).
    let mut held = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(session.with_extension("lock")).unwrap();
    held.try_lock().unwrap();
    held.set_len(0).unwrap();
    std::io::Write::write_all(&mut held, b"4242").unwrap();
    let mock = MockModel::start(vec![text("Should not run.")]).await;
    let output = tandem(dir.path(), data.path(), &mock).args(["ask", "--resume", &thread_id, "and now?"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("this conversation is running in another window") && stderr.contains("(pid 4242)"), "{stderr}");
    assert!(mock.requests().is_empty(), "the model was asked");
    assert_eq!(std::fs::read(&session).unwrap(), saved, "the thread's file was written to");

    drop(held);
    let (mock, _) = ask(dir.path(), data.path(), vec![text("It was 7.")], &["--resume", &thread_id, "which number?"]).await;
    assert_eq!(roles_and_text(&mock.requests()[0].body).len(), 3);
}

#[tokio::test]
async fn continue_and_resume_after_the_process_exited_and_a_torn_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (_, events) = ask(dir.path(), data.path(), vec![text("Noted: 42.")], &["remember the number 42"]).await;
    let end = events.last().unwrap();
    let thread_id = end["thread_id"].as_str().unwrap().to_string();
    assert_eq!(end["usage"]["input_tokens"], json!(100));

    let (mock, _) = ask(dir.path(), data.path(), vec![text("It was 42.")], &["-c", "which number?"]).await;
    expect_test::expect![[r#"
        user text:remember the number 42
        assistant text:Noted: 42.
        user text:which number?"#]]
    .assert_eq(&roles_and_text(&mock.requests()[0].body).join("\n"));

    // A crash mid-write leaves half a line; the thread still loads.
    let sessions: Vec<_> = crate::common::files::walk(data.path()).into_iter().filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert!(sessions[0].ends_with(format!("{thread_id}.jsonl")));
    let saved = std::fs::read_to_string(&sessions[0]).unwrap();
    assert!(!saved.contains("sk-ant-secret-test-key"), "the key was saved");
    std::fs::write(&sessions[0], format!("{saved}{{\"type\":\"message\",\"message\":{{\"role\":\"us")).unwrap();

    let (mock, _) = ask(dir.path(), data.path(), vec![text("Still 42.")], &["--resume", &thread_id, "and now?"]).await;
    assert_eq!(roles_and_text(&mock.requests()[0].body).len(), 5);

    let mock = MockModel::start(vec![]).await;
    let output = tandem(dir.path(), data.path(), &mock).arg("threads").output().await.unwrap();
    let listing = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success());
    // `tandem sessions`, its name before, lists the same.
    let alias = tandem(dir.path(), data.path(), &mock).arg("sessions").output().await.unwrap();
    assert_eq!(String::from_utf8(alias.stdout).unwrap(), listing);
    let row = listing.lines().find(|l| l.starts_with(&thread_id)).unwrap_or_else(|| panic!("{listing}"));
    assert!(row.contains("remember the number 42"), "{row}");
    assert!(listing.contains("total: 1 threads, 3 runs, 3 turns, 300 tokens in"), "{listing}");

    let output = tandem(dir.path(), data.path(), &mock).args(["ask", "--resume", "no-such-thread", "hi"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no saved thread \"no-such-thread\""));
}

/// Threads an earlier version saved under `…/tandem/sessions` are not
/// lost: `tandem threads` lists them, `-c` continues them with their
/// history, and they are in `…/tandem/threads` from then on.
#[tokio::test]
async fn threads_saved_in_the_old_sessions_folder_are_listed_and_continued() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (_, events) = ask(dir.path(), data.path(), vec![text("Noted: 7.")], &["remember the number 7"]).await;
    let thread_id = events.iter().find_map(|e| e["thread_id"].as_str()).unwrap().to_string();
    let (old, new) = (data.path().join("tandem/sessions"), data.path().join("tandem/threads"));
    std::fs::rename(&new, &old).unwrap();

    let mock = MockModel::start(vec![]).await;
    let output = tandem(dir.path(), data.path(), &mock).arg("threads").output().await.unwrap();
    let listing = String::from_utf8(output.stdout).unwrap();
    assert!(listing.lines().any(|l| l.starts_with(&thread_id) && l.contains("remember the number 7")), "{listing}");
    let (mock, _) = ask(dir.path(), data.path(), vec![text("Still 7.")], &["-c", "which number?"]).await;
    assert!(roles_and_text(&mock.requests()[0].body).iter().any(|m| m.contains("remember the number 7")), "the history was not sent");
    let saved: Vec<_> = crate::common::files::walk(&new).into_iter().filter(|p| p.ends_with(format!("{thread_id}.jsonl"))).collect();
    assert_eq!(saved.len(), 1, "{:?}", crate::common::files::walk(data.path()));
    assert!(!old.exists() || crate::common::files::walk(&old).is_empty(), "{:?}", crate::common::files::walk(&old));
}

/// `tandem ask` reads a.txt ("one\n"); `tandem ask -c`, a new process,
/// edits it without reading it again. `between` runs between the two.
/// Returns the edit's result and a.txt afterwards.
async fn read_then_continue_and_edit(between: impl FnOnce(&std::path::Path)) -> ((bool, String), String, String) {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    ask(dir.path(), data.path(), vec![read("toolu_r", "a.txt"), text("It says one.")], &["what does a.txt say?"]).await;
    between(dir.path());
    let edit = reply(100, &[Block::Tool("toolu_e", "edit_file", json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}))]);
    let (_, events) = ask(dir.path(), data.path(), vec![edit, text("Done.")], &["-c", "--permission-mode", "acceptEdits", "now make it two"]).await;
    let result = events.iter().find(|e| e["type"] == "tool_result" && e["id"] == "toolu_e").unwrap();
    let sessions: Vec<_> = crate::common::files::walk(data.path()).into_iter().filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect();
    let saved = std::fs::read_to_string(&sessions[0]).unwrap();
    (
        (result["is_error"].as_bool().unwrap(), result["content"].as_str().unwrap().to_string()),
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        saved,
    )
}

#[tokio::test]
async fn continue_in_a_new_process_edits_a_file_read_by_the_thread_s_earlier_run_without_a_re_read() {
    let ((is_error, content), a_txt, saved) = read_then_continue_and_edit(|_| {}).await;
    assert!(!is_error && content.starts_with("Successfully edited a.txt"), "{content}");
    assert_eq!(a_txt, "two\n");
    // What the thread read is saved as fingerprints, never as text.
    let reads: Vec<Value> = saved.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|r| r["type"] == "reads").collect();
    assert!(!reads.is_empty(), "{saved}");
    let fields = |f: &Value| {
        let mut keys: Vec<String> = f.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    assert!(reads.iter().all(|r| r["files"].as_array().unwrap().iter().all(|f| fields(f) == ["fingerprint", "path"])), "{reads:?}");
}

#[tokio::test]
async fn continue_in_a_new_process_refuses_to_edit_a_file_changed_since_the_earlier_run_read_it() {
    let ((is_error, content), a_txt, _) = read_then_continue_and_edit(|dir| std::fs::write(dir.join("a.txt"), "one\nand the user's line\n").unwrap()).await;
    assert!(is_error && content.contains("a.txt was modified externally since your last read"), "{content}");
    assert_eq!(a_txt, "one\nand the user's line\n");
}


// ---------------------------------------------------------------- context management

fn big_file(n: usize) -> String {
    (0..30).map(|i| format!("file {n} line {i}: some text that takes room in the context\n")).collect()
}

fn three_reads(input_tokens: u64, first: usize) -> MockResponse {
    let ids: Vec<String> = (first..first + 3).map(|i| format!("toolu_{i}")).collect();
    let paths: Vec<String> = (first..first + 3).map(|i| format!("f{i}.txt")).collect();
    let blocks: Vec<Block<'_>> = (0..3).map(|k| Block::Tool(&ids[k], "read_file", json!({"file_path": paths[k]}))).collect();
    reply(input_tokens, &blocks)
}

#[tokio::test]
async fn growing_context_stubs_old_results_then_compacts_and_completes() {
    let mock = MockModel::start(vec![
        three_reads(4_000, 1),
        three_reads(13_000, 4),
        reply(17_000, &[Block::Tool("toolu_7", "read_file", json!({"file_path": "f7.txt"}))]),
        reply(3_000, &[Block::Text("SUMMARY: the user wants the files read; f1-f7 read; next: answer.")]),
        text("All seven files are read."),
    ])
    .await;
    let (dir, ctx) = workspace();
    for n in 1..=7 {
        std::fs::write(dir.path().join(format!("f{n}.txt")), big_file(n)).unwrap();
    }
    let config = ContextConfig::from_lookup("claude-test", |name| (name == "TANDEM_CONTEXT_WINDOW").then(|| "20000".to_string())).unwrap();
    let mut conversation = thread(&ctx);
    let (outcome, events) = run_in(&anthropic(&mock), &ctx, &mut conversation, &config, request("read f1 to f7")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{events:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 5);

    // Request 3 (past 60%): the oldest results are stubs, the recent ones whole.
    let results: Vec<String> = roles_and_text(&requests[2].body).into_iter().filter(|l| l.starts_with("user tool_result")).collect();
    expect_test::expect![[r#"
        user tool_result:[result of read_file f1.txt cleared to save context; call again if needed] | tool_result:[result of read_file f2.txt cleared to save context; call again if needed] | tool_result:   1 | file 3 line 0: some text that takes room in the context
        user tool_result:   1 | file 4 line 0: some text that takes room in the context | tool_result:   1 | file 5 line 0: some text that takes room in the context | tool_result:   1 | file 6 line 0: some text that takes room in the context"#]]
    .assert_eq(&results.join("\n"));

    // Request 4 (past 80%): the summary request, without tools.
    let summary_request = &requests[3].body;
    assert!(summary_request.get("tools").is_none());
    assert!(summary_request["system"][0]["text"].as_str().unwrap().starts_with("You summarise a coding agent's work"));
    assert!(summary_request["messages"][0]["content"][0]["text"].as_str().unwrap().contains("User: read f1 to f7"));

    // Request 5: the summary and the prompt, well under the threshold.
    let after = &requests[4];
    assert!((after.raw.len() as u64) / 4 < config.compact_threshold(), "{} bytes", after.raw.len());
    expect_test::expect![[r#"
        user text:[This conversation was compacted to save context. Summary of the work so far:] | text:The user's latest request:"#]]
    .assert_eq(&roles_and_text(&after.body).join("\n"));
    let first_text = after.body["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(first_text.contains("SUMMARY: the user wants the files read") && first_text.contains("f7.txt"), "{first_text}");
    assert!(conversation.ledger.paths().is_empty(), "files read before the compaction must be read again");

    let compacts: Vec<(u64, u64)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Compact { before_tokens, after_tokens, .. } => Some((*before_tokens, *after_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(compacts.len(), 1);
    assert!(compacts[0].0 > config.compact_threshold() && compacts[0].1 < config.stub_threshold(), "{compacts:?}");
}

fn too_long() -> MockResponse {
    MockResponse::error(400, r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#)
}

#[tokio::test]
async fn a_context_length_400_compacts_once_and_retries() {
    let mock = MockModel::start(vec![too_long(), text("SUMMARY: nothing done yet."), text("Done.")]).await;
    let (_dir, ctx) = workspace();
    let mut conversation = thread(&ctx);
    let (outcome, events) = run_in(&anthropic(&mock), &ctx, &mut conversation, &ContextConfig::for_model("claude-test"), request("go")).await;
    assert_eq!((outcome.status, outcome.text.as_str()), (RunStatus::Completed, "Done."));
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].body.get("tools").is_none());
    assert!(requests[2].body["messages"][0]["content"][0]["text"].as_str().unwrap().contains("SUMMARY: nothing done yet."));
    assert_eq!(events.iter().filter(|e| matches!(e, RunEvent::Compact { .. })).count(), 1);
}

#[tokio::test]
async fn a_second_context_length_400_ends_the_run_instead_of_looping() {
    let mock = MockModel::start(vec![too_long(), text("SUMMARY."), too_long(), text("never sent")]).await;
    let (_dir, ctx) = workspace();
    let mut conversation = thread(&ctx);
    let (outcome, _) = run_in(&anthropic(&mock), &ctx, &mut conversation, &ContextConfig::for_model("claude-test"), request("go")).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(outcome.text.contains("prompt is too long"), "{}", outcome.text);
    assert_eq!(mock.requests().len(), 3);
}

fn openai_text(text: &str) -> MockResponse {
    let chunk = json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
    let stop = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    MockResponse::sse(&format!("data: {chunk}\n\ndata: {stop}\n\ndata: [DONE]\n\n"))
}

#[tokio::test]
async fn an_openai_context_length_400_compacts_once_and_retries() {
    let error = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let mock = MockModel::start(vec![MockResponse::error(400, error), openai_text("SUMMARY: started."), openai_text("Done.")]).await;
    let (_dir, ctx) = workspace();
    let provider = OpenAiProvider::new(HttpProviderConfig::for_tests(&mock.url, "gpt-4o")).unwrap();
    let mut conversation = thread(&ctx);
    let (outcome, _) = run_in(&provider, &ctx, &mut conversation, &ContextConfig::for_model("gpt-4o"), request("go")).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].body.get("tools").is_none());
    assert!(requests[2].raw.contains("SUMMARY: started."));
}

#[tokio::test]
async fn compact_flag_forces_a_compaction_before_the_run() {
    let mock = MockModel::start(vec![text("Noted."), text("SUMMARY: noted a thing."), text("Yes.")]).await;
    let (_dir, ctx) = workspace();
    let provider = anthropic(&mock);
    let config = ContextConfig::for_model("claude-test");
    let mut conversation = thread(&ctx);
    run_in(&provider, &ctx, &mut conversation, &config, request("note a thing")).await;
    let (outcome, events) = run_in(&provider, &ctx, &mut conversation, &config, RunRequest { compact: true, ..request("ok?") }).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(events.iter().any(|e| matches!(e, RunEvent::Compact { reason, .. } if reason == "requested by the user")));
    assert_eq!(roles_and_text(&mock.requests()[2].body).len(), 1);
}

#[tokio::test]
async fn a_compaction_names_the_most_recently_read_files_for_a_re_read_not_every_file() {
    // Twelve files read in four turns, then f1 read again: the ten most
    // recent are f1 and f4 to f12; f2 and f3 were read first and not since.
    let mock = MockModel::start(vec![
        three_reads(100, 1),
        three_reads(100, 4),
        three_reads(100, 7),
        three_reads(100, 10),
        read("toolu_again", "f1.txt"),
        text("Read them all."),
        text("SUMMARY: twelve files read."),
        text("Yes."),
    ])
    .await;
    let (dir, ctx) = workspace();
    for n in 1..=12 {
        std::fs::write(dir.path().join(format!("f{n}.txt")), format!("file {n}\n")).unwrap();
    }
    let provider = anthropic(&mock);
    let config = ContextConfig::for_model("claude-test");
    let mut conversation = thread(&ctx);
    run_in(&provider, &ctx, &mut conversation, &config, request("read f1 to f12")).await;
    let (outcome, _) = run_in(&provider, &ctx, &mut conversation, &config, RunRequest { compact: true, ..request("done?") }).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let requests = mock.requests();
    assert_eq!(requests.len(), 8);
    let summary = requests[7].body["messages"][0]["content"][0]["text"].as_str().unwrap().to_string();
    let listed = summary.split("read them again before editing): ").nth(1).unwrap_or_default();
    assert_eq!(
        listed,
        "f1.txt, f10.txt, f11.txt, f12.txt, f4.txt, f5.txt, f6.txt, f7.txt, f8.txt, f9.txt",
        "{summary}"
    );
    // Every file, named or not, must be read again before an edit.
    assert!(conversation.ledger.paths().is_empty());
}

// ---------------------------------------------------------------- caching

#[tokio::test]
async fn cache_breakpoints_and_a_byte_stable_prefix_across_turns_and_runs() {
    let mock = MockModel::start(vec![read("toolu_1", "a.txt"), text("Read."), read("toolu_2", "a.txt"), text("Again.")]).await;
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let provider = anthropic(&mock);
    let config = ContextConfig::for_model("claude-test");
    let mut conversation = thread(&ctx);
    run_in(&provider, &ctx, &mut conversation, &config, request("read a.txt")).await;
    run_in(&provider, &ctx, &mut conversation, &config, request("read it again")).await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let ephemeral = json!({"type": "ephemeral"});
    for r in &requests {
        assert_eq!(r.body["system"][0]["cache_control"], ephemeral);
        let tools = r.body["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"], ephemeral);
        assert!(tools[..tools.len() - 1].iter().all(|t| t.get("cache_control").is_none()));
        let last_block = r.body["messages"].as_array().unwrap().last().unwrap()["content"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last_block["cache_control"], ephemeral, "{last_block}");
        // Only the last message carries a breakpoint.
        assert_eq!(r.raw.matches("\"cache_control\"").count(), 3);
    }
    // The bytes before the messages are the same in every request.
    let prefix = |raw: &str| raw[..raw.find("\"messages\"").unwrap()].to_string() + &raw[raw.find("\"stream\"").unwrap()..];
    let system = |r: &common::mock_model::RecordedRequest| serde_json::to_string(&r.body["system"]).unwrap();
    let tools = |r: &common::mock_model::RecordedRequest| serde_json::to_string(&r.body["tools"]).unwrap();
    for r in &requests[1..] {
        assert_eq!(system(r), system(&requests[0]));
        assert_eq!(tools(r), tools(&requests[0]));
        assert_eq!(prefix(&r.raw), prefix(&requests[0].raw));
    }
}

#[tokio::test]
async fn cache_usage_reaches_status_and_end_events() {
    let mock = MockModel::start(vec![MockResponse::sse(&anthropic_message(1000, (800, 150), &[Block::Text("Hi.")]))]).await;
    let (_dir, ctx) = workspace();
    let provider = AnthropicProvider::new(HttpProviderConfig::for_tests(&mock.url, "claude-sonnet-4-5")).unwrap();
    let mut conversation = thread(&ctx);
    let (outcome, events) = run_in(&provider, &ctx, &mut conversation, &ContextConfig::for_model("claude-sonnet-4-5"), request("hi")).await;
    let rendered = render_events(&events);
    assert!(rendered.contains(r#"{"type":"status","turn":1,"usage":{"input_tokens":1950,"output_tokens":5,"cache_read_input_tokens":800,"cache_creation_input_tokens":150}}"#), "{rendered}");
    // (1000 plain × $3 + 800 read × $0.30 + 150 written × $3.75 + 5 out × $15) per million.
    let expected = (1000.0 * 3.0 + 800.0 * 0.30 + 150.0 * 3.75 + 5.0 * 15.0) / 1e6;
    assert!((outcome.cost_usd.unwrap() - expected).abs() < 1e-12, "{:?}", outcome.cost_usd);
    assert!(matches!(events.last(), Some(RunEvent::End { cost_usd: Some(c), .. }) if (*c - expected).abs() < 1e-12));
}

// ---------------------------------------------------------------- thinking

#[tokio::test]
async fn thinking_blocks_round_trip_byte_for_byte() {
    let thinking = "The user wants a.txt. Quotes \" and unicode \u{1F600} and a newline\nstay exact.";
    let signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds/+/=";
    let mock = MockModel::start(vec![
        reply(100, &[Block::Thinking(thinking, signature), Block::Tool("toolu_t", "read_file", json!({"file_path": "a.txt"}))]),
        text("Done."),
    ])
    .await;
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let mut config = HttpProviderConfig::for_tests(&mock.url, "claude-test");
    config.thinking_budget = Some(2048);
    let provider = AnthropicProvider::new(config).unwrap();
    let mut conversation = thread(&ctx);
    let (outcome, events) = run_in(&provider, &ctx, &mut conversation, &ContextConfig::for_model("claude-test"), request("read a.txt")).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let requests = mock.requests();
    assert_eq!(requests[0].body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    assert!(requests[0].body["max_tokens"].as_u64().unwrap() > 2048);
    let block = json!({"type": "thinking", "thinking": thinking, "signature": signature}).to_string();
    assert!(requests[1].raw.contains(&block), "{}", requests[1].raw);
    assert!(events.iter().any(|e| matches!(e, RunEvent::Thinking { text } if text == thinking)));
}

#[tokio::test]
async fn thinking_blocks_are_never_sent_to_openai_compatible_servers() {
    let (_dir, ctx) = workspace();
    let mut conversation = thread(&ctx);
    conversation.push(tandem::agent::provider::Message::user_text("hi"));
    conversation.push(tandem::agent::provider::Message {
        role: tandem::agent::provider::Role::Assistant,
        content: vec![
            tandem::agent::provider::ContentBlock::Thinking { thinking: "secret musing".into(), signature: "sig".into() },
            tandem::agent::provider::ContentBlock::Text { text: "Hello.".into() },
        ],
    });
    let mock = MockModel::start(vec![openai_text("Sure.")]).await;
    let provider = OpenAiProvider::new(HttpProviderConfig::for_tests(&mock.url, "local")).unwrap();
    run_in(&provider, &ctx, &mut conversation, &ContextConfig::for_model("local"), request("again")).await;
    let raw = &mock.requests()[0].raw;
    assert!(raw.contains("Hello.") && !raw.contains("secret musing") && !raw.contains("thinking"), "{raw}");
}

// ---------------------------------------------------------------- loops

#[tokio::test]
async fn a_model_repeating_one_call_gets_a_nudge_then_the_run_ends_with_loop() {
    let responses: Vec<MockResponse> = (1..=10).map(|i| read(&format!("toolu_{i}"), "a.txt")).collect();
    let mock = MockModel::start(responses).await;
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("a.txt"), "same\n").unwrap();
    let mut conversation = thread(&ctx);
    let (outcome, events) = run_in(&anthropic(&mock), &ctx, &mut conversation, &ContextConfig::for_model("claude-test"), request("read a.txt")).await;
    assert_eq!(outcome.status, RunStatus::Loop);
    assert!(outcome.text.contains("same call (read_file"), "{}", outcome.text);
    assert!(matches!(events.last(), Some(RunEvent::End { status: RunStatus::Loop, .. })));
    let requests = mock.requests();
    assert_eq!(requests.len(), 5);
    let nudge = "you have made this exact call 4 times with the same result; change approach or answer";
    assert!(requests[4].raw.contains(nudge));
    assert!(!requests[3].raw.contains(nudge));
    // The history stays valid for a follow-up: the last call has its result.
    assert!(matches!(conversation.messages.last().unwrap().content[0], tandem::agent::provider::ContentBlock::ToolResult { .. }));
}

// ---------------------------------------------------------------- llama.cpp

#[tokio::test]
async fn recorded_llamacpp_streams_drive_a_run_end_to_end() {
    let mock = MockModel::start(vec![
        MockResponse::sse(&fixture("llamacpp/recorded_tool_call.sse")),
        MockResponse::sse(&fixture("llamacpp/recorded_tool_call_after_tool_result.sse")),
        MockResponse::sse(&fixture("llamacpp/recorded_text.sse")),
    ])
    .await;
    let (dir, ctx) = workspace();
    std::fs::write(dir.path().join("a.txt"), "fn main() {}\n").unwrap();
    let provider = OpenAiProvider::new(HttpProviderConfig::for_tests(&mock.url, "qwen2.5-coder-0.5b-instruct")).unwrap();
    let mut conversation = thread(&ctx);
    let (outcome, events) = run_in(&provider, &ctx, &mut conversation, &ContextConfig::for_model("qwen2.5-coder-0.5b-instruct"), request("Read the file a.txt")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{events:?}");
    assert!(outcome.text.starts_with("```rust\nfn add_two_numbers(a: i32, b: i32) -> i32 {"), "{}", outcome.text);
    let results: Vec<&RunEvent> = events.iter().filter(|e| matches!(e, RunEvent::ToolResult { is_error: false, .. })).collect();
    assert_eq!(results.len(), 2);
    // The recorded usage: prompt 179 + 244 + 43, of which 0 + 169 + 5 cached.
    assert_eq!((outcome.usage.input_tokens, outcome.usage.cache_read_input_tokens, outcome.usage.output_tokens), (466, 174, 78));
    // Local models have no price: no made-up cost.
    assert_eq!(outcome.cost_usd, None);
    let second = &mock.requests()[1].body;
    assert_eq!(second["messages"][2]["tool_calls"][0]["id"], json!("7XmtC5Qr0bLY6hDX5ylV7ktI1B5CnQoP"));
    assert_eq!(second["messages"][3]["role"], json!("tool"));
}
