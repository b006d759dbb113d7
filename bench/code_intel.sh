#!/usr/bin/env bash
# Section of bench/run: what Tandem adds to a warm pyright's answers (a
# references query, diagnostics after an edit) against pyright's own time
# for the same request on the same connection (bench/code_intel.rs).
# Prints a Markdown section. Needs TANDEM_PYRIGHT (the pyright-langserver
# script; .ci/run installs pyright from npm); without it the section says
# so, and fails only when TANDEM_REQUIRE_PYRIGHT is set (CI sets it).
set -euo pipefail

. "$(dirname "$0")/lib.bash"
bench_example code_intel
