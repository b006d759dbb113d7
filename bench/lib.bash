# Sourced by the bench/*.sh sections that run one of the examples in bench/
# (not a section itself: bench/run runs only executable *.sh files).

# bench_example NAME ARG...: build the example NAME (release, or debug in
# bench/run's quick mode) and run it with ARG... and bench/run's --runs,
# --warm and --quick.
bench_example() {
    local name="$1"
    shift
    local repo profile=release build_flags=(--release) quick_flag=()
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    if [ "${BENCH_QUICK:-0}" = 1 ]; then
        profile=debug
        build_flags=()
        quick_flag=(--quick)
    fi
    cd "$repo"
    cargo build --quiet --locked "${build_flags[@]}" --example "$name" >&2
    exec "${CARGO_TARGET_DIR:-$repo/target}/$profile/examples/$name" "$@" \
        --runs "${BENCH_RUNS:-10}" --warm "${BENCH_WARM:-2}" "${quick_flag[@]}"
}
