// A streamable HTTP MCP server for the connection tests. The first POSTs are answered with the
// statuses in FAIL_WITH (comma-separated, e.g. "503,429"); after that it answers initialize,
// notifications, ping and tools/list (one tool, `echo`) as plain JSON. It prints its port.
const http = require('http');
const failures = (process.env.FAIL_WITH || '').split(',').filter(Boolean).map(Number);
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    if (req.method !== 'POST') {
      res.writeHead(405);
      return res.end();
    }
    const failure = failures.shift();
    if (failure) {
      process.stderr.write(`answered ${failure}\n`);
      res.writeHead(failure, { 'content-type': 'text/plain' });
      return res.end('not now');
    }
    const msg = JSON.parse(body);
    if (msg.id === undefined) {
      res.writeHead(202);
      return res.end();
    }
    const results = {
      initialize: () => ({
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'http-fixture', version: '1.0.0' },
        instructions: 'A fixture over HTTP.',
      }),
      'tools/list': () => ({ tools: [{ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' } }] }),
      ping: () => ({}),
    };
    const answer = results[msg.method]
      ? { jsonrpc: '2.0', id: msg.id, result: results[msg.method]() }
      : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `no ${msg.method}` } };
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'fixture-session' });
    res.end(JSON.stringify(answer));
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
