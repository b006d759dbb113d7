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
  --instructions T  the server's instructions (initialize's `instructions`)
  --instructions-repeat N  ... T repeated N times

OAuth (with --http --oauth): the same server is also the authorization
server (RFC 9728 / RFC 8414 metadata, RFC 7591 registration, an
/authorize that approves at once by redirecting, PKCE S256 checked at
/token, RFC 7009 /revoke); /mcp wants a bearer token it issued.
  --oauth-log PATH    append one JSON line per OAuth event (register, token,
                      refresh, revoke, mcp with or without a token)
  --access-ttl S      access tokens' expires_in (default 3600)
  --prm-resource URL  the protected-resource metadata's `resource` (a lie)
  --token-garbage     /token answers with something that is not JSON
  --reject-refresh    refresh grants answer invalid_grant (an expired refresh token)
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
INSTRUCTIONS = option("--instructions")
if INSTRUCTIONS is not None:
    INSTRUCTIONS = INSTRUCTIONS * int(option("--instructions-repeat", "1"))
OAUTH = "--oauth" in args
OAUTH_LOG = option("--oauth-log")
ACCESS_TTL = int(option("--access-ttl", "3600"))
PRM_RESOURCE = option("--prm-resource")
TOKEN_GARBAGE = "--token-garbage" in args
REJECT_REFRESH = "--reject-refresh" in args

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
        "name": "ask",
        "description": "Ask the user their name (elicitation, stdio only) and greet them.",
        "inputSchema": {"type": "object", "properties": {}},
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


pending = {}


def elicit(send, message, schema):
    """Ask the client (elicitation/create) and wait for its answer (None: none in 60 s)."""
    with lock:
        request_id = "elicit-%d" % (len(pending) + 1)
        waiting = pending[request_id] = {"event": threading.Event(), "reply": None}
    send({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create",
          "params": {"mode": "form", "message": message, "requestedSchema": schema}})
    waiting["event"].wait(60)
    return waiting["reply"]


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
    if name == "ask":
        reply = elicit(notify, "What is your name?", {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Your name"}},
            "required": ["name"],
        })
        if reply is None:
            return text("no answer from the client", is_error=True)
        result = reply.get("result") or {}
        if result.get("action") != "accept":
            return text("the user did not answer (%s)" % result.get("action"), is_error=True)
        return text("hello %s" % (result.get("content") or {}).get("name"))
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
        if INSTRUCTIONS is not None:
            result["instructions"] = INSTRUCTIONS
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
        # An answer to this server's own request (elicitation).
        if "method" not in message and message.get("id") in pending:
            waiting = pending[message["id"]]
            waiting["reply"] = message
            waiting["event"].set()
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


def oauth_log(event):
    if OAUTH_LOG:
        with lock:
            with open(OAUTH_LOG, "a") as f:
                f.write(json.dumps(event) + "\n")


class OAuth:
    """The authorization server's state."""

    def __init__(self):
        self.clients = {}  # client_id -> redirect_uris
        self.codes = {}  # code -> (client_id, challenge, redirect_uri)
        self.access = {}  # token -> expiry time
        self.refresh = {}  # token -> client_id
        self.counter = 0

    def new(self, prefix):
        with lock:
            self.counter += 1
            return "%s-%d" % (prefix, self.counter)

    def grant(self, client_id):
        access = self.new("access")
        refresh = self.new("refresh")
        self.access[access] = time.time() + ACCESS_TTL
        self.refresh[refresh] = client_id
        return {"access_token": access, "token_type": "Bearer", "expires_in": ACCESS_TTL, "refresh_token": refresh}


def pkce_ok(verifier, challenge):
    import base64
    import hashlib
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=") == challenge


def serve_http():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import urlparse, parse_qs, urlencode

    oauth = OAuth()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def base(self):
            return "http://127.0.0.1:%d" % self.server.server_address[1]

        def reply(self, status, body=b"", content_type="application/json", headers=()):
            if not isinstance(body, bytes):
                body = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
            return True

        def body(self):
            length = int(self.headers.get("Content-Length", "0"))
            return self.rfile.read(length)

        def oauth_get(self, url):
            base = self.base()
            if url.path.startswith("/.well-known/oauth-protected-resource"):
                return self.reply(200, {"resource": PRM_RESOURCE or base + "/mcp", "authorization_servers": [base]})
            if url.path.startswith("/.well-known/oauth-authorization-server"):
                return self.reply(200, {
                    "issuer": base,
                    "authorization_endpoint": base + "/authorize",
                    "token_endpoint": base + "/token",
                    "registration_endpoint": base + "/register",
                    "revocation_endpoint": base + "/revoke",
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                })
            if url.path == "/authorize":
                q = {k: v[0] for k, v in parse_qs(url.query).items()}
                client = q.get("client_id")
                redirect = q.get("redirect_uri")
                if client not in oauth.clients or redirect not in oauth.clients[client]:
                    return self.reply(400, {"error": "invalid_request"})
                if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
                    return self.reply(400, {"error": "invalid_request", "error_description": "PKCE S256 required"})
                code = oauth.new("code")
                oauth.codes[code] = (client, q["code_challenge"], redirect)
                oauth_log({"event": "authorize", "client_id": client, "resource": q.get("resource")})
                location = redirect + "?" + urlencode({"code": code, "state": q.get("state", "")})
                return self.reply(302, headers=[("Location", location)])
            return self.reply(404, {"error": "not found"})

        def oauth_post(self, url):
            if url.path == "/register":
                meta = json.loads(self.body() or b"{}")
                client = oauth.new("client")
                oauth.clients[client] = meta.get("redirect_uris", [])
                oauth_log({"event": "register", "client_id": client, "client_name": meta.get("client_name")})
                return self.reply(201, dict(meta, client_id=client))
            if url.path == "/revoke":
                form = {k: v[0] for k, v in parse_qs(self.body().decode()).items()}
                token = form.get("token")
                oauth.refresh.pop(token, None)
                oauth.access.pop(token, None)
                oauth_log({"event": "revoke", "token": token, "hint": form.get("token_type_hint")})
                return self.reply(200)
            if url.path == "/token":
                form = {k: v[0] for k, v in parse_qs(self.body().decode()).items()}
                if TOKEN_GARBAGE:
                    return self.reply(200, b"<html>surprise</html>", "text/html")
                if form.get("grant_type") == "authorization_code":
                    entry = oauth.codes.pop(form.get("code"), None)
                    if entry is None or entry[2] != form.get("redirect_uri") or entry[0] != form.get("client_id"):
                        return self.reply(400, {"error": "invalid_grant"})
                    if not pkce_ok(form.get("code_verifier", ""), entry[1]):
                        oauth_log({"event": "pkce_failed"})
                        return self.reply(400, {"error": "invalid_grant", "error_description": "PKCE"})
                    tokens = oauth.grant(entry[0])
                    oauth_log({"event": "token", "access_token": tokens["access_token"], "resource": form.get("resource")})
                    return self.reply(200, tokens)
                if form.get("grant_type") == "refresh_token":
                    client = oauth.refresh.pop(form.get("refresh_token"), None)
                    if REJECT_REFRESH or client is None:
                        oauth_log({"event": "refresh_rejected"})
                        return self.reply(400, {"error": "invalid_grant"})
                    tokens = oauth.grant(client)
                    oauth_log({"event": "refresh", "access_token": tokens["access_token"]})
                    return self.reply(200, tokens)
                return self.reply(400, {"error": "unsupported_grant_type"})
            return None

        def authorized(self):
            """Is the request's bearer token one this server issued, unexpired?"""
            header = self.headers.get("Authorization") or ""
            token = header[len("Bearer "):] if header.startswith("Bearer ") else None
            ok = token in oauth.access and oauth.access[token] > time.time()
            oauth_log({"event": "mcp", "token": token, "ok": ok})
            if not ok:
                challenge = 'Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"' % self.base()
                self.reply(401, {"error": "invalid_token"}, headers=[("WWW-Authenticate", challenge)])
            return ok

        def do_POST(self):
            if OAUTH:
                url = urlparse(self.path)
                if url.path != "/mcp":
                    if not self.oauth_post(url):
                        self.reply(404, {"error": "not found"})
                    return
            # The body is read before any answer (a 401 too): the connection stays usable.
            raw = self.body()
            if OAUTH and not self.authorized():
                return
            message = json.loads(raw or b"{}")
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
            if OAUTH:
                url = urlparse(self.path)
                if url.path != "/mcp":
                    return self.oauth_get(url)
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
