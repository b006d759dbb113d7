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

/// Shell options that take a value (`-o pipefail`, `-O extglob`).
const SHELL_VALUE_FLAGS: &[char] = &['o', 'O'];

/// What `words` runs besides itself (nothing for most commands).
pub fn inner(words: &[String], statics: &[bool]) -> Vec<Inner> {
    let Some(name) = words.first() else { return Vec::new() };
    let name = base_name(name);
    if let Some(wrapper) = WRAPPERS.iter().find(|w| w.names.contains(&name)) {
        return wrapped(wrapper, words, statics);
    }
    match name {
        _ if is_shell(name) => shell_script(words, statics),
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
    // `env -S 'rm f'` splits its value into the command.
    if name == "env" {
        if let Some(at) = words.iter().position(|w| w == "-S" || w.starts_with("-S") || w.starts_with("--split-string")) {
            let value = match words[at].split_once('=') {
                Some((_, v)) => Some((v.to_string(), statics[at])),
                None if words[at].len() > 2 && !words[at].starts_with("--") => Some((words[at][2..].to_string(), statics[at])),
                None => words.get(at + 1).map(|w| (w.clone(), statics[at + 1])),
            };
            if let Some((value, true)) = value {
                return vec![Inner::Script(value)];
            }
            return vec![Inner::Unknown(format!("`{}` splits a string only known when it runs", words.join(" ")))];
        }
    }
    if (name == "command" || name == "builtin") && words.iter().skip(1).any(|w| w == "-v" || w == "-V") {
        return Vec::new(); // `command -v rm` looks a name up.
    }
    match skip_flags(words, statics, wrapper.flags, wrapper.leading, wrapper.assignments) {
        Some(start) if start < words.len() => vec![Inner::Command(words[start..].to_vec(), statics[start..].to_vec())],
        Some(_) if name == "xargs" => vec![Inner::Command(vec!["echo".into()], vec![true])],
        Some(_) => Vec::new(),
        // A flag the table does not know: any later word may start the command.
        None => (1..words.len()).map(|start| Inner::Command(words[start..].to_vec(), statics[start..].to_vec())).collect(),
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
                    out.push(Inner::Command(words[start..index].to_vec(), statics[start..index].to_vec()));
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
            env $X f => runs `$X f` | runs `f`
            ls -l => 
        "#]]
        .assert_eq(&out);
    }
}
