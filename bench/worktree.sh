#!/usr/bin/env bash
# Section of bench/run: a run in a git worktree (`tandem ask --worktree`) in
# the benchmark tree committed to a git repository: how long until the
# worktree is ready (a whole `tandem ask --worktree --keep-worktree` with a
# model that answers at once: process start, `git worktree add`, the start
# tree, the empty merge) and how long `tandem runs merge` takes for a run
# that changed 20 files (process start included). Prints a Markdown section.
set -euo pipefail
tree="${BENCH_TREE:?run through bench/run}"
tandem="${TANDEM:?run through bench/run}"
runs="${BENCH_RUNS:-10}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
cp -r "$tree" "$repo"
rm -rf "$repo/.git"
git -C "$repo" init -q -b main
git -C "$repo" -c user.email=b@example.com -c user.name=b add -A
git -C "$repo" -c user.email=b@example.com -c user.name=b commit -q -m tree
files=$(git -C "$repo" ls-files | wc -l)
# Process substitution: `head` closing the pipe early is no failure here.
mapfile -t changed < <(git -C "$repo" ls-files '*.rs' '*.ts' '*.py' | sed -n '1,20p')
echo '{"turns": [{"text": "Done."}]}' > "$work/script.json"
export XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache" TANDEM_PROVIDER=scripted TANDEM_SCRIPT="$work/script.json"
ms() { date +%s%N; }
create=() merge=()
for _ in $(seq "$runs"); do
    start=$(ms)
    (cd "$repo" && "$tandem" ask --worktree --keep-worktree "nothing" >/dev/null 2>"$work/err")
    create+=($(( ($(ms) - start) / 1000000 )))
    id=$(cd "$repo" && "$tandem" runs list | awk 'NR==1 {print $1}')
    wt=$(cd "$repo" && "$tandem" runs list | awk 'NR==1 {print $2}')
    # 20 files changed by the run: one line appended to each.
    for f in "${changed[@]}"; do echo "// changed by the run" >> "$wt/$f"; done
    start=$(ms)
    (cd "$repo" && "$tandem" runs merge "$id" >"$work/merge.out")
    merge+=($(( ($(ms) - start) / 1000000 )))
    grep -q "20 hunk(s) landed, 0 conflicted" "$work/merge.out" || { echo "worktree.sh: the merge did not land 20 hunks:" >&2; cat "$work/merge.out" >&2; exit 1; }
    git -C "$repo" checkout -q -- .
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "## Worktree runs"
echo
echo "A git repository of the benchmark tree ($files files), $runs runs each, median (min–max), process start included."
echo
echo "| What | Time | Target |"
echo "|---|---|---|"
echo "| \`tandem ask --worktree\`: worktree ready and merged back (nothing changed) | $(median "${create[@]}") ms ($(printf '%s\n' "${create[@]}" | sort -n | head -1)–$(printf '%s\n' "${create[@]}" | sort -n | tail -1) ms) | ≤ 1 s |"
echo "| \`tandem runs merge\`: a run that changed 20 files | $(median "${merge[@]}") ms ($(printf '%s\n' "${merge[@]}" | sort -n | head -1)–$(printf '%s\n' "${merge[@]}" | sort -n | tail -1) ms) | ≤ 200 ms |"
