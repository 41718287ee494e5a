// `fetch`, `Headers`, `Response` (bodies read chunk by chunk: `response.body` is a web
// `ReadableStream`), `Blob`/`File` and a `FormData` sent as multipart, over the `fetch` ops
// (`src/fetch.rs`). Enough for OAuth token exchanges,
// JSON APIs and SDKs reading server-sent events (the Anthropic SDK).
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const op = internal.op;
  if (typeof g.fetch === "function") return;

  class Headers {
    constructor(init) {
      this.map = new Map();
      if (!init) return;
      const entries =
        init instanceof Headers ? [...init.entries()] : Array.isArray(init) ? init : Object.entries(init);
      for (const [k, v] of entries) this.append(k, v);
    }
    append(k, v) {
      const key = String(k).toLowerCase();
      const old = this.map.get(key);
      this.map.set(key, old === undefined ? String(v) : `${old}, ${v}`);
    }
    set(k, v) {
      this.map.set(String(k).toLowerCase(), String(v));
    }
    get(k) {
      const v = this.map.get(String(k).toLowerCase());
      return v === undefined ? null : v;
    }
    has(k) {
      return this.map.has(String(k).toLowerCase());
    }
    delete(k) {
      this.map.delete(String(k).toLowerCase());
    }
    forEach(fn, self) {
      for (const [k, v] of this.map) fn.call(self, v, k, this);
    }
    entries() {
      return this.map.entries();
    }
    keys() {
      return this.map.keys();
    }
    values() {
      return this.map.values();
    }
    [Symbol.iterator]() {
      return this.map.entries();
    }
  }
  const fromBase64 = (b64) => {
    const s = g.atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  };
  // A response body read from Rust chunk by chunk, as a web ReadableStream (`js/stream.js`):
  // async-iterable, `getReader()`, `pipeThrough` (SDKs decode server-sent events with it).
  const bodyStream = (id) =>
    new g.ReadableStream({
      async pull(controller) {
        const b64 = op(await kc.fetchRead(id));
        if (b64 === null) controller.close();
        else controller.enqueue(fromBase64(b64));
      },
      cancel() {
        kc.fetchClose(id);
      },
    });
  class Response {
    constructor(body, init) {
      const o = init || {};
      this._stream = body instanceof g.ReadableStream ? body : null;
      this._body = this._stream ? null : body === undefined || body === null ? "" : String(body);
      this.status = o.status === undefined ? 200 : o.status;
      this.statusText = o.statusText || "";
      this.headers = o.headers instanceof Headers ? o.headers : new Headers(o.headers);
      this.url = o.url || "";
      this.ok = this.status >= 200 && this.status < 300;
      this.bodyUsed = false;
      this.body = this._stream;
      this.type = "basic";
      this.redirected = false;
    }
    async bytes() {
      this.bodyUsed = true;
      if (!this._stream) return new TextEncoder().encode(this._body);
      const parts = [];
      let length = 0;
      const reader = this._stream.getReader();
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        parts.push(r.value);
        length += r.value.length;
      }
      const out = new Uint8Array(length);
      let at = 0;
      for (const p of parts) {
        out.set(p, at);
        at += p.length;
      }
      return out;
    }
    async text() {
      if (!this._stream) {
        this.bodyUsed = true;
        return this._body;
      }
      return new TextDecoder().decode(await this.bytes());
    }
    async json() {
      return JSON.parse(await this.text());
    }
    async arrayBuffer() {
      return (await this.bytes()).buffer;
    }
    clone() {
      return new Response(this._body, this);
    }
  }
  // In-memory bytes (SDKs check for `Blob`/`File` and read small ones).
  class Blob {
    constructor(parts, options) {
      const chunks = (parts || []).map((p) =>
        typeof p === "string"
          ? new TextEncoder().encode(p)
          : p instanceof Blob
            ? p.bytes_
            : new Uint8Array(p.buffer ? p.buffer.slice(p.byteOffset || 0, (p.byteOffset || 0) + p.byteLength) : p),
      );
      const length = chunks.reduce((n, c) => n + c.length, 0);
      this.bytes_ = new Uint8Array(length);
      let at = 0;
      for (const c of chunks) {
        this.bytes_.set(c, at);
        at += c.length;
      }
      this.size = length;
      this.type = (options && options.type) || "";
    }
    async text() {
      return new TextDecoder().decode(this.bytes_);
    }
    async arrayBuffer() {
      return this.bytes_.slice().buffer;
    }
    async bytes() {
      return this.bytes_.slice();
    }
    slice(start, end, type) {
      const b = new Blob([this.bytes_.slice(start, end)], { type });
      return b;
    }
  }
  class File extends Blob {
    constructor(parts, name, options) {
      super(parts, options);
      this.name = String(name);
      this.lastModified = (options && options.lastModified) || Date.now();
    }
  }
  // Sent as multipart/form-data by `fetch`.
  class FormData {
    constructor() {
      this.entries_ = [];
    }
    append(k, v) {
      this.entries_.push([String(k), v]);
    }
    set(k, v) {
      this.delete(k);
      this.append(k, v);
    }
    get(k) {
      const e = this.entries_.find((x) => x[0] === k);
      return e ? e[1] : null;
    }
    getAll(k) {
      return this.entries_.filter((x) => x[0] === k).map((x) => x[1]);
    }
    has(k) {
      return this.entries_.some((x) => x[0] === k);
    }
    delete(k) {
      this.entries_ = this.entries_.filter((x) => x[0] !== k);
    }
    entries() {
      return this.entries_[Symbol.iterator]();
    }
    [Symbol.iterator]() {
      return this.entries();
    }
  }
  // The request body as the `fetch` op takes it: text, or bytes as base64 (typed arrays,
  // Blob/File, FormData as multipart, streams and async iterables read to the end), and
  // the content type the body implies when the caller set none.
  const base64 = (bytes) => Buffer.from(bytes).toString("base64");
  const bytesOf = (v) =>
    typeof v === "string"
      ? new TextEncoder().encode(v)
      : v instanceof ArrayBuffer
        ? new Uint8Array(v)
        : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  function concat(chunks) {
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
  function multipart(form) {
    const boundary = `----knightcode${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
    const quote = (s) => String(s).replace(/"/g, "%22").replace(/\r?\n/g, " ");
    const chunks = [];
    for (const [name, value] of form.entries_) {
      let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"`;
      if (value instanceof Blob) {
        const filename = quote(value.name !== undefined ? value.name : "blob");
        head += `; filename="${filename}"\r\nContent-Type: ${value.type || "application/octet-stream"}`;
        chunks.push(bytesOf(`${head}\r\n\r\n`), value.bytes_, bytesOf("\r\n"));
      } else {
        chunks.push(bytesOf(`${head}\r\n\r\n${String(value)}\r\n`));
      }
    }
    chunks.push(bytesOf(`--${boundary}--\r\n`));
    return { bytes: concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
  }
  async function requestBody(body, headers) {
    const typed = (type) => {
      if (type && !headers["content-type"]) headers["content-type"] = type;
    };
    if (body === undefined || body === null) return {};
    if (typeof body === "string") {
      typed("text/plain;charset=UTF-8");
      return { body };
    }
    if (body instanceof URLSearchParams) {
      typed("application/x-www-form-urlencoded;charset=UTF-8");
      return { body: body.toString() };
    }
    if (body instanceof Blob) {
      typed(body.type);
      return { bodyBase64: base64(body.bytes_) };
    }
    if (body instanceof FormData) {
      const m = multipart(body);
      typed(m.type);
      return { bodyBase64: base64(m.bytes) };
    }
    if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return { bodyBase64: base64(bytesOf(body)) };
    const iterable =
      body instanceof g.ReadableStream ? body : body && typeof body[Symbol.asyncIterator] === "function" ? body : null;
    if (iterable) {
      const chunks = [];
      for await (const chunk of iterable) chunks.push(bytesOf(chunk));
      return { bodyBase64: base64(concat(chunks)) };
    }
    throw internal.unsupported("fetch with this body type");
  }
  async function fetch(input, init) {
    const o = init || {};
    const url = typeof input === "string" ? input : input && (input.href || input.url || String(input));
    if (o.signal && o.signal.aborted) throw internal.abortError();
    const headers = {};
    new Headers(o.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const body = await requestBody(o.body, headers);
    const r = op(await kc.fetch(JSON.stringify(Object.assign({ url, method: o.method || "GET", headers }, body))));
    const stream = bodyStream(r.bodyId);
    if (o.signal)
      o.signal.addEventListener("abort", () => {
        stream.cancel();
      });
    return new Response(stream, { status: r.status, statusText: r.statusText, headers: r.headers, url: r.url });
  }
  g.fetch = fetch;
  g.Headers = g.Headers || Headers;
  g.Response = g.Response || Response;
  g.FormData = g.FormData || FormData;
  g.Blob = g.Blob || Blob;
  g.File = g.File || File;
})(globalThis);
