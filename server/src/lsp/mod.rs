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
//! - `runs`: `tandem.ask` / `tandem.cancel`, run events, work-done progress;
//! - `code_actions`: agent actions on selections and diagnostics;
//! - `config`: `initializationOptions` and `workspace/configuration`;
//! - `client`: requests to the editor with timeouts, behind a trait;
//! - `server`: the `LanguageServer` handlers that tie these together.

pub mod client;
mod code_actions;
pub mod config;
pub mod documents;
pub mod editor;
pub mod edits;
mod permission;
pub mod position;
pub mod runs;
mod server;
#[cfg(test)]
mod tests;

pub use server::{Backend, ASK_COMMAND, CANCEL_COMMAND};

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::{LspService, Server};

/// Handlers that may run at once. The default (4) is easy to fill: a
/// `tandem.ask` waits for its whole run, and `didChange`s must keep flowing
/// while it does.
const CONCURRENCY: usize = 32;

/// Serve LSP over stdin/stdout until the client exits.
pub async fn serve_stdio() -> anyhow::Result<()> {
    serve(tokio::io::stdin(), tokio::io::stdout()).await;
    Ok(())
}

/// Serve LSP over any byte streams (stdio, or an in-process pipe for the demo).
pub async fn serve<I, O>(input: I, output: O)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let (service, socket) = LspService::build(Backend::new)
        .custom_method("window/workDoneProgress/cancel", Backend::work_done_progress_cancel)
        .finish();
    Server::new(input, output, socket).concurrency_level(CONCURRENCY).serve(service).await;
}
