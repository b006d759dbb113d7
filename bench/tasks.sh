#!/usr/bin/env bash
# Section of bench/run: what background tasks cost (bench/tasks.rs) —
# task_output's latency beside a log file read by `tail -F`, and the
# bookkeeping a turn pays with 0, 8 and 32 running tasks beside `ps -e`.
# Prints a Markdown section.
set -euo pipefail

. "$(dirname "$0")/lib.bash"
bench_example tasks
