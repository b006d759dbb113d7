#!/usr/bin/env bash
# Section of bench/run: what Tandem adds to an inline completion on a 10 KB
# and a 1 MB document (a loopback model answering at once), and the whole
# latency with a real local model (llama.cpp and Qwen2.5-Coder-0.5B from
# the tools cache, TANDEM_LLAMA_SERVER / TANDEM_LLAMA_MODEL; without them
# the row says so) (bench/inline.rs).
set -euo pipefail

. "$(dirname "$0")/lib.bash"
bench_example inline
