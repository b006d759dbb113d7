#!/usr/bin/env bash
# Section of bench/run: what a diff costs (issue 31), the plain diff Tandem
# ran before and the bounded one in the same run, then a 12 MB whole-file
# rewrite through `tandem ask` and `tandem lsp` (bench/diffs.rs). Prints a
# Markdown section; fails when a check fails (a wrong diff, a rewrite that
# did not land, a server that answered nothing while planning).
set -euo pipefail

. "$(dirname "$0")/lib.bash"
bench_example diffs --tandem "${TANDEM:?run through bench/run}"
