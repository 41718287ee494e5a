// `node:child_process` over the process ops (`src/process/`): `spawn` starts a live child
// (pid at once, stdout and stderr streamed as they arrive, stdin open while it runs,
// `kill`, `exit`/`close`); the `*Sync` functions block the JS thread as in Node; `exec` and
// `execFile` collect a child's output off the JS thread.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const op = internal.op;
  const EventEmitter = internal.hostModule("node:events");
  const { promisify } = internal.hostModule("node:util");
  const { Readable, Writable } = internal.hostModule("node:stream");
  const Buffer = g.Buffer;

  const { text, encodingOf, pathOf } = internal.nodeArgs;
  const decode = (data, encoding) =>
    data === null || data === undefined ? null : encoding ? data : Buffer.from(data);

  function spawnResult(r, options) {
    const enc = encodingOf(options);
    const stdout = decode(r.stdout, enc === "buffer" ? undefined : enc);
    const stderr = decode(r.stderr, enc === "buffer" ? undefined : enc);
    return { pid: 0, status: r.status, signal: r.signal, stdout, stderr, output: [null, r.stdout, r.stderr] };
  }
  function execError(command, r) {
    const e = new Error(`Command failed: ${command}\n${r.stderr}`);
    e.status = r.status;
    e.signal = r.signal;
    e.stdout = r.stdout;
    e.stderr = r.stderr;
    e.code = r.status;
    return e;
  }
  // Node's `stdio` option as three slots ("pipe", "inherit" or "ignore").
  const stdioOf = (stdio) => {
    const p = g.process;
    const one = (v) =>
      v === "inherit" || v === 0 || v === 1 || v === 2 || v === p.stdin || v === p.stdout || v === p.stderr
        ? "inherit"
        : v === "ignore"
          ? "ignore"
          : "pipe";
    if (typeof stdio === "string") return [one(stdio), one(stdio), one(stdio)];
    if (Array.isArray(stdio)) return [0, 1, 2].map((n) => one(stdio[n]));
    return undefined;
  };
  // `shell: true` runs the command line through /bin/sh, a string names the shell.
  const req = (file, args, options, shell) => ({
    file,
    args: args || [],
    cwd: options && options.cwd ? pathOf(options.cwd) : g.process.cwd(),
    env: options && options.env,
    input: options && options.input !== undefined ? text(options.input) : undefined,
    shell,
    timeout: options && options.timeout,
    stdio: stdioOf(options && options.stdio),
  });
  const shellOf = (options) => !!(options && options.shell);

  // A live child. Its stdio are streams; `exit` comes when the process ends, `close` once
  // its output streams have ended too.
  class ChildProcess extends EventEmitter {
    constructor() {
      super();
      this.pid = undefined;
      this.exitCode = null;
      this.signalCode = null;
      this.killed = false;
      this.connected = false;
      this.stdin = null;
      this.stdout = null;
      this.stderr = null;
      this.stdio = [null, null, null];
      this._id = undefined;
    }
    kill(signal = "SIGTERM") {
      if (this._id === undefined || this.exitCode !== null || this.signalCode !== null) return false;
      const sent = op(kc.childKill(this._id, JSON.stringify(signal)));
      if (sent) this.killed = true;
      return sent;
    }
    ref() {
      return this;
    }
    unref() {
      return this;
    }
    disconnect() {}
    [Symbol.dispose]() {
      if (this.exitCode === null && this.signalCode === null) this.kill();
    }
  }

  function spawn(file, args, options) {
    if (!Array.isArray(args)) {
      options = args;
      args = [];
    }
    const o = options || {};
    const child = new ChildProcess();
    child.spawnfile = file;
    child.spawnargs = [file, ...args];
    const slots = stdioOf(o.stdio) || ["pipe", "pipe", "pipe"];
    const request = Object.assign(req(file, args, o, shellOf(o)), {
      stdio: slots,
      detached: !!o.detached,
      input: undefined,
    });
    if (typeof o.shell === "string") {
      request.file = [file, ...args].join(" ");
      request.args = [];
      request.shellPath = o.shell;
    }
    const started = JSON.parse(kc.childSpawn(JSON.stringify(request)));
    const id = started.ok ? started.ok.id : undefined;
    if (slots[0] === "pipe") {
      child.stdin = new Writable({
        write(chunk, encoding, callback) {
          const bytes = typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk;
          callback(
            id !== undefined && kc.childWrite(id, bytes)
              ? null
              : Object.assign(new Error("write EPIPE"), { code: "EPIPE", syscall: "write" }),
          );
        },
        final(callback) {
          if (id !== undefined) kc.childEnd(id);
          callback();
        },
      });
    }
    const outputs = {};
    for (const [n, name] of [
      [1, "stdout"],
      [2, "stderr"],
    ]) {
      if (slots[n] !== "pipe") continue;
      child[name] = outputs[n] = new Readable({ read() {} });
    }
    child.stdio = [child.stdin, child.stdout, child.stderr];
    if (!started.ok) {
      const error = internal.fail(started.error);
      error.path = file;
      queueMicrotask(() => {
        for (const stream of Object.values(outputs)) stream.push(null);
        child.emit("error", error);
        child.emit("close", -2, null);
      });
      return child;
    }
    child._id = id;
    child.pid = started.ok.pid;
    let timer;
    if (o.timeout > 0) timer = g.setTimeout(() => child.kill(o.killSignal || "SIGTERM"), o.timeout);
    const onAbort = () => {
      child.kill(o.killSignal || "SIGTERM");
      child.emit("error", internal.abortError(o.signal.reason));
    };
    if (o.signal) {
      if (o.signal.aborted) queueMicrotask(onAbort);
      else o.signal.addEventListener("abort", onAbort, { once: true });
    }
    queueMicrotask(() => child.emit("spawn"));
    // `close` waits for the output streams to have delivered everything (their `end`).
    const open = new Set(Object.keys(outputs).map(Number));
    for (const [n, stream] of Object.entries(outputs)) {
      const ended = () => {
        if (open.delete(Number(n))) maybeClose();
      };
      stream.once("end", ended);
      stream.once("close", ended);
    }
    let exited = false;
    const maybeClose = () => {
      if (!exited || open.size > 0) return;
      if (timer !== undefined) g.clearTimeout(timer);
      if (o.signal) o.signal.removeEventListener("abort", onAbort);
      child.emit("close", child.exitCode, child.signalCode);
    };
    const handle = (event) => {
      switch (event.type) {
        case "data":
          outputs[event.stream].push(Object.setPrototypeOf(event.bytes, Buffer.prototype));
          break;
        case "end":
          outputs[event.stream].push(null);
          break;
        case "exit":
          exited = true;
          child.exitCode = event.code;
          child.signalCode = event.signal;
          child.emit("exit", event.code, event.signal);
          // As Node's flushStdio: output nobody reads is let flow (and dropped) so the
          // streams end and `close` can follow.
          for (const stream of Object.values(outputs)) if (stream.readableFlowing === null) stream.resume();
          maybeClose();
          break;
        case "stdinError":
          if (child.stdin)
            child.stdin.destroy(Object.assign(new Error(event.message), { code: event.code, syscall: "write" }));
          break;
      }
    };
    (async () => {
      for (;;) {
        const batch = await kc.childNext(id);
        if (batch === null) break;
        for (const event of batch) {
          try {
            handle(event);
          } catch (e) {
            internal.reportUncaught(e);
          }
        }
      }
      // The events ended without an exit (the batch could not be built): finish the child
      // as a failed one rather than leave its listeners waiting.
      for (const n of open) handle({ type: "end", stream: n });
      if (!exited) handle({ type: "exit", code: null, signal: null });
    })();
    return child;
  }

  const child_process = {
    ChildProcess,
    spawn,
    spawnSync(file, args, options) {
      if (!Array.isArray(args)) {
        options = args;
        args = [];
      }
      return spawnResult(op(kc.spawnSync(JSON.stringify(req(file, args, options, shellOf(options))))), options);
    },
    execSync(command, options) {
      const r = op(kc.spawnSync(JSON.stringify(req(command, [], options, true))));
      if (r.status !== 0) throw execError(command, r);
      const enc = encodingOf(options);
      return enc && enc !== "buffer" ? r.stdout : Buffer.from(r.stdout);
    },
    execFileSync(file, args, options) {
      if (!Array.isArray(args)) {
        options = args;
        args = [];
      }
      const r = op(kc.spawnSync(JSON.stringify(req(file, args, options, shellOf(options)))));
      if (r.status !== 0) throw execError([file, ...args].join(" "), r);
      const enc = encodingOf(options);
      return enc && enc !== "buffer" ? r.stdout : Buffer.from(r.stdout);
    },
    exec(command, options, callback) {
      if (typeof options === "function") {
        callback = options;
        options = {};
      }
      const p = kc.exec(JSON.stringify(req(command, [], options, true))).then(op);
      p.then(
        (r) => {
          if (callback) callback(r.status === 0 ? null : execError(command, r), r.stdout, r.stderr);
        },
        (e) => callback && callback(e, "", ""),
      );
      return new EventEmitter();
    },
    execFile(file, args, options, callback) {
      if (typeof args === "function") {
        callback = args;
        args = [];
        options = {};
      }
      if (typeof options === "function") {
        callback = options;
        options = {};
      }
      const p = kc.exec(JSON.stringify(req(file, args, options, false))).then(op);
      p.then(
        (r) => {
          if (callback) callback(r.status === 0 ? null : execError(file, r), r.stdout, r.stderr);
        },
        (e) => callback && callback(e, "", ""),
      );
      return new EventEmitter();
    },
    fork: internal.missing("child_process.fork"),
  };
  child_process.exec[promisify.custom] = (command, options) =>
    kc
      .exec(JSON.stringify(req(command, [], options, true)))
      .then(op)
      .then((r) => {
        if (r.status !== 0) throw execError(command, r);
        return { stdout: r.stdout, stderr: r.stderr };
      });
  child_process.execFile[promisify.custom] = (file, args, options) =>
    kc
      .exec(JSON.stringify(req(file, args, options, false)))
      .then(op)
      .then((r) => {
        if (r.status !== 0) throw execError(file, r);
        return { stdout: r.stdout, stderr: r.stderr };
      });
  internal.defineHost("node:child_process", () => child_process);
  internal.execAsync = (file, args, options) => kc.exec(JSON.stringify(req(file, args, options, false))).then(op);
})(globalThis);
