// `fetch`, `Headers` and `Response` (buffered bodies) over the `fetch` op (`src/fetch.rs`).
// Enough for OAuth token exchanges and JSON APIs; `response.body` streams are not there yet.
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
      const entries = init instanceof Headers ? [...init.entries()] : Array.isArray(init) ? init : Object.entries(init);
      for (const [k, v] of entries) this.append(k, v);
    }
    append(k, v) { const key = String(k).toLowerCase(); const old = this.map.get(key); this.map.set(key, old === undefined ? String(v) : `${old}, ${v}`); }
    set(k, v) { this.map.set(String(k).toLowerCase(), String(v)); }
    get(k) { const v = this.map.get(String(k).toLowerCase()); return v === undefined ? null : v; }
    has(k) { return this.map.has(String(k).toLowerCase()); }
    delete(k) { this.map.delete(String(k).toLowerCase()); }
    forEach(fn, self) { for (const [k, v] of this.map) fn.call(self, v, k, this); }
    entries() { return this.map.entries(); }
    keys() { return this.map.keys(); }
    values() { return this.map.values(); }
    [Symbol.iterator]() { return this.map.entries(); }
  }
  class Response {
    constructor(body, init) {
      const o = init || {};
      this._body = body === undefined || body === null ? "" : String(body);
      this.status = o.status === undefined ? 200 : o.status;
      this.statusText = o.statusText || "";
      this.headers = o.headers instanceof Headers ? o.headers : new Headers(o.headers);
      this.url = o.url || "";
      this.ok = this.status >= 200 && this.status < 300;
      this.bodyUsed = false;
      this.body = null;
    }
    async text() { this.bodyUsed = true; return this._body; }
    async json() { return JSON.parse(await this.text()); }
    async arrayBuffer() { return new TextEncoder().encode(await this.text()).buffer; }
    clone() { return new Response(this._body, this); }
  }
  function bodyText(body) {
    if (body === undefined || body === null) return undefined;
    if (typeof body === "string") return body;
    if (body instanceof URLSearchParams) return body.toString();
    if (body instanceof Uint8Array || body instanceof ArrayBuffer) return new TextDecoder().decode(body);
    throw internal.unsupported("fetch with this body type");
  }
  async function fetch(input, init) {
    const o = init || {};
    const url = typeof input === "string" ? input : input && (input.href || input.url || String(input));
    if (o.signal && o.signal.aborted) throw internal.abortError ? internal.abortError() : new Error("This operation was aborted");
    const headers = {};
    new Headers(o.headers).forEach((v, k) => { headers[k] = v; });
    const body = bodyText(o.body);
    if (body !== undefined && o.body instanceof URLSearchParams && !headers["content-type"]) headers["content-type"] = "application/x-www-form-urlencoded;charset=UTF-8";
    const r = op(await kc.fetch(JSON.stringify({ url, method: o.method || "GET", headers, body })));
    return new Response(r.body, { status: r.status, statusText: r.statusText, headers: r.headers, url: r.url });
  }
  g.fetch = fetch;
  g.Headers = g.Headers || Headers;
  g.Response = g.Response || Response;
})(globalThis);
