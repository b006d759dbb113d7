#!/usr/bin/env python3
"""The Windows smoke suite: the cross-built `tandem.exe` run under Wine.

`tests/windows/smoke` builds the binary and the Wine prefix and runs this
with `TANDEM_EXE` (the .exe) and `WINE` (the loader) set. Each check runs
the real program as an editor or a user would and looks at what it did:
the files on disk, the messages it sent. Wine maps the Linux root to drive
`Z:`, so a workspace `/tmp/x` is `Z:\\tmp\\x` to Tandem.

Ends with `N passed, N failed`; exits 1 if any failed.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import queue
import time
import traceback
import urllib.parse

EXE = os.environ["TANDEM_EXE"]
WINE = os.environ.get("WINE", "wine64")
TIMEOUT = 120


def env_for(home):
    """A clean environment: its own home (settings, threads), no keys."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("TANDEM_")}
    env.update({"HOME": home, "USERPROFILE": home, "WINEDEBUG": "-all", "TANDEM_LOG": "error"})
    env["XDG_DATA_HOME"] = os.path.join(home, "data")
    return env


def tandem(args, cwd, env, stdin=None):
    return subprocess.run([WINE, EXE, *args], cwd=cwd, env=env, input=stdin, capture_output=True, timeout=TIMEOUT)


def windows_path(path):
    """The path as Tandem sees it under Wine (drive Z: is `/`)."""
    return "Z:" + path.replace("/", "\\")


def vscode_uri(path):
    """A file URI as VS Code sends it on Windows: lower-case drive, `:` escaped."""
    return "file:///z%3A" + urllib.parse.quote(path)


class Workspace:
    def __init__(self):
        self.temp = tempfile.TemporaryDirectory(prefix="tandem-wine-")
        self.base = self.temp.name
        self.root = os.path.join(self.base, "work")
        self.home = os.path.join(self.base, "home")
        os.makedirs(self.root)
        os.makedirs(os.path.join(self.home, ".tandem"))
        self.env = env_for(self.home)

    def script(self, turns):
        path = os.path.join(self.base, "script.json")
        with open(path, "w") as f:
            json.dump({"turns": turns}, f)
        self.env["TANDEM_PROVIDER"] = "scripted"
        self.env["TANDEM_SCRIPT"] = windows_path(path)

    def write(self, name, data: bytes):
        with open(os.path.join(self.root, name), "wb") as f:
            f.write(data)

    def read(self, name) -> bytes:
        with open(os.path.join(self.root, name), "rb") as f:
            return f.read()


def check_version():
    w = Workspace()
    out = tandem(["--version"], w.root, w.env)
    assert out.returncode == 0, out
    assert out.stdout.decode().startswith("tandem "), out.stdout


def check_read_file():
    w = Workspace()
    w.write("notes.txt", b"alpha\r\nbeta\r\n")
    out = tandem(["tool", "read_file", json.dumps({"file_path": "notes.txt"})], w.root, w.env)
    assert out.returncode == 0, out
    text = out.stdout.decode()
    assert "alpha" in text and "beta" in text, text
    # And by its Windows path, backslashes and all.
    out = tandem(["tool", "read_file", json.dumps({"file_path": windows_path(os.path.join(w.root, "notes.txt"))})], w.root, w.env)
    assert out.returncode == 0 and "beta" in out.stdout.decode(), out


def check_ask_edits_a_crlf_file():
    w = Workspace()
    w.write("crlf.txt", b"one\r\ntwo\r\nthree\r\n")
    w.script([
        {"text": "", "tool_calls": [{"name": "read_file", "input": {"file_path": "crlf.txt"}}]},
        {"text": "", "tool_calls": [{"name": "edit_file", "input": {"file_path": "crlf.txt", "old_string": "two\nthree", "new_string": "TWO\nTHREE\nfour"}}]},
        {"text": "Done."},
    ])
    out = tandem(["ask", "--permission-mode", "acceptEdits", "change two"], w.root, w.env)
    assert out.returncode == 0, out
    assert w.read("crlf.txt") == b"one\r\nTWO\r\nTHREE\r\nfour\r\n", w.read("crlf.txt")


def check_doctor_says_no_sandbox():
    w = Workspace()
    out = tandem(["doctor", "--json"], w.root, w.env)
    report = json.loads(out.stdout)
    assert report["sandbox"]["state"] == "unavailable", report
    assert "windows" in report["sandbox"]["description"], report
    assert "notice" in report["sandbox"], report
    assert out.returncode == 1, out


def check_run_shell_without_git_bash():
    w = Workspace()
    # Wine's own PATH has no Git for Windows: the tool says what to install.
    out = tandem(["tool", "run_shell", json.dumps({"command": "echo hi"})], w.root, w.env)
    assert out.returncode == 1, out
    text = out.stdout.decode() + out.stderr.decode()
    assert "Git for Windows" in text, text


def check_device_names_and_trailing_dots_are_refused():
    w = Workspace()
    for name in ["NUL", "aux.txt", "notes.txt.", "sub\\COM1.log", "folder \\x.txt"]:
        out = tandem(["tool", "write_file", json.dumps({"file_path": name, "content": "x"})], w.root, w.env)
        assert out.returncode == 1, (name, out)
        assert b"Windows" in out.stdout, (name, out.stdout)
    assert os.listdir(w.root) == [], os.listdir(w.root)
    out = tandem(["tool", "write_file", json.dumps({"file_path": "console.log", "content": "x"})], w.root, w.env)
    assert out.returncode == 0 and w.read("console.log") == b"x", out


def check_git_hooks_are_protected_in_every_spelling():
    w = Workspace()
    os.makedirs(os.path.join(w.root, ".git"))
    # No hooks folder yet: nothing on disk tells `HOOKS` is `hooks`.
    spellings = [".GIT\\HOOKS\\pre-commit", ".git.\\hooks\\pre-commit", ".Git /Hooks/pre-commit", windows_path(w.root) + "\\.GIT\\hooks\\pre-commit"]
    w.script([{"text": "", "tool_calls": [{"name": "write_file", "input": {"file_path": s, "content": "#!/bin/sh\necho pwned\n"}} for s in spellings]},
              {"text": "Done."}])
    # bypassPermissions lets every write through but git's hooks and config.
    out = tandem(["ask", "--permission-mode", "bypassPermissions", "add a hook"], w.root, w.env)
    # Nothing written anywhere (a `\\\\?\\` path would have made `.git.` and
    # `.Git ` folders of their own).
    written = [os.path.join(d, f) for d, _, files in os.walk(w.root) for f in files]
    assert written == [], (written, out.stdout.decode())
    assert os.listdir(w.root) == [".git"], os.listdir(w.root)
    # Each refused: asked (and no one can answer here), or its name refused.
    said = out.stdout.decode()
    assert said.count("needs permission") + said.count("which Windows drops from names") == len(spellings), said


def with_git_bash(env):
    """Git Bash (the suite's stand-in, fake_bash.c) on the Windows PATH."""
    env = dict(env)
    env["WINEPATH"] = windows_path(os.environ["TANDEM_FAKE_BASH_DIR"])
    return env


def bash_processes_with(marker):
    """The stand-in bash's processes whose command line has `marker`."""
    out = subprocess.run(["pgrep", "-f", f"bash\\.exe .*{marker}"], capture_output=True)
    return out.stdout.split()


def check_run_shell_runs_git_bash():
    w = Workspace()
    out = tandem(["tool", "run_shell", json.dumps({"command": "echo from bash"})], w.root, with_git_bash(w.env))
    assert out.returncode == 0, out
    assert out.stdout.decode().strip() == "from bash", out


def check_a_timeout_ends_the_whole_process_tree():
    w = Workspace()
    marker = f"tree-{os.getpid()}-{time.time_ns()}"
    # The shell starts a child, which starts a grandchild; all sleep.
    call = subprocess.Popen([WINE, EXE, "tool", "run_shell", json.dumps({"command": f"tree {marker}", "timeout": 6000})],
                            cwd=w.root, env=with_git_bash(w.env), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while len(bash_processes_with(marker)) < 3 and time.time() < deadline:
        time.sleep(0.2)
    assert len(bash_processes_with(marker)) == 3, "the shell, its child and its grandchild never all ran"
    out, _ = call.communicate(timeout=TIMEOUT)
    assert call.returncode == 1, out
    assert b"timed out" in out, out
    time.sleep(1)
    assert bash_processes_with(marker) == [], "processes of the tree outlived the timeout"


def check_killing_tandem_ends_the_whole_process_tree():
    """Tandem ended by TerminateProcess (`taskkill /f`: no code of its own
    runs) leaves nothing it started: the shell's Job Object is killed
    when its last handle, Tandem's, closes (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)."""
    w = Workspace()
    marker = f"killed-{os.getpid()}-{time.time_ns()}"
    call = subprocess.Popen([WINE, EXE, "tool", "run_shell", json.dumps({"command": f"tree {marker}", "timeout": 600000})],
                            cwd=w.root, env=with_git_bash(w.env), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 30
        while len(bash_processes_with(marker)) < 3 and time.time() < deadline:
            time.sleep(0.2)
        assert len(bash_processes_with(marker)) == 3, "the shell, its child and its grandchild never all ran"
        kill = subprocess.run([WINE, "taskkill", "/f", "/im", os.path.basename(EXE)], env=w.env, capture_output=True, timeout=TIMEOUT)
        assert kill.returncode == 0, kill
        # Not communicate(): a survivor would hold the output pipe open.
        call.wait(timeout=30)
        deadline = time.time() + 10
        while bash_processes_with(marker) and time.time() < deadline:
            time.sleep(0.2)
        assert bash_processes_with(marker) == [], "processes Tandem started outlived it"
    finally:
        call.kill()
        for pid in bash_processes_with(marker):
            subprocess.run(["kill", "-9", pid])


class Stdio:
    """A JSON-RPC peer over the program's stdio: LSP frames or ACP lines."""

    def __init__(self, args, cwd, env, framed):
        self.framed = framed
        self.proc = subprocess.Popen([WINE, EXE, *args], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.incoming = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            if self.framed:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                body = out.read(length)
            else:
                body = out.readline()
                if not body:
                    return
            self.incoming.put(json.loads(body))

    def send(self, message):
        body = json.dumps(message).encode()
        if self.framed:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        else:
            self.proc.stdin.write(body + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params, on_request=None):
        self.next_id += 1
        sent = self.next_id
        self.send({"jsonrpc": "2.0", "id": sent, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == sent and "method" not in m, on_request)

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, matches, on_request=None):
        deadline = time.time() + TIMEOUT
        while True:
            message = self.incoming.get(timeout=max(0.1, deadline - time.time()))
            if matches(message):
                return message
            if "method" in message and "id" in message and on_request:
                on_request(message)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


def check_lsp_applies_an_edit_to_a_vscode_uri():
    w = Workspace()
    w.write("doc.txt", b"hello\r\nworld\r\n")
    w.script([
        {"text": "", "tool_calls": [{"name": "read_file", "input": {"file_path": "doc.txt"}}]},
        {"text": "", "tool_calls": [{"name": "edit_file", "input": {"file_path": "doc.txt", "old_string": "world", "new_string": "there"}}]},
        {"text": "Done."},
    ])
    lsp = Stdio(["lsp"], w.root, w.env, framed=True)
    try:
        root_uri = vscode_uri(w.root)
        init = lsp.request("initialize", {"processId": None, "rootUri": root_uri, "workspaceFolders": [{"uri": root_uri, "name": "work"}],
                                          "capabilities": {"workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}},
                                          "initializationOptions": {"permissionMode": "acceptEdits"}})
        assert "result" in init, init
        lsp.notify("initialized", {})
        uri = vscode_uri(os.path.join(w.root, "doc.txt"))
        # The editor's buffer differs from the disk (unsaved typing), at version 7.
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 7, "text": "hello\r\nworld\r\nunsaved\r\n"}})
        edits = []

        def answer(request):
            if request["method"] == "workspace/applyEdit":
                edits.append(request["params"])
                lsp.send({"jsonrpc": "2.0", "id": request["id"], "result": {"applied": True}})
            else:
                lsp.send({"jsonrpc": "2.0", "id": request["id"], "result": None})

        done = lsp.request("workspace/executeCommand", {"command": "tandem.ask", "arguments": [{"prompt": "edit it"}]}, on_request=answer)
        assert "result" in done, done
        assert len(edits) == 1, edits
        change = edits[0]["edit"]["documentChanges"][0]
        assert change["textDocument"]["version"] == 7, change
        # The document as the editor named it, at the version it has.
        assert change["textDocument"]["uri"] == uri, change
        assert change["edits"] == [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 5}}, "newText": "there"}], change
        # The edit went to the editor, not the disk.
        assert w.read("doc.txt") == b"hello\r\nworld\r\n", w.read("doc.txt")
        lsp.request("shutdown", None)
        lsp.notify("exit", None)
    finally:
        lsp.close()


def check_acp_prompt_turn():
    w = Workspace()
    w.script([{"text": "Hello from Windows."}])
    acp = Stdio(["acp"], w.root, w.env, framed=False)
    try:
        init = acp.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert init.get("result", {}).get("protocolVersion") == 1, init
        session = acp.request("session/new", {"cwd": windows_path(w.root), "mcpServers": []})
        session_id = session["result"]["sessionId"]
        said = []

        def on_request(request):
            acp.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "not here"}})

        def matches(m):
            if m.get("method") == "session/update":
                update = m["params"]["update"]
                if update.get("sessionUpdate") == "agent_message_chunk":
                    said.append(update["content"].get("text", ""))
            return m.get("id") == prompt_id and "method" not in m

        acp.next_id += 1
        prompt_id = acp.next_id
        acp.send({"jsonrpc": "2.0", "id": prompt_id, "method": "session/prompt",
                  "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}})
        done = acp.wait(matches, on_request)
        assert done.get("result", {}).get("stopReason") == "end_turn", done
        assert "Hello from Windows." in "".join(said), said
    finally:
        acp.close()


CHECKS = [
    check_version,
    check_read_file,
    check_ask_edits_a_crlf_file,
    check_doctor_says_no_sandbox,
    check_run_shell_without_git_bash,
    check_device_names_and_trailing_dots_are_refused,
    check_git_hooks_are_protected_in_every_spelling,
    check_run_shell_runs_git_bash,
    check_a_timeout_ends_the_whole_process_tree,
    check_killing_tandem_ends_the_whole_process_tree,
    check_lsp_applies_an_edit_to_a_vscode_uri,
    check_acp_prompt_turn,
]


def main():
    only = sys.argv[1:]
    passed = failed = 0
    for check in CHECKS:
        if only and not any(name in check.__name__ for name in only):
            continue
        started = time.time()
        try:
            check()
            passed += 1
            print(f"ok   {check.__name__} ({time.time() - started:.1f} s)", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {check.__name__} ({time.time() - started:.1f} s)", flush=True)
            traceback.print_exc()
    print(f"windows smoke: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
