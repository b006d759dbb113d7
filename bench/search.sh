#!/usr/bin/env bash
# Section of bench/run: `tandem tool grep_search` against `rg -n`, and
# `tandem tool list_files` against `rg --files -g GLOB` and `fd`, on one tree,
# with the counts checked equal. Prints a Markdown section on stdout.
#
# Run through bench/run, which sets:
#   TANDEM       the tandem binary to measure
#   BENCH_TREE   the folder searched (generated, a real repository, or the
#                cargo registry's sources)
#   BENCH_RUNS   timed runs per command (after BENCH_WARM warm-up runs)
#   BENCH_WARM   warm-up runs per command
#   BENCH_QUICK  1: one run each, only the counts matter; exit 1 if they differ
#
# Both sides include process start-up. Runs alternate between the commands
# so that load from other processes hits all alike. Output goes through a
# pipe for every command (some tools treat /dev/null specially).
set -euo pipefail

tandem="${TANDEM:?run through bench/run}"
tree="${BENCH_TREE:?run through bench/run}"
runs="${BENCH_RUNS:-10}"
warm="${BENCH_WARM:-2}"
quick="${BENCH_QUICK:-0}"
rg="${RG:-$(command -v rg || true)}"
fd="${FD:-$(command -v fd || command -v fdfind || true)}"
[ -n "$rg" ] || { echo "search.sh: ripgrep (rg) not found; bench/run installs it" >&2; exit 1; }

cd "$tree"
mismatches=0
# The regression guard of quick mode (CI): a list_files row whose best run
# is more than BENCH_LIST_LIMIT times rg's best fails the run (2x the 1.1x
# target; ratios within one run, the commands alternating, are steadier
# than timings). Its rows take 3 runs there. grep_search has no guard in
# quick mode: the debug build's regex engine alone is 2-4x slower than
# rg's release build, so its ratio would say nothing about a regression.
list_limit="${BENCH_LIST_LIMIT:-2.2}"
over_limit=0

# Milliseconds (three decimals) one run of "$@" takes, output piped away.
time_ms() {
    local start end
    start=$(date +%s%N)
    "$@" | cat >/dev/null || true
    end=$(date +%s%N)
    awk -v ns="$((end - start))" 'BEGIN { printf "%.1f\n", ns / 1e6 }'
}

# "median min max" of the numbers on stdin.
stats() {
    sort -g | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'
}

# "median (min–max)" for a table cell.
cell() { awk '{ printf "%s (%s–%s)", $1, $2, $3 }' <<<"$1"; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "—" }'; }

# The total a tandem result reports: the lines shown plus "... and N more".
tandem_count() {
    awk '
        /^No (files|matches) found/ { empty = 1; next }
        /^\.\.\. and [0-9]+ more/ { more = $3; next }
        { shown++ }
        END { print (empty ? 0 : shown + more) }'
}

# measure NAME... : alternate runs of the commands in arrays CMD_<name>;
# sets STATS_<name> to "median min max".
measure() {
    local name i cmd
    for ((i = 0; i < warm; i++)); do
        for name in "$@"; do
            cmd="CMD_$name[@]"
            time_ms "${!cmd}" >/dev/null
        done
    done
    local -A times=()
    for ((i = 0; i < runs; i++)); do
        for name in "$@"; do
            cmd="CMD_$name[@]"
            times[$name]+="$(time_ms "${!cmd}")"$'\n'
        done
    done
    for name in "$@"; do
        printf -v "STATS_$name" '%s' "$(printf '%s' "${times[$name]}" | stats)"
    done
}

json_input() {
    python3 -c 'import json,sys; d={"pattern": sys.argv[1]}
if sys.argv[2] == "true": d["case_insensitive"] = True
print(json.dumps(d))' "$1" "${2:-false}"
}

grep_case() {
    local label="$1" pattern="$2" insensitive="${3:-false}"
    local rg_flags=(-n) input
    [ "$insensitive" = true ] && rg_flags+=(-i)
    input=$(json_input "$pattern" "$insensitive")
    CMD_rg=("$rg" "${rg_flags[@]}" -e "$pattern")
    CMD_tandem=("$tandem" tool grep_search "$input")
    # rg exits 1 when nothing matches, and tandem for an error result.
    local rg_count tandem_count same
    rg_count=$("${CMD_rg[@]}" | wc -l || true)
    tandem_count=$("${CMD_tandem[@]}" | tandem_count || true)
    same=yes
    [ "$rg_count" = "$tandem_count" ] || { same=NO; mismatches=$((mismatches + 1)); }
    measure tandem rg
    printf '| %s | %s / %s | %s | %s | %s | %s |\n' "$label" "$tandem_count" "$rg_count" "$same" \
        "$(cell "$STATS_tandem")" "$(cell "$STATS_rg")" "$(ratio "${STATS_tandem%% *}" "${STATS_rg%% *}")"
}

# list_case LABEL GLOB RG_GLOB FD_ARGS...: rg and fd get their own spelling
# of the glob (an empty RG_GLOB: plain `rg --files`; `rg -g '**/*'` would
# also list hidden files, as a -g glob whitelists them).
list_case() {
    local label="$1" glob="$2" rg_glob="$3" input
    shift 3
    input=$(json_input "$glob")
    CMD_rg=("$rg" --files)
    [ -n "$rg_glob" ] && CMD_rg+=(-g "$rg_glob")
    CMD_tandem=("$tandem" tool list_files "$input")
    local names=(tandem rg) rg_count tandem_count fd_count="—" same fd_cell="—" fd_ratio="—"
    rg_count=$("${CMD_rg[@]}" | wc -l || true)
    tandem_count=$("${CMD_tandem[@]}" | tandem_count || true)
    same=yes
    [ "$rg_count" = "$tandem_count" ] || same=NO
    if [ -n "$fd" ]; then
        CMD_fd=("$fd" --type f "$@")
        fd_count=$("${CMD_fd[@]}" | wc -l || true)
        [ "$fd_count" = "$tandem_count" ] || same=NO
        names+=(fd)
    fi
    [ "$same" = yes ] || mismatches=$((mismatches + 1))
    # measure reads `runs`: three for the guarded rows of quick mode.
    local runs="$runs"
    [ "$quick" = 1 ] && runs=3
    measure "${names[@]}"
    local best_ratio
    best_ratio=$(ratio "$(awk '{ print $2 }' <<<"$STATS_tandem")" "$(awk '{ print $2 }' <<<"$STATS_rg")")
    if [ "$quick" = 1 ] && awk -v r="$best_ratio" -v l="$list_limit" 'BEGIN { exit !(r + 0 > l + 0) }'; then
        over_limit=$((over_limit + 1))
        echo "search.sh: list_files $label: best run $best_ratio x rg's, over the guard's $list_limit x" >&2
    fi
    if [ -n "$fd" ]; then
        fd_cell=$(cell "$STATS_fd")
        fd_ratio=$(ratio "${STATS_tandem%% *}" "${STATS_fd%% *}")
    fi
    printf '| %s | %s / %s / %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$tandem_count" "$rg_count" "$fd_count" "$same" \
        "$(cell "$STATS_tandem")" "$(cell "$STATS_rg")" "$fd_cell" \
        "$(ratio "${STATS_tandem%% *}" "${STATS_rg%% *}")" "$fd_ratio"
}

files=$("$rg" --files | wc -l)
bytes=$("$rg" --files -0 | xargs -0 cat | wc -c)
# A folder two levels deep with the most files under it, for the `dir/**` row.
deep=$("$rg" --files | awk -F/ 'NF > 3 { n[$1 "/" $2]++ } END { for (d in n) if (n[d] > best) { best = n[d]; pick = d } print pick }')
deep="${deep:-src}"
fd_version=$([ -n "$fd" ] && "$fd" --version | head -1 || echo "fd: not installed")

echo "## Search: grep_search and list_files"
echo
echo "Tree: \`${BENCH_TREE_LABEL:-$tree}\`, $files files searched ($((bytes / 1000000)) MB) after ignore rules."
echo "References: $("$rg" --version | head -1), $fd_version. Wall milliseconds including process start-up:"
echo "median (min–max) of $runs runs after $warm warm-up runs, the commands alternating. Ratio below 1: Tandem is faster."
echo
echo "| grep_search vs \`rg -n\` | matching lines tandem / rg | same | tandem ms | rg ms | tandem / rg |"
echo "|---|---|---|---|---|---|"
grep_case 'literal: `TODO`' 'TODO'
grep_case 'rare literal: `parse_range_config`' 'parse_range_config'
grep_case 'alternation and classes: `(reader|writer)_[a-z]+\(`' '(reader|writer)_[a-z]+\('
grep_case 'regex: `fn\s+\w+_config\(`' 'fn\s+\w+_config\('
grep_case 'case-insensitive: `-i Result`' 'Result' true
grep_case 'many matches: `-i error`' 'error' true
echo
echo "| list_files vs \`rg --files -g\` and \`fd --type f\` | files tandem / rg / fd | same | tandem ms | rg ms | fd ms | tandem / rg | tandem / fd |"
echo "|---|---|---|---|---|---|---|---|---|"
list_case 'everything: `**/*` (rg: no glob)' '**/*' ''
list_case 'by extension: `**/*.rs`' '**/*.rs' '**/*.rs' --extension rs
list_case "deep folder: \`$deep/**\`" "$deep/**" "$deep/**" . "$deep"
echo
if [ "$mismatches" -gt 0 ]; then
    echo "**$mismatches row(s) with different counts: see the \`same\` column.**"
    echo
    [ "$quick" = 1 ] && exit 1
fi
if [ "$over_limit" -gt 0 ]; then
    echo "**$over_limit list_files row(s) slower than ${list_limit}x ripgrep (best runs): a regression.**"
    echo
    exit 1
fi
exit 0
