#!/usr/bin/env python3
"""A small MCP server for Tandem's tests (standard library only).

Speaks newline-delimited JSON-RPC on stdio, or streamable HTTP on loopback
with --http (JSON answers; the chosen port is printed on stdout).

Tools: add (read-only), echo, slow, crash (exits the process mid-call),
pid, cancelled (the request ids this server was told to cancel),
grow (adds a tool and sends notifications/tools/list_changed, stdio only).

Options:
  --greeting TEXT   prefix of echo's answer (over HTTP: the X-Greeting header wins)
  --marker PATH     write the pid to PATH at start-up (proves it started)
  --starts PATH     add a line with the pid to PATH at each start-up (counts the starts)
  --hang            read requests but never answer initialize
  --start-delay S   answer initialize only after S seconds (a slow start, like npx)
  --http            serve streamable HTTP on 127.0.0.1 (port printed)
"""

import json
import os
import sys
import threading
import time

args = sys.argv[1:]


def option(name, default=None):
    if name in args:
        i = args.index(name)
        if i + 1 < len(args):
            return args[i + 1]
    return default


GREETING = option("--greeting", "echo")
MARKER = option("--marker")
STARTS = option("--starts")
HANG = "--hang" in args
START_DELAY = float(option("--start-delay", "0"))
HTTP = "--http" in args

cancelled = []
extra_tools = []
lock = threading.Lock()

TOOLS = [
    {
        "name": "add",
        "description": "Add two numbers and return the sum.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "echo",
        "description": "Echo the text back, prefixed with the server's greeting.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "slow",
        "description": "Sleep for the given number of seconds, then answer.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "crash",
        "description": "Exit the server process in the middle of the call.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "pid",
        "description": "The server's process id.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "cancelled",
        "description": "The ids of requests this server was told to cancel.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "grow",
        "description": "Add a tool named late and announce that the tool list changed.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def text(value, is_error=False):
    result = {"content": [{"type": "text", "text": str(value)}]}
    if is_error:
        result["isError"] = True
    return result


def call_tool(name, arguments, notify, greeting):
    if name == "add":
        return text(arguments.get("a", 0) + arguments.get("b", 0))
    if name == "echo":
        return text("%s: %s" % (greeting, arguments.get("text", "")))
    if name == "slow":
        time.sleep(float(arguments.get("seconds", 1)))
        return text("slept")
    if name == "crash":
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "pid":
        return text(os.getpid())
    if name == "cancelled":
        with lock:
            return text(json.dumps(cancelled))
    if name == "grow":
        with lock:
            if not extra_tools:
                extra_tools.append({
                    "name": "late",
                    "description": "A tool that appeared after start-up.",
                    "inputSchema": {"type": "object", "properties": {}},
                })
        notify({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("grown")
    if name == "late":
        return text("late tool ran")
    return text("unknown tool: %s" % name, is_error=True)


def handle(message, notify, greeting=GREETING):
    """The response to one message, or None for notifications."""
    method = message.get("method")
    msg_id = message.get("id")
    if method == "notifications/cancelled":
        with lock:
            cancelled.append(message.get("params", {}).get("requestId"))
        return None
    if msg_id is None:
        return None
    if method == "initialize":
        time.sleep(START_DELAY)
        result = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "tandem-test-server", "version": "1.0"},
        }
    elif method == "tools/list":
        with lock:
            result = {"tools": TOOLS + extra_tools}
    elif method == "tools/call":
        params = message.get("params", {})
        result = call_tool(params.get("name"), params.get("arguments") or {}, notify, greeting)
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "method not found: %s" % method}}
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def serve_stdio():
    out_lock = threading.Lock()

    def send(message):
        with out_lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        if HANG:
            continue
        # Calls run on their own thread, so a cancellation can arrive meanwhile.
        if message.get("method") == "tools/call":
            def work(m=message):
                response = handle(m, send)
                if response is not None:
                    send(response)
            threading.Thread(target=work, daemon=True).start()
            continue
        response = handle(message, send)
        if response is not None:
            send(response)


def serve_http():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            message = json.loads(self.rfile.read(length) or b"{}")
            response = handle(message, lambda m: None, self.headers.get("X-Greeting") or GREETING)
            if response is None:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps(response).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if message.get("method") == "initialize":
                self.send_header("Mcp-Session-Id", "test-session")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_DELETE(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    sys.stdout.write("%d\n" % server.server_address[1])
    sys.stdout.flush()
    server.serve_forever()


if MARKER:
    with open(MARKER + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(MARKER + ".tmp", MARKER)

if STARTS:
    with open(STARTS, "a") as f:
        f.write("%d\n" % os.getpid())

if HTTP:
    serve_http()
else:
    serve_stdio()
