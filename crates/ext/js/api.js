// The extension API: one `ExtensionAPI` per extension, handler tables, tools, commands,
// and the entry points Rust calls through `__kc_call` (load, dispatch, executeTool,
// command, abort). Every entry point resolves to `{"ok": …}` or `{"error": …}`.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const op = internal.op;
  const extensions = [];
  const tools = new Map();
  const commands = new Map();
  const flags = new Map();
  const bus = internal.createEventBus();
  const running = new Map();
  let settings = { cwd: g.process.cwd(), mode: "print", flags: {} };
  const NOT_BOUND = "Extension runtime not initialized. Action methods cannot be called during extension loading.";
  // Errors no call returns (a throwing timer or event-bus callback) are reported at once.
  internal.reportUncaught = (e) => { kc.reportUncaught(JSON.stringify({ extensionPath: "<unknown>", event: "uncaught", error: message(e), stack: stackOf(e) })); };

  const message = (e) => (e && typeof e === "object" && "message" in e ? String(e.message) : String(e));
  // Stacks point at the TypeScript lines, not the stripped code QuickJS ran.
  const stackOf = (e) => (e && typeof e === "object" && e.stack ? kc.mapStack(String(e.stack)) : undefined);
  const session = (name, args) => op(kc.session(name, JSON.stringify(args === undefined ? null : args)));

  const noUi = {
    select: async () => undefined, confirm: async () => false, input: async () => undefined, editor: async () => undefined,
    custom: async () => undefined, notify() {}, onTerminalInput: () => () => {}, setStatus() {}, setWorkingMessage() {},
    setWorkingVisible() {}, setWorkingIndicator() {}, setHiddenThinkingLabel() {}, setWidget() {}, setFooter() {}, setHeader() {},
    setTitle() {}, pasteToEditor() {}, setEditorText() {}, getEditorText: () => "", addAutocompleteProvider() {},
    setEditorComponent() {}, getEditorComponent: () => undefined, getAllThemes: () => [], getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "UI not available" }), getToolsExpanded: () => false, setToolsExpanded() {},
    theme: { fg: (_, t) => t, bg: (_, t) => t, bold: (t) => t, italic: (t) => t, underline: (t) => t, dim: (t) => t, strikethrough: (t) => t },
  };

  const sessionManager = {
    getEntries: () => session("getEntries"),
    getBranch: (leafId) => session("getBranch", { leafId }),
    getEntry: (id) => session("getEntries").find((e) => e.id === id),
    getLeafId: () => session("getLeafId"),
    getLeafEntry: () => { const b = session("getBranch", {}); return b[b.length - 1]; },
    getSessionFile: () => session("getSessionFile"),
    getSessionId: () => session("getSessionId"),
    getSessionName: () => session("getSessionName"),
    getCwd: () => settings.cwd,
    getHeader: () => session("getHeader"),
    // The last `label` entry for the id wins; one without a label clears it (as pi's labelsById).
    getLabel: (id) => { let label; for (const e of session("getEntries")) if (e.type === "label" && e.targetId === id) label = e.label || undefined; return label; },
  };

  // Async session ops: a promise per call; an aborted `signal` cancels the Rust side.
  let asyncIds = 0;
  function sessionAsync(name, args, signal) {
    const id = ++asyncIds;
    const pending = kc.sessionAsync(id, name, JSON.stringify(args === undefined ? null : args)).then(op);
    if (signal && typeof signal.addEventListener === "function") {
      const onAbort = () => kc.cancelAsync(id);
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener("abort", onAbort, { once: true });
        const off = () => signal.removeEventListener("abort", onAbort);
        pending.then(off, off);
      }
    }
    return pending;
  }

  // The front end's UI (RPC: the extension-UI subprotocol, spec rpc.md §6). The host writes
  // a request while the call is made, so requests keep call order and precede whatever the
  // session emits afterwards (a notify before `ctx.abort()` comes before the run's end).
  const uiSend = (method, args) => {
    sessionAsync("ui", Object.assign({ method }, args)).then(() => {}, () => {});
  };
  const dialog = (method, args, opts, fallback) => {
    const signal = opts && opts.signal;
    if (signal && signal.aborted) return Promise.resolve(fallback);
    return sessionAsync("ui", Object.assign({ method }, args), signal)
      .then((r) => (r === null || r === undefined ? fallback : r), () => fallback);
  };
  const timeoutOf = (opts) => (opts && typeof opts.timeout === "number" && opts.timeout > 0 ? opts.timeout : undefined);
  const hostUi = Object.assign({}, noUi, {
    select: (title, options, opts) => dialog("select", { title, options, timeout: timeoutOf(opts) }, opts, undefined),
    confirm: (title, message, opts) => dialog("confirm", { title, message, timeout: timeoutOf(opts) }, opts, false),
    input: (title, placeholder, opts) => dialog("input", { title, placeholder, timeout: timeoutOf(opts) }, opts, undefined),
    // As in the reference, the editor dialog takes no timeout or signal.
    editor: (title, prefill) => dialog("editor", { title, prefill }, undefined, undefined),
    notify(message, type) { uiSend("notify", { message, notifyType: type }); },
    setStatus(key, text) { uiSend("setStatus", { statusKey: key, statusText: text }); },
    setWidget(key, content, options) {
      // Component factories need a terminal: only string arrays (or a clear) are forwarded.
      if (content === undefined || Array.isArray(content)) {
        uiSend("setWidget", { widgetKey: key, widgetLines: content, widgetPlacement: options && options.placement });
      }
    },
    setTitle(title) { uiSend("setTitle", { title }); },
    pasteToEditor(text) { uiSend("set_editor_text", { text }); },
    setEditorText(text) { uiSend("set_editor_text", { text }); },
    setTheme: () => ({ success: false, error: "Theme switching not supported in RPC mode" }),
  });
  const hasUI = () => { try { return session("hasUI") === true; } catch { return false; } };

  // Session replacement and reload bump the generation: every ctx made before is stale.
  let generation = 0;
  const STALE = "This extension ctx is stale after session replacement or reload. Do not use a captured pi or command ctx after ctx.newSession(), ctx.fork(), ctx.switchSession(), or ctx.reload(). For newSession, fork, and switchSession, move post-replacement work into withSession and use the ctx passed to withSession. For reload, do not use the old ctx after await ctx.reload().";
  const guard = (target, gen) => new Proxy(target, {
    get(t, key, receiver) {
      if (gen !== generation && typeof key === "string" && key !== "then") throw new Error(STALE);
      return Reflect.get(t, key, receiver);
    },
  });

  function context(extra) {
    const ctx = {
      get ui() { return hasUI() ? hostUi : noUi; },
      get mode() { return settings.mode; },
      get hasUI() { return hasUI(); },
      get cwd() { return settings.cwd; },
      get sessionManager() { return sessionManager; },
      get model() { try { return session("getModel"); } catch { return undefined; } },
      get thinkingLevel() { try { return session("getThinkingLevel"); } catch { return undefined; } },
      get signal() { return extra && extra.signal; },
      modelRegistry: internal.modelRegistry,
      scopedModels: [],
      isIdle: () => session("isIdle"),
      isProjectTrusted: () => session("isProjectTrusted"),
      abort: () => { session("abort"); },
      hasPendingMessages: () => session("hasPendingMessages"),
      shutdown: () => session("shutdown"),
      getContextUsage: () => session("getContextUsage") || undefined,
      compact(options) {
        const o = options || {};
        sessionAsync("compact", { customInstructions: o.customInstructions }).then(
          (result) => { if (typeof o.onComplete === "function") o.onComplete(result); },
          (e) => { if (typeof o.onError === "function") o.onError(e instanceof Error ? e : new Error(String(e))); },
        );
      },
      getSystemPrompt: () => session("getSystemPrompt"),
    };
    return guard(Object.assign(ctx, extra && extra.members), generation);
  }

  // A command handler's ctx: the session-control members on top of the event ctx.
  function commandContext() {
    const replaced = async (result, options) => {
      if (!result || result.cancelled) return { cancelled: !!(result && result.cancelled) };
      if (options && typeof options.withSession === "function") await options.withSession(commandContext());
      return { cancelled: false };
    };
    const members = {
      waitForIdle: () => sessionAsync("waitForIdle").then(() => {}),
      async newSession(options) {
        const o = options || {};
        const result = await sessionAsync("newSession", { parentSession: o.parentSession });
        if (result.cancelled) return { cancelled: true };
        if (typeof o.setup === "function") {
          // The new session, writable: what setup appends is the conversation's start.
          const writable = Object.assign({}, sessionManager, {
            appendMessage: (m) => session("appendMessage", { message: m }),
            appendCustomEntry: (customType, data) => { session("appendEntry", { customType, data }); },
            appendCustomMessageEntry: (customType, content, display, details) => {
              session("appendCustomMessageEntry", { message: { customType, content, display, details } });
            },
          });
          await o.setup(writable);
          await sessionAsync("reloadContext");
        }
        return replaced(result, o);
      },
      async fork(entryId, options) {
        const o = options || {};
        return replaced(await sessionAsync("fork", { entryId, position: o.position || "before" }), o);
      },
      async switchSession(path, options) {
        return replaced(await sessionAsync("switchSession", { path }), options);
      },
      async navigateTree(targetId, options) {
        const o = options || {};
        const result = await sessionAsync("navigateTree", { targetId, summarize: !!o.summarize, customInstructions: o.customInstructions, replaceInstructions: o.replaceInstructions, label: o.label });
        return { cancelled: !!(result && result.cancelled) };
      },
      reload: () => sessionAsync("reload").then(() => {}),
      getSystemPromptOptions: internal.missing("ctx.getSystemPromptOptions"),
    };
    return context({ members });
  }

  function createAPI(ext) {
    const action = (name, fn) => (...args) => {
      if (ext.state === "failed") throw new Error(`Extension "${ext.path}" failed to load and its API is no longer active.`);
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
        return () => { const i = list.indexOf(handler); if (i >= 0) list.splice(i, 1); };
      },
      registerTool(def) {
        if (!def || typeof def.name !== "string" || !def.name) throw new TypeError("registerTool needs a tool with a name");
        const p = def.parameters;
        if (!p || typeof p !== "object" || Array.isArray(p)) throw new TypeError(`Tool "${def.name}": parameters must be an object schema`);
        if (typeof def.execute !== "function") throw new TypeError(`Tool "${def.name}" has no execute function`);
        const owner = tools.get(def.name);
        if (owner && owner.ext !== ext) { ext.diagnostics.push(`Tool "${def.name}" conflicts with ${owner.ext.path}`); return; }
        tools.set(def.name, { ext, def });
        // After loading, the session takes the tool up at once (from its next request).
        if (ext.state === "active") { try { session("refreshTools"); } catch (_) { /* not bound yet */ } }
      },
      registerCommand(name, options) {
        if (!options || typeof options.handler !== "function") throw new TypeError(`Command "${name}" needs a handler`);
        let key = name;
        for (let n = 1; commands.has(key) && commands.get(key).ext !== ext; n++) key = `${name}:${n}`;
        commands.set(key, { ext, name: key, options });
      },
      registerShortcut() {},
      registerFlag(name, options) {
        const type = (options && options.type) || "boolean";
        const d = options && options.default;
        if (d !== undefined && typeof d !== type) throw new TypeError(`Flag "--${name}": default must be a ${type}`);
        if (flags.has(name) && flags.get(name).ext !== ext) { ext.diagnostics.push(`Flag "--${name}" conflicts with ${flags.get(name).ext.path}`); return; }
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
      registerMessageRenderer() {}, registerEntryRenderer() {}, registerMarkdownTransformer() {}, registerToolRenderer() {},
      sendMessage: action("sendMessage", (msg, options) => { session("sendMessage", { message: msg, options: options || {} }); }),
      sendUserMessage: action("sendUserMessage", (content, options) => { session("sendUserMessage", { content, options: options || {} }); }),
      appendEntry: action("appendEntry", (customType, data) => { session("appendEntry", { customType, data }); }),
      setSessionName: action("setSessionName", (name) => { session("setSessionName", { name }); }),
      getSessionName: action("getSessionName", () => session("getSessionName")),
      setLabel: action("setLabel", (entryId, label) => { session("setLabel", { entryId, label }); }),
      getActiveTools: action("getActiveTools", () => session("getActiveTools")),
      setActiveTools: action("setActiveTools", (names) => { session("setActiveTools", { names }); }),
      getAllTools: action("getAllTools", () => internal.allTools([...tools.values()])),
      getCommands: action("getCommands", () => [...commands.values()].map((c) => ({ name: c.name, description: c.options.description, source: "extension", sourceInfo: { path: c.ext.path } }))),
      getThinkingLevel: action("getThinkingLevel", () => session("getThinkingLevel")),
      setThinkingLevel: action("setThinkingLevel", (level) => { session("setThinkingLevel", { level }); }),
      // False when the model's provider has no credentials; the switch happens once a
      // running prompt has finished (session-only, the default is unchanged… see docs).
      setModel: async (model) => {
        if (ext.state === "loading") throw new Error(NOT_BOUND);
        if (!model || !internal.modelRegistry.hasConfiguredAuth(model)) return false;
        session("setModel", { provider: model.provider, id: model.id });
        return true;
      },
      getSettings: () => ({}),
      exec(command, args, options) {
        const o = options || {};
        return internal.execAsync(command, args || [], { cwd: o.cwd || settings.cwd, timeout: o.timeout, env: o.env }).then((r) => ({ stdout: r.stdout, stderr: r.stderr, code: r.status === null ? 1 : r.status, killed: !!r.killed }));
      },
      registerProvider(name, config) { internal.registerProvider(ext, name, config); },
      unregisterProvider(name) { internal.unregisterProvider(ext, name); },
      registerMcpServer() { throw internal.unsupported("pi.registerMcpServer"); },
      registerVirtualModel() { throw internal.unsupported("pi.registerVirtualModel"); },
      refreshTools() { try { session("refreshTools"); } catch (_) { /* not bound yet */ } },
      events: {
        emit: (channel, data) => bus.emit(channel, data),
        // The subscriptions of a runtime end with it (session replacement, reload).
        on: (channel, fn) => { const off = bus.on(channel, fn); ext.unsubscribe.push(off); return off; },
      },
    };
  }

  function snapshot() {
    const events = new Set();
    for (const ext of extensions) for (const [name, list] of ext.handlers) if (list.length) events.add(name);
    return {
      tools: [...tools.values()].map(({ ext, def }) => ({
        name: def.name, label: def.label || def.name, description: def.description || "",
        parameters: JSON.parse(JSON.stringify(def.parameters)), promptSnippet: def.promptSnippet, promptGuidelines: def.promptGuidelines || [],
        executionMode: def.executionMode || "parallel", extensionPath: ext.path,
      })),
      commands: [...commands.values()].map((c) => ({ name: c.name, description: c.options.description, extensionPath: c.ext.path })),
      flags: [...flags.entries()].map(([name, f]) => ({ name, type: f.options.type, description: f.options.description })),
      events: [...events],
      providers: internal.providerSpecs(),
      apis: internal.customApis(),
    };
  }

  // Runs `event`'s handlers in load then registration order; `step(result, event)` folds each
  // result and returns true to stop. Errors are collected, never thrown.
  async function run(name, event, step, errors, members) {
    for (const ext of extensions.filter((e) => e.state === "active")) {
      const list = [...(ext.handlers.get(name) || [])];
      for (const handler of list) {
        try {
          const result = await handler(event, context({ members }));
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
          if (factory && typeof factory !== "function" && typeof factory.default === "function") factory = factory.default;
          if (typeof factory !== "function") throw new Error(`Extension does not export a valid factory function: ${path}`);
          await factory(api);
          ext.state = "active";
          internal.commitProviders(ext);
        } catch (e) {
          ext.state = "failed";
          ext.providers = [];
          for (const [k, v] of [...tools]) if (v.ext === ext) tools.delete(k);
          for (const [k, v] of [...commands]) if (v.ext === ext) commands.delete(k);
          for (const [k, v] of [...flags]) if (v.ext === ext) flags.delete(k);
          // The user's file and line where the factory failed (our own frames are
          // `kc:`); syntax errors name theirs already.
          const stack = stackOf(e);
          const frame = stack && e.code !== "ERR_KC_SYNTAX"
            ? stack.split("\n").map((l) => l.trim()).find((l) => l.startsWith("at ") && !l.includes("kc:"))
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
        for (const off of ext.unsubscribe.splice(0)) { try { off(); } catch {} }
      }
      extensions.length = 0;
      tools.clear();
      commands.clear();
      flags.clear();
      if (reload) internal.records.clear();
      const paths = settings.paths || [];
      settings.paths = [];
      return calls.load({ paths, cwd: settings.cwd, mode: settings.mode, flags: settings.flags });
    },
    async dispatch({ event: name, payload }) {
      const errors = [];
      const event = Object.assign({ type: name }, payload);
      let result = null;
      if (name === "tool_call") {
        const before = JSON.stringify(event.input);
        await run(name, event, (r) => { if (r && r.block) { result = { block: true, reason: r.reason || "Blocked by extension" }; return true; } return false; }, errors);
        const after = JSON.stringify(event.input);
        if (!result && after !== before) result = { input: event.input };
      } else if (name === "project_trust") {
        // The first "yes" or "no" decides; "undecided" (or nothing) falls through.
        await run(name, event, (r) => {
          if (r && (r.trusted === "yes" || r.trusted === "no")) { result = { trusted: r.trusted, remember: r.remember === true }; return true; }
          return false;
        }, errors);
      } else if (name === "tool_result") {
        const patch = {};
        await run(name, event, (r) => {
          if (!r || typeof r !== "object") return false;
          for (const key of ["content", "details", "isError"]) if (r[key] !== undefined) { patch[key] = r[key]; event[key] = r[key]; }
          return false;
        }, errors);
        result = patch;
      } else if (name === "input") {
        result = { action: "continue" };
        await run(name, event, (r) => {
          if (!r || r.action === "continue") return false;
          if (r.action === "handled") { result = { action: "handled" }; return true; }
          if (r.action === "transform") { event.text = r.text; if (r.images) event.images = r.images; result = { action: "transform", text: event.text, images: event.images }; }
          return false;
        }, errors);
      } else if (name === "before_agent_start") {
        result = { messages: [] };
        await run(name, event, (r) => {
          if (!r) return false;
          if (r.message) result.messages.push(r.message);
          if (typeof r.systemPrompt === "string") { result.systemPrompt = r.systemPrompt; event.systemPrompt = r.systemPrompt; }
          return false;
        }, errors);
      } else if (name === "before_provider_request") {
        // Any non-undefined return replaces the payload; later handlers see the new one.
        await run(name, event, (r) => { if (r !== undefined) { event.payload = r; result = { payload: r }; } return false; }, errors);
      } else if (name === "context") {
        const before = JSON.stringify(event.messages);
        await run(name, event, (r) => { if (r && Array.isArray(r.messages)) event.messages = r.messages; return false; }, errors);
        if (JSON.stringify(event.messages) !== before) result = { messages: event.messages };
      } else if (name.startsWith("session_before_")) {
        // The last result stands; the first `cancel: true` stops and cancels.
        await run(name, event, (r) => {
          if (!r || typeof r !== "object") return false;
          result = r;
          return r.cancel === true;
        }, errors);
      } else {
        await run(name, event, null, errors);
      }
      return { result, errors };
    },
    async executeTool({ name, toolCallId, params }) {
      const entry = tools.get(name);
      if (!entry) return { error: `Tool ${name} not found` };
      const controller = new AbortController();
      running.set(toolCallId, controller);
      const onUpdate = (partial) => { kc.toolUpdate(JSON.stringify({ toolCallId, partial })); };
      try {
        const r = await entry.def.execute(toolCallId, params, controller.signal, onUpdate, context({ signal: controller.signal }));
        const out = r && typeof r === "object" ? r : { content: [{ type: "text", text: String(r) }] };
        return { content: Array.isArray(out.content) ? out.content : [], details: out.details, isError: !!out.isError, terminate: out.terminate === true };
      } catch (e) {
        return { error: message(e) };
      } finally {
        running.delete(toolCallId);
      }
    },
    async abort({ toolCallId }) {
      const controller = running.get(toolCallId);
      if (controller) controller.abort();
      return null;
    },
    async command({ name, args }) {
      const entry = commands.get(name);
      if (!entry) return { found: false };
      try {
        await entry.options.handler(args, commandContext());
        return { found: true, errors: [] };
      } catch (e) {
        return { found: true, errors: [{ extensionPath: entry.ext.path, event: "command", error: message(e), stack: stackOf(e) }] };
      }
    },
  };

  Object.assign(calls, internal.extraCalls || {});

  g.__kc_call = async function (method, payload) {
    try {
      const fn = calls[method];
      if (!fn) throw new Error(`unknown host call ${method}`);
      const value = await fn(JSON.parse(payload));
      if (value && typeof value === "object" && typeof value.error === "string" && method === "executeTool") return JSON.stringify({ error: value.error });
      return JSON.stringify({ ok: value === undefined ? null : value });
    } catch (e) {
      return JSON.stringify({ error: message(e) });
    }
  };
})(globalThis);
