#!/usr/bin/env bash
# Section of bench/run: what the sandbox adds to a shell command (`true`,
# `ls`, `rg`) in the benchmark tree, sandboxed (both profiles) against
# unsandboxed in the same run (bench/sandbox.rs). Prints a Markdown section.
# Without a working bubblewrap the section says so, and fails only when
# TANDEM_REQUIRE_BWRAP is set (CI sets it).
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
cargo build --quiet --locked "${build_flags[@]}" --example sandbox >&2
exec "${CARGO_TARGET_DIR:-$repo/target}/$profile/examples/sandbox" --tree "$tree" --label "${BENCH_TREE_LABEL:-$tree}" \
    --runs "${BENCH_RUNS:-10}" --warm "${BENCH_WARM:-2}" "${quick_flag[@]}"
