//! The language server: the only module that knows LSP types.
//!
//! Code map:
//! - `position`: the one ropey ↔ LSP position bridge (UTF-8/16/32, CRLF,
//!   clamping);
//! - `documents`: open documents as ropey buffers with versions, applied in
//!   arrival order (Invariant 5);
//! - `edits`: a whole-text change → minimal `TextEdit`s against the
//!   original text;
//! - `editor`: the editor edit sink — versioned, reviewed, verified
//!   `workspace/applyEdit` (Invariants 1 and 2);
//! - `permission`: permission prompts as `window/showMessageRequest`;
//! - `hook_consent`: the prompt that approves the project's hooks;
//! - `runs`: `tandem.ask` / `tandem.cancel`, run events, work-done progress
//!   (each run recording its checkpoint);
//! - `undo`: `tandem.undo` / `tandem.redo`, a run taken back from its checkpoint;
//! - `code_actions`: agent actions on selections and diagnostics;
//! - `commands`: the names of the `tandem.*` commands (a leaf);
//! - `review`: `tandem.review`, a review of a scope as a run;
//! - `findings`: a review's findings as diagnostics, moved with the
//!   user's edits, and their code actions (fix, apply, dismiss);
//! - `inline`: `textDocument/inlineCompletion` (LSP 3.18), the glue
//!   around the completion engine (`crate::completion`);
//! - `inline_provider`: whether the editor asks for inline completions,
//!   registered and unregistered as the settings change (or, for an
//!   editor that cannot be told later, advertised at start);
//! - `config`: `initializationOptions` and `workspace/configuration`;
//! - `client`: requests to the editor with timeouts, behind a trait;
//! - `clients`: what each editor does with reviewed edits (the review path
//!   by `clientInfo.name`);
//! - `server`: the `LanguageServer` handlers that tie these together;
//! - `transport`: a guard on the wire so invalid messages get an error
//!   response instead of ending the session.

pub mod client;
pub mod clients;
mod code_actions;
mod commands;
pub mod code_intel;
pub mod config;
pub mod demo;
pub mod documents;
pub mod editor;
pub mod edits;
pub mod findings;
mod hook_consent;
mod inline;
mod inline_provider;
mod mcp;
mod permission;
mod plan_review;
mod review;
mod send_review;
pub mod position;
pub mod runs;
mod server;
mod transport;
mod undo;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

pub use commands::{ASK_COMMAND, CANCEL_COMMAND};
pub use server::Backend;

use tokio::io::{AsyncRead, AsyncWrite};
use std::sync::Arc;

use tower_lsp_server::{LspService, Server};

/// Handlers that may run at once. The default (4) is easy to fill: a
/// `tandem.ask` waits for its whole run, and `didChange`s must keep flowing
/// while it does.
const CONCURRENCY: usize = 32;

/// Serve LSP over stdin/stdout until the client exits.
///
/// Stdin is read on a plain thread, not through `tokio::io::stdin`: after
/// `exit` the guard still has a read outstanding, and a read parked in
/// tokio's blocking pool would keep the runtime (and the process) alive
/// until the client closes the pipe, which many clients never do.
///
/// Returns whether the session ended cleanly: `exit` after `shutdown`. The
/// process then exits with 0, else with 1 (as the spec asks for `exit`
/// without `shutdown`, and for an editor that went away).
pub async fn serve_stdio() -> anyhow::Result<bool> {
    use std::io::Read as _;
    use tokio::io::AsyncWriteExt as _;
    let (mut writer, reader) = tokio::io::duplex(64 * 1024);
    let (chunks_tx, mut chunks_rx) = tokio::sync::mpsc::channel::<Vec<u8>>(16);
    std::thread::Builder::new().name("tandem-stdin".into()).spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = vec![0; 64 * 1024];
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if chunks_tx.blocking_send(buffer[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    })?;
    tokio::spawn(async move {
        while let Some(chunk) = chunks_rx.recv().await {
            if writer.write_all(&chunk).await.is_err() {
                break;
            }
        }
    });
    Ok(serve(reader, frame_writer()?).await)
}

/// Standard output without the line buffering of `std::io::stdout`, which
/// `tokio::io::stdout` writes through: that sends a frame's header line
/// with one `write` and its body, which has no newline, with another when
/// flushed, so an editor can read a header alone and the body later. Emacs
/// 28's jsonrpc, reading while eglot's "Proceed?" shows, put such a late
/// body ahead of its header and never found a message start again. Here
/// each frame goes in one `write` (the guard writes a whole frame, then
/// flushes). A duplicate of the descriptor, closed on exec like every
/// descriptor Tandem opens.
fn frame_writer() -> std::io::Result<tokio::fs::File> {
    Ok(tokio::fs::File::from_std(crate::platform::stdout_file()?))
}

/// Serve LSP over any byte streams (stdio, or an in-process pipe for the
/// demo), behind the guard that keeps garbage from ending the session.
/// When the client goes away (end of input, `exit`, output closed) every
/// run is cancelled at once. Returns whether `shutdown` came before the end.
pub async fn serve<I, O>(input: I, output: O) -> bool
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let lifecycle = Arc::new(Lifecycle::default());
    let gone = lifecycle.client_gone.clone();
    let for_backend = Arc::clone(&lifecycle);
    let order = Arc::clone(&lifecycle.sync_order);
    transport::serve_guarded(input, output, gone, order, |input, output| async move {
        let (service, socket) = LspService::build(move |client| Backend::new(client).with_lifecycle(for_backend))
            .custom_method("window/workDoneProgress/cancel", Backend::work_done_progress_cancel)
            .custom_method("textDocument/inlineCompletion", Backend::inline_completion)
            .finish();
        Server::new(input, output, socket).concurrency_level(CONCURRENCY).serve(service).await;
    })
    .await;
    lifecycle.shutdown_requested.load(std::sync::atomic::Ordering::SeqCst)
}

/// What the transport and the handlers share about the session's end.
#[derive(Debug, Default)]
pub struct Lifecycle {
    /// Fired when the client is gone (or said `exit`): runs stop.
    pub client_gone: tokio_util::sync::CancellationToken,
    /// `shutdown` was received.
    pub shutdown_requested: std::sync::atomic::AtomicBool,
    /// The document-sync notifications the transport passed on, for the
    /// documents to catch up with after an answer.
    pub sync_order: Arc<transport::SyncOrder>,
}
