// The extension API: one `ExtensionAPI` per extension, handler tables, tools, commands,
// and the entry points Rust calls through `__kc_call` (load, dispatch, executeTool,
// command, abort). Every entry point resolves to `{"ok": …}` or `{"error": …}`. How an
// event's results compose is dispatch.js; `ctx.ui` per front end is ctx_ui.js. Evaluated last.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const op = internal.op;
  const extensions = [];
  const tools = new Map();
  const commands = new Map();
  const flags = new Map();
  // Keyboard shortcuts by key id, in load order (a later one replaces an earlier).
  const shortcuts = new Map();
  const bus = internal.hostModule("cli").createEventBus();
  const running = new Map();
  let settings = { cwd: g.process.cwd(), mode: "print", flags: {} };
  const NOT_BOUND = "Extension runtime not initialized. Action methods cannot be called during extension loading.";
  // Errors no call returns (a throwing timer or event-bus callback) are reported at once.
  internal.reportUncaught = (e) => {
    kc.reportUncaught(
      JSON.stringify({ extensionPath: "<unknown>", event: "uncaught", error: message(e), stack: stackOf(e) }),
    );
  };

  // QuickJS throws `null` when it cannot even allocate the "out of memory" error.
  const message = (e) =>
    e === null
      ? "out of memory (or the extension threw null)"
      : e && typeof e === "object" && "message" in e
        ? String(e.message)
        : String(e);
  // Stacks point at the TypeScript lines, not the stripped code QuickJS ran.
  const stackOf = (e) => (e && typeof e === "object" && e.stack ? kc.mapStack(String(e.stack)) : undefined);
  const { SessionOp, session, sessionAsync } = internal;

  const { noUi, hostUi, terminalUi } = internal.contextUi(run);

  const sessionManager = {
    getEntries: () => session(SessionOp.getEntries),
    getBranch: (leafId) => session(SessionOp.getBranch, { leafId }),
    getEntry: (id) => session(SessionOp.getEntries).find((e) => e.id === id),
    getLeafId: () => session(SessionOp.getLeafId),
    getLeafEntry: () => {
      const b = session(SessionOp.getBranch, {});
      return b[b.length - 1];
    },
    getSessionFile: () => session(SessionOp.getSessionFile),
    getSessionId: () => session(SessionOp.getSessionId),
    getSessionName: () => session(SessionOp.getSessionName),
    getCwd: () => settings.cwd,
    getHeader: () => session(SessionOp.getHeader),
    // The last `label` entry for the id wins; one without a label clears it (as pi's labelsById).
    getLabel: (id) => {
      let label;
      for (const e of session(SessionOp.getEntries))
        if (e.type === "label" && e.targetId === id) label = e.label || undefined;
      return label;
    },
  };

  const hasUI = () => {
    try {
      return session(SessionOp.hasUI) === true;
    } catch {
      return false;
    }
  };
  internal.toolDefinition = (name) => {
    const entry = tools.get(name);
    return entry ? entry.def : undefined;
  };

  // Session replacement and reload bump the generation: every ctx made before is stale.
  let generation = 0;
  const STALE =
    "This extension ctx is stale after session replacement or reload. Do not use a captured pi or command ctx " +
    "after ctx.newSession(), ctx.fork(), ctx.switchSession(), or ctx.reload(). For newSession, fork, and " +
    "switchSession, move post-replacement work into withSession and use the ctx passed to withSession. " +
    "For reload, do not use the old ctx after await ctx.reload().";
  const guard = (target, gen) =>
    new Proxy(target, {
      get(t, key, receiver) {
        if (gen !== generation && typeof key === "string" && key !== "then") throw new Error(STALE);
        return Reflect.get(t, key, receiver);
      },
    });

  // The members of every ctx, made once: building the object literal (a closure per getter
  // and method) for each handler was most of an event's cost. A ctx is a fresh object with
  // these properties, so it looks as before (own enumerable members, in this order).
  const ctxMembers = Object.getOwnPropertyDescriptors({
    get ui() {
      return hasUI() ? (settings.mode === "tui" ? terminalUi : hostUi) : noUi;
    },
    get mode() {
      return settings.mode;
    },
    get hasUI() {
      return hasUI();
    },
    get cwd() {
      return settings.cwd;
    },
    get sessionManager() {
      return sessionManager;
    },
    get model() {
      try {
        return session(SessionOp.getModel);
      } catch {
        return undefined;
      }
    },
    get thinkingLevel() {
      try {
        return session(SessionOp.getThinkingLevel);
      } catch {
        return undefined;
      }
    },
    signal: undefined,
    modelRegistry: internal.modelRegistry,
    scopedModels: [],
    isIdle: () => session(SessionOp.isIdle),
    isProjectTrusted: () => session(SessionOp.isProjectTrusted),
    abort: () => {
      session(SessionOp.abort);
    },
    hasPendingMessages: () => session(SessionOp.hasPendingMessages),
    shutdown: () => session(SessionOp.shutdown),
    getContextUsage: () => session(SessionOp.getContextUsage) || undefined,
    compact(options) {
      const o = options || {};
      sessionAsync(SessionOp.compact, { customInstructions: o.customInstructions }).then(
        (result) => {
          if (typeof o.onComplete === "function") o.onComplete(result);
        },
        (e) => {
          if (typeof o.onError === "function") o.onError(e instanceof Error ? e : new Error(String(e)));
        },
      );
    },
    getSystemPrompt: () => session(SessionOp.getSystemPrompt),
  });
  function context(extra) {
    const ctx = Object.defineProperties({}, ctxMembers);
    ctx.scopedModels = [];
    if (extra && extra.signal) ctx.signal = extra.signal;
    // Descriptors, not values: a member getter (`ctx.tools`) stays lazy.
    if (extra && extra.members) Object.defineProperties(ctx, Object.getOwnPropertyDescriptors(extra.members));
    return guard(ctx, generation);
  }
  // Events: one ctx per generation, shared by every handler of every dispatch (the
  // reference makes one per event; nothing in it depends on the event).
  let eventCtx;
  let eventCtxGeneration = -1;
  function eventContext() {
    if (eventCtxGeneration !== generation) {
      eventCtx = context();
      eventCtxGeneration = generation;
    }
    return eventCtx;
  }
  internal.eventContext = eventContext;

  // `ctx.executeTool(name, args, {signal, onUpdate})` of a tool call: the agent loop runs it
  // (validation, tool_call/tool_result, events with parentToolCallId, the nestedCalls record)
  // and resolves the outcome `{toolCall, result, isError, durationMs?}`; never rejects for a
  // failing tool. The calling tool's abort aborts it; its own `signal` too.
  let nestedIds = 0;
  const nestedUpdates = new Map();
  function executeNested(parentToolCallId, name, args, options) {
    const o = options || {};
    const id = ++nestedIds;
    if (typeof o.onUpdate === "function") nestedUpdates.set(id, o.onUpdate);
    const request = {
      parentToolCallId,
      name,
      arguments: args === undefined ? {} : args,
      updates: nestedUpdates.has(id),
    };
    const pending = kc.executeNested(id, JSON.stringify(request)).then(op);
    const signal = o.signal;
    if (signal && typeof signal.addEventListener === "function") {
      const onAbort = () => kc.cancelNested(id);
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener("abort", onAbort, { once: true });
        const off = () => signal.removeEventListener("abort", onAbort);
        pending.then(off, off);
      }
    }
    const done = () => {
      nestedUpdates.delete(id);
    };
    pending.then(done, done);
    return pending;
  }
  const toolMembers = (toolCallId) => ({
    executeTool: (name, args, options) => executeNested(toolCallId, name, args, options),
    get tools() {
      return JSON.parse(kc.nestedTools(toolCallId));
    },
  });

  // A command handler's ctx: the session-control members on top of the event ctx.
  function commandContext() {
    const replaced = async (result, options) => {
      if (!result || result.cancelled) return { cancelled: !!(result && result.cancelled) };
      if (options && typeof options.withSession === "function") await options.withSession(commandContext());
      return { cancelled: false };
    };
    const members = {
      waitForIdle: () => sessionAsync(SessionOp.waitForIdle).then(() => {}),
      async newSession(options) {
        const o = options || {};
        const result = await sessionAsync(SessionOp.newSession, { parentSession: o.parentSession });
        if (result.cancelled) return { cancelled: true };
        if (typeof o.setup === "function") {
          // The new session, writable: what setup appends is the conversation's start.
          const writable = Object.assign({}, sessionManager, {
            appendMessage: (m) => session(SessionOp.appendMessage, { message: m }),
            appendCustomEntry: (customType, data) => {
              session(SessionOp.appendEntry, { customType, data });
            },
            appendCustomMessageEntry: (customType, content, display, details) => {
              session(SessionOp.appendCustomMessageEntry, { message: { customType, content, display, details } });
            },
          });
          await o.setup(writable);
          await sessionAsync(SessionOp.reloadContext);
        }
        return replaced(result, o);
      },
      async fork(entryId, options) {
        const o = options || {};
        return replaced(await sessionAsync(SessionOp.fork, { entryId, position: o.position || "before" }), o);
      },
      async switchSession(path, options) {
        return replaced(await sessionAsync(SessionOp.switchSession, { path }), options);
      },
      async navigateTree(targetId, options) {
        const o = options || {};
        const result = await sessionAsync(SessionOp.navigateTree, {
          targetId,
          summarize: !!o.summarize,
          customInstructions: o.customInstructions,
          replaceInstructions: o.replaceInstructions,
          label: o.label,
        });
        return { cancelled: !!(result && result.cancelled) };
      },
      reload: () => sessionAsync(SessionOp.reload).then(() => {}),
      // What the base system prompt is built from (as `before_agent_start`'s
      // `systemPromptOptions`); a copy, so changing it changes nothing.
      getSystemPromptOptions: () => session(SessionOp.getSystemPromptOptions) || { cwd: settings.cwd },
    };
    return context({ members });
  }

  function createAPI(ext) {
    const action =
      (name, fn) =>
      (...args) => {
        if (ext.state === "failed")
          throw new Error(`Extension "${ext.path}" failed to load and its API is no longer active.`);
        if (ext.state === "stale") throw new Error(STALE);
        if (ext.state === "loading") throw new Error(NOT_BOUND);
        return fn(...args);
      };
    return {
      on(event, handler) {
        if (typeof handler !== "function") throw new TypeError(`pi.on("${event}") needs a handler function`);
        if (!ext.handlers.has(event)) ext.handlers.set(event, []);
        const list = ext.handlers.get(event);
        list.push(handler);
        return () => {
          const i = list.indexOf(handler);
          if (i >= 0) list.splice(i, 1);
        };
      },
      registerTool(def) {
        if (!def || typeof def.name !== "string" || !def.name)
          throw new TypeError("registerTool needs a tool with a name");
        const p = def.parameters;
        if (!p || typeof p !== "object" || Array.isArray(p))
          throw new TypeError(`Tool "${def.name}": parameters must be an object schema`);
        if (typeof def.execute !== "function") throw new TypeError(`Tool "${def.name}" has no execute function`);
        const owner = tools.get(def.name);
        if (owner && owner.ext !== ext) {
          ext.diagnostics.push(`Tool "${def.name}" conflicts with ${owner.ext.path}`);
          return;
        }
        tools.set(def.name, { ext, def });
        // After loading, the session takes the tool up at once (from its next request).
        if (ext.state === "active") {
          try {
            session(SessionOp.refreshTools);
          } catch (_) {
            /* not bound yet */
          }
        }
      },
      registerCommand(name, options) {
        if (!options || typeof options.handler !== "function")
          throw new TypeError(`Command "${name}" needs a handler`);
        let key = name;
        for (let n = 1; commands.has(key) && commands.get(key).ext !== ext; n++) key = `${name}:${n}`;
        commands.set(key, { ext, name: key, options });
      },
      registerShortcut(shortcut, options) {
        if (typeof shortcut !== "string" || !options || typeof options.handler !== "function")
          throw new TypeError("registerShortcut needs a key and a handler");
        shortcuts.set(shortcut.toLowerCase(), { shortcut, ext, options });
      },
      registerFlag(name, options) {
        const type = (options && options.type) || "boolean";
        const d = options && options.default;
        if (d !== undefined && typeof d !== type) throw new TypeError(`Flag "--${name}": default must be a ${type}`);
        if (flags.has(name) && flags.get(name).ext !== ext) {
          ext.diagnostics.push(`Flag "--${name}" conflicts with ${flags.get(name).ext.path}`);
          return;
        }
        flags.set(name, { ext, options: Object.assign({ type }, options) });
      },
      getFlag(name) {
        const flag = flags.get(name);
        if (!flag || flag.ext !== ext) return undefined;
        const value = settings.flags[name];
        if (value === undefined) return flag.options.default;
        if (flag.options.type === "boolean") return value === true || value === "true";
        return value === true ? "" : String(value);
      },
      registerMessageRenderer(customType, renderer) {
        internal.addMessageRenderer(customType, renderer);
      },
      registerEntryRenderer(customType, renderer) {
        internal.addEntryRenderer(customType, renderer);
      },
      registerMarkdownTransformer(transformer) {
        internal.addMarkdownTransformer(ext, transformer);
      },
      registerToolRenderer(resolver) {
        internal.addToolRenderer(resolver);
      },
      sendMessage: action("sendMessage", (msg, options) => {
        session(SessionOp.sendMessage, { message: msg, options: options || {} });
      }),
      sendUserMessage: action("sendUserMessage", (content, options) => {
        session(SessionOp.sendUserMessage, { content, options: options || {} });
      }),
      appendEntry: action("appendEntry", (customType, data) => {
        session(SessionOp.appendEntry, { customType, data });
      }),
      setSessionName: action("setSessionName", (name) => {
        session(SessionOp.setSessionName, { name });
      }),
      getSessionName: action("getSessionName", () => session(SessionOp.getSessionName)),
      setLabel: action("setLabel", (entryId, label) => {
        session(SessionOp.setLabel, { entryId, label });
      }),
      getActiveTools: action("getActiveTools", () => session(SessionOp.getActiveTools)),
      setActiveTools: action("setActiveTools", (names) => {
        session(SessionOp.setActiveTools, { names });
      }),
      getAllTools: action("getAllTools", () => internal.allTools([...tools.values()])),
      getCommands: action("getCommands", () =>
        [...commands.values()].map((c) => ({
          name: c.name,
          description: c.options.description,
          source: "extension",
          sourceInfo: { path: c.ext.path },
        })),
      ),
      getThinkingLevel: action("getThinkingLevel", () => session(SessionOp.getThinkingLevel)),
      setThinkingLevel: action("setThinkingLevel", (level) => {
        session(SessionOp.setThinkingLevel, { level });
      }),
      // False when the model's provider has no credentials; the switch happens once a
      // running prompt has finished (session-only, the default is unchanged… see docs).
      setModel: async (model) => {
        if (ext.state === "loading") throw new Error(NOT_BOUND);
        if (!model || !internal.modelRegistry.hasConfiguredAuth(model)) return false;
        session(SessionOp.setModel, { provider: model.provider, id: model.id });
        return true;
      },
      getSettings: () => ({}),
      exec(command, args, options) {
        const o = options || {};
        return internal
          .execAsync(command, args || [], { cwd: o.cwd || settings.cwd, timeout: o.timeout, env: o.env })
          .then((r) => ({
            stdout: r.stdout,
            stderr: r.stderr,
            code: r.status === null ? 1 : r.status,
            killed: !!r.killed,
          }));
      },
      registerProvider(name, config) {
        internal.registerProvider(ext, name, config);
      },
      unregisterProvider(name) {
        internal.unregisterProvider(ext, name);
      },
      registerMcpServer(name, config) {
        internal.registerMcpServer(ext, name, config);
      },
      unregisterMcpServer(name) {
        internal.unregisterMcpServer(ext, name);
      },
      getMcpServers: () => internal.mcpServerSpecs(),
      registerVirtualModel(def) {
        internal.registerVirtualModel(ext, def);
      },
      unregisterVirtualModel(provider, id) {
        internal.unregisterVirtualModel(ext, provider, id);
      },
      refreshTools() {
        try {
          session(SessionOp.refreshTools);
        } catch (_) {
          /* not bound yet */
        }
      },
      events: {
        emit: (channel, data) => bus.emit(channel, data),
        // The subscriptions of a runtime end with it (session replacement, reload).
        on: (channel, fn) => {
          const off = bus.on(channel, fn);
          ext.unsubscribe.push(off);
          return off;
        },
      },
    };
  }

  // `constrainedSampling`: `false` or a config object, copied as plain JSON; anything else is
  // left out (providers then send the tool's JSON schema as it is).
  function samplingOf(value) {
    if (value === false) return false;
    if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
    try {
      return JSON.parse(JSON.stringify(value));
    } catch {
      return undefined;
    }
  }

  // `outputSchema`: the JSON schema of a result's `structuredContent`, copied as plain JSON;
  // anything but an object is left out (scripts then get the tool's text).
  function schemaOf(value) {
    if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
    try {
      return JSON.parse(JSON.stringify(value));
    } catch {
      return undefined;
    }
  }

  function snapshot() {
    const events = new Set();
    for (const ext of extensions) for (const [name, list] of ext.handlers) if (list.length) events.add(name);
    return {
      tools: [...tools.values()].map(({ ext, def }) => ({
        name: def.name,
        label: def.label || def.name,
        description: def.description || "",
        parameters: JSON.parse(JSON.stringify(def.parameters)),
        promptSnippet: def.promptSnippet,
        promptGuidelines: def.promptGuidelines || [],
        executionMode: def.executionMode || "parallel",
        extensionPath: ext.path,
        exposure: typeof def.exposure === "string" ? def.exposure : "direct",
        defaultActive: typeof def.defaultActive === "boolean" ? def.defaultActive : undefined,
        constrainedSampling: samplingOf(def.constrainedSampling),
        outputSchema: schemaOf(def.outputSchema),
        prepareLoadout: typeof def.prepareLoadout === "function",
      })),
      commands: [...commands.values()].map((c) => ({
        name: c.name,
        description: c.options.description,
        extensionPath: c.ext.path,
      })),
      flags: [...flags.entries()].map(([name, f]) => ({
        name,
        type: f.options.type,
        description: f.options.description,
      })),
      shortcuts: [...shortcuts.values()].map((s) => ({
        shortcut: s.shortcut,
        description: s.options.description,
        extensionPath: s.ext.path,
      })),
      renderers: internal.rendererSummary(
        [...tools.values()]
          .filter(({ def }) => def.renderCall || def.renderResult || def.renderShell)
          .map(({ def }) => def.name),
      ),
      events: [...events],
      providers: internal.providerSpecs(),
      virtualModels: internal.virtualModelSpecs(),
      mcpServers: internal.mcpServerSpecs(),
      apis: internal.customApis(),
    };
  }

  // Runs `event`'s handlers in load then registration order; `step(result, event)` folds each
  // result and returns true to stop. Errors are collected, never thrown.
  async function run(name, event, step, errors) {
    const ctx = eventContext();
    // The extensions present when the event began (one loaded meanwhile waits for the
    // next event) and a copy of each handler list (a handler that unsubscribes does not
    // shift the walk); no copy of the extension list, which events walk most.
    for (let i = 0, n = extensions.length; i < n; i++) {
      const ext = extensions[i];
      if (!ext || ext.state !== "active") continue;
      const registered = ext.handlers.get(name);
      if (!registered || registered.length === 0) continue;
      const list = registered.slice();
      for (const handler of list) {
        try {
          const result = await handler(event, ctx);
          if (step && step(result, event, ext)) return true;
        } catch (e) {
          errors.push({ extensionPath: ext.path, event: name, error: message(e), stack: stackOf(e) });
          if (name === "tool_call") return step && step({ block: true, reason: message(e) }, event, ext);
        }
      }
    }
    return false;
  }

  const calls = {
    async load({ paths, cwd, mode, flags: given }) {
      // A second load (the project's, after trust) adds to the paths a restart loads again.
      settings = { paths: (settings.paths || []).concat(paths), cwd, mode, flags: given || {} };
      const errors = [];
      for (const path of paths) {
        const ext = { path, state: "loading", handlers: new Map(), diagnostics: [], unsubscribe: [] };
        const api = createAPI(ext);
        extensions.push(ext);
        try {
          const ns = await internal.importEntry(path);
          let factory = ns && ns.default;
          if (factory && typeof factory !== "function" && typeof factory.default === "function")
            factory = factory.default;
          if (typeof factory !== "function")
            throw new Error(`Extension does not export a valid factory function: ${path}`);
          await factory(api);
          ext.state = "active";
          internal.commitProviders(ext);
        } catch (e) {
          ext.state = "failed";
          ext.providers = [];
          internal.dropVirtualModels(ext);
          internal.dropMcpServers(ext);
          for (const [k, v] of [...tools]) if (v.ext === ext) tools.delete(k);
          for (const [k, v] of [...commands]) if (v.ext === ext) commands.delete(k);
          for (const [k, v] of [...flags]) if (v.ext === ext) flags.delete(k);
          // The user's file and line where the factory failed (our own frames are
          // `kc:`); syntax errors name theirs already.
          const stack = stackOf(e);
          const frame =
            stack && e.code !== "ERR_KC_SYNTAX"
              ? stack
                  .split("\n")
                  .map((l) => l.trim())
                  .find((l) => l.startsWith("at ") && !l.includes("kc:"))
              : undefined;
          const where = frame && /([^\s(]+:\d+:\d+)\)?$/.exec(frame);
          errors.push({ path, message: where ? `${message(e)}\n    at ${where[1]}` : message(e), stack });
        }
      }
      return { errors, diagnostics: extensions.flatMap((e) => e.diagnostics), registry: snapshot() };
    },
    registry: async () => snapshot(),
    // Session replacement and reload: the old runtime's API and contexts go stale, and the
    // factories run again on fresh API objects (modules re-imported only on reload).
    async restart({ reload }) {
      generation++;
      for (const ext of extensions) {
        ext.state = "stale";
        for (const off of ext.unsubscribe.splice(0)) {
          try {
            off();
          } catch {}
        }
      }
      extensions.length = 0;
      tools.clear();
      commands.clear();
      shortcuts.clear();
      internal.dropVirtualModels();
      internal.resetTerminalUi();
      internal.resetRenderers();
      internal.resetAutocomplete();
      internal.resetMcpServers();
      flags.clear();
      if (reload) internal.records.clear();
      const paths = settings.paths || [];
      settings.paths = [];
      return calls.load({ paths, cwd: settings.cwd, mode: settings.mode, flags: settings.flags });
    },
    // A flag's value decided after loading (a string `--plan` takes the word after it).
    setFlag({ name, value }) {
      settings.flags = Object.assign({}, settings.flags, { [name]: value });
    },
    // The composition rules are dispatch.js's (an async function: no extra tick here).
    dispatch: (request) => internal.dispatchEvent(run, request),
    async executeTool({ name, toolCallId, params }) {
      const entry = tools.get(name);
      if (!entry) return { error: `Tool ${name} not found` };
      const controller = new AbortController();
      running.set(toolCallId, controller);
      const onUpdate = (partial) => {
        kc.toolUpdate(JSON.stringify({ toolCallId, partial }));
      };
      try {
        const r = await entry.def.execute(
          toolCallId,
          params,
          controller.signal,
          onUpdate,
          context({ signal: controller.signal, members: toolMembers(toolCallId) }),
        );
        const out = r && typeof r === "object" ? r : { content: [{ type: "text", text: String(r) }] };
        return {
          content: Array.isArray(out.content) ? out.content : [],
          details: out.details,
          isError: !!out.isError,
          terminate: out.terminate === true,
          usage: out.usage,
          structuredContent: out.structuredContent,
        };
      } catch (e) {
        return { error: message(e) };
      } finally {
        running.delete(toolCallId);
      }
    },
    // `prepareLoadout` of the active tools that have one: what they change in the
    // declarations the model gets (later hooks win a description; hidden ones add up).
    async loadout({ declared, callable, registered, exposures, guidelines }) {
      const loadout = {
        declared,
        callable,
        registered,
        getExposure: (name) => exposures[name] || "direct",
        getNamespace: (name) => {
          const entry = tools.get(name);
          return entry ? entry.def.namespace : undefined;
        },
        getPromptGuidelines: (name) => guidelines[name] || [],
      };
      const descriptions = {};
      const hidden = [];
      const errors = [];
      for (const tool of declared) {
        const entry = tools.get(tool.name);
        if (!entry || typeof entry.def.prepareLoadout !== "function") continue;
        try {
          const changes = entry.def.prepareLoadout(loadout);
          for (const [name, text] of Object.entries((changes && changes.descriptions) || {}))
            descriptions[name] = String(text);
          for (const name of (changes && changes.hiddenDeclarations) || [])
            if (!hidden.includes(name)) hidden.push(String(name));
        } catch (e) {
          errors.push({
            extensionPath: entry.ext.path,
            event: "prepare_loadout",
            error: message(e),
            stack: stackOf(e),
          });
        }
      }
      return { descriptions, hidden, errors };
    },
    async nestedUpdate({ id, partial }) {
      const onUpdate = nestedUpdates.get(id);
      if (onUpdate) onUpdate(partial);
      return null;
    },
    async abort({ toolCallId }) {
      const controller = running.get(toolCallId);
      if (controller) controller.abort();
      return null;
    },
    // A shortcut's key was pressed in the terminal.
    async shortcut({ shortcut }) {
      const entry = shortcuts.get(String(shortcut).toLowerCase());
      if (!entry) return { found: false };
      try {
        await entry.options.handler(commandContext());
      } catch (e) {
        internal.reportUncaught(e);
      }
      return { found: true };
    },
    async command({ name, args }) {
      const entry = commands.get(name);
      if (!entry) return { found: false };
      try {
        await entry.options.handler(args, commandContext());
        return { found: true, errors: [] };
      } catch (e) {
        return {
          found: true,
          errors: [{ extensionPath: entry.ext.path, event: "command", error: message(e), stack: stackOf(e) }],
        };
      }
    },
  };

  Object.assign(calls, internal.extraCalls || {});

  async function call(method, payload) {
    try {
      const fn = calls[method];
      if (!fn) throw new Error(`unknown host call ${method}`);
      const value = await fn(JSON.parse(payload));
      if (value && typeof value === "object" && typeof value.error === "string" && method === "executeTool")
        return JSON.stringify({ error: value.error });
      return JSON.stringify({ ok: value === undefined ? null : value });
    } catch (e) {
      return JSON.stringify({ error: message(e) });
    }
  }
  // Rust's entry point. The answer goes back through `kc.reply(id, text)` as soon as the
  // call settles (no Rust future waiting on the promise); a call without an id (Rust's
  // `post`) answers nothing. A call unwound by an abort rejects: that is an answer too.
  g.__kc_call = function (method, payload, id) {
    const settled = call(method, payload);
    if (id !== undefined)
      settled.then(
        (text) => kc.reply(id, text),
        (e) => kc.reply(id, JSON.stringify({ error: message(e) })),
      );
  };
})(globalThis);
