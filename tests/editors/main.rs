//! Tandem in real editors, one binary (each file a module): headless Neovim
//! 0.11 and 0.12 driving the plugin, Emacs with eglot and Kakoune with
//! kak-lsp in tmux, and the packaged VS Code extension in code-server;
//! inline completions in Neovim 0.12 from a mock and a real local model. Each
//! test skips with a message when its editor is missing, and fails instead
//! under the `TANDEM_REQUIRE_*` variables `.ci/run` sets.
//!
//! The binary has its own harness (libtest-mimic: the same arguments and
//! output as `cargo test`'s), for two things the built-in one cannot do:
//! run more tests at once than the machine has cores — a real editor test
//! spends most of its time waiting on the editor (a code-server script
//! uses about a third of a core) — and start the longest first, so the
//! short ones fill in at the end. Each module lists its tests in
//! `trials()`; a test function missing from that list is dead code, which
//! the modules deny, and `tests/layers.rs` refuses a `#[test]` here (this
//! harness would never run it).

use std::process::ExitCode;

#[path = "../common/mod.rs"]
mod common;

#[deny(dead_code)]
mod emacs;
#[deny(dead_code)]
mod inline;
#[deny(dead_code)]
mod kakoune;
#[deny(dead_code)]
mod nvim;
#[deny(dead_code)]
mod vscode;

/// Tests run at once unless `--test-threads` or `RUST_TEST_THREADS` says
/// otherwise (`vscode::AT_ONCE` bounds the code-servers among them). On 2
/// cores four keep both busy: five took longer (264.9 s against 244.6 s for
/// the binary, back to back on a quiet machine).
const THREADS: usize = 4;

/// `module: test, test, …` as trials named `module::test`, as the built-in
/// harness names them (filters and `--exact` work the same).
#[macro_export]
macro_rules! trials {
    ($module:literal: $($name:ident),* $(,)?) => {
        vec![$(libtest_mimic::Trial::test(concat!($module, "::", stringify!($name)), || {
            let started = std::time::Instant::now();
            $name();
            // Each test's wall time, for ordering the trials (longest first).
            eprintln!("[editors] {}::{} took {:.1} s", $module, stringify!($name), started.elapsed().as_secs_f64());
            Ok(())
        })),*]
    };
}

fn main() -> ExitCode {
    let mut args = libtest_mimic::Arguments::from_args();
    if args.test_threads.is_none() {
        args.test_threads = Some(std::env::var("RUST_TEST_THREADS").ok().and_then(|n| n.parse().ok()).unwrap_or(THREADS));
    }
    // The code-server scripts take 20–100 s each, the rest mostly a few
    // seconds: they start first, longest first (each module's list is in
    // that order), and the short tests fill the threads they free.
    let mut trials = vscode::trials();
    for more in [nvim::trials(), inline::trials(), emacs::trials(), kakoune::trials()] {
        trials.extend(more);
    }
    let conclusion = libtest_mimic::run(&args, trials);
    // What was skipped, together at the end: a passing run that skipped an
    // editor has not shown that editor working.
    let skipped = common::tools::skipped_so_far();
    if !skipped.is_empty() {
        eprintln!("\n[editors] skipped ({}), each for a tool that is missing here:", skipped.len());
        for what in &skipped {
            eprintln!("  {what}");
        }
    }
    conclusion.exit_code()
}
