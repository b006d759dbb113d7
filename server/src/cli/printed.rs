//! The print loop's turn: a question asked while a run prints waits
//! until the events sent before it are printed. Its own file so that
//! `ask.rs` (which runs the print loop) and `plan_review.rs` (which asks)
//! both read it without importing each other.

use tandem::sync::MutexExt;
use tokio::sync::mpsc;

/// The print loop of the run being printed, for a question to wait on
/// (see [`printed_so_far`]). One run prints at a time in this process.
static PRINTING: std::sync::Mutex<Option<mpsc::UnboundedSender<tokio::sync::oneshot::Sender<()>>>> = std::sync::Mutex::new(None);

pub(super) fn printing() -> std::sync::MutexGuard<'static, Option<mpsc::UnboundedSender<tokio::sync::oneshot::Sender<()>>>> {
    PRINTING.locked()
}

/// Wait until the events the run sent so far are printed, so a question
/// comes after the tool results and text before it. The run and its print
/// loop share one task: without this, a question printed from a blocking
/// thread could overtake the events still in the channel (seen: a shell
/// question printed before the previous edit's result). Returns at once
/// when no run is being printed.
pub async fn printed_so_far() {
    let (ack, done) = tokio::sync::oneshot::channel();
    let sent = printing().as_ref().is_some_and(|loop_| loop_.send(ack).is_ok());
    if sent {
        let _ = done.await;
    }
}
