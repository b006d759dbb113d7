//! `tandem tool NAME JSON` end to end: the real binary, run in a temp
//! workspace, prints exactly the result text the model would get and exits
//! 0 for a result, 1 for an error result.
//!
//! Each invocation is a fresh run with an empty read ledger, which is what
//! the read-before-edit cases below rely on.

#![allow(clippy::unwrap_used)]

use crate::common::files;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A workspace folder inside a temp folder, so there is an "outside" to
/// escape to, and a private cache folder for persisted results.
struct Sandbox {
    _temp: tempfile::TempDir,
    outer: PathBuf,
    root: PathBuf,
    cache: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let outer = temp.path().canonicalize().unwrap();
        let root = outer.join("workspace");
        let cache = outer.join("cache");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&cache).unwrap();
        Sandbox { _temp: temp, outer, root, cache }
    }

    fn file(&self, rel: &str, text: &str) -> &Self {
        files::write_file(&self.root, rel, text.as_bytes());
        self
    }

    /// Run `tandem tool NAME INPUT` in the workspace: (exit code, stdout).
    fn tool(&self, name: &str, input: &str) -> (i32, String) {
        let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["tool", name, input])
            .current_dir(&self.root)
            .env("XDG_CACHE_HOME", &self.cache)
            .env_remove("TANDEM_LOG")
            .output()
            .expect("the tandem binary runs");
        let stdout = String::from_utf8(output.stdout).expect("stdout is UTF-8");
        let stdout = stdout.replace(&self.outer.display().to_string(), "$TMP");
        (output.status.code().unwrap_or(-1), stdout)
    }
}

fn json_path(path: &Path) -> String {
    serde_json::to_string(&path.display().to_string()).unwrap()
}

#[test]
fn read_file_prints_numbered_lines_and_exits_0() {
    let sandbox = Sandbox::new();
    sandbox.file("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let (code, out) = sandbox.tool("read_file", r#"{"file_path": "src/main.rs"}"#);
    assert_eq!(code, 0);
    assert_eq!(out, "   1 | fn main() {\n   2 |     println!(\"hi\");\n   3 | }\n");
}

#[test]
fn read_file_pages_with_offset_and_limit() {
    let sandbox = Sandbox::new();
    let text: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    sandbox.file("log.txt", &text);
    let (code, out) = sandbox.tool("read_file", r#"{"file_path": "log.txt", "offset": 10, "limit": 3}"#);
    assert_eq!(code, 0);
    expect_test::expect![[r#"
          10 | line 10
          11 | line 11
          12 | line 12
        ... (file has 50 lines; showing lines 10-12. Call read_file with offset=13 to continue.)
    "#]]
    .assert_eq(&out);
}

#[test]
fn errors_exit_1_with_the_message_on_stdout() {
    let sandbox = Sandbox::new();
    sandbox.file("a.txt", "x\n");
    std::fs::create_dir(sandbox.root.join("folder")).unwrap();
    let cases = [
        ("read_file", r#"{"file_path": "missing.txt"}"#),
        ("read_file", r#"{"file_path": "folder"}"#),
        ("read_file", r#"{"file_path": "a.txt", "offset": 5}"#),
        ("read_file", r#"{"path": "a.txt"}"#),
        ("read_file", r#"not json"#),
        ("edit_file", r#"{"file_path": "a.txt", "old_string": "x", "new_string": "y"}"#),
        ("write_file", r#"{"file_path": "a.txt", "content": "y"}"#),
    ];
    let mut transcript = String::new();
    for (name, input) in cases {
        let (code, out) = sandbox.tool(name, input);
        transcript.push_str(&format!("$ tandem tool {name} '{input}'  → exit {code}\n{out}"));
    }
    expect_test::expect![[r#"
        $ tandem tool read_file '{"file_path": "missing.txt"}'  → exit 1
        Error: file not found: missing.txt. Check the path (relative to the workspace root), or use list_files to find the file.
        $ tandem tool read_file '{"file_path": "folder"}'  → exit 1
        Error: folder is a directory, not a file. Use list_files to see what it contains.
        $ tandem tool read_file '{"file_path": "a.txt", "offset": 5}'  → exit 1
        Error: offset 5 is past the end of a.txt, which has 1 line. Use an offset from 1 to 1.
        $ tandem tool read_file '{"path": "a.txt"}'  → exit 1
        Invalid input for read_file: missing field "file_path"
        $ tandem tool read_file 'not json'  → exit 1
        Invalid input for read_file: not valid JSON: expected ident at line 1 column 2
        $ tandem tool edit_file '{"file_path": "a.txt", "old_string": "x", "new_string": "y"}'  → exit 1
        Error: You must read this file before editing it. Call read_file on a.txt first.
        $ tandem tool write_file '{"file_path": "a.txt", "content": "y"}'  → exit 1
        Error: You must read this file before writing it. Call read_file on a.txt first.
    "#]]
    .assert_eq(&transcript);
    assert_eq!(std::fs::read_to_string(sandbox.root.join("a.txt")).unwrap(), "x\n");
}

#[test]
fn unknown_tool_is_an_error_result() {
    let sandbox = Sandbox::new();
    let (code, out) = sandbox.tool("delete_everything", "{}");
    assert_eq!(code, 1);
    assert!(out.starts_with("Unknown tool: delete_everything. Available tools: read_file, write_file, edit_file"), "{out}");
}

#[test]
fn paths_are_confined_to_the_workspace() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.outer.join("secret.txt"), "outside\n").unwrap();
    std::os::unix::fs::symlink(sandbox.outer.join("secret.txt"), sandbox.root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&sandbox.outer, sandbox.root.join("up")).unwrap();
    let cases = [
        ("read_file", r#"{"file_path": "../secret.txt"}"#.to_string()),
        ("read_file", r#"{"file_path": "/etc/passwd"}"#.to_string()),
        ("read_file", r#"{"file_path": "link.txt"}"#.to_string()),
        ("read_file", r#"{"file_path": "up/secret.txt"}"#.to_string()),
        ("read_file", format!(r#"{{"file_path": {}}}"#, json_path(&sandbox.outer.join("secret.txt")))),
        ("write_file", r#"{"file_path": "../new.txt", "content": "x"}"#.to_string()),
        ("write_file", r#"{"file_path": "up/new.txt", "content": "x"}"#.to_string()),
        ("edit_file", r#"{"file_path": "link.txt", "old_string": "outside", "new_string": "pwned"}"#.to_string()),
    ];
    let mut transcript = String::new();
    for (name, input) in &cases {
        let (code, out) = sandbox.tool(name, input);
        transcript.push_str(&format!("{name} {input} → exit {code}\n{out}"));
    }
    expect_test::expect![[r#"
        read_file {"file_path": "../secret.txt"} → exit 1
        Error: ../secret.txt resolves to $TMP/secret.txt, which is outside the workspace. Only files inside the workspace can be accessed.
        read_file {"file_path": "/etc/passwd"} → exit 1
        Error: /etc/passwd resolves to /etc/passwd, which is outside the workspace. Only files inside the workspace can be accessed.
        read_file {"file_path": "link.txt"} → exit 1
        Error: link.txt resolves to $TMP/secret.txt, which is outside the workspace. Only files inside the workspace can be accessed.
        read_file {"file_path": "up/secret.txt"} → exit 1
        Error: up/secret.txt resolves to $TMP/secret.txt, which is outside the workspace. Only files inside the workspace can be accessed.
        read_file {"file_path": "$TMP/secret.txt"} → exit 1
        Error: $TMP/secret.txt resolves to $TMP/secret.txt, which is outside the workspace. Only files inside the workspace can be accessed.
        write_file {"file_path": "../new.txt", "content": "x"} → exit 1
        Error: ../new.txt resolves to $TMP/new.txt, which is outside the workspace. Only files inside the workspace can be accessed.
        write_file {"file_path": "up/new.txt", "content": "x"} → exit 1
        Error: up/new.txt resolves to $TMP/new.txt, which is outside the workspace. Only files inside the workspace can be accessed.
        edit_file {"file_path": "link.txt", "old_string": "outside", "new_string": "pwned"} → exit 1
        Error: link.txt resolves to $TMP/secret.txt, which is outside the workspace. Only files inside the workspace can be accessed.
    "#]]
    .assert_eq(&transcript.replace(&sandbox.outer.display().to_string(), "$TMP"));
    assert_eq!(std::fs::read_to_string(sandbox.outer.join("secret.txt")).unwrap(), "outside\n");
    assert!(!sandbox.outer.join("new.txt").exists());
}

#[test]
fn write_file_creates_a_file_and_edit_file_creates_with_empty_old_string() {
    let sandbox = Sandbox::new();
    let (code, out) = sandbox.tool("write_file", r#"{"file_path": "a/b/c.txt", "content": "one\ntwo\n"}"#);
    assert_eq!((code, out.as_str()), (0, "Successfully wrote to a/b/c.txt (2 lines)\n   1 | one\n   2 | two\n"));
    assert_eq!(std::fs::read_to_string(sandbox.root.join("a/b/c.txt")).unwrap(), "one\ntwo\n");
    let (code, out) = sandbox.tool("edit_file", r##"{"file_path": "new.md", "old_string": "", "new_string": "# Title\n"}"##);
    assert_eq!((code, out.as_str()), (0, "Successfully created new.md\n@@ -1,0 +1,1 @@\n   1 + # Title\n"));
    let leftovers: Vec<_> = files::read_tree(&sandbox.root).into_keys().filter(|k| k.ends_with(".tmp")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn persisted_results_can_be_paged_but_the_rest_of_the_cache_cannot() {
    let sandbox = Sandbox::new();
    // This workspace's own results folder.
    let results = tandem::workspace::state_dir_in(&sandbox.cache, &sandbox.root.canonicalize().unwrap()).join("tool-results");
    let saved: String = (1..=3000).map(|i| format!("match {i}\n")).collect();
    files::write_file(&results, "toolu_01.txt", saved.as_bytes());
    files::write_file(&sandbox.cache, "other.txt", b"private\n");
    // Another workspace's results.
    let elsewhere = sandbox.cache.join("tandem/workspaces/other-0123456789abcdef/tool-results");
    files::write_file(&elsewhere, "toolu_02.txt", b"another project's output\n");
    let input = format!(r#"{{"file_path": {}}}"#, json_path(&elsewhere.join("toolu_02.txt")));
    let (code, out) = sandbox.tool("read_file", &input);
    assert_eq!(code, 1);
    assert!(out.contains("outside the workspace"), "{out}");

    let input = format!(r#"{{"file_path": {}, "offset": 2999}}"#, json_path(&results.join("toolu_01.txt")));
    let (code, out) = sandbox.tool("read_file", &input);
    assert_eq!((code, out.as_str()), (0, "2999 | match 2999\n3000 | match 3000\n"));

    let input = format!(r#"{{"file_path": {}}}"#, json_path(&sandbox.cache.join("other.txt")));
    let (code, out) = sandbox.tool("read_file", &input);
    assert_eq!(code, 1);
    assert!(out.contains("outside the workspace"), "{out}");
    // Reading is allowed there, writing is not.
    let input = format!(r#"{{"file_path": {}, "content": "x"}}"#, json_path(&results.join("toolu_01.txt")));
    let (code, out) = sandbox.tool("write_file", &input);
    assert_eq!(code, 1);
    assert!(out.contains("outside the workspace"), "{out}");
}

/// `tandem tool` runs through the host like every run: the call is the
/// user's own (approved), yet the settings' deny rules still refuse it and
/// a settings file that does not parse stops it.
#[test]
fn tandem_tool_keeps_the_settings_deny_rules_and_fails_closed() {
    let sandbox = Sandbox::new();
    sandbox.file("a.txt", "keep me\n").file(".tandem/settings.json", r#"{"permissions": {"deny": ["run_shell(rm:*)", "write_file"]}}"#);
    let (code, out) = sandbox.tool("run_shell", r#"{"command": "rm a.txt"}"#);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("forbids this call"), "{out}");
    let (code, out) = sandbox.tool("write_file", r#"{"file_path": "b.txt", "content": "x\n"}"#);
    assert_eq!(code, 1, "{out}");
    assert!(!sandbox.root.join("b.txt").exists());
    assert_eq!(std::fs::read_to_string(sandbox.root.join("a.txt")).unwrap(), "keep me\n");
    // What no rule forbids runs without asking anyone.
    let (code, out) = sandbox.tool("run_shell", r#"{"command": "cat a.txt"}"#);
    assert_eq!((code, out.as_str()), (0, "keep me\n"));

    sandbox.file(".tandem/settings.json", "{\"permissions\": ");
    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["tool", "read_file", r#"{"file_path": "a.txt"}"#])
        .current_dir(&sandbox.root)
        .env("XDG_CACHE_HOME", &sandbox.cache)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains(".tandem/settings.json:1:"), "{}", String::from_utf8_lossy(&output.stderr));
}

/// A tool that runs no command starts no process: no sandbox probe
/// (bubblewrap's `--version` and a trial run) and no read of the
/// repositories' git configuration, which were most of `tandem tool`'s
/// start-up (issue 31). `bwrap` and `git` first on `PATH` note each start;
/// run_shell still starts them both.
#[test]
fn a_tool_that_runs_no_command_starts_no_process() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = Sandbox::new();
    sandbox.file("a.txt", "one\n");
    let bin = sandbox.outer.join("bin");
    let started = sandbox.outer.join("started.txt");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["bwrap", "git"] {
        // The probe of a bwrap that fails finds no sandbox; git answers nothing.
        let code = if name == "bwrap" { 1 } else { 0 };
        let script = bin.join(name);
        std::fs::write(&script, format!("#!/bin/sh\necho {name} >> '{}'\nexit {code}\n", started.display())).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let run = |name: &str, input: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["tool", name, input])
            .current_dir(&sandbox.root)
            .env("XDG_CACHE_HOME", &sandbox.cache)
            .env("PATH", &path)
            .output()
            .unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stdout).to_string())
    };
    for (name, input) in [("read_file", r#"{"file_path": "a.txt"}"#), ("list_files", r#"{"pattern": "*.txt"}"#), ("grep_search", r#"{"pattern": "one"}"#)] {
        let (code, out) = run(name, input);
        assert_eq!(code, Some(0), "{name}: {out}");
        assert!(!started.exists(), "{name} started {:?}", std::fs::read_to_string(&started));
    }
    let (code, out) = run("run_shell", r#"{"command": "cat a.txt"}"#);
    assert_eq!((code, out.as_str()), (Some(0), "one\n"));
    let seen = std::fs::read_to_string(&started).unwrap();
    assert!(seen.contains("bwrap") && seen.contains("git"), "{seen}");
}
