#!/usr/bin/env bash
# Section of bench/run: what Tandem adds to an inline completion on a 10 KB
# and a 1 MB document (a loopback model answering at once), and the whole
# latency with a real local model (llama.cpp and Qwen2.5-Coder-0.5B from
# the tools cache, TANDEM_LLAMA_SERVER / TANDEM_LLAMA_MODEL; without them
# the row says so) (bench/inline.rs). Then, outside quick mode, the last
# recorded next-edit quality check (bench/inline_quality.md, written by
# bench/inline_quality.py, which takes hours and is not rerun here).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.bash"
(bench_example inline)
if [ "${BENCH_QUICK:-0}" != 1 ] && [ -f "$here/inline_quality.md" ]; then
    echo
    cat "$here/inline_quality.md"
fi
