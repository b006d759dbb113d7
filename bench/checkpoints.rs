//! Section of `bench/run` (through `bench/checkpoints.sh`): what a run
//! pays for its checkpoint (docs/undo.md). A run edits one file of the
//! benchmark tree through the real executor (`read_file`, then
//! `edit_file`), once without a checkpoint recorder and once with one
//! (the recorder on the run's workspace, finished at the run's end, as the
//! host attaches it), the two alternating; then the same run with a shell
//! command (`true`), for which the recorder looks at the whole tree before
//! and after (stat data only once the tree index is warm); and, once, the
//! first look at the tree, which reads and hashes every file.
//!
//! Checks (exit 1 when one fails): every recorded run's checkpoint names
//! exactly the edited file, and undoing it from the checkpoint restores
//! the file (which also resets it for the next run).
//!
//! Usage: `checkpoints --tree DIR [--label TEXT] [--runs N] [--warm N] [--quick]`.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tandem::checkpoint::{restore, Checkpoints, Direction, FileStatus, Limits};
use tandem::tools::executor::AllowAll;
use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry};
use tandem::workspace::Workspace;

/// Issue 19: a run that edits one file pays at most this for its checkpoints.
const TARGET_MS: f64 = 100.0;

/// The file the runs edit, made at the tree's root for the section and
/// removed after it.
const TARGET_FILE: &str = "tandem-bench-checkpoint.txt";

struct Options {
    tree: PathBuf,
    label: String,
    runs: usize,
    warm: usize,
    quick: bool,
}

fn options() -> Options {
    let (mut tree, mut label, mut runs, mut warm, mut quick) = (None, None, 10, 2, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tree" => tree = args.next().map(PathBuf::from),
            "--label" => label = args.next(),
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "--warm" => warm = args.next().and_then(|n| n.parse().ok()).unwrap_or(warm),
            "--quick" => quick = true,
            other => {
                eprintln!("checkpoints bench: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let Some(tree) = tree else {
        eprintln!("checkpoints bench: --tree DIR is needed");
        std::process::exit(2);
    };
    let label = label.unwrap_or_else(|| tree.display().to_string());
    Options { tree, label, runs: runs.max(1), warm, quick }
}

#[derive(Clone, Copy)]
struct Stats {
    median: f64,
    min: f64,
    max: f64,
}

fn stats(samples: &[Duration]) -> Stats {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(|a, b| a.total_cmp(b));
    let n = ms.len();
    let median = if n % 2 == 1 { ms[n / 2] } else { (ms[n / 2 - 1] + ms[n / 2]) / 2.0 };
    Stats { median, min: ms[0], max: ms[n - 1] }
}

fn ms(v: f64) -> String {
    if v.abs() < 10.0 { format!("{v:.2}") } else { format!("{v:.1}") }
}

fn cell(s: Stats) -> String {
    format!("{} ({}–{})", ms(s.median), ms(s.min), ms(s.max))
}

/// Removes the edited file when the section ends, however it ends.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

struct Bench {
    tree: PathBuf,
    file: PathBuf,
    original: String,
    executor: Executor,
    store: Arc<Checkpoints>,
    failures: Vec<String>,
    next_run: usize,
}

impl Bench {
    async fn call(&self, ctx: &ToolContext, name: &str, input: serde_json::Value) {
        let call = ToolCall::new("toolu_bench", name, input);
        let result = self.executor.execute(&call, ctx).await.expect(name);
        assert!(!result.is_error, "{name} failed: {}", result.content);
    }

    /// One run: read and edit the file (and run `true` with `command`);
    /// with `record`, through a recorder finished at its end. Returns its
    /// time; the file is back as it was after it.
    async fn run(&mut self, record: bool, command: bool) -> Duration {
        let workspace = Workspace::new(&self.tree).expect("workspace at the benchmark tree");
        self.next_run += 1;
        let run_id = format!("run-{}", self.next_run);
        let path = self.file.display().to_string();
        let start = Instant::now();
        let recorder = record.then(|| self.store.record("bench", &run_id));
        let workspace = match &recorder {
            Some(recorder) => workspace.with_recorder(Checkpoints::recorder_for(recorder)),
            None => workspace,
        };
        let ctx = ToolContext::new(Arc::new(workspace));
        self.call(&ctx, "read_file", json!({"file_path": path})).await;
        self.call(&ctx, "edit_file", json!({"file_path": path, "old_string": "line 100 of", "new_string": "LINE 100 of"})).await;
        if command {
            self.call(&ctx, "run_shell", json!({"command": "true"})).await;
        }
        if let Some(recorder) = &recorder {
            recorder.finish();
        }
        let took = start.elapsed();
        match recorder {
            Some(recorder) => self.check_and_undo(&recorder.changed_files(), &run_id, &ctx.workspace).await,
            None => std::fs::write(&self.file, &self.original).expect("reset the edited file"),
        }
        took
    }

    /// The checkpoint names the edited file only, and its undo restores it.
    async fn check_and_undo(&mut self, changed: &[PathBuf], run_id: &str, workspace: &Workspace) {
        if changed != [self.file.clone()] {
            self.failures.push(format!("{run_id}: the checkpoint names {changed:?}, not only {}", self.file.display()));
        }
        match restore(&self.store, Direction::Undo, Some(run_id), workspace, None, &|_| false).await {
            Ok(report) if report.files.iter().all(|f| f.status == FileStatus::Restored) => {}
            Ok(report) => self.failures.push(format!("{run_id}: the undo did not restore every file: {:?}", report.files)),
            Err(err) => self.failures.push(format!("{run_id}: the undo failed: {err}")),
        }
        if std::fs::read_to_string(&self.file).ok().as_deref() != Some(self.original.as_str()) {
            self.failures.push(format!("{run_id}: after the undo the file does not hold its content before the run"));
            std::fs::write(&self.file, &self.original).expect("reset the edited file");
        }
    }

    /// Runs without and with the recorder, alternating.
    async fn compare(&mut self, options: &Options, command: bool) -> (Stats, Stats) {
        let (mut without, mut with) = (Vec::new(), Vec::new());
        for round in 0..options.warm + options.runs {
            let a = self.run(false, command).await;
            let b = self.run(true, command).await;
            if round >= options.warm {
                without.push(a);
                with.push(b);
            }
        }
        (stats(&without), stats(&with))
    }
}

fn count_files(root: &Path) -> usize {
    tandem::checkpoint::tree::walk(&[root.to_path_buf()]).len()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let options = options();
    let file = options.tree.join(TARGET_FILE);
    let original: String = (1..=200).map(|n| format!("line {n} of the file the benchmark runs edit\n")).collect();
    std::fs::write(&file, &original).expect("write the edited file");
    let _remove = RemoveOnDrop(file.clone());
    let store_dir = tempfile::tempdir().expect("a temp folder for the checkpoint store");
    let roots = vec![options.tree.clone()];
    let store = Arc::new(Checkpoints::at(store_dir.path().to_path_buf(), roots, Limits::default()));
    let executor = Executor::new(ToolRegistry::builtin()).with_gate(Arc::new(AllowAll));
    let mut bench = Bench { tree: options.tree.clone(), file, original, executor, store, failures: Vec::new(), next_run: 0 };
    let files = count_files(&options.tree);

    // The store's first look at the tree: every file read and hashed, once.
    let first = bench.run(true, true).await;
    let (edit_without, edit_with) = bench.compare(&options, false).await;
    let (command_without, command_with) = bench.compare(&options, true).await;

    println!("## Checkpoints: what a run pays for its undo");
    println!();
    println!(
        "A run in `{}` ({files} files the checkpoint looks at) edits one file through the executor (`read_file`, then `edit_file`: the recorder keeps its content before and after, and the run's manifest), without and with the checkpoint recorder, the two alternating; median (min–max) of {} runs after {} warm-up runs{}. \"Added\" is the median with the recorder minus the median without it; the recorder's end (manifest, store limits) is inside the time. Target: at most {TARGET_MS} ms added to a run that edits one file.",
        options.label,
        options.runs,
        options.warm,
        if options.quick { "; quick mode: timings not meaningful" } else { "" }
    );
    println!();
    println!("| run | without ms | with the recorder ms | added ms | target | meets |");
    println!("|---|---|---|---|---|---|");
    let added = edit_with.median - edit_without.median;
    let meets = if options.quick { "—" } else if added <= TARGET_MS { "yes" } else { "**no**" };
    println!("| one edit | {} | {} | {} | ≤ {TARGET_MS} ms | {meets} |", cell(edit_without), cell(edit_with), ms(added));
    println!(
        "| one edit and one shell command (`true`): a look at the tree before and after it, the tree index warm | {} | {} | {} | — | — |",
        cell(command_without),
        cell(command_with),
        ms(command_with.median - command_without.median)
    );
    println!("| the same, the store's first look at the tree (every file read and hashed; once) | — | {} | — | — | — |", ms(first.as_secs_f64() * 1000.0));
    println!();
    println!("Checked: each recorded run's checkpoint names only the edited file, and undoing it restores the file.");
    println!();
    if !bench.failures.is_empty() {
        println!("**Checks that failed:**");
        for failure in &bench.failures {
            println!("- {failure}");
        }
        println!();
        std::process::exit(1);
    }
}
