// The globals of a codemode script. The sandbox (sandbox.rs) defines `__host` before this
// runs: `call(id, name, argsJson)`, `tools()`, `search(query, limit, namespace)`,
// `describe(name)`, `namespace(name)`, `models()` and `load(key)`, all plain values in and out. This file
// keeps the script's output, its store writes and its pending tool calls; the sandbox reads
// them back through `__kc` when the script ends.
(() => {
  const host = globalThis.__host;
  delete globalThis.__host;
  const MAX_OUTPUT_CHARS = 16777216;
  const MAX_OUTPUT_ITEMS = 100000;
  const MAX_STORE_VALUE = 262144;
  const MAX_STORE_TOTAL = 1048576;
  const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
  const EXIT = Symbol('exit');
  const state = {
    items: [],
    console: [],
    chars: 0,
    count: 0,
    set: {},
    deleted: new Set(),
    next: 1,
    pending: new Map(),
    status: 'running',
    error: undefined,
  };

  const show = (value) => {
    if (typeof value === 'string') return value;
    if (value === undefined) return 'undefined';
    if (typeof value === 'function') return String(value);
    try {
      const json = JSON.stringify(value, null, 2);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  };
  const account = (chars) => {
    state.count += 1;
    state.chars += chars;
    if (state.count > MAX_OUTPUT_ITEMS) throw new RangeError(`output is limited to ${MAX_OUTPUT_ITEMS} items`);
    if (state.chars > MAX_OUTPUT_CHARS) throw new RangeError(`output is limited to ${MAX_OUTPUT_CHARS} characters`);
  };
  const text = (value) => {
    const line = show(value);
    account(line.length);
    state.items.push({ type: 'text', text: line });
  };
  const image = (value) => {
    let data;
    let mimeType;
    const url = typeof value === 'string' ? value : value && typeof value.image_url === 'string' ? value.image_url : undefined;
    if (url !== undefined) {
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      if (!match) throw new TypeError('image() takes a base64 data URL, {image_url}, or {type: "image", data, mimeType}');
      mimeType = match[1];
      data = match[2];
    } else if (value && value.type === 'image' && typeof value.data === 'string') {
      data = value.data;
      mimeType = value.mimeType;
    } else {
      throw new TypeError('image() takes a base64 data URL, {image_url}, or {type: "image", data, mimeType}');
    }
    if (!IMAGE_TYPES.includes(mimeType)) throw new TypeError(`image(): unsupported image type ${mimeType} (use PNG, JPEG, GIF or WebP)`);
    account(data.length);
    state.items.push({ type: 'image', data, mimeType });
  };
  const consoleLine =
    (level) =>
    (...args) => {
      const line = args.map(show).join(' ');
      account(line.length);
      state.console.push(level === 'warn' || level === 'error' ? `[${level}] ${line}` : line);
    };
  const call = (name, args) =>
    new Promise((resolve, reject) => {
      const id = state.next++;
      state.pending.set(id, { resolve, reject });
      host.call(id, name, JSON.stringify(args === undefined ? {} : args));
    });
  const storedSize = () => Object.values(state.set).reduce((sum, json) => sum + json.length, 0);
  const store = (key, value) => {
    if (typeof key !== 'string') throw new TypeError('store(key, value): key must be a string');
    if (value === undefined) {
      delete state.set[key];
      state.deleted.add(key);
      return;
    }
    const json = JSON.stringify(value);
    if (json === undefined) throw new TypeError('store(key, value): value must be JSON');
    if (json.length > MAX_STORE_VALUE) throw new RangeError(`store(): a value is limited to ${MAX_STORE_VALUE} characters of JSON`);
    const before = state.set[key];
    state.set[key] = json;
    if (storedSize() > MAX_STORE_TOTAL) {
      if (before === undefined) delete state.set[key];
      else state.set[key] = before;
      throw new RangeError(`store(): the stored values are limited to ${MAX_STORE_TOTAL} characters of JSON in total`);
    }
    state.deleted.delete(key);
  };
  const load = (key) => {
    if (Object.prototype.hasOwnProperty.call(state.set, key)) return JSON.parse(state.set[key]);
    if (state.deleted.has(key)) return undefined;
    const json = host.load(String(key));
    return json === undefined || json === null ? undefined : JSON.parse(json);
  };

  const catalog = JSON.parse(host.tools());
  const tools = {};
  for (const tool of catalog) tools[tool.id] = (args) => call(tool.name, args);

  // `models`: the session's models by type (`chat`, `image`, `classifier`; a model without a
  // type is a chat model), each a fresh copy. `classify` runs in Rust (classifier models
  // declared in models.json) and resolves to the result, an error result included; no
  // image-generation wire exists in this build: `generateImages` resolves to an error result,
  // as a provider's error would, rather than throwing.
  const modelList = JSON.parse(host.models());
  const copy = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
  const ofType = (type, provider, onlyAvailable) =>
    modelList
      .filter((x) => (!onlyAvailable || x.available) && (x.model.type || 'chat') === type)
      .filter((x) => provider === undefined || x.model.provider === provider)
      .map((x) => copy(x.model));
  const classify = (model, context, options) =>
    new Promise((resolve, reject) => {
      const id = state.next++;
      state.pending.set(id, { resolve, reject });
      const o = options || {};
      const sent = { temperature: o.temperature, maxRetries: o.maxRetries, timeoutMs: o.timeoutMs };
      host.classify(id, JSON.stringify({ model, context, options: sent }));
    });
  const noImages = (model) => ({
    provider: model && model.provider,
    model: model && (model.id || model.model),
    output: [],
    stopReason: 'error',
    errorMessage: 'Image models are not supported by this build of KnightCode',
  });
  const models = Object.freeze({
    getModelsOfType: (type, provider) => ofType(type, provider, false),
    getAvailableOfType: (type, provider) => ofType(type, provider, true),
    getModelOfType: (type, provider, id) => ofType(type, provider, false).find((m) => m.id === id),
    classify,
    generateImages: async (model) => noImages(model),
  });

  Object.assign(globalThis, {
    tools: Object.freeze(tools),
    models,
    ALL_TOOLS: Object.freeze(catalog.map((tool) => Object.freeze({ name: tool.name, description: tool.description }))),
    text,
    image,
    console: Object.freeze({
      log: consoleLine('log'),
      info: consoleLine('info'),
      debug: consoleLine('debug'),
      warn: consoleLine('warn'),
      error: consoleLine('error'),
    }),
    exit: () => {
      throw EXIT;
    },
    store,
    load,
    searchTools: async (query, options = {}) =>
      JSON.parse(host.search(String(query), options.limit === undefined ? 8 : Number(options.limit), options.namespace === undefined ? '' : String(options.namespace))),
    describeTool: async (name) => {
      const description = host.describe(String(name));
      if (description === undefined || description === null) throw new Error(`describeTool: no tool named ${name}`);
      return description;
    },
    describeNamespace: async (name) => {
      const namespace = host.namespace(String(name));
      if (namespace === undefined || namespace === null) throw new Error(`describeNamespace: no namespace named ${name}`);
      return JSON.parse(namespace);
    },
  });

  const describeError = (error) => {
    if (error instanceof Error) {
      const head = `${error.name}: ${error.message}`;
      const stack = typeof error.stack === 'string' ? error.stack.trimEnd() : '';
      return stack ? `${head}\n${stack}` : head;
    }
    return `Uncaught ${show(error)}`;
  };

  // Internal to the sandbox: how the script is started, settled and read back.
  globalThis.__kc = Object.freeze({
    start: (body) => {
      body().then(
        (value) => {
          if (value !== undefined) text(value);
          state.status = 'done';
        },
        (error) => {
          if (error === EXIT) {
            state.status = 'done';
            return;
          }
          state.status = 'failed';
          state.error = describeError(error);
        },
      );
    },
    settle: (id, ok, payload) => {
      const pending = state.pending.get(id);
      if (!pending) return;
      state.pending.delete(id);
      const value = JSON.parse(payload);
      if (ok) pending.resolve(value);
      else pending.reject(new Error(value));
    },
    status: () => state.status,
    pending: () => state.pending.size,
    result: () =>
      JSON.stringify({
        items: state.items,
        console: state.console,
        set: state.set,
        delete: [...state.deleted],
        error: state.error,
      }),
  });
})();
