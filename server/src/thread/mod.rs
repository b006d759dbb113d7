//! Threads: the conversations between the agent loop and its front ends
//! that outlive a run, saved as they go, kept inside the model's context
//! window, and priced. "Thread" is the one word for a conversation, in
//! the code and where users meet it (`tandem threads`, the threads
//! folder, `tandem.threads`); `tandem sessions` stays as an alias, and an
//! ACP client calls a thread a session (`session/*`: the protocol's word).
//!
//! - [`Thread`]: one thread — its history, fixed system prompt, read
//!   ledger, activated tools and token totals — which the loop
//!   ([`crate::agent::run_thread`]) continues.
//! - [`store`]: each thread as JSON Lines under
//!   `$XDG_DATA_HOME/tandem/threads/<workspace-hash>/<thread>.jsonl`,
//!   append-only, flushed at each turn's end.
//! - [`context`]: context windows, stubbing old tool results, compaction.
//! - [`pricing`]: the price table and cost estimates.
//! - [`loops`]: the loop detector (the same call and result, or the same
//!   text, again and again).
//! - [`threads`]: the threads of one editor connection, one run per thread.
//! - [`transcript`]: a thread's past as run events, for transcript views.

pub mod context;
mod history;
pub mod loops;
pub mod pricing;
pub mod store;
pub mod threads;
pub mod transcript;

pub use context::ContextConfig;
pub use history::{new_thread_id, valid_thread_id, Thread, Record, Totals};
pub use store::{ThreadStore, ThreadSummary};
