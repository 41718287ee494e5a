// The tool factories of `@knightcodeai/cli` (`createReadTool(cwd, options)`, …, and the
// `create*ToolDefinition` forms): the tools run our built-in tools through the
// `builtinTool` op (`src/tools.rs`), with the model-facing name, description and schema of
// ours. Custom `operations` stay here and are called back per file or command; a bash
// `spawnHook` runs here just before the command is handed over.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const op = internal.op;
  const cli = internal.hostModule("cli");
  const calls = (internal.extraCalls = internal.extraCalls || {});

  const operationSets = new Map(); // handle -> operations object
  const execs = new Map(); // sink -> AbortController of a running `exec` operation
  const partials = new Map(); // run -> the caller's onUpdate
  let nextHandle = 0;
  let nextRun = 0;
  const definitions = new Map();
  function definitionOf(name) {
    if (!definitions.has(name)) definitions.set(name, op(kc.builtinToolDefinition(name)));
    return definitions.get(name);
  }
  const toBase64 = (data) => (typeof data === "string" ? Buffer.from(data) : Buffer.from(data)).toString("base64");

  function make(name, cwd, options) {
    const d = definitionOf(name);
    const o = options || {};
    const operations = o.operations;
    let handle;
    let methods = [];
    if (operations && typeof operations === "object") {
      handle = ++nextHandle;
      operationSets.set(handle, operations);
      methods = Object.keys(operations).filter((k) => typeof operations[k] === "function");
    }
    async function execute(toolCallId, params, signal, onUpdate) {
      let spawn;
      if (name === "bash" && typeof o.spawnHook === "function") {
        spawn = await o.spawnHook({ command: params && params.command, cwd, env: Object.assign({}, g.process.env) });
      }
      const run = ++nextRun;
      // Partial results go to the `onUpdate` the caller passed (none: they are dropped).
      const jsUpdates = typeof onUpdate === "function";
      if (jsUpdates) partials.set(run, onUpdate);
      const abort = () => kc.builtinToolAbort(run);
      if (signal && signal.aborted) throw new Error("Operation aborted");
      if (signal) signal.addEventListener("abort", abort);
      try {
        const shell =
          name === "bash"
            ? { shellPath: o.shellPath, commandPrefix: o.commandPrefix }
            : name === "read"
              ? { autoResizeImages: o.autoResizeImages !== false }
              : {};
        const r = op(
          await kc.builtinTool(
            JSON.stringify(
              Object.assign(
                {
                  name,
                  cwd: cwd || g.process.cwd(),
                  toolCallId,
                  params,
                  spawn,
                  operations: handle,
                  methods,
                  run,
                  jsUpdates,
                },
                shell,
              ),
            ),
          ),
        );
        const out = { content: r.content, details: r.details === null ? undefined : r.details };
        if (r.structuredContent !== null && r.structuredContent !== undefined)
          out.structuredContent = r.structuredContent;
        if (r.isError) out.isError = true;
        return out;
      } finally {
        partials.delete(run);
        if (signal) signal.removeEventListener("abort", abort);
      }
    }
    const tool = {
      name: d.name,
      label: d.label,
      description: d.description,
      parameters: d.parameters,
      promptSnippet: d.promptSnippet || undefined,
      promptGuidelines: d.promptGuidelines && d.promptGuidelines.length ? d.promptGuidelines : undefined,
      outputSchema: d.outputSchema || undefined,
      execute,
    };
    // Marks a tool that is ours, so hosts can tell it from an extension's own.
    Object.defineProperty(tool, Symbol.for("knightcode.builtinTool"), { value: name, enumerable: false });
    return tool;
  }

  // A partial result of a running factory tool (`src/tools.rs`), for its caller's onUpdate.
  calls.toolPartial = function ({ run, partial }) {
    const onUpdate = partials.get(run);
    if (onUpdate) {
      try {
        onUpdate({ content: partial.content, details: partial.details === null ? undefined : partial.details });
      } catch (e) {
        internal.reportUncaught(e);
      }
    }
    return null;
  };

  calls.toolOp = async function ({ handle, method, args }) {
    const operations = operationSets.get(handle);
    if (!operations) throw new Error("unknown tool operations");
    switch (method) {
      case "readFile":
        return toBase64(await operations.readFile(args[0]));
      case "writeFile":
        await operations.writeFile(args[0], args[1]);
        return null;
      case "access":
        await operations.access(args[0]);
        return null;
      case "mkdir":
        await operations.mkdir(args[0]);
        return null;
      case "stat": {
        const s = await operations.stat(args[0]);
        const flag = (v) => (typeof v === "function" ? v.call(s) : !!v);
        return { isDirectory: flag(s.isDirectory), isFile: flag(s.isFile), size: s.size || 0 };
      }
      case "readdir":
        return (await operations.readdir(args[0])).map((e) => (typeof e === "string" ? e : e.name));
      case "isDirectory":
        return !!(await operations.isDirectory(args[0]));
      case "exists":
        return !!(await operations.exists(args[0]));
      case "glob":
        return Array.from(await operations.glob(args[0], args[1], args[2]), String);
      case "exec": {
        const controller = new AbortController();
        execs.set(args.sink, controller);
        try {
          const r = await operations.exec(args.command, args.cwd, {
            onData: (data) => kc.toolOpData(args.sink, toBase64(data)),
            signal: controller.signal,
            timeout: args.timeout === null ? undefined : args.timeout,
            env: args.env,
          });
          return { exitCode: r && r.exitCode !== undefined ? r.exitCode : null };
        } finally {
          execs.delete(args.sink);
        }
      }
      case "abort": {
        const c = execs.get(args.sink);
        if (c) c.abort();
        return null;
      }
      default:
        throw new Error(`unknown tool operation ${method}`);
    }
  };

  // `pi.getAllTools()`: the session's built-in tools (those no extension replaced), then
  // the extensions' own, with pi's source info.
  const BUILTIN = ["read", "bash", "powershell", "edit", "write", "grep", "find", "ls", "webfetch", "websearch"];
  const synthetic = (path, source, baseDir) => ({ path, source, scope: "temporary", origin: "top-level", baseDir });
  internal.allTools = function (registered) {
    const names = new Set(registered.map((t) => t.def.name));
    const builtins = BUILTIN.filter((n) => !names.has(n)).map((n) => {
      const d = definitionOf(n);
      return {
        name: d.name,
        description: d.description,
        parameters: d.parameters,
        promptGuidelines: d.promptGuidelines && d.promptGuidelines.length ? d.promptGuidelines : undefined,
        exposure: "direct",
        sourceInfo: synthetic(`<builtin:${n}>`, "builtin"),
      };
    });
    const own = registered.map(({ ext, def }) => ({
      name: def.name,
      description: def.description,
      parameters: def.parameters,
      promptGuidelines: def.promptGuidelines,
      exposure: def.exposure || "direct",
      namespace: def.namespace,
      annotations: def.annotations ? Object.assign({}, def.annotations) : undefined,
      reachesTools: typeof def.reachesTools === "function" ? def.reachesTools.bind(def) : undefined,
      sourceInfo: synthetic(ext.path, "local", internal.dirname(ext.path)),
    }));
    return builtins.concat(own);
  };

  const factories = {};
  for (const [tool, name] of [
    ["Read", "read"],
    ["Bash", "bash"],
    ["Edit", "edit"],
    ["Write", "write"],
    ["Grep", "grep"],
    ["Find", "find"],
    ["Ls", "ls"],
  ]) {
    factories[`create${tool}Tool`] = (cwd, options) => make(name, cwd, options);
    factories[`create${tool}ToolDefinition`] = (cwd, options) => make(name, cwd, options);
  }
  Object.assign(cli, factories);
})(globalThis);
