"""An editor, as an ACP client on the official Python SDK (agent-client-protocol
on PyPI), for tests/integration/acp.rs. It starts `tandem acp`, holds unsaved buffers
(what fs/read_text_file returns), lets the "user" type between two reads,
answers permission questions from a list, can cancel a prompt once a shell
command starts, and can load a saved session instead of starting one.

Every line Tandem writes is validated against the SDK's schema models before
the SDK sees it, and against the vendored ACP JSON Schema (tests/acp/schema,
with the `jsonschema` package) when the scenario names it (`schema`);
problems are reported, not raised.

Usage: editor_client.py SCENARIO_JSON -- prints one JSON object (the report).
"""

import asyncio
import json
import sys

from pydantic import TypeAdapter, ValidationError

import acp
from acp import schema

# What each message Tandem may send must look like, by method.
class Union:
    """A union of SDK models, checked as one."""

    def __init__(self, union):
        self.adapter = TypeAdapter(union)

    def model_validate(self, value):
        return self.adapter.validate_python(value)


AGENT_REQUESTS = {
    "elicitation/create": Union(schema.CreateElicitationRequest),
    "session/request_permission": schema.RequestPermissionRequest,
    "fs/read_text_file": schema.ReadTextFileRequest,
    "fs/write_text_file": schema.WriteTextFileRequest,
}
AGENT_NOTIFICATIONS = {"session/update": schema.SessionNotification}
RESPONSES = {
    "initialize": schema.InitializeResponse,
    "session/new": schema.NewSessionResponse,
    "session/load": schema.LoadSessionResponse,
    "session/prompt": schema.PromptResponse,
    "session/set_mode": schema.SetSessionModeResponse,
    "session/list": schema.ListSessionsResponse,
}


class SpecSchema:
    """The protocol's own JSON Schema (tests/acp/schema/schema.json): each
    message's params or result against the definition its method names
    (`x-method`, and `x-side`: who serves it)."""

    def __init__(self, folder):
        import jsonschema

        with open(f"{folder}/schema.json", encoding="utf-8") as file:
            self.document = json.load(file)
        self.jsonschema = jsonschema
        self.checked = 0

    def definition(self, side, method, suffix):
        for name, definition in self.document["$defs"].items():
            if definition.get("x-side") == side and definition.get("x-method") == method and name.endswith(suffix):
                return name
        return None

    def check(self, side, method, suffix, value):
        """A list of problems (empty: valid)."""
        name = self.definition(side, method, suffix)
        if name is None:
            return [f"{method}: no {suffix} of it in the ACP schema"]
        schema = {"$ref": f"#/$defs/{name}", "$defs": self.document["$defs"]}
        validator = self.jsonschema.Draft202012Validator(schema)
        self.checked += 1
        return [f"{method} ({name}): {error.message} at {list(error.absolute_path)}" for error in validator.iter_errors(value)]


class RecordingWriter(asyncio.StreamWriter):
    """The agent's stdin, remembering which method each request id is."""

    def __init__(self, writer, sent_methods):
        super().__init__(writer.transport, writer._protocol, None, asyncio.get_running_loop())
        self.sent_methods = sent_methods

    def write(self, data):
        for line in data.splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "method" in message and "id" in message:
                self.sent_methods[message["id"]] = message["method"]
        super().write(data)


class Relay:
    """Sits between the agent's stdout and the SDK, validating what the agent sends."""

    def __init__(self, process, spec=None):
        self.process = process
        self.spec = spec
        self.spec_invalid = []
        self.reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        self.sent_methods = {}
        self.writer = RecordingWriter(process.stdin, self.sent_methods)
        self.invalid = []
        self.seen = 0

    def validate(self, line):
        self.seen += 1
        try:
            message = json.loads(line)
        except ValueError as err:
            self.invalid.append(f"not JSON: {err}: {line[:200]!r}")
            return
        if message.get("jsonrpc") != "2.0":
            self.invalid.append(f"not JSON-RPC 2.0: {line[:200]}")
        method = message.get("method")
        if self.spec is not None:
            self.check_spec(message, method)
        try:
            if method is not None and "id" in message:
                model = AGENT_REQUESTS.get(method)
                if model is None:
                    self.invalid.append(f"unexpected request {method}")
                else:
                    model.model_validate(message.get("params"))
            elif method == "$/cancel_request":
                # ACP's request cancellation: the agent withdraws a request
                # of its own (a question, when the prompt was cancelled).
                if not isinstance((message.get("params") or {}).get("requestId"), (int, str)):
                    self.invalid.append(f"malformed $/cancel_request: {line[:200]}")
            elif method is not None:
                model = AGENT_NOTIFICATIONS.get(method)
                if model is None:
                    self.invalid.append(f"unexpected notification {method}")
                else:
                    model.model_validate(message.get("params"))
            elif "error" in message:
                error = message["error"]
                if not isinstance(error.get("code"), int) or not isinstance(error.get("message"), str):
                    self.invalid.append(f"malformed error: {line[:200]}")
            else:
                sent = self.sent_methods.get(message.get("id"))
                model = RESPONSES.get(sent)
                if model is not None:
                    model.model_validate(message.get("result"))
                elif sent is None and "result" in message and not isinstance(message.get("id"), (int, str)):
                    self.invalid.append(f"response without a request: {line[:200]}")
        except ValidationError as err:
            self.invalid.append(f"{method or 'response to ' + str(self.sent_methods.get(message.get('id')))}: {err}")

    def check_spec(self, message, method):
        if method is not None and "id" in message:
            self.spec_invalid += self.spec.check("client", method, "Request", message.get("params"))
        elif method == "$/cancel_request":
            self.spec_invalid += self.spec.check("protocol", method, "Notification", message.get("params"))
        elif method is not None:
            self.spec_invalid += self.spec.check("client", method, "Notification", message.get("params"))
        elif "result" in message:
            sent = self.sent_methods.get(message.get("id"))
            if sent is not None:
                self.spec_invalid += self.spec.check("agent", sent, "Response", message.get("result"))

    async def pump(self):
        while True:
            line = await self.process.stdout.readline()
            if not line:
                self.reader.feed_eof()
                return
            self.validate(line.decode("utf-8", "replace"))
            self.reader.feed_data(line)


class Editor(acp.Client):
    def __init__(self, scenario):
        self.buffers = dict(scenario.get("buffers", {}))
        self.type_on_read = scenario.get("type_on_read", {})
        self.answers = list(scenario.get("answers", []))
        self.cancel_on_execute = scenario.get("cancel_on_execute", False)
        self.fail_writes = scenario.get("fail_writes", False)
        self.form_answers = list(scenario.get("form_answers", []))
        self.forms = []
        self.reads = []
        self.writes = []
        self.asks = []
        self.updates = []
        self.conn = None
        self.session_id = None
        self.cancelled = False

    def on_connect(self, conn):
        self.conn = conn

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.reads.append(path)
        typing = self.type_on_read.get(path)
        # The user types while the agent works: before the agent's Nth read.
        if typing and self.reads.count(path) == typing["at"]:
            self.buffers[path] = typing["text"]
        if path in self.buffers:
            text = self.buffers[path]
        else:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id, path, content, **kwargs):
        if self.fail_writes:
            raise acp.RequestError(-32603, "the disk is full")
        self.writes.append({"path": path, "content": content})
        self.buffers[path] = content
        return schema.WriteTextFileResponse()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        dumped = tool_call.model_dump(by_alias=True, exclude_none=True, mode="json")
        self.asks.append({"tool_call": dumped, "options": [o.option_id for o in options]})
        answer = self.answers.pop(0) if self.answers else "reject_once"
        # An answer with the user's words: {"option": ..., "meta": {...}},
        # the meta sent as the outcome's `_meta`.
        if isinstance(answer, dict):
            return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(option_id=answer["option"], outcome="selected", field_meta=answer.get("meta")))
        return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(option_id=answer, outcome="selected"))

    async def create_elicitation(self, message, mode, **kwargs):
        self.forms.append({"message": message, "mode": mode.model_dump(by_alias=True, exclude_none=True, mode="json")})
        answer = self.form_answers.pop(0) if self.form_answers else {"action": "cancel"}
        if answer == "fail":
            raise acp.RequestError(-32603, "the form cannot be shown")
        return TypeAdapter(schema.CreateElicitationResponse).validate_python(answer)

    async def session_update(self, session_id, update, **kwargs):
        dumped = update.model_dump(by_alias=True, exclude_none=True, mode="json")
        self.updates.append(dumped)
        if self.cancel_on_execute and dumped.get("sessionUpdate") == "tool_call" and dumped.get("kind") == "execute" and not self.cancelled:
            self.cancelled = True
            asyncio.get_running_loop().create_task(self.conn.cancel(session_id=session_id))

    async def ext_method(self, method, params):
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method, params):
        pass


async def main(scenario):
    process = await asyncio.create_subprocess_exec(
        *scenario["agent"], stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=scenario["cwd"]
    )
    relay = Relay(process, SpecSchema(scenario["schema"]) if scenario.get("schema") else None)
    pump = asyncio.get_running_loop().create_task(relay.pump())
    editor = Editor(scenario)
    # This SDK (0.12.1) predates elicitation's stabilisation in ACP v1 and
    # routes elicitation/create only with its unstable flag.
    conn = acp.connect_to_agent(editor, relay.writer, relay.reader, use_unstable_protocol=bool(scenario.get("forms")))
    report = {"stop_reasons": [], "errors": []}
    try:
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True),
                elicitation=schema.ElicitationCapabilities(form=schema.ElicitationFormCapabilities()) if scenario.get("forms") else None,
            ),
            client_info=schema.Implementation(name="tandem-test-editor", version="1"),
        )
        report["load_session"] = init.agent_capabilities.load_session
        report["agent_capabilities"] = init.agent_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")
        # Sessions the agent must refuse (their additionalDirectories): each error, in order.
        report["refused_sessions"] = []
        for directories in scenario.get("refused_directories", []):
            try:
                await conn.new_session(cwd=scenario["cwd"], additional_directories=directories, mcp_servers=[])
                report["refused_sessions"].append(None)
            except acp.RequestError as err:
                report["refused_sessions"].append(str(err))
        if scenario.get("load"):
            await conn.load_session(cwd=scenario["cwd"], session_id=scenario["load"], mcp_servers=[], additional_directories=scenario.get("additional_directories"))
            session_id = scenario["load"]
        else:
            session = await conn.new_session(cwd=scenario["cwd"], additional_directories=scenario.get("additional_directories"), mcp_servers=[])
            session_id = session.session_id
            report["modes"] = [m.id for m in session.modes.available_modes] if session.modes else []
            report["config_options"] = [option.model_dump(by_alias=True, exclude_none=True) for option in session.config_options or []]
        editor.session_id = session_id
        report["session_id"] = session_id
        if scenario.get("mode"):
            await conn.set_session_mode(session_id=session_id, mode_id=scenario["mode"])
        report["set_config"] = []
        for config_id, value in scenario.get("config", []):
            try:
                answer = await conn.set_config_option(config_id=config_id, session_id=session_id, value=value)
                report["set_config"].append([option.model_dump(by_alias=True, exclude_none=True) for option in answer.config_options])
            except acp.RequestError as err:
                report["set_config"].append(str(err))
        for prompt in scenario.get("prompts", []):
            try:
                blocks = [acp.text_block(prompt)]
                # `image`: {"data": base64, "mimeType": ...}, after each prompt's text.
                if scenario.get("image"):
                    blocks.append(acp.image_block(scenario["image"]["data"], scenario["image"]["mimeType"]))
                response = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=blocks), 60)
                report["stop_reasons"].append(response.stop_reason)
            except acp.RequestError as err:
                report["errors"].append(str(err))
    finally:
        await conn.close()
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except asyncio.TimeoutError:
            process.kill()
            report["errors"].append("tandem acp did not exit after stdin closed")
        await pump
    report.update(
        reads=editor.reads,
        writes=editor.writes,
        asks=editor.asks,
        forms=editor.forms,
        updates=editor.updates,
        buffers=editor.buffers,
        invalid=relay.invalid,
        messages_validated=relay.seen,
        spec_invalid=relay.spec_invalid,
        spec_checked=relay.spec.checked if relay.spec else 0,
        exit_code=process.returncode,
    )
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
