//! The crate's integration tests, one binary (each file a module): the CLI,
//! the agent against a loopback model, `tandem lsp` and `tandem acp` over
//! stdio, the sandbox, threads, undo, MCP. One binary links the crate once
//! instead of once per file. The real editors are in `tests/editors/`, the
//! layer rules in `tests/layers.rs`; the shared kit is `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

mod acp;
mod agent_loop;
mod cli_ask;
mod cli_chat;
mod cli_tools;
mod code_intel;
mod edit_ladder_props;
mod edit_scenarios;
mod hooks_lsp;
mod inline_completion;
mod large_edits;
mod lsp;
mod mcp;
mod permissions;
mod plan_mode_lsp;
mod protected;
mod protocol;
mod reliability;
mod reliability_lsp;
mod sandbox;
mod search_shell;
mod sessions;
mod sessions_lsp;
mod tasks;
mod settings;
mod shell_walls;
mod tool_search;
mod tool_system;
mod trust;
mod trust_editors;
mod undo;
mod undo_lsp;
