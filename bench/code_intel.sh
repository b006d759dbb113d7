#!/usr/bin/env bash
# Section of bench/run: what Tandem adds to a warm pyright's answers (a
# references query, diagnostics after an edit) against pyright's own time
# for the same request on the same connection (bench/code_intel.rs).
# Prints a Markdown section. Needs TANDEM_PYRIGHT (the pyright-langserver
# script; .ci/run installs pyright from npm); without it the section says
# so, and fails only when TANDEM_REQUIRE_PYRIGHT is set (CI sets it).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
profile=release
build_flags=(--release)
quick_flag=()
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    profile=debug
    build_flags=()
    quick_flag=(--quick)
fi
cd "$repo"
cargo build --quiet --locked "${build_flags[@]}" --example code_intel >&2
exec "${CARGO_TARGET_DIR:-$repo/target}/$profile/examples/code_intel" \
    --runs "${BENCH_RUNS:-10}" --warm "${BENCH_WARM:-2}" "${quick_flag[@]}"
