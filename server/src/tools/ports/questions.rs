//! A run's questions in its event stream: before the user is asked
//! anything about a run (a call's permission, an edit's review, a plan),
//! the question goes into the run's events as a
//! [`crate::protocol::RunEvent::Question`], and the asking waits until the
//! front end has reached it there. So a question never overtakes the
//! events before it (the `tool_call` it is about), whatever the front end's
//! forwarder is still sending. The loop sets the run's [`QuestionTurn`]
//! (`RunScope::questions`) from the run's own event sender, a sub-agent's
//! from its own, whose events reach the parent's stream nested.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::protocol::QuestionKind;

/// Puts a question in the run's event stream; the future resolves once the
/// front end reached it (or the stream is gone).
#[derive(Clone)]
pub struct QuestionTurn(Arc<dyn Fn(QuestionKind) -> BoxFuture<'static, ()> + Send + Sync>);

impl QuestionTurn {
    pub fn new(put: impl Fn(QuestionKind) -> BoxFuture<'static, ()> + Send + Sync + 'static) -> Self {
        QuestionTurn(Arc::new(put))
    }

    /// Put the question in the stream and wait for its turn.
    pub async fn wait(&self, kind: QuestionKind) {
        (self.0)(kind).await
    }
}

impl std::fmt::Debug for QuestionTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QuestionTurn")
    }
}
