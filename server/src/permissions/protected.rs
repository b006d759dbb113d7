//! Protected paths: the files inside a workspace from which something runs
//! code or grants permissions on the user's machine later, outside any
//! sandbox — git's hooks and config (run by the user's next `git commit`),
//! Tandem's and Claude Code's settings, the editor's tasks, the MCP server
//! list, direnv's `.envrc`. A write there by any tool is always asked, with
//! the reason, whatever the mode says ([`super::Policy`] decides it on the
//! call's [`crate::tools::ToolKind`], once for every tool that writes); in
//! `bypassPermissions` the [`Level::Always`] ones are still asked.
//!
//! A path is protected when any of its components inside a workspace root
//! is one of [`NAMES`] (compared without ASCII case: `.GIT` is `.git` on a
//! case-insensitive disk), at any depth (a nested repository's `.git`, a
//! sub-project's `.vscode`), or lies in a folder that is a git directory by
//! git's own test — `HEAD`, `objects/` and `refs/` — whatever its name (a
//! bare repository, the folder a `.git` file's `gitdir:` names, a
//! `commondir`), counting the file being written, so the write that would
//! complete such a folder is asked too. Symlinks are followed: a link to
//! `.git` is `.git`. And every file git reads configuration from, as git
//! reports it (what the repository's config includes, conditionally or
//! not, existing or not), wherever it lies in the workspace, is kept like
//! `.git/config` ([`crate::sandbox::git::config_files`]).

use std::path::{Component, Path, PathBuf};

/// How strictly a protected path is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Asked in every mode but `bypassPermissions`.
    Asked,
    /// Asked in every mode, `bypassPermissions` too: Tandem's own settings
    /// and what makes git run code (hooks, config, where the repository is).
    Always,
}

/// Why a path is protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    /// The component that made it protected, as the path spells it
    /// (`.vscode`): an allow rule names the path when its pattern names this.
    pub name: String,
    /// What it is, for the question ("git's hooks: git runs them").
    pub what: &'static str,
    pub level: Level,
}

/// Names that protect a path at any depth, with what they are.
pub const NAMES: &[(&str, &str, Level)] = &[
    (".tandem", "Tandem's settings: they grant permissions and run hooks", Level::Always),
    (".claude", "Claude Code's settings: they grant permissions and run hooks", Level::Asked),
    (".vscode", "VS Code's settings and tasks: the editor runs them", Level::Asked),
    (".idea", "JetBrains' settings: run configurations run code", Level::Asked),
    (".zed", "Zed's settings and tasks: the editor runs them", Level::Asked),
    (".helix", "Helix's settings: they start language servers", Level::Asked),
    (".devcontainer", "the dev container's settings: they run commands", Level::Asked),
    (".mcp.json", "the MCP server list: servers are programs that run", Level::Asked),
    (".envrc", "direnv runs it when you enter the folder", Level::Asked),
    (".nvim.lua", "Neovim runs it (exrc)", Level::Asked),
    (".nvimrc", "Neovim and Vim run it (exrc)", Level::Asked),
    (".exrc", "Vim runs it (exrc)", Level::Asked),
    (".dir-locals.el", "Emacs applies it (directory variables can run code)", Level::Asked),
    (".gitmodules", "git's submodule list: where git fetches code from", Level::Asked),
    (".gitattributes", "git's attributes: they pick filters and diff drivers", Level::Asked),
    (".lfsconfig", "git-lfs's config", Level::Asked),
    (".git", "git's own folder", Level::Asked),
];

/// Inside a git directory, what makes git run code or look elsewhere.
const GIT_CODE: &[&str] = &["hooks", "config", "config.worktree", "commondir", "gitdir", "info"];

/// Where Tandem keeps plans inside `.tandem`: files for the user to read,
/// which nothing runs (plan mode writes them).
const TANDEM_PLANS: &str = "plans";

/// What a file git reads its configuration from is, for the question.
pub const GIT_CONFIG_WHAT: &str = "a file git reads its config from (the repository's config includes it): git runs the programs it names";

/// Why `path` (absolute) is protected, if it is, inside one of `roots`
/// (canonical). The path need not exist.
pub fn protected(path: &Path, roots: &[PathBuf]) -> Option<Protected> {
    let lexical = classify(path, roots);
    let resolved = resolve_existing(path);
    let real = if resolved != path { classify(&resolved, roots) } else { None };
    let found = match (lexical, real) {
        (Some(a), Some(b)) => Some(if b.level > a.level { b } else { a }),
        (a, b) => a.or(b),
    };
    if found.as_ref().is_some_and(|f| f.level == Level::Always) || !roots.iter().any(|root| path.starts_with(root) || resolved.starts_with(root)) {
        return found;
    }
    // A file git reads config from wherever it is in the workspace (a
    // shared `tools/gitconfig` the repository's config includes), as git
    // itself says now: its `core.fsmonitor` runs at the user's next
    // `git status`.
    let config_files = crate::sandbox::git::config_files(roots);
    if config_files.iter().any(|file| file == path || *file == resolved) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Some(Protected { name, what: GIT_CONFIG_WHAT, level: Level::Always });
    }
    found
}

fn classify(path: &Path, roots: &[PathBuf]) -> Option<Protected> {
    let root = roots.iter().filter(|root| path.starts_with(root)).max_by_key(|root| root.as_os_str().len())?;
    let inside: Vec<String> = path
        .strip_prefix(root)
        .ok()?
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let mut folder = root.clone();
    for (index, name) in inside.iter().enumerate() {
        let rest = &inside[index + 1..];
        if let Some(found) = by_name(name, rest) {
            return Some(found);
        }
        folder.push(name);
        // A folder that is a git directory by git's test, whatever its name.
        if !rest.is_empty() && is_git_dir(&folder, path) {
            let rest: Vec<String> = rest.iter().map(|part| crate::platform::name_as_opened(part)).collect();
            return Some(in_git_dir(name, &rest));
        }
    }
    None
}

/// The protection a component gives, with the components after it.
fn by_name(name: &str, rest: &[String]) -> Option<Protected> {
    by_name_on(name, rest, crate::platform::NAMES_IGNORE_CASE, cfg!(windows))
}

/// [`by_name`] for a file system that ignores case or not, and that is
/// Windows' or not (whose names drop trailing dots and spaces): `.GIT. `
/// is `.git` there, and `.git/HOOKS` its hooks where case is ignored.
fn by_name_on(name: &str, rest: &[String], ignore_case: bool, windows: bool) -> Option<Protected> {
    // The names are compared without case on every system: a stricter
    // question costs little where the disk tells `.GIT` from `.git`.
    let lower = crate::platform::name_as_opened_on(name, true, windows);
    let (known, what, level) = NAMES.iter().find(|(known, _, _)| *known == lower)?;
    if *known == ".git" {
        // `.git` itself (as a file it says where the repository is) and
        // what in it runs code are kept in every mode.
        let rest: Vec<String> = rest.iter().map(|part| crate::platform::name_as_opened_on(part, ignore_case, windows)).collect();
        return Some(in_git_dir(name, &rest));
    }
    let first = rest.first().map(|part| crate::platform::name_as_opened_on(part, ignore_case, windows));
    if *known == ".tandem" && first.is_some_and(|first| first == TANDEM_PLANS) && rest.len() > 1 {
        return None;
    }
    Some(Protected { name: name.to_string(), what, level: *level })
}

fn in_git_dir(name: &str, rest: &[String]) -> Protected {
    let runs_code = match rest.first() {
        None => true,
        // A submodule's own git directory (`.git/modules/NAME/…`), or a
        // linked worktree's (`.git/worktrees/NAME/…`).
        Some(first) if first == "modules" || first == "worktrees" => rest.iter().skip(2).take(1).any(|part| GIT_CODE.contains(&part.as_str())) || rest.len() <= 2,
        Some(first) => GIT_CODE.contains(&first.as_str()),
    };
    if runs_code {
        Protected { name: name.to_string(), what: "git's hooks and config: git runs code from them and they say where the repository is", level: Level::Always }
    } else {
        Protected { name: name.to_string(), what: "git's own folder: the repository's history and state", level: Level::Asked }
    }
}

/// git's test for a git directory (`HEAD`, `objects/`, `refs/`), counting
/// `writing` as if it were there already.
fn is_git_dir(folder: &Path, writing: &Path) -> bool {
    let has = |name: &str, dir: bool| {
        let path = folder.join(name);
        writing == path || writing.starts_with(&path) || std::fs::metadata(&path).is_ok_and(|m| if dir { m.is_dir() } else { m.is_file() })
    };
    has("HEAD", false) && has("objects", true) && has("refs", true)
}

/// `path` with the symlinks of its longest existing part followed (the
/// rest appended as written).
fn resolve_existing(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut tail = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            out.extend(tail.iter().rev());
            return out;
        }
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    // Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke).
    #[cfg(unix)]
    #[test]
    fn what_is_protected_and_how_strictly() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("bare.git/objects")).unwrap();
        std::fs::create_dir_all(root.join("bare.git/refs")).unwrap();
        std::fs::write(root.join("bare.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(root.join("almost/objects")).unwrap();
        std::fs::create_dir_all(root.join("almost/refs")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        crate::platform::symlink(root.join(".git"), root.join("gitlink")).unwrap();
        let roots = [root.clone()];
        let paths = [
            ".git/hooks/pre-commit", ".git/config", ".git", ".git/objects/ab/cdef", ".git/modules/sub/hooks/post-checkout",
            ".git/worktrees/wt/commondir", "sub/.git/config", "vendor/lib/.GIT/hooks/pre-push", "gitlink/hooks/pre-commit",
            "bare.git/config", "bare.git/hooks/x", "almost/HEAD", "almost/notes.txt", ".tandem/settings.json",
            ".tandem/plans/plan-1.md", ".tandem/plans", ".claude/settings.json", ".vscode/tasks.json", "web/.vscode/settings.json",
            ".idea/workspace.xml", ".mcp.json", ".envrc", ".gitmodules", ".gitattributes", ".nvim.lua", ".dir-locals.el",
            "src/main.rs", "src/.gitignore", "docs/tandem.md", "README.md",
        ];
        let out: String = paths
            .iter()
            .map(|p| match protected(&root.join(p), &roots) {
                Some(found) => format!("{p}: {:?} ({}) {}\n", found.level, found.name, found.what),
                None => format!("{p}: -\n"),
            })
            .collect();
        expect_test::expect![[r#"
            .git/hooks/pre-commit: Always (.git) git's hooks and config: git runs code from them and they say where the repository is
            .git/config: Always (.git) git's hooks and config: git runs code from them and they say where the repository is
            .git: Always (.git) git's hooks and config: git runs code from them and they say where the repository is
            .git/objects/ab/cdef: Asked (.git) git's own folder: the repository's history and state
            .git/modules/sub/hooks/post-checkout: Always (.git) git's hooks and config: git runs code from them and they say where the repository is
            .git/worktrees/wt/commondir: Always (.git) git's hooks and config: git runs code from them and they say where the repository is
            sub/.git/config: Always (.git) git's hooks and config: git runs code from them and they say where the repository is
            vendor/lib/.GIT/hooks/pre-push: Always (.GIT) git's hooks and config: git runs code from them and they say where the repository is
            gitlink/hooks/pre-commit: Always (.git) git's hooks and config: git runs code from them and they say where the repository is
            bare.git/config: Always (bare.git) git's hooks and config: git runs code from them and they say where the repository is
            bare.git/hooks/x: Always (bare.git) git's hooks and config: git runs code from them and they say where the repository is
            almost/HEAD: Asked (almost) git's own folder: the repository's history and state
            almost/notes.txt: -
            .tandem/settings.json: Always (.tandem) Tandem's settings: they grant permissions and run hooks
            .tandem/plans/plan-1.md: -
            .tandem/plans: Always (.tandem) Tandem's settings: they grant permissions and run hooks
            .claude/settings.json: Asked (.claude) Claude Code's settings: they grant permissions and run hooks
            .vscode/tasks.json: Asked (.vscode) VS Code's settings and tasks: the editor runs them
            web/.vscode/settings.json: Asked (.vscode) VS Code's settings and tasks: the editor runs them
            .idea/workspace.xml: Asked (.idea) JetBrains' settings: run configurations run code
            .mcp.json: Asked (.mcp.json) the MCP server list: servers are programs that run
            .envrc: Asked (.envrc) direnv runs it when you enter the folder
            .gitmodules: Asked (.gitmodules) git's submodule list: where git fetches code from
            .gitattributes: Asked (.gitattributes) git's attributes: they pick filters and diff drivers
            .nvim.lua: Asked (.nvim.lua) Neovim runs it (exrc)
            .dir-locals.el: Asked (.dir-locals.el) Emacs applies it (directory variables can run code)
            src/main.rs: -
            src/.gitignore: -
            docs/tandem.md: -
            README.md: -
        "#]]
        .assert_eq(&out);
        assert_eq!(protected(Path::new("/elsewhere/.git/config"), &roots), None, "outside the roots the tools refuse it anyway");
    }

    #[test]
    fn every_windows_spelling_of_git_hooks_is_git_hooks() {
        let rest = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        // `C:\Repo\.GIT\HOOKS\pre-commit`, `.git.\hooks\…`, `.git \Config`.
        for (name, parts) in [(".GIT", &["HOOKS", "pre-commit"][..]), (".git.", &["hooks", "pre-commit"][..]), (".git ", &["Config"][..]), (".Git", &["Modules", "sub", "HOOKS", "x"][..])] {
            let found = by_name_on(name, &rest(parts), true, true).unwrap_or_else(|| panic!("{name}/{parts:?} is not protected"));
            assert_eq!(found.level, Level::Always, "{name}/{parts:?}");
        }
        // macOS ignores case but keeps trailing dots.
        assert_eq!(by_name_on(".git", &rest(&["HOOKS", "pre-commit"]), true, false).map(|p| p.level), Some(Level::Always));
        // Linux tells `HOOKS` from `hooks` (the folder git runs is `hooks`) and keeps `.git.` a name of its own.
        assert_eq!(by_name_on(".git", &rest(&["HOOKS", "pre-commit"]), false, false).map(|p| p.level), Some(Level::Asked));
        assert_eq!(by_name_on(".git.", &rest(&["hooks", "pre-commit"]), false, false), None);
    }

    // Unix only: it runs git, which the Wine prefix here does not have.
    #[cfg(unix)]
    #[test]
    fn a_file_the_repositorys_git_config_includes_is_kept_like_git_config() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        let roots = [root.clone()];
        std::fs::create_dir_all(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/gitconfig"), "").unwrap();
        assert_eq!(protected(&root.join("tools/gitconfig"), &roots), None, "not included yet");
        crate::sandbox::git::tests::repository_with_includes(&root);
        for file in ["tools/gitconfig", "tools/nested.cfg", "branch.cfg", "./tools/../tools/gitconfig"] {
            let found = protected(&root.join(file), &roots).unwrap_or_else(|| panic!("{file} is not protected"));
            assert_eq!((found.level, found.what), (Level::Always, GIT_CONFIG_WHAT), "{file}");
        }
        assert_eq!(protected(&root.join("tools/other.txt"), &roots), None);
    }
}
