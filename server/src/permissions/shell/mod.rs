//! Shell commands judged by their structure, fail-closed.
//!
//! The command is parsed with `brush-parser` (a bash parser) and walked in
//! phases, one module each:
//! - [`walk`]: the syntax walk. Every simple command — in pipelines, lists,
//!   subshells, groups, `if`/`for`/`while`/`case`, `$(…)`, backticks and
//!   process substitutions — with its words after quote removal and, for
//!   each word, whether it is *static*: no expansion of any kind (parameter,
//!   command substitution, arithmetic, brace, glob, ANSI-C `$'…'`, tilde).
//!   Redirections, `cd` tracking and the structural concerns (`eval`, a
//!   function definition, `LD_PRELOAD=…`) are found here.
//! - [`commands`]: the command knowledge, as data.
//! - [`judge`]: one simple command against its entry: known read-only or not.
//! - [`wrappers`]: what a command runs (`env rm`, `sh -c 'rm f'`, `find
//!   -exec`, `find -delete` as `rm`), for deny rules.
//! - [`paths`]: where a named path lands (after `..` and symlinks).
//! - [`git`]: what git prints from its object database, where no mask of
//!   a read-denied file reaches.
//!
//! A command is *read-only* — it runs unasked in `default` mode — only when
//! it parsed, every word of every simple command is static, every simple
//! command is known read-only by the table (every flag harmless, every path
//! inside the workspace), no redirection or `tee` writes a file other than
//! `/dev/null`, and nothing else is a concern. A redirection or `tee` into
//! the workspace is an *edit* ([`Analysis::writes`]): asked in `default`,
//! allowed in `acceptEdits`.

pub mod commands;
pub mod git;
pub mod judge;
pub mod paths;
mod walk;
pub mod wrappers;

use std::path::PathBuf;

/// Commands longer than this are not parsed: they are asked.
pub const MAX_COMMAND_CHARS: usize = 64 * 1024;

/// Substitutions nested deeper than this are asked.
pub const MAX_DEPTH: usize = 8;

/// One simple command: its words after quote removal. A word that is only
/// known when the command runs (`$HOME`, `$(date)`, `*.rs`) keeps its raw text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    pub words: Vec<String>,
    /// The command name is only known when it runs.
    pub dynamic_name: bool,
    /// Why it is not known to be read-only (`None`: it is).
    pub problem: Option<String>,
}

impl SimpleCommand {
    pub fn display(&self) -> String {
        self.words.join(" ")
    }
}

/// A file a redirection or `tee` writes inside the workspace: an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// As the command names it (`notes.txt`).
    pub shown: String,
    /// Resolved, absolute.
    pub path: PathBuf,
}

/// What a command does, as far as its structure tells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Every simple command as written, in source order (substitutions
    /// after the command that holds them).
    pub commands: Vec<SimpleCommand>,
    /// Reasons to ask that no rule about commands can answer: they name
    /// the part of the command that made it asked.
    pub concerns: Vec<String>,
    /// Files inside the workspace the command writes by a redirection or
    /// `tee`: edits.
    pub writes: Vec<Write>,
    /// Protected files it writes ([`crate::permissions::protected`]):
    /// each is also a concern, and asked in every mode.
    pub protected_writes: Vec<Write>,
    /// Every command it runs, wrappers unwrapped (`env rm f` runs `rm f`,
    /// `sh -c 'rm f'` runs `rm f`, `find -delete` is an `rm`), names by
    /// their basename (`/bin/rm` is `rm`): what deny rules are matched on.
    pub runs: Vec<SimpleCommand>,
    /// Commands whose name is only known when it runs (`$(echo rm) f`,
    /// `$X f`, `sh -c "$S"`, `source x.sh`): no deny rule can be checked
    /// against them.
    pub unknown: Vec<String>,
    /// Every path a static word may name (resolved), and the files read by
    /// `<`: what read deny rules are matched on.
    pub reads: Vec<PathBuf>,
}

impl Analysis {
    /// Known read-only: every command is, nothing is written, nothing else
    /// is a concern.
    pub fn is_read_only(&self) -> bool {
        self.writes.is_empty() && self.reads_only_apart_from_writes()
    }

    /// Read-only but for its [`writes`](Self::writes) (`ls > files.txt`).
    pub fn reads_only_apart_from_writes(&self) -> bool {
        self.concerns.is_empty() && self.commands.iter().all(|c| c.problem.is_none())
    }

    /// Every reason to ask: the concerns, each command not known to be
    /// read-only, then each write.
    pub fn reasons(&self) -> Vec<String> {
        let mut reasons = self.concerns.clone();
        reasons.extend(self.commands.iter().filter_map(|c| c.problem.clone()));
        reasons.extend(self.writes.iter().map(write_reason));
        reasons
    }
}

/// The reason a write into the workspace is asked.
pub fn write_reason(write: &Write) -> String {
    format!("writes to `{}`: an edit (allowed in acceptEdits)", write.shown)
}

/// Where the command runs and what counts as inside the workspace.
#[derive(Debug, Clone)]
pub struct ShellEnv {
    pub cwd: PathBuf,
    /// Canonical workspace roots.
    pub roots: Vec<PathBuf>,
}

/// Parse and judge `command`.
pub fn analyze(command: &str, env: &ShellEnv) -> Analysis {
    walk::analyze(command, env)
}

/// The words of `text` when it is one plain simple command of static words
/// (for rule patterns such as `cargo test`), else `None`.
pub fn split_words(text: &str) -> Option<Vec<String>> {
    let env = ShellEnv { cwd: PathBuf::from("/"), roots: Vec::new() };
    let analysis = analyze(text, &env);
    let plain = !text.contains(['|', '&', ';', '>', '<', '\n', '$', '`', '*', '?', '[']);
    match analysis.commands.as_slice() {
        [only] if plain && analysis.concerns.is_empty() && !only.dynamic_name => {
            Some(only.words.clone())
        }
        _ => None,
    }
}

/// The basename of a command name: `/bin/rm` is `rm`.
pub fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

pub(crate) fn is_shell(name: &str) -> bool {
    matches!(base_name(name), "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "fish" | "csh" | "tcsh" | "busybox")
}

pub(crate) fn is_interpreter(name: &str) -> bool {
    is_shell(name)
        || matches!(base_name(name), "python" | "python3" | "perl" | "ruby" | "node" | "php" | "lua" | "deno" | "bun" | "osascript")
}

#[cfg(test)]
mod tests;
