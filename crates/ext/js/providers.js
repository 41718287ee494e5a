// Providers and models in JS: `pi.registerProvider` (models go to the Rust registry, a
// `streamSimple` becomes an API the agent loop streams through), the event-stream classes of
// `@knightcode/ai`, and `streamSimple`/`complete`/`streamSimpleAnthropic`/… calling our Rust
// providers (`src/providers.rs`). `ctx.modelRegistry` is built here too.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const op = internal.op;
  const SessionOp = internal.SessionOp;
  const ai = internal.hostModule("ai");
  const calls = (internal.extraCalls = internal.extraCalls || {});

  // ---- the stream classes (pi-ai's EventStream / AssistantMessageEventStream) ----
  class EventStream {
    constructor(isComplete, extractResult) {
      this.isComplete = isComplete;
      this.extractResult = extractResult;
      this.queue = [];
      this.waiting = [];
      this.done = false;
      this.finalResultPromise = new Promise((resolve) => {
        this.resolveFinalResult = resolve;
      });
    }
    push(event) {
      if (this.done) return;
      if (this.isComplete(event)) {
        this.done = true;
        this.resolveFinalResult(this.extractResult(event));
      }
      const waiter = this.waiting.shift();
      if (waiter) waiter({ value: event, done: false });
      else this.queue.push(event);
    }
    end(result) {
      this.done = true;
      if (result !== undefined) this.resolveFinalResult(result);
      while (this.waiting.length > 0) this.waiting.shift()({ value: undefined, done: true });
    }
    async *[Symbol.asyncIterator]() {
      while (true) {
        if (this.queue.length > 0) yield this.queue.shift();
        else if (this.done) return;
        else {
          const result = await new Promise((resolve) => this.waiting.push(resolve));
          if (result.done) return;
          yield result.value;
        }
      }
    }
    result() {
      return this.finalResultPromise;
    }
  }
  class AssistantMessageEventStream extends EventStream {
    constructor() {
      super(
        (e) => e.type === "done" || e.type === "error",
        (e) => (e.type === "done" ? e.message : e.error),
      );
    }
  }
  const createAssistantMessageEventStream = () => new AssistantMessageEventStream();

  const emptyUsage = () => ({
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  });
  function failure(model, text, reason) {
    return {
      role: "assistant",
      content: [],
      api: model && model.api,
      provider: model && model.provider,
      model: model && model.id,
      usage: emptyUsage(),
      stopReason: reason || "error",
      errorMessage: text,
      timestamp: Date.now(),
    };
  }
  function calculateCost(model, usage) {
    const c = (model && model.cost) || {};
    usage.cost = usage.cost || {};
    usage.cost.input = ((c.input || 0) / 1e6) * (usage.input || 0);
    usage.cost.output = ((c.output || 0) / 1e6) * (usage.output || 0);
    usage.cost.cacheRead = ((c.cacheRead || 0) / 1e6) * (usage.cacheRead || 0);
    usage.cost.cacheWrite = ((c.cacheWrite || 0) / 1e6) * (usage.cacheWrite || 0);
    usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite;
    return usage.cost;
  }

  // ---- providers and APIs extensions register ----
  const registered = []; // { ext, name, config } in registration order, configs merged per name
  const apis = new Map(); // api -> { streamSimple, stream, sourceId }

  function validate(name, config) {
    if (!config || typeof config !== "object") throw new TypeError(`Provider ${name}: config must be an object`);
    if (config.streamSimple && !config.api)
      throw new Error(`Provider ${name}: "api" is required when registering streamSimple.`);
    if (!config.models || config.models.length === 0) return;
    if (!config.baseUrl) throw new Error(`Provider ${name}: "baseUrl" is required when defining models.`);
    if (!config.apiKey && !config.oauth)
      throw new Error(`Provider ${name}: "apiKey" or "oauth" is required when defining models.`);
    for (const m of config.models)
      if (!m.api && !config.api) throw new Error(`Provider ${name}, model ${m.id}: no "api" specified.`);
  }
  // What Rust keeps of a config: its JSON, the functions reduced to markers.
  function jsonConfig(config) {
    const out = {};
    for (const [k, v] of Object.entries(config)) {
      if (typeof v === "function") {
        if (k === "streamSimple") out.streamSimple = true;
        continue;
      }
      if (k === "oauth") {
        out.oauth = v ? { name: v.name } : null;
        if (v && typeof v.modifyModels === "function") out.oauth.modifyModels = true;
        continue;
      }
      if (v !== undefined) out[k] = JSON.parse(JSON.stringify(v));
    }
    return out;
  }
  function apply(entry) {
    const { name, config } = entry;
    if (typeof config.streamSimple === "function") {
      const streamSimple = config.streamSimple;
      apis.set(config.api, { streamSimple, stream: streamSimple, sourceId: `provider:${name}` });
    }
    const existing = registered.find((r) => r.name === name);
    if (!existing) {
      registered.push({ ext: entry.ext, name, config: Object.assign({}, config) });
      return;
    }
    for (const k of Object.keys(config)) if (config[k] !== undefined) existing.config[k] = config[k];
  }
  internal.registerProvider = function (ext, name, config) {
    if (typeof name === "object" && name && typeof name.id === "string")
      return internal.registerProvider(ext, name.id, name);
    // Queued as the reference does; a bad config is reported when the queue is applied.
    if (ext.state === "loading") {
      (ext.providers = ext.providers || []).push({ ext, name, config });
      return;
    }
    // After loading it takes effect at once (a bad config throws to the caller): the
    // session's registry takes the provider, its models can be listed and selected.
    validate(name, config);
    internal.session(SessionOp.registerProvider, { name, config: jsonConfig(config), extensionPath: ext.path });
    apply({ ext, name, config });
  };
  internal.unregisterProvider = function (ext, name) {
    if (ext.state === "loading") {
      ext.providers = (ext.providers || []).filter((p) => p.name !== name);
      return;
    }
    const index = registered.findIndex((r) => r.name === name);
    if (index >= 0) registered.splice(index, 1);
    internal.session(SessionOp.unregisterProvider, { name });
  };
  // Applies what an extension queued while loading; a registration that fails is reported
  // (`register_provider`) and the extension stays loaded, as in the reference.
  internal.commitProviders = (ext) => {
    for (const entry of ext.providers || []) {
      try {
        validate(entry.name, entry.config);
        apply(entry);
      } catch (e) {
        ext.diagnostics.push(
          `Extension error (${ext.path}, register_provider): ${e && e.message ? e.message : String(e)}`,
        );
      }
    }
    ext.providers = [];
  };
  internal.providerSpecs = () =>
    registered.map((r) => ({ name: r.name, config: jsonConfig(r.config), extensionPath: r.ext.path }));
  internal.customApis = () => [...apis.keys()];

  function registerApiProvider(provider, sourceId) {
    if (!provider || typeof provider.api !== "string") throw new TypeError("registerApiProvider needs an api");
    const streamSimple = provider.streamSimple || provider.stream;
    if (typeof streamSimple !== "function") throw new TypeError(`API provider ${provider.api} has no stream function`);
    apis.set(provider.api, { streamSimple, stream: provider.stream || streamSimple, sourceId });
  }
  function unregisterApiProviders(sourceId) {
    for (const [api, p] of [...apis]) if (p.sourceId === sourceId) apis.delete(api);
  }

  // ---- JS providers driven by the agent loop (Rust calls `streamSimple`) ----
  const jsStreams = new Map(); // streamId -> AbortController
  // An event as Rust reads it: without the cumulative `partial`, tool-call starts naming
  // their call.
  function slim(event) {
    const out = {};
    for (const [k, v] of Object.entries(event)) if (k !== "partial") out[k] = v;
    if (event.type === "start") out.partial = event.partial;
    if (event.type === "toolcall_start" && event.partial && Array.isArray(event.partial.content)) {
      const block = event.partial.content[event.contentIndex] || {};
      out.id = block.id || "";
      out.toolName = block.name || "";
    }
    return out;
  }
  function clean(options) {
    const out = {};
    for (const [k, v] of Object.entries(options || {})) if (v !== null && v !== undefined) out[k] = v;
    return out;
  }
  // Response headers as a plain object (a `Headers` instance or a plain object given).
  function headerObject(headers) {
    const out = {};
    if (!headers) return out;
    if (typeof headers.forEach === "function" && !Array.isArray(headers))
      headers.forEach((v, k) => {
        out[String(k).toLowerCase()] = String(v);
      });
    else for (const [k, v] of Object.entries(headers)) out[String(k).toLowerCase()] = String(v);
    return out;
  }
  calls.streamSimple = async function ({ api, streamId, model, context, options, hasPayloadHook, hasResponseHook }) {
    const entry = apis.get(api);
    if (!entry) throw new Error(`No API provider registered for api: ${api}`);
    const controller = new AbortController();
    jsStreams.set(streamId, controller);
    const opts = clean(options);
    opts.signal = controller.signal;
    opts.onPayload = async (payload) =>
      hasPayloadHook ? op(await kc.jsStreamPayload(streamId, JSON.stringify(payload))) : undefined;
    opts.onResponse = async (response) => {
      if (!hasResponseHook || !response) return;
      op(await kc.jsStreamResponse(streamId, response.status || 0, JSON.stringify(headerObject(response.headers))));
    };
    try {
      const stream = entry.streamSimple(model, clean(context), opts);
      for await (const event of stream) {
        kc.streamEvent(streamId, JSON.stringify(slim(event)));
        if (event.type === "done" || event.type === "error") break;
      }
    } finally {
      jsStreams.delete(streamId);
    }
    return null;
  };
  // A stored OAuth login of an extension's provider: refreshed once expired, then turned
  // into the request's key (`oauth.refreshToken`, `oauth.getApiKey`), as pi's auth storage does.
  calls.oauth = async function ({ provider, op: which, credentials, models }) {
    const entry = registered.find((p) => p.name === provider);
    const oauth = entry && entry.config.oauth;
    if (!oauth) throw new Error(`Provider ${provider} has no OAuth login`);
    if (which === "modifyModels") {
      // pi hands the whole model list to the provider (Copilot moves its models' base URL to
      // the login's enterprise domain) and takes back what it returns.
      const changed = await oauth.modifyModels(models, credentials);
      if (!Array.isArray(changed)) throw new Error("modifyModels returned no model list");
      return changed;
    }
    if (which === "refresh") {
      const fresh = await oauth.refreshToken(credentials);
      if (!fresh || typeof fresh !== "object") throw new Error("refreshToken returned no credentials");
      return fresh;
    }
    const key = await oauth.getApiKey(credentials);
    if (typeof key !== "string" || !key) throw new Error("getApiKey returned no key");
    return key;
  };
  // `/login` and `knightcode auth login` of an extension's provider: `oauth.login` with the
  // callbacks pi's login passes (Rust shows what they say and answers the questions); the
  // credentials it returns are stored by Rust as `{ type: "oauth", ...credentials }`.
  const logins = new Map(); // login id -> AbortController
  calls.oauthLogin = async function ({ provider, login: id }) {
    const entry = registered.find((p) => p.name === provider);
    const oauth = entry && entry.config.oauth;
    if (!oauth || typeof oauth.login !== "function") throw new Error(`Provider ${provider} has no OAuth login`);
    const controller = new AbortController();
    logins.set(id, controller);
    const tell = (news) => kc.loginNews(id, JSON.stringify(news));
    const ask = async (prompt) => {
      const answer = JSON.parse(await kc.loginPrompt(id, JSON.stringify(prompt)));
      if (answer.error) throw new Error(answer.error);
      return answer.ok;
    };
    try {
      const credentials = await oauth.login({
        onAuth: (info) => tell({ type: "auth", url: String(info?.url ?? ""), instructions: info?.instructions }),
        onPrompt: (prompt) =>
          ask({ message: prompt?.message, placeholder: prompt?.placeholder, allowEmpty: prompt?.allowEmpty === true }),
        onProgress: (message) => tell({ type: "progress", message: String(message) }),
        onManualCodeInput: () => ask({ message: "Paste redirect URL below, or complete login in browser:" }),
        signal: controller.signal,
      });
      if (!credentials || typeof credentials !== "object") throw new Error("login returned no credentials");
      return credentials;
    } finally {
      logins.delete(id);
    }
  };
  calls.oauthLoginAbort = async function ({ login: id }) {
    const controller = logins.get(id);
    if (controller) controller.abort();
    return null;
  };
  calls.abortStream = async function ({ streamId }) {
    const c = jsStreams.get(streamId);
    if (c) c.abort();
    return null;
  };

  // ---- our Rust providers called from JS ----
  const rustStreams = new Map(); // streamId -> { options, model }
  function accumulate(state, event) {
    const c = state.partial && state.partial.content;
    const i = event.contentIndex;
    switch (event.type) {
      case "start":
        state.partial = event.partial;
        break;
      case "text_start":
        c[i] = { type: "text", text: "" };
        break;
      case "text_delta":
        if (c[i]) c[i].text += event.delta;
        break;
      case "text_end":
        if (c[i]) c[i].text = event.content;
        break;
      case "thinking_start":
        c[i] = { type: "thinking", thinking: "" };
        break;
      case "thinking_delta":
        if (c[i]) c[i].thinking += event.delta;
        break;
      case "thinking_end":
        if (c[i]) c[i].thinking = event.content;
        break;
      case "toolcall_start":
        c[i] = { type: "toolCall", id: event.id, name: event.toolName, arguments: {} };
        break;
      case "toolcall_end":
        c[i] = event.toolCall;
        break;
      default:
        break;
    }
    if (event.type !== "done" && event.type !== "error") event.partial = state.partial;
    return event;
  }
  function rustStream(model, context, options, builtin, reportedApi) {
    const out = createAssistantMessageEventStream();
    const o = options || {};
    const ctxJson = {
      systemPrompt: context && context.systemPrompt,
      messages: (context && context.messages) || [],
      tools: (context && context.tools) || [],
    };
    const jsonOptions = clean({
      apiKey: o.apiKey,
      reasoning: o.reasoning || o.reasoningEffort,
      maxTokens: o.maxTokens,
      temperature: o.temperature,
      headers: o.headers,
      sessionId: o.sessionId,
      cacheRetention: o.cacheRetention,
    });
    let id;
    try {
      id = op(
        kc.modelStream(
          JSON.stringify({
            model,
            context: ctxJson,
            options: jsonOptions,
            builtin: !!builtin,
            onPayload: typeof o.onPayload === "function",
            onResponse: typeof o.onResponse === "function",
          }),
        ),
      );
    } catch (e) {
      const error = failure(model, e.message);
      out.push({ type: "error", reason: "error", error });
      out.end();
      return out;
    }
    rustStreams.set(id, { options: o, model });
    if (o.signal) {
      if (o.signal.aborted) kc.modelAbort(id);
      else o.signal.addEventListener("abort", () => kc.modelAbort(id));
    }
    (async () => {
      const state = { partial: null };
      try {
        for (;;) {
          const event = JSON.parse(await kc.modelNext(id));
          if (!event) break;
          if (reportedApi) for (const m of [event.partial, event.message, event.error]) if (m) m.api = reportedApi;
          out.push(accumulate(state, event));
          if (event.type === "done" || event.type === "error") break;
        }
      } catch (e) {
        out.push({ type: "error", reason: "error", error: failure(model, e.message) });
      } finally {
        rustStreams.delete(id);
        out.end();
      }
    })();
    return out;
  }
  calls.streamPayload = async function ({ streamId, payload }) {
    const s = rustStreams.get(streamId);
    if (!s || typeof s.options.onPayload !== "function") return null;
    const replaced = await s.options.onPayload(payload, s.model);
    return replaced === undefined ? null : replaced;
  };

  calls.streamResponse = async function ({ streamId, status, headers }) {
    const s = rustStreams.get(streamId);
    if (s && typeof s.options.onResponse === "function") await s.options.onResponse({ status, headers }, s.model);
    return null;
  };

  function streamSimple(model, context, options) {
    const custom = model && apis.get(model.api);
    if (custom) return custom.streamSimple(model, context, options);
    return rustStream(model, context, options, false);
  }
  function stream(model, context, options) {
    const custom = model && apis.get(model.api);
    if (custom) return custom.stream(model, context, options);
    return rustStream(model, context, options, false);
  }
  // These name their wire API, whatever the model's `api` says (an extension's own API id
  // delegating to ours); messages keep the model's `api`, as pi's do.
  const builtinStream = (api) => (model, context, options) =>
    rustStream(Object.assign({}, model, { api }), context, options, true, model.api);

  // ---- models ----
  // Every model, chat and classifier alike (`type`: `chat`, `image`, `classifier`; a model
  // without one is a chat model); the chat getters list chat models only, as pi's do.
  const typeOf = (model) => model.type || "chat";
  // The list is read once per version of the session's models (a provider registered, a
  // login, a model list rebuilt): `find` runs before every routed request and in many
  // handlers, and reading the whole catalog each time costs milliseconds. The objects are
  // the registry's, shared between calls, as pi's registry returns its own.
  let modelCache;
  function everyModel() {
    const version = kc.modelsVersion();
    if (version != null && modelCache && modelCache.version === version) return modelCache.every;
    const every = op(kc.models());
    const chat = every.filter((x) => typeOf(x.model) === "chat");
    modelCache = version == null ? undefined : { version, every, chat, byKey: undefined };
    return every;
  }
  // `find` by provider and id without walking the catalog (it has thousands of models).
  function chatByKey() {
    everyModel();
    if (!modelCache) return undefined;
    if (!modelCache.byKey) {
      const byKey = new Map();
      for (const x of modelCache.chat) {
        const key = x.model.provider + "\u0000" + x.model.id;
        if (!byKey.has(key)) byKey.set(key, x);
      }
      modelCache.byKey = byKey;
    }
    return modelCache.byKey;
  }
  const allModels = () => {
    const every = everyModel();
    return modelCache && modelCache.every === every
      ? modelCache.chat
      : every.filter((x) => typeOf(x.model) === "chat");
  };
  const sameModel = (a, b) => a && b && a.provider === b.provider && a.id === b.id;
  function getModel(provider, id) {
    const index = chatByKey();
    const m = index
      ? index.get(provider + "\u0000" + id)
      : allModels().find((x) => x.model.provider === provider && x.model.id === id);
    return m && m.model;
  }
  function getModels(provider) {
    return allModels()
      .map((x) => x.model)
      .filter((m) => provider === undefined || m.provider === provider);
  }
  function getProviders() {
    return [...new Set(allModels().map((x) => x.model.provider))];
  }
  async function auth(model) {
    return op(await kc.modelAuth(JSON.stringify(model)));
  }

  const ofType = (type, provider, onlyAvailable) =>
    everyModel()
      .filter((x) => (!onlyAvailable || x.available) && typeOf(x.model) === type)
      .map((x) => x.model)
      .filter((m) => provider === undefined || m.provider === provider);
  // Classifying runs in Rust (the `llama-cpp-classify` wire); a failure resolves to the
  // error result, as the reference's does. The signal and callbacks stay here.
  async function classify(model, context, options) {
    const o = options || {};
    const sent = {
      apiKey: o.apiKey,
      headers: o.headers,
      temperature: o.temperature,
      maxRetries: o.maxRetries,
      maxRetryDelayMs: o.maxRetryDelayMs,
      timeoutMs: o.timeoutMs,
    };
    return JSON.parse(await kc.modelClassify(JSON.stringify({ model, context, options: sent })));
  }
  // No image-generation wire exists in this build (the reference's catalog has no such
  // models here): the call answers with an error result instead of throwing, as the
  // reference answers a provider's error.
  const noImages = (model) => ({
    provider: model && model.provider,
    model: model && (model.id || model.model),
    output: [],
    stopReason: "error",
    errorMessage: "Image models are not supported by this build",
  });

  internal.modelRegistry = {
    getAll: () => getModels(),
    findOfType: (type, provider, id) => ofType(type, provider, false).find((m) => m.id === id),
    getModelsOfType: (type, provider) => ofType(type, provider, false),
    getAvailableOfType: (type, provider) => ofType(type, provider, true),
    getAvailableClassifiers: () => ofType("classifier", undefined, true),
    findClassifier: (provider, id) => ofType("classifier", provider, false).find((m) => m.id === id),
    classify: (model, context, options) => classify(model, context, options),
    generateImages: async (model) => noImages(model),
    getAvailable: () =>
      allModels()
        .filter((x) => x.available)
        .map((x) => x.model),
    find: (provider, id) => getModel(provider, id),
    hasConfiguredAuth: (model) => everyModel().some((x) => sameModel(x.model, model) && x.available),
    isUsingOAuth: () => false,
    getError: () => undefined,
    refresh() {},
    async getApiKey(model) {
      const a = await auth(model);
      return a ? a.apiKey || undefined : undefined;
    },
    async getApiKeyForProvider(provider) {
      const model = getModels(provider)[0];
      if (!model) return undefined;
      const a = await auth(model);
      return a ? a.apiKey || undefined : undefined;
    },
    async getApiKeyAndHeaders(model) {
      try {
        const a = await auth(model);
        if (!a) return { ok: true, apiKey: undefined, headers: undefined };
        const headers = a.headers && Object.keys(a.headers).length > 0 ? a.headers : undefined;
        return { ok: true, apiKey: a.apiKey || undefined, headers };
      } catch (e) {
        return { ok: false, error: e.message };
      }
    },
    getProviderDisplayName: (provider) => {
      const r = registered.find((p) => p.name === provider);
      return (r && (r.config.name || (r.config.oauth && r.config.oauth.name))) || provider;
    },
    streamSimple: (model, context, options) => streamSimple(model, context, options),
    complete: (model, context, options) => streamSimple(model, context, options).result(),
    registerProvider: internal.missing("ctx.modelRegistry.registerProvider"),
  };

  Object.assign(ai, {
    EventStream,
    AssistantMessageEventStream,
    createAssistantMessageEventStream,
    calculateCost,
    stream,
    streamSimple,
    complete: (model, context, options) => stream(model, context, options).result(),
    completeSimple: (model, context, options) => streamSimple(model, context, options).result(),
    streamAnthropic: builtinStream("anthropic-messages"),
    streamSimpleAnthropic: builtinStream("anthropic-messages"),
    streamOpenAIResponses: builtinStream("openai-responses"),
    streamSimpleOpenAIResponses: builtinStream("openai-responses"),
    streamOpenAICompletions: builtinStream("openai-completions"),
    streamSimpleOpenAICompletions: builtinStream("openai-completions"),
    streamGoogle: builtinStream("google-generative-ai"),
    streamSimpleGoogle: builtinStream("google-generative-ai"),
    registerApiProvider,
    unregisterApiProviders,
    getApiProvider: (api) => {
      const p = apis.get(api);
      return p ? { api, stream: p.stream, streamSimple: p.streamSimple } : undefined;
    },
    getModel,
    getModels,
    getProviders,
    getCurrentTools: (messages) => {
      let tools = [];
      for (const m of messages || [])
        if (m.role === "system" && Array.isArray(m.toolsAdded)) tools = tools.concat(m.toolsAdded);
      return tools;
    },
  });
})(globalThis);
