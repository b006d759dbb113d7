//! Integration tests for `list_files`, `grep_search` and `run_shell`, each
//! call passing through the real executor (validation, capping) against a
//! workspace in a temp folder, and for the secrets rule through the real
//! `tandem` binary.

#![allow(clippy::unwrap_used)] // tests fail loudly on purpose

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use expect_test::expect;
use serde_json::{json, Value};
use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry, ToolResult};
use tandem::workspace::{MemoryEditor, Workspace};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    editor: Arc<MemoryEditor>,
    ctx: ToolContext,
}

impl Fixture {
    /// A workspace over a fresh temp folder holding `files` (path, text).
    fn new(files: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (path, text) in files {
            write(&root.join(path), text);
        }
        let editor = Arc::new(MemoryEditor::default());
        let workspace = Workspace::with_roots(vec![root.clone()], Some(editor.clone())).unwrap();
        let ctx = ToolContext::new(Arc::new(workspace));
        Fixture { _dir: dir, root, editor, ctx }
    }

    async fn call(&self, tool: &str, input: Value) -> ToolResult {
        let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None);
        let call = ToolCall::new("toolu_test", tool, input);
        executor.execute(&call, &self.ctx).await.unwrap()
    }

    /// The result text; panics when the result's error flag is not `is_error`.
    async fn text(&self, tool: &str, input: Value, is_error: bool) -> String {
        let result = self.call(tool, input).await;
        assert_eq!(result.is_error, is_error, "{}", result.content);
        result.content
    }

    /// Give files distinct modification times: the first is the newest.
    fn age(&self, newest_first: &[&str]) {
        let now = SystemTime::now();
        for (i, path) in newest_first.iter().enumerate() {
            let file = std::fs::File::options().write(true).open(self.root.join(path)).unwrap();
            file.set_modified(now - Duration::from_secs(60 * (i as u64 + 1))).unwrap();
        }
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Files for the ignore-rule tests: a git repository (a `.git` folder is
/// what the ignore rules look for) with `.gitignore`, `.ignore` and hidden
/// entries.
const IGNORE_TREE: &[(&str, &str)] = &[
    (".git/HEAD", "ref: refs/heads/main\n"),
    (".gitignore", "build/\n*.log\n"),
    (".ignore", "secret.txt\n"),
    (".env", "TOKEN=needle\n"),
    (".github/workflows/ci.yml", "run: needle\n"),
    ("build/out.txt", "needle\n"),
    ("debug.log", "needle\n"),
    ("secret.txt", "needle\n"),
    ("src/main.rs", "fn main() { needle(); }\n"),
    ("src/lib.rs", "pub fn needle() {}\n"),
    ("README.md", "needle in a haystack\n"),
];

// ---------------------------------------------------------------- list_files

#[tokio::test]
async fn list_files_honours_ignore_files_and_skips_hidden() {
    let fx = Fixture::new(IGNORE_TREE);
    fx.age(&["src/main.rs", "README.md", "src/lib.rs", ".gitignore", ".ignore"]);
    let out = fx.text("list_files", json!({"pattern": "*"}), false).await;
    expect![[r#"
        src/main.rs
        README.md
        src/lib.rs"#]]
    .assert_eq(&out);
}

#[tokio::test]
async fn list_files_lists_hidden_files_the_pattern_names_but_never_git() {
    let fx = Fixture::new(IGNORE_TREE);
    let out = fx.text("list_files", json!({"pattern": ".github/**"}), false).await;
    expect![[r#".github/workflows/ci.yml"#]].assert_eq(&out);
    let out = fx.text("list_files", json!({"pattern": "**/.env"}), false).await;
    expect![[r#".env"#]].assert_eq(&out);
    let out = fx.text("list_files", json!({"pattern": ".git/**"}), false).await;
    expect![[r#"No files found matching the pattern."#]].assert_eq(&out);
}

#[tokio::test]
async fn gitignore_counts_only_inside_a_git_repository_but_ignore_always() {
    // Like ripgrep: without `.git`, `.gitignore` is just a file.
    let tree: Vec<_> = IGNORE_TREE.iter().filter(|(p, _)| !p.starts_with(".git/")).copied().collect();
    let fx = Fixture::new(&tree);
    let out = fx.text("list_files", json!({"pattern": "*.{txt,log}"}), false).await;
    let mut lines: Vec<_> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, ["build/out.txt", "debug.log"], "secret.txt stays hidden by .ignore");
}

#[tokio::test]
async fn list_files_glob_patterns() {
    let fx = Fixture::new(&[
        ("a.rs", ""),
        ("src/b.rs", ""),
        ("src/deep/c.rs", ""),
        ("web/d.ts", ""),
        ("web/e.tsx", ""),
        ("web/f.js", ""),
    ]);
    let sorted = |out: String| {
        let mut lines: Vec<String> = out.lines().map(String::from).collect();
        lines.sort();
        lines.join(" ")
    };
    let cases = [
        ("*.rs", None),
        ("src/*.rs", None),
        ("src/**/*.rs", None),
        ("**/*.{ts,tsx}", None),
        ("*.rs", Some("src")),
        ("deep/*.rs", Some("src")),
    ];
    let mut got = String::new();
    for (pattern, path) in cases {
        let input = match path {
            Some(p) => json!({"pattern": pattern, "path": p}),
            None => json!({"pattern": pattern}),
        };
        got.push_str(&format!("{pattern} in {}: {}\n", path.unwrap_or("."), sorted(fx.text("list_files", input, false).await)));
    }
    expect![[r#"
        *.rs in .: a.rs src/b.rs src/deep/c.rs
        src/*.rs in .: src/b.rs
        src/**/*.rs in .: src/b.rs src/deep/c.rs
        **/*.{ts,tsx} in .: web/d.ts web/e.tsx
        *.rs in src: src/b.rs src/deep/c.rs
        deep/*.rs in src: src/deep/c.rs
    "#]]
    .assert_eq(&got);
}

#[tokio::test]
async fn list_files_is_newest_first() {
    let fx = Fixture::new(&[("old.txt", ""), ("mid.txt", ""), ("new.txt", ""), ("z/newest.txt", "")]);
    fx.age(&["z/newest.txt", "new.txt", "mid.txt", "old.txt"]);
    let out = fx.text("list_files", json!({"pattern": "**/*.txt"}), false).await;
    expect![[r#"
        z/newest.txt
        new.txt
        mid.txt
        old.txt"#]]
    .assert_eq(&out);
}

#[tokio::test]
async fn list_files_shows_200_and_counts_the_rest() {
    let names: Vec<String> = (0..250).map(|i| format!("d{}/f{i:03}.txt", i % 7)).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
    let fx = Fixture::new(&files);
    // Give every file its own age: f000 is the newest.
    let order: Vec<&str> = names.iter().map(String::as_str).collect();
    fx.age(&order);
    let out = fx.text("list_files", json!({"pattern": "*.txt"}), false).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 201);
    assert_eq!(lines[..200], order[..200]);
    assert_eq!(lines[200], "... and 50 more (narrow the pattern or the path to see them)");
}

#[tokio::test]
async fn list_files_errors_and_empty_results() {
    let fx = Fixture::new(&[("src/a.rs", "")]);
    let out = fx.text("list_files", json!({"pattern": "*.py"}), false).await;
    assert_eq!(out, "No files found matching the pattern.");
    let out = fx.text("list_files", json!({"pattern": "*", "path": "../"}), true).await;
    assert!(out.contains("outside the workspace"), "{out}");
    let out = fx.text("list_files", json!({"pattern": "*", "path": "nope"}), true).await;
    assert!(out.starts_with("Error: path not found: nope"), "{out}");
    let out = fx.text("list_files", json!({"pattern": "*", "path": "src/a.rs"}), true).await;
    assert!(out.starts_with("Error: src/a.rs is a file, not a folder"), "{out}");
    let out = fx.text("list_files", json!({"pattern": "[z"}), true).await;
    assert!(out.starts_with("Error: invalid glob pattern"), "{out}");
}

#[tokio::test]
async fn list_files_includes_files_open_only_in_the_editor() {
    let fx = Fixture::new(&[("src/a.rs", "")]);
    fx.age(&["src/a.rs"]);
    fx.editor.open(&fx.root.join("src/unsaved.rs"), "fn draft() {}\n", 1);
    let out = fx.text("list_files", json!({"pattern": "*.rs"}), false).await;
    expect![[r#"
        src/unsaved.rs
        src/a.rs"#]]
    .assert_eq(&out);
}

// --------------------------------------------------------------- grep_search

#[tokio::test]
async fn grep_prints_path_line_text_sorted() {
    let fx = Fixture::new(&[
        ("b.rs", "one\nfn beta() {}\n"),
        ("a/z.rs", "fn zeta() {}\nfn zeta2() {}\n"),
        ("a.rs", "fn alpha() {}\n"),
    ]);
    let out = fx.text("grep_search", json!({"pattern": r"fn \w+\("}), false).await;
    expect![[r#"
        a.rs:1:fn alpha() {}
        a/z.rs:1:fn zeta() {}
        a/z.rs:2:fn zeta2() {}
        b.rs:2:fn beta() {}"#]]
    .assert_eq(&out);
}

#[tokio::test]
async fn grep_invalid_regex_is_an_error_for_the_model() {
    let fx = Fixture::new(&[("a.rs", "x\n")]);
    let out = fx.text("grep_search", json!({"pattern": "fn (open"}), true).await;
    assert!(out.starts_with("Error: invalid regex: "), "{out}");
    assert!(out.contains("unclosed group"), "{out}");
}

#[tokio::test]
async fn grep_honours_ignore_files_and_hidden() {
    let fx = Fixture::new(IGNORE_TREE);
    let out = fx.text("grep_search", json!({"pattern": "needle"}), false).await;
    expect![[r#"
        README.md:1:needle in a haystack
        src/lib.rs:1:pub fn needle() {}
        src/main.rs:1:fn main() { needle(); }"#]]
    .assert_eq(&out);
    // An include glob that names a hidden folder searches it.
    let out = fx.text("grep_search", json!({"pattern": "needle", "include": ".github/**"}), false).await;
    expect![[r#".github/workflows/ci.yml:1:run: needle"#]].assert_eq(&out);
}

#[tokio::test]
async fn grep_include_and_case_insensitive() {
    let fx = Fixture::new(&[("a.rs", "Needle\n"), ("b.py", "needle\n"), ("c/d.rs", "NEEDLE\n")]);
    let out = fx.text("grep_search", json!({"pattern": "needle", "include": "*.rs"}), false).await;
    assert_eq!(out, "No matches found.");
    let out = fx.text("grep_search", json!({"pattern": "needle", "include": "*.rs", "case_insensitive": true}), false).await;
    expect![[r#"
        a.rs:1:Needle
        c/d.rs:1:NEEDLE"#]]
    .assert_eq(&out);
    let out = fx.text("grep_search", json!({"pattern": "needle", "path": "c", "case_insensitive": true}), false).await;
    expect![[r#"c/d.rs:1:NEEDLE"#]].assert_eq(&out);
    let out = fx.text("grep_search", json!({"pattern": "Needle", "path": "a.rs"}), false).await;
    expect![[r#"a.rs:1:Needle"#]].assert_eq(&out);
}

#[tokio::test]
async fn grep_skips_binary_files() {
    let fx = Fixture::new(&[("text.txt", "needle\n")]);
    std::fs::write(fx.root.join("blob.bin"), b"needle\n\x00\x01\x02needle\n").unwrap();
    let out = fx.text("grep_search", json!({"pattern": "needle"}), false).await;
    expect![[r#"text.txt:1:needle"#]].assert_eq(&out);
}

#[tokio::test]
async fn grep_searches_the_open_buffer_not_the_disk() {
    let fx = Fixture::new(&[("src/a.rs", "fn on_disk() {}\n"), ("src/b.rs", "fn closed() {}\n")]);
    fx.editor.open(&fx.root.join("src/a.rs"), "// unsaved\nfn in_buffer() {}\n", 3);
    fx.editor.open(&fx.root.join("src/new.rs"), "fn only_in_editor() {}\n", 1);
    let out = fx.text("grep_search", json!({"pattern": r"fn \w+"}), false).await;
    expect![[r#"
        src/a.rs:2:fn in_buffer() {}
        src/b.rs:1:fn closed() {}
        src/new.rs:1:fn only_in_editor() {}"#]]
    .assert_eq(&out);
    let out = fx.text("grep_search", json!({"pattern": "on_disk"}), false).await;
    assert_eq!(out, "No matches found.");
}

#[tokio::test]
async fn grep_shows_100_and_counts_every_match() {
    // 40 files of 7 matching lines (and lines that do not match): 280 matches.
    let texts: Vec<(String, String)> = (0..40)
        .map(|f| {
            let body: String = (1..=7).map(|l| format!("hit {f} {l}\nmiss\n")).collect();
            (format!("d{}/f{f:02}.txt", f % 3), body)
        })
        .collect();
    let files: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let fx = Fixture::new(&files);
    let out = fx.text("grep_search", json!({"pattern": "^hit"}), false).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 101);
    let mut expected: Vec<(String, usize, String)> = Vec::new();
    for (path, body) in &texts {
        for (i, line) in body.lines().enumerate() {
            if line.starts_with("hit") {
                expected.push((path.clone(), i + 1, line.to_string()));
            }
        }
    }
    expected.sort();
    let expected: Vec<String> = expected[..100].iter().map(|(p, l, t)| format!("{p}:{l}:{t}")).collect();
    assert_eq!(lines[..100], expected[..]);
    assert_eq!(lines[100], "... and 180 more matches (narrow the pattern, or give path or include to see them)");
}

#[tokio::test]
async fn grep_cuts_long_lines_around_the_match() {
    let line = format!("{}needle{}\n", "x".repeat(5000), "y".repeat(5000));
    let fx = Fixture::new(&[("long.txt", &line)]);
    let out = fx.text("grep_search", json!({"pattern": "needle"}), false).await;
    let expected = format!("long.txt:1:[...] {}needle{} [... line cut, 10006 chars]", "x".repeat(100), "y".repeat(194));
    assert_eq!(out, expected);
}

// ----------------------------------------------------------------- run_shell

#[tokio::test]
async fn shell_output_shapes() {
    let fx = Fixture::new(&[]);
    let cases = [
        "echo out",
        "echo out; echo err >&2",
        "true",
        "echo out; echo err >&2; exit 3",
        "exit 7",
        "kill -9 $$",
    ];
    let mut got = String::new();
    for command in cases {
        let result = fx.call("run_shell", json!({"command": command})).await;
        got.push_str(&format!("$ {command}  [is_error: {}]\n{}\n\n", result.is_error, result.content));
    }
    expect![[r#"
        $ echo out  [is_error: false]
        out

        $ echo out; echo err >&2  [is_error: false]
        out
        Stderr:
        err

        $ true  [is_error: false]
        (no output)

        $ echo out; echo err >&2; exit 3  [is_error: true]
        Command failed (exit code 3)
        Stdout:
        out
        Stderr:
        err

        $ exit 7  [is_error: true]
        Command failed (exit code 7)

        $ kill -9 $$  [is_error: true]
        Command failed (exit code 137, killed by signal 9)

    "#]]
    .assert_eq(&got);
}

#[tokio::test]
async fn shell_runs_in_the_workspace_root_with_no_stdin() {
    let fx = Fixture::new(&[]);
    let out = fx.text("run_shell", json!({"command": "pwd; cat; echo end"}), false).await;
    assert_eq!(out, format!("{}\nend", fx.root.display()));
}

/// True when `pid` has exited (gone, or a zombie waiting to be reaped).
fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Err(_) => true,
        Ok(status) => status.lines().any(|l| l.starts_with("State:") && (l.contains("Z") || l.contains("X"))),
    }
}

fn pid_after(marker: &str, text: &str) -> u32 {
    let start = text.find(marker).unwrap_or_else(|| panic!("no {marker} in {text}")) + marker.len();
    text[start..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap()
}

#[tokio::test]
async fn shell_timeout_kills_the_whole_group_and_keeps_partial_output() {
    let fx = Fixture::new(&[]);
    // The shell starts a child that starts its own child; all must die.
    let command = "echo before; bash -c 'sh -c \"echo grandchild=\\$\\$; exec sleep 60\" & wait' & wait";
    let out = fx.text("run_shell", json!({"command": command, "timeout": 1500}), true).await;
    assert!(out.starts_with("Command timed out after 1500 ms"), "{out}");
    assert!(out.contains("Stdout:\nbefore"), "{out}");
    let grandchild = pid_after("grandchild=", &out);
    assert!(wait_dead(grandchild).await, "grandchild {grandchild} still alive");
}

/// Start a run_shell call whose command leaves a grandchild (`sleep 60`)
/// behind a waiting shell; return the running call and, once it exists, the
/// grandchild's pid.
async fn start_grandchild_call(
    fx: &Fixture,
    id: &str,
) -> (tokio::task::JoinHandle<Result<tandem::tools::ToolResult, tandem::tools::executor::FatalToolError>>, u32) {
    let pid_file = fx.root.join("grandchild.pid");
    let ctx = fx.ctx.clone();
    let call = ToolCall::new(
        id,
        "run_shell",
        json!({"command": "sh -c 'echo $$ > grandchild.pid.tmp; mv grandchild.pid.tmp grandchild.pid; exec sleep 60' & wait"}),
    );
    let task = tokio::spawn(async move {
        let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None);
        executor.execute(&call, &ctx).await
    });
    // Wait (bounded) for the grandchild to exist.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !pid_file.exists() {
        assert!(std::time::Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let grandchild: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    (task, grandchild)
}

#[tokio::test]
async fn shell_cancel_kills_the_group() {
    let fx = Fixture::new(&[]);
    let (call, grandchild) = start_grandchild_call(&fx, "toolu_cancel").await;
    assert!(!is_dead(grandchild));
    fx.ctx.cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(20), call).await.unwrap().unwrap().unwrap();
    assert!(result.is_error);
    assert!(result.content.starts_with("Command cancelled"), "{}", result.content);
    assert!(wait_dead(grandchild).await, "grandchild {grandchild} still alive");
}

/// The peak resident set of this test process, in kB.
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn shell_output_of_a_gigabyte_stays_bounded() {
    let fx = Fixture::new(&[]);
    let before = peak_rss_kb();
    let out = fx.text("run_shell", json!({"command": "yes 0123456789abcdef | head -c 1000000000"}), false).await;
    let grown_mb = (peak_rss_kb() - before) / 1024;
    assert!(grown_mb < 100, "peak memory grew by {grown_mb} MB");
    // The executor keeps the result's head and tail; the note closes it.
    assert!(out.ends_with("(Output too long: dropped the middle 998951424 of 1000000000 stdout bytes. Redirect the output to a file and search it with grep_search, or page it with read_file.)"), "{}", &out[out.len() - 300..]);
    assert!(out.starts_with("0123456789abcdef\n0123456789abcdef\n"));
}

#[test]
fn shell_does_not_pass_api_keys_on() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["tool", "run_shell", r#"{"command": "env"}"#])
        .current_dir(dir.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-secret")
        .env("OPENAI_API_KEY", "sk-openai-secret")
        .env("SOME_SERVICE_API_KEY", "other-secret")
        .env("RUSTUP_HOME", "/opt/rustup-visible")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    // The environment is an allow-list: a toolchain variable passes.
    assert!(stdout.contains("RUSTUP_HOME=/opt/rustup-visible"), "{stdout}");
    assert!(!stdout.contains("secret"), "{stdout}");
}

/// Poll (bounded) until `pid` has exited: a signal is delivered
/// asynchronously after kill(2) returns.
async fn wait_dead(pid: u32) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !is_dead(pid) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    // The agent aborts a run's task: the call's future is dropped mid-way.
    let fx = Fixture::new(&[]);
    let (task, grandchild) = start_grandchild_call(&fx, "toolu_abort").await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert!(wait_dead(grandchild).await, "grandchild {grandchild} still alive");
}

#[tokio::test]
async fn a_background_process_holding_the_output_is_stopped_but_a_redirected_one_runs_on() {
    let fx = Fixture::new(&[]);
    let out = fx.text("run_shell", json!({"command": "sh -c 'echo holder=$$; exec sleep 60' & echo started"}), false).await;
    assert!(out.contains("started"), "{out}");
    assert!(out.contains("A background process kept the command's output open"), "{out}");
    let holder = pid_after("holder=", &out);
    assert!(wait_dead(holder).await, "holder {holder} still alive");

    let out = fx.text("run_shell", json!({"command": "sleep 60 > /dev/null 2>&1 & echo $!"}), false).await;
    let server: u32 = out.trim().parse().unwrap();
    assert!(!is_dead(server), "a redirected background process must keep running");
    // SAFETY: kill(2) on the pid this test started; no memory effects.
    unsafe { libc::kill(server as i32, libc::SIGKILL) };
}
