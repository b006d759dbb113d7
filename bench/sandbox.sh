#!/usr/bin/env bash
# Section of bench/run: what the sandbox adds to a shell command (`true`,
# `ls`, `rg`) in the benchmark tree, sandboxed (both profiles) against
# unsandboxed in the same run (bench/sandbox.rs). Prints a Markdown section.
# Without a working bubblewrap the section says so, and fails only when
# TANDEM_REQUIRE_BWRAP is set (CI sets it).
set -euo pipefail

. "$(dirname "$0")/lib.bash"
tree="${BENCH_TREE:?run through bench/run}"
bench_example sandbox --tree "$tree" --label "${BENCH_TREE_LABEL:-$tree}"
