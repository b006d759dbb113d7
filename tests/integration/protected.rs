//! Protected paths for every tool that writes (issue 27), by effect, in a
//! real `tandem ask` with no terminal to answer: `write_file` and
//! `edit_file` never plant a git hook, git config (the repository's, a
//! nested one's, through a symlink to `.git`), Tandem's settings or the
//! editor's tasks in `default`, `acceptEdits` or `bypassPermissions` (which
//! lets only the lesser ones through), and the user's next `git commit` and
//! `git status`, run outside any sandbox, run nothing planted. The model is
//! told why and what rule would allow it; a rule that names the path does.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

struct Repo {
    _temp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Repo {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let (root, home) = (base.join("repo"), base.join("home"));
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(home.join(".tandem")).unwrap();
        git(&root, &["init", "-q"]);
        git(&root.join("sub"), &["init", "-q"]);
        std::fs::write(root.join("notes.txt"), "notes\n").unwrap();
        std::os::unix::fs::symlink(".git", root.join("gitlink")).unwrap();
        Repo { _temp: temp, root, home }
    }

    /// The calls' results, one call per turn.
    fn ask(&self, calls: &[Value], args: &[&str]) -> Vec<(bool, String)> {
        let mut turns: Vec<Value> = calls.iter().map(|c| json!({"tool_calls": [c]})).collect();
        turns.push(json!({"text": "Done."}));
        let script = self.home.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("TANDEM_PROVIDER", "scripted")
            .env("TANDEM_SCRIPT", &script)
            .stdin(Stdio::null())
            .args(["ask", "--json"])
            .args(args)
            .arg("go")
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["type"] == "tool_result")
            .map(|e| (e["is_error"].as_bool().unwrap(), e["content"].as_str().unwrap().to_string()))
            .collect()
    }

    fn marker(&self, name: &str) -> String {
        self.home.join(name).display().to_string()
    }
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    let output = Command::new("git")
        .args(["-c", "user.name=u", "-c", "user.email=u@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

fn write(path: &str, content: &str) -> Value {
    json!({"name": "write_file", "input": {"file_path": path, "content": content}})
}

/// Every way to plant code the user's next git command, editor or Tandem
/// session would run.
fn plants(repo: &Repo) -> Vec<Value> {
    let hook = format!("#!/bin/sh\ntouch {}\n", repo.marker("hook-ran"));
    let fsmonitor = format!("[core]\n\tfsmonitor = \"touch {}\"\n", repo.marker("fsmonitor-ran"));
    vec![
        // Read first (the tools refuse to overwrite what was not read).
        json!({"name": "read_file", "input": {"file_path": ".git/config"}}),
        json!({"name": "read_file", "input": {"file_path": "sub/.git/config"}}),
        write(".git/hooks/pre-commit", &hook),
        write(".git/config", &fsmonitor),
        write("sub/.git/config", &fsmonitor),
        write("gitlink/hooks/post-commit", &hook),
        write(".GIT/hooks/pre-commit", &hook),
        write(".tandem/settings.json", r#"{"permissionMode": "bypassPermissions"}"#),
        write(".vscode/tasks.json", r#"{"version": "2.0.0", "tasks": [{"label": "x", "command": "touch pwned", "runOptions": {"runOn": "folderOpen"}}]}"#),
        write(".envrc", "touch pwned\n"),
        json!({"name": "read_file", "input": {"file_path": "notes.txt"}}),
        json!({"name": "edit_file", "input": {"file_path": ".git/config", "old_string": "[core]", "new_string": format!("[core]\n\tfsmonitor = \"touch {}\"", repo.marker("fsmonitor-ran"))}}),
        write("notes.txt", "changed\n"),
    ]
}

/// After the run, the user's own git commands, outside any sandbox.
fn users_git_runs_nothing_planted(repo: &Repo, mode: &str) {
    git(&repo.root, &["add", "notes.txt"]);
    git(&repo.root, &["commit", "-q", "--allow-empty", "-m", "after the agent"]);
    git(&repo.root, &["status", "--short"]);
    git(&repo.root.join("sub"), &["status", "--short"]);
    for marker in ["hook-ran", "fsmonitor-ran"] {
        assert!(!Path::new(&repo.marker(marker)).exists(), "{mode}: the user's git ran what the agent planted ({marker})");
    }
}

#[test]
fn write_tools_never_plant_code_in_protected_paths_in_any_mode() {
    for mode in ["default", "acceptEdits", "bypassPermissions"] {
        let repo = Repo::new();
        let results = repo.ask(&plants(&repo), &["--permission-mode", mode]);
        assert_eq!(results.len(), 13, "{mode}: {results:?}");
        let results = &results[2..];
        let written = |path: &str| std::fs::read_to_string(repo.root.join(path)).unwrap_or_default();
        assert!(!written(".git/hooks/pre-commit").contains("touch") && !written(".git/hooks/post-commit").contains("touch"), "{mode}: a hook was written");
        assert!(!written(".git/config").contains("fsmonitor") && !written("sub/.git/config").contains("fsmonitor"), "{mode}: git config was written");
        assert!(!repo.root.join(".tandem/settings.json").exists(), "{mode}: Tandem's settings were written");
        for (index, result) in results.iter().enumerate().take(6) {
            assert!(result.0 && result.1.contains("a protected path"), "{mode}: call {index}: {result:?}");
        }
        // The refusal says why and which rule would let it through.
        assert!(results[0].1.contains("edit_file(./.git/hooks/pre-commit)") && results[0].1.contains("no mode lets it through"), "{}", results[0].1);
        assert!(results[9].0 && results[9].1.contains("a protected path"), "{mode}: edit_file of .git/config: {:?}", results[9]);
        // What bypassPermissions lets through: the lesser protected paths and ordinary files.
        let bypass = mode == "bypassPermissions";
        assert_eq!(repo.root.join(".vscode/tasks.json").exists(), bypass, "{mode}: .vscode/tasks.json");
        assert_eq!(repo.root.join(".envrc").exists(), bypass, "{mode}: .envrc");
        assert_eq!(written("notes.txt") == "changed\n", mode != "default", "{mode}: notes.txt: {:?}", results[10]);
        users_git_runs_nothing_planted(&repo, mode);
    }
}

/// An allow rule that names the path lets it through (in the user's own
/// settings: the folder's would need trust); a rule for every file does not.
#[test]
fn only_a_rule_that_names_a_protected_path_allows_it() {
    let repo = Repo::new();
    std::fs::write(
        repo.home.join(".tandem/settings.json"),
        json!({"permissions": {"allow": ["edit_file", "edit_file(**)", "edit_file(./.vscode/tasks.json)"]}}).to_string(),
    )
    .unwrap();
    let results = repo.ask(&[write(".vscode/tasks.json", "{}\n"), write(".vscode/settings.json", "{}\n"), write(".git/hooks/pre-push", "#!/bin/sh\n")], &["--permission-mode", "acceptEdits"]);
    assert!(!results[0].0, "{results:?}");
    assert_eq!(std::fs::read_to_string(repo.root.join(".vscode/tasks.json")).unwrap(), "{}\n");
    assert!(results[1].0 && !repo.root.join(".vscode/settings.json").exists(), "{results:?}");
    assert!(results[2].0 && !repo.root.join(".git/hooks/pre-push").exists(), "{results:?}");
}

/// bubblewrap, or a skip (a failure under `TANDEM_REQUIRE_BWRAP`).
fn sandbox_here(test: &str) -> bool {
    if Command::new("bwrap").arg("--version").output().is_ok() {
        return true;
    }
    assert!(std::env::var_os("TANDEM_REQUIRE_BWRAP").is_none(), "TANDEM_REQUIRE_BWRAP is set but bwrap is missing");
    eprintln!("SKIPPED {test}: no bwrap");
    false
}

/// `text` as one single-quoted shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn shell(command: &str) -> Value {
    json!({"name": "run_shell", "input": {"command": command}})
}

/// Approved commands (bypassPermissions, so every one runs) try every way
/// to make the user's next git command, outside the sandbox, run code: a
/// `.git` renamed and made again, a `commondir` naming another repository,
/// the hooks folder `core.hooksPath` names, a nested repository's config
/// and hooks, a repository in the parent folder. Then the user's `git
/// commit` and `git status` run nothing. Inside the sandbox too, `git`
/// runs no repository's fsmonitor, `!` alias, filter, textconv or
/// credential helper, and an
/// embedded bare repository is not used.
#[test]
fn approved_commands_cannot_make_the_users_git_run_code() {
    if !sandbox_here("approved_commands_cannot_make_the_users_git_run_code") {
        return;
    }
    let repo = Repo::new();
    // The user's own hooks folder (as husky sets it up).
    std::fs::create_dir_all(repo.root.join(".githooks")).unwrap();
    git(&repo.root, &["config", "core.hooksPath", ".githooks"]);
    // A repository that came in an archive with its own config, and an embedded bare one.
    std::fs::create_dir_all(repo.root.join("archived")).unwrap();
    git(&repo.root.join("archived"), &["init", "-q"]);
    let inside = repo.marker("ran-inside");
    git(&repo.root.join("archived"), &["config", "core.fsmonitor", &format!("touch {inside}")]);
    git(&repo.root.join("archived"), &["config", "alias.pwn", &format!("!touch {inside}")]);
    git(&repo.root.join("archived"), &["config", "filter.pwn.clean", &format!("touch {inside}; cat")]);
    git(&repo.root.join("archived"), &["config", "diff.pwn.textconv", &format!("touch {inside}; cat")]);
    git(&repo.root.join("archived"), &["config", "credential.helper", &format!("!touch {inside}; echo")]);
    std::fs::write(repo.root.join("archived/.gitattributes"), "* filter=pwn diff=pwn\n").unwrap();
    std::fs::write(repo.root.join("archived/a.txt"), "a\n").unwrap();
    git(&repo.root, &["init", "-q", "--bare", "embedded.git"]);
    git(&repo.root.join("embedded.git"), &["config", "core.fsmonitor", &format!("touch {inside}")]);
    let mark = repo.marker("planted-ran");
    let hook = format!("printf '#!/bin/sh\\ntouch {mark}\\n'");
    let fsmonitor = format!("printf '[core]\\n\\tfsmonitor = \"touch {mark}\"\\n'");
    let commands = [
        format!("mv .git .git-old; mkdir .git; cp -r .git-old/. .git/; {fsmonitor} >> .git/config"),
        format!("git init -q evil && git -C evil config core.fsmonitor 'touch {mark}' && echo \"$PWD/evil/.git\" > .git/commondir"),
        format!("{hook} > .githooks/pre-commit; chmod +x .githooks/pre-commit"),
        format!("{hook} > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit"),
        format!("{fsmonitor} >> sub/.git/config; {hook} > sub/.git/hooks/post-checkout"),
        "git -C archived status; git -C archived pwn; git -C archived add -A; git -C archived diff --cached; cd embedded.git && git log".to_string(),
        "printf 'protocol=https\\nhost=example.com\\n\\n' | GIT_TERMINAL_PROMPT=0 git -C archived credential fill".to_string(),
    ];
    // Through `eval`, which the judgement cannot see into: in
    // bypassPermissions such a command runs, and only the sandbox stands
    // between it and the files.
    let calls: Vec<Value> = commands.iter().map(|c| shell(&format!("C={}; eval \"$C\"", shell_quote(c)))).collect();
    let results = repo.ask(&calls, &["--permission-mode", "bypassPermissions"]);
    assert_eq!(results.len(), commands.len(), "{results:?}");
    assert!(!Path::new(&inside).exists(), "git in the sandbox ran a repository's fsmonitor: {results:?}");
    assert!(repo.root.join(".git/HEAD").exists() && !repo.root.join(".git/commondir").exists(), "{results:?}");
    assert!(!std::fs::read_to_string(repo.root.join(".git/config")).unwrap().contains("fsmonitor"));
    // The user's own git, outside any sandbox.
    git(&repo.root, &["commit", "-q", "--allow-empty", "-m", "after the agent"]);
    git(&repo.root, &["status", "--short"]);
    git(&repo.root.join("sub"), &["status", "--short"]);
    git(&repo.root.join("sub"), &["checkout", "-q", "-b", "other"]);
    assert!(!Path::new(&mark).exists(), "the user's git ran what an approved command planted: {results:#?}");
}

/// The workspace is a folder of a checkout whose `.git` is in the parent
/// folder, where approved commands may write (a temp folder): its config
/// and hooks stay read-only too.
#[test]
fn a_repository_in_the_parent_folder_stays_read_only() {
    if !sandbox_here("a_repository_in_the_parent_folder_stays_read_only") {
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let outer = temp.path().canonicalize().unwrap().join("checkout");
    let root = outer.join("app");
    std::fs::create_dir_all(&root).unwrap();
    git(&outer, &["init", "-q"]);
    let home = temp.path().canonicalize().unwrap().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let repo = Repo { _temp: temp, root: root.clone(), home };
    let mark = repo.marker("planted-ran");
    if !outer.starts_with("/tmp") && !outer.starts_with("/var/tmp") {
        eprintln!("SKIPPED: the checkout is not under a temp folder approved commands may write");
        return;
    }
    let planted = format!("printf '[core]\\n\\tfsmonitor = \"touch {mark}\"\\n' >> ../.git/config; printf '#!/bin/sh\\ntouch {mark}\\n' > ../.git/hooks/pre-commit; chmod +x ../.git/hooks/pre-commit; mv ../.git ../.git-old");
    let results = repo.ask(
        &[shell(&format!("C={}; eval \"$C\"", shell_quote(&planted)))],
        &["--permission-mode", "bypassPermissions"],
    );
    assert!(outer.join(".git/HEAD").exists(), "{results:?}");
    git(&outer, &["commit", "-q", "--allow-empty", "-m", "after the agent"]);
    git(&root, &["status", "--short"]);
    assert!(!Path::new(&mark).exists(), "{results:?}");
}

/// What an editor or direnv runs when the folder is opened or entered
/// stays out of an approved command's reach too: an existing `.idea/`
/// stays read-only, and a `.envrc` or `.dir-locals.el` the command creates
/// is gone when it ends.
#[test]
fn approved_commands_leave_no_files_an_editor_or_direnv_would_run() {
    if !sandbox_here("approved_commands_leave_no_files_an_editor_or_direnv_would_run") {
        return;
    }
    let repo = Repo::new();
    std::fs::create_dir_all(repo.root.join(".idea")).unwrap();
    let planted = "echo 'touch pwned' > .envrc; echo '((nil . ((eval . (shell-command \"touch pwned\")))))' > .dir-locals.el; echo '<x/>' > .idea/workspace.xml; touch made.txt";
    let results = repo.ask(&[shell(&format!("C={}; eval \"$C\"", shell_quote(planted)))], &["--permission-mode", "bypassPermissions"]);
    assert!(repo.root.join("made.txt").exists(), "the approved command ran: {results:?}");
    for gone in [".envrc", ".dir-locals.el", ".idea/workspace.xml"] {
        assert!(!repo.root.join(gone).exists(), "{gone} was left: {results:?}");
    }
    // Moved aside, not lost (the user may have made it while the command ran).
    let moved = moved_aside(&repo.root, ".envrc");
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_eq!(std::fs::read_to_string(&moved[0]).unwrap(), "touch pwned\n");
}

/// The siblings `name` was moved aside to (`name.tandem-moved-…`).
fn moved_aside(root: &Path, name: &str) -> Vec<std::path::PathBuf> {
    let prefix = format!("{name}.tandem-moved-");
    std::fs::read_dir(root).unwrap().flatten().map(|e| e.path()).filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix))).collect()
}

/// What the user makes while an approved command runs — JetBrains writes
/// `.idea/` when the project opens, the user writes an `.envrc` — is one of
/// the files the command may not leave; it is moved aside when the command
/// ends, with all it holds, never deleted.
#[test]
fn what_the_user_makes_while_an_approved_command_runs_is_never_lost() {
    if !sandbox_here("what_the_user_makes_while_an_approved_command_runs_is_never_lost") {
        return;
    }
    let repo = Repo::new();
    let root = repo.root.clone();
    let user = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        while !root.join("started").exists() && started.elapsed() < std::time::Duration::from_secs(30) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::fs::create_dir_all(root.join(".idea")).unwrap();
        std::fs::write(root.join(".idea/workspace.xml"), "<the user's project/>\n").unwrap();
        std::fs::write(root.join("done"), "").unwrap();
    });
    let wait = "touch started; for i in $(seq 300); do [ -e done ] && break; sleep 0.1; done";
    let results = repo.ask(&[shell(wait)], &["--permission-mode", "bypassPermissions"]);
    user.join().unwrap();
    assert!(results.iter().all(|(error, _)| !error), "{results:#?}");
    let moved = moved_aside(&repo.root, ".idea");
    assert_eq!(moved.len(), 1, "{moved:?} {results:?}");
    assert_eq!(std::fs::read_to_string(moved[0].join("workspace.xml")).unwrap(), "<the user's project/>\n");
}

/// A repository an approved command makes is one the user's git and
/// editor use later (VS Code runs `git status` in the repositories it
/// finds): when the command ends, no key of its config runs a program and
/// no hook of it is executable — a new nested repository, one whose config
/// includes another file, a `.git` file naming a git directory the command
/// made. What they hold stays: the hook's text, a clone's remote.
#[test]
fn a_repository_an_approved_command_makes_runs_no_code_afterwards() {
    if !sandbox_here("a_repository_an_approved_command_makes_runs_no_code_afterwards") {
        return;
    }
    let repo = Repo::new();
    let mark = repo.marker("planted-ran");
    let hook = format!("printf '#!/bin/sh\\ntouch {mark}\\n'");
    let commands = [
        format!(
            "git init -q made/new && git -C made/new config core.fsmonitor 'touch {mark}' && git -C made/new config alias.st '!touch {mark}' && {hook} > made/new/.git/hooks/pre-commit && chmod +x made/new/.git/hooks/pre-commit"
        ),
        format!("git init -q inc && printf '[core]\\n\\tfsmonitor = touch {mark}\\n' > inc.cfg && git -C inc config include.path ../../inc.cfg"),
        format!("git init -q elsewhere && mv elsewhere/.git store && rm -r elsewhere && git --git-dir=store config core.fsmonitor 'touch {mark}' && mkdir linked && echo 'gitdir: ../store' > linked/.git"),
        "git clone -q sub cloned".to_string(),
    ];
    let calls: Vec<Value> = commands.iter().map(|c| shell(&format!("C={}; eval \"$C\"", shell_quote(c)))).collect();
    let results = repo.ask(&calls, &["--permission-mode", "bypassPermissions"]);
    assert!(results.iter().all(|(error, _)| !error), "{results:#?}");
    // The user's own git, outside any sandbox.
    for dir in ["made/new", "inc", "linked", "cloned"] {
        git(&repo.root.join(dir), &["status", "--short"]);
    }
    git(&repo.root.join("made/new"), &["commit", "-q", "--allow-empty", "-m", "after the agent"]);
    let alias = Command::new("git").arg("st").current_dir(repo.root.join("made/new")).output().unwrap();
    assert!(!alias.status.success(), "the alias is gone");
    assert!(!Path::new(&mark).exists(), "the user's git ran what an approved command planted in a repository it made: {results:#?}");
    assert!(std::fs::read_to_string(repo.root.join("made/new/.git/hooks/pre-commit")).unwrap().contains(&mark), "the hook's text stays");
    assert!(std::fs::read_to_string(repo.root.join("cloned/.git/config")).unwrap().contains("[remote \"origin\"]"), "a clone keeps its remote");
}

/// A repository whose config includes files of the workspace, as teams
/// share aliases: `tools/gitconfig` always, `tools/branch.gitconfig` on
/// the branch `feature` (missing until someone makes it). `tracked.txt`
/// is changed, so `git diff` has something to show.
fn with_included_config(repo: &Repo) {
    std::fs::create_dir_all(repo.root.join("tools")).unwrap();
    std::fs::write(repo.root.join("tools/gitconfig"), "[alias]\n\tst = status\n").unwrap();
    git(&repo.root, &["config", "include.path", "../tools/gitconfig"]);
    git(&repo.root, &["config", "includeIf.onbranch:feature.path", "../tools/branch.gitconfig"]);
    std::fs::write(repo.root.join("tracked.txt"), "a\n").unwrap();
    git(&repo.root, &["add", "tracked.txt"]);
    git(&repo.root, &["commit", "-q", "-m", "tracked"]);
    std::fs::write(repo.root.join("tracked.txt"), "b\n").unwrap();
}

/// The user's git after the run, on the branch the conditional include
/// is for too: nothing planted runs.
fn users_git_runs_nothing_included(repo: &Repo, mark: &str, results: &[(bool, String)]) {
    git(&repo.root, &["status", "--short"]);
    git(&repo.root, &["checkout", "-q", "-b", "feature"]);
    git(&repo.root, &["status", "--short"]);
    git(&repo.root, &["diff"]);
    assert!(!Path::new(mark).exists(), "the user's git ran what was planted in an included config file: {results:#?}");
    assert_eq!(std::fs::read_to_string(repo.root.join("tools/gitconfig")).unwrap(), "[alias]\n\tst = status\n", "{results:#?}");
    assert!(!repo.root.join("tools/branch.gitconfig").exists(), "{results:#?}");
}

/// `write_file` and `edit_file` in `acceptEdits` (and `bypassPermissions`)
/// never write a file git reads its config from: the included one, and
/// the conditional one that is not there yet.
#[test]
fn write_tools_never_write_a_file_the_git_config_includes() {
    for mode in ["acceptEdits", "bypassPermissions"] {
        let repo = Repo::new();
        with_included_config(&repo);
        let mark = repo.marker("fsmonitor-ran");
        let fsmonitor = format!("[core]\n\tfsmonitor = \"touch {mark}\"\n");
        let calls = [
            json!({"name": "read_file", "input": {"file_path": "tools/gitconfig"}}),
            write("tools/gitconfig", &fsmonitor),
            json!({"name": "edit_file", "input": {"file_path": "tools/gitconfig", "old_string": "[alias]", "new_string": format!("{fsmonitor}[alias]")}}),
            write("tools/branch.gitconfig", &fsmonitor),
            write("tools/other.txt", "not git's\n"),
        ];
        let results = repo.ask(&calls, &["--permission-mode", mode]);
        assert_eq!(results.len(), calls.len(), "{mode}: {results:?}");
        for (index, result) in results.iter().enumerate().skip(1).take(3) {
            assert!(result.0 && result.1.contains("a protected path") && result.1.contains("git reads its config from"), "{mode}: call {index}: {result:?}");
        }
        assert!(!results[4].0, "{mode}: an ordinary file is written: {:?}", results[4]);
        users_git_runs_nothing_included(&repo, &mark, &results);
    }
}

/// Approved commands (bypassPermissions; through `eval`, which the
/// judgement cannot see into, so only the sandbox stands in the way) cannot
/// append to, replace or create a file the git config includes; the same
/// command written plainly is refused before it runs.
#[test]
fn approved_commands_cannot_write_a_file_the_git_config_includes() {
    if !sandbox_here("approved_commands_cannot_write_a_file_the_git_config_includes") {
        return;
    }
    let repo = Repo::new();
    with_included_config(&repo);
    let mark = repo.marker("planted-ran");
    let fsmonitor = format!("printf '[core]\\n\\tfsmonitor = \"touch {mark}\"\\n'");
    let commands = [
        format!("{fsmonitor} >> tools/gitconfig"),
        format!("rm -f tools/gitconfig; {fsmonitor} > tools/gitconfig"),
        format!("mv tools tools-old; mkdir tools; {fsmonitor} > tools/gitconfig"),
        format!("{fsmonitor} > tools/branch.gitconfig"),
    ];
    let mut calls: Vec<Value> = commands.iter().map(|c| shell(&format!("C={}; eval \"$C\"", shell_quote(c)))).collect();
    calls.push(shell(&format!("{fsmonitor} >> tools/gitconfig")));
    let results = repo.ask(&calls, &["--permission-mode", "bypassPermissions"]);
    assert_eq!(results.len(), calls.len(), "{results:?}");
    let plain = &results[commands.len()];
    assert!(plain.0 && plain.1.contains("a protected path"), "{plain:?}");
    users_git_runs_nothing_included(&repo, &mark, &results);
}

/// Git config that the run changed — here a `diff.external` the user let
/// it add (an allow rule names `.git/config`) — runs nothing in a later
/// command Tandem runs unasked (`git diff`, judged read-only): the
/// repository's code-running keys are read again as each command starts.
/// With the sandbox (the program's output would show in the result) and
/// without one (it would leave its marker).
#[test]
fn git_config_the_run_changed_runs_nothing_in_a_later_unasked_command() {
    for sandbox in [true, false] {
        let repo = Repo::new();
        with_included_config(&repo);
        std::fs::write(
            repo.home.join(".tandem/settings.json"),
            json!({"permissions": {"allow": ["edit_file(./.git/config)"]}, "sandbox": {"enabled": sandbox}}).to_string(),
        )
        .unwrap();
        let mark = repo.marker("external-ran");
        let external = format!("[diff]\n\texternal = \"echo EXTERNAL-RAN; touch {mark}\"\n[core]");
        let calls = [
            json!({"name": "read_file", "input": {"file_path": ".git/config"}}),
            json!({"name": "edit_file", "input": {"file_path": ".git/config", "old_string": "[core]", "new_string": external}}),
            shell("git diff"),
        ];
        let results = repo.ask(&calls, &[]);
        assert_eq!(results.len(), calls.len(), "{results:?}");
        assert!(!results[1].0 && std::fs::read_to_string(repo.root.join(".git/config")).unwrap().contains("EXTERNAL-RAN"), "sandbox {sandbox}: the edit was allowed: {results:?}");
        assert!(!results[2].1.contains("EXTERNAL-RAN") && !Path::new(&mark).exists(), "sandbox {sandbox}: git diff ran the diff.external the run added: {results:?}");
        assert!(!results[2].1.contains("needs permission"), "sandbox {sandbox}: git diff ran unasked: {results:?}");
    }
}
