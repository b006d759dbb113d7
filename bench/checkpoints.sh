#!/usr/bin/env bash
# Section of bench/run: what a run pays for its checkpoint (the recorder
# `tandem undo` restores from), with and without the recorder in the same
# run, in the benchmark tree (bench/checkpoints.rs). Prints a Markdown
# section; fails when a check fails (the checkpoint or its undo is wrong).
set -euo pipefail

. "$(dirname "$0")/lib.bash"
tree="${BENCH_TREE:?run through bench/run}"
bench_example checkpoints --tree "$tree" --label "${BENCH_TREE_LABEL:-$tree}"
