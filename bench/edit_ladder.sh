#!/usr/bin/env bash
# The edit_file matching ladder: acceptance over the scenario corpus,
# wrong-place edits (must be 0) on the corpus and on random perturbed spans,
# and the time to refuse with a nearest candidate on a 10,000-line file.
# Prints a Markdown section; bench/run runs it as one of its sections. Exits
# non-zero on a wrong-place edit, a missed scenario or an unexpected rung.
#
# Usage: bench/edit_ladder.sh [--quick] [--runs N] [--cases N]
#   --quick     debug build, 500 random cases, one timed run (BENCH_QUICK=1 too)
#   --runs N    timed runs per figure (default 30)
#   --cases N   random perturbed spans (default 20000)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
args=("$@")
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    args+=(--quick)
fi
profile=release
build_flags=(--release)
for arg in "${args[@]}"; do
    if [ "$arg" = --quick ]; then
        profile=debug
        build_flags=()
    fi
done
cd "$repo"
cargo build --quiet --locked "${build_flags[@]}" --example edit_ladder >&2
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
exec "$target_dir/$profile/examples/edit_ladder" "${args[@]}"
