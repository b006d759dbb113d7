//! Tandem in real editors, one binary (each file a module): headless Neovim
//! 0.11 and 0.12 driving the plugin, Emacs with eglot and Kakoune with
//! kak-lsp in tmux, and the packaged VS Code extension in code-server;
//! inline completions in Neovim 0.12 from a mock and a real local model. Each
//! test skips with a message when its editor is missing, and fails instead
//! under the `TANDEM_REQUIRE_*` variables `.ci/run` sets.

#[path = "../common/mod.rs"]
mod common;

mod emacs;
mod inline;
mod kakoune;
mod nvim;
mod vscode;
