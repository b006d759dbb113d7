//! Median (min–max) of timed runs, for the benchmark sections written as
//! examples (bench/sandbox.rs, bench/code_intel.rs); included with
//! `#[path = "stats.rs"] mod stats;`.

/// Median, min and max in milliseconds.
#[derive(Clone, Copy)]
pub struct Stats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// The figures of some runs, in milliseconds (at least one).
pub fn stats(ms: &[f64]) -> Stats {
    let mut ms = ms.to_vec();
    ms.sort_by(|a, b| a.total_cmp(b));
    let n = ms.len();
    let median = if n % 2 == 1 { ms[n / 2] } else { (ms[n / 2 - 1] + ms[n / 2]) / 2.0 };
    Stats { median, min: ms[0], max: ms[n - 1] }
}

/// Two decimals below 10 ms, one above.
pub fn ms(v: f64) -> String {
    if v.abs() < 10.0 { format!("{v:.2}") } else { format!("{v:.1}") }
}

/// "median (min–max)" for a table cell.
pub fn cell(s: Stats) -> String {
    format!("{} ({}–{})", ms(s.median), ms(s.min), ms(s.max))
}
