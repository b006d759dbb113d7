#!/usr/bin/env bash
# Side-by-side wall time of `tandem tool grep_search` vs `rg -n`, and of
# `tandem tool list_files` vs `rg --files -g GLOB`, on one big tree, with the
# match counts checked equal. Prints a Markdown table with the ratio
# (tandem / rg: below 1 means tandem is faster).
#
# Usage: bench/search.sh [TREE]
#   TREE  folder to search; default: a synthetic tree of 50,000 files made by
#         bench/gen_tree.py (fixed seed) under ${TMPDIR:-/tmp}/tandem-bench-tree.
# Env:    RUNS (default 15) timed runs per command, after 2 warm-up runs;
#         RG   the ripgrep binary to compare with (default: rg on PATH,
#              installed with apt-get or cargo install when missing).
#
# Both sides include process start-up. Runs alternate between the two
# commands so that load from other processes hits both alike; the table
# shows medians. Output goes through a pipe for both (some tools treat
# /dev/null specially).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
runs="${RUNS:-15}"
tree="${1:-${TMPDIR:-/tmp}/tandem-bench-tree}"

cargo build --release --quiet --manifest-path "$repo/Cargo.toml"
tandem="$repo/target/release/tandem"

rg="${RG:-$(command -v rg || true)}"
if [ -z "$rg" ]; then
    echo "ripgrep not found: installing it" >&2
    if command -v apt-get >/dev/null; then
        apt-get install -y -qq ripgrep >&2 || true
    fi
    if ! command -v rg >/dev/null; then
        cargo install ripgrep --locked >&2
    fi
    rg="$(command -v rg)"
fi

if [ ! -d "$tree" ]; then
    echo "generating $tree (50,000 files, seed 42)" >&2
    python3 "$repo/bench/gen_tree.py" "$tree" 50000 42
fi
cd "$tree"

# Milliseconds one run of "$@" takes, output piped away.
time_ms() {
    local start end
    start=$(date +%s%N)
    "$@" | cat >/dev/null || true
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}

median() {
    sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# The total a tandem result reports: the lines shown plus "... and N more".
tandem_count() {
    awk '
        /^No (files|matches) found/ { empty = 1; next }
        /^\.\.\. and [0-9]+ more/ { more = $3; next }
        { shown++ }
        END { print (empty ? 0 : shown + more) }'
}

# compare LABEL RG_COUNT TANDEM_COUNT -- RG_COMMAND... -- TANDEM_COMMAND...
compare() {
    local label="$1" rg_count="$2" tandem_count="$3"
    shift 4
    local rg_cmd=() tandem_cmd=()
    while [ "$1" != "--" ]; do rg_cmd+=("$1"); shift; done
    shift
    tandem_cmd=("$@")
    local rg_times="" tandem_times="" i
    for i in 1 2; do
        time_ms "${rg_cmd[@]}" >/dev/null
        time_ms "${tandem_cmd[@]}" >/dev/null
    done
    for ((i = 0; i < runs; i++)); do
        rg_times+="$(time_ms "${rg_cmd[@]}")"$'\n'
        tandem_times+="$(time_ms "${tandem_cmd[@]}")"$'\n'
    done
    local rg_ms tandem_ms ratio same
    rg_ms=$(printf '%s' "$rg_times" | median)
    tandem_ms=$(printf '%s' "$tandem_times" | median)
    ratio=$(awk -v a="$tandem_ms" -v b="$rg_ms" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    same=$([ "$rg_count" = "$tandem_count" ] && echo "yes" || echo "NO")
    printf '| %s | %s | %s | %s | %s | %s |\n' "$label" "$rg_count / $tandem_count" "$same" "$rg_ms" "$tandem_ms" "$ratio"
}

grep_case() {
    local label="$1" pattern="$2" insensitive="${3:-false}"
    local rg_flags=(-n) input
    [ "$insensitive" = true ] && rg_flags+=(-i)
    input=$(python3 -c 'import json,sys; print(json.dumps({"pattern": sys.argv[1], "case_insensitive": sys.argv[2] == "true"}))' "$pattern" "$insensitive")
    local rg_count tandem_count
    # rg exits 1 when nothing matches, and tandem for an error result.
    rg_count=$("$rg" "${rg_flags[@]}" -e "$pattern" | wc -l || true)
    tandem_count=$("$tandem" tool grep_search "$input" | tandem_count || true)
    compare "$label" "$rg_count" "$tandem_count" -- "$rg" "${rg_flags[@]}" -e "$pattern" -- "$tandem" tool grep_search "$input"
}

# list_case LABEL GLOB [RG_FLAG...]: extra flags go to rg only.
list_case() {
    local label="$1" glob="$2" input
    shift 2
    input=$(python3 -c 'import json,sys; print(json.dumps({"pattern": sys.argv[1]}))' "$glob")
    local rg_count tandem_count
    rg_count=$("$rg" --files -g "$glob" "$@" | wc -l || true)
    tandem_count=$("$tandem" tool list_files "$input" | tandem_count || true)
    compare "$label" "$rg_count" "$tandem_count" -- "$rg" --files -g "$glob" "$@" -- "$tandem" tool list_files "$input"
}

files=$("$rg" --files | wc -l)
bytes=$("$rg" --files -0 | xargs -0 cat | wc -c)
echo "tree: $tree ($files files searched, $((bytes / 1000000)) MB); $(nproc) cores; $("$rg" --version 2>/dev/null | head -1); $runs runs each, median wall ms"
echo
echo "| case | matches rg / tandem | same | rg ms | tandem ms | tandem / rg |"
echo "|---|---|---|---|---|---|"
grep_case 'grep literal, rare: `parse_range_config`' 'parse_range_config'
grep_case 'grep regex: `fn\s+\w+_config\(`' 'fn\s+\w+_config\('
grep_case 'grep word, common: `TODO`' 'TODO'
grep_case 'grep -i, very common: `error`' 'error' true
list_case 'list `*.rs`' '*.rs'
list_case 'list `crates/**/*.ts`' 'crates/**/*.ts'
list_case 'list `*.md`' '*.md'
# What list_files really computes: newest first, so every match is stat'ed.
# rg does that only when asked to sort, and then walks with one thread.
list_case 'list `*.rs`, rg also newest first (`--sortr modified`)' '*.rs' --sortr modified
