// `node:fs` and `node:fs/promises` over the `__kc.fs` op, with `fs.watch` (`__kc.watch*`,
// src/watch.rs) and `fs.watchFile` (polling `stat`). Evaluated after `web.js` (`node:url`).
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const op = internal.op;
  const EventEmitter = internal.hostModule("node:events");
  const { fileURLToPath } = internal.hostModule("node:url");

  const text = (data) =>
    typeof data === "string" ? data : data instanceof Uint8Array ? new g.TextDecoder().decode(data) : String(data);
  const encodingOf = (options) => (typeof options === "string" ? options : options && options.encoding);
  const pathOf = (p) => (typeof p === "string" ? p : p instanceof URL ? fileURLToPath(p) : String(p));
  // How Node's file and process functions read their arguments; child_process.js uses them too.
  internal.nodeArgs = { text, encodingOf, pathOf };
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
})(globalThis);
