// The web streams (ReadableStream, WritableStream, TransformStream, TextDecoderStream,
// TextEncoderStream) as globals and `node:stream/web`; fetch bodies are ReadableStreams.
// Event-driven and simple: no highWaterMark accounting beyond "is anything queued".
// Evaluated after `stream.js` (`node:string_decoder`).
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const { StringDecoder } = internal.hostModule("node:string_decoder");

  // A queue with a controller; `pull` is asked for more whenever a reader waits on an
  // empty queue.
  class ReadableStream {
    constructor(source, strategy) {
      this._source = source || {};
      this._queue = [];
      this._waiting = [];
      this._state = "readable";
      this._failure = undefined;
      this._pulling = false;
      this.locked = false;
      const stream = this;
      this._closed = new Promise((resolve, reject) => {
        this._closedSettle = { resolve, reject };
      });
      this._closed.catch(() => {});
      this._controller = {
        get desiredSize() {
          return stream._state === "readable" ? 1 - stream._queue.length : 0;
        },
        enqueue(chunk) {
          if (stream._state !== "readable") throw new TypeError("Invalid state: the stream is closed");
          stream._queue.push(chunk);
          stream._settle();
        },
        close() {
          if (stream._state === "readable") {
            stream._state = "closed";
            stream._closedSettle.resolve();
            stream._settle();
          }
        },
        error(e) {
          if (stream._state === "readable") {
            stream._state = "errored";
            stream._failure = e;
            stream._queue = [];
            stream._closedSettle.reject(e);
            stream._settle();
          }
        },
      };
      void strategy;
      this._started = Promise.resolve()
        .then(() => this._source.start && this._source.start(this._controller))
        .catch((e) => this._controller.error(e));
    }
    _settle() {
      while (this._waiting.length) {
        if (this._queue.length) this._waiting.shift().resolve({ done: false, value: this._queue.shift() });
        else if (this._state === "errored") this._waiting.shift().reject(this._failure);
        else if (this._state === "closed") this._waiting.shift().resolve({ done: true, value: undefined });
        else break;
      }
      if (this._waiting.length && this._state === "readable") this._pull();
    }
    _pull() {
      if (this._pulling || !this._source.pull) return;
      this._pulling = true;
      this._started
        .then(() => this._source.pull(this._controller))
        .then(
          () => {
            this._pulling = false;
            if (this._waiting.length && !this._queue.length && this._state === "readable") this._pull();
            else this._settle();
          },
          (e) => {
            this._pulling = false;
            this._controller.error(e);
          },
        );
    }
    _read() {
      return new Promise((resolve, reject) => {
        this._waiting.push({ resolve, reject });
        this._started.then(() => this._settle());
      });
    }
    async cancel(reason) {
      this._queue = [];
      if (this._state === "readable") {
        this._state = "closed";
        this._closedSettle.resolve();
      }
      this._settle();
      if (this._source.cancel) await this._source.cancel(reason);
    }
    getReader() {
      if (this.locked) throw new TypeError("ReadableStream is locked");
      this.locked = true;
      const stream = this;
      return {
        read: () => stream._read(),
        cancel: (reason) => stream.cancel(reason),
        releaseLock: () => {
          stream.locked = false;
        },
        get closed() {
          return stream._closed;
        },
      };
    }
    pipeThrough(transform, options) {
      this.pipeTo(transform.writable, options).catch(() => {});
      return transform.readable;
    }
    async pipeTo(destination, options) {
      const reader = this.getReader();
      const writer = destination.getWriter();
      try {
        for (;;) {
          if (options && options.signal && options.signal.aborted) throw options.signal.reason;
          const { done, value } = await reader.read();
          if (done) break;
          await writer.write(value);
        }
        if (!options || !options.preventClose) await writer.close();
      } catch (e) {
        if (!options || !options.preventAbort) await writer.abort(e);
        throw e;
      } finally {
        reader.releaseLock();
        writer.releaseLock();
      }
    }
    tee() {
      const branches = [[], []].map(() => {
        let controller;
        const stream = new ReadableStream({
          start: (c) => {
            controller = c;
          },
        });
        return {
          stream,
          push: (v) => controller.enqueue(v),
          close: () => controller.close(),
          error: (e) => controller.error(e),
        };
      });
      (async () => {
        const reader = this.getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            for (const b of branches) b.push(value);
          }
          for (const b of branches) b.close();
        } catch (e) {
          for (const b of branches) b.error(e);
        }
      })();
      return branches.map((b) => b.stream);
    }
    values() {
      return this[Symbol.asyncIterator]();
    }
    [Symbol.asyncIterator]() {
      const reader = this.getReader();
      return {
        next: () => reader.read(),
        return: async () => {
          await reader.cancel();
          return { done: true, value: undefined };
        },
        [Symbol.asyncIterator]() {
          return this;
        },
      };
    }
    static from(iterable) {
      const iterator = (iterable[Symbol.asyncIterator] || iterable[Symbol.iterator]).call(iterable);
      return new ReadableStream({
        async pull(controller) {
          const { done, value } = await iterator.next();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        async cancel() {
          if (iterator.return) await iterator.return();
        },
      });
    }
  }

  class WritableStream {
    constructor(sink) {
      this._sink = sink || {};
      this._state = "writable";
      this.locked = false;
      this._controller = {
        error: (e) => {
          this._state = "errored";
          this._failure = e;
        },
        signal: new g.AbortController().signal,
      };
      this._chain = Promise.resolve().then(() => this._sink.start && this._sink.start(this._controller));
    }
    _enqueue(step) {
      const next = this._chain.then(() => {
        if (this._state === "errored") throw this._failure;
        return step();
      });
      this._chain = next.catch((e) => {
        this._state = "errored";
        this._failure = e;
      });
      return next;
    }
    getWriter() {
      if (this.locked) throw new TypeError("WritableStream is locked");
      this.locked = true;
      const stream = this;
      return {
        write: (chunk) => stream._enqueue(() => stream._sink.write && stream._sink.write(chunk, stream._controller)),
        close: () =>
          stream._enqueue(() => {
            stream._state = "closed";
            return stream._sink.close && stream._sink.close();
          }),
        abort: (reason) => {
          stream._state = "errored";
          stream._failure = reason;
          return Promise.resolve(stream._sink.abort && stream._sink.abort(reason));
        },
        releaseLock: () => {
          stream.locked = false;
        },
        get ready() {
          return stream._chain;
        },
        get closed() {
          return stream._chain.then(() => undefined);
        },
        get desiredSize() {
          return stream._state === "writable" ? 1 : 0;
        },
      };
    }
    abort(reason) {
      return this.getWriter().abort(reason);
    }
    close() {
      const w = this.getWriter();
      const p = w.close();
      w.releaseLock();
      return p;
    }
  }

  class TransformStream {
    constructor(transformer) {
      const t = transformer || {};
      let controller;
      this.readable = new ReadableStream({
        start: (c) => {
          controller = c;
        },
      });
      const transformController = {
        enqueue: (chunk) => controller.enqueue(chunk),
        error: (e) => controller.error(e),
        terminate: () => controller.close(),
        get desiredSize() {
          return controller.desiredSize;
        },
      };
      const started = this.readable._started.then(() => t.start && t.start(transformController));
      this.writable = new WritableStream({
        write: async (chunk) => {
          await started;
          if (t.transform) await t.transform(chunk, transformController);
          else transformController.enqueue(chunk);
        },
        close: async () => {
          await started;
          if (t.flush) await t.flush(transformController);
          controller.close();
        },
        abort: (reason) => controller.error(reason),
      });
    }
  }

  class TextDecoderStream extends TransformStream {
    constructor(encoding) {
      const decoder = new StringDecoder(encoding || "utf-8");
      super({
        transform(chunk, controller) {
          const text = decoder.write(chunk);
          if (text) controller.enqueue(text);
        },
        flush(controller) {
          const text = decoder.end();
          if (text) controller.enqueue(text);
        },
      });
      this.encoding = "utf-8";
    }
  }
  class TextEncoderStream extends TransformStream {
    constructor() {
      const encoder = new g.TextEncoder();
      super({
        transform(chunk, controller) {
          controller.enqueue(encoder.encode(String(chunk)));
        },
      });
      this.encoding = "utf-8";
    }
  }

  for (const [name, value] of Object.entries({
    ReadableStream,
    WritableStream,
    TransformStream,
    TextDecoderStream,
    TextEncoderStream,
  })) {
    if (typeof g[name] !== "function") g[name] = value;
  }
  internal.defineHost("node:stream/web", () => ({
    ReadableStream,
    WritableStream,
    TransformStream,
    TextDecoderStream,
    TextEncoderStream,
  }));
})(globalThis);
