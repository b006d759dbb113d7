#!/usr/bin/env bash
# Section of bench/run: what Tandem's network proxy costs a download. An
# approved `run_shell` command in the sandbox runs `curl` for a 100 MB file
# (10 MB in quick mode) from a loopback HTTP server, two ways in turn:
# through the proxy (`"network": {"allow": ["bench.localhost"],
# "allowLocal": true}`) and directly (`"network": true`, the machine's
# network). curl times itself (`%{time_total}`), so Tandem's start-up is
# not counted. Prints a Markdown section. Without a working bubblewrap the
# section says so, and fails only when TANDEM_REQUIRE_BWRAP is set.
set -euo pipefail

tandem="${TANDEM:?run through bench/run}"
runs="${BENCH_RUNS:-10}"
warm="${BENCH_WARM:-2}"
size_mb=100
[ "${BENCH_QUICK:-0}" = 1 ] && size_mb=10

echo "## Sandbox: network proxy throughput"
echo
if ! bwrap --ro-bind / / --unshare-pid --unshare-net --proc /proc --dev /dev true 2>/dev/null; then
    [ -n "${TANDEM_REQUIRE_BWRAP:-}" ] && { echo "bench/network.sh: bubblewrap cannot build a sandbox here" >&2; exit 1; }
    echo "Not measured: bubblewrap (bwrap) is missing or cannot build a sandbox here."
    exit 0
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/served" "$work/root" "$work/proxied/.tandem" "$work/direct/.tandem"
head -c "${size_mb}M" /dev/urandom > "$work/served/blob"
# A loopback server on a free port; it writes the port where we read it.
python3 - "$work/served" "$work/port" <<'EOF' &
import functools, http.server, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
handler = functools.partial(Quiet, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
open(sys.argv[2], "w").write(str(server.server_address[1]))
server.serve_forever()
EOF
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port="$(cat "$work/port")"
echo '{"sandbox": {"network": {"allow": ["bench.localhost"], "allowLocal": true}}}' > "$work/proxied/.tandem/settings.json"
echo '{"sandbox": {"network": true}}' > "$work/direct/.tandem/settings.json"

# One download in the sandbox; prints curl's "seconds bytes".
download() {
    local home="$1" url="$2"
    local script="$home/script.json"
    printf '{"turns": [{"tool_calls": [{"name": "run_shell", "input": {"command": "curl -sS -o /dev/null -w %s %s"}}]}, {"text": "Done."}]}' \
        "'%{time_total} %{size_download}'" "$url" > "$script"
    (cd "$work/root" && HOME="$home" TANDEM_PROVIDER=scripted TANDEM_SCRIPT="$script" \
        "$tandem" ask --json --permission-mode bypassPermissions go) |
        python3 -c 'import json,sys
for line in sys.stdin:
    event = json.loads(line)
    if event.get("type") == "tool_result":
        print(event["content"].strip())'
}

: > "$work/times"
for round in $(seq $((warm + runs))); do
    proxied="$(download "$work/proxied" "http://bench.localhost:$port/blob")"
    direct="$(download "$work/direct" "http://127.0.0.1:$port/blob")"
    [ "$round" -gt "$warm" ] && echo "$proxied $direct" >> "$work/times"
done

python3 - "$work/times" "$size_mb" "$runs" "$warm" <<'EOF'
import statistics, sys
path, size_mb, runs, warm = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rows = [line.split() for line in open(path)]
expected = size_mb * 1024 * 1024
for row in rows:
    if len(row) != 4 or int(float(row[1])) != expected or int(float(row[3])) != expected:
        sys.exit(f"bench/network.sh: a download did not complete: {row}")
proxied = [float(r[0]) for r in rows]
direct = [float(r[2]) for r in rows]
def cell(times):
    return f"{statistics.median(times) * 1000:.0f} ({min(times) * 1000:.0f}–{max(times) * 1000:.0f})"
def rate(times):
    return f"{size_mb / statistics.median(times):.0f}"
print(f"An approved command downloads a {size_mb} MB file with curl from a loopback HTTP server (Python's http.server), through Tandem's proxy and directly, the two alternating; curl's own `time_total`, median (min–max) of {runs} runs after {warm} warm-up runs.")
print()
print("| path | ms | MB/s | proxied ÷ direct |")
print("|---|---|---|---|")
print(f"| direct (`\"network\": true`) | {cell(direct)} | {rate(direct)} | |")
print(f"| through the proxy (`\"allow\"` list) | {cell(proxied)} | {rate(proxied)} | {statistics.median(proxied) / statistics.median(direct):.2f} |")
print()
EOF
