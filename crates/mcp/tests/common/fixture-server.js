// The MCP fixture server of the tests (knightcode-mcp's and knightcode-cli's): see
// SERVER_JS in crates/mcp/tests/common/mod.rs for its tools.
const readline = require('readline');
const rl = readline.createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const tool = (name, description) => ({ name, description, inputSchema: { type: 'object', properties: { message: { type: 'string' } } } });
const pending = new Map();
let next = 1;
const ask = (method, params) => new Promise((resolve) => {
  const id = 'fixture-' + next++;
  pending.set(id, resolve);
  send({ jsonrpc: '2.0', id, method, params });
});
const result = (text) => ({ content: [{ type: 'text', text }] });
let shrunk = false;
const added = [];
const listed = (names) => names.filter((n) => !(shrunk && n === 'crash'));
process.stderr.write('fixture server started\n');
rl.on('line', async (line) => {
  const msg = JSON.parse(line);
  if (msg.id !== undefined && !msg.method) {
    const resolve = pending.get(msg.id);
    pending.delete(msg.id);
    if (resolve) resolve(msg.result);
    return;
  }
  const reply = (r) => send({ jsonrpc: '2.0', id: msg.id, result: r });
  switch (msg.method) {
    case 'initialize': {
      // FIXTURE_RESOURCES=1 offers resources too.
      const capabilities = { tools: { listChanged: true } };
      if (process.env.FIXTURE_RESOURCES) capabilities.resources = { listChanged: true };
      return reply({ protocolVersion: msg.params.protocolVersion, capabilities, serverInfo: { name: 'fixture', version: '1.0.0' } });
    }
    case 'resources/list':
      return reply({ resources: [
        { uri: 'fixture://notes', name: 'notes', mimeType: 'text/plain', description: 'The fixture notes' },
        { uri: 'fixture://data.bin', name: 'data', mimeType: 'application/octet-stream' },
      ].concat(added.map((name) => ({ uri: 'fixture://' + name, name }))) });
    case 'resources/templates/list':
      return reply({ resourceTemplates: [{ uriTemplate: 'fixture://item/{id}', name: 'item' }]
        .concat(added.map((name) => ({ uriTemplate: 'fixture://' + name + '/{id}', name }))) });
    case 'resources/read': {
      const uri = msg.params.uri;
      // Reading `fixture://add/<name>` adds a resource and a template quietly;
      // `fixture://announce` says `resources/list_changed`.
      if (uri.startsWith('fixture://add/')) {
        added.push(uri.slice('fixture://add/'.length));
        return reply({ contents: [{ uri, mimeType: 'text/plain', text: 'added' }] });
      }
      if (uri === 'fixture://announce') {
        send({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
        return reply({ contents: [{ uri, mimeType: 'text/plain', text: 'announced' }] });
      }
      if (uri === 'fixture://data.bin') return reply({ contents: [{ uri, mimeType: 'application/octet-stream', blob: Buffer.from([0, 1, 2, 3]).toString('base64') }] });
      if (uri === 'fixture://notes') return reply({ contents: [{ uri, mimeType: 'text/plain', text: 'Notes of the fixture' }] });
      return send({ jsonrpc: '2.0', id: msg.id, error: { code: -32002, message: 'Resource not found: ' + uri } });
    }
    case 'notifications/initialized':
      // FIXTURE_LOG=1 logs two messages once initialized (the second on two lines).
      if (process.env.FIXTURE_LOG) {
        send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'boot', data: 'ready' } });
        send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', data: { disk: 'low' } } });
        send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'first\nsecond' } });
      }
      return;
    case 'tools/list':
      if (!msg.params || !msg.params.cursor) {
        const first = { echo: 'Echoes the message back', crash: 'Exits mid-call' };
        // FIXTURE_EXTRA_TOOLS=N adds N more tools (extra_1 … extra_N), for tests of many tools.
        const extra = Array.from({ length: Number(process.env.FIXTURE_EXTRA_TOOLS || 0) }, (_, i) =>
          tool('extra_' + (i + 1), 'Extra fixture tool number ' + (i + 1) + ' of a large catalog'));
        return reply({ tools: listed(Object.keys(first)).map((n) => tool(n, first[n])).concat(extra), nextCursor: 'page-2' });
      }
      return reply({ tools: listed(['hang', 'progress', 'roots', 'fail', 'big', 'shrink', 'upper']).map((n) => tool(n, 'Fixture tool ' + n)) });
    case 'tools/call': {
      const args = msg.params.arguments || {};
      const token = msg.params._meta && msg.params._meta.progressToken;
      switch (msg.params.name) {
        case 'echo': return reply(result('echo: ' + args.message));
        case 'upper': return reply(result(String(args.message).toUpperCase()));
        case 'crash':
          process.stderr.write('fixture: crashing on purpose\n');
          return process.exit(3);
        case 'hang': return;
        case 'progress':
          for (let i = 1; i <= args.steps; i++) {
            await new Promise((r) => setTimeout(r, args.ms));
            send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i, total: args.steps } });
          }
          return reply(result('done after ' + args.steps + ' steps'));
        case 'roots': {
          const answer = await ask('roots/list', {});
          return reply(result(JSON.stringify(answer.roots)));
        }
        case 'fail': return reply({ content: [], isError: true });
        case 'big': return reply(result('x'.repeat(60000)));
        case 'shrink':
          shrunk = true;
          send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
          return reply(result('crash withdrawn'));
        default: return send({ jsonrpc: '2.0', id: msg.id, error: { code: -32602, message: 'unknown tool' } });
      }
    }
    default:
      if (msg.id !== undefined) send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'method not found' } });
  }
});
