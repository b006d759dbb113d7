//! What makes git run code, kept from a command's reach (issue 27):
//!
//! - [`config_overrides`]: every shell command (in the sandbox or not)
//!   runs with git's code-running keys set on git's command line, through
//!   the `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`
//!   variables git (2.31 and later) reads above every config file: a
//!   repository's `core.fsmonitor`, `core.hooksPath`, pager, editor, ssh
//!   command, external diff or signing program is not what `git status`
//!   runs, and an embedded bare repository is not discovered
//!   (`safe.bareRepository=explicit`).
//!   The repository's own keys ([`repository_overrides`]) are read again
//!   as each command starts: a config an earlier step of the run changed
//!   (one the user let it write; any, without the sandbox) is no more
//!   able to run code in the next command than at the start.
//! - [`config_files`]: every file git reads configuration from (what a
//!   repository's config includes, conditionally or not, missing or not),
//!   by asking git: protected like `.git/config` by the permission layer
//!   and held read-only for approved commands. Git's answer is kept
//!   between commands while nothing it was read from changed
//!   ([`super::cache`]).
//! - [`repositories`]: the git directories an approved command must not
//!   change — the workspace's (also when `.git` is a file naming a
//!   `gitdir:` elsewhere, and its `commondir`), nested repositories', a
//!   repository's in a parent folder — and `core.hooksPath` when it points
//!   into a folder the command may write. Bubblewrap keeps their config and
//!   hooks read-only and pins each `.git` folder in place (a mount point
//!   cannot be renamed, so `mv .git x && git init` cannot swap in a new
//!   one).

use std::path::{Path, PathBuf};

/// The code-running keys every command's git gets, and their harmless values.
pub const OVERRIDES: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("gpg.program", "gpg"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.x509.program", "gpgsm"),
    ("safe.bareRepository", "explicit"),
    ("protocol.ext.allow", "never"),
];

/// Add [`OVERRIDES`] and `more` (a repository's own, from
/// [`repository_overrides`]) to the variables a command gets (`set`),
/// after any `GIT_CONFIG_n` pairs already there (the user's own settings'
/// `env`).
pub fn config_overrides(set: &mut Vec<(String, String)>, more: &[(String, String)]) {
    let count = |set: &[(String, String)]| set.iter().find(|(name, _)| name == "GIT_CONFIG_COUNT").and_then(|(_, v)| v.trim().parse::<usize>().ok());
    let first = count(set).unwrap_or(0);
    set.retain(|(name, _)| name != "GIT_CONFIG_COUNT");
    let all = OVERRIDES.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).chain(more.iter().cloned());
    let mut n = first;
    for (key, value) in all {
        set.push((format!("GIT_CONFIG_KEY_{n}"), key));
        set.push((format!("GIT_CONFIG_VALUE_{n}"), value));
        n += 1;
    }
    set.push(("GIT_CONFIG_COUNT".to_string(), n.to_string()));
}

/// The code-running keys a repository's own config sets (its `local` and
/// `worktree` scopes, and what they include), each made harmless: aliases
/// that run a shell command (`!…`) say so and fail, filter drivers fail
/// (required: a file is not added or checked out unfiltered), diff text
/// conversions are `cat`, diff commands (`diff.external` too) and merge
/// drivers fail, its remotes' upload and receive programs are git's own,
/// its credential helpers are dropped (the user's kept), its `gitProxy`
/// and `alternateRefsCommand` are none. (The user's global and system
/// config are theirs.)
pub fn repository_overrides(roots: &[PathBuf]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    // The roots' repositories (in a parent folder too) and the nested ones:
    // an override is for every repository, so each one's keys are taken.
    let mut worktrees: Vec<PathBuf> = roots.to_vec();
    for root in roots {
        worktrees.extend(dot_gits_under(root).iter().filter_map(|dot_git| dot_git.parent().map(Path::to_path_buf)));
    }
    worktrees.dedup();
    for worktree in worktrees {
        let output = std::process::Command::new("git")
            .args(["config", "--list", "--show-scope", "--includes", "-z"])
            .current_dir(&worktree)
            .env_remove("GIT_CONFIG_COUNT")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        let Ok(output) = output else { continue };
        if output.status.success() {
            for pair in overrides_for(&String::from_utf8_lossy(&output.stdout)) {
                if !out.contains(&pair) {
                    out.push(pair);
                }
            }
        }
    }
    out
}

/// [`repository_overrides`] of `git config --list --show-scope -z` output:
/// `SCOPE NUL KEY LF VALUE NUL`, entry after entry.
fn overrides_for(listed: &str) -> Vec<(String, String)> {
    let mut tokens = listed.split('\0');
    let mut entries: Vec<(&str, &str, &str)> = Vec::new();
    while let (Some(scope), Some(entry)) = (tokens.next(), tokens.next()) {
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        entries.push((scope, key, value));
    }
    let mut out: Vec<(String, String)> = Vec::new();
    let mut helpers_reset: Vec<&str> = Vec::new();
    for &(scope, key, value) in &entries {
        if !matches!(scope, "local" | "worktree") {
            continue;
        }
        // A credential helper is a program git runs when a remote asks
        // for a password: the repository's are dropped (an empty helper
        // empties git's list) and the user's own (system, global) are
        // named again after it, in their order, so `git push` still finds
        // its credentials.
        if key.starts_with("credential.") && key.ends_with(".helper") {
            if !helpers_reset.contains(&key) {
                helpers_reset.push(key);
                out.push((key.to_string(), String::new()));
                for &(_, _, users) in entries.iter().filter(|(s, k, _)| *k == key && !matches!(*s, "local" | "worktree" | "command")) {
                    out.push((key.to_string(), users.to_string()));
                }
            }
            continue;
        }
        let parts: Vec<&str> = key.split('.').collect();
        let (section, last) = (parts.first().copied().unwrap_or(""), parts.last().copied().unwrap_or(""));
        let harmless: Option<String> = match (section, last) {
            ("alias", _) if value.trim_start().starts_with('!') => {
                let name = &key["alias.".len()..];
                Some(format!("!echo 'tandem: the alias {name} runs a shell command from this repository'\\''s config; it does not run here' >&2; exit 1"))
            }
            // A filter fails loudly rather than changing what is added
            // or checked out (an LFS pointer must not become the file).
            ("filter", "clean" | "smudge" | "process") => Some("false".into()),
            ("diff", "textconv") => Some("cat".into()),
            ("diff", "command" | "external") | ("merge", "driver") => Some("false".into()),
            ("remote", "uploadpack") => Some("git-upload-pack".into()),
            ("remote", "receivepack") => Some("git-receive-pack".into()),
            // The program git:// connections go through, and the one that
            // lists an alternate's refs.
            ("core", "gitproxy") => Some("none".into()),
            ("core", "alternaterefscommand") => Some("true".into()),
            _ => None,
        };
        if let Some(harmless) = harmless {
            if section == "filter" {
                let required = format!("{}.required", &key[..key.len() - last.len() - 1]);
                out.push((required, "true".into()));
            }
            out.push((key.to_string(), harmless));
        }
    }
    out.dedup();
    out
}

/// Files read at most when following includes git did not follow
/// (a false `includeIf`), beyond those git reports.
const MAX_INCLUDED: usize = 64;

/// Every file git reads configuration from for the repositories of
/// `roots` (the roots', one in a parent folder, the nested ones), found by
/// asking git (`git config --list --show-origin --includes`): the config
/// files of each scope and what they include. Also what an include names
/// that git does not read now — a missing file (it could be created), an
/// `includeIf` whose condition is false today (`onbranch:` holds after a
/// checkout) — and what those include in turn. Resolved (absolute, links
/// followed where they exist); missing ones included.
pub fn config_files(roots: &[PathBuf]) -> Vec<PathBuf> {
    view(roots).config_files.clone()
}

/// What git says of the repositories of some roots: the files it reads
/// config from ([`config_files`]) and each root's `core.hooksPath`.
#[derive(Debug, Default)]
struct GitView {
    config_files: Vec<PathBuf>,
    hooks_paths: Vec<Option<PathBuf>>,
}

/// A [`GitView`] kept for the next command, with what it was read from.
struct Viewed {
    roots: Vec<PathBuf>,
    worktrees: Vec<PathBuf>,
    stamps: super::cache::Stamps,
    view: std::sync::Arc<GitView>,
}

/// Views kept at most (one per set of roots: a process serves a few
/// workspaces).
const MAX_VIEWS: usize = 8;

/// The [`GitView`] of `roots`: asked of git (a process per repository
/// and include, a few milliseconds each) only when a file it could have
/// read changed since the last time — the config files it read or that
/// are included, the user's and the system's, and each repository's
/// `.git`, config and `commondir` — or a repository appeared or went
/// ([`super::cache`]). Else the last answer, which git would give again.
fn view(roots: &[PathBuf]) -> std::sync::Arc<GitView> {
    use crate::sync::MutexExt;
    static VIEWS: std::sync::OnceLock<std::sync::Mutex<Vec<Viewed>>> = std::sync::OnceLock::new();
    let views = VIEWS.get_or_init(std::sync::Mutex::default);
    let worktrees = worktrees_of(roots);
    if let Some(viewed) = views.locked().iter().find(|v| v.roots == roots && v.worktrees == worktrees) {
        if viewed.stamps.still_hold() {
            return std::sync::Arc::clone(&viewed.view);
        }
    }
    let (mut stamps, began) = super::cache::Stamps::new();
    for path in config_sources(&worktrees) {
        // A `.git` folder by what it is: every git command adds and
        // removes files in it (index.lock), which git's config is not.
        if path.file_name().is_some_and(|name| name == ".git") {
            stamps.add_entry(&path, began);
        } else {
            stamps.add(&path, began);
        }
    }
    let config_files = config_files_now(&worktrees);
    for file in &config_files {
        stamps.add(file, began);
    }
    let hooks_paths = roots.iter().map(|root| hooks_path(root)).collect();
    let view = std::sync::Arc::new(GitView { config_files, hooks_paths });
    let mut views = views.locked();
    views.retain(|v| v.roots != roots);
    if views.len() >= MAX_VIEWS {
        views.remove(0);
    }
    views.push(Viewed { roots: roots.to_vec(), worktrees, stamps, view: std::sync::Arc::clone(&view) });
    view
}

/// The roots and every folder under them holding a `.git` entry, sorted.
fn worktrees_of(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut worktrees: Vec<PathBuf> = roots.to_vec();
    for root in roots {
        worktrees.extend(dot_gits_under(root).iter().filter_map(|dot_git| dot_git.parent().map(Path::to_path_buf)));
    }
    worktrees.sort();
    worktrees.dedup();
    worktrees
}

/// Files git reads config from in `worktrees` whether or not it lists
/// them (a missing or empty one lists nothing): the system's and the
/// user's, and for each worktree the `.git` entries git finds it by (in it
/// and each folder above it) and its repository's config, worktree
/// config and `commondir`.
fn config_sources(worktrees: &[PathBuf]) -> Vec<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
    let mut out: Vec<PathBuf> = Vec::new();
    out.push(var("GIT_CONFIG_SYSTEM").unwrap_or_else(|| PathBuf::from("/etc/gitconfig")));
    out.extend(git_prefix().map(|prefix| prefix.join("etc/gitconfig")));
    match var("GIT_CONFIG_GLOBAL") {
        Some(global) => out.push(global),
        None => {
            let home = dirs::home_dir();
            out.extend(var("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config"))).map(|dir| dir.join("git/config")));
            out.extend(home.map(|h| h.join(".gitconfig")));
        }
    }
    for worktree in worktrees {
        for folder in worktree.ancestors() {
            let dot_git = folder.join(".git");
            out.push(dot_git.clone());
            let Some(git_dir) = git_dir_of(&dot_git) else { continue };
            for dir in std::iter::once(git_dir.clone()).chain(commondir_of(&git_dir)) {
                out.extend(["config", "config.worktree", "commondir"].map(|name| dir.join(name)));
            }
            break;
        }
    }
    out
}

/// Where git was installed (`PREFIX/libexec/git-core` is its exec path):
/// its system config is `PREFIX/etc/gitconfig` unless built with `/etc`.
/// Asked once per process.
fn git_prefix() -> Option<PathBuf> {
    static PREFIX: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PREFIX
        .get_or_init(|| {
            let output = std::process::Command::new("git").arg("--exec-path").stdin(std::process::Stdio::null()).stderr(std::process::Stdio::null()).output().ok()?;
            let exec_path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
            exec_path.parent()?.parent().map(Path::to_path_buf)
        })
        .clone()
}

/// [`config_files`], asked of git now.
fn config_files_now(worktrees: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut pending: Vec<PathBuf> = Vec::new();
    for worktree in worktrees {
        list_config(worktree, None, &mut found, &mut pending);
    }
    // Includes git did not follow: ask git about each file on its own.
    let mut asked: Vec<PathBuf> = Vec::new();
    while let Some(file) = pending.pop() {
        if asked.len() >= MAX_INCLUDED {
            tracing::debug!("stopped following git config includes after {MAX_INCLUDED} files");
            break;
        }
        if asked.contains(&file) || !file.is_file() {
            continue;
        }
        asked.push(file.clone());
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
        list_config(&dir, Some(&file), &mut found, &mut pending);
    }
    found
}

/// One `git config --list --show-origin --includes -z` (of `file` only,
/// or of every scope as git reads them in `dir`): the files it read go in
/// `found`, what their includes name in `found` and, when git did not read
/// it, in `pending`.
fn list_config(dir: &Path, file: Option<&Path>, found: &mut Vec<PathBuf>, pending: &mut Vec<PathBuf>) {
    let mut command = std::process::Command::new("git");
    command.arg("config");
    if let Some(file) = file {
        command.arg("--file").arg(file);
    }
    let output = command
        .args(["--list", "--show-origin", "--includes", "-z"])
        .current_dir(dir)
        .env_remove("GIT_CONFIG_COUNT")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Ok(output) = output else { return };
    let listed = String::from_utf8_lossy(&output.stdout);
    let mut read: Vec<PathBuf> = Vec::new();
    let mut includes: Vec<PathBuf> = Vec::new();
    let mut tokens = listed.split('\0');
    while let (Some(origin), Some(entry)) = (tokens.next(), tokens.next()) {
        let Some(origin) = origin.strip_prefix("file:") else { continue };
        let origin = resolved(&dir.join(origin));
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        if key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path")) {
            if let Some(target) = include_target(value, &origin) {
                includes.push(target);
            }
        }
        if !read.contains(&origin) {
            read.push(origin);
        }
    }
    for include in includes {
        if !read.contains(&include) {
            pending.push(include.clone());
        }
        if !found.contains(&include) {
            found.push(include);
        }
    }
    for file in read {
        if !found.contains(&file) {
            found.push(file);
        }
    }
}

/// The file an include names, as git resolves it: `~/` in the home
/// folder, a relative path beside the file that includes it.
fn include_target(value: &str, including: &Path) -> Option<PathBuf> {
    let value = value.trim();
    if value.is_empty() || value.starts_with("%(prefix)") {
        return None;
    }
    let path = match value.strip_prefix("~/") {
        Some(rest) => dirs::home_dir()?.join(rest),
        None => including.parent()?.join(value),
    };
    Some(resolved(&path))
}

/// `path` with `.` and `..` taken out and its links followed, as far as it
/// exists (a missing file's folder is resolved, and the name kept).
fn resolved(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let mut lexical = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                lexical.pop();
            }
            std::path::Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    match (lexical.parent().and_then(|p| p.canonicalize().ok()), lexical.file_name()) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => lexical,
    }
}

/// Folders read below a root looking for nested repositories, at most.
const MAX_FOLDERS: usize = 2_000;
/// How deep that walk reads folders (the root is 0): a nested repository's
/// `.git` is found in the root and up to two folders down
/// (`vendor/lib/.git`). Deeper costs every approved command more than it
/// finds: a 50,000-file tree has 1,600 folders at depth 3 and 8,000 at 4.
const MAX_DEPTH: usize = 2;

/// The git directories (and their kinds) that matter to a command
/// running with `roots` and able to write where `writable` says.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Repositories {
    /// `.git` folders (and git directories named by `gitdir:` or
    /// `commondir`) the command could write: their config and hooks are
    /// kept read-only.
    pub git_dirs: Vec<PathBuf>,
    /// `.git` folders inside the roots, pinned in place.
    pub pinned: Vec<PathBuf>,
    /// `core.hooksPath` folders the command could write.
    pub hooks_paths: Vec<PathBuf>,
}

/// The repositories of `roots` (canonical) a command that may write where
/// `writable` says must not change.
pub fn repositories(roots: &[PathBuf], writable: &dyn Fn(&Path) -> bool) -> Repositories {
    let mut found = Repositories::default();
    let view = view(roots);
    for (index, root) in roots.iter().enumerate() {
        // The root's own repository, and nested ones.
        for dot_git in dot_gits_under(root) {
            add_dot_git(&dot_git, writable, &mut found);
        }
        // A repository in a parent folder (the workspace is a subfolder of
        // a checkout): git finds it from the root.
        for parent in root.ancestors().skip(1) {
            let dot_git = parent.join(".git");
            if std::fs::symlink_metadata(&dot_git).is_ok() {
                add_dot_git(&dot_git, writable, &mut found);
                break;
            }
        }
        if let Some(hooks) = view.hooks_paths.get(index).cloned().flatten() {
            if writable(&hooks) && !found.hooks_paths.contains(&hooks) {
                found.hooks_paths.push(hooks);
            }
        }
    }
    found
}

/// One `.git` entry: a folder (pinned if inside a root, its config and
/// hooks kept), or a file naming the git directory elsewhere.
fn add_dot_git(dot_git: &Path, writable: &dyn Fn(&Path) -> bool, found: &mut Repositories) {
    let Ok(metadata) = std::fs::symlink_metadata(dot_git) else { return };
    let git_dir = if metadata.is_dir() {
        if writable(dot_git) && !found.pinned.iter().any(|p| p == dot_git) {
            found.pinned.push(dot_git.to_path_buf());
        }
        dot_git.to_path_buf()
    } else {
        match gitdir_of(dot_git) {
            Some(dir) => dir,
            None => return,
        }
    };
    let mut add = |dir: PathBuf| {
        if writable(&dir) && !found.git_dirs.contains(&dir) {
            found.git_dirs.push(dir);
        }
    };
    if let Some(common) = commondir_of(&git_dir) {
        add(common);
    }
    add(git_dir);
}

/// The git directory a `.git` file names (`gitdir: PATH`, relative to the
/// file's folder), resolved.
fn gitdir_of(dot_git_file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git_file).ok()?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let base = dot_git_file.parent()?;
    base.join(named).canonicalize().ok()
}

/// The common git directory a linked worktree's git directory names.
fn commondir_of(git_dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(git_dir.join("commondir")).ok()?;
    git_dir.join(text.trim()).canonicalize().ok()
}

/// Every `.git` entry under `root` (the root's own first), by a walk of
/// folders only, bounded: a `.git` folder is not walked into.
fn dot_gits_under(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![(root.to_path_buf(), 0usize)];
    let mut walked = 0;
    while let Some((dir, depth)) = pending.pop() {
        walked += 1;
        if walked > MAX_FOLDERS {
            tracing::debug!(root = %root.display(), "stopped looking for nested repositories after {MAX_FOLDERS} folders");
            break;
        }
        // Read again only where the folder changed since the last walk.
        let Some(listing) = super::cache::listing(&dir) else { continue };
        if listing.dot_git {
            found.push(dir.join(".git"));
        }
        if depth < MAX_DEPTH {
            pending.extend(listing.folders.iter().map(|name| (dir.join(name), depth + 1)));
        }
    }
    // The root's own repository first.
    found.sort_by_key(|p| p.components().count());
    found
}

/// The repository's `core.hooksPath`, resolved against `root` (git reads
/// it from every config file; `git config` reads them as git does).
fn hooks_path(root: &Path) -> Option<PathBuf> {
    let output = std::process::Command::new("git")
        .args(["config", "--path", "--get", "core.hooksPath"])
        .current_dir(root)
        .env_remove("GIT_CONFIG_COUNT")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let value = String::from_utf8(output.stdout).ok()?;
    let value = value.trim();
    if !output.status.success() || value.is_empty() {
        return None;
    }
    let path = root.join(value);
    Some(path.canonicalize().unwrap_or(path))
}

/// The git directories a command could make that were not there when it
/// started: what [`disarm_new`] compares with when it ends.
#[derive(Debug, Default, Clone)]
pub struct Before {
    roots: Vec<PathBuf>,
    /// Every `.git` entry under the roots, and the git directories they name.
    seen: Vec<PathBuf>,
}

/// What is under `roots` now ([`dot_gits_under`], the same bounded walk).
pub fn before(roots: &[PathBuf]) -> Before {
    let mut seen = Vec::new();
    for root in roots {
        for dot_git in dot_gits_under(root) {
            if let Some(git_dir) = git_dir_of(&dot_git) {
                seen.push(git_dir);
            }
            seen.push(dot_git);
        }
    }
    Before { roots: roots.to_vec(), seen }
}

/// After an approved command: a repository it made in the workspace
/// (`git init`, `git clone`, a `.git` file naming a git directory it made)
/// is one the user's git and editor would run the code of later — VS Code
/// runs `git status` in the repositories it finds, the user commits in it.
/// So its config loses every key that runs a program ([`runs_code`]), and
/// its hooks their execute bit (a link is renamed aside), except hooks the
/// same as the user's own templates' (`init.templateDir`). What the
/// repository holds stays. Answers what was done, one line each.
pub fn disarm_new(before: &Before) -> Vec<String> {
    let after = self::before(&before.roots);
    let mut done = Vec::new();
    let mut disarmed: Vec<PathBuf> = Vec::new();
    for dot_git in after.seen.iter().filter(|p| p.file_name().is_some_and(|n| n == ".git")) {
        let Some(git_dir) = git_dir_of(dot_git) else { continue };
        // One that was there (a new worktree's `.git` file naming it
        // included) had its config and hooks read-only for the command.
        if before.seen.contains(&git_dir) || disarmed.contains(&git_dir) {
            continue;
        }
        if let Some(common) = commondir_of(&git_dir).filter(|c| !before.seen.contains(c) && !disarmed.contains(c)) {
            done.extend(disarm(&common));
            disarmed.push(common);
        }
        done.extend(disarm(&git_dir));
        disarmed.push(git_dir);
    }
    done
}

/// The git directory a `.git` entry is (a folder) or names (a file).
fn git_dir_of(dot_git: &Path) -> Option<PathBuf> {
    let metadata = std::fs::symlink_metadata(dot_git).ok()?;
    if metadata.is_dir() {
        Some(dot_git.to_path_buf())
    } else if metadata.is_file() {
        gitdir_of(dot_git)
    } else {
        None
    }
}

/// Make one git directory's config and hooks run nothing.
fn disarm(git_dir: &Path) -> Vec<String> {
    let mut done = Vec::new();
    for file in ["config", "config.worktree"] {
        let path = git_dir.join(file);
        if !path.is_file() {
            continue;
        }
        for key in code_running_keys(&path) {
            let unset = std::process::Command::new("git")
                .args(["config", "--file"])
                .arg(&path)
                .args(["--unset-all", &key])
                .env_remove("GIT_CONFIG_COUNT")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
            if unset.is_ok_and(|s| s.success()) {
                done.push(format!("{}: removed {key}", path.display()));
            } else {
                // Git cannot edit it: the file goes, as a planted `.envrc` does.
                let aside = path.with_extension("tandem-disabled");
                let _ = std::fs::rename(&path, &aside);
                done.push(format!("{}: moved to {} (git could not remove {key})", path.display(), aside.display()));
                break;
            }
        }
    }
    let hooks = git_dir.join("hooks");
    let templates = template_hooks();
    let Ok(entries) = std::fs::read_dir(&hooks) else { return done };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().ends_with(".sample") || name.to_string_lossy().ends_with(".tandem-disabled") {
            continue;
        }
        let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
        // Where files have no mode (Windows, whose Git runs any hook file),
        // a hook is moved aside like a link is.
        if let Some(mode) = crate::platform::mode(&metadata).filter(|_| metadata.is_file()) {
            if mode & 0o111 == 0 {
                continue;
            }
            let content = std::fs::read(&path).ok();
            if content.is_some() && templates.iter().any(|dir| std::fs::read(dir.join(&name)).ok() == content) {
                continue;
            }
            if crate::platform::set_mode(&path, mode & !0o111).is_ok() {
                done.push(format!("{}: no longer executable", path.display()));
            }
        } else {
            let aside = hooks.join(format!("{}.tandem-disabled", name.to_string_lossy()));
            if std::fs::rename(&path, &aside).is_ok() {
                done.push(format!("{}: moved to {}", path.display(), aside.display()));
            }
        }
    }
    done
}

/// The keys of a config file that make git run a program ([`runs_code`]).
fn code_running_keys(config: &Path) -> Vec<String> {
    let output = std::process::Command::new("git")
        .args(["config", "--file"])
        .arg(config)
        .args(["--list", "-z"])
        .env_remove("GIT_CONFIG_COUNT")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Ok(output) = output else { return Vec::new() };
    let listed = String::from_utf8_lossy(&output.stdout);
    let mut keys: Vec<String> = Vec::new();
    for entry in listed.split('\0').filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        if runs_code(key, value) && !keys.iter().any(|k| k == key) {
            keys.push(key.to_string());
        }
    }
    keys
}

/// Whether a config key (as `git config --list` spells it: section and
/// name in lower case) makes git run a program, or reads more config that
/// could (`include.path`). A repository `git init` or `git clone` makes
/// sets none of these.
pub fn runs_code(key: &str, value: &str) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    let (section, name) = (parts.first().copied().unwrap_or(""), parts.last().copied().unwrap_or(""));
    let shell = value.trim_start().starts_with('!');
    let names_a_program = ["cmd", "command", "program", "editor", "pager", "helper", "driver", "textconv", "hook"].iter().any(|end| name.ends_with(end));
    match section {
        "alias" => shell,
        "submodule" => name == "update" && shell,
        "include" | "includeif" => name == "path",
        "filter" => matches!(name, "clean" | "smudge" | "process"),
        "pager" | "protocol" => true,
        "core" => names_a_program || matches!(name, "fsmonitor" | "hookspath" | "askpass" | "gitproxy" | "alternaterefscommand"),
        "diff" => names_a_program || name == "external",
        "remote" => matches!(name, "uploadpack" | "receivepack"),
        "imap" => name == "tunnel",
        "interactive" => name == "difffilter",
        "browser" | "man" | "lfs" => names_a_program || matches!(name, "path" | "clean" | "smudge"),
        _ => names_a_program,
    }
}

/// The hooks folders of the user's git templates, whose hooks a new
/// repository gets from `git init` and `git clone`.
fn template_hooks() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = crate::environment::var("GIT_TEMPLATE_DIR") {
        dirs.push(PathBuf::from(dir));
    }
    let configured = std::process::Command::new("git")
        .args(["config", "--path", "--get", "init.templateDir"])
        .current_dir("/")
        .env_remove("GIT_CONFIG_COUNT")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    if let Ok(output) = configured {
        let value = String::from_utf8_lossy(&output.stdout).trim().to_string();
        if output.status.success() && !value.is_empty() {
            dirs.push(PathBuf::from(value));
        }
    }
    dirs.extend(["/usr/share/git-core/templates", "/usr/local/share/git-core/templates"].map(PathBuf::from));
    dirs.into_iter().map(|dir| dir.join("hooks")).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn overrides_follow_the_users_own_git_config_pairs() {
        let mut set = vec![
            ("GIT_CONFIG_COUNT".to_string(), "1".to_string()),
            ("GIT_CONFIG_KEY_0".to_string(), "user.name".to_string()),
            ("GIT_CONFIG_VALUE_0".to_string(), "me".to_string()),
        ];
        config_overrides(&mut set, &[("alias.st".to_string(), "!false".to_string())]);
        let get = |name: &str| set.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        assert_eq!(get("GIT_CONFIG_COUNT"), Some((2 + OVERRIDES.len()).to_string()));
        assert_eq!(get(&format!("GIT_CONFIG_KEY_{}", 1 + OVERRIDES.len())).as_deref(), Some("alias.st"));
        assert_eq!(get("GIT_CONFIG_KEY_0").as_deref(), Some("user.name"));
        assert_eq!(get("GIT_CONFIG_KEY_1").as_deref(), Some("core.fsmonitor"));
        assert_eq!(get("GIT_CONFIG_VALUE_1").as_deref(), Some("false"));
    }

    #[test]
    fn a_repositorys_own_code_running_keys_are_made_harmless() {
        let listed = concat!(
            "global\0alias.lg\n!git log --graph\0local\0alias.evil\n!touch /tmp/x\0local\0alias.st\nstatus\0local\0filter.lfs.clean\ngit-lfs clean -- %f\0",
            "worktree\0diff.img.textconv\nexiftool\0local\0remote.origin.uploadpack\n/tmp/evil\0local\0core.bare\nfalse\0",
            "system\0credential.helper\ncache\0global\0credential.helper\nstore\0local\0credential.helper\n!touch /tmp/x\0local\0credential.helper\nosxkeychain\0",
            "local\0credential.https://example.com.helper\n!evil\0global\0credential.https://other.com.helper\nmine\0local\0core.gitproxy\nevil-proxy\0",
        );
        let out: Vec<String> = overrides_for(listed).iter().map(|(k, v)| format!("{k}={v}")).collect();
        expect_test::expect![[r#"
            [
                "alias.evil=!echo 'tandem: the alias evil runs a shell command from this repository'\\''s config; it does not run here' >&2; exit 1",
                "filter.lfs.required=true",
                "filter.lfs.clean=false",
                "diff.img.textconv=cat",
                "remote.origin.uploadpack=git-upload-pack",
                "credential.helper=",
                "credential.helper=cache",
                "credential.helper=store",
                "credential.https://example.com.helper=",
                "core.gitproxy=none",
            ]
        "#]]
        .assert_debug_eq(&out);
    }

    #[test]
    fn keys_that_run_a_program_are_told_from_the_others() {
        let keys = [
            ("core.fsmonitor", "touch x"), ("core.hookspath", "h"), ("core.pager", "less"), ("core.sshcommand", "ssh -x"),
            ("alias.st", "!touch x"), ("alias.co", "checkout"), ("filter.lfs.smudge", "x"), ("diff.img.textconv", "x"),
            ("merge.ours.driver", "x"), ("credential.helper", "store"), ("include.path", "x.cfg"), ("includeif.gitdir:/x/.path", "y"),
            ("pager.log", "x"), ("submodule.s.update", "!x"), ("submodule.s.url", "../s"), ("remote.origin.url", "https://x"),
            ("remote.origin.uploadpack", "x"), ("core.bare", "false"), ("core.repositoryformatversion", "0"), ("branch.main.remote", "origin"),
        ];
        let out: Vec<String> = keys.iter().map(|(k, v)| format!("{k}: {}", runs_code(k, v))).collect();
        expect_test::expect![[r#"
            [
                "core.fsmonitor: true",
                "core.hookspath: true",
                "core.pager: true",
                "core.sshcommand: true",
                "alias.st: true",
                "alias.co: false",
                "filter.lfs.smudge: true",
                "diff.img.textconv: true",
                "merge.ours.driver: true",
                "credential.helper: true",
                "include.path: true",
                "includeif.gitdir:/x/.path: true",
                "pager.log: true",
                "submodule.s.update: true",
                "submodule.s.url: false",
                "remote.origin.url: false",
                "remote.origin.uploadpack: true",
                "core.bare: false",
                "core.repositoryformatversion: false",
                "branch.main.remote: false",
            ]
        "#]]
        .assert_debug_eq(&out);
    }

    /// A repository in `root` whose config includes `tools/gitconfig`, which
    /// includes `nested.cfg`, and (on a branch not checked out) `branch.cfg`,
    /// which is missing.
    pub(crate) fn repository_with_includes(root: &Path) {
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git").args(args).current_dir(root).stdout(std::process::Stdio::null()).status().unwrap();
            assert!(status.success(), "git {args:?}");
        };
        std::fs::create_dir_all(root.join("tools")).unwrap();
        git(&["init", "-q"]);
        git(&["config", "include.path", "../tools/gitconfig"]);
        git(&["config", "includeIf.onbranch:other.path", "../branch.cfg"]);
        std::fs::write(root.join("tools/gitconfig"), "[alias]\n\tst = status\n[include]\n\tpath = nested.cfg\n").unwrap();
        std::fs::write(root.join("tools/nested.cfg"), "[user]\n\tname = x\n").unwrap();
    }

    // Unix only: it runs git, which the Wine prefix here does not have.
    #[cfg(unix)]
    #[test]
    fn git_says_which_files_it_reads_config_from_includes_and_missing_ones_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        repository_with_includes(&root);
        let files = config_files(std::slice::from_ref(&root));
        for expected in [root.join(".git/config"), root.join("tools/gitconfig"), root.join("tools/nested.cfg"), root.join("branch.cfg")] {
            assert!(files.contains(&expected), "{} not in {files:?}", expected.display());
        }
        assert!(!files.iter().any(|f| f.ends_with("README.md")), "{files:?}");
    }

    #[cfg(unix)]
    #[test]
    fn what_git_said_is_reused_until_a_file_it_reads_changes_or_a_repository_appears() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        repository_with_includes(&root);
        let roots = [root.clone()];
        // Let every file settle, so the answer may be kept.
        std::thread::sleep(crate::sandbox::cache::SETTLE * 2);
        let first = view(&roots);
        assert!(std::sync::Arc::ptr_eq(&first, &view(&roots)), "nothing changed: git is not asked again");
        // An include added to an included file (one git listed).
        std::fs::write(root.join("tools/nested.cfg"), "[include]\n\tpath = more.cfg\n").unwrap();
        assert!(config_files(&roots).contains(&root.join("tools/more.cfg")));
        // One added to the repository's config by git (a new file renamed
        // into place).
        let status = std::process::Command::new("git").args(["config", "--add", "include.path", "../late.cfg"]).current_dir(&root).status().unwrap();
        assert!(status.success());
        assert!(config_files(&roots).contains(&root.join("late.cfg")));
        // A nested repository made since, whose config includes a file.
        let nested = root.join("vendor/lib");
        std::fs::create_dir_all(&nested).unwrap();
        let status = std::process::Command::new("git").args(["init", "-q"]).current_dir(&nested).status().unwrap();
        assert!(status.success());
        std::fs::write(nested.join(".git/config"), "[include]\n\tpath = ../../../shared.cfg\n").unwrap();
        assert!(config_files(&roots).contains(&root.join("shared.cfg")), "{:?}", config_files(&roots));
        // core.hooksPath set later is seen too.
        let status = std::process::Command::new("git").args(["config", "core.hooksPath", "githooks"]).current_dir(&root).status().unwrap();
        assert!(status.success());
        std::fs::create_dir_all(root.join("githooks")).unwrap();
        let found = repositories(&roots, &|path: &Path| path.starts_with(&root));
        assert_eq!(found.hooks_paths, vec![root.join("githooks")]);
    }

    #[test]
    fn the_repositories_a_command_could_change_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("ws");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
        // A worktree checkout whose `.git` file names a git directory in the workspace.
        std::fs::create_dir_all(root.join("store/worktrees/wt")).unwrap();
        std::fs::write(root.join("store/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(root.join("wt/.git"), "gitdir: ../store/worktrees/wt\n").unwrap();
        let roots = [root.clone()];
        let inside = |p: &Path| p.starts_with(&root);
        let found = repositories(&roots, &inside);
        assert_eq!(found.pinned, vec![root.join(".git"), root.join("vendor/lib/.git")]);
        assert!(found.git_dirs.contains(&root.join(".git")) && found.git_dirs.contains(&root.join("vendor/lib/.git")), "{found:?}");
        assert!(found.git_dirs.contains(&root.join("store/worktrees/wt")) && found.git_dirs.contains(&root.join("store")), "{found:?}");
        // A repository in the parent folder counts where the command could write it.
        let sub = root.join("vendor");
        let in_parent = repositories(std::slice::from_ref(&sub), &inside);
        assert!(in_parent.git_dirs.contains(&root.join(".git")) && in_parent.pinned.contains(&root.join(".git")), "{in_parent:?}");
        let nowhere = |_: &Path| false;
        assert_eq!(repositories(&roots, &nowhere), Repositories::default());
    }
}
