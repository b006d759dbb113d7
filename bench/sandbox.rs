//! Section of `bench/run` (through `bench/sandbox.sh`): what the sandbox
//! adds to one shell command. Each command runs as a `run_shell` call
//! through the real executor in the benchmark tree, three ways in turn:
//! without a sandbox, in the sandbox's unasked profile and in its approved
//! profile (bubblewrap, as a run gets it from `sandbox::for_run`). The
//! three alternate run by run, so load from other processes hits them
//! alike; the results must be the same text.
//!
//! Usage: `sandbox --tree DIR [--runs N] [--warm N] [--quick]` (bench/sandbox.sh
//! passes bench/run's settings). Prints one Markdown section; exits 1 when a
//! check fails (outputs that differ, a sandbox that lets an unasked command
//! write), and when no sandbox can start while `TANDEM_REQUIRE_BWRAP` is
//! set (else the section says why and the run goes on).
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::json;
use tandem::sandbox::{Availability, SandboxSettings};
use tandem::tools::ports::shell_sandbox::ShellLaunch;
use tandem::tools::{ShellProfile, ShellSandbox};
use tandem::tools::executor::{AllowAll, PermissionDecision, PermissionGate, PermissionRequest};
use tandem::tools::{Executor, ToolCall, ToolContext, ToolRegistry};
use tandem::workspace::Workspace;

#[path = "stats.rs"]
mod stats;
use stats::{cell, ms, stats};

/// The targets of issue 57: at most this much added per approved (and
/// contained) command, and per unasked one.
const TARGET_MS: f64 = 10.0;
const TARGET_UNASKED_MS: f64 = 5.0;

struct Options {
    tree: PathBuf,
    label: String,
    runs: usize,
    warm: usize,
    quick: bool,
}

fn options() -> Options {
    let mut tree = None;
    let mut label = None;
    let mut runs = 10;
    let mut warm = 2;
    let mut quick = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tree" => tree = args.next().map(PathBuf::from),
            "--label" => label = args.next(),
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "--warm" => warm = args.next().and_then(|n| n.parse().ok()).unwrap_or(warm),
            "--quick" => quick = true,
            other => {
                eprintln!("sandbox bench: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let Some(tree) = tree else {
        eprintln!("sandbox bench: --tree DIR is needed");
        std::process::exit(2);
    };
    let label = label.unwrap_or_else(|| tree.display().to_string());
    Options { tree, label, runs: runs.max(1), warm, quick }
}

/// The user approved every call: commands get the approved profile.
struct ApproveAll;

#[async_trait]
impl PermissionGate for ApproveAll {
    async fn decide(&self, _request: &PermissionRequest) -> PermissionDecision {
        PermissionDecision::Approved
    }
}

/// Every call runs because the sandbox contains it (`acceptEdits`,
/// `autoAllowSandboxed`): the contained profile.
struct ContainAll;

#[async_trait]
impl PermissionGate for ContainAll {
    async fn decide(&self, _request: &PermissionRequest) -> PermissionDecision {
        PermissionDecision::Contained
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Unsandboxed,
    Unasked,
    Contained,
    Approved,
}

const WAYS: [Way; 4] = [Way::Unsandboxed, Way::Unasked, Way::Contained, Way::Approved];

struct Bench {
    workspace: Arc<Workspace>,
    sandbox: Availability,
    allow: Executor,
    approve: Executor,
    contain: Executor,
}

impl Bench {
    /// One `run_shell` call: its result text and how long the executor took.
    async fn run(&self, way: Way, command: &str) -> (String, bool, Duration) {
        let mut ctx = ToolContext::new(Arc::clone(&self.workspace));
        if way != Way::Unsandboxed {
            ctx.sandbox = self.sandbox.sandbox();
        }
        let executor = match way {
            Way::Approved => &self.approve,
            Way::Contained => &self.contain,
            Way::Unsandboxed | Way::Unasked => &self.allow,
        };
        let call = ToolCall::new("toolu_bench", "run_shell", json!({"command": command}));
        let start = Instant::now();
        let result = executor.execute(&call, &ctx).await.expect("run_shell");
        (result.content, result.is_error, start.elapsed())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let options = options();
    println!("## Sandbox: cost per shell command");
    println!();
    let sandbox = tandem::sandbox::for_run(&SandboxSettings::default(), tandem::sandbox::Denies::none(), Arc::default());
    let Availability::Ready(ready) = &sandbox else {
        println!("Not measured: {}.", sandbox.describe());
        println!();
        if std::env::var_os("TANDEM_REQUIRE_BWRAP").is_some() {
            eprintln!("sandbox bench: TANDEM_REQUIRE_BWRAP is set and {}", sandbox.describe());
            std::process::exit(1);
        }
        return;
    };
    let describe = ready.describe();
    let workspace = Arc::new(Workspace::new(&options.tree).expect("workspace at the benchmark tree"));
    let bench = Bench {
        workspace,
        sandbox: sandbox.clone(),
        allow: Executor::new(ToolRegistry::builtin()).with_gate(Arc::new(AllowAll)),
        approve: Executor::new(ToolRegistry::builtin()).with_gate(Arc::new(ApproveAll)),
        contain: Executor::new(ToolRegistry::builtin()).with_gate(Arc::new(ContainAll)),
    };
    let mut failures: Vec<String> = Vec::new();

    // The sandbox is in force: an unasked command cannot write the tree,
    // an approved one can (else the figures would be for something else).
    let probe = options.tree.join("tandem-bench-sandbox-probe");
    let _ = std::fs::remove_file(&probe);
    let touch = format!("touch {}", probe.display());
    bench.run(Way::Unasked, &touch).await;
    if probe.exists() {
        failures.push("an unasked command wrote into the workspace through the sandbox".into());
    }
    bench.run(Way::Contained, &touch).await;
    if !probe.exists() {
        failures.push("a contained command could not write into the workspace".into());
    }
    let _ = std::fs::remove_file(&probe);
    bench.run(Way::Approved, &touch).await;
    if !probe.exists() {
        failures.push("an approved command could not write into the workspace".into());
    }
    let _ = std::fs::remove_file(&probe);

    // `--sort path`: rg's parallel walk prints matches in whatever order its
    // threads finish, and the three ways must print the same text.
    let commands = ["true", "ls", "rg -n --sort path parse_range_config"];
    println!(
        "Each command is a `run_shell` call through the executor in `{}` (its root), timed from the call to its result: without a sandbox, then in {describe} with the unasked, the contained and the approved profile, the four alternating; median (min–max) of {} runs after {} warm-up runs{}. \"Added\" is the median over the rounds of the sandboxed run minus the unsandboxed run of the same round. Target: at most {TARGET_UNASKED_MS} ms added per unasked command, {TARGET_MS} ms per contained or approved one.",
        options.label,
        options.runs,
        options.warm,
        if options.quick { "; quick mode: timings not meaningful" } else { "" }
    );
    println!();
    println!("| command | unsandboxed ms | unasked ms | contained ms | approved ms | added: unasked | added: contained | added: approved | same output | meets |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for command in commands {
        let mut times: [Vec<Duration>; 4] = Default::default();
        let mut outputs: [Option<(String, bool)>; 4] = Default::default();
        for round in 0..options.warm + options.runs {
            for (i, way) in WAYS.iter().enumerate() {
                let (text, is_error, took) = bench.run(*way, command).await;
                if round >= options.warm {
                    times[i].push(took);
                }
                outputs[i].get_or_insert((text, is_error));
            }
        }
        let in_ms = |samples: &[Duration]| samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect::<Vec<f64>>();
        let [plain, unasked, contained, approved] = [0, 1, 2, 3].map(|way| stats(&in_ms(&times[way])));
        let same = outputs.iter().all(|output| *output == outputs[0]);
        // rg finds nothing in a small tree (exit 1): the same in all three.
        let failed = !command.starts_with("rg") && outputs.iter().flatten().any(|(_, is_error)| *is_error);
        if !same || failed {
            let shown: Vec<String> = outputs.iter().flatten().map(|(text, _)| text.chars().take(300).collect()).collect();
            failures.push(format!("`{command}`: the results differ or failed: {shown:?}"));
        }
        // Paired per round: each sandboxed run minus the unsandboxed run of
        // the same round, so drift across rounds (other work on the machine,
        // the page cache) cancels; for a 400 ms `rg` the medians alone move
        // by more than the sandbox costs.
        let paired = |way: usize| {
            let differences: Vec<f64> = in_ms(&times[way]).iter().zip(in_ms(&times[0])).map(|(sandboxed, plain)| sandboxed - plain).collect();
            stats(&differences).median
        };
        let (added_unasked, added_contained, added_approved) = (paired(1), paired(2), paired(3));
        let meets = if options.quick {
            "—"
        } else if added_unasked <= TARGET_UNASKED_MS && added_contained.max(added_approved) <= TARGET_MS {
            "yes"
        } else {
            "**no**"
        };
        println!(
            "| `{command}` | {} | {} | {} | {} | {} | {} | {} | {} | {meets} |",
            cell(plain),
            cell(unasked),
            cell(contained),
            cell(approved),
            ms(added_unasked),
            ms(added_contained),
            ms(added_approved),
            if same { "yes" } else { "**no**" },
        );
    }
    println!();
    setup_table(ready.as_ref(), &bench.workspace, &options);
    if !failures.is_empty() {
        println!("**Checks that failed:**");
        for failure in &failures {
            println!("- {failure}");
        }
        println!();
        std::process::exit(1);
    }
}

/// Where a command's added time goes: Tandem's own set-up for it (the
/// sandbox's `confine`, which builds bubblewrap's arguments, and the
/// clean-up when the command ends), timed alone, against the whole added
/// time of the table above (the rest is bubblewrap's and the kernel's).
fn setup_table(sandbox: &dyn ShellSandbox, workspace: &Workspace, options: &Options) {
    let argv: Vec<std::ffi::OsString> = vec!["bash".into(), "-c".into(), "true".into()];
    println!("Tandem's own set-up per command (the sandbox's `confine`, which builds bubblewrap's arguments, and the clean-up when the command ends), timed alone, {} runs after {} warm-up runs: median (min–max) ms, and bubblewrap's arguments (mounts counted as the flags that make one).", options.runs.max(20), options.warm);
    println!();
    println!("| profile | set-up ms | arguments | mounts |");
    println!("|---|---|---|---|");
    for profile in [ShellProfile::Unasked, ShellProfile::Contained, ShellProfile::Approved] {
        let launch = ShellLaunch { profile, network: false, roots: workspace.roots(), argv: &argv };
        let mut times = Vec::new();
        let mut counts = (0, 0);
        for round in 0..options.warm + options.runs.max(20) {
            let start = Instant::now();
            let confined = sandbox.confine(&launch).expect("confine");
            counts = (
                confined.args.len(),
                confined.args.iter().filter(|a| ["--bind", "--bind-try", "--ro-bind", "--ro-bind-try", "--tmpfs", "--dev", "--proc"].contains(&a.to_str().unwrap_or(""))).count(),
            );
            drop(confined);
            if round >= options.warm {
                times.push(start.elapsed().as_secs_f64() * 1000.0);
            }
        }
        println!("| {} | {} | {} | {} |", profile.name(), cell(stats(&times)), counts.0, counts.1);
    }
    println!();
}
