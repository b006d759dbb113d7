//! The front end's prompter behind the run's event stream: a question
//! about a call (its permission, its edit's review) first goes into the
//! call's run events as a `question` and waits until the front end has
//! reached it there, then the front end's prompter asks. The front ends
//! need no barrier of their own to keep a prompt behind the `tool_call`
//! it is about: the stream's order does it. A call outside a run's stream
//! (an undo's restoring edits, an attachment read) is asked at once.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;

use crate::permissions::{Answer, Offers, Prompter, Review};
use crate::protocol::QuestionKind;
use crate::tools::PermissionRequest;

/// See the module's doc.
pub(super) struct InTurn(pub(super) Arc<dyn Prompter>);

#[async_trait]
impl Prompter for InTurn {
    async fn ask(&self, request: &PermissionRequest, question: &str, offers: Offers) -> Answer {
        if let Some(turn) = &request.questions {
            let kind = QuestionKind::Permission { tool: request.tool.clone(), kind: request.kind.clone(), question: question.to_string() };
            turn.wait(kind).await;
        }
        self.0.ask(request, question, offers).await
    }

    async fn review(&self, request: &PermissionRequest, path: &Path) -> Review {
        if let Some(turn) = &request.questions {
            turn.wait(QuestionKind::Review { path: path.to_path_buf() }).await;
        }
        self.0.review(request, path).await
    }

    async fn not_saved(&self, problem: &str) {
        self.0.not_saved(problem).await
    }
}
