//! Session figures (issue 9), printed as a Markdown section:
//!
//! 1. the cached share of input tokens over a 20-turn run, against a
//!    provider that applies Anthropic's prompt-caching rules to the request
//!    bodies Tandem really sends (target ≥ 80%);
//! 2. the input tokens the history reaches on a 60-turn run, with and
//!    without context management.
//!
//! Tokens are counted as 4 bytes each on both sides. The caching rules
//! modelled: a `cache_control` breakpoint caches the prefix up to and
//! including its block (tools, then system, then messages); a later request
//! reads the longest earlier-written prefix it starts with; what follows,
//! up to its last breakpoint, is written. No minimum length, no expiry.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::{json, Value};
use tandem::agent::anthropic::{request_body, BodyOptions};
use tandem::agent::provider::{ModelRequest, ModelResponse, Provider, ProviderError, ResponseBuilder, StreamEvent};
use tandem::agent::{self, Usage};
use tandem::thread::{Thread, ContextConfig};
use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry};
use tandem::workspace::Workspace;
use tokio::sync::mpsc;

/// A model that reads one file per turn for `turns` turns, then answers,
/// and reports usage as Anthropic's cache would.
struct CachingModel {
    turns: usize,
    state: Mutex<CacheState>,
}

#[derive(Default)]
struct CacheState {
    requests: usize,
    /// Prefixes written to the cache (as serialized text).
    cached: Vec<String>,
    last_input: u64,
}

fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// The request as one string in Anthropic's prefix order, and the byte
/// offsets just after each breakpoint.
fn prefix_text(body: &Value) -> (String, Vec<usize>) {
    let mut text = String::new();
    let mut breakpoints = Vec::new();
    // The breakpoint marker itself is not part of the cached content.
    let mut add = |v: &Value, text: &mut String| {
        let mut content = v.clone();
        let marked = content.as_object_mut().and_then(|o| o.remove("cache_control")).is_some();
        text.push_str(&content.to_string());
        if marked {
            breakpoints.push(text.len());
        }
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        add(tool, &mut text);
    }
    for block in body["system"].as_array().into_iter().flatten() {
        add(block, &mut text);
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        text.push_str(message["role"].as_str().unwrap_or(""));
        for block in message["content"].as_array().into_iter().flatten() {
            add(block, &mut text);
        }
    }
    (text, breakpoints)
}

#[async_trait]
impl Provider for CachingModel {
    fn name(&self) -> &str {
        "anthropic"
    }
    fn model(&self) -> &str {
        "claude-sonnet-4-5"
    }
    async fn stream(&self, request: &ModelRequest<'_>, events: &mpsc::UnboundedSender<StreamEvent>) -> Result<ModelResponse, ProviderError> {
        let info = tandem::model::table::ModelTable::default().info("claude-sonnet-4-5");
        let body = request_body(&BodyOptions { model: "claude-sonnet-4-5", max_tokens: 1024, thinking_budget: None, effort: None, info: &info }, request);
        let (text, breakpoints) = prefix_text(&body);
        let mut state = self.state.lock().unwrap();
        state.requests += 1;
        let read = state.cached.iter().filter(|p| text.starts_with(p.as_str())).map(String::len).max().unwrap_or(0);
        let last_breakpoint = breakpoints.last().copied().unwrap_or(0);
        for end in &breakpoints {
            state.cached.push(text[..*end].to_string());
        }
        let written = last_breakpoint.saturating_sub(read);
        let usage = Usage { cache_read_input_tokens: tokens(read), cache_creation_input_tokens: tokens(written), ..Usage::new(tokens(text.len()), 20) };
        state.last_input = usage.input_tokens;
        let n = state.requests;
        drop(state);
        let mut builder = ResponseBuilder::default();
        builder.usage = usage;
        if request.tools.is_empty() {
            builder.push_text("Summary: the user asked to read the files one by one; all read so far; next: keep reading.", events);
        } else if n <= self.turns {
            let path = format!("f{}.txt", n % 20);
            builder.push_tool_use(ToolCall::new(format!("toolu_{n}"), "read_file", json!({"file_path": path})), events);
        } else {
            builder.push_text("All read.", events);
        }
        Ok(builder.finish())
    }
}

struct Figures {
    usage: Usage,
    last_input: u64,
    requests: usize,
}

async fn run(turns: usize, config: ContextConfig) -> Figures {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..20 {
        let text: String = (0..80).map(|l| format!("file {i} line {l}: some source text that takes room in the context\n")).collect();
        std::fs::write(dir.path().join(format!("f{i}.txt")), text).unwrap();
    }
    let workspace = std::sync::Arc::new(Workspace::new(dir.path()).unwrap());
    let ctx = ToolContext::new(std::sync::Arc::clone(&workspace));
    let model = CachingModel { turns, state: Mutex::default() };
    let mut conversation = Thread::new("bench", workspace.root().to_path_buf());
    let (events, _rx) = agent::event_channel();
    let request = agent::RunRequest { prompt: "Read the files one by one.".into(), max_turns: Some(turns + 5), ..Default::default() };
    let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None);
    let outcome = agent::run_thread(&model, &executor, ctx, &mut conversation, &config, request, events).await;
    let state = model.state.lock().unwrap();
    Figures { usage: outcome.usage, last_input: state.last_input, requests: state.requests }
}

#[tokio::main]
async fn main() {
    let cached = run(20, ContextConfig::for_model("claude-sonnet-4-5")).await;
    let share = cached.usage.cache_read_input_tokens as f64 / cached.usage.input_tokens.max(1) as f64 * 100.0;
    let window = 32_768;
    let managed_config = ContextConfig { context_window: window, ..ContextConfig::for_model("claude-sonnet-4-5") };
    let unmanaged_config = ContextConfig { context_window: u64::MAX / 4, ..ContextConfig::for_model("claude-sonnet-4-5") };
    let managed = run(60, managed_config).await;
    let unmanaged = run(60, unmanaged_config).await;
    println!("## Sessions: prompt caching and context management\n");
    println!("Deterministic (no timing): a scripted model reads one 6 KB file per turn; tokens are bytes / 4.\n");
    println!("| figure | value |");
    println!("|---|---|");
    println!(
        "| cached share of input tokens, 20-turn run, Anthropic caching rules (target ≥ 80%) | {share:.1}% ({} of {} input tokens read from cache, {} written) |",
        cached.usage.cache_read_input_tokens, cached.usage.input_tokens, cached.usage.cache_creation_input_tokens
    );
    println!(
        "| input tokens of the last request, 60-turn run, without context management | {} ({} tokens over the run) |",
        unmanaged.last_input, unmanaged.usage.input_tokens
    );
    println!(
        "| input tokens of the last request, 60-turn run, with context management (window {window}) | {} ({} tokens over the run, {} requests incl. summaries) |",
        managed.last_input, managed.usage.input_tokens, managed.requests
    );
}
