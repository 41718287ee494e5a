// The module runner: ES modules (stripped to the module-runner form by oxc) and CommonJS
// files evaluated by us, with jiti's interop: importing a name a module lacks reads
// `undefined`, `require()` works inside ES modules, `import x from "cjs"` is
// `module.exports`, `require(esm)` is the namespace with `__esModule: true`.
(function (g) {
  "use strict";
  const kc = g.__kc;
  delete g.__kc;
  const internal = Object.create(null);
  Object.defineProperty(g, "__kcInternal", {
    value: internal,
    enumerable: false,
    configurable: false,
    writable: false,
  });
  internal.kc = kc;

  function fail(error) {
    const e = new Error(error.message);
    e.code = error.code;
    if (error.syscall) e.syscall = error.syscall;
    if (error.path) e.path = error.path;
    if (error.spawnargs) e.spawnargs = error.spawnargs;
    if (typeof error.errno === "number") e.errno = error.errno;
    else if (error.code === "ENOENT") e.errno = -2;
    if (error.code === "ERR_UNKNOWN_SIGNAL" || error.code === "ERR_INVALID_ARG_TYPE")
      Object.setPrototypeOf(e, TypeError.prototype);
    return e;
  }
  function op(text) {
    const r = JSON.parse(text);
    if (r.error) throw fail(r.error);
    return r.ok;
  }
  internal.op = op;
  internal.fail = fail;

  function unsupported(what) {
    const e = new Error(`${what} is not supported by KnightCode yet`);
    e.code = "ERR_KC_UNSUPPORTED";
    return e;
  }
  internal.unsupported = unsupported;
  // A function standing for an export we lack: importing it works, using it throws.
  internal.missing = function (what) {
    const f = function () {
      throw unsupported(what);
    };
    return f;
  };

  const hosts = new Map();
  internal.defineHost = function (id, factory) {
    hosts.set(id, { factory, exports: undefined });
  };
  function hostModule(id) {
    const entry = hosts.get(id);
    if (!entry) {
      // A real built-in we do not have: it imports, and every member throws when used.
      const name = id.replace(/^node:/, "");
      return new Proxy(
        {},
        {
          get(_, key) {
            if (typeof key === "symbol" || key === "then" || key === "__esModule") return undefined;
            if (key === "default") return this;
            return internal.missing(`${name}.${String(key)}`);
          },
        },
      );
    }
    if (entry.exports === undefined) {
      entry.exports = entry.factory();
      if (entry.exports && typeof entry.exports === "object" && !("default" in entry.exports)) {
        Object.defineProperty(entry.exports, "default", { value: entry.exports, enumerable: false });
      }
    }
    return entry.exports;
  }
  internal.hostModule = hostModule;

  function dirname(path) {
    const i = path.lastIndexOf("/");
    return i <= 0 ? "/" : path.slice(0, i);
  }
  internal.dirname = dirname;
  function fileUrl(path) {
    return "file://" + encodeURI(path).replace(/[?#]/g, encodeURIComponent);
  }
  internal.fileUrl = fileUrl;

  function resolve(specifier, fromDir, importer) {
    if (typeof specifier !== "string") throw new TypeError("The module specifier must be a string");
    return op(kc.resolve(specifier, fromDir, importer));
  }

  const records = new Map();
  internal.records = records;

  function cjsNamespace(record) {
    if (record.namespace) return record.namespace;
    const value = record.module.exports;
    if (value && value.__esModule) return (record.namespace = value);
    const ns = Object.create(null);
    if (value && (typeof value === "object" || typeof value === "function")) {
      for (const key of Object.keys(value)) {
        // `default` is `module.exports` itself, as in Node, even when the exports carry a
        // `default` key of their own (elkjs: `module.exports = ELK; ELK.default = ELK`).
        if (key === "default") continue;
        Object.defineProperty(ns, key, { enumerable: true, get: () => record.module.exports[key] });
      }
    }
    Object.defineProperty(ns, "default", { enumerable: true, get: () => record.module.exports });
    return (record.namespace = ns);
  }

  function namespaceOf(record) {
    return record.esm ? record.exports : cjsNamespace(record);
  }

  function makeRequire(fromDir, importer) {
    const require = function (specifier) {
      const target = resolve(specifier, fromDir, importer);
      if (target.host) return hostModule(target.host);
      const record = load(target.file);
      return record.esm ? record.exports : record.module.exports;
    };
    require.resolve = function (specifier) {
      const target = resolve(specifier, fromDir, importer);
      return target.host ? target.host.replace(/^node:/, "") : target.file;
    };
    require.cache = Object.create(null);
    return require;
  }
  internal.makeRequire = makeRequire;

  function importFrom(fromDir, importer) {
    return function (specifier) {
      const target = resolve(specifier, fromDir, importer);
      if (target.host) return hostModule(target.host);
      const record = load(target.file);
      return namespaceOf(record);
    };
  }

  // Loads and evaluates a file once (a cycle sees the partial exports, as in CommonJS).
  function load(path) {
    const known = records.get(path);
    if (known) return known;
    // `{json}`, or `{module, tla, fn}` with the wrapper function (from the load cache's
    // bytecode when it has the file); a failure is JSON text to throw.
    const loaded = kc.loadFile(path);
    const info = typeof loaded === "string" ? op(loaded) : loaded;
    const dir = dirname(path);
    const module = { exports: {}, id: path, filename: path, path: dir, loaded: false, children: [], paths: [] };
    const record = { path, esm: false, module, exports: undefined, namespace: undefined, evaluation: undefined };
    records.set(path, record);
    const require = makeRequire(dir, path);
    module.require = require;
    try {
      if (info.json !== undefined) {
        module.exports = JSON.parse(info.json);
      } else if (!info.module) {
        const fn = info.fn;
        fn.call(module.exports, module.exports, require, module, path, dir);
      } else {
        record.esm = true;
        const exports = Object.create(null);
        Object.defineProperty(exports, "__esModule", { value: true, enumerable: false });
        Object.defineProperty(exports, Symbol.toStringTag, { value: "Module", enumerable: false });
        record.exports = exports;
        module.exports = exports;
        const outer = info.fn;
        const body = outer(require, module, exports, path, dir);
        const meta = {
          url: fileUrl(path),
          filename: path,
          dirname: dir,
          resolve(specifier) {
            const target = resolve(specifier, dir, path);
            return target.host ? target.host : fileUrl(target.file);
          },
        };
        const exportAll = function (ns) {
          for (const key of Object.keys(ns)) {
            if (key === "default" || key in exports) continue;
            Object.defineProperty(exports, key, { enumerable: true, configurable: true, get: () => ns[key] });
          }
        };
        const importer = importFrom(dir, path);
        const dynamicImport = function (specifier) {
          try {
            const ns = importer(specifier);
            const target = records.get(resolve(specifier, dir, path).file);
            return target && target.evaluation ? target.evaluation.then(() => ns) : Promise.resolve(ns);
          } catch (e) {
            return Promise.reject(e);
          }
        };
        const result = body(importer, dynamicImport, exports, exportAll, meta);
        if (info.tla) record.evaluation = result;
      }
      module.loaded = true;
    } catch (e) {
      records.delete(path);
      throw e;
    }
    return record;
  }

  // Loads an entry file and waits for a module that awaits at top level.
  internal.importEntry = async function (path) {
    const record = load(path);
    if (record.evaluation) await record.evaluation;
    return namespaceOf(record);
  };
})(globalThis);
