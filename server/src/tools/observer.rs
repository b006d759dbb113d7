//! Call observers: the executor's work around a permitted call that is
//! neither a gate nor the call itself, as a short list it runs for every
//! call instead of special cases in the pipeline. Each observer looks at
//! the call's [`ToolKind`] and [`Approval`], never at a tool's name:
//!
//! | observer | around |
//! |---|---|
//! | [`SaveForCommand`] | a shell command: the run's edits in editor buffers are saved first (before the checkpoint's look), the files it will not see named |
//! | [`CommandCheckpoint`] | an approved shell command: the run's checkpoint looks at the workspace before and after |
//! | [`EditDiagnostics`](crate::tools::builtin::code_intel::EditDiagnostics) | an edit to a file the code intelligence provider follows: its diagnostics after the edit; a read: the provider hears of it |
//!
//! Installed with [`Executor::with_observer`](super::Executor::with_observer)
//! (the code intelligence one by `builtin::code_intel::install`).

use async_trait::async_trait;

use super::{Approval, ToolContext, ToolKind};

/// A call the gates let through, as observers see it.
#[derive(Debug, Clone, Copy)]
pub struct ObservedCall<'a> {
    pub kind: &'a ToolKind,
    pub approval: Approval,
}

/// Something the executor runs around every permitted call, in the order
/// the observers were added.
#[async_trait]
pub trait CallObserver: Send + Sync {
    /// Just before the call runs (after every gate); `None` when this
    /// observer has nothing to do around it.
    async fn before(&self, call: ObservedCall<'_>, ctx: &ToolContext) -> Option<Box<dyn AfterCall>>;
}

/// What an observer does once the call it watched has ended.
#[async_trait]
pub trait AfterCall: Send {
    /// `succeeded`: the call answered a result, not an error. The text is
    /// appended to what the model reads (empty: nothing to add).
    async fn after(self: Box<Self>, ctx: &ToolContext, succeeded: bool) -> String;
}

/// A command reads the disk: the run's edits in editor buffers are saved
/// first where that loses nothing of the user's
/// ([`Workspace::save_for_command`](crate::workspace::Workspace::save_for_command)),
/// and the files it will not see are named in its result. Installed before
/// [`CommandCheckpoint`], so a save of the agent's own edit is no change of
/// the command's (it was listed as a second edit of the file).
pub struct SaveForCommand;

struct UnsavedNote(String);

#[async_trait]
impl CallObserver for SaveForCommand {
    async fn before(&self, call: ObservedCall<'_>, ctx: &ToolContext) -> Option<Box<dyn AfterCall>> {
        let ToolKind::Execute { .. } = call.kind else { return None };
        let note = ctx.workspace.save_for_command().await?;
        Some(Box::new(UnsavedNote(note)))
    }
}

#[async_trait]
impl AfterCall for UnsavedNote {
    async fn after(self: Box<Self>, _ctx: &ToolContext, _succeeded: bool) -> String {
        format!("\n{}", self.0)
    }
}

/// An approved shell command may change any file: the run's checkpoint
/// looks at the workspace before it starts and after it ends (here,
/// outside any sandbox), and what it wrote, created or deleted counts
/// among the run's changed files, marked as its doing. A command nobody
/// was asked about runs where it can write nothing of the workspace, so
/// it is not looked at.
pub struct CommandCheckpoint;

struct CommandLooked {
    recorder: std::sync::Arc<dyn crate::workspace::ChangeRecorder>,
    command: String,
}

#[async_trait]
impl CallObserver for CommandCheckpoint {
    async fn before(&self, call: ObservedCall<'_>, ctx: &ToolContext) -> Option<Box<dyn AfterCall>> {
        let ToolKind::Execute { command } = call.kind else { return None };
        if call.approval.shell_profile() == super::ShellProfile::Unasked {
            return None;
        }
        let recorder = ctx.workspace.recorder().cloned()?;
        recorder.before_command().await;
        Some(Box::new(CommandLooked { recorder, command: command.clone() }))
    }
}

#[async_trait]
impl AfterCall for CommandLooked {
    async fn after(self: Box<Self>, ctx: &ToolContext, _succeeded: bool) -> String {
        let changes = self.recorder.after_command().await;
        ctx.workspace.note_command_changes(&self.command, &changes);
        String::new()
    }
}
