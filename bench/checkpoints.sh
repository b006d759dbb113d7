#!/usr/bin/env bash
# Section of bench/run: what a run pays for its checkpoint (the recorder
# `tandem undo` restores from), with and without the recorder in the same
# run, in the benchmark tree (bench/checkpoints.rs). Prints a Markdown
# section; fails when a check fails (the checkpoint or its undo is wrong).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
tree="${BENCH_TREE:?run through bench/run}"
profile=release
build_flags=(--release)
quick_flag=()
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    profile=debug
    build_flags=()
    quick_flag=(--quick)
fi
cd "$repo"
cargo build --quiet --locked "${build_flags[@]}" --example checkpoints >&2
exec "${CARGO_TARGET_DIR:-$repo/target}/$profile/examples/checkpoints" --tree "$tree" --label "${BENCH_TREE_LABEL:-$tree}" \
    --runs "${BENCH_RUNS:-10}" --warm "${BENCH_WARM:-2}" "${quick_flag[@]}"
