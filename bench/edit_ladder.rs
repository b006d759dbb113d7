//! The edit ladder's figures (`bench/edit_ladder.sh`, a section of
//! `bench/run`): how many near-misses `edit_file` lands, that it never lands
//! on the wrong place, and how long a refusal with the nearest candidate
//! takes on a 10,000-line file. Prints Markdown on stdout.
//!
//! Usage: edit_ladder [--runs N] [--cases N] [--quick]

#![allow(clippy::print_stdout)]

#[path = "../tests/common/edit_cases.rs"]
mod edit_cases;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use serde_json::Value;
use tandem::tools::support::edit_match::{apply, find, nearest, plan, FindError, MatchRung};

struct Options {
    runs: usize,
    cases: u64,
}

fn options() -> Result<Options, String> {
    let mut options = Options { runs: 30, cases: 20_000 };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            args.next().and_then(|v| v.parse().ok()).ok_or(format!("{name} needs a number"))
        };
        match arg.as_str() {
            "--runs" => options.runs = number("--runs")?.max(1) as usize,
            "--cases" => options.cases = number("--cases")?,
            "--quick" => options = Options { runs: 1, cases: 500 },
            other => return Err(format!("unknown argument {other} (usage: edit_ladder [--runs N] [--cases N] [--quick])")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("edit_ladder: {message}");
            return ExitCode::from(2);
        }
    };
    let (corpus, corpus_ok) = corpus(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/edit"));
    let (synthetic, synthetic_ok) = synthetic(options.cases);
    let (timing, timing_ok) = timing(options.runs);
    println!("## edit_file matching ladder\n");
    println!("`bench/edit_ladder.sh` (see docs/edit_file.md).\n");
    print!("{corpus}\n{synthetic}\n{timing}");
    // A wrong-place edit, a missed scenario or an unexpected rung fails the
    // section, so bench/run's quick mode in CI checks them.
    if corpus_ok && synthetic_ok && timing_ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("edit_ladder: a wrong-place edit, a missed scenario or an unexpected rung (see the output)");
        ExitCode::FAILURE
    }
}

// ---------------------------------------------------------------------------
// The scenario corpus
// ---------------------------------------------------------------------------

#[derive(Default)]
struct CorpusCounts {
    scenarios: usize,
    should_land: usize,
    landed: usize,
    landed_old_ladder: usize,
    should_refuse: usize,
    refused: usize,
    wrong: Vec<String>,
    by_rung: BTreeMap<MatchRung, usize>,
}

/// Every edit_file scenario whose outcome is the matcher's: it should land
/// (an expected/ tree to compare with) or be refused as not found or not
/// unique. Scenarios about reading, freshness or paths are left out.
fn corpus(dir: &Path) -> (String, bool) {
    let mut counts = CorpusCounts::default();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    for dir in dirs {
        let Some(scenario) = Scenario::read(&dir) else { continue };
        counts.scenarios += 1;
        let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let outcome = find(&scenario.text, &scenario.old, scenario.replace_all);
        match (&scenario.expected, outcome) {
            (Some(expected), Ok(found)) => {
                counts.should_land += 1;
                let edited = apply(&scenario.text, &plan(&scenario.text, &found, &scenario.old, &scenario.new));
                if &edited == expected {
                    counts.landed += 1;
                    *counts.by_rung.entry(found.rung).or_default() += 1;
                    if found.rung <= MatchRung::Quotes {
                        counts.landed_old_ladder += 1;
                    }
                } else {
                    counts.wrong.push(format!("{name}: landed ({:?}) but wrote something else", found.rung));
                }
            }
            (Some(_), Err(_)) => counts.should_land += 1,
            (None, Ok(found)) => {
                counts.should_refuse += 1;
                counts.wrong.push(format!("{name}: landed ({:?}) where it should be refused", found.rung));
            }
            (None, Err(_)) => {
                counts.should_refuse += 1;
                counts.refused += 1;
            }
        }
    }
    let rate = |n: usize, of: usize| if of == 0 { "–".to_string() } else { format!("{:.0}%", 100.0 * n as f64 / of as f64) };
    let mut out = String::from("Scenario corpus (`tests/data/edit`, edit_file scenarios decided by the matcher):\n\n");
    out.push_str("| scenarios | should land | landed | acceptance | old ladder (exact, line endings, quotes) | should be refused | refused | wrong-place edits |\n");
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    out.push_str(&format!(
        "| {} | {} | {} | {} | {} ({}) | {} | {} | {} |\n",
        counts.scenarios,
        counts.should_land,
        counts.landed,
        rate(counts.landed, counts.should_land),
        counts.landed_old_ladder,
        rate(counts.landed_old_ladder, counts.should_land),
        counts.should_refuse,
        counts.refused,
        counts.wrong.len()
    ));
    let rungs: Vec<String> = counts.by_rung.iter().map(|(rung, n)| format!("{rung:?} {n}")).collect();
    out.push_str(&format!("\nLanded by rung: {}.\n", rungs.join(", ")));
    for wrong in &counts.wrong {
        out.push_str(&format!("\n- WRONG: {wrong}"));
    }
    let ok = counts.wrong.is_empty() && counts.landed == counts.should_land && counts.refused == counts.should_refuse;
    (out, ok)
}

struct Scenario {
    text: String,
    old: String,
    new: String,
    replace_all: bool,
    /// The file after the edit; `None` when the matcher must refuse.
    expected: Option<String>,
}

impl Scenario {
    fn read(dir: &Path) -> Option<Scenario> {
        let args: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("args.json")).ok()?).ok()?;
        if args.get("tool").and_then(Value::as_str).unwrap_or("edit_file") != "edit_file"
            || args.get("after_read").is_some()
            || args.get("read").is_some()
        {
            return None;
        }
        let input = args.get("input")?;
        let path = input.get("file_path")?.as_str()?;
        let old = input.get("old_string")?.as_str()?.to_string();
        let new = input.get("new_string")?.as_str()?.to_string();
        if old.is_empty() || old == new {
            return None;
        }
        let text = std::fs::read_to_string(dir.join("input").join(path)).ok()?;
        let expected = if dir.join("expected_result.txt").exists() {
            Some(std::fs::read_to_string(dir.join("expected").join(path)).ok()?)
        } else {
            let error = std::fs::read_to_string(dir.join("expected_error.txt")).ok()?;
            if !error.starts_with("Error: old_string not found") && !error.contains(" times in ") {
                return None;
            }
            None
        };
        let replace_all = input.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
        Some(Scenario { text, old, new, replace_all, expected })
    }
}

// ---------------------------------------------------------------------------
// Random perturbed spans (the property test's generator)
// ---------------------------------------------------------------------------

fn synthetic(cases: u64) -> (String, bool) {
    #[derive(Default)]
    struct Row {
        cases: usize,
        on_span: usize,
        elsewhere_stricter: usize,
        refused: usize,
        wrong: usize,
    }
    let (mut clean, mut damaged) = (Row::default(), Row::default());
    let mut first_wrong = None;
    for seed in 0..cases {
        let Some(case) = edit_cases::random_case(seed) else { continue };
        let row = if case.damaged { &mut damaged } else { &mut clean };
        row.cases += 1;
        match find(&case.file, &case.old, false) {
            Err(_) => row.refused += 1,
            Ok(found) => {
                let landed = found.ranges.first().cloned().unwrap_or(0..0);
                let sound = found.ranges.len() == 1
                    && edit_cases::justified(&case.file, landed.clone(), &case.old, found.rung);
                if !sound || (landed != case.span && !case.damaged && found.rung >= case.rung) {
                    row.wrong += 1;
                    first_wrong.get_or_insert(seed);
                } else if landed == case.span {
                    row.on_span += 1;
                } else {
                    row.elsewhere_stricter += 1;
                }
            }
        }
    }
    let mut out = format!(
        "Random files and spans ({cases} seeds of the property test's generator; `old_string` is the span perturbed by the ladder's folds, and in \"damaged\" cases also changed in a way no rung forgives):\n\n"
    );
    out.push_str("| cases | count | landed on the span | landed elsewhere, on a stricter rung | refused | wrong-place edits |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for (label, row) in [("folds only", &clean), ("damaged", &damaged)] {
        out.push_str(&format!(
            "| {label} | {} | {} ({:.1}%) | {} | {} | {} |\n",
            row.cases,
            row.on_span,
            100.0 * row.on_span as f64 / row.cases.max(1) as f64,
            row.elsewhere_stricter,
            row.refused,
            row.wrong
        ));
    }
    if let Some(seed) = first_wrong {
        out.push_str(&format!("\nFirst wrong-place seed: {seed}.\n"));
    }
    (out, first_wrong.is_none())
}

// ---------------------------------------------------------------------------
// Time on a 10,000-line file
// ---------------------------------------------------------------------------

const FUNCTIONS: usize = 1_250;

/// 10,000 lines of Rust-like code, eight lines per function.
fn big_file() -> String {
    let mut out = String::new();
    for i in 0..FUNCTIONS {
        out.push_str(&format!(
            "fn function_{i}(input: &str) -> usize {{\n    let value = input.len() + {i};\n    if value > 10 {{\n        return value * 2;\n    }}\n    value\n}}\n\n"
        ));
    }
    out
}

fn timing(runs: usize) -> (String, bool) {
    let text = big_file();
    let lines = text.lines().count();
    let n = 900;
    let block = format!(
        "fn function_{n}(input: &str) -> usize {{\n    let value = input.len() + {n};\n    if value > 10 {{\n        return value * 2;\n    }}\n"
    );
    // The model misremembers two of the five lines.
    let wrong = block.replace("input.len()", "input.chars().count()").replace("value * 2", "value * 3");
    // The model indents the whole block one level too far.
    let indented: String = block.lines().map(|l| format!("    {l}\n")).collect();

    let mut rows = Vec::new();
    let mut candidate_note = String::new();
    let refuse = measure(runs, || {
        let refused = matches!(find(&text, &wrong, false), Err(FindError::NotFound));
        let candidate = nearest(&text, &wrong);
        (refused, candidate)
    });
    if let (true, Some(candidate)) = &refuse.1 {
        candidate_note = format!(
            "The candidate offered: lines {}\u{2013}{} ({} lines differ), the block the model meant (function_{n} starts at line {}).",
            candidate.lines.start + 1,
            candidate.lines.end,
            candidate.differing,
            n * 8 + 1
        );
    }
    rows.push(("refuse with the nearest candidate (5-line block, 2 lines wrong)", refuse.0));
    let exact = measure(runs, || find(&text, &block, false).map(|f| f.rung).ok());
    rows.push(("land exactly (5-line block)", exact.0));
    let shifted = measure(runs, || find(&text, &indented, false).map(|f| f.rung).ok());
    rows.push(("land on the indentation rung (5-line block, one level too deep)", shifted.0));

    let mut out = format!(
        "Time on a {lines}-line file ({} KB), matcher only (no I/O), median of {runs} runs after 3 warm-up runs:\n\n",
        text.len() / 1024
    );
    out.push_str("| case | median ms | min ms | max ms |\n|---|---|---|---|\n");
    for (label, times) in rows {
        out.push_str(&format!("| {label} | {:.2} | {:.2} | {:.2} |\n", times.median, times.min, times.max));
    }
    if !candidate_note.is_empty() {
        out.push_str(&format!("\n{candidate_note}\n"));
    }
    let ok = exact.1 == Some(MatchRung::Exact) && shifted.1 == Some(MatchRung::Indentation) && !candidate_note.is_empty();
    if !ok {
        out.push_str(&format!(
            "\nUNEXPECTED: exact found {:?}, indented found {:?}, refusal {:?}.\n",
            exact.1, shifted.1, refuse.1
        ));
    }
    (out, ok)
}

struct Times {
    median: f64,
    min: f64,
    max: f64,
}

fn measure<T>(runs: usize, mut work: impl FnMut() -> T) -> (Times, T) {
    for _ in 0..3 {
        std::hint::black_box(work());
    }
    let mut samples = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let result = std::hint::black_box(work());
        samples.push(start.elapsed().as_secs_f64() * 1000.0);
        last = Some(result);
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let times = Times { median: samples[samples.len() / 2], min: samples[0], max: samples[samples.len() - 1] };
    (times, last.unwrap_or_else(work))
}
