#!/usr/bin/env python3
"""Offline quality check of Tandem's next-edit suggestions (issue 30).

Mines edits from the history of git repositories: in one commit, two
changes (hunks) of one file where the second lies within 20 lines of the
first. The first is the user's "last edit"; the second is the next edit a
perfect model would suggest. For each, the real `tandem lsp` is asked for
`textDocument/inlineCompletion` (with `"nextEdits": true`) at the end of the
first change, twice:

- with edit history: the file is opened as it was before the commit and the
  first change arrives as a `didChange`, as typing would send it;
- without: the file is opened with the first change already in it (no
  `didChange`, so the prompt's "Recent edits" is empty).

A suggestion is an exact match when applying it gives the file with the
second change made, byte for byte. Prints a Markdown table (and JSON with
--json). Offline: the model is a local llama.cpp server (`--llama-url`), the
repositories are local git folders (`--repo`, repeatable), nothing is fetched.

Usage:
  bench/inline_quality.py --tandem target/release/tandem --llama-url http://127.0.0.1:8012 \
      --repo /path/to/repo.git [--repo ...] [--samples 20] [--distance 20]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

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


def mine(repo, samples, distance, max_commits=2000):
    found = []
    commits = git(repo, "log", "--no-merges", "--format=%H", "-n", str(max_commits), "--", "*.py").split()
    for commit in commits:
        try:
            diff = git(repo, "show", "--format=", "-U0", "--no-color", "--no-renames", commit, "--", "*.py")
        except subprocess.CalledProcessError:
            continue
        for path, hunks in hunks_of(diff).items():
            for first, second in zip(hunks, hunks[1:]):
                gap = second["old_start"] - (first["old_start"] + first["old_count"])
                small = all(1 <= len(h["new"]) <= 6 and len(h["old"]) <= 6 for h in (first, second))
                if gap > distance or not small or not first["old"] and not first["new"]:
                    continue
                try:
                    before = git(repo, "show", f"{commit}^:{path}")
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
                    "repo": os.path.basename(os.path.dirname(repo.rstrip("/"))) or repo,
                    "commit": commit[:12], "path": path,
                    "before": "\n".join(lines), "after_first": "\n".join(after_first), "after_second": "\n".join(after_second),
                    "first": first,
                })
                break
            if len(found) >= samples:
                return found
    return found


class Lsp:
    def __init__(self, tandem, root, llama_url, timeout_ms):
        env = dict(os.environ, TANDEM_LOG="error", XDG_DATA_HOME=os.path.join(root, ".data"), HOME=os.path.join(root, ".home"))
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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tandem", required=True)
    parser.add_argument("--llama-url", required=True)
    parser.add_argument("--repo", action="append", required=True, help="a git directory (bare or .git)")
    parser.add_argument("--samples", type=int, default=20, help="edits per repository")
    parser.add_argument("--distance", type=int, default=20, help="lines between the two changes, at most")
    parser.add_argument("--timeout-ms", type=int, default=180000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows, results = [], []
    with tempfile.TemporaryDirectory() as temp:
        root = os.path.realpath(temp)
        lsp = Lsp(os.path.abspath(args.tandem), root, args.llama_url, args.timeout_ms)
        for repo in args.repo:
            samples = mine(repo, args.samples, args.distance)
            counts = {"with": [0, 0], "without": [0, 0]}  # exact, suggested
            times = []
            for i, sample in enumerate(samples):
                path = os.path.join(root, f"s{len(results)}_" + os.path.basename(sample["path"]))
                with open(path, "w") as f:
                    f.write(sample["after_first"])
                uri = "file://" + path
                outcome = {"repo": sample["repo"], "commit": sample["commit"], "path": sample["path"]}
                for name, edit_first in (("with", True), ("without", False)):
                    got, elapsed = ask(lsp, uri, sample["after_first"], edit_first, sample, None)
                    times.append(elapsed)
                    exact = got is not None and got == sample["after_second"]
                    counts[name][0] += exact
                    counts[name][1] += got is not None
                    outcome[name] = {"exact": exact, "suggested": got is not None, "seconds": round(elapsed, 2)}
                results.append(outcome)
                print(f"{sample['repo']} {i + 1}/{len(samples)} {sample['commit']} {sample['path']}: with {outcome['with']} without {outcome['without']}", file=sys.stderr)
            n = len(samples)
            rows.append((repo, n, counts, sorted(times)))
        lsp.close()
    if args.json:
        print(json.dumps(results, indent=1))
    print("| repository | edits | exact match with edit history | without | a suggestion with / without | median time per request |")
    print("|---|---|---|---|---|---|")
    for repo, n, counts, times in rows:
        pct = lambda k: f"{counts[k][0]}/{n} ({100 * counts[k][0] / n:.0f} %)" if n else "–"
        median = f"{times[len(times) // 2]:.1f} s" if times else "–"
        print(f"| {repo} | {n} | {pct('with')} | {pct('without')} | {counts['with'][1]} / {counts['without'][1]} | {median} |")


if __name__ == "__main__":
    main()
