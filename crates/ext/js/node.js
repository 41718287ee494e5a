// The Node layer: globals (process, console, timers, TextEncoder, AbortController, …) and
// the built-in modules extensions use, over the Rust ops (`fs` is `fs.js`, `url` and `crypto`
// are `web.js`). What we lack imports fine and throws ERR_KC_UNSUPPORTED naming the member
// when used.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const op = internal.op;
  const os = JSON.parse(kc.os());

  // ---- path (POSIX) ----
  function normalizeString(path, allowAboveRoot) {
    const out = [];
    for (const part of path.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (out.length && out[out.length - 1] !== "..") out.pop();
        else if (allowAboveRoot) out.push("..");
      } else out.push(part);
    }
    return out.join("/");
  }
  const path = {
    sep: "/",
    delimiter: ":",
    isAbsolute: (p) => String(p).startsWith("/"),
    normalize(p) {
      p = String(p);
      if (p === "") return ".";
      const abs = p.startsWith("/");
      const trailing = p.endsWith("/");
      let out = normalizeString(p, !abs);
      if (out === "" && !abs) out = ".";
      if (out !== "" && trailing) out += "/";
      return (abs ? "/" : "") + out;
    },
    join(...parts) {
      const joined = parts
        .filter((p) => {
          if (typeof p !== "string") throw new TypeError('The "path" argument must be of type string');
          return p !== "";
        })
        .join("/");
      return joined === "" ? "." : path.normalize(joined);
    },
    resolve(...parts) {
      let resolved = "";
      for (let i = parts.length - 1; i >= -1 && !resolved.startsWith("/"); i--) {
        const p = i >= 0 ? String(parts[i]) : process.cwd();
        if (p === "") continue;
        resolved = p + (resolved ? "/" + resolved : "");
      }
      const out = "/" + normalizeString(resolved, false);
      return out;
    },
    dirname(p) {
      p = String(p);
      if (p === "") return ".";
      const trimmed = p.length > 1 ? p.replace(/\/+$/, "") : p;
      const i = trimmed.lastIndexOf("/");
      if (i === -1) return ".";
      if (i === 0) return "/";
      return trimmed.slice(0, i);
    },
    basename(p, ext) {
      p = String(p).replace(/\/+$/, "");
      let base = p.slice(p.lastIndexOf("/") + 1);
      if (ext && base.endsWith(ext) && base !== ext) base = base.slice(0, -ext.length);
      return base;
    },
    extname(p) {
      const base = path.basename(p);
      const i = base.lastIndexOf(".");
      return i <= 0 ? "" : base.slice(i);
    },
    relative(from, to) {
      const a = path.resolve(from).split("/").filter(Boolean);
      const b = path.resolve(to).split("/").filter(Boolean);
      let i = 0;
      while (i < a.length && i < b.length && a[i] === b[i]) i++;
      return [...a.slice(i).map(() => ".."), ...b.slice(i)].join("/");
    },
    parse(p) {
      const root = String(p).startsWith("/") ? "/" : "";
      const base = path.basename(p);
      const ext = path.extname(p);
      const dir = p.includes("/") ? path.dirname(p) : "";
      return { root, dir, base, ext, name: ext ? base.slice(0, -ext.length) : base };
    },
    format(o) {
      const dir = o.dir || o.root || "";
      const base = o.base || (o.name || "") + (o.ext || "");
      return dir ? (dir.endsWith("/") ? dir + base : dir + "/" + base) : base;
    },
    toNamespacedPath: (p) => p,
  };
  path.posix = path;
  internal.defineHost("node:path", () => path);
  internal.defineHost("node:path/posix", () => path);

  // ---- events ----
  class EventEmitter {
    constructor() {
      this._events = new Map();
      this._max = 10;
    }
    on(name, fn) {
      if (!this._events.has(name)) this._events.set(name, []);
      this._events.get(name).push(fn);
      return this;
    }
    addListener(name, fn) {
      return this.on(name, fn);
    }
    prependListener(name, fn) {
      if (!this._events.has(name)) this._events.set(name, []);
      this._events.get(name).unshift(fn);
      return this;
    }
    once(name, fn) {
      const w = (...a) => {
        this.off(name, w);
        fn.apply(this, a);
      };
      w.listener = fn;
      return this.on(name, w);
    }
    off(name, fn) {
      const l = this._events.get(name);
      if (l) {
        const i = l.findIndex((x) => x === fn || x.listener === fn);
        if (i >= 0) l.splice(i, 1);
      }
      return this;
    }
    removeListener(name, fn) {
      return this.off(name, fn);
    }
    removeAllListeners(name) {
      if (name === undefined) this._events.clear();
      else this._events.delete(name);
      return this;
    }
    emit(name, ...args) {
      const l = this._events.get(name);
      if (!l || l.length === 0) {
        if (name === "error") throw args[0];
        return false;
      }
      for (const fn of [...l]) fn.apply(this, args);
      return true;
    }
    listeners(name) {
      return [...(this._events.get(name) || [])].map((f) => f.listener || f);
    }
    listenerCount(name) {
      return (this._events.get(name) || []).length;
    }
    eventNames() {
      return [...this._events.keys()];
    }
    setMaxListeners(n) {
      this._max = n;
      return this;
    }
    getMaxListeners() {
      return this._max;
    }
  }
  EventEmitter.EventEmitter = EventEmitter;
  EventEmitter.default = EventEmitter;
  EventEmitter.once = (emitter, name) => new Promise((resolve) => emitter.once(name, (...a) => resolve(a)));
  internal.defineHost("node:events", () => EventEmitter);

  // ---- timers ----
  let nextTimer = 1;
  const timers = new Map();
  class Timeout {
    constructor(id) {
      this.id = id;
    }
    ref() {
      return this;
    }
    unref() {
      return this;
    }
    hasRef() {
      return true;
    }
    refresh() {
      return this;
    }
    [Symbol.toPrimitive]() {
      return this.id;
    }
  }
  function schedule(fn, ms, args, repeat) {
    if (typeof fn !== "function") throw new TypeError('The "callback" argument must be of type function');
    const id = nextTimer++;
    const handle = new Timeout(id);
    timers.set(id, true);
    const delay = Math.max(0, Number(ms) || 0);
    const tick = () => {
      kc.sleep(delay).then(() => {
        if (!timers.has(id)) return;
        if (!repeat) timers.delete(id);
        try {
          fn(...args);
        } catch (e) {
          internal.reportUncaught(e);
        }
        if (repeat && timers.has(id)) tick();
      });
    };
    tick();
    return handle;
  }
  function clear(handle) {
    if (handle != null) timers.delete(typeof handle === "object" ? handle.id : handle);
  }
  g.setTimeout = (fn, ms, ...args) => schedule(fn, ms, args, false);
  g.setInterval = (fn, ms, ...args) => schedule(fn, ms, args, true);
  g.setImmediate = (fn, ...args) => schedule(fn, 0, args, false);
  g.clearTimeout = clear;
  g.clearInterval = clear;
  g.clearImmediate = clear;
  if (typeof g.queueMicrotask !== "function") g.queueMicrotask = (fn) => Promise.resolve().then(fn);
  const timersPromises = {
    setTimeout: (ms, value) => new Promise((resolve) => g.setTimeout(() => resolve(value), ms)),
    setImmediate: (value) => new Promise((resolve) => g.setImmediate(() => resolve(value))),
  };
  internal.defineHost("node:timers", () => ({
    setTimeout: g.setTimeout,
    setInterval: g.setInterval,
    setImmediate: g.setImmediate,
    clearTimeout: clear,
    clearInterval: clear,
    clearImmediate: clear,
    promises: timersPromises,
  }));
  internal.defineHost("node:timers/promises", () => timersPromises);

  // ---- console (stderr: stdout belongs to the protocol) ----
  function inspect(value, depth = 2) {
    if (typeof value === "string") return value;
    if (value instanceof Error) return value.stack ? `${value.name}: ${value.message}\n${value.stack}` : String(value);
    if (typeof value === "function") return `[Function: ${value.name || "anonymous"}]`;
    if (value === undefined) return "undefined";
    try {
      return JSON.stringify(value, null, depth > 0 ? 2 : 0) ?? String(value);
    } catch {
      return String(value);
    }
  }
  function format(fmt, ...args) {
    if (typeof fmt !== "string") return [fmt, ...args].map((v) => inspect(v)).join(" ");
    let i = 0;
    let out = fmt.replace(/%[sdifjoO%]/g, (m) => {
      if (m === "%%") return "%";
      if (i >= args.length) return m;
      const v = args[i++];
      switch (m) {
        case "%s":
          return typeof v === "string" ? v : inspect(v);
        case "%d":
        case "%i":
          return String(parseInt(v, 10));
        case "%f":
          return String(parseFloat(v));
        case "%j":
          return JSON.stringify(v);
        default:
          return inspect(v);
      }
    });
    for (; i < args.length; i++) out += " " + inspect(args[i]);
    return out;
  }
  const print = (...args) => kc.print(format(...args) + "\n");
  g.console = {
    log: print,
    info: print,
    warn: print,
    error: print,
    debug: print,
    trace: print,
    dir: (v) => print(inspect(v)),
    table: print,
    time() {},
    timeEnd() {},
    group() {},
    groupEnd() {},
    assert(c, ...m) {
      if (!c) print("Assertion failed", ...m);
    },
  };
  internal.defineHost("node:console", () => g.console);

  // ---- text, base64, structuredClone, AbortController ----
  if (typeof g.TextEncoder !== "function") {
    g.TextEncoder = class TextEncoder {
      get encoding() {
        return "utf-8";
      }
      encode(text = "") {
        const s = unescape(encodeURIComponent(String(text)));
        const out = new Uint8Array(s.length);
        for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
        return out;
      }
    };
  }
  if (typeof g.TextDecoder !== "function") {
    g.TextDecoder = class TextDecoder {
      get encoding() {
        return "utf-8";
      }
      decode(bytes) {
        if (!bytes) return "";
        const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes.buffer || bytes);
        let s = "";
        for (let i = 0; i < view.length; i++) s += String.fromCharCode(view[i]);
        try {
          return decodeURIComponent(escape(s));
        } catch {
          return s;
        }
      }
    };
  }
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (typeof g.btoa !== "function") {
    g.btoa = function (input) {
      const s = String(input);
      let out = "";
      for (let i = 0; i < s.length; i += 3) {
        const a = s.charCodeAt(i),
          b = s.charCodeAt(i + 1),
          c = s.charCodeAt(i + 2);
        const n = (a << 16) | ((b || 0) << 8) | (c || 0);
        out +=
          B64[(n >> 18) & 63] +
          B64[(n >> 12) & 63] +
          (i + 1 < s.length ? B64[(n >> 6) & 63] : "=") +
          (i + 2 < s.length ? B64[n & 63] : "=");
      }
      return out;
    };
    g.atob = function (input) {
      const s = String(input).replace(/[^A-Za-z0-9+/]/g, "");
      let out = "";
      for (let i = 0; i < s.length; i += 4) {
        const n =
          (B64.indexOf(s[i]) << 18) |
          (B64.indexOf(s[i + 1]) << 12) |
          ((B64.indexOf(s[i + 2]) & 63) << 6) |
          (B64.indexOf(s[i + 3]) & 63);
        out += String.fromCharCode((n >> 16) & 255);
        if (s[i + 2] !== undefined) out += String.fromCharCode((n >> 8) & 255);
        if (s[i + 3] !== undefined) out += String.fromCharCode(n & 255);
      }
      return out;
    };
  }
  if (typeof g.structuredClone !== "function")
    g.structuredClone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
  if (typeof g.performance !== "object") {
    const origin = Date.now() - kc.now();
    g.performance = { now: () => kc.now(), timeOrigin: origin };
  }
  function abortError(reason) {
    const e = new Error("This operation was aborted");
    e.name = "AbortError";
    e.code = "ABORT_ERR";
    if (reason !== undefined) e.cause = reason;
    return e;
  }
  class AbortSignal {
    constructor() {
      this.aborted = false;
      this.reason = undefined;
      this._listeners = [];
      this.onabort = null;
    }
    addEventListener(type, fn, opts) {
      if (type === "abort") this._listeners.push({ fn, once: opts && opts.once });
    }
    removeEventListener(type, fn) {
      this._listeners = this._listeners.filter((l) => l.fn !== fn);
    }
    throwIfAborted() {
      if (this.aborted) throw this.reason;
    }
    _abort(reason) {
      if (this.aborted) return;
      this.aborted = true;
      this.reason = reason === undefined ? abortError() : reason;
      const event = { type: "abort", target: this };
      if (typeof this.onabort === "function") {
        try {
          this.onabort(event);
        } catch (e) {
          internal.reportUncaught(e);
        }
      }
      for (const l of this._listeners.splice(0)) {
        try {
          l.fn.call(this, event);
        } catch (e) {
          internal.reportUncaught(e);
        }
      }
    }
    static abort(reason) {
      const s = new AbortSignal();
      s._abort(reason);
      return s;
    }
    static timeout(ms) {
      const s = new AbortSignal();
      g.setTimeout(() => {
        const e = new Error("The operation was aborted due to timeout");
        e.name = "TimeoutError";
        s._abort(e);
      }, ms);
      return s;
    }
    static any(signals) {
      const s = new AbortSignal();
      for (const o of signals) {
        if (o.aborted) {
          s._abort(o.reason);
          break;
        }
        o.addEventListener("abort", () => s._abort(o.reason));
      }
      return s;
    }
  }
  class AbortController {
    constructor() {
      this.signal = new AbortSignal();
    }
    abort(reason) {
      this.signal._abort(reason);
    }
  }
  g.AbortSignal = AbortSignal;
  g.AbortController = AbortController;
  internal.abortError = abortError;

  // ---- process ----
  const env = os.env;
  let cwd = os.cwd || "/";
  const stdio = (fd) => ({
    isTTY: false,
    columns: 80,
    rows: 24,
    fd,
    write(chunk) {
      kc.print(String(chunk));
      return true;
    },
    on() {
      return this;
    },
    once() {
      return this;
    },
    off() {
      return this;
    },
  });
  const processEmitter = new EventEmitter();
  const process = Object.assign(processEmitter, {
    env,
    argv: [os.execPath || "knightcode", "/$bunfs/root/knightcode"],
    execArgv: [],
    execPath: os.execPath || "knightcode",
    platform: os.platform,
    arch: os.arch,
    pid: os.pid,
    ppid: 0,
    version: "v20.0.0",
    versions: { node: "20.0.0", knightcode: "0.1.0" },
    release: { name: "node" },
    exitCode: undefined,
    cwd: () => cwd,
    chdir: (dir) => {
      cwd = path.resolve(dir);
    },
    hrtime: Object.assign(
      (prev) => {
        let ns = Math.floor(g.performance.now() * 1e6);
        if (prev) ns -= prev[0] * 1e9 + prev[1];
        return [Math.floor(ns / 1e9), ns % 1e9];
      },
      { bigint: () => BigInt(Math.floor(g.performance.now() * 1e6)) },
    ),
    uptime: () => g.performance.now() / 1000,
    memoryUsage: () => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }),
    nextTick: (fn, ...args) => {
      Promise.resolve().then(() => fn(...args));
    },
    emitWarning: (w) => kc.print(`Warning: ${w instanceof Error ? w.message : w}\n`),
    exit: () => {
      throw internal.unsupported("process.exit");
    },
    // `kill(pid, 0)` asks whether the process lives, as extensions that keep registries of
    // agents by pid do; a negative pid signals a process group.
    kill(pid, signal = "SIGTERM") {
      if (!Number.isInteger(Number(pid))) throw new TypeError('The "pid" argument must be of type number');
      return op(kc.kill(Number(pid), JSON.stringify(signal)));
    },
    stdout: stdio(1),
    stderr: stdio(2),
    stdin: {
      isTTY: false,
      fd: 0,
      on() {
        return this;
      },
      once() {
        return this;
      },
      off() {
        return this;
      },
      resume() {},
      pause() {},
      setRawMode() {},
    },
    umask: () => 0o22,
    getuid: () => 0,
    getgid: () => 0,
  });
  g.process = process;
  // Node's old name for the global object (CommonJS code such as cross-spawn's reads it).
  if (typeof g.global !== "object") g.global = g;
  internal.defineHost("node:process", () => process);

  // ---- os ----
  internal.defineHost("node:os", () => ({
    homedir: () => env.HOME || os.home || "/",
    tmpdir: () => os.tmpdir,
    platform: () => os.platform,
    arch: () => os.arch,
    hostname: () => os.hostname,
    type: () => (os.platform === "darwin" ? "Darwin" : os.platform === "win32" ? "Windows_NT" : "Linux"),
    release: () => "",
    EOL: "\n",
    cpus: () => [],
    totalmem: () => 0,
    freemem: () => 0,
    userInfo: () => ({
      username: env.USER || "user",
      homedir: env.HOME || os.home || "/",
      shell: env.SHELL || null,
      uid: 0,
      gid: 0,
    }),
    networkInterfaces: () => ({}),
  }));

  // ---- util ----
  const promisify = (fn) => {
    if (typeof fn !== "function") throw new TypeError('The "original" argument must be of type function');
    if (fn[promisify.custom]) return fn[promisify.custom];
    return (...args) =>
      new Promise((resolve, reject) =>
        fn(...args, (err, ...values) => (err ? reject(err) : resolve(values.length > 1 ? values : values[0]))),
      );
  };
  promisify.custom = Symbol.for("nodejs.util.promisify.custom");
  const util = {
    promisify,
    format,
    inspect,
    inherits(ctor, superCtor) {
      Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
      Object.setPrototypeOf(ctor, superCtor);
    },
    deprecate: (fn) => fn,
    // Logs to stderr when NODE_DEBUG names the section, as Node does; silent otherwise.
    debuglog(section) {
      const wanted = String(g.process.env.NODE_DEBUG || "")
        .split(/[\s,]+/)
        .some(
          (s) =>
            s && new RegExp(`^${s.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`, "i").test(section),
        );
      const log = (...args) => {
        if (wanted) g.process.stderr.write(`${String(section).toUpperCase()} ${g.process.pid}: ${format(...args)}\n`);
      };
      log.enabled = wanted;
      return log;
    },
    isDeepStrictEqual: (a, b) => JSON.stringify(a) === JSON.stringify(b),
    types: {
      isPromise: (v) => v instanceof Promise,
      isDate: (v) => v instanceof Date,
      isRegExp: (v) => v instanceof RegExp,
    },
    TextEncoder: g.TextEncoder,
    TextDecoder: g.TextDecoder,
    stripVTControlCharacters: (s) => String(s).replace(/\x1b\[[0-9;]*[A-Za-z]/g, ""),
  };
  internal.defineHost("node:util", () => util);
  internal.defineHost("node:util/types", () => util.types);

  // ---- module ----
  internal.defineHost("node:module", () => ({
    createRequire(from) {
      const url = (typeof from === "string" && from.startsWith("file:")) || from instanceof g.URL;
      const file = url ? internal.hostModule("node:url").fileURLToPath(from) : String(from);
      return internal.makeRequire(path.dirname(file), file);
    },
    builtinModules: [
      "fs",
      "path",
      "os",
      "child_process",
      "util",
      "events",
      "url",
      "module",
      "process",
      "buffer",
      "timers",
    ],
  }));

  // ---- assert ----
  const assert = (value, message) => {
    if (!value) {
      const e = new Error(message || "The expression evaluated to a falsy value");
      e.code = "ERR_ASSERTION";
      throw e;
    }
  };
  assert.ok = assert;
  assert.equal = (a, b, m) => assert(a == b, m || `${a} == ${b}`);
  assert.strictEqual = (a, b, m) => assert(a === b, m || `${a} === ${b}`);
  assert.deepStrictEqual = (a, b, m) =>
    assert(JSON.stringify(a) === JSON.stringify(b), m || "values are not deeply equal");
  internal.defineHost("node:assert", () => assert);
})(globalThis);
