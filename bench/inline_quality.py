#!/usr/bin/env python3
"""Offline quality check of Tandem's next-edit suggestions (issue 30).

Mines edits from the history of git repositories: in one commit, two
changes (hunks) of one Python file where the second starts within
`--distance` (20) lines of the end of the first, both small (1 to 6 lines
added, at most 6 removed). The first is the user's "last edit"; the second
is the next edit a perfect model would suggest. For each, the real
`tandem lsp` is asked for `textDocument/inlineCompletion` (with
`"nextEdits": true`, invoked) at the end of the first change, twice:

- with edit history: the file is opened as it was before the commit and the
  first change arrives as a `didChange`, as typing would send it;
- without: the file is opened with the first change already in it (no
  `didChange`, so the prompt's "Recent edits" is empty).

A suggestion is an exact match when applying it gives the file with the
second change made, byte for byte. The model rewrites a region from 5 lines
above to 10 below the cursor, so a second change past it cannot match: the
table says how many of the edits lie inside the region.

The repositories: `--repos FILE` (default bench/inline_quality.repos, one
`owner/name commit` a line, the history read back from that commit) and
`--repo GIT_DIR` (any local repository, from its HEAD). Each listed one is
looked for under `--mirrors DIR` (or $TANDEM_QUALITY_MIRRORS) as
DIR/owner+name/repo, DIR/owner+name, DIR/owner/name(.git) or
DIR/name(.git), else cloned bare from https://github.com/owner/name into
`--cache` (default ~/.cache/tandem-bench/repos). The model: a llama.cpp
server at `--llama-url`, or one started here from $TANDEM_LLAMA_SERVER and
$TANDEM_LLAMA_MODEL (`.ci/tools` installs llama.cpp and
Qwen2.5-Coder-0.5B), with the tests' flags (one thread, 4096 context).

Prints a Markdown section (`## ...` and a table); `--out FILE` also writes
it there (bench/run appends bench/inline_quality.md to BENCHMARKS.md), and
`--json FILE` writes each edit's outcome.

Usage:
  source .ci/tools && cargo build --release --locked
  bench/inline_quality.py --tandem target/release/tandem --samples 30 --out bench/inline_quality.md
"""

import argparse
import datetime
import json
import os
import re
import socket
import subprocess
import sys
import http.server
import tempfile
import threading
import time
import urllib.error
import urllib.request

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True).stdout.decode("utf-8", "replace")


def hunks_of(diff):
    """{path: [hunk]} of a -U0 diff; a hunk is (old_start, old_lines, new_lines) with 1-based old_start."""
    files, path, current = {}, None, None
    for line in diff.split("\n"):
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
            continue
        if line.startswith("--- ") or line.startswith("diff ") or line.startswith("index "):
            continue
        match = HUNK.match(line)
        if match and path:
            old_start, old_count = int(match.group(1)), int(match.group(2) or "1")
            current = {"old_start": old_start, "old_count": old_count, "old": [], "new": []}
            files.setdefault(path, []).append(current)
            continue
        if current is None or path is None:
            continue
        if line.startswith("-"):
            current["old"].append(line[1:])
        elif line.startswith("+"):
            current["new"].append(line[1:])
    return files


def apply(lines, hunk, shift=0):
    """`lines` with `hunk` applied (its old_start moved by `shift` lines)."""
    start = hunk["old_start"] - 1 + shift
    if hunk["old_count"] == 0:
        start += 1  # "-N,0": the insertion goes after line N
    if lines[start:start + hunk["old_count"]] != hunk["old"]:
        return None
    return lines[:start] + hunk["new"] + lines[start + hunk["old_count"]:]


def mine(repo, label, commit, samples, distance, max_commits=3000):
    """Up to `samples` edit pairs of `repo`'s history back from `commit`, newest first (one per file and commit)."""
    found = []
    commits = git(repo, "log", "--no-merges", "--format=%H", "-n", str(max_commits), commit, "--", "*.py").split()
    for sha in commits:
        try:
            diff = git(repo, "show", "--format=", "-U0", "--no-color", "--no-renames", sha, "--", "*.py")
        except subprocess.CalledProcessError:
            continue
        for path, hunks in hunks_of(diff).items():
            for first, second in zip(hunks, hunks[1:]):
                gap = second["old_start"] - (first["old_start"] + first["old_count"])
                small = all(1 <= len(h["new"]) <= 6 and len(h["old"]) <= 6 for h in (first, second))
                if gap > distance or not small:
                    continue
                try:
                    before = git(repo, "show", f"{sha}^:{path}")
                except subprocess.CalledProcessError:
                    continue
                if len(before) > 200_000 or "\r" in before:
                    continue
                lines = before.split("\n")
                after_first = apply(lines, first)
                if after_first is None:
                    continue
                shift = len(first["new"]) - len(first["old"])
                after_second = apply(after_first, second, shift)
                if after_second is None:
                    continue
                found.append({
                    "repo": label, "commit": sha[:12], "path": path,
                    "before": "\n".join(lines), "after_first": "\n".join(after_first), "after_second": "\n".join(after_second),
                    "first": first, "second": second, "shift": shift,
                })
                break
            if len(found) >= samples:
                return found
    return found


def in_region(sample):
    """Does the second change lie in the region the model may rewrite (5 lines above the cursor's line to 10 below)?"""
    first, second = sample["first"], sample["second"]
    cursor_line = first["old_start"] - 1 + (1 if first["old_count"] == 0 else 0) + max(len(first["new"]) - 1, 0)
    start = second["old_start"] - 1 + sample["shift"] + (1 if second["old_count"] == 0 else 0)
    last = start + max(second["old_count"], 1) - 1
    return cursor_line - 5 <= start and last <= cursor_line + 10


def load_repos(path):
    """[(owner/name, commit)] of a repos file."""
    repos = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2 or parts[0].count("/") != 1 or not re.fullmatch(r"[0-9a-f]{7,40}", parts[1]):
                sys.exit(f"{path}:{number}: expected 'owner/name commit', got {line!r}")
            repos.append((parts[0], parts[1]))
    return repos


def has_commit(git_dir, commit):
    return subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", commit + "^{commit}"], capture_output=True).returncode == 0


def obtain(name, commit, mirrors, cache):
    """A git dir holding `commit` of `name`: a local mirror, else a bare clone from GitHub."""
    owner, short = name.split("/")
    for base in mirrors:
        for candidate in (f"{owner}+{short}/repo", f"{owner}+{short}", f"{owner}/{short}.git", f"{owner}/{short}", f"{short}.git", short):
            path = os.path.join(base, candidate)
            dot_git = os.path.join(path, ".git")
            git_dir = dot_git if os.path.isdir(dot_git) else path
            if os.path.isdir(git_dir) and has_commit(git_dir, commit):
                return git_dir
    clone = os.path.join(cache, f"{owner}+{short}.git")
    url = f"https://github.com/{name}.git"
    if not os.path.isdir(clone):
        print(f"inline_quality: cloning {url} into {clone}", file=sys.stderr)
        subprocess.run(["git", "clone", "--quiet", "--bare", url, clone], check=True)
    if not has_commit(clone, commit):
        subprocess.run(["git", "--git-dir", clone, "fetch", "--quiet", "origin", commit], check=True)
    return clone


class Recorder:
    """A loopback pass-through between Tandem and the model that notes, for
    each next-edit (chat) answer, whether it kept the asked format (the
    region between its two markers) and whether it hit the token limit: an
    answer without the markers gives no suggestion, whatever its text."""

    def __init__(self, upstream):
        # (file name, with edit history) -> what the model answered.
        self.answers = {}
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def forward(self, body):
                request = urllib.request.Request(upstream + self.path, data=body, method=self.command,
                                                 headers={"content-type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=600) as answer:
                        status, data = answer.status, answer.read()
                except urllib.error.HTTPError as err:
                    status, data = err.code, err.read()
                if self.path.endswith("/chat/completions"):
                    prompt = json.loads(body)["messages"][-1]["content"]
                    name = re.search(r"\nThe excerpt of (\S+):\n", prompt)
                    key = (name.group(1) if name else None, not prompt.startswith("Recent edits, oldest first:\n(none)\n"))
                    try:
                        choice = json.loads(data)["choices"][0]
                        text = choice["message"]["content"]
                        recorder.answers[key] = {"markers": "<|editable_region_start|>" in text and "<|editable_region_end|>" in text,
                                                 "cut": choice.get("finish_reason") == "length"}
                    except (ValueError, KeyError, IndexError, TypeError):
                        recorder.answers[key] = {"markers": False, "cut": False, "error": status}
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # Tandem gave up (timeoutMs): the answer is counted as not had

            def do_POST(self):
                self.forward(self.rfile.read(int(self.headers.get("content-length") or 0)))

            def do_GET(self):
                self.forward(None)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


class Llama:
    """llama.cpp's server on a free port, as tests/common/llama.rs starts it."""

    def __init__(self, server, model):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
        self.proc = subprocess.Popen([server, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-c", "4096", "-t", "1", "-np", "1",
                                      "--no-webui", "--no-repack"], stdout=subprocess.DEVNULL, stderr=self.log)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                sys.exit(f"llama-server exited with {self.proc.returncode} before it was ready; see {self.log.name}")
            if time.monotonic() > deadline:
                self.close()
                sys.exit(f"llama-server did not answer /health within 300 s; see {self.log.name}")
            time.sleep(0.5)

    def close(self):
        self.proc.kill()
        self.proc.wait()


class Lsp:
    def __init__(self, tandem, root, llama_url, timeout_ms):
        env = dict(os.environ, TANDEM_LOG=os.environ.get("TANDEM_LOG", "error"), XDG_DATA_HOME=os.path.join(root, ".data"), HOME=os.path.join(root, ".home"))
        self.proc = subprocess.Popen([tandem, "lsp"], cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0
        # The fill-in-the-middle half is not measured here: one token from the
        # cursor's line alone, so it costs the model next to nothing.
        inline = {"enabled": True, "provider": "llama.cpp", "baseUrl": llama_url, "nextEdits": True, "debounceMs": 0,
                  "maxTokens": 1, "contextLines": 0, "timeoutMs": timeout_ms}
        root_uri = "file://" + root
        self.request("initialize", {"processId": None, "rootUri": root_uri, "workspaceFolders": [{"uri": root_uri, "name": "w"}],
                                    "capabilities": {"experimental": {"inlineCompletionEditsAnywhere": True}},
                                    "initializationOptions": {"tandem": {"inlineCompletions": inline}}})
        self.notify("initialized", {})

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self):
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("tandem lsp exited")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self.read()
            if message.get("id") == self.next_id and "method" not in message:
                return message
            if "method" in message and "id" in message:  # a server request: answer null
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()


def utf16_len(text):
    return len(text.encode("utf-16-le")) // 2


def offset(text, line, character):
    lines = text.split("\n")
    start = sum(len(l) + 1 for l in lines[:line])
    units, at = 0, 0
    for ch in lines[line] if line < len(lines) else "":
        if units >= character:
            break
        units += utf16_len(ch)
        at += 1
    return start + at


def ask(lsp, uri, text, edit_first, sample, version_box):
    """The file after applying the next-edit item, or None without one."""
    first = sample["first"]
    start_line = first["old_start"] - 1 + (1 if first["old_count"] == 0 else 0)
    if edit_first:
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": sample["before"]}})
        end_line = start_line + first["old_count"]
        new_text = "".join(l + "\n" for l in first["new"])
        lsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                              "contentChanges": [{"range": {"start": {"line": start_line, "character": 0}, "end": {"line": end_line, "character": 0}}, "text": new_text}]})
    else:
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    # The cursor at the end of the first change's last line.
    cursor_line = start_line + max(len(first["new"]) - 1, 0)
    cursor_char = utf16_len(first["new"][-1]) if first["new"] else 0
    started = time.monotonic()
    response = lsp.request("textDocument/inlineCompletion", {"textDocument": {"uri": uri}, "position": {"line": cursor_line, "character": cursor_char}, "context": {"triggerKind": 1}})
    elapsed = time.monotonic() - started
    lsp.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    items = (response.get("result") or {}).get("items") or []
    for item in items:
        if (item.get("command") or {}).get("arguments", [{}])[0].get("kind") == "nextEdit":
            r = item["range"]
            a, b = offset(text, r["start"]["line"], r["start"]["character"]), offset(text, r["end"]["line"], r["end"]["character"])
            return text[:a] + item["insertText"] + text[b:], elapsed
    return None, elapsed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tandem", required=True, help="the tandem binary (a release build)")
    parser.add_argument("--repos", help="a file of 'owner/name commit' lines (default bench/inline_quality.repos unless --repo is given)")
    parser.add_argument("--repo", action="append", default=[], help="a local git directory (bare or .git), mined from its HEAD; repeatable")
    parser.add_argument("--mirrors", action="append", default=[], help="a folder of local copies of the listed repositories; repeatable")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/tandem-bench/repos"), help="where repositories are cloned to")
    parser.add_argument("--llama-url", help="a running llama.cpp server (default: start one from $TANDEM_LLAMA_SERVER and $TANDEM_LLAMA_MODEL)")
    parser.add_argument("--samples", type=int, default=20, help="edits per repository")
    parser.add_argument("--distance", type=int, default=20, help="lines between the two changes, at most")
    parser.add_argument("--timeout-ms", type=int, default=600000, help="Tandem's timeoutMs (at most 600000, which it takes): long, so a slow CPU still gets its answers")
    parser.add_argument("--out", help="also write the Markdown section to this file")
    parser.add_argument("--json", help="write each edit's outcome to this file")
    args = parser.parse_args()
    if not 1 <= args.timeout_ms <= 600000:
        sys.exit("--timeout-ms: Tandem takes 1 to 600000 ms")
    if not os.access(args.tandem, os.X_OK):
        sys.exit(f"--tandem {args.tandem} is not an executable (cargo build --release --locked)")
    listed = load_repos(args.repos or os.path.join(here, "inline_quality.repos")) if args.repos or not args.repo else []
    mirrors = args.mirrors + [m for m in os.environ.get("TANDEM_QUALITY_MIRRORS", "").split(":") if m]
    sources = []  # (label, git dir, commit)
    for name, commit in listed:
        sources.append((name, obtain(name, commit, mirrors, args.cache), commit))
    for path in args.repo:
        if not os.path.isdir(path):
            sys.exit(f"--repo {path} is not a folder")
        commit = git(path, "rev-parse", "HEAD").strip()
        sources.append((os.path.basename(os.path.abspath(path).removesuffix("/.git").removesuffix(".git")), path, commit))

    llama = None
    model = "the model at " + (args.llama_url or "")
    if args.llama_url:
        url = args.llama_url
    else:
        server, weights = os.environ.get("TANDEM_LLAMA_SERVER"), os.environ.get("TANDEM_LLAMA_MODEL")
        if not (server and weights and os.path.isfile(server) and os.path.isfile(weights)):
            sys.exit("no model: give --llama-url, or set TANDEM_LLAMA_SERVER and TANDEM_LLAMA_MODEL (source .ci/tools)")
        version = subprocess.run([server, "--version"], capture_output=True, text=True)
        version = next((l for l in (version.stdout + version.stderr).splitlines() if "version" in l), "").strip()
        model = f"{os.path.basename(weights)} in llama.cpp's llama-server ({version}; one CPU thread, 4096-token context)"
        llama = Llama(server, weights)
        url = llama.url

    # Read now: the checkout may move while this runs.
    tandem_commit = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown"
    recorder = Recorder(url)
    results = []  # one per edit
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as temp:
            root = os.path.realpath(temp)
            lsp = Lsp(os.path.abspath(args.tandem), root, recorder.url, args.timeout_ms)
            # Round robin over the repositories, so a run stopped early has some of each.
            mined = [mine(git_dir, label, commit, args.samples, args.distance) for label, git_dir, commit in sources]
            queue = [(sample, commit) for turn in range(max(map(len, mined), default=0))
                     for (label, _, commit), samples in zip(sources, mined) if turn < len(samples) for sample in [samples[turn]]]
            for i, (sample, commit) in enumerate(queue):
                name = f"s{i}_" + os.path.basename(sample["path"])
                outcome = {"repo": sample["repo"], "pinned": commit, "commit": sample["commit"], "path": sample["path"], "in_region": in_region(sample)}
                for condition, edit_first in (("with", True), ("without", False)):
                    # One document per condition (same name, so the same
                    # prompt): on one, the second request would find the
                    # first one's completion in Tandem's cache.
                    path = os.path.join(root, condition, name)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "w") as f:
                        f.write(sample["after_first"])
                    got, elapsed = ask(lsp, "file://" + path, sample["after_first"], edit_first, sample, None)
                    os.remove(path)
                    answer = recorder.answers.get((name, edit_first), {"markers": False, "cut": False, "error": "no next-edit answer"})
                    outcome[condition] = {"exact": got is not None and got == sample["after_second"], "suggested": got is not None,
                                          "markers": answer["markers"], "cut": answer["cut"], "answered": "error" not in answer,
                                          "seconds": round(elapsed, 2)}
                results.append(outcome)
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump(results, f, indent=1)
                print(f"{i + 1}/{len(queue)} {sample['repo']} {sample['commit']} {sample['path']}: in region {outcome['in_region']}, "
                      f"with {outcome['with']} without {outcome['without']}", file=sys.stderr, flush=True)
            lsp.close()
    finally:
        recorder.close()
        if llama:
            llama.close()
    minutes = (time.monotonic() - started) / 60

    def row(title, outcomes):
        n = len(outcomes)
        count = lambda cond, key: sum(o[cond][key] for o in outcomes)
        rate = lambda k: f"{k}/{n} ({100 * k / n:.1f} %)" if n else "–"
        times = sorted(o[c]["seconds"] for o in outcomes for c in ("with", "without"))
        median = f"{times[len(times) // 2]:.1f} s" if times else "–"
        return (f"| {title} | {n} | {sum(o['in_region'] for o in outcomes)} | {rate(count('with', 'exact'))} | {rate(count('without', 'exact'))} "
                f"| {count('with', 'suggested')} / {count('without', 'suggested')} | {count('with', 'markers')} / {count('without', 'markers')} "
                f"| {count('with', 'cut')} / {count('without', 'cut')} | {median} |")

    load = " ".join(open("/proc/loadavg").read().split()[:3]) if os.path.exists("/proc/loadavg") else "?"
    n = len(results)
    unanswered = sum(not o[c]["answered"] for o in results for c in ("with", "without"))
    lines = [
        "## Inline completions: next-edit quality (offline, recorded)",
        "",
        "Written by `bench/inline_quality.py` (see [docs/benchmarks.md](docs/benchmarks.md)), not by `bench/run`: it takes hours on a CPU, "
        "so its last result is kept in `bench/inline_quality.md` and appended here as is.",
        "",
        f"- Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; Tandem commit {tandem_commit}; "
        f"model: {model}; {os.cpu_count()} cores, load average at the end {load}; {n} edits, {2 * n} requests, {minutes:.0f} minutes.",
        f"- Edits: two changes of one `*.py` file in one commit, the second starting at most {args.distance} lines after the first, "
        f"each 1–6 lines added and at most 6 removed; the newest such pair of each file and commit, walking back from the pinned commit, "
        f"{args.samples} per repository at most. Each edit is asked twice (`textDocument/inlineCompletion`, invoked, `nextEdits` on): "
        "with the first change sent as a `didChange` (edit history in the prompt) and without (the file opened with it made). "
        "Exact: the suggestion applied gives the file with the second change, byte for byte.",
        "- In the region: the second change lies where the model may rewrite (5 lines above the cursor to 10 below); the others cannot match. "
        "In the asked format: the model's answer held the region between its two markers (any other answer gives no suggestion). "
        "Cut: the answer stopped at the token limit (the region's length / 3 + 64)."
        + (f" {unanswered} of the {2 * n} requests got no next-edit answer from the model (none asked, or none within `timeoutMs`, {args.timeout_ms} ms)." if unanswered else ""),
        "",
        "| repository (pinned commit) | edits | in the region | exact match, with edit history | exact match, without | a suggestion, with / without "
        "| in the asked format, with / without | cut, with / without | median time per request |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, _, commit in sources:
        lines.append(row(f"{label} ({commit[:12]})", [o for o in results if o["repo"] == label and o["pinned"] == commit]))
    lines.append(row("**all**", results))
    section = "\n".join(lines) + "\n"
    print(section)
    if args.out:
        with open(args.out, "w") as f:
            f.write(section)


if __name__ == "__main__":
    main()
