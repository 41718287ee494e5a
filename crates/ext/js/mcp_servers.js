// Extensions' MCP servers (`pi.registerMcpServer`): registrations for this session only, which
// the built-in MCP support connects. Those made while an extension loads reach the session with
// the registry at start-up (connected with the `mcp.json` servers); later ones go to the session
// at once, as the whole list, which it reconciles and announces (`mcp_servers_change`).
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const { kc, op, SessionOp } = internal;

  // name → { ext, name, config }, in registration order.
  const servers = new Map();

  // Every registration (a failed load drops its own, a restart all of them).
  const specs = () =>
    [...servers.values()].map((entry) => ({ name: entry.name, config: entry.config, extensionPath: entry.ext.path }));

  // The config as JSON: functions and other values JSON cannot carry are an error here rather
  // than a silently different server.
  function plain(name, config) {
    if (!config || typeof config !== "object" || Array.isArray(config))
      throw new TypeError(`registerMcpServer("${name}"): config must be an object`);
    let text;
    try {
      text = JSON.stringify(config);
    } catch (e) {
      throw new TypeError(`registerMcpServer("${name}"): config must be plain JSON (${e.message})`);
    }
    return JSON.parse(text);
  }

  function announce(ext) {
    if (ext.state === "loading") return;
    internal.session(SessionOp.mcpServersChanged, { servers: specs() });
  }

  internal.registerMcpServer = function (ext, name, config) {
    if (typeof name !== "string") throw new TypeError("registerMcpServer: name must be a string");
    const owner = servers.get(name);
    if (owner && owner.ext.path !== ext.path)
      throw new Error(`MCP server "${name}" is already registered by ${owner.ext.path}`);
    const json = plain(name, config);
    // The `mcp.json` entry rules, checked by the code that reads the files.
    op(kc.checkMcpServer(name, JSON.stringify(json)));
    // A name registered again keeps its place (registration order).
    servers.set(name, { ext, name, config: json });
    announce(ext);
  };

  internal.unregisterMcpServer = function (ext, name) {
    const owner = servers.get(name);
    if (!owner || owner.ext.path !== ext.path) return;
    servers.delete(name);
    announce(ext);
  };

  internal.mcpServerSpecs = specs;
  // A failed load takes its registrations with it; a restart (reload, new session) starts over.
  internal.dropMcpServers = (ext) => {
    for (const [name, entry] of [...servers]) if (entry.ext === ext) servers.delete(name);
  };
  internal.resetMcpServers = () => servers.clear();
})(globalThis);
