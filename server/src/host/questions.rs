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

    /// The gate put a refused host's question in the stream itself.
    async fn ask_host(&self, request: &PermissionRequest, host: &str, question: &str) -> crate::tools::ports::network::HostAnswer {
        self.0.ask_host(request, host, question).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::agent::event_channel;
    use crate::protocol::RunEvent;
    use crate::tools::ToolKind;

    /// Says whether it was asked.
    #[derive(Default)]
    struct Asked(AtomicBool);

    #[async_trait]
    impl Prompter for Asked {
        async fn ask(&self, _request: &PermissionRequest, _question: &str, _offers: Offers) -> Answer {
            self.0.store(true, Ordering::SeqCst);
            Answer::AllowOnce
        }
        async fn review(&self, _request: &PermissionRequest, _path: &Path) -> Review {
            self.0.store(true, Ordering::SeqCst);
            Review::Apply
        }
    }

    fn shell_request(questions: Option<crate::tools::ports::questions::QuestionTurn>) -> PermissionRequest {
        PermissionRequest {
            tool: "run_shell".into(),
            kind: ToolKind::Execute { command: "make".into() },
            read_only: false,
            summary: "make".into(),
            preview: None,
            input: serde_json::json!({}),
            accept_edits: false,
            run: None,
            grants: Arc::default(),
            hook: Default::default(),
            questions,
        }
    }

    /// The front end's prompter asks about a run's call only once the
    /// call's question was reached in the run's events, and the question
    /// says what is asked.
    #[tokio::test]
    async fn the_prompter_asks_once_the_question_is_reached_in_the_stream() {
        let asked = Arc::new(Asked::default());
        let prompter = Arc::new(InTurn(Arc::clone(&asked) as Arc<dyn Prompter>));
        let (events, mut rx) = event_channel();
        let turns = events.question_turns();
        let request = shell_request(Some(events.question_turn()));
        let asking = tokio::spawn({
            let prompter = Arc::clone(&prompter);
            async move { prompter.ask(&request, "Tandem wants to run make", Offers::default()).await }
        });
        let question = rx.recv().await.expect("the question");
        let RunEvent::Question { kind: QuestionKind::Permission { tool, question: text, .. }, .. } = &question else { panic!("{question:?}") };
        assert_eq!((tool.as_str(), text.as_str()), ("run_shell", "Tandem wants to run make"));
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(!asked.0.load(Ordering::SeqCst), "asked before the question was reached");
        assert!(turns.reached(&question));
        assert_eq!(asking.await.unwrap(), Answer::AllowOnce);
        assert!(asked.0.load(Ordering::SeqCst));
        // Outside a run's stream (an undo's review), it asks at once.
        let reviewed = prompter.review(&shell_request(None), Path::new("/w/a")).await;
        assert_eq!(reviewed, Review::Apply);
    }
}
