//! The run as every front end sees it: the events of a run, how it ended,
//! what each call does, the todo list and the background tasks, what became
//! of each edit, a review's findings, and the `tandem.ask` answer. Plain data with its JSON
//! shape, the contract of docs/protocol.md: fields may be added, never
//! renamed.
//!
//! *Architecture Invariant:* a leaf. It imports nothing from the crate, so
//! it can become a crate of its own, and the editor plugins' types are
//! generated from it: the JSON Schema of these types (`schemars`, from the
//! derives serde uses) gives `editors/vscode/src/protocol.generated.ts` and
//! `editors/nvim/lua/tandem/protocol.lua` (`tests/integration/protocol.rs`).

mod edits;
mod events;
mod review;
mod run;

pub use edits::{review_comments_note, AskAnswer, AskStarted, ChangedFile, EditStatus, FileEffect, HunkComment, HunkDecision, LineSpan, RunEdit, MAX_COMMENT_CHARS};
pub use events::{QuestionKind, RunEvent};
pub use review::{Finding, RelatedPlace, Severity};
pub use run::{RunStatus, TaskStatus, TodoItem, TodoStatus, ToolKind, Usage};
