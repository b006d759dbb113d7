//! Permission rules: `Tool` or `Tool(pattern)`, matched on what a call
//! does (its [`ToolKind`]: paths, command, URL), never on its raw input.
//!
//! | rule | matches |
//! |---|---|
//! | `run_shell` | every shell command |
//! | `run_shell(git status)` | the simple command `git status` exactly |
//! | `run_shell(cargo test:*)` | simple commands starting with the words `cargo test` |
//! | `edit_file(src/**)`, `write_file(…)` | edits (by any tool) of paths matching the glob |
//! | `read_file(./.env)`, `grep_search(…)`, `list_files(…)` | reads of paths matching the glob |
//! | `web_fetch(domain:docs.rs)` | fetches from that host (`*.docs.rs`: its subdomains) |
//! | `mcp__github__*`, any other name | tools with that name (`*` is a wildcard) |
//!
//! Claude Code's tool names are read as Tandem's, so a rule copied from
//! `.claude/settings.json` means the same here: `Bash` is `run_shell`,
//! `Read` is `read_file`, `Edit`/`MultiEdit`/`NotebookEdit` are `edit_file`,
//! `Write` is `write_file`, `WebFetch` is `web_fetch`, `Grep` is
//! `grep_search`, `Glob` and `LS` are `list_files`, `Task` is `agent`
//! (`Bash(rm:*)`, `Read(./.env)`). A rule naming no tool Tandem knows (nor
//! an `mcp__` tool) matches nothing: [`unknown_tool`] says so.
//!
//! A rule names a *kind* through any tool of that kind: `edit_file(src/**)`
//! also covers `write_file` on `src/a.rs`. Path globs (`*` stays inside one
//! folder, `**` crosses folders): `//abs/path` is absolute, `~/path` is in
//! the home folder, `/path`, `./path` and `dir/path` are relative to the
//! workspace root, and a bare name without `/` (`.env`, `*.pem`) matches at
//! any depth. A shell command is matched one simple command at a time (see
//! [`super::shell`]).

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

use super::shell::SimpleCommand;
use super::ToolKind;
use crate::scope::Scope;

/// `permissions`: rules as written (`Tool` or `Tool(pattern)`), each with
/// the layer it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionRules {
    pub allow: Vec<(Scope, String)>,
    pub ask: Vec<(Scope, String)>,
    pub deny: Vec<(Scope, String)>,
}

/// The kind of call a rule's tool name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Execute,
    Edit,
    Read,
    Fetch,
    /// Matched on the tool's name (MCP tools and others).
    Named,
}

/// Tandem's built-in tools (kept equal to the registry by a test).
pub const KNOWN_TOOLS: &[&str] = &[
    "read_file", "write_file", "edit_file", "list_files", "grep_search", "run_shell", "web_fetch", "tool_search", "skill", "agent",
    "enter_plan_mode", "exit_plan_mode", "todo_write", "task_list", "task_output", "task_stop", "remember",
];

/// Claude Code's name for a tool, as Tandem's.
pub fn tandem_name(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "Bash" => "run_shell",
        "Read" => "read_file",
        "Edit" | "MultiEdit" | "NotebookEdit" => "edit_file",
        "Write" => "write_file",
        "WebFetch" => "web_fetch",
        "Grep" => "grep_search",
        "Glob" | "LS" => "list_files",
        "Task" => "agent",
        "TodoWrite" => "todo_write",
        "BashOutput" | "TaskOutput" => "task_output",
        "KillShell" | "KillBash" | "TaskStop" => "task_stop",
        _ => return None,
    })
}

/// Why a rule can match no tool, if it cannot: it names neither a tool
/// Tandem knows, nor Claude Code's name for one, nor an MCP tool.
pub fn unknown_tool(rule: &Rule) -> Option<String> {
    let tool = rule.tool.as_str();
    if KNOWN_TOOLS.contains(&tool) || tool.starts_with("mcp__") || (tool.contains('*') && KNOWN_TOOLS.iter().any(|k| name_matches(tool, k))) {
        return None;
    }
    Some(format!("\"{rule}\" names no tool Tandem knows, so it matches nothing (tools: {}; Claude Code's names and mcp__server__tool work too)", KNOWN_TOOLS.join(", ")))
}

pub fn family_of(tool: &str) -> Family {
    match tool {
        "run_shell" => Family::Execute,
        "edit_file" | "write_file" => Family::Edit,
        "read_file" | "grep_search" | "list_files" => Family::Read,
        "web_fetch" => Family::Fetch,
        _ => Family::Named,
    }
}

/// A parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub tool: String,
    pub pattern: Option<Pattern>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// `cargo test:*` (prefix) or `git status` (exact), as words.
    Command { words: Vec<String>, prefix: bool },
    /// A path glob as written.
    Path(String),
    /// `domain:HOST` or `domain:*.HOST`.
    Domain(String),
}

impl Rule {
    pub fn parse(text: &str) -> Result<Rule, String> {
        let text = text.trim();
        let (tool, pattern) = match text.find('(') {
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err("a rule is Tool or Tool(pattern), with the closing parenthesis last".into());
                };
                (text[..open].trim(), Some(inner.trim()))
            }
            None => (text, None),
        };
        if tool.is_empty() || !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*') {
            return Err(format!("\"{tool}\" is not a tool name"));
        }
        let tool = tandem_name(tool).unwrap_or(tool);
        let pattern = match pattern {
            None | Some("*") | Some("") => None,
            Some(p) => Some(parse_pattern(family_of(tool), tool, p)?),
        };
        Ok(Rule { tool: tool.to_string(), pattern })
    }

    pub fn family(&self) -> Family {
        family_of(&self.tool)
    }

    /// The rule covers this simple command (for `run_shell` rules).
    pub fn matches_command(&self, command: &SimpleCommand) -> bool {
        if self.family() != Family::Execute {
            return false;
        }
        match &self.pattern {
            None => true,
            Some(Pattern::Command { words, prefix }) => {
                !command.dynamic_name
                    && if *prefix {
                        command.words.len() >= words.len() && command.words[..words.len()] == words[..]
                    } else {
                        command.words == *words
                    }
            }
            Some(_) => false,
        }
    }

    /// The rule covers a command the shell runs (for deny and ask rules):
    /// as [`Rule::matches_command`], but on the command's basename, so
    /// `run_shell(rm:*)` covers `/bin/rm f`.
    pub fn matches_run(&self, command: &SimpleCommand) -> bool {
        let base = |words: &[String]| -> Vec<String> {
            let mut words = words.to_vec();
            if let Some(first) = words.first_mut() {
                *first = super::shell::base_name(first).to_string();
            }
            words
        };
        match &self.pattern {
            Some(Pattern::Command { words, prefix }) => {
                let rule = Rule { tool: self.tool.clone(), pattern: Some(Pattern::Command { words: base(words), prefix: *prefix }) };
                rule.matches_command(&SimpleCommand { words: base(&command.words), ..command.clone() })
            }
            _ => self.matches_command(command),
        }
    }

    /// The rule covers this call, for every kind but `Execute` (whose
    /// commands are matched one by one, [`Rule::matches_command`]).
    pub fn matches(&self, tool: &str, kind: &ToolKind, places: &Places) -> bool {
        match (self.family(), kind) {
            (Family::Named, _) => name_matches(&self.tool, tool),
            (Family::Edit, ToolKind::Edit { path }) => self.path_matches(path, places),
            (Family::Read, ToolKind::Read { paths }) => match &self.pattern {
                None => true,
                Some(_) => paths.iter().any(|p| self.path_matches(p, places)),
            },
            (Family::Fetch, ToolKind::Fetch { url }) => match &self.pattern {
                None => true,
                Some(Pattern::Domain(domain)) => host_of(url).is_some_and(|host| domain_matches(domain, &host)),
                Some(_) => false,
            },
            _ => false,
        }
    }

    fn path_matches(&self, path: &Path, places: &Places) -> bool {
        match &self.pattern {
            None => true,
            // The path as named and where its symlinks lead: a rule on
            // `secret.txt` covers a link to it.
            Some(Pattern::Path(glob)) => {
                places.glob_matches(glob, path) || resolved(path).is_some_and(|real| real != path && places.glob_matches(glob, &real))
            }
            Some(_) => false,
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.pattern {
            None => write!(f, "{}", self.tool),
            Some(Pattern::Command { words, prefix }) => {
                let words: Vec<String> = words.iter().map(|w| quote_word(w)).collect();
                write!(f, "{}({}{})", self.tool, words.join(" "), if *prefix { ":*" } else { "" })
            }
            Some(Pattern::Path(glob)) => write!(f, "{}({glob})", self.tool),
            Some(Pattern::Domain(domain)) => write!(f, "{}(domain:{domain})", self.tool),
        }
    }
}

/// Where `path` really is: its symlinks followed (the longest existing
/// part canonicalized, the rest kept).
fn resolved(path: &Path) -> Option<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut out = canonical;
            out.extend(rest.iter().rev());
            return Some(out);
        }
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?.to_path_buf();
    }
}

fn quote_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

fn parse_pattern(family: Family, tool: &str, pattern: &str) -> Result<Pattern, String> {
    match family {
        Family::Execute => {
            let (command, prefix) = match pattern.strip_suffix(":*") {
                Some(command) => (command.trim(), true),
                None => (pattern, false),
            };
            let words = super::shell::split_words(command)
                .ok_or_else(|| format!("\"{command}\" is not one simple command (write `cargo test:*` or `git status`)"))?;
            Ok(Pattern::Command { words, prefix })
        }
        Family::Edit | Family::Read => {
            GlobBuilder::new(pattern).literal_separator(true).build().map_err(|e| format!("not a path glob: {e}"))?;
            Ok(Pattern::Path(pattern.to_string()))
        }
        Family::Fetch => match pattern.strip_prefix("domain:") {
            Some(domain) if !domain.trim().is_empty() && !domain.contains('/') => Ok(Pattern::Domain(domain.trim().to_ascii_lowercase())),
            _ => Err("web_fetch rules name a host: web_fetch(domain:docs.rs)".into()),
        },
        Family::Named => Err(format!(
            "{tool} takes no pattern; patterns are for run_shell, edit_file, write_file, read_file, grep_search, list_files and web_fetch"
        )),
    }
}

fn name_matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == name;
    }
    // A `*` wildcard in a tool name: split on it and find the parts in order.
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = name;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else { return false };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else { return false };
            rest = &rest[at + part.len()..];
        }
    }
    rest.is_empty()
}

pub fn host_of(url: &str) -> Option<String> {
    reqwest::Url::parse(url).ok()?.host_str().map(|h| h.to_ascii_lowercase())
}

fn domain_matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(parent) => host.ends_with(&format!(".{parent}")),
        None => host == pattern,
    }
}

/// What path patterns are relative to.
#[derive(Debug, Clone)]
pub struct Places {
    /// The primary workspace root (canonical).
    pub root: PathBuf,
    pub home: Option<PathBuf>,
}

impl Places {
    /// The absolute glob a path pattern stands for.
    pub fn absolute_glob(&self, pattern: &str) -> Option<String> {
        let escape = |p: &Path| globset::escape(&p.display().to_string());
        if let Some(abs) = pattern.strip_prefix("//") {
            // A Windows drive (`//C:/x`) has no `/` before it.
            let drive = abs.as_bytes().get(..2).is_some_and(|d| d[0].is_ascii_alphabetic() && d[1] == b':');
            return Some(if cfg!(windows) && drive { abs.to_string() } else { format!("/{abs}") });
        }
        if let Some(rest) = pattern.strip_prefix("~/") {
            return self.home.as_ref().map(|h| format!("{}/{rest}", escape(h)));
        }
        let root = escape(&crate::platform::plain_path(&self.root));
        let relative = pattern.strip_prefix("./").or_else(|| pattern.strip_prefix('/'));
        Some(match relative {
            Some(rest) => format!("{root}/{rest}"),
            None if pattern.contains('/') => format!("{root}/{pattern}"),
            None => format!("{root}/**/{pattern}"),
        })
    }

    /// Whether `path` is one the pattern names, in every spelling the file
    /// system opens as the same file: without case where names ignore it
    /// (Windows, macOS: `SECRETS/key` is `secrets/key`), and on Windows
    /// with `\` or `/`, a `\\?\` prefix or trailing dots
    /// ([`crate::platform::path_as_opened`]).
    pub fn glob_matches(&self, pattern: &str, path: &Path) -> bool {
        let Some(glob) = self.absolute_glob(pattern) else { return false };
        let path = crate::platform::path_as_opened(path);
        match GlobBuilder::new(&glob).literal_separator(true).case_insensitive(crate::platform::NAMES_IGNORE_CASE).build() {
            Ok(glob) => glob.compile_matcher().is_match(&*path),
            Err(_) => false,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places { root: PathBuf::from("/work/proj"), home: Some(PathBuf::from("/home/me")) }
    }

    fn command(words: &[&str]) -> SimpleCommand {
        SimpleCommand { words: words.iter().map(|w| w.to_string()).collect(), dynamic_name: false, problem: None }
    }

    /// A path rule holds for every spelling the file system opens as the
    /// same file: on Windows `\\?\`, `\` or `/`, another case, trailing
    /// dots; without case on macOS too; Linux keeps case.
    #[test]
    fn a_path_rule_holds_for_every_spelling_of_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let places = Places { root: root.clone(), home: None };
        let deny = Rule::parse("edit_file(./secrets/**)").unwrap();
        let hits = |path: PathBuf| deny.matches("edit_file", &ToolKind::Edit { path }, &places);
        assert!(hits(root.join("secrets").join("key")));
        assert!(!hits(root.join("public").join("key")));
        assert_eq!(hits(root.join("SECRETS").join("key")), crate::platform::NAMES_IGNORE_CASE);
        if cfg!(windows) {
            let plain = crate::platform::plain_path(&root).into_owned();
            let upper = PathBuf::from(plain.to_string_lossy().to_uppercase());
            for spelling in [plain.join(r"secrets\key"), plain.join("secrets/key"), plain.join(r"Secrets.\key"), plain.join(r"secrets \key"), upper.join(r"SECRETS\KEY")] {
                assert!(hits(spelling.clone()), "{spelling:?}");
            }
            // An absolute rule with a drive.
            let absolute = Rule::parse(&format!("edit_file(//{}/secrets/**)", plain.to_string_lossy().replace('\\', "/"))).unwrap();
            assert!(absolute.matches("edit_file", &ToolKind::Edit { path: root.join(r"SECRETS\key") }, &places));
        }
    }

    #[test]
    fn rules_parse_and_print_back() {
        for text in ["run_shell", "run_shell(cargo test:*)", "run_shell(git status)", "edit_file(src/**)", "read_file(./.env)",
            "web_fetch(domain:docs.rs)", "mcp__github__*", "run_shell(grep 'a b':*)"] {
            assert_eq!(Rule::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(Rule::parse("run_shell(*)").unwrap().to_string(), "run_shell");
        for bad in ["run_shell(", "", "mcp__x(y)", "web_fetch(https://x)", "run_shell(a && b)", "edit_file([)", "a b"] {
            assert!(Rule::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shell_rules_match_words_not_text() {
        let prefix = Rule::parse("run_shell(cargo test:*)").unwrap();
        assert!(prefix.matches_command(&command(&["cargo", "test"])));
        assert!(prefix.matches_command(&command(&["cargo", "test", "--lib"])));
        assert!(!prefix.matches_command(&command(&["cargo", "testing"])));
        assert!(!prefix.matches_command(&command(&["cargo"])));
        let exact = Rule::parse("run_shell(git status)").unwrap();
        assert!(exact.matches_command(&command(&["git", "status"])));
        assert!(!exact.matches_command(&command(&["git", "status", "--porcelain"])));
        let dynamic = SimpleCommand { words: vec!["$".into(), "test".into()], dynamic_name: true, problem: None };
        assert!(!Rule::parse("run_shell($:*)").map(|r| r.matches_command(&dynamic)).unwrap_or(false));
    }

    #[test]
    fn path_rules_match_the_kind_of_any_tool() {
        let p = places();
        let edit = |path: &str| ToolKind::Edit { path: PathBuf::from(path) };
        let src = Rule::parse("edit_file(src/**)").unwrap();
        assert!(src.matches("write_file", &edit("/work/proj/src/a/b.rs"), &p));
        assert!(!src.matches("edit_file", &edit("/work/proj/tests/a.rs"), &p));
        assert!(!src.matches("edit_file", &edit("/work/proj/x/src/a.rs"), &p));
        assert!(!src.matches("read_file", &ToolKind::Read { paths: vec![PathBuf::from("/work/proj/src/a.rs")] }, &p));
        let env = Rule::parse("read_file(./.env)").unwrap();
        let read = |path: &str| ToolKind::Read { paths: vec![PathBuf::from(path)] };
        assert!(env.matches("grep_search", &read("/work/proj/.env"), &p));
        assert!(!env.matches("read_file", &read("/work/proj/sub/.env"), &p));
        let anywhere = Rule::parse("read_file(*.pem)").unwrap();
        assert!(anywhere.matches("read_file", &read("/work/proj/deep/er/key.pem"), &p));
        let star = Rule::parse("edit_file(*.rs)").unwrap();
        assert!(star.matches("edit_file", &edit("/work/proj/a/b.rs"), &p));
        let home = Rule::parse("read_file(~/.ssh/**)").unwrap();
        assert!(home.matches("read_file", &read("/home/me/.ssh/id_rsa"), &p));
        let abs = Rule::parse("edit_file(//etc/*)").unwrap();
        assert!(abs.matches("edit_file", &edit("/etc/hosts"), &p));
        assert!(!abs.matches("edit_file", &edit("/etc/x/hosts"), &p));
    }

    #[test]
    fn fetch_and_named_rules() {
        let p = places();
        let fetch = |url: &str| ToolKind::Fetch { url: url.to_string() };
        let docs = Rule::parse("web_fetch(domain:docs.rs)").unwrap();
        assert!(docs.matches("web_fetch", &fetch("https://docs.rs/serde"), &p));
        assert!(!docs.matches("web_fetch", &fetch("https://docs.rs.evil.com/"), &p));
        assert!(!docs.matches("web_fetch", &fetch("https://evil.com/?docs.rs"), &p));
        let sub = Rule::parse("web_fetch(domain:*.github.com)").unwrap();
        assert!(sub.matches("web_fetch", &fetch("https://api.github.com/x"), &p));
        assert!(!sub.matches("web_fetch", &fetch("https://github.com/x"), &p));
        let mcp = Rule::parse("mcp__github__*").unwrap();
        assert!(mcp.matches("mcp__github__create_issue", &ToolKind::Other, &p));
        assert!(!mcp.matches("mcp__gitlab__x", &ToolKind::Other, &p));
        assert!(!Rule::parse("run_shell").unwrap().matches("run_shell", &ToolKind::Other, &p));
    }

    #[test]
    fn claude_code_names_parse_as_tandems_and_unknown_names_are_named() {
        let mut names = crate::tools::ToolRegistry::builtin().names();
        names.sort();
        let mut known: Vec<String> = KNOWN_TOOLS.iter().map(|s| s.to_string()).collect();
        known.sort();
        assert_eq!(names, known, "KNOWN_TOOLS must list the built-in tools");
        for (claude, tandem) in [
            ("Bash(rm:*)", "run_shell(rm:*)"), ("Read(./.env)", "read_file(./.env)"), ("Edit(src/**)", "edit_file(src/**)"),
            ("Write(*.md)", "write_file(*.md)"), ("WebFetch(domain:docs.rs)", "web_fetch(domain:docs.rs)"), ("Grep(*.pem)", "grep_search(*.pem)"),
            ("Glob", "list_files"), ("Bash", "run_shell"), ("MultiEdit(a.rs)", "edit_file(a.rs)"),
        ] {
            let rule = Rule::parse(claude).unwrap();
            assert_eq!(rule.to_string(), tandem);
            assert_eq!(unknown_tool(&rule), None, "{claude}");
        }
        assert!(Rule::parse("Bash(rm:*)").unwrap().matches_command(&command(&["rm", "-rf", "x"])));
        for known in ["mcp__github__create_issue", "mcp__github__*", "agent", "*_file"] {
            assert_eq!(unknown_tool(&Rule::parse(known).unwrap()), None, "{known}");
        }
        for unknown in ["WebSearch", "bash", "Shell", "run_shel"] {
            let why = unknown_tool(&Rule::parse(unknown).unwrap());
            assert!(why.as_deref().is_some_and(|w| w.contains(unknown) && w.contains("names no tool")), "{unknown}: {why:?}");
        }
    }
}
