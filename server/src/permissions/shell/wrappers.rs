//! What a command runs besides itself, for deny rules: wrappers are
//! unwrapped (`command`, `builtin`, `env`, `nice`, `nohup`, `timeout`,
//! `time`, `stdbuf`, `setsid`, `exec`, `sudo`, `doas`, `xargs`), the
//! scripts of `sh -c`/`bash -c`, `eval` and `watch` are parsed as shell,
//! `find -exec … ;` runs its command and `find -delete` counts as `rm`.
//! What cannot be known before it runs (`sh script.sh`, `source x`, `eval
//! "$X"`) is [`Inner::Unknown`].
//!
//! A wrapper's own flags are read with their arity, so `xargs -I ls rm p`
//! runs `rm p`, not `ls`. When a wrapper has a flag this table does not
//! know, every later word is taken as a possible start of the command:
//! deny rules then err on the side of refusing.

use super::commands::{Flag, Values};
use super::{base_name, is_shell};

/// One thing a command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inner {
    /// These words, as a command (with whether each is static).
    Command(Vec<String>, Vec<bool>),
    /// This text, run as a shell script.
    Script(String),
    /// Something only known when it runs: what, for the reason.
    Unknown(String),
}

struct Wrapper {
    names: &'static [&'static str],
    flags: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`).
    leading: usize,
    /// `env`: `NAME=VALUE` operands come before the command.
    assignments: bool,
}

const WRAPPERS: &[Wrapper] = &[
    Wrapper { names: &["command", "builtin"], flags: &["-p", "-v", "-V"], leading: 0, assignments: false },
    Wrapper {
        names: &["env"],
        flags: &[
            "-i", "-0", "-v", "-u=", "-C=", "-S=", "--ignore-environment", "--null", "--debug", "--unset=", "--chdir=",
            "--split-string=", "--block-signal=?", "--default-signal=?", "--ignore-signal=?", "--list-signal-handling",
        ],
        leading: 0,
        assignments: true,
    },
    Wrapper { names: &["nice"], flags: &["-n=", "--adjustment=", "-NUM"], leading: 0, assignments: false },
    Wrapper { names: &["nohup", "setsid"], flags: &["-c", "-f", "-w", "--ctty", "--fork", "--wait"], leading: 0, assignments: false },
    Wrapper {
        names: &["timeout"],
        flags: &["-s=", "-k=", "-v", "--signal=", "--kill-after=", "--foreground", "--preserve-status", "--verbose"],
        leading: 1,
        assignments: false,
    },
    Wrapper {
        names: &["time"],
        flags: &["-f=", "-o=", "-a", "-p", "-v", "-q", "--format=", "--output=", "--append", "--portability", "--verbose", "--quiet"],
        leading: 0,
        assignments: false,
    },
    Wrapper { names: &["stdbuf"], flags: &["-i=", "-o=", "-e=", "--input=", "--output=", "--error="], leading: 0, assignments: false },
    Wrapper { names: &["exec"], flags: &["-c", "-l", "-a="], leading: 0, assignments: false },
    Wrapper {
        names: &["sudo"],
        flags: &[
            "-A", "-b", "-E", "-H", "-i", "-k", "-K", "-n", "-P", "-S", "-s", "-u=", "-g=", "-C=", "-D=", "-h=?", "-p=", "-r=", "-t=", "-T=",
            "-U=", "--askpass", "--background", "--preserve-env=?", "--set-home", "--login", "--non-interactive", "--stdin",
            "--shell", "--user=", "--group=", "--chdir=", "--prompt=", "--role=", "--type=", "--command-timeout=", "--other-user=",
        ],
        leading: 0,
        assignments: true,
    },
    Wrapper { names: &["doas"], flags: &["-n", "-s", "-u=", "-C="], leading: 0, assignments: false },
    Wrapper {
        names: &["xargs"],
        flags: &[
            "-0", "-a=", "-d=", "-E=", "-e=?", "-I=", "-i=?", "-L=", "-l=?", "-n=", "-o", "-p", "-P=", "-r", "-s=", "-t", "-x", "--null",
            "--arg-file=", "--delimiter=", "--eof=?", "--replace=?", "--max-lines=?", "--max-args=", "--interactive",
            "--max-procs=", "--no-run-if-empty", "--max-chars=", "--verbose", "--exit", "--show-limits", "--process-slot-var=",
            "--open-tty",
        ],
        leading: 0,
        assignments: false,
    },
];

/// Programs that run a command named by their operands, whose flags this
/// table does not read one by one: every later word is taken as a
/// possible start of the command (`strace -f -o log rm f` runs `rm f`),
/// and a `-c`/`--command` value as a script.
const LOOSE_WRAPPERS: &[&str] = &[
    "flock", "ionice", "strace", "ltrace", "chrt", "taskset", "nsenter", "unshare", "setpriv", "runuser", "su", "sg", "chroot",
    "prlimit", "numactl", "systemd-run", "firejail", "xvfb-run", "valgrind", "catchsegv", "dbus-run-session", "dbus-launch",
    "unbuffer", "faketime", "proxychains", "proxychains4", "torsocks", "cpulimit", "script", "pkexec", "setarch", "linux32",
    "linux64", "schroot", "fakeroot", "fakechroot", "uv", "poetry", "pipenv", "npx", "pnpx", "bunx", "direnv", "entr",
    "parallel", "perf", "heaptrack", "gtimeout", "caffeinate", "chpst", "s6-setuidgid", "tini", "dumb-init", "sem", "ts", "tsp",
    "nq", "daemonize", "start-stop-daemon",
];

/// Interpreters and the flags that give them their program as text:
/// whatever that program runs is only known when it runs.
const CODE_FLAGS: &[(&[&str], &[&str], &[char])] = &[
    // (names, long flags, short letters that take the program text)
    (&["python", "python2", "python3", "pypy", "pypy3"], &[], &['c']),
    (&["perl", "perl5"], &[], &['e', 'E']),
    (&["ruby", "jruby"], &["--eval"], &['e']),
    (&["node", "nodejs", "bun"], &["--eval", "--print"], &['e', 'p']),
    (&["deno"], &["eval"], &[]),
    (&["php"], &[], &['r', 'R', 'B', 'E', 'F']),
    (&["lua", "luajit"], &[], &['e']),
    (&["Rscript", "R"], &["--expr"], &['e']),
    (&["julia"], &["--eval", "--print"], &['e', 'E']),
    (&["osascript"], &[], &['e']),
    (&["tclsh", "wish", "expect"], &[], &['c']),
    (&["vim", "vi", "nvim", "ex", "view", "gvim"], &["--cmd"], &['c']),
    (&["emacs"], &["--eval", "-eval", "--execute", "-execute", "--load", "-l", "--funcall", "-f", "--batch", "-batch", "--script", "-script"], &[]),
    (&["gdb", "lldb"], &["-ex", "--ex", "-eval-command", "--eval-command", "-x", "--command", "-batch", "--batch", "-o", "--one-line"], &[]),
];

/// Git's own commands: a name git does not know may be an alias from its
/// configuration (`!rm -rf .` runs a shell command) or a `git-NAME`
/// program on the PATH.
const GIT_COMMANDS: &[&str] = &[
    "add", "am", "annotate", "apply", "archive", "backfill", "bisect", "blame", "branch", "bugreport", "bundle", "cat-file", "check-attr",
    "check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout-index", "cherry", "cherry-pick", "citool", "clean",
    "clone", "column", "commit", "commit-graph", "commit-tree", "config", "count-objects", "credential", "describe", "diagnose",
    "diff", "diff-files", "diff-index", "diff-pairs", "diff-tree", "difftool", "fast-export", "fast-import", "fetch", "fetch-pack",
    "filter-branch", "fmt-merge-msg", "for-each-ref", "for-each-repo", "format-patch", "fsck", "gc", "get-tar-commit-id", "grep",
    "gui", "hash-object", "help", "hook", "index-pack", "init", "init-db", "instaweb", "interpret-trailers", "log", "ls-files",
    "ls-remote", "ls-tree", "mailinfo", "mailsplit", "maintenance", "merge", "merge-base", "merge-file", "merge-index",
    "merge-tree", "mergetool", "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes", "pack-objects", "pack-refs",
    "patch-id", "prune", "prune-packed", "pull", "push", "range-diff", "read-tree", "rebase", "reflog", "refs", "remote", "repack",
    "replace", "replay", "request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse", "revert", "rm", "send-email",
    "send-pack", "shortlog", "show", "show-branch", "show-index", "show-ref", "sparse-checkout", "stage", "stash", "status",
    "stripspace", "submodule", "switch", "symbolic-ref", "tag", "unpack-file", "unpack-objects", "update-index", "update-ref",
    "update-server-info", "var", "verify-commit", "verify-pack", "verify-tag", "version", "whatchanged", "worktree", "write-tree",
];

/// Git's options before the command, with whether each takes a value.
const GIT_GLOBAL: &[&str] = &[
    "-C=", "-c=", "--git-dir=", "--work-tree=", "--namespace=", "--config-env=", "--exec-path=?", "--super-prefix=", "--list-cmds=",
    "--attr-source=", "-p", "-P", "--paginate", "--no-pager", "--bare", "--no-replace-objects", "--no-lazy-fetch",
    "--no-optional-locks", "--no-advice", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
    "--html-path", "--man-path", "--info-path", "--version", "--help",
];

/// Configuration keys whose value git runs as a command (`-c KEY=VALUE`).
fn git_key_runs(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let last = key.rsplit('.').next().unwrap_or("");
    key.starts_with("alias.")
        || matches!(
            key.as_str(),
            "core.pager" | "core.editor" | "core.sshcommand" | "core.fsmonitor" | "core.hookspath" | "core.askpass" | "sequence.editor"
                | "diff.external" | "gpg.program" | "gpg.ssh.program" | "gpg.x509.program" | "credential.helper" | "uploadpack.packobjectshook"
                | "sendemail.smtpserver" | "instaweb.browser" | "web.browser" | "pager.log" | "pager.diff" | "pager.show"
        )
        || matches!(last, "textconv" | "clean" | "smudge" | "process" | "driver" | "command" | "cmd" | "helper" | "program" | "sshcommand" | "proxy")
        || key.starts_with("pager.")
        || key.starts_with("hook.")
}

/// Shell options that take a value (`-o pipefail`, `-O extglob`).
const SHELL_VALUE_FLAGS: &[char] = &['o', 'O'];

/// `name` (a basename) runs a command its operands name or a script it
/// is given: a wrapper, a loose wrapper, a shell, `eval`, `exec`,
/// `source`. What it runs has no shape of its own ("`timeout` allowed"
/// would allow every command), so no "commands like this" covers it.
pub fn runs_another(name: &str) -> bool {
    WRAPPERS.iter().any(|w| w.names.contains(&name))
        || LOOSE_WRAPPERS.contains(&name)
        || crate::sandbox::COMMAND_WRAPPERS.contains(&name)
        || is_shell(name)
        || matches!(name, "eval" | "exec" | "source" | "." | "watch" | "find" | "xargs")
}

/// What `words` runs besides itself (nothing for most commands).
pub fn inner(words: &[String], statics: &[bool]) -> Vec<Inner> {
    let Some(name) = words.first() else { return Vec::new() };
    let name = base_name(name);
    if let Some(wrapper) = WRAPPERS.iter().find(|w| w.names.contains(&name)) {
        return wrapped(wrapper, words, statics);
    }
    if let Some(found) = code_given_as_text(name, words) {
        return vec![found];
    }
    match name {
        "busybox" if words.len() > 1 && !is_shell(&words[1]) => vec![Inner::Command(words[1..].to_vec(), statics[1..].to_vec())],
        _ if is_shell(name) => shell_script(words, statics),
        // A platform's sandbox program runs the command it is given, too.
        _ if LOOSE_WRAPPERS.contains(&name) || crate::sandbox::COMMAND_WRAPPERS.contains(&name) => loose(words, statics),
        "git" => git(words, statics),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk(words, statics),
        "sed" | "gsed" => sed(words, statics),
        "trap" => trap(words, statics),
        "alias" => words[1..]
            .iter()
            .zip(&statics[1..])
            .filter_map(|(word, is_static)| {
                let (_, value) = word.split_once('=')?;
                Some(if *is_static { Inner::Script(value.to_string()) } else { Inner::Unknown(format!("`alias {word}` defines a command only known when it runs")) })
            })
            .collect(),
        "hash" if words.iter().any(|w| w.starts_with('-') && w.contains('p')) => {
            vec![Inner::Unknown(format!("`{}` makes a name run another program (hash -p)", words.join(" ")))]
        }
        "enable" if words.iter().any(|w| w.starts_with('-') && w.contains('f')) => {
            vec![Inner::Unknown(format!("`{}` loads a builtin from a library (enable -f)", words.join(" ")))]
        }
        "compgen" | "complete" if words.iter().any(|w| w == "-C" || w == "-F") => {
            vec![Inner::Unknown(format!("`{}` runs a command or function to complete (-C, -F)", words.join(" ")))]
        }
        "bind" if words.iter().any(|w| w.starts_with('-') && w.contains('x')) => {
            vec![Inner::Unknown(format!("`{}` binds a key to a command (bind -x)", words.join(" ")))]
        }
        "coproc" => vec![Inner::Unknown(format!("`{}` runs a coprocess", words.join(" ")))],
        "at" | "batch" | "crontab" => vec![Inner::Unknown(format!("`{}` schedules commands it reads", words.join(" ")))],
        "tar" | "gtar" | "bsdtar" => tar(words, statics),
        "rsync" | "scp" | "sftp" if words.iter().any(|w| matches!(w.as_str(), "-e" | "-S") || w.starts_with("--rsh") || w.starts_with("--rsync-path") || w.starts_with("-e")) => {
            vec![Inner::Unknown(format!("`{}` runs the remote shell program it names", words.join(" ")))]
        }
        "eval" => joined_script(&words[1..], &statics[1..], "eval"),
        "watch" => {
            let start = skip_flags(words, statics, &["-n=", "-d=?", "-t", "-b", "-e", "-g", "-c", "-x", "-p", "-w", "-q=", "--interval=", "--differences=?", "--no-title", "--beep", "--errexit", "--chgexit", "--color", "--exec", "--precise", "--no-wrap", "--equexit="], 0, false);
            match start {
                Some(start) if start < words.len() => joined_script(&words[start..], &statics[start..], "watch"),
                _ => vec![Inner::Unknown(format!("`{}` runs a command this table cannot read", words.join(" ")))],
            }
        }
        "source" | "." => vec![Inner::Unknown(format!("`{}` runs the commands in a file", words.join(" ")))],
        "find" => find(words, statics),
        _ => Vec::new(),
    }
}

fn wrapped(wrapper: &Wrapper, words: &[String], statics: &[bool]) -> Vec<Inner> {
    let name = base_name(&words[0]);
    // `env -S 'rm f'` splits its value into the command: also bundled
    // (`env -iS 'rm f'`) and abbreviated (`env --sp='rm f'`, as
    // getopt_long reads it).
    if name == "env" {
        if let Some(found) = env_split_string(words, statics) {
            return found;
        }
    }
    if (name == "command" || name == "builtin") && words.iter().skip(1).any(|w| w == "-v" || w == "-V") {
        return Vec::new(); // `command -v rm` looks a name up.
    }
    let start = match name {
        "env" => skip_flags(words, statics, wrapper.flags, 0, false).and_then(|start| env_operands(words, statics, start)),
        _ => skip_flags(words, statics, wrapper.flags, wrapper.leading, wrapper.assignments),
    };
    let mut out = Vec::new();
    if wrapper.assignments {
        // `env PATH=. ls` runs `./ls`, as `PATH=. ls` would: the walk
        // judges a shell's own assignments, these are env's (and sudo's).
        let operands = start.unwrap_or(words.len()).min(words.len());
        for word in words[1..operands].iter().zip(&statics[1..operands]).filter(|(w, s)| **s && is_assignment(w)).map(|(w, _)| w) {
            let variable = word.split_once('=').map_or(word.as_str(), |(n, _)| n);
            if let Some(why) = runs_what_it_holds(variable) {
                out.push(Inner::Unknown(format!("`{}` sets {variable}: {why}", words.join(" "))));
            }
        }
    }
    out.extend(match start {
        Some(start) if name == "xargs" && start < words.len() && xargs_names_from_input(words, &words[start]) => {
            vec![Inner::Unknown(format!("`{}` runs names it reads as commands", words.join(" ")))]
        }
        Some(start) if start < words.len() => vec![Inner::Command(words[start..].to_vec(), statics[start..].to_vec())],
        Some(_) if name == "xargs" => vec![Inner::Command(vec!["echo".into()], vec![true])],
        Some(_) => Vec::new(),
        // A flag the table does not know: any later word may start the command.
        None => (1..words.len()).map(|start| Inner::Command(words[start..].to_vec(), statics[start..].to_vec())).collect(),
    });
    out
}

/// Where `env`'s command starts, from `start` (past its options): a
/// lone `-` there is `-i` (GNU and BSD env read it once, after the
/// options: `env - rm f` runs `rm f`), then the `NAME=VALUE` assignments.
/// `None`: the command is only known when it runs.
fn env_operands(words: &[String], statics: &[bool], start: usize) -> Option<usize> {
    let mut index = start;
    if words.get(index).is_some_and(|word| word == "-") {
        index += 1;
    }
    while index < words.len() && statics[index] && is_assignment(&words[index]) {
        index += 1;
    }
    if index < words.len() && !statics[index] {
        return None;
    }
    Some(index)
}

/// `env -S STRING`/`--split-string=STRING` (any spelling getopt_long
/// accepts), with the words before the first operand: the string is a
/// command line.
fn env_split_string(words: &[String], statics: &[bool]) -> Option<Vec<Inner>> {
    let unknown = || vec![Inner::Unknown(format!("`{}` splits a string only known when it runs", words.join(" ")))];
    let mut index = 1;
    while index < words.len() {
        let word = &words[index];
        index += 1;
        if !statics[index - 1] {
            return Some(unknown());
        }
        if word == "--" || !word.starts_with('-') || word == "-" {
            return None;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (flag, glued) = long.split_once('=').map_or((long, None), |(f, v)| (f, Some(v)));
            if !flag.is_empty() && "split-string".starts_with(flag) {
                let value = match glued {
                    Some(v) => Some((v.to_string(), statics[index - 1])),
                    None => words.get(index).map(|w| (w.clone(), statics[index])),
                };
                return Some(match value {
                    Some((value, true)) => vec![Inner::Script(value)],
                    _ => unknown(),
                });
            }
            if glued.is_none() && ["unset", "chdir"].iter().any(|f| f.starts_with(flag)) {
                index += 1;
            }
            continue;
        }
        let bundle = &word[1..];
        for (at, c) in bundle.char_indices() {
            match c {
                'S' => {
                    let rest = &bundle[at + 1..];
                    let value = if rest.is_empty() { words.get(index).map(|w| (w.clone(), statics[index])) } else { Some((rest.to_string(), statics[index - 1])) };
                    return Some(match value {
                        Some((value, true)) => vec![Inner::Script(value)],
                        _ => unknown(),
                    });
                }
                'u' | 'C' => {
                    if at + 1 == bundle.len() {
                        index += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    None
}

/// A wrapper whose flags are not read one by one: `-c VALUE` (and
/// `--command=VALUE`) is a script, and every later word may start the
/// command.
fn loose(words: &[String], statics: &[bool]) -> Vec<Inner> {
    let mut out = Vec::new();
    for (index, word) in words.iter().enumerate().skip(1) {
        // `-c VALUE`, also at the end of a bundle (`script -qc 'cmd'`).
        let short_c = word.starts_with('-') && !word.starts_with("--") && word.len() > 1 && word.ends_with('c');
        let value = if short_c || matches!(word.as_str(), "--command" | "-ex" | "--eval-command") {
            words.get(index + 1).map(|v| (v.clone(), statics[index + 1]))
        } else {
            word.strip_prefix("--command=").map(|v| (v.to_string(), statics[index]))
        };
        match value {
            Some((script, true)) => out.push(Inner::Script(script)),
            Some((_, false)) => out.push(Inner::Unknown(format!("`{}` runs a command only known when it runs", words.join(" ")))),
            None => {}
        }
        if !statics[index] {
            out.push(Inner::Unknown(format!("`{}` runs a command only known when it runs", words.join(" "))));
            break;
        }
        out.push(Inner::Command(words[index..].to_vec(), statics[index..].to_vec()));
    }
    out
}

/// An interpreter given its program as text (`python3 -c`, `perl -e`,
/// `node -p`, `php -r`, `vim -c`, `gdb -ex`): what it runs is only known
/// when it runs.
fn code_given_as_text(name: &str, words: &[String]) -> Option<Inner> {
    let (_, longs, letters) = CODE_FLAGS.iter().find(|(names, _, _)| names.contains(&name))?;
    let given = words.iter().skip(1).any(|word| {
        let spelled = word.split_once('=').map_or(word.as_str(), |(flag, _)| flag);
        longs.contains(&spelled)
            || (word.starts_with('-') && !word.starts_with("--") && word[1..].chars().next().is_some_and(|_| word[1..].chars().any(|c| letters.contains(&c))))
            || (name == "vim" || name == "nvim" || name == "vi" || name == "ex") && word.starts_with('+')
    });
    given.then(|| Inner::Unknown(format!("`{}` runs code given as text", words.join(" "))))
}

/// `git`: what its options and configuration make it run. `-c alias.x='!cmd'`
/// and the other keys whose value is a command are scripts; a command
/// name git does not have may be an alias from its configuration; the
/// command after the global options (`git -C dir push`) is what a deny
/// rule on `git push` is matched on; `submodule foreach`, `bisect run`,
/// `rebase --exec` and `difftool --extcmd` run commands.
fn git(words: &[String], statics: &[bool]) -> Vec<Inner> {
    let shown = words.join(" ");
    let table: Vec<Flag<'_>> = GIT_GLOBAL.iter().map(|f| Flag::parse(f)).collect();
    let mut out = Vec::new();
    let mut index = 1;
    while index < words.len() {
        if !statics[index] {
            return vec![Inner::Unknown(format!("`{shown}` has an option only known when it runs"))];
        }
        let word = &words[index];
        if !word.starts_with('-') {
            break;
        }
        index += 1;
        let (spelled, glued) = match word.split_once('=') {
            Some((flag, value)) if word.starts_with("--") => (flag.to_string(), Some(value.to_string())),
            _ if !word.starts_with("--") && word.len() > 2 => (word[..2].to_string(), Some(word[2..].to_string())),
            _ => (word.clone(), None),
        };
        let Some(flag) = table.iter().find(|f| f.name == spelled) else {
            return vec![Inner::Unknown(format!("`{shown}` has an option this table does not read (`{word}`)"))];
        };
        let value = match flag.values {
            Values::Required(_) => match glued {
                Some(value) => Some(value),
                None => {
                    index += 1;
                    match (words.get(index - 1), statics.get(index - 1)) {
                        (Some(value), Some(true)) => Some(value.clone()),
                        _ => return vec![Inner::Unknown(format!("`{shown}` has an option value only known when it runs"))],
                    }
                }
            },
            _ => None,
        };
        match (flag.name, value) {
            ("-c", Some(pair)) => {
                let (key, value) = pair.split_once('=').unwrap_or((pair.as_str(), ""));
                if git_key_runs(key) {
                    out.push(Inner::Script(value.strip_prefix('!').unwrap_or(value).to_string()));
                }
            }
            ("--config-env", Some(_)) => out.push(Inner::Unknown(format!("`{shown}` takes configuration from the environment (--config-env)"))),
            ("--exec-path", Some(_)) => out.push(Inner::Unknown(format!("`{shown}` runs git's commands from another folder (--exec-path)"))),
            _ => {}
        }
    }
    let Some(command) = words.get(index) else { return out };
    if !GIT_COMMANDS.contains(&command.as_str()) {
        out.push(Inner::Unknown(format!("`git {command}` is not one of git's commands: it may be an alias from git's configuration, which can run any command")));
        return out;
    }
    let rest = &words[index..];
    let rest_statics = &statics[index..];
    if index > 1 {
        let mut plain = vec!["git".to_string()];
        plain.extend(rest.iter().cloned());
        let mut plain_statics = vec![true];
        plain_statics.extend(rest_statics.iter().copied());
        out.push(Inner::Command(plain, plain_statics));
    }
    let sub = rest.get(1).map(String::as_str);
    match (command.as_str(), sub) {
        ("submodule", Some("foreach")) => {
            let start = 2 + rest[2..].iter().take_while(|w| w.starts_with('-')).count();
            out.extend(joined_script(&rest[start.min(rest.len())..], &rest_statics[start.min(rest.len())..], "git submodule foreach"));
        }
        ("bisect", Some("run")) if rest.len() > 2 => out.push(Inner::Command(rest[2..].to_vec(), rest_statics[2..].to_vec())),
        ("rebase" | "difftool" | "mergetool" | "filter-branch" | "sequencer", _) => {
            for (at, word) in rest.iter().enumerate() {
                let value = if matches!(word.as_str(), "-x" | "--exec" | "--extcmd" | "-t" | "--tool" | "--tree-filter" | "--index-filter" | "--msg-filter" | "--commit-filter" | "--env-filter" | "--parent-filter" | "--tag-name-filter") {
                    rest.get(at + 1).map(|v| (v.clone(), rest_statics[at + 1]))
                } else {
                    word.split_once('=').filter(|(flag, _)| matches!(*flag, "--exec" | "--extcmd")).map(|(_, v)| (v.to_string(), rest_statics[at]))
                };
                match value {
                    Some((script, true)) => out.push(Inner::Script(script)),
                    Some((_, false)) => out.push(Inner::Unknown(format!("`{shown}` runs a command only known when it runs"))),
                    None => {}
                }
            }
        }
        _ => {}
    }
    out
}

/// `awk PROGRAM`: a program that calls `system()`, pipes to or from a
/// command (`print | "sh"`, `"cmd" | getline`), or comes from a file
/// (`-f`), runs commands only known when it runs.
fn awk(words: &[String], statics: &[bool]) -> Vec<Inner> {
    let shown = words.join(" ");
    let mut index = 1;
    let mut program: Option<(&String, bool)> = None;
    while index < words.len() {
        let word = &words[index];
        index += 1;
        match word.as_str() {
            "-f" | "--file" | "-i" | "--include" | "-l" | "--load" | "-E" | "--exec" => {
                return vec![Inner::Unknown(format!("`{shown}` runs an awk program from a file"))];
            }
            "-e" | "--source" => program = words.get(index).map(|p| (p, statics[index])),
            "-v" | "-F" | "--assign" | "--field-separator" => index += 1,
            "--" => {}
            _ if word.starts_with("-f") || word.starts_with("--file=") => return vec![Inner::Unknown(format!("`{shown}` runs an awk program from a file"))],
            _ if word.starts_with('-') => {}
            _ => {
                if program.is_none() {
                    program = Some((word, statics[index - 1]));
                }
                break;
            }
        }
    }
    match program {
        Some((text, true)) if !(text.contains("system") || text.contains('|') || text.contains("getline") || text.contains("@load")) => Vec::new(),
        Some(_) => vec![Inner::Unknown(format!("`{shown}` runs commands from its awk program (system, pipes)"))],
        None => Vec::new(),
    }
}

/// `sed SCRIPT`: GNU sed's `e` command and the `e` flag of `s` run the
/// pattern space as a command; a script from a file (`-f`) may.
fn sed(words: &[String], statics: &[bool]) -> Vec<Inner> {
    let shown = words.join(" ");
    let mut scripts: Vec<(&String, bool)> = Vec::new();
    let mut index = 1;
    let mut explicit = false;
    while index < words.len() {
        let word = &words[index];
        index += 1;
        if word == "-f" || word.starts_with("--file") || (word.starts_with("-f") && !word.starts_with("--")) || (word.starts_with('-') && !word.starts_with("--") && word.contains('f')) {
            return vec![Inner::Unknown(format!("`{shown}` runs a sed script from a file"))];
        }
        if word == "-e" || word == "--expression" {
            if let Some(script) = words.get(index) {
                scripts.push((script, statics[index]));
                explicit = true;
                index += 1;
            }
            continue;
        }
        if let Some(script) = word.strip_prefix("--expression=") {
            let _ = script;
            scripts.push((word, statics[index - 1]));
            explicit = true;
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        if !explicit {
            scripts.push((word, statics[index - 1]));
        }
        break;
    }
    if scripts.iter().any(|(script, is_static)| !is_static || sed_runs_commands(script)) {
        return vec![Inner::Unknown(format!("`{shown}` runs commands from its sed script (the e command or flag)"))];
    }
    Vec::new()
}

/// Does this sed script use GNU sed's `e` (a command, or a flag of `s`)?
/// Read roughly, erring towards yes.
fn sed_runs_commands(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut at = 0;
    while at < chars.len() {
        // Skip separators, addresses and `!`.
        while at < chars.len() && (chars[at].is_whitespace() || matches!(chars[at], ';' | '{' | '}' | '!' | ',' | '$' | '~' | '+') || chars[at].is_ascii_digit()) {
            at += 1;
        }
        if at < chars.len() && (chars[at] == '/' || chars[at] == '\\') {
            // A regex address.
            let delimiter = if chars[at] == '\\' { at += 1; chars.get(at).copied().unwrap_or('/') } else { '/' };
            at += 1;
            while at < chars.len() && chars[at] != delimiter {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            continue;
        }
        let Some(&command) = chars.get(at) else { break };
        at += 1;
        match command {
            'e' => return true,
            's' | 'y' => {
                let Some(&delimiter) = chars.get(at) else { return false };
                at += 1;
                for _ in 0..2 {
                    while at < chars.len() && chars[at] != delimiter {
                        at += if chars[at] == '\\' { 2 } else { 1 };
                    }
                    at += 1;
                }
                // The flags, up to the end of the command.
                while at < chars.len() && !matches!(chars[at], ';' | '\n' | '}') {
                    if chars[at] == 'e' && command == 's' {
                        return true;
                    }
                    if chars[at] == 'w' {
                        break; // the rest is a file name
                    }
                    at += 1;
                }
            }
            // Commands whose argument runs to the end of the line.
            'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | 'b' | 't' | 'T' | ':' | 'l' | 'q' | 'Q' | 'L' | 'F' | 'v' | 'z' | '=' | '#' => {
                if matches!(command, 'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | '#' | 'b' | 't' | 'T' | ':') {
                    while at < chars.len() && chars[at] != '\n' {
                        at += 1;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// `trap 'cmd' SIGNAL`: the text runs when the signal (or EXIT) comes.
fn trap(words: &[String], statics: &[bool]) -> Vec<Inner> {
    let mut index = 1;
    while index < words.len() && matches!(words[index].as_str(), "-l" | "-p" | "-P" | "--") {
        index += 1;
    }
    match (words.get(index), statics.get(index)) {
        (Some(action), Some(true)) if words.len() > index + 1 && action != "-" && !action.is_empty() => vec![Inner::Script(action.clone())],
        (Some(_), Some(false)) => vec![Inner::Unknown(format!("`{}` runs text only known when it runs", words.join(" ")))],
        _ => Vec::new(),
    }
}

/// `tar --to-command=CMD`, `-I CMD`, `--use-compress-program`,
/// `--checkpoint-action=exec=CMD`, `--info-script`, `--rsh-command`: run
/// the program named.
fn tar(words: &[String], _statics: &[bool]) -> Vec<Inner> {
    let runs = words.iter().skip(1).any(|w| {
        ["--to-command", "--use-compress-program", "--checkpoint-action", "--info-script", "--new-volume-script", "--rsh-command", "-I", "-F"]
            .iter()
            .any(|flag| w == flag || w.starts_with(&format!("{flag}=")) || (flag.len() == 2 && w.starts_with(flag)))
            || (w.starts_with('-') && !w.starts_with("--") && (w.contains('I') || w.contains('F')))
    });
    if runs {
        vec![Inner::Unknown(format!("`{}` runs a program it names", words.join(" ")))]
    } else {
        Vec::new()
    }
}

/// The index of the first word after the wrapper's flags, its leading
/// operands and (for `env`) its assignments; `None` at a flag it does not
/// know or a word only known when it runs.
fn skip_flags(words: &[String], statics: &[bool], flags: &[&str], leading: usize, assignments: bool) -> Option<usize> {
    let table: Vec<Flag<'_>> = flags.iter().map(|f| Flag::parse(f)).collect();
    let mut index = 1;
    while index < words.len() {
        if !statics[index] {
            return None;
        }
        let word = &words[index];
        if word == "--" {
            index += 1;
            break;
        }
        if !word.starts_with('-') || word == "-" {
            break;
        }
        index += 1;
        if let Some(long) = word.strip_prefix("--") {
            let (name, glued) = long.split_once('=').map(|(n, v)| (n, Some(v))).unwrap_or((long, None));
            let spelled = format!("--{name}");
            let flag = table.iter().find(|f| f.name == spelled)?;
            if matches!(flag.values, Values::Required(_)) && glued.is_none() {
                index += 1;
            }
            continue;
        }
        let bundle = &word[1..];
        if bundle.chars().all(|c| c.is_ascii_digit()) && table.iter().any(|f| f.name == "-NUM") {
            continue;
        }
        for (at, c) in bundle.char_indices() {
            let flag = table.iter().find(|f| f.name == format!("-{c}"))?;
            match flag.values {
                Values::None => {}
                Values::Optional => break,
                Values::Required(_) => {
                    if at + c.len_utf8() == bundle.len() {
                        index += 1; // the value is the next word
                    }
                    break;
                }
            }
        }
    }
    if assignments {
        while index < words.len() && statics[index] && is_assignment(&words[index]) {
            index += 1;
        }
    }
    for _ in 0..leading {
        if index < words.len() {
            index += 1;
        }
    }
    if index < words.len() && !statics[index] {
        return None;
    }
    Some(index)
}

/// `xargs -I{} {} f`: the command name is what it reads.
fn xargs_names_from_input(words: &[String], command: &str) -> bool {
    let replace: Vec<String> = words
        .windows(2)
        .filter(|pair| pair[0] == "-I")
        .map(|pair| pair[1].clone())
        .chain(words.iter().filter_map(|w| w.strip_prefix("-I").filter(|r| !r.is_empty()).map(String::from)))
        .chain(words.iter().filter(|w| w.starts_with("-i") || w.starts_with("--replace")).map(|_| "{}".to_string()))
        .collect();
    replace.iter().any(|r| !r.is_empty() && command.contains(r.as_str()))
}

/// Variables whose value the shell runs or reads code from, or that
/// choose which program a name runs: setting one makes the commands after
/// it unknown to deny rules.
pub(super) fn runs_what_it_holds(name: &str) -> Option<&'static str> {
    Some(match name {
        "PS0" | "PS1" | "PS2" | "PS3" | "PS4" => "the prompt is expanded when it is shown (`set -x` shows PS4), running the commands in it",
        "PROMPT_COMMAND" => "it runs before each prompt",
        "BASH_ENV" | "ENV" => "every shell started after it runs the file it names",
        "SHELLOPTS" | "BASHOPTS" => "it sets shell options (xtrace, which shows PS4) for every shell started after it",
        "PATH" | "BASH_CMDS" | "BASH_ALIASES" | "BASH_LOADABLES_PATH" | "EXECIGNORE" => "it chooses the program a command name runs",
        _ => return None,
    })
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        None => false,
    }
}

/// `sh -c SCRIPT`, `bash -ec SCRIPT`: the script. `sh file` and `sh`
/// reading standard input run commands only known when they run.
fn shell_script(words: &[String], statics: &[bool]) -> Vec<Inner> {
    let shown = words.join(" ");
    let mut index = 1;
    let mut has_c = false;
    while index < words.len() {
        let word = &words[index];
        if !statics[index] {
            return vec![Inner::Unknown(format!("`{shown}` runs a script only known when it runs"))];
        }
        index += 1;
        if word == "--" || word == "-" {
            break;
        }
        if word.starts_with("--") {
            continue; // --login, --norc, --noprofile, --posix
        }
        if let Some(bundle) = word.strip_prefix('-').or_else(|| word.strip_prefix('+')) {
            if bundle.contains('c') {
                has_c = true;
            }
            if bundle.chars().any(|c| SHELL_VALUE_FLAGS.contains(&c)) {
                index += 1;
            }
            continue;
        }
        index -= 1;
        break;
    }
    match (has_c, words.get(index)) {
        (true, Some(script)) if statics[index] => vec![Inner::Script(script.clone())],
        (true, Some(_)) => vec![Inner::Unknown(format!("`{shown}` runs a script only known when it runs"))],
        (true, None) => Vec::new(),
        (false, Some(file)) => vec![Inner::Unknown(format!("`{shown}` runs the commands in `{file}`"))],
        (false, None) => vec![Inner::Unknown(format!("`{shown}` runs the commands it reads"))],
    }
}

fn joined_script(words: &[String], statics: &[bool], what: &str) -> Vec<Inner> {
    if statics.iter().all(|s| *s) {
        vec![Inner::Script(words.join(" "))]
    } else {
        vec![Inner::Unknown(format!("`{what} {}` runs text only known when it runs", words.join(" ")))]
    }
}

/// `find … -exec CMD … ;` runs CMD; `find … -delete` removes: an `rm`.
fn find(words: &[String], statics: &[bool]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut index = 1;
    while index < words.len() {
        let word = words[index].as_str();
        index += 1;
        match word {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = index;
                while index < words.len() && !matches!(words[index].as_str(), ";" | "+") {
                    index += 1;
                }
                if start < index {
                    if words[start].contains("{}") {
                        out.push(Inner::Unknown(format!("`{}` runs the files it finds as commands", words.join(" "))));
                    } else {
                        out.push(Inner::Command(words[start..index].to_vec(), statics[start..index].to_vec()));
                    }
                }
                index += 1;
            }
            "-delete" => {
                let starts: Vec<String> = words[1..].iter().take_while(|w| !w.starts_with('-') && !matches!(w.as_str(), "!" | "(")).cloned().collect();
                let mut rm = vec!["rm".to_string(), "-r".to_string()];
                rm.extend(starts);
                let statics = vec![true; rm.len()];
                out.push(Inner::Command(rm, statics));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn show(command: &str) -> String {
        let words: Vec<String> = command.split(' ').map(String::from).collect();
        let statics: Vec<bool> = words.iter().map(|w| !w.starts_with('$')).collect();
        let inner = inner(&words, &statics);
        let parts: Vec<String> = inner
            .iter()
            .map(|i| match i {
                Inner::Command(words, _) => format!("runs `{}`", words.join(" ")),
                Inner::Script(text) => format!("script `{text}`"),
                Inner::Unknown(why) => format!("unknown: {why}"),
            })
            .collect();
        format!("{command} => {}\n", parts.join(" | "))
    }

    #[test]
    fn wrappers_are_unwrapped_with_their_flags_arity() {
        let commands = [
            "command rm f", "command -v rm", "env rm f", "env -i A=1 B=2 rm f", "env -u HOME rm f", "env -C /tmp rm f",
            "nice -n 5 rm f", "nice -10 rm f", "nohup rm f", "timeout 5 rm f", "timeout -k 1 -s KILL 5 rm f", "time -o log rm f",
            "xargs rm", "xargs -I ls touch p", "xargs -n1 -P4 rm", "xargs -0 -a list rm", "xargs", "xargs --weird ls rm",
            "sudo -u root rm f", "exec rm f", "stdbuf -oL rm f", "sh -c rm", "bash -ec rm", "bash -o pipefail -c rm", "sh x.sh", "sh",
            "bash -c $S", "eval rm f", "eval $X", "source env.sh", ". env.sh", "find . -exec rm {} ;", "find . -name x -delete",
            "find . -execdir sh -c x {} +", "watch -n 1 rm f", "env $X f", "ls -l",
        ];
        let out: String = commands.iter().map(|c| show(c)).collect();
        expect_test::expect![[r#"
            command rm f => runs `rm f`
            command -v rm => 
            env rm f => runs `rm f`
            env -i A=1 B=2 rm f => runs `rm f`
            env -u HOME rm f => runs `rm f`
            env -C /tmp rm f => runs `rm f`
            nice -n 5 rm f => runs `rm f`
            nice -10 rm f => runs `rm f`
            nohup rm f => runs `rm f`
            timeout 5 rm f => runs `rm f`
            timeout -k 1 -s KILL 5 rm f => runs `rm f`
            time -o log rm f => runs `rm f`
            xargs rm => runs `rm`
            xargs -I ls touch p => runs `touch p`
            xargs -n1 -P4 rm => runs `rm`
            xargs -0 -a list rm => runs `rm`
            xargs => runs `echo`
            xargs --weird ls rm => runs `--weird ls rm` | runs `ls rm` | runs `rm`
            sudo -u root rm f => runs `rm f`
            exec rm f => runs `rm f`
            stdbuf -oL rm f => runs `rm f`
            sh -c rm => script `rm`
            bash -ec rm => script `rm`
            bash -o pipefail -c rm => script `rm`
            sh x.sh => unknown: `sh x.sh` runs the commands in `x.sh`
            sh => unknown: `sh` runs the commands it reads
            bash -c $S => unknown: `bash -c $S` runs a script only known when it runs
            eval rm f => script `rm f`
            eval $X => unknown: `eval $X` runs text only known when it runs
            source env.sh => unknown: `source env.sh` runs the commands in a file
            . env.sh => unknown: `. env.sh` runs the commands in a file
            find . -exec rm {} ; => runs `rm {}`
            find . -name x -delete => runs `rm -r .`
            find . -execdir sh -c x {} + => runs `sh -c x {}`
            watch -n 1 rm f => script `rm f`
            env $X f => unknown: `env $X f` splits a string only known when it runs
            ls -l => 
        "#]]
        .assert_eq(&out);
    }
}
