// Web and Node globals beyond the Node layer (`node.js`) that npm packages reach for:
// `Intl.Segmenter`, the DOM event classes, `node:async_hooks`, `node:diagnostics_channel`,
// `node:worker_threads`, `URL` with `node:url`, and `crypto` with `node:crypto` (its SHA-256
// in plain JS). Evaluated after `node.js` (`node:path`) and `buffer.js` (`Buffer`).
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const path = internal.hostModule("node:path");

  // ---- Intl: QuickJS has none. Extensions truncate text by grapheme with
  // `new Intl.Segmenter(undefined, { granularity: "grapheme" })`; the segments are the
  // terminal's own (`__kc.tui.graphemes`), an escape sequence split into its characters as
  // Intl does. Other granularities throw ERR_KC_UNSUPPORTED; other Intl classes are absent.
  if (typeof g.Intl !== "object") {
    class Segmenter {
      constructor(locales, options) {
        const granularity = (options && options.granularity) || "grapheme";
        if (granularity !== "grapheme")
          throw internal.unsupported(`Intl.Segmenter({ granularity: "${granularity}" })`);
        this.granularity = granularity;
      }
      resolvedOptions() {
        return { locale: "en-US", granularity: this.granularity };
      }
      segment(input) {
        const text = String(input);
        const segments = [];
        let index = 0;
        for (const part of kc.tui.graphemes(text)) {
          for (const segment of part.startsWith("\x1b") ? Array.from(part) : [part]) {
            segments.push({ segment, index, input: text });
            index += segment.length;
          }
        }
        return {
          [Symbol.iterator]: () => segments[Symbol.iterator](),
          containing(at = 0) {
            const i = Number(at);
            return segments.find((s) => i >= s.index && i < s.index + s.segment.length);
          },
        };
      }
      static supportedLocalesOf() {
        return ["en-US"];
      }
    }
    g.Intl = { Segmenter };
  }

  // The DOM event globals Node has (MCP's SDK builds on them): listeners by type, `once`,
  // `handleEvent` objects, `preventDefault`; no capture or bubbling (nothing nests).
  if (typeof g.Event !== "function") {
    g.Event = class Event {
      constructor(type, init) {
        if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
        this.type = String(type);
        this.bubbles = !!(init && init.bubbles);
        this.cancelable = !!(init && init.cancelable);
        this.defaultPrevented = false;
        this.timeStamp = g.performance ? g.performance.now() : Date.now();
        this.target = null;
        this.currentTarget = null;
      }
      preventDefault() {
        if (this.cancelable) this.defaultPrevented = true;
      }
      stopPropagation() {}
      stopImmediatePropagation() {
        this._stopped = true;
      }
    };
    g.CustomEvent = class CustomEvent extends g.Event {
      constructor(type, init) {
        super(type, init);
        this.detail = init && init.detail !== undefined ? init.detail : null;
      }
    };
    g.EventTarget = class EventTarget {
      addEventListener(type, listener, options) {
        if (!listener) return;
        const map = this._kcListeners || (this._kcListeners = new Map());
        const list = map.get(type) || [];
        if (list.some((l) => l.listener === listener)) return;
        list.push({ listener, once: !!(options && typeof options === "object" && options.once) });
        map.set(type, list);
        const signal = options && options.signal;
        if (signal) signal.addEventListener("abort", () => this.removeEventListener(type, listener), { once: true });
      }
      removeEventListener(type, listener) {
        const list = this._kcListeners && this._kcListeners.get(type);
        if (list)
          this._kcListeners.set(
            type,
            list.filter((l) => l.listener !== listener),
          );
      }
      dispatchEvent(event) {
        event.target = event.currentTarget = this;
        const list = ((this._kcListeners && this._kcListeners.get(event.type)) || []).slice();
        for (const l of list) {
          if (l.once) this.removeEventListener(event.type, l.listener);
          if (typeof l.listener === "function") l.listener.call(this, event);
          else l.listener.handleEvent(event);
          if (event._stopped) break;
        }
        return !event.defaultPrevented;
      }
    };
  }

  // ---- async_hooks: AsyncLocalStorage without async context (QuickJS has none). The store
  // is what `run` set while its callback runs synchronously; after the callback's first
  // `await` it is the one outside again. Enough for extensions that scope a setting around
  // a call and treat a missing store as "not set" (pi-web-access's proxy).
  class AsyncLocalStorage {
    constructor() {
      this.store = undefined;
      this.enabled = true;
    }
    getStore() {
      return this.enabled ? this.store : undefined;
    }
    run(store, callback, ...args) {
      const outer = this.store;
      this.store = store;
      try {
        return callback(...args);
      } finally {
        this.store = outer;
      }
    }
    exit(callback, ...args) {
      return this.run(undefined, callback, ...args);
    }
    enterWith(store) {
      this.store = store;
    }
    disable() {
      this.enabled = false;
      this.store = undefined;
    }
    static bind(fn) {
      return fn;
    }
    static snapshot() {
      return (fn, ...args) => fn(...args);
    }
  }
  internal.defineHost("node:async_hooks", () => ({
    AsyncLocalStorage,
    AsyncResource: internal.missing("async_hooks.AsyncResource"),
    createHook: internal.missing("async_hooks.createHook"),
    executionAsyncId: () => 0,
    triggerAsyncId: () => 0,
  }));

  // ---- diagnostics_channel: named channels that libraries publish to (undici does at load);
  // subscribers get what is published, as in Node. No tracing of our own.
  const channels = new Map();
  class Channel {
    constructor(name) {
      this.name = name;
      this.subscribers = [];
    }
    get hasSubscribers() {
      return this.subscribers.length > 0;
    }
    publish(message) {
      for (const fn of [...this.subscribers]) {
        try {
          fn(message, this.name);
        } catch (e) {
          internal.reportUncaught(e);
        }
      }
    }
    subscribe(fn) {
      this.subscribers.push(fn);
    }
    unsubscribe(fn) {
      const i = this.subscribers.indexOf(fn);
      if (i >= 0) this.subscribers.splice(i, 1);
      return i >= 0;
    }
    bindStore() {}
    unbindStore() {
      return false;
    }
    runStores(_data, fn, self, ...args) {
      return fn.apply(self, args);
    }
  }
  const channel = (name) => {
    if (!channels.has(name)) channels.set(name, new Channel(name));
    return channels.get(name);
  };
  const tracingChannel = (name) => {
    const parts = ["start", "end", "asyncStart", "asyncEnd", "error"].map((event) => [
      event,
      channel(`tracing:${name}:${event}`),
    ]);
    const traced = Object.fromEntries(parts);
    return Object.assign(traced, {
      get hasSubscribers() {
        return parts.some(([, c]) => c.hasSubscribers);
      },
      subscribe(handlers) {
        for (const [event, c] of parts) if (handlers[event]) c.subscribe(handlers[event]);
      },
      unsubscribe(handlers) {
        for (const [event, c] of parts) if (handlers[event]) c.unsubscribe(handlers[event]);
      },
      traceSync: (fn, _context, self, ...args) => fn.apply(self, args),
      tracePromise: (fn, _context, self, ...args) => fn.apply(self, args),
      traceCallback: (fn, _position, _context, self, ...args) => fn.apply(self, args),
    });
  };
  internal.defineHost("node:diagnostics_channel", () => ({
    channel,
    tracingChannel,
    Channel,
    hasSubscribers: (name) => channels.has(name) && channels.get(name).hasSubscribers,
    subscribe: (name, fn) => channel(name).subscribe(fn),
    unsubscribe: (name, fn) => channel(name).unsubscribe(fn),
  }));

  // ---- worker_threads: we run one JS thread, the main one; no Worker.
  const environmentData = new Map();
  internal.defineHost("node:worker_threads", () => ({
    isMainThread: true,
    parentPort: null,
    workerData: null,
    threadId: 0,
    resourceLimits: {},
    SHARE_ENV: Symbol.for("nodejs.worker_threads.SHARE_ENV"),
    markAsUncloneable() {},
    markAsUntransferable() {},
    getEnvironmentData: (key) => environmentData.get(key),
    setEnvironmentData: (key, value) =>
      value === undefined ? environmentData.delete(key) : environmentData.set(key, value),
    Worker: internal.missing("worker_threads.Worker"),
    MessageChannel: internal.missing("worker_threads.MessageChannel"),
    MessagePort: internal.missing("worker_threads.MessagePort"),
    BroadcastChannel: internal.missing("worker_threads.BroadcastChannel"),
  }));

  // ---- url ----
  function fileURLToPath(url) {
    const s = typeof url === "string" ? url : url.href;
    if (!s.startsWith("file://")) {
      const e = new TypeError("The URL must be of scheme file");
      e.code = "ERR_INVALID_URL_SCHEME";
      throw e;
    }
    return decodeURIComponent(s.slice(7).replace(/^[^/]*/, ""));
  }
  const pathToFileURL = (p) => new URL(internal.fileUrl(path.resolve(p)));
  if (typeof g.URL !== "function") {
    class URLSearchParams {
      constructor(init) {
        this._list = [];
        if (typeof init === "string") {
          for (const part of init.replace(/^\?/, "").split("&"))
            if (part) {
              const [k, v = ""] = part.split("=");
              this._list.push([decodeURIComponent(k.replace(/\+/g, " ")), decodeURIComponent(v.replace(/\+/g, " "))]);
            }
        } else if (init && typeof init === "object") {
          for (const [k, v] of Array.isArray(init) ? init : Object.entries(init))
            this._list.push([String(k), String(v)]);
        }
      }
      append(k, v) {
        this._list.push([String(k), String(v)]);
      }
      set(k, v) {
        this.delete(k);
        this.append(k, v);
      }
      get(k) {
        const e = this._list.find((x) => x[0] === k);
        return e ? e[1] : null;
      }
      getAll(k) {
        return this._list.filter((x) => x[0] === k).map((x) => x[1]);
      }
      has(k) {
        return this._list.some((x) => x[0] === k);
      }
      delete(k) {
        this._list = this._list.filter((x) => x[0] !== k);
      }
      entries() {
        return this._list[Symbol.iterator]();
      }
      keys() {
        return this._list.map((x) => x[0])[Symbol.iterator]();
      }
      values() {
        return this._list.map((x) => x[1])[Symbol.iterator]();
      }
      forEach(fn) {
        for (const [k, v] of this._list) fn(v, k, this);
      }
      [Symbol.iterator]() {
        return this.entries();
      }
      toString() {
        return this._list.map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v)).join("&");
      }
    }
    class URL {
      constructor(input, base) {
        let s = String(input);
        if (base !== undefined && !/^[a-z][a-z0-9+.-]*:/i.test(s)) {
          const b = new URL(base);
          s = s.startsWith("/")
            ? `${b.protocol}//${b.host}${s}`
            : `${b.protocol}//${b.host}${b.pathname.replace(/[^/]*$/, "")}${s}`;
        }
        const m = /^([a-z][a-z0-9+.-]*:)(\/\/([^/?#@]*@)?([^/?#:]*)(:\d+)?)?([^?#]*)(\?[^#]*)?(#.*)?$/i.exec(s);
        if (!m) {
          const e = new TypeError(`Invalid URL: ${s}`);
          e.code = "ERR_INVALID_URL";
          throw e;
        }
        this.protocol = m[1].toLowerCase();
        this.username = m[3] ? m[3].slice(0, -1).split(":")[0] : "";
        this.password = m[3] && m[3].includes(":") ? m[3].slice(0, -1).split(":")[1] : "";
        this.hostname = m[4] || "";
        this.port = m[5] ? m[5].slice(1) : "";
        this.pathname = path.normalize(m[6] || "/").replace(/^\.$/, "/") || "/";
        this.search = m[7] && m[7] !== "?" ? m[7] : "";
        this.hash = m[8] && m[8] !== "#" ? m[8] : "";
        this.searchParams = new URLSearchParams(this.search);
      }
      get host() {
        return this.hostname + (this.port ? ":" + this.port : "");
      }
      get origin() {
        return `${this.protocol}//${this.host}`;
      }
      get href() {
        const q = this.searchParams.toString();
        const user = this.username ? this.username + (this.password ? ":" + this.password : "") + "@" : "";
        return `${this.protocol}//${user}${this.host}${this.pathname}${q ? "?" + q : ""}${this.hash}`;
      }
      toString() {
        return this.href;
      }
      toJSON() {
        return this.href;
      }
    }
    g.URL = URL;
    g.URLSearchParams = URLSearchParams;
  }
  internal.defineHost("node:url", () => ({
    URL: g.URL,
    URLSearchParams: g.URLSearchParams,
    fileURLToPath,
    pathToFileURL,
  }));

  // ---- crypto (what needs no native code) ----
  const crypto = {
    randomUUID() {
      const h = [];
      for (let i = 0; i < 16; i++) h.push(Math.floor(Math.random() * 256));
      h[6] = (h[6] & 0x0f) | 0x40;
      h[8] = (h[8] & 0x3f) | 0x80;
      const x = h.map((b) => b.toString(16).padStart(2, "0")).join("");
      return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
    },
    getRandomValues(array) {
      for (let i = 0; i < array.length; i++) array[i] = Math.floor(Math.random() * 256);
      return array;
    },
    randomBytes(n) {
      return crypto.getRandomValues(Buffer.alloc(n));
    },
    createHash(algorithm) {
      const name = String(algorithm).toLowerCase().replace("-", "");
      if (name !== "sha256") throw internal.unsupported(`crypto.createHash("${algorithm}")`);
      const parts = [];
      const hash = {
        update(data, encoding) {
          parts.push(
            typeof data === "string"
              ? Buffer.from(data, encoding)
              : new Uint8Array(data.buffer || data, data.byteOffset || 0, data.byteLength),
          );
          return hash;
        },
        digest(encoding) {
          const out = Buffer.from(sha256(parts));
          if (encoding === "base64url")
            return out.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
          return encoding ? out.toString(encoding) : out;
        },
        copy() {
          const c = crypto.createHash(algorithm);
          for (const p of parts) c.update(p);
          return c;
        },
      };
      return hash;
    },
  };
  if (typeof g.crypto !== "object")
    g.crypto = { randomUUID: crypto.randomUUID, getRandomValues: crypto.getRandomValues };
  internal.defineHost("node:crypto", () => crypto);

  // SHA-256 (FIPS 180-4) of byte arrays, for `createHash("sha256")`: extensions name caches
  // and runs by it. Plain JS: the inputs are small (keys, pages), not files.
  const SHA256_K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
  ]);
  function sha256(parts) {
    const length = parts.reduce((n, p) => n + p.length, 0);
    const padded = new Uint8Array(Math.ceil((length + 9) / 64) * 64);
    let at = 0;
    for (const p of parts) {
      padded.set(p, at);
      at += p.length;
    }
    padded[length] = 0x80;
    const view = new DataView(padded.buffer);
    view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
    view.setUint32(padded.length - 4, (length * 8) >>> 0);
    const h = new Uint32Array([
      0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]);
    const w = new Uint32Array(64);
    const rotr = (x, n) => (x >>> n) | (x << (32 - n));
    for (let block = 0; block < padded.length; block += 64) {
      for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + i * 4);
      for (let i = 16; i < 64; i++) {
        const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
        const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
      }
      let [a, b, c, d, e, f, g2, hh] = h;
      for (let i = 0; i < 64; i++) {
        const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g2)) + SHA256_K[i] + w[i]) >>> 0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
        hh = g2;
        g2 = f;
        f = e;
        e = (d + t1) >>> 0;
        d = c;
        c = b;
        b = a;
        a = (t1 + t2) >>> 0;
      }
      h[0] += a;
      h[1] += b;
      h[2] += c;
      h[3] += d;
      h[4] += e;
      h[5] += f;
      h[6] += g2;
      h[7] += hh;
    }
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i]);
    return out;
  }
})(globalThis);
