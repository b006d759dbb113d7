// A loopback OpenAI-compatible chat completions API (what Ollama, llama.cpp,
// vLLM and LM Studio serve) for tests/vscode/local_model.js: every POST to
// .../chat/completions is recorded and answered with one streamed text turn
// in the chunk format those servers send.
'use strict';

const http = require('http');

class OpenAiMock {
  constructor(text) {
    this.text = text;
    /** Every request: its path and body. */
    this.requests = [];
  }

  /** Listen on 127.0.0.1 on a port the OS picks; resolves to the base URL. */
  start() {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
          res.writeHead(404).end();
          return;
        }
        let parsed = {};
        try {
          parsed = JSON.parse(body);
        } catch {
          // Recorded as it came; the test looks at it.
        }
        this.requests.push({ path: req.url, body: parsed, headers: req.headers });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta, finish) =>
          `data: ${JSON.stringify({ id: 'chatcmpl-local', object: 'chat.completion.chunk', model: parsed.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.write(chunk({ role: 'assistant', content: this.text }, null));
        res.write(chunk({}, 'stop'));
        res.end('data: [DONE]\n\n');
      });
    });
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${this.server.address().port}`));
    });
  }

  close() {
    this.server?.closeAllConnections?.();
    this.server?.close();
  }
}

module.exports = { OpenAiMock };
