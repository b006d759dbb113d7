#!/usr/bin/env bash
# Session figures: the cached share of input tokens over a 20-turn run
# under Anthropic's caching rules, and the history's input tokens on a
# 60-turn run with and without context management. Deterministic counts,
# no timing, so a debug build is enough. Prints a Markdown section.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
cargo build --quiet --example sessions >&2
exec "${CARGO_TARGET_DIR:-$repo/target}/debug/examples/sessions"
