//! What each call of a run did to files, recorded where it happens: the
//! workspace's writes (to the disk or through the editor, whatever their
//! outcome), the files a shell command changed, a refusal because the file
//! changed since it was read. Kept under the call's run and id until the
//! executor takes them for the call's result ([`super::Workspace::for_call`]).

use std::sync::{Arc, Mutex};

use crate::protocol::FileEffect;
use crate::sync::MutexExt;

/// Effects kept at most; the oldest go first. The executor takes each
/// call's when it ends, so only calls still running hold any.
pub(super) const MAX_EFFECTS: usize = 4096;

struct Entry {
    run: Option<Arc<str>>,
    call: Arc<str>,
    effect: FileEffect,
}

/// Shared by every view of a workspace.
#[derive(Default)]
pub(super) struct EffectLog {
    entries: Mutex<Vec<Entry>>,
}

impl EffectLog {
    pub(super) fn record(&self, run: Option<Arc<str>>, call: Arc<str>, effects: impl IntoIterator<Item = FileEffect>) {
        let mut entries = self.entries.locked();
        entries.extend(effects.into_iter().map(|effect| Entry { run: run.clone(), call: Arc::clone(&call), effect }));
        let over = entries.len().saturating_sub(MAX_EFFECTS);
        if over > 0 {
            entries.drain(..over);
        }
    }

    /// The effects of `call` of `run`, in order, taken.
    pub(super) fn take(&self, run: Option<&str>, call: &str) -> Vec<FileEffect> {
        let mut entries = self.entries.locked();
        let (mine, others): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut *entries).into_iter().partition(|e| e.run.as_deref() == run && &*e.call == call);
        *entries = others;
        mine.into_iter().map(|e| e.effect).collect()
    }
}
