//! The names of the `tandem.*` commands the server answers (those that
//! belong to one handler's file stay there: `undo`, `mcp`, `inline`,
//! `review`, `findings`). A leaf: `server.rs` dispatches on them and
//! `code_actions.rs` names `tandem.ask` in its actions, without one of
//! them importing the other.

pub const ASK_COMMAND: &str = "tandem.ask";
pub const CANCEL_COMMAND: &str = "tandem.cancel";
pub const THREADS_COMMAND: &str = "tandem.threads";
pub const FORGET_COMMAND: &str = "tandem.forget";
pub const COMPACT_COMMAND: &str = "tandem.compact";
pub const TRANSCRIPT_COMMAND: &str = "tandem.transcript";
/// Trust the workspace's own settings files as they are now (the editor's
/// "Trust Workspace"): answers `{"trusted": root, "applied": [...],
/// "restart": bool}` — `restart`: project MCP or language servers start
/// only in a new session (the plugin restarts the server).
pub const TRUST_COMMAND: &str = "tandem.trust";
/// The model endpoint runs would talk to now, and why (`host::endpoint`):
/// `{"provider", "model", "base_url"?, "reason"}`, or `{"error"}`.
pub const PROVIDER_COMMAND: &str = "tandem.provider";
/// The session's background tasks (`run_shell` with `background`), each as
/// `task_list` knows it: `{"tasks": [{"id", "command", "status", …}]}`.
pub const TASKS_COMMAND: &str = "tandem.tasks";
/// Stop one at the user's word, `[{"taskId"}]`: `{"task": {…}}` once it has
/// ended; the model is told in its next request.
pub const STOP_TASK_COMMAND: &str = "tandem.stopTask";
/// "Send review to agent": the user's comments on a run's changes start
/// the thread's next turn (`send_review`), as `tandem.ask` answers.
pub const SEND_REVIEW_COMMAND: &str = "tandem.sendReview";
