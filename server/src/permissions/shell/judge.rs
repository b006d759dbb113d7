//! The judgement of one simple command whose words are all static: is it
//! known to be read-only? Its flags are read as the command itself reads
//! them ([`commands::Syntax`]) against its entry in the table, and every
//! path it names must resolve inside the workspace. Anything unknown — a
//! command without an entry, a flag not in its list, a path outside or not
//! known — is a reason to ask, and the reason names it.

use std::path::{Path, PathBuf};

use super::commands::{self, Flag, Operands, Spec, Syntax, ValueKind, Values};
use super::paths::{self, Place};

/// Where the command runs.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// `None`: only known when the command runs (after `cd $DIR`).
    pub cwd: Option<&'a Path>,
    pub roots: &'a [PathBuf],
}

/// `None` when the command (all of whose words are static) is known to be
/// read-only; otherwise why not, in words for the prompt.
pub fn read_only_problem(words: &[String], ctx: Context<'_>) -> Option<String> {
    let shown = words.join(" ");
    let name = words.first()?;
    if name.contains('/') {
        return Some(format!("`{shown}` runs `{name}`, a program named by its path, not a known command"));
    }
    if let Some(problem) = wrapper_problem(words, ctx) {
        return problem;
    }
    let Some(spec) = commands::lookup(name) else {
        return Some(format!("`{shown}` is not known to be read-only"));
    };
    if let Some(why) = program_chosen_by_workspace(name, ctx) {
        return Some(format!("`{shown}` is not known to be read-only: {why}"));
    }
    if let Some(problem) = shows_environments(spec, &words[1..]) {
        return Some(format!("`{shown}` is not known to be read-only: {problem}"));
    }
    let Some(cwd) = ctx.cwd else {
        return Some(format!("`{shown}` runs after a `cd` whose folder is only known when it runs"));
    };
    if !matches!(paths::place_of(cwd, ctx.roots), Place::Workspace | Place::Protected(_)) {
        return Some(format!("`{shown}` runs in `{}`, outside the workspace", cwd.display()));
    }
    check_spec(spec, &words[1..], ctx).err().map(|why| format!("`{shown}` is not known to be read-only: {why}"))
}

/// Does the workspace choose the program `name` runs? The first match on
/// the PATH is a file inside a workspace root (`.venv/bin/ls`,
/// `node_modules/.bin/cat`), or a file in the command's folder or above
/// it picks the toolchain ([`commands::TOOLCHAIN_FILES`]).
fn program_chosen_by_workspace(name: &str, ctx: Context<'_>) -> Option<String> {
    if commands::BUILTINS.contains(&name) {
        return None;
    }
    // After a `cd` whose folder is only known when it runs, the caller says so.
    let cwd = ctx.cwd?;
    let path = crate::environment::var("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let dir = if dir.is_absolute() { dir } else { cwd.join(dir) };
        let candidate = dir.join(name);
        if std::fs::metadata(&candidate).is_ok_and(|m| m.is_file()) {
            let resolved = candidate.canonicalize().unwrap_or(candidate);
            if ctx.roots.iter().any(|root| resolved.starts_with(root)) {
                return Some(format!("`{name}` is `{}`, a program in the workspace", resolved.display()));
            }
            break;
        }
    }
    let (_, files) = commands::TOOLCHAIN_FILES.iter().find(|(names, _)| names.contains(&name))?;
    // Up to the home folder: one there (`~/.tool-versions`) is the user's own.
    let home = dirs::home_dir().and_then(|h| h.canonicalize().ok());
    for folder in cwd.ancestors().take_while(|folder| home.as_deref() != Some(*folder)) {
        if let Some(file) = files.iter().find(|file| folder.join(file).exists()) {
            return Some(format!("`{}` chooses the toolchain `{name}` runs", folder.join(file).display()));
        }
    }
    None
}

/// `ps` takes any flag but BSD's `e` (in a word without a dash: `ps
/// auxe`, `ps eww`), which prints every process's environment: without a
/// sandbox, the secrets of the user's other programs. A word without a
/// dash holding an `e` is asked (it may also be a `-o` format list).
fn shows_environments(spec: &Spec, args: &[String]) -> Option<String> {
    if spec.name != "ps" {
        return None;
    }
    let word = args.iter().find(|a| !a.starts_with('-') && a.contains('e'))?;
    Some(format!("`{word}` may ask for the environment of every process (ps e)"))
}

/// Read-only wrappers: `timeout 5 ls`, `nice ls`, `command ls`,
/// `command -v rm`. `Some(None)`: read-only; `Some(Some(why))`: not;
/// `None`: not a wrapper.
fn wrapper_problem(words: &[String], ctx: Context<'_>) -> Option<Option<String>> {
    let shown = words.join(" ");
    let (flags, leading): (&[&str], usize) = match words.first()?.as_str() {
        "timeout" => (&["-s=", "-k=", "--signal=", "--kill-after=", "--foreground", "--preserve-status", "-v", "--verbose"], 1),
        "nice" => (&["-n=", "--adjustment=", "-NUM"], 0),
        "time" => (&["-p"], 0),
        "command" => (&["-p", "-v", "-V"], 0),
        _ => return None,
    };
    let spec = Spec { name: "", syntax: Syntax::Gnu, flags: &[], operands: Operands::Text, subcommands: &[], requires: &[] };
    let parsed = match parse_flags(&spec, flags, &words[1..], true, ctx) {
        Ok(parsed) => parsed,
        Err(why) => return Some(Some(format!("`{shown}` is not known to be read-only: {why}"))),
    };
    if words[0] == "command" && parsed.given.iter().any(|f| f == "-v" || f == "-V") {
        return Some(None); // `command -v rm` looks a name up.
    }
    let inner = &parsed.operands[leading.min(parsed.operands.len())..];
    if inner.is_empty() {
        return Some(Some(format!("`{shown}` is not known to be read-only")));
    }
    Some(read_only_problem(inner, ctx).map(|why| format!("`{shown}` runs a command not known to be read-only ({why})")))
}

/// What the flag parse found.
#[derive(Debug, Default)]
struct Parsed {
    /// The flags given, by their table spelling.
    given: Vec<String>,
    /// The operands, in order.
    operands: Vec<String>,
}

fn check_spec(spec: &Spec, args: &[String], ctx: Context<'_>) -> Result<(), String> {
    if spec.syntax == Syntax::Find {
        return check_find(spec, args, ctx);
    }
    let flags: Vec<&str> = spec.flags.iter().flat_map(|g| g.iter().copied()).collect();
    // With subcommands, flags before the subcommand are the command's own.
    let stop_at_operand = !spec.subcommands.is_empty();
    let parsed = match spec.syntax {
        Syntax::Any => Parsed { given: Vec::new(), operands: args.iter().filter(|a| !a.starts_with('-')).cloned().collect() },
        _ => parse_flags(spec, &flags, args, stop_at_operand, ctx)?,
    };
    if !spec.subcommands.is_empty() {
        let Some(sub) = parsed.operands.first() else {
            return if parsed.given.is_empty() { Err("no subcommand".into()) } else { Ok(()) };
        };
        let Some(sub_spec) = spec.subcommand(sub) else { return Err(format!("`{sub}` is not a known read-only subcommand")) };
        let at = args.len() - parsed.operands.len() + 1;
        return check_spec(sub_spec, &args[at..], ctx);
    }
    if !spec.requires.is_empty() && !spec.requires.iter().any(|r| parsed.given.iter().any(|g| g == r)) {
        return Err(format!("without one of {} it may write", spec.requires.join(", ")));
    }
    check_operands(spec.operands, &parsed, ctx)
}

fn check_operands(operands: Operands, parsed: &Parsed, ctx: Context<'_>) -> Result<(), String> {
    let paths: &[String] = match operands {
        Operands::Paths => &parsed.operands,
        Operands::AtMostPaths(n) => {
            if parsed.operands.len() > n {
                return Err(format!("more than {n} file operand(s): the next one is written"));
            }
            &parsed.operands
        }
        Operands::PatternThenPaths(pattern_flags) => {
            let given_pattern = parsed.given.iter().any(|g| pattern_flags.contains(&g.as_str()));
            if given_pattern { &parsed.operands } else { parsed.operands.get(1..).unwrap_or(&[]) }
        }
        Operands::Text => &[],
        Operands::Format => {
            if let Some(bad) = parsed.operands.iter().find(|o| !o.starts_with('+')) {
                return Err(format!("`{bad}` is not a `+FORMAT`"));
            }
            &[]
        }
        Operands::None => {
            if let Some(first) = parsed.operands.first() {
                return Err(format!("the operand `{first}`"));
            }
            &[]
        }
    };
    paths.iter().try_for_each(|p| check_path(p, ctx))
}

/// A path the command reads must resolve inside the workspace (after `..`
/// and symlinks).
fn check_path(path: &str, ctx: Context<'_>) -> Result<(), String> {
    if path == "-" {
        return Ok(()); // standard input
    }
    let Some(cwd) = ctx.cwd else { return Err(format!("`{path}` is relative to a folder only known when it runs")) };
    match paths::place_of(&paths::resolve(cwd, path), ctx.roots) {
        Place::Workspace | Place::Protected(_) => Ok(()),
        Place::Outside => Err(format!("`{path}` is outside the workspace")),
    }
}

/// Read flags the way `getopt_long` does (or without abbreviations, as
/// the syntax says), against `flags`. `stop_at_operand`: the first operand
/// ends the flags (a subcommand follows).
fn parse_flags(spec: &Spec, flags: &[&str], args: &[String], stop_at_operand: bool, ctx: Context<'_>) -> Result<Parsed, String> {
    let table: Vec<Flag<'_>> = flags.iter().map(|f| Flag::parse(f)).collect();
    let mut parsed = Parsed::default();
    let mut index = 0;
    let mut only_operands = false;
    while index < args.len() {
        let arg = &args[index];
        index += 1;
        if only_operands || arg == "-" || !arg.starts_with('-') {
            parsed.operands.push(arg.clone());
            if stop_at_operand {
                parsed.operands.extend(args[index..].iter().cloned());
                return Ok(parsed);
            }
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, glued) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let flag = find_long(&table, name, spec.syntax == Syntax::Gnu)?;
            parsed.given.push(flag.name.to_string());
            take_values(flag, glued, args, &mut index, ctx)?;
            continue;
        }
        // A bundle of short options: `-uo FILE`, `-oFILE`, `-n5`, `-5`.
        let bundle = &arg[1..];
        if bundle.chars().all(|c| c.is_ascii_digit()) && table.iter().any(|f| f.name == "-NUM") {
            continue;
        }
        for (at, c) in bundle.char_indices() {
            let spelled = format!("-{c}");
            let Some(flag) = table.iter().find(|f| f.name == spelled) else {
                return Err(format!("the flag `{spelled}` (in `{arg}`) is not known to be harmless"));
            };
            parsed.given.push(flag.name.to_string());
            let rest = &bundle[at + c.len_utf8()..];
            match flag.values {
                Values::None => continue,
                Values::Optional => break, // the rest of the bundle is its value
                Values::Required(_) => {
                    take_values(flag, (!rest.is_empty()).then_some(rest), args, &mut index, ctx)?;
                    break;
                }
            }
        }
    }
    Ok(parsed)
}

/// The flag a long option names: exactly, or (for `getopt_long`) by a
/// prefix. A prefix is taken only when it matches one harmless flag; if the
/// command knows other flags with that prefix, `getopt_long` rejects it as
/// ambiguous, which runs nothing.
fn find_long<'a>(table: &'a [Flag<'a>], name: &str, abbreviations: bool) -> Result<&'a Flag<'a>, String> {
    let spelled = format!("--{name}");
    if let Some(flag) = table.iter().find(|f| f.name == spelled) {
        return Ok(flag);
    }
    if abbreviations && !name.is_empty() {
        let matches: Vec<&Flag<'_>> = table.iter().filter(|f| f.name.starts_with(&spelled) && f.name.starts_with("--")).collect();
        if let [only] = matches.as_slice() {
            return Ok(only);
        }
    }
    Err(format!("the flag `{spelled}` is not known to be harmless"))
}

fn take_values(flag: &Flag<'_>, glued: Option<&str>, args: &[String], index: &mut usize, ctx: Context<'_>) -> Result<(), String> {
    match flag.values {
        Values::None if glued.is_some() => Err(format!("`{}` takes no value", flag.name)),
        Values::None | Values::Optional => Ok(()),
        Values::Required(_) => {
            let kinds = flag.values.kinds();
            let mut values = Vec::new();
            let mut glued = glued;
            for _ in &kinds {
                match glued.take() {
                    Some(value) => values.push(value.to_string()),
                    None => {
                        let Some(next) = args.get(*index) else { return Err(format!("`{}` lacks its value", flag.name)) };
                        *index += 1;
                        values.push(next.clone());
                    }
                }
            }
            for (kind, value) in kinds.iter().zip(&values) {
                if *kind == ValueKind::Path {
                    check_path(value, ctx)?;
                }
            }
            Ok(())
        }
    }
}

/// `find [-H|-L|-P] PATH… EXPRESSION`: every expression word must be a
/// harmless primary, with its values.
fn check_find(spec: &Spec, args: &[String], ctx: Context<'_>) -> Result<(), String> {
    let table: Vec<Flag<'_>> = spec.flags().collect();
    let is_expression = |a: &str| a.starts_with('-') || matches!(a, "!" | "(" | ")" | ",");
    let mut index = 0;
    while index < args.len() && matches!(args[index].as_str(), "-H" | "-L" | "-P") {
        index += 1;
    }
    while index < args.len() && !is_expression(&args[index]) {
        check_path(&args[index], ctx)?;
        index += 1;
    }
    if index == 0 || args[..index].iter().all(|a| matches!(a.as_str(), "-H" | "-L" | "-P")) {
        check_path(".", ctx)?;
    }
    while index < args.len() {
        let word = &args[index];
        index += 1;
        let Some(flag) = table.iter().find(|f| f.name == word.as_str()) else {
            return Err(format!("`{word}` is not known to be harmless"));
        };
        take_values(flag, None, args, &mut index, ctx)?;
    }
    Ok(())
}

/// The files `tee` writes, or why it is not only writing files.
pub fn tee_targets(words: &[String]) -> Result<Vec<String>, String> {
    let spec = Spec { name: "tee", syntax: Syntax::Gnu, flags: &[], operands: Operands::Text, subcommands: &[], requires: &[] };
    let flags = ["-a", "-i", "-p", "--append", "--ignore-interrupts", "--output-error=?"];
    let everywhere = [PathBuf::from("/")];
    let ctx = Context { cwd: Some(Path::new("/")), roots: &everywhere };
    parse_flags(&spec, &flags, words.get(1..).unwrap_or(&[]), false, ctx).map(|p| p.operands)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// One line per command: `ok` or why it is not read-only, judged in a
    /// workspace holding `src/`, `notes.txt` and a link `out` to `/tmp`.
    fn judge(commands: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("notes.txt"), "x").unwrap();
        crate::platform::symlink("/tmp", root.join("out")).unwrap();
        let roots = [root.clone()];
        let ctx = Context { cwd: Some(&root), roots: &roots };
        let mut out = String::new();
        for line in commands.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let words: Vec<String> = line.split(' ').map(String::from).collect();
            let verdict = read_only_problem(&words, ctx).unwrap_or_else(|| "ok".into());
            out.push_str(&format!("{line} => {verdict}\n"));
        }
        out.replace(&root.display().to_string(), "ROOT")
    }

    // Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke).
    #[cfg(unix)]
    #[test]
    fn option_spellings_are_read_as_the_command_reads_them() {
        expect_test::expect![[r#"
            sort -u notes.txt => ok
            sort -uo notes.txt x => `sort -uo notes.txt x` is not known to be read-only: the flag `-o` (in `-uo`) is not known to be harmless
            sort -onotes.txt x => `sort -onotes.txt x` is not known to be read-only: the flag `-o` (in `-onotes.txt`) is not known to be harmless
            sort --outp=notes.txt x => `sort --outp=notes.txt x` is not known to be read-only: the flag `--outp` is not known to be harmless
            sort --rev notes.txt => ok
            sort --compress-program=sh x => `sort --compress-program=sh x` is not known to be read-only: the flag `--compress-program` is not known to be harmless
            sort -k2 -t, notes.txt => ok
            uniq notes.txt => ok
            uniq notes.txt -- -out => `uniq notes.txt -- -out` is not known to be read-only: more than 1 file operand(s): the next one is written
            uniq notes.txt out => `uniq notes.txt out` is not known to be read-only: more than 1 file operand(s): the next one is written
            head -5 notes.txt => ok
            head -n5 notes.txt => ok
            grep -rn fn src => ok
            grep -e -exec src => ok
            grep -A 2 x notes.txt => ok
            grep x /etc/passwd => `grep x /etc/passwd` is not known to be read-only: `/etc/passwd` is outside the workspace
            rg --pre=sh x => `rg --pre=sh x` is not known to be read-only: the flag `--pre` is not known to be harmless
            rg --pr=sh x => `rg --pr=sh x` is not known to be read-only: the flag `--pr` is not known to be harmless
            rg -uu x src => ok
            rg --hidden -g *.rs x => ok
            fd -x rm => `fd -x rm` is not known to be read-only: the flag `-x` (in `-x`) is not known to be harmless
            fd -e rs => ok
            tree -o notes.txt => `tree -o notes.txt` is not known to be read-only: the flag `-o` (in `-o`) is not known to be harmless
            tree -L 2 src => ok
            find . -name x -delete => `find . -name x -delete` is not known to be read-only: `-delete` is not known to be harmless
            find . -fprint notes.txt => `find . -fprint notes.txt` is not known to be read-only: `-fprint` is not known to be harmless
            find . -exec rm {} ; => `find . -exec rm {} ;` is not known to be read-only: `-exec` is not known to be harmless
            find src -name -delete => ok
            find / -name x => `find / -name x` is not known to be read-only: `/` is outside the workspace
            find -name x => ok
            cat out/x => `cat out/x` is not known to be read-only: `out/x` is outside the workspace
            cat src/../notes.txt => ok
            cat ../x => `cat ../x` is not known to be read-only: `../x` is outside the workspace
            git status => ok
            git -c core.pager=sh log => `git -c core.pager=sh log` is not known to be read-only: the flag `-c` (in `-c`) is not known to be harmless
            git grep -O x => `git grep -O x` is not known to be read-only: the flag `-O` (in `-O`) is not known to be harmless
            git grep --open x => `git grep --open x` is not known to be read-only: the flag `--open` is not known to be harmless
            git log --oneline -5 => ok
            git log --outp=x => `git log --outp=x` is not known to be read-only: the flag `--outp` is not known to be harmless
            git diff --ext-diff => `git diff --ext-diff` is not known to be read-only: the flag `--ext-diff` is not known to be harmless
            git diff --stat HEAD~1 -- src => ok
            git branch -D main => `git branch -D main` is not known to be read-only: the flag `-D` (in `-D`) is not known to be harmless
            git branch newname => `git branch newname` is not known to be read-only: the operand `newname`
            git branch -a => ok
            git config user.name x => `git config user.name x` is not known to be read-only: without one of -l, --list, --get, --get-all, --get-regexp, --get-urlmatch it may write
            git config --get user.name => ok
            git stash list => ok
            git stash drop => `git stash drop` is not known to be read-only: `drop` is not a known read-only subcommand
            git --no-pager log => ok
            cargo check => `cargo check` is not known to be read-only: `check` is not a known read-only subcommand
            cargo --version => ok
            date +%F => ok
            date 0101 => `date 0101` is not known to be read-only: `0101` is not a `+FORMAT`
            date -s x => `date -s x` is not known to be read-only: the flag `-s` (in `-s`) is not known to be harmless
            timeout 5 ls => ok
            timeout 5 rm x => `timeout 5 rm x` runs a command not known to be read-only (`rm x` is not known to be read-only)
            timeout -s KILL 5 cat notes.txt => ok
            nice -n 5 touch x => `nice -n 5 touch x` runs a command not known to be read-only (`touch x` is not known to be read-only)
            command -v rm => ok
            command rm x => `command rm x` runs a command not known to be read-only (`rm x` is not known to be read-only)
            /bin/ls => `/bin/ls` runs `/bin/ls`, a program named by its path, not a known command
            ./ls => `./ls` runs `./ls`, a program named by its path, not a known command
            xargs -I ls touch p => `xargs -I ls touch p` is not known to be read-only
            jq .a notes.txt => ok
            jq --rawfile x /etc/passwd . => `jq --rawfile x /etc/passwd .` is not known to be read-only: `/etc/passwd` is outside the workspace
            wc --files0-from=list => `wc --files0-from=list` is not known to be read-only: the flag `--files0-from` is not known to be harmless
            ls --color=never src => ok
            ls --col src => ok
            echo -- -delete => ok
        "#]]
        .assert_eq(&judge(
            "
            sort -u notes.txt
            sort -uo notes.txt x
            sort -onotes.txt x
            sort --outp=notes.txt x
            sort --rev notes.txt
            sort --compress-program=sh x
            sort -k2 -t, notes.txt
            uniq notes.txt
            uniq notes.txt -- -out
            uniq notes.txt out
            head -5 notes.txt
            head -n5 notes.txt
            grep -rn fn src
            grep -e -exec src
            grep -A 2 x notes.txt
            grep x /etc/passwd
            rg --pre=sh x
            rg --pr=sh x
            rg -uu x src
            rg --hidden -g *.rs x
            fd -x rm
            fd -e rs
            tree -o notes.txt
            tree -L 2 src
            find . -name x -delete
            find . -fprint notes.txt
            find . -exec rm {} ;
            find src -name -delete
            find / -name x
            find -name x
            cat out/x
            cat src/../notes.txt
            cat ../x
            git status
            git -c core.pager=sh log
            git grep -O x
            git grep --open x
            git log --oneline -5
            git log --outp=x
            git diff --ext-diff
            git diff --stat HEAD~1 -- src
            git branch -D main
            git branch newname
            git branch -a
            git config user.name x
            git config --get user.name
            git stash list
            git stash drop
            git --no-pager log
            cargo check
            cargo --version
            date +%F
            date 0101
            date -s x
            timeout 5 ls
            timeout 5 rm x
            timeout -s KILL 5 cat notes.txt
            nice -n 5 touch x
            command -v rm
            command rm x
            /bin/ls
            ./ls
            xargs -I ls touch p
            jq .a notes.txt
            jq --rawfile x /etc/passwd .
            wc --files0-from=list
            ls --color=never src
            ls --col src
            echo -- -delete
            ",
        ));
    }

    #[test]
    fn tee_names_the_files_it_writes() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(tee_targets(&words("tee -a a b")).unwrap(), ["a", "b"]);
        assert_eq!(tee_targets(&words("tee -- -a")).unwrap(), ["-a"]);
        assert!(tee_targets(&words("tee --bogus a")).is_err());
    }
}
