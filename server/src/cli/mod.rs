//! The binary's own commands that drive the agent: `tandem ask`,
//! `tandem chat`, `tandem review` and `tandem demo`, and the terminal printer they share. (The library never
//! prints: stdout is the LSP channel in `tandem lsp`.)

pub mod ask;
pub mod chat;
pub mod choice;
pub mod demo;
pub mod doctor;
pub mod markdown;
pub mod mcp;
pub mod memory;
pub mod pager;
pub mod plan_review;
pub mod printed;
pub mod printer;
pub mod recap;
pub mod review;
pub mod terminal;
pub mod trust;
pub mod undo;
pub mod worktree;
