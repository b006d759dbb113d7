//! The channel of a run's events (the events themselves are
//! [`crate::protocol::RunEvent`]): one stream for the terminal printer,
//! `tandem ask --json` and the editor's `tandem/runEvent`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot, watch};

use crate::protocol::{ChangedFile, QuestionKind};
use crate::sync::MutexExt;
use crate::tools::ports::questions::QuestionTurn;
use crate::tools::ports::tasks::TaskNews;
use crate::workspace::EditTurn;

pub use crate::protocol::{RunEvent, RunStatus, Usage};

/// A task's start or end as the run's event.
pub fn task_event(news: &TaskNews) -> RunEvent {
    match news {
        TaskNews::Started(task) => RunEvent::TaskStarted { task_id: task.id.clone(), command: task.command.clone() },
        TaskNews::Ended(ending) => RunEvent::TaskEnded {
            task_id: ending.task.id.clone(),
            command: ending.task.command.clone(),
            status: ending.task.status,
            exit_code: ending.task.exit_code,
            last_lines: ending.last_lines.clone(),
        },
    }
}

/// The sending end of a run's events. It counts what it has sent, so that
/// the editor sink can wait until the front end has passed on every event
/// sent so far before it writes to the user's buffer
/// ([`EventSender::caught_up`]); a question to the user goes into the
/// stream itself ([`EventSender::question`]).
#[derive(Debug, Clone)]
pub struct EventSender {
    tx: mpsc::UnboundedSender<RunEvent>,
    sent: Arc<AtomicU64>,
    /// What the run's calls did to files, as the events sent said it: the
    /// run's end lists them ([`EventSender::changed_files`]).
    changed: Arc<Mutex<Vec<ChangedFile>>>,
    /// The run's questions waiting for their front end to reach them.
    questions: QuestionTurns,
}

/// The questions of a run's stream ([`RunEvent::Question`]) waiting for
/// their turn: the asking goes on once the front end has reached the
/// question in the stream ([`QuestionTurns::reached`]). A run and its
/// sub-agents share them: a sub-agent's events reach the same stream, nested.
///
/// The front end tells every event it passes on, questions or not, so the
/// turns also know how far it got: an edit to the user's buffer waits
/// behind the events sent before it ([`EventSender::caught_up`]).
#[derive(Debug, Clone)]
pub struct QuestionTurns {
    waiting: Arc<Mutex<Waiting>>,
    /// How many events the run's own stream (the root's, where a
    /// sub-agent's come nested) was sent.
    sent: Arc<AtomicU64>,
    /// How many of them the front end has passed on.
    passed: Arc<watch::Sender<u64>>,
}

impl Default for QuestionTurns {
    fn default() -> Self {
        QuestionTurns { waiting: Arc::default(), sent: Arc::default(), passed: Arc::new(watch::channel(0).0) }
    }
}

#[derive(Debug, Default)]
struct Waiting {
    /// The last question's number: ids are unique in the run.
    last: u64,
    turns: HashMap<String, oneshot::Sender<()>>,
}

impl QuestionTurns {
    /// The front end reached `event` in the stream (every event before it
    /// has gone out): a question's asking goes on. True when it is a
    /// question, which the front end answers and does not show. Told for
    /// every event, in order: it counts them for [`EventSender::caught_up`].
    pub fn reached(&self, event: &RunEvent) -> bool {
        self.passed.send_modify(|n| *n += 1);
        let RunEvent::Question { id, .. } = event.unnest().0 else { return false };
        if let Some(turn) = self.waiting.locked().turns.remove(id) {
            let _ = turn.send(());
        }
        true
    }
}

/// A channel for one run's events.
pub fn event_channel() -> (EventSender, mpsc::UnboundedReceiver<RunEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let questions = QuestionTurns::default();
    (EventSender { tx, sent: Arc::clone(&questions.sent), changed: Arc::default(), questions }, rx)
}

impl EventSender {
    /// Send one event; false when nobody listens any more.
    pub fn send(&self, event: RunEvent) -> bool {
        self.note_effects(&event);
        self.sent.fetch_add(1, Ordering::SeqCst);
        self.tx.send(event).is_ok()
    }

    /// Keep what `event` says a call did to files (a sub-agent's calls
    /// too: their events come nested): a result's effects in order, a
    /// later change in the place of the call's effect on that file.
    fn note_effects(&self, event: &RunEvent) {
        match event.unnest().0 {
            RunEvent::ToolResult { id, effects, .. } if !effects.is_empty() => {
                let mut changed = self.changed.locked();
                changed.extend(effects.iter().map(|effect| ChangedFile { call_id: id.clone(), effect: effect.clone() }));
            }
            RunEvent::EffectChanged { call_id, effect } => {
                let mut changed = self.changed.locked();
                match changed.iter_mut().rev().find(|c| c.call_id == *call_id && c.effect.path == effect.path) {
                    Some(entry) => entry.effect = effect.clone(),
                    None => changed.push(ChangedFile { call_id: call_id.clone(), effect: effect.clone() }),
                }
            }
            _ => {}
        }
    }

    /// What the run's calls did to files so far, in order (see
    /// [`RunEvent::End`]'s `effects`).
    pub fn changed_files(&self) -> Vec<ChangedFile> {
        self.changed.locked().clone()
    }

    /// A handle that does not keep the channel open: the stream ends when
    /// the run's own senders are gone, whoever still holds this.
    pub fn downgrade(&self) -> WeakEventSender {
        WeakEventSender { tx: self.tx.downgrade(), sent: Arc::clone(&self.sent), changed: Arc::clone(&self.changed), questions: self.questions.clone() }
    }

    /// A sub-agent's channel: its own events, and the questions of this
    /// stream (its events come here nested, so the front end that reaches
    /// its question reaches it in this stream).
    pub fn child_channel(&self) -> (EventSender, mpsc::UnboundedReceiver<RunEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (EventSender { tx, sent: Arc::default(), changed: Arc::default(), questions: self.questions.clone() }, rx)
    }

    /// What the front end's forwarder tells when it reaches an event.
    pub fn question_turns(&self) -> QuestionTurns {
        self.questions.clone()
    }

    /// Send a [`RunEvent::Question`] and wait until the front end has
    /// reached it (or nobody reads the stream any more).
    pub async fn question(&self, kind: QuestionKind) {
        let (turn, reached) = oneshot::channel();
        let id = {
            let mut waiting = self.questions.waiting.locked();
            waiting.last += 1;
            let id = format!("q{}", waiting.last);
            waiting.turns.insert(id.clone(), turn);
            id
        };
        if self.send(RunEvent::Question { id: id.clone(), kind }) {
            tokio::select! {
                _ = reached => {}
                () = self.tx.closed() => {}
            }
        }
        self.questions.waiting.locked().turns.remove(&id);
    }

    /// The run's [`QuestionTurn`] (for `RunScope::questions`): questions in
    /// this stream, without keeping it open.
    pub fn question_turn(&self) -> QuestionTurn {
        let events = self.downgrade();
        QuestionTurn::new(move |kind| {
            let events = events.upgrade();
            Box::pin(async move {
                if let Some(events) = events {
                    events.question(kind).await;
                }
            })
        })
    }

    /// Wait until the front end has passed on every event the run's stream
    /// was sent so far (or nobody reads it any more): an edit sent to the
    /// user's buffer now never overtakes the call's event before it. For a
    /// front end that reaches the stream's events in order
    /// ([`QuestionTurns::reached`]); a sub-agent waits for its run's stream.
    pub async fn caught_up(&self) {
        let target = self.questions.sent.load(Ordering::SeqCst);
        let mut passed = self.questions.passed.subscribe();
        tokio::select! {
            _ = passed.wait_for(|n| *n >= target) => {}
            () = self.tx.closed() => {}
        }
    }

    /// [`EventSender::caught_up`] as the workspace's [`EditTurn`], without
    /// keeping the stream open.
    pub fn edit_turn(&self) -> EditTurn {
        let events = self.downgrade();
        EditTurn(Arc::new(move || {
            let events = events.upgrade();
            Box::pin(async move {
                if let Some(events) = events {
                    events.caught_up().await;
                }
            })
        }))
    }
}

/// See [`EventSender::downgrade`].
#[derive(Debug, Clone)]
pub struct WeakEventSender {
    tx: mpsc::WeakUnboundedSender<RunEvent>,
    sent: Arc<AtomicU64>,
    changed: Arc<Mutex<Vec<ChangedFile>>>,
    questions: QuestionTurns,
}

impl WeakEventSender {
    /// The sender again, while the run's stream is open.
    pub fn upgrade(&self) -> Option<EventSender> {
        Some(EventSender { tx: self.tx.upgrade()?, sent: Arc::clone(&self.sent), changed: Arc::clone(&self.changed), questions: self.questions.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{EditStatus, FileEffect};

    /// The run's end lists what its calls did to files from the events
    /// alone: a result's effects in order (a sub-agent's nested ones too),
    /// and a late change in the place of the effect it changes.
    #[test]
    fn the_changed_files_are_the_results_effects_with_their_late_changes() {
        let (events, _rx) = event_channel();
        let effect = |path: &str, status| FileEffect::new(path.into(), status);
        let result = |id: &str, effects| RunEvent::ToolResult { id: id.into(), is_error: false, content: String::new(), effects, edit: None };
        events.send(result("toolu_1", vec![effect("/w/a", EditStatus::Unknown), effect("/w/b", EditStatus::Written)]));
        events.send(RunEvent::Nested { parent: "toolu_2".into(), event: Box::new(result("toolu_3", vec![effect("/w/c", EditStatus::Rejected)])) });
        events.send(RunEvent::EffectChanged { call_id: "toolu_1".into(), effect: effect("/w/a", EditStatus::Applied) });
        events.send(RunEvent::EffectChanged { call_id: "toolu_4".into(), effect: effect("/w/d", EditStatus::Unknown) });
        let listed: Vec<(String, String, EditStatus)> =
            events.changed_files().into_iter().map(|c| (c.call_id, c.effect.path.display().to_string(), c.effect.status)).collect();
        let expected = [("toolu_1", "/w/a", EditStatus::Applied), ("toolu_1", "/w/b", EditStatus::Written), ("toolu_3", "/w/c", EditStatus::Rejected), ("toolu_4", "/w/d", EditStatus::Unknown)];
        assert_eq!(listed, expected.map(|(c, p, s)| (c.to_string(), p.to_string(), s)));
    }

    /// A question goes into the stream behind the events sent before it,
    /// and its asking waits until the front end reached it there; a
    /// sub-agent's question, nested in the parent's stream, is reached
    /// through the parent's turns.
    #[tokio::test]
    async fn a_question_waits_until_the_front_end_reaches_it_in_the_stream() {
        let (events, mut rx) = event_channel();
        let turns = events.question_turns();
        events.send(RunEvent::Text { text: "before".into() });
        let (child, mut child_rx) = events.child_channel();
        let asking = tokio::spawn(async move { child.question(QuestionKind::Plan).await });
        let question = child_rx.recv().await.expect("the child's question");
        // The sub-agent's events reach the parent's stream nested.
        events.send(RunEvent::Nested { parent: "toolu_1".into(), event: Box::new(question) });
        let first = rx.recv().await.unwrap();
        assert!(!turns.reached(&first), "text is no question");
        let second = rx.recv().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(!asking.is_finished(), "asked before the front end reached the question");
        assert!(turns.reached(&second));
        tokio::time::timeout(std::time::Duration::from_secs(5), asking).await.expect("asked once reached").unwrap();
    }

    /// Nobody reads the stream any more: the question does not wait for ever.
    #[tokio::test]
    async fn a_question_in_a_stream_nobody_reads_does_not_wait() {
        let (events, rx) = event_channel();
        drop(rx);
        tokio::time::timeout(std::time::Duration::from_secs(5), events.question(QuestionKind::Plan)).await.expect("no wait");
    }
}
