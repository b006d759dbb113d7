//! The crate's integration tests, one binary (each file a module): the CLI,
//! the agent against a loopback model, `tandem lsp` and `tandem acp` over
//! stdio, the sandbox, threads, undo, MCP. One binary links the crate once
//! instead of once per file. The real editors are in `tests/editors/`, the
//! layer rules in `tests/layers.rs`; the shared kit is `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

/// Four tests at once unless `--test-threads` or `RUST_TEST_THREADS` says
/// otherwise: most of these tests wait on a child process (`tandem lsp`,
/// `tandem acp`, a sandboxed command, a loopback model), so on 2 cores the
/// binary took 36 s with four against 55 s with two (the default, one per
/// core; measured back to back, twice). The built-in harness reads the
/// variable when it starts, so it is set before `main` runs, from the
/// binary's initialisers; `--test-threads` still wins over it.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static FOUR_TESTS_AT_ONCE: extern "C" fn() = {
    extern "C" fn four_tests_at_once() {
        if std::env::var_os("RUST_TEST_THREADS").is_none() {
            // SAFETY: this runs before `main`, while the process has one thread.
            unsafe { std::env::set_var("RUST_TEST_THREADS", "4") };
        }
    }
    four_tests_at_once
};

mod acp;
mod asks;
mod agent_loop;
mod cli_ask;
mod cli_chat;
mod cli_doctor;
mod cli_tools;
mod code_intel;
mod edit_ladder_props;
mod edit_scenarios;
mod editor_layers;
mod hooks_lsp;
mod images;
mod instructions;
mod inline_completion;
mod large_edits;
mod lsp;
mod mcp;
mod mcp_content;
mod mcp_oauth;
mod network;
mod models;
mod permissions;
mod plan_mode_lsp;
mod protected;
mod protocol;
mod reliability;
mod reliability_lsp;
mod responses;
mod review;
mod review_comments;
mod review_lsp;
mod repository_files;
mod sandbox;
mod search_shell;
mod sessions;
mod sessions_lsp;
mod tasks;
mod terminal_escapes;
mod settings;
mod shell_walls;
mod tool_search;
mod tool_system;
mod trust;
mod trust_editors;
mod trust_reads;
mod undo;
mod worktree_cli;
mod undo_lsp;
