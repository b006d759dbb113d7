//! Inline completions and next-edit suggestions: the engine behind the
//! language server's `textDocument/inlineCompletion` (LSP 3.18). It knows
//! no LSP: the front end hands it a document's rope, version and cursor
//! and turns its [`Suggestion`]s into items.
//!
//! Code map:
//! - `config`: the `inlineCompletions` settings and the model they name;
//! - `window`: the bounded text around the cursor that a prompt carries;
//! - `prompt`: request bodies (`/completions` with `prompt` and `suffix`,
//!   llama.cpp's `/infill`, a chat model's fill-in-the-middle prompt) and
//!   the cleaning of answers (suffix overlap, whitespace, size);
//! - `client`: the HTTP requests, bounded in size and time;
//! - `cache`: the last suggestions, served again and rebased;
//! - `history`: each document's recent edits, from `didChange`;
//! - `next_edit`: a rewritten region around the cursor as one
//!   range-replacing suggestion;
//! - `telemetry`: shown / accepted counts per session, kept locally.
//!
//! Never stale, never in the way: a request is answered [`Answer::Stale`]
//! (the front end answers `null`, which editors ignore, so it does not hide
//! a newer suggestion) as soon as the document's version changes or a newer
//! request for the same document arrives — during the debounce, before the
//! model is asked, or while it is answering (its HTTP request is dropped,
//! which closes the connection). A failing or slow model gives no
//! suggestion and a log line, never an error.

pub mod cache;
pub mod client;
pub mod config;
pub mod history;
pub mod next_edit;
pub mod prompt;
pub mod telemetry;
pub mod window;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use crate::sync::MutexExt;

use async_trait::async_trait;
use ropey::Rope;
use tokio::sync::watch;

pub use config::{Api, InlineSettings, ModelConfig};
pub use history::{EditHistory, RecentEdit};
use telemetry::{Count, Stats};
use window::Window;

/// How the request was made (LSP's `InlineCompletionTriggerKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The user asked: no debounce.
    Invoked,
    /// While typing: debounced.
    Automatic,
}

/// One request for suggestions.
#[derive(Debug, Clone)]
pub struct Request {
    pub document: PathBuf,
    /// The version `rope` is at.
    pub version: i32,
    /// The document's text (a rope clone costs nothing).
    pub rope: Rope,
    /// The cursor, a char index into `rope`.
    pub cursor: usize,
    pub trigger: Trigger,
    /// The document's recent edits, oldest first (for next edits).
    pub edits: Vec<RecentEdit>,
}

/// What a suggestion is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Text to insert at the cursor.
    Completion,
    /// A replacement near the cursor (a next-edit suggestion).
    NextEdit,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Completion => "completion",
            Kind::NextEdit => "nextEdit",
        }
    }
}

/// Chars `start..end` of the document (at the request's version) become `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub kind: Kind,
}

/// The engine's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// For the request's version (perhaps none).
    Suggestions(Vec<Suggestion>),
    /// The document changed or a newer request came: nothing for this one.
    Stale,
}

/// What the engine asks the front end while a request runs.
#[async_trait]
pub trait DocumentState: Send + Sync {
    /// The document's version now (`None`: it was closed).
    fn version(&self) -> Option<i32>;
    /// Wakes after every document change.
    fn changes(&self) -> watch::Receiver<u64>;
    /// Diagnostics of lines `first..=last`, one line of text each (for next
    /// edits; bounded in time by the front end).
    async fn diagnostics(&self, first: usize, last: usize) -> Vec<String>;
}

/// One language-server session's completion engine.
#[derive(Debug)]
pub struct Engine {
    client: client::ModelClient,
    cache: Mutex<cache::Cache>,
    /// The newest request per document.
    newest: Mutex<HashMap<PathBuf, u64>>,
    /// Bumped by every request, so older ones look whether they are superseded.
    requests: watch::Sender<u64>,
    next_id: AtomicU64,
    pub stats: Stats,
}

impl Engine {
    /// An engine whose counts are saved under `stats_dir`.
    pub fn new(stats_dir: Option<PathBuf>) -> Self {
        Engine {
            client: client::ModelClient::default(),
            cache: Mutex::new(cache::Cache::default()),
            newest: Mutex::new(HashMap::new()),
            requests: watch::Sender::new(0),
            next_id: AtomicU64::new(1),
            stats: Stats::new(stats_dir),
        }
    }

    fn is_newest(&self, document: &Path, id: u64) -> bool {
        self.newest.locked().get(document) == Some(&id)
    }

    fn is_stale(&self, request: &Request, id: u64, state: &dyn DocumentState) -> bool {
        !self.is_newest(&request.document, id) || state.version() != Some(request.version)
    }

    /// Returns once the request is stale (never, while it is not).
    async fn until_stale(&self, request: &Request, id: u64, state: &dyn DocumentState) {
        let mut documents = state.changes();
        let mut requests = self.requests.subscribe();
        loop {
            if self.is_stale(request, id, state) {
                return;
            }
            tokio::select! {
                changed = documents.changed() => if changed.is_err() { std::future::pending::<()>().await },
                changed = requests.changed() => if changed.is_err() { std::future::pending::<()>().await },
            }
        }
    }

    /// Suggestions for `request` from the model `config` names.
    pub async fn complete(&self, config: &ModelConfig, request: Request, state: &dyn DocumentState) -> Answer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.newest.locked().insert(request.document.clone(), id);
        self.requests.send_modify(|n| *n = n.wrapping_add(1));
        self.stats.add(Count::Request);
        let window = Window::around(&request.rope, request.cursor, config.context_lines);
        let cached = self.cache.locked().get(&request.document, &window);
        if let Some(text) = cached {
            self.stats.add(Count::CacheHit);
            return self.answer(vec![Suggestion { start: window.cursor, end: window.cursor, text, kind: Kind::Completion }]);
        }
        let work = async {
            if request.trigger == Trigger::Automatic && !config.debounce.is_zero() {
                tokio::time::sleep(config.debounce).await;
            }
            if self.is_stale(&request, id, state) {
                return None;
            }
            let file_name = request.document.file_name().map_or_else(|| "untitled".into(), |n| n.to_string_lossy().into_owned());
            let completion = async {
                match self.client.fill_in_the_middle(config, &window, &file_name).await {
                    Ok(answer) => prompt::clean(&answer, &window),
                    Err(err) => {
                        self.stats.add(Count::Failure);
                        tracing::warn!("inline completion: {err}");
                        None
                    }
                }
            };
            let next_edit = async {
                if config.next_edits { self.next_edit(config, &request, &file_name, state).await } else { None }
            };
            let (completion, next_edit) = tokio::join!(completion, next_edit);
            Some((completion, next_edit))
        };
        let outcome = tokio::select! {
            outcome = work => outcome,
            () = self.until_stale(&request, id, state) => None,
        };
        let Some((completion, next_edit)) = outcome else {
            self.stats.add(Count::Stale);
            return Answer::Stale;
        };
        if let Some(text) = &completion {
            self.cache.locked().insert(&request.document, &window, text);
        }
        if self.is_stale(&request, id, state) {
            self.stats.add(Count::Stale);
            return Answer::Stale;
        }
        let mut suggestions = Vec::new();
        if let Some(text) = completion {
            suggestions.push(Suggestion { start: window.cursor, end: window.cursor, text, kind: Kind::Completion });
        }
        suggestions.extend(next_edit);
        self.answer(suggestions)
    }

    fn answer(&self, suggestions: Vec<Suggestion>) -> Answer {
        if !suggestions.is_empty() {
            self.stats.add(Count::Shown);
        }
        Answer::Suggestions(suggestions)
    }

    async fn next_edit(&self, config: &ModelConfig, request: &Request, file_name: &str, state: &dyn DocumentState) -> Option<Suggestion> {
        // Typing without an edit of the user's to follow up: nothing to ask
        // (asked for, the model may still find one from the diagnostics).
        if request.edits.is_empty() && request.trigger == Trigger::Automatic {
            return None;
        }
        let region = next_edit::Region::around(&request.rope, request.cursor)?;
        let diagnostics = state.diagnostics(region.first_line, region.last_line).await;
        let user = next_edit::prompt(&request.rope, &region, file_name, &request.edits, &diagnostics);
        let max_tokens = u32::try_from(region.text.len() / 3 + 64).unwrap_or(u32::MAX).min(config::MAX_MAX_TOKENS * 2);
        let deadline = tokio::time::Instant::now() + config.timeout;
        let answer = match self.client.chat(config, next_edit::SYSTEM, &user, max_tokens, deadline).await {
            Ok(answer) => answer,
            Err(err) => {
                self.stats.add(Count::Failure);
                tracing::warn!("next-edit suggestion: {err}");
                return None;
            }
        };
        let rewritten = next_edit::parse(&answer)?;
        let (start, end, text) = next_edit::replacement(&region, &rewritten)?;
        Some(Suggestion { start, end, text, kind: Kind::NextEdit })
    }

    /// The editor inserted a suggestion (its command ran).
    pub fn accepted(&self) {
        self.stats.add(Count::Accepted);
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stats.save(true);
    }
}
