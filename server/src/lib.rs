//! # Tandem
//!
//! A coding agent that lives inside the editor. Tandem is a language server:
//! the editor starts `tandem lsp`, the user invokes "Ask agent", and the
//! agent reads, searches, edits and runs commands through a tool system.
//! Its edits reach the editor as `workspace/applyEdit` WorkspaceEdits the
//! user can review and undo. The same agent runs headless (`tandem ask`).
//!
//! ## Bird's-eye view
//!
//! ```text
//! editor ──LSP/stdio──▶ lsp/        documents (ropey, versions), tandem.ask, applyEdit
//!                         │           bridge, permission prompts, code actions
//!                         ▼
//!                      agent/       the loop: provider (Anthropic | OpenAI | scripted)
//!                         │           → stream → tool calls → executor → results
//!                         ▼
//!                      tools/       Tool contract, registry, executor pipeline,
//!                         │           one file per tool, result capping
//!                         ▼
//!                      workspace/   open buffers overlaid on disk, the read ledger,
//!                                     path confinement, editor and disk edit sinks
//! ```
//!
//! ## Code map
//!
//! - [`workspace`]: what the agent sees. [`workspace::Workspace::read`] returns
//!   an open buffer's text if the editor has the file open, else the disk;
//!   [`workspace::Workspace::write`] routes a change to the editor sink
//!   ([`workspace::Editor`]) or the disk sink (atomic write after a
//!   fingerprint check). Tools never know which one they talk to.
//! - [`tools`]: the [`tools::Tool`] contract, the registry, and the
//!   [`tools::Executor`] whose gates every call passes: find → validate →
//!   the tool's own checks → permission → run → cap.
//! - [`agent`]: providers, the streaming loop, run events.
//! - [`lsp`]: the only module that imports LSP types.
//!
//! ## Invariants
//!
//! 1. **No unsaved user edit is ever lost or overwritten.** A file open in
//!    the editor is never written to disk by Tandem; it changes only through
//!    `workspace/applyEdit` with a `TextDocumentEdit` carrying the version the
//!    agent last read.
//! 2. **The server checks versions itself; editors do not protect us.** The
//!    current version must equal the read ledger's before an edit is sent,
//!    and after `applied: true` the following `didChange` must show the
//!    expected text (Neovim says `applied: true` for a skipped stale edit).
//! 3. **Read before edit.** Editing or overwriting a file not read in this
//!    run is refused; a closed file's read stamp is a content fingerprint,
//!    and the file watcher marks entries stale early.
//! 4. **Tools see what the user sees.** `read_file` and `grep_search` read an
//!    open document's buffer, unsaved changes included.
//! 5. **Ordered document sync.** `didOpen`/`didChange`/`didClose` are
//!    applied before any `.await`.
//! 6. **Paths are confined** to the workspace roots after resolving `..` and
//!    symlinks.
//! 7. **Long work never blocks the protocol.** A run is a spawned task;
//!    requests to the client have timeouts and honour cancellation.
//! 8. **No network in tests.** Model APIs are loopback mocks speaking the
//!    real wire format.
//!
//! Deliberately absent: tools never write to disk directly (only through
//! [`workspace::Workspace::write`]); nothing prints to stdout in the library
//! (stdout is the LSP channel).

pub mod agent;
pub mod lsp;
pub mod tools;
pub mod workspace;
