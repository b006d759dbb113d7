// A loopback Anthropic Messages API for tests/vscode/e2e.js: the panel's
// steps need a model whose stream the test paces (text shown before the run
// ends, a Stop mid-stream, a reload mid-run), which the scripted provider,
// answering each turn at once, cannot give. Each POST /v1/messages takes
// the next turn the test queued and streams it as Anthropic's SSE does;
// a turn's `gate` step holds the stream open until the test opens the gate,
// so the test waits on what the window shows, never on a clock.
'use strict';

const http = require('http');

/** A promise with its resolve, for a test to open a gate. */
function gate() {
  let open;
  const promise = new Promise((resolve) => (open = resolve));
  return { promise, open };
}

class MockModel {
  constructor() {
    this.turns = [];
    /** Every request body, in order. */
    this.requests = [];
    this.waiting = [];
  }

  /** Listen on 127.0.0.1 on a port the OS picks; resolves to the base URL. */
  start() {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${this.server.address().port}`));
    });
  }

  close() {
    this.server?.closeAllConnections?.();
    this.server?.close();
  }

  /**
   * Queue a turn: steps of `{text}` (a text delta), `{gate}` (wait until the
   * gate opens) and `{tool: {name, input}}` (a tool call).
   */
  queue(...steps) {
    this.turns.push(steps);
  }

  /** Drop the turns queued and not asked for (a cancelled run's). */
  clear() {
    this.turns = [];
  }

  /** Resolves with the body of request number `n` (1-based) once it came. */
  request(n) {
    if (this.requests.length >= n) return Promise.resolve(this.requests[n - 1]);
    return new Promise((resolve) => this.waiting.push({ n, resolve }));
  }

  async handle(req, res) {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (req.method !== 'POST' || !req.url.startsWith('/v1/messages')) {
      res.writeHead(404).end();
      return;
    }
    const parsed = JSON.parse(body);
    this.requests.push(parsed);
    for (const w of this.waiting.filter((w) => w.n <= this.requests.length)) w.resolve(this.requests[w.n - 1]);
    this.waiting = this.waiting.filter((w) => w.n > this.requests.length);
    const steps = this.turns.shift();
    if (!steps) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'the mock model has no turn queued' } }));
      return;
    }
    let closed = false;
    res.on('close', () => (closed = true));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (type, data) => {
      if (!closed) res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    };
    send('message_start', {
      message: { id: `msg_${this.requests.length}`, type: 'message', role: 'assistant', model: parsed.model, content: [], stop_reason: null, usage: { input_tokens: 100, output_tokens: 1 } },
    });
    let index = -1;
    let textOpen = false;
    let tools = 0;
    for (const step of steps) {
      if (closed) return;
      if (step.gate) {
        await step.gate;
        continue;
      }
      if (step.text !== undefined) {
        if (!textOpen) {
          index++;
          send('content_block_start', { index, content_block: { type: 'text', text: '' } });
          textOpen = true;
        }
        send('content_block_delta', { index, delta: { type: 'text_delta', text: step.text } });
        continue;
      }
      if (step.tool) {
        if (textOpen) send('content_block_stop', { index });
        textOpen = false;
        index++;
        tools++;
        const id = `toolu_mock_${this.requests.length}_${tools}`;
        send('content_block_start', { index, content_block: { type: 'tool_use', id, name: step.tool.name, input: {} } });
        send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(step.tool.input) } });
        send('content_block_stop', { index });
      }
    }
    if (textOpen) send('content_block_stop', { index });
    send('message_delta', { delta: { stop_reason: tools > 0 ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } });
    send('message_stop', {});
    if (!closed) res.end();
  }
}

module.exports = { MockModel, gate };
