// The Node layer: globals (process, console, timers, TextEncoder, AbortController, …) and
// the built-in modules extensions use, over the Rust ops. What we lack imports fine and
// throws ERR_KC_UNSUPPORTED naming the member when used.
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

  // `Buffer` is js/buffer.js's global (evaluated next; used here only inside functions).
  const decode = (data, encoding) =>
    data === null || data === undefined ? null : encoding ? data : Buffer.from(data);

  // ---- fs ----
  const text = (data) =>
    typeof data === "string" ? data : data instanceof Uint8Array ? new g.TextDecoder().decode(data) : String(data);
  const encodingOf = (options) => (typeof options === "string" ? options : options && options.encoding);
  const pathOf = (p) => (typeof p === "string" ? p : p instanceof URL ? fileURLToPath(p) : String(p));
  function Stats(s) {
    return Object.assign(
      Object.create({
        isFile() {
          return s.isFile;
        },
        isDirectory() {
          return s.isDirectory;
        },
        isSymbolicLink() {
          return s.isSymbolicLink;
        },
        isFIFO: () => false,
        isSocket: () => false,
        isBlockDevice: () => false,
        isCharacterDevice: () => false,
      }),
      {
        size: s.size,
        mode: s.mode,
        mtimeMs: s.mtimeMs,
        atimeMs: s.atimeMs,
        birthtimeMs: s.birthtimeMs,
        ctimeMs: s.mtimeMs,
        mtime: new Date(s.mtimeMs),
        atime: new Date(s.atimeMs),
        birthtime: new Date(s.birthtimeMs),
        ctime: new Date(s.mtimeMs),
      },
    );
  }
  function Dirent(d) {
    return Object.assign(
      Object.create({
        isFile() {
          return d.isFile;
        },
        isDirectory() {
          return d.isDirectory;
        },
        isSymbolicLink() {
          return d.isSymbolicLink;
        },
      }),
      { name: d.name },
    );
  }
  const fsOp = (name, args) => op(kc.fs(name, JSON.stringify(args)));
  const fsSync = {
    existsSync: (p) => {
      try {
        return fsOp("exists", { path: pathOf(p) });
      } catch {
        return false;
      }
    },
    readFileSync: (p, options) => {
      const enc = encodingOf(options);
      const data = fsOp("readFile", { path: pathOf(p), binary: !enc });
      return enc ? data : Buffer.from(data);
    },
    writeFileSync: (p, data) => {
      fsOp("writeFile", { path: pathOf(p), data: text(data) });
    },
    appendFileSync: (p, data) => {
      fsOp("writeFile", { path: pathOf(p), data: text(data), append: true });
    },
    statSync: (p, o) => {
      try {
        return Stats(fsOp("stat", { path: pathOf(p) }));
      } catch (e) {
        if (o && o.throwIfNoEntry === false && e.code === "ENOENT") return undefined;
        throw e;
      }
    },
    lstatSync: (p) => Stats(fsOp("lstat", { path: pathOf(p) })),
    readdirSync: (p, o) => {
      const list = fsOp("readdir", { path: pathOf(p) });
      return o && o.withFileTypes ? list.map(Dirent) : list.map((d) => d.name);
    },
    mkdirSync: (p, o) => {
      fsOp("mkdir", { path: pathOf(p), recursive: !!(o && o.recursive) });
      return undefined;
    },
    rmSync: (p, o) => {
      fsOp("rm", { path: pathOf(p), recursive: !!(o && o.recursive), force: !!(o && o.force) });
    },
    rmdirSync: (p, o) => {
      fsOp("rm", { path: pathOf(p), recursive: !!(o && o.recursive) });
    },
    unlinkSync: (p) => {
      fsOp("rm", { path: pathOf(p) });
    },
    renameSync: (a, b) => {
      fsOp("rename", { path: pathOf(a), to: pathOf(b) });
    },
    copyFileSync: (a, b) => {
      fsOp("copyFile", { path: pathOf(a), to: pathOf(b) });
    },
    realpathSync: (p) => fsOp("realpath", { path: pathOf(p) }),
    mkdtempSync: (prefix) => fsOp("mkdtemp", { path: prefix }),
    accessSync: (p) => {
      fsOp("stat", { path: pathOf(p) });
    },
  };
  fsSync.realpathSync.native = fsSync.realpathSync;
  const promises = {};
  for (const [name, fn] of Object.entries(fsSync)) {
    if (name === "existsSync") continue;
    promises[name.replace(/Sync$/, "")] = (...args) => {
      try {
        return Promise.resolve(fn(...args));
      } catch (e) {
        return Promise.reject(e);
      }
    };
  }
  promises.rm = promises.rm;
  const callbacks = {};
  for (const [name, fn] of Object.entries(fsSync)) {
    if (name === "existsSync") continue;
    callbacks[name.replace(/Sync$/, "")] = (...args) => {
      const cb = typeof args[args.length - 1] === "function" ? args.pop() : () => {};
      let result,
        error = null;
      try {
        result = fn(...args);
      } catch (e) {
        error = e;
      }
      g.setImmediate(() => cb(error, result));
    };
  }
  // fs.watch: the watcher's events come from `__kc.watchNext` (src/watch.rs), one pending
  // pull per watcher; a throwing listener is reported and the watcher keeps going.
  class FSWatcher extends EventEmitter {
    constructor(id) {
      super();
      this._id = id;
      this._closed = false;
    }
    close() {
      if (this._closed) return;
      this._closed = true;
      kc.watchClose(this._id);
      g.setImmediate(() => this.emit("close"));
    }
    ref() {
      return this;
    }
    unref() {
      return this;
    }
  }
  function watchOptions(options) {
    return typeof options === "string" ? { encoding: options } : options || {};
  }
  function openWatch(filename, options) {
    return op(kc.watchOpen(pathOf(filename), !!options.recursive));
  }
  function watch(filename, options, listener) {
    if (typeof options === "function") {
      listener = options;
      options = undefined;
    }
    options = watchOptions(options);
    const watcher = new FSWatcher(openWatch(filename, options));
    if (listener) watcher.on("change", listener);
    const name = (f) => (options.encoding === "buffer" ? Buffer.from(f) : f);
    if (options.signal) {
      if (options.signal.aborted) g.setImmediate(() => watcher.close());
      else options.signal.addEventListener("abort", () => watcher.close(), { once: true });
    }
    (async () => {
      while (!watcher._closed) {
        const batch = op(await kc.watchNext(watcher._id));
        if (batch.closed) break;
        for (const e of batch.events) {
          if (watcher._closed) break;
          try {
            if (e.error) watcher.emit("error", new Error(e.error));
            else watcher.emit("change", e.eventType, name(e.filename));
          } catch (error) {
            internal.reportUncaught(error);
          }
        }
      }
    })();
    return watcher;
  }
  // fs.promises.watch: an async iterator of `{eventType, filename}`.
  function watchIterator(filename, options) {
    options = watchOptions(options);
    const id = openWatch(filename, options);
    let pending = [],
      done = false,
      aborted = false;
    const close = () => {
      if (!done) {
        done = true;
        pending = [];
        kc.watchClose(id);
      }
    };
    // As in Node, an abort ends the iteration with an AbortError.
    if (options.signal)
      options.signal.addEventListener(
        "abort",
        () => {
          aborted = !done;
          close();
        },
        { once: true },
      );
    const abortError = () =>
      Object.assign(new Error("The operation was aborted"), { name: "AbortError", code: "ABORT_ERR" });
    return {
      async next() {
        while (pending.length === 0 && !done) {
          const batch = op(await kc.watchNext(id));
          if (batch.closed) done = true;
          else if (!done) pending = batch.events.filter((e) => !e.error);
        }
        if (aborted) throw abortError();
        if (pending.length > 0) return { value: pending.shift(), done: false };
        return { value: undefined, done: true };
      },
      async return() {
        close();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
  // fs.watchFile polls `stat` as Node does (default every 5007 ms) and calls the listener
  // with the current and previous stats when the modification time or size changed.
  const fileWatchers = new Map();
  function statOrEmpty(p) {
    try {
      return fsSync.statSync(p);
    } catch {
      return Stats({ size: 0, mode: 0, mtimeMs: 0, atimeMs: 0, birthtimeMs: 0 });
    }
  }
  function watchFile(filename, options, listener) {
    if (typeof options === "function") {
      listener = options;
      options = undefined;
    }
    const p = pathOf(filename);
    let entry = fileWatchers.get(p);
    if (!entry) {
      entry = { listeners: [], prev: statOrEmpty(p) };
      entry.timer = g.setInterval(
        () => {
          const curr = statOrEmpty(p);
          const prev = entry.prev;
          entry.prev = curr;
          if (curr.mtimeMs === prev.mtimeMs && curr.size === prev.size) return;
          for (const fn of [...entry.listeners]) {
            try {
              fn(curr, prev);
            } catch (error) {
              internal.reportUncaught(error);
            }
          }
        },
        (options && options.interval) || 5007,
      );
      fileWatchers.set(p, entry);
    }
    entry.listeners.push(listener);
    return {
      ref() {
        return this;
      },
      unref() {
        return this;
      },
    };
  }
  function unwatchFile(filename, listener) {
    const p = pathOf(filename);
    const entry = fileWatchers.get(p);
    if (!entry) return;
    entry.listeners = listener ? entry.listeners.filter((fn) => fn !== listener) : [];
    if (entry.listeners.length === 0) {
      g.clearInterval(entry.timer);
      fileWatchers.delete(p);
    }
  }
  promises.watch = watchIterator;
  const constants = { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1 };
  const fs = Object.assign({}, fsSync, callbacks, {
    promises,
    constants,
    Stats,
    Dirent,
    exists: (p, cb) => g.setImmediate(() => cb(fsSync.existsSync(p))),
    watch,
    watchFile,
    unwatchFile,
    FSWatcher,
    createReadStream: internal.missing("fs.createReadStream"),
    createWriteStream: internal.missing("fs.createWriteStream"),
  });
  internal.defineHost("node:fs", () => fs);
  internal.defineHost("node:fs/promises", () => Object.assign({ constants }, promises));

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
        return `${this.protocol}//${this.username ? this.username + (this.password ? ":" + this.password : "") + "@" : ""}${this.host}${this.pathname}${q ? "?" + q : ""}${this.hash}`;
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
      const file = typeof from === "string" && from.startsWith("file:") ? fileURLToPath(from) : pathOf(from);
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
          const out = Buffer.from(internal.sha256(parts));
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
