//! The channel of a run's events (the events themselves are
//! [`crate::protocol::RunEvent`]): one stream for the terminal printer,
//! `tandem ask --json` and the editor's `tandem/runEvent`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::protocol::ChangedFile;
use crate::sync::MutexExt;
use crate::tools::ports::tasks::TaskNews;

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

/// The sending end of a run's events. It counts what it has sent, so that a
/// front end can wait until every event sent so far has gone out before it
/// asks the user something about them (see `lsp::outbox::RunOutbox`).
#[derive(Debug, Clone)]
pub struct EventSender {
    tx: mpsc::UnboundedSender<RunEvent>,
    sent: Arc<AtomicU64>,
    /// What the run's calls did to files, as the events sent said it: the
    /// run's end lists them ([`EventSender::changed_files`]).
    changed: Arc<Mutex<Vec<ChangedFile>>>,
}

/// A channel for one run's events.
pub fn event_channel() -> (EventSender, mpsc::UnboundedReceiver<RunEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (EventSender { tx, sent: Arc::default(), changed: Arc::default() }, rx)
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
        WeakEventSender { tx: self.tx.downgrade(), sent: Arc::clone(&self.sent), changed: Arc::clone(&self.changed) }
    }

    /// How many events were sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }
}

/// See [`EventSender::downgrade`].
#[derive(Debug, Clone)]
pub struct WeakEventSender {
    tx: mpsc::WeakUnboundedSender<RunEvent>,
    sent: Arc<AtomicU64>,
    changed: Arc<Mutex<Vec<ChangedFile>>>,
}

impl WeakEventSender {
    /// The sender again, while the run's stream is open.
    pub fn upgrade(&self) -> Option<EventSender> {
        Some(EventSender { tx: self.tx.upgrade()?, sent: Arc::clone(&self.sent), changed: Arc::clone(&self.changed) })
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
}
