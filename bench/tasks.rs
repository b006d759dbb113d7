//! Background-task figures (issue 32), printed as a Markdown section:
//!
//! 1. **`task_output` latency**: a task prints the time (`date +%s%N`)
//!    every 20 ms; a blocking `task_output` returns each line, and the
//!    latency is the time it returned minus the time printed. The
//!    reference, in the same run: the same command with its output in a
//!    log file (`cmd > log &`, what a user does by hand), read by GNU
//!    `tail -f` (which waits on inotify).
//! 2. **Bookkeeping per turn**: before each model request the loop takes
//!    the ended tasks' news (`take_endings`), and a front end's task view
//!    lists every task with its processes (`list`, a walk of `/proc`), with
//!    0, 8 and 32 running tasks. The reference for the listing is `ps -e`.
//!
//! The tasks run without the sandbox: the registry does not care, and the
//! sandbox's start-up is in the sandbox section.
//!
//! Usage: `tasks [--runs N] [--warm N] [--quick]`.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tandem::tasks::TaskRegistry;
use tandem::tools::ports::tasks::{TaskSpawn, Tasks};
use tokio_util::sync::CancellationToken;

const PRINTER: &str = "while :; do date +%s%N; sleep 0.02; done";

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos()
}

/// Start `script` as a task of thread `bench`.
fn start(registry: &TaskRegistry, script: &str) -> String {
    let (reader, writer) = std::io::pipe().unwrap();
    let mut cmd = tokio::process::Command::new("sh");
    cmd.args(["-c", script]).stdin(Stdio::null()).stdout(Stdio::from(writer.try_clone().unwrap())).stderr(Stdio::from(writer));
    let child = tandem::platform::ProcessTree::spawn(cmd).unwrap();
    let spawn = TaskSpawn { command: script.into(), child, output: reader, guard: Box::new(()), network: false, thread: "bench".into() };
    registry.start(spawn).unwrap().id
}

/// Latencies (µs) of each full line `text` holds, read at `at_ns`.
fn latencies(text: &str, at_ns: u128, out: &mut Vec<f64>) {
    for line in text.lines() {
        if let Ok(printed) = line.trim().parse::<u128>() {
            out.push(at_ns.saturating_sub(printed) as f64 / 1000.0);
        }
    }
}

async fn tandem_latency(lines: usize) -> Vec<f64> {
    let registry = TaskRegistry::new();
    let id = start(&registry, PRINTER);
    let cancel = CancellationToken::new();
    let mut out = Vec::new();
    let mut partial = String::new();
    while out.len() < lines {
        let read = registry.read(&id, Duration::from_secs(5), &cancel).await.unwrap();
        let at = now_ns();
        partial.push_str(&read.text);
        // Only whole lines: a read may end inside one.
        if let Some(end) = partial.rfind('\n') {
            let whole: String = partial.drain(..=end).collect();
            latencies(&whole, at, &mut out);
        }
    }
    registry.stop_all().await;
    out
}

fn tail_latency(lines: usize) -> Vec<f64> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    std::fs::write(&log, "").unwrap();
    let mut tail = std::process::Command::new("tail").args(["-n", "0", "-F"]).arg(&log).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut printer =
        std::process::Command::new("sh").args(["-c", &format!("{PRINTER} > '{}'", log.display())]).stdin(Stdio::null()).spawn().unwrap();
    let mut reader = BufReader::new(tail.stdout.take().unwrap());
    let mut out = Vec::new();
    let mut line = String::new();
    while out.len() < lines {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        latencies(&line, now_ns(), &mut out);
    }
    let _ = printer.kill();
    let _ = tail.kill();
    let _ = printer.wait();
    let _ = tail.wait();
    out
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let i = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[i.min(values.len() - 1)]
}

/// Median microseconds of `f` over `runs` calls after `warm`.
fn time_us(runs: usize, warm: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..warm {
        f();
    }
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    percentile(&mut times, 0.5)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (mut runs, mut warm, mut quick) = (10usize, 2usize, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "--warm" => warm = args.next().and_then(|n| n.parse().ok()).unwrap_or(warm),
            "--quick" => quick = true,
            other => panic!("unknown argument {other}"),
        }
    }
    let lines = if quick { 20 } else { 200 };
    let calls = runs.max(1) * if quick { 5 } else { 50 };

    let mut ours = tandem_latency(lines).await;
    let mut theirs = tokio::task::spawn_blocking(move || tail_latency(lines)).await.unwrap();
    assert!(ours.len() >= lines && theirs.len() >= lines, "every line read: {} and {}", ours.len(), theirs.len());

    println!("## Background tasks: task_output latency and bookkeeping per turn");
    println!();
    println!("A task prints the time every 20 ms; latency = when the reader had the line − when it was printed, over {lines} lines.");
    println!("The reference is the same command writing a log file, read by GNU `tail -F` (inotify), in the same run.");
    println!();
    println!("| reader | p50 µs | p90 µs | p99 µs |");
    println!("|---|---:|---:|---:|");
    for (name, values) in [("`task_output` (block 5 s)", &mut ours), ("`cmd > log &` + `tail -F`", &mut theirs)] {
        let (p50, p90, p99) = (percentile(values, 0.5), percentile(values, 0.9), percentile(values, 0.99));
        println!("| {name} | {p50:.0} | {p90:.0} | {p99:.0} |");
    }
    println!();
    println!("What a turn pays for the tasks (median of {calls} calls): `take_endings` before each model request, and");
    println!("`list` (every task with its processes, a walk of `/proc`) as a task view asks; `ps -e` is the reference for the listing.");
    println!();
    println!("| running tasks | `take_endings` µs | `list` µs | `ps -e` µs |");
    println!("|---:|---:|---:|---:|");
    for count in [0usize, 8, 32] {
        let registry = TaskRegistry::new();
        for _ in 0..count {
            start(&registry, "sleep 600");
        }
        // Each task's process is up before it is counted.
        let deadline = Instant::now() + Duration::from_secs(10);
        while registry.list().iter().map(|t| t.processes.len()).sum::<usize>() < count && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let endings = time_us(calls, warm, || {
            let _ = registry.take_endings("bench");
        });
        let list = time_us(calls, warm, || {
            let _ = registry.list();
        });
        let ps = time_us(runs.max(1), warm, || {
            let status = std::process::Command::new("ps").arg("-e").stdout(Stdio::null()).status().unwrap();
            assert!(status.success());
        });
        println!("| {count} | {endings:.1} | {list:.0} | {ps:.0} |");
        registry.stop_all().await;
    }
}
