// Streams: Node's `node:stream` (Readable, Writable, Duplex, Transform, PassThrough,
// pipeline, finished) and `node:string_decoder`; the web streams are `webstreams.js`. Live
// children's stdio (`js/child_process.js`) and the MCP SDK's transports are built on them.
// Event-driven and simple: no highWaterMark accounting beyond "is anything queued".
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const EventEmitter = internal.hostModule("node:events");
  const Buffer = g.Buffer;

  // ---- string_decoder: UTF-8 split across chunks stays whole ----
  // Where an incomplete UTF-8 sequence starts at the end of `bytes` (its length if none).
  function completeUpTo(bytes) {
    const n = bytes.length;
    for (let i = n - 1; i >= 0 && i >= n - 4; i--) {
      const b = bytes[i];
      if ((b & 0xc0) === 0x80) continue;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      return n - i < need ? i : n;
    }
    return n;
  }
  class StringDecoder {
    constructor(encoding) {
      this.encoding = String(encoding || "utf8")
        .toLowerCase()
        .replace("-", "");
      this.rest = null;
    }
    write(chunk) {
      if (typeof chunk === "string") return chunk;
      let bytes = chunk instanceof Uint8Array ? chunk : Buffer.from(chunk);
      if (this.encoding !== "utf8") return Buffer.from(bytes).toString(this.encoding);
      if (this.rest) {
        const joined = new Uint8Array(this.rest.length + bytes.length);
        joined.set(this.rest);
        joined.set(bytes, this.rest.length);
        bytes = joined;
        this.rest = null;
      }
      const end = completeUpTo(bytes);
      if (end < bytes.length) this.rest = bytes.slice(end);
      return new g.TextDecoder().decode(bytes.subarray(0, end));
    }
    end(chunk) {
      const out = chunk === undefined ? "" : this.write(chunk);
      const rest = this.rest;
      this.rest = null;
      return rest ? out + new g.TextDecoder().decode(rest) : out;
    }
  }
  internal.defineHost("node:string_decoder", () => ({ StringDecoder }));

  // ---- node:stream ----
  const toBuffer = (chunk, encoding) =>
    typeof chunk === "string"
      ? Buffer.from(chunk, encoding)
      : chunk instanceof Buffer
        ? chunk
        : chunk instanceof Uint8Array
          ? Object.setPrototypeOf(chunk, Buffer.prototype)
          : Buffer.from(chunk);
  const streamError = (code, message) => Object.assign(new Error(message), { code });

  class Stream extends EventEmitter {
    // `src.pipe(dest)`: everything `src` gives is written to `dest`, which is ended with it.
    pipe(dest, options) {
      const end = !options || options.end !== false;
      this.on("data", (chunk) => {
        if (dest.write(chunk) === false && this.pause && dest.once) {
          this.pause();
          dest.once("drain", () => this.resume());
        }
      });
      if (end)
        this.once("end", () => {
          if (dest !== g.process.stdout && dest !== g.process.stderr) dest.end();
        });
      if (dest.emit) dest.emit("pipe", this);
      return dest;
    }
  }

  class Readable extends Stream {
    constructor(options) {
      super();
      const o = options || {};
      this._queue = [];
      this._flowing = null;
      this._pushedEnd = false;
      this._scheduled = false;
      this._decoder = o.encoding ? new StringDecoder(o.encoding) : null;
      this._objectMode = !!(o.objectMode || o.readableObjectMode);
      this._autoDestroy = o.autoDestroy !== false;
      this.readable = true;
      this.readableEnded = false;
      this.destroyed = false;
      this.readableFlowing = null;
      if (o.read) this._read = o.read;
      if (o.destroy) this._destroy = o.destroy;
    }
    _read() {}
    _destroy(error, callback) {
      callback(error);
    }
    push(chunk, encoding) {
      if (this._pushedEnd || this.destroyed) return false;
      if (chunk === null) {
        this._pushedEnd = true;
        this._schedule();
        return false;
      }
      if (!this._objectMode) chunk = toBuffer(chunk, encoding);
      if (this._decoder && !this._objectMode) chunk = this._decoder.write(chunk);
      if (chunk === "") return true;
      this._queue.push(chunk);
      this.emit("readable");
      this._schedule();
      return this._queue.length < 16;
    }
    unshift(chunk) {
      this._queue.unshift(chunk);
      this._schedule();
    }
    setEncoding(encoding) {
      this._decoder = new StringDecoder(encoding);
      return this;
    }
    on(name, fn) {
      super.on(name, fn);
      if (name === "data" && this._flowing !== false) this.resume();
      return this;
    }
    resume() {
      this._flowing = true;
      this.readableFlowing = true;
      this._schedule();
      return this;
    }
    pause() {
      this._flowing = false;
      this.readableFlowing = false;
      return this;
    }
    isPaused() {
      return this._flowing === false;
    }
    read() {
      if (this._queue.length === 0) {
        if (!this._pushedEnd) this._read();
        this._schedule();
        return null;
      }
      const out = this._objectMode
        ? this._queue.shift()
        : this._decoder
          ? this._queue.splice(0).join("")
          : Buffer.concat(this._queue.splice(0));
      this._schedule();
      return out;
    }
    _schedule() {
      if (this._scheduled) return;
      this._scheduled = true;
      queueMicrotask(() => {
        this._scheduled = false;
        this._flow();
      });
    }
    _flow() {
      while (this._flowing && this._queue.length && !this.destroyed) this.emit("data", this._queue.shift());
      if (this._pushedEnd && this._queue.length === 0 && !this.readableEnded && this._flowing) {
        if (this._decoder) {
          const rest = this._decoder.end();
          if (rest) this.emit("data", rest);
        }
        this.readableEnded = true;
        this.readable = false;
        this.emit("end");
        if (this._autoDestroy) this.destroy();
      } else if (this._flowing && !this._pushedEnd && this._queue.length === 0) this._read();
    }
    destroy(error) {
      if (this.destroyed) return this;
      this.destroyed = true;
      this.readable = false;
      this._destroy(error || null, (e) =>
        queueMicrotask(() => {
          if (e) this.emit("error", e);
          this.emit("close");
        }),
      );
      return this;
    }
    unpipe() {
      this.removeAllListeners("data");
      return this;
    }
    [Symbol.asyncIterator]() {
      const pending = [];
      const waiting = [];
      let done = false;
      let failure = null;
      const settle = () => {
        while (waiting.length && (pending.length || done || failure)) {
          const w = waiting.shift();
          if (pending.length) w.resolve({ done: false, value: pending.shift() });
          else if (failure) w.reject(failure);
          else w.resolve({ done: true, value: undefined });
        }
      };
      this.on("data", (chunk) => {
        pending.push(chunk);
        settle();
      });
      this.once("end", () => {
        done = true;
        settle();
      });
      this.once("close", () => {
        done = true;
        settle();
      });
      this.once("error", (e) => {
        failure = e;
        settle();
      });
      return {
        next: () =>
          new Promise((resolve, reject) => {
            waiting.push({ resolve, reject });
            settle();
          }),
        return: async () => {
          done = true;
          this.destroy();
          return { done: true, value: undefined };
        },
        [Symbol.asyncIterator]() {
          return this;
        },
      };
    }
    static from(iterable, options) {
      const stream = new Readable(Object.assign({ objectMode: true }, options));
      (async () => {
        try {
          for await (const item of iterable) stream.push(item);
          stream.push(null);
        } catch (e) {
          stream.destroy(e);
        }
      })();
      return stream;
    }
  }

  // The writable half, shared by Writable and Duplex (a Duplex is a Readable too).
  const writableMethods = {
    _initWritable(o) {
      this._writes = [];
      this._writing = false;
      this._ending = false;
      this.writable = true;
      this.writableEnded = false;
      this.writableFinished = false;
      this.writableObjectMode = !!(o.objectMode || o.writableObjectMode);
      this._defaultEncoding = "utf8";
      if (o.write) this._write = o.write;
      if (o.writev) this._writev = o.writev;
      if (o.final) this._final = o.final;
    },
    _write(chunk, encoding, callback) {
      callback();
    },
    write(chunk, encoding, callback) {
      if (typeof encoding === "function") {
        callback = encoding;
        encoding = undefined;
      }
      if (this.writableEnded || this.destroyed) {
        const e = streamError("ERR_STREAM_WRITE_AFTER_END", "write after end");
        queueMicrotask(() => {
          if (callback) callback(e);
          this.emit("error", e);
        });
        return false;
      }
      const data =
        this.writableObjectMode || typeof chunk !== "string"
          ? chunk
          : toBuffer(chunk, encoding || this._defaultEncoding);
      this._writes.push({ chunk: data, encoding: encoding || "buffer", callback });
      this._nextWrite();
      return this._writes.length < 16;
    },
    _nextWrite() {
      if (this._writing) return;
      const next = this._writes.shift();
      if (!next) {
        if (this._ending && !this.writableFinished) this._finish();
        else this.emit("drain");
        return;
      }
      this._writing = true;
      let called = false;
      this._write(next.chunk, next.encoding, (error) => {
        if (called) return;
        called = true;
        this._writing = false;
        if (next.callback) next.callback(error || null);
        if (error) {
          this.destroy(error);
          return;
        }
        queueMicrotask(() => this._nextWrite());
      });
    },
    _finish() {
      const done = (error) => {
        if (error) {
          this.destroy(error);
          return;
        }
        this.writableFinished = true;
        this.emit("finish");
        if (!this.readable || this._readableDone) this.destroy();
      };
      if (this._final) this._final(done);
      else done();
    },
    end(chunk, encoding, callback) {
      if (typeof chunk === "function") {
        callback = chunk;
        chunk = undefined;
      }
      if (typeof encoding === "function") {
        callback = encoding;
        encoding = undefined;
      }
      if (chunk !== undefined && chunk !== null) this.write(chunk, encoding);
      if (callback) this.once("finish", () => callback());
      if (this.writableEnded) return this;
      this.writableEnded = true;
      this.writable = false;
      this._ending = true;
      this._nextWrite();
      return this;
    },
    cork() {},
    uncork() {},
    setDefaultEncoding(encoding) {
      this._defaultEncoding = encoding;
      return this;
    },
  };

  class Writable extends Stream {
    constructor(options) {
      super();
      const o = options || {};
      this.destroyed = false;
      this._initWritable(o);
      if (o.destroy) this._destroy = o.destroy;
    }
    _destroy(error, callback) {
      callback(error);
    }
    destroy(error) {
      if (this.destroyed) return this;
      this.destroyed = true;
      this.writable = false;
      this._destroy(error || null, (e) =>
        queueMicrotask(() => {
          if (e) this.emit("error", e);
          this.emit("close");
        }),
      );
      return this;
    }
  }
  Object.assign(Writable.prototype, writableMethods);

  class Duplex extends Readable {
    constructor(options) {
      super(options);
      const o = options || {};
      this._initWritable(o);
      this.allowHalfOpen = o.allowHalfOpen !== false;
      // A duplex is torn down once both halves are done, not when its readable side ends.
      this._autoDestroy = false;
      this.once("end", () => {
        this._readableDone = true;
        if (this.writableFinished || !this.allowHalfOpen) this.destroy();
      });
    }
    destroy(error) {
      this.writable = false;
      return super.destroy(error);
    }
  }
  Object.assign(Duplex.prototype, writableMethods);

  class Transform extends Duplex {
    constructor(options) {
      super(options);
      const o = options || {};
      if (o.transform) this._transform = o.transform;
      if (o.flush) this._flush = o.flush;
    }
    _transform(chunk, encoding, callback) {
      callback(null, chunk);
    }
    _write(chunk, encoding, callback) {
      this._transform(chunk, encoding, (error, data) => {
        if (data !== undefined && data !== null) this.push(data);
        callback(error);
      });
    }
    _final(callback) {
      const close = (error, data) => {
        if (data !== undefined && data !== null) this.push(data);
        this.push(null);
        callback(error);
      };
      if (this._flush) this._flush(close);
      else close();
    }
  }
  class PassThrough extends Transform {}

  function finished(stream, options, callback) {
    if (typeof options === "function") callback = options;
    let called = false;
    const done = (error) => {
      if (!called) {
        called = true;
        callback(error || undefined);
      }
    };
    stream.once("error", done);
    stream.once("end", () => done());
    stream.once("finish", () => done());
    stream.once("close", () => done());
    return () => {};
  }
  function pipeline(...streams) {
    const callback = typeof streams[streams.length - 1] === "function" ? streams.pop() : () => {};
    let failed = false;
    const fail = (error) => {
      if (failed) return;
      failed = true;
      for (const s of streams) if (s.destroy) s.destroy();
      callback(error);
    };
    for (let i = 0; i < streams.length - 1; i++) {
      streams[i].once("error", fail);
      streams[i].pipe(streams[i + 1]);
    }
    const last = streams[streams.length - 1];
    last.once("error", fail);
    finished(last, (error) => (error ? fail(error) : !failed && callback()));
    return last;
  }
  const promises = {
    pipeline: (...streams) =>
      new Promise((resolve, reject) => pipeline(...streams, (e) => (e ? reject(e) : resolve()))),
    finished: (stream) => new Promise((resolve, reject) => finished(stream, (e) => (e ? reject(e) : resolve()))),
  };
  const stream = Object.assign(Stream, {
    Stream,
    Readable,
    Writable,
    Duplex,
    Transform,
    PassThrough,
    pipeline,
    finished,
    promises,
  });
  internal.defineHost("node:stream", () => stream);
  internal.defineHost("node:stream/promises", () => promises);
})(globalThis);
