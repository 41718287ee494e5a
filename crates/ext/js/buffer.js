// `Buffer` and `node:buffer`: a Uint8Array with Node's encodings (utf8, base64, base64url,
// hex, latin1/binary, ascii, utf16le), views (`slice`/`subarray` share memory), search,
// comparison and the fixed-width integer and float readers and writers that binary
// protocols use (undici, the MCP SDK, websocket framing).
(function (g) {
  "use strict";
  const internal = g.__kcInternal;

  const normal = (encoding) => {
    const e = String(encoding || "utf8").toLowerCase();
    if (e === "utf-8") return "utf8";
    if (e === "binary") return "latin1";
    if (e === "ucs2" || e === "ucs-2" || e === "utf-16le") return "utf16le";
    return e;
  };
  const base64Bytes = (text) => {
    const s = g.atob(
      String(text)
        .replace(/-/g, "+")
        .replace(/_/g, "/")
        .replace(/[^A-Za-z0-9+/]/g, ""),
    );
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  };
  const binaryString = (bytes) => {
    let s = "";
    for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    return s;
  };
  function encode(text, encoding) {
    switch (normal(encoding)) {
      case "base64":
      case "base64url":
        return base64Bytes(text);
      case "hex": {
        const out = new Uint8Array(text.length >> 1);
        for (let i = 0; i < out.length; i++) {
          const v = parseInt(text.substr(i * 2, 2), 16);
          if (Number.isNaN(v)) return out.subarray(0, i);
          out[i] = v;
        }
        return out;
      }
      case "latin1":
      case "ascii": {
        const out = new Uint8Array(text.length);
        for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
        return out;
      }
      case "utf16le": {
        const out = new Uint8Array(text.length * 2);
        for (let i = 0; i < text.length; i++) {
          const c = text.charCodeAt(i);
          out[i * 2] = c & 0xff;
          out[i * 2 + 1] = c >> 8;
        }
        return out;
      }
      default:
        return new g.TextEncoder().encode(text);
    }
  }
  function decode(bytes, encoding) {
    switch (normal(encoding)) {
      case "base64":
        return g.btoa(binaryString(bytes));
      case "base64url":
        return g.btoa(binaryString(bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      case "hex": {
        let s = "";
        for (const x of bytes) s += (x < 16 ? "0" : "") + x.toString(16);
        return s;
      }
      case "latin1":
        return binaryString(bytes);
      case "ascii": {
        let s = "";
        for (const x of bytes) s += String.fromCharCode(x & 0x7f);
        return s;
      }
      case "utf16le": {
        let s = "";
        for (let i = 0; i + 1 < bytes.length; i += 2) s += String.fromCharCode(bytes[i] | (bytes[i + 1] << 8));
        return s;
      }
      default:
        return new g.TextDecoder().decode(bytes);
    }
  }
  const rangeError = (message) => Object.assign(new RangeError(message), { code: "ERR_OUT_OF_RANGE" });

  class Buffer extends Uint8Array {
    static from(value, encodingOrOffset, length) {
      if (typeof value === "string") return Buffer._wrap(encode(value, encodingOrOffset));
      if (
        value instanceof ArrayBuffer ||
        (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer)
      ) {
        const offset = encodingOrOffset || 0;
        return new Buffer(value, offset, length === undefined ? value.byteLength - offset : length);
      }
      if (value && value.type === "Buffer" && Array.isArray(value.data)) value = value.data;
      const b = new Buffer(value.length);
      b.set(value);
      return b;
    }
    // A view of `bytes`' memory as a Buffer (no copy).
    static _wrap(bytes) {
      return new Buffer(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    static alloc(n, fill = 0, encoding) {
      const b = new Buffer(n);
      if (fill !== 0) b.fill(fill, 0, n, encoding);
      return b;
    }
    static allocUnsafe(n) {
      return new Buffer(n);
    }
    static allocUnsafeSlow(n) {
      return new Buffer(n);
    }
    static isBuffer(v) {
      return v instanceof Buffer;
    }
    static isEncoding(e) {
      return ["utf8", "base64", "base64url", "hex", "latin1", "ascii", "utf16le"].includes(normal(e));
    }
    static byteLength(s, encoding) {
      return typeof s === "string" ? encode(s, encoding).length : s.byteLength;
    }
    static concat(list, total) {
      const n = total === undefined ? list.reduce((a, b) => a + b.length, 0) : total;
      const out = Buffer.alloc(n);
      let o = 0;
      for (const b of list) {
        if (o >= n) break;
        out.set(b.subarray(0, n - o), o);
        o += b.length;
      }
      return out;
    }
    static compare(a, b) {
      const n = Math.min(a.length, b.length);
      for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
      return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
    }
    toString(encoding, start = 0, end = this.length) {
      return decode(this.subarray(start, end), encoding);
    }
    toJSON() {
      return { type: "Buffer", data: Array.from(this) };
    }
    equals(other) {
      return Buffer.compare(this, other) === 0;
    }
    compare(other) {
      return Buffer.compare(this, other);
    }
    slice(start, end) {
      return this.subarray(start, end);
    }
    subarray(start, end) {
      const view = Uint8Array.prototype.subarray.call(this, start, end);
      return view instanceof Buffer ? view : Buffer._wrap(view);
    }
    write(text, offset = 0, length, encoding) {
      if (typeof offset === "string") {
        encoding = offset;
        offset = 0;
      }
      if (typeof length === "string") {
        encoding = length;
        length = undefined;
      }
      const bytes = encode(String(text), encoding);
      const n = Math.min(bytes.length, this.length - offset, length === undefined ? Infinity : length);
      this.set(bytes.subarray(0, n), offset);
      return n;
    }
    fill(value, start = 0, end = this.length, encoding) {
      if (typeof start === "string") {
        encoding = start;
        start = 0;
        end = this.length;
      }
      if (typeof value === "string") {
        const bytes = encode(value, encoding);
        if (bytes.length === 0) return Uint8Array.prototype.fill.call(this, 0, start, end);
        for (let i = start, j = 0; i < end; i++, j = (j + 1) % bytes.length) this[i] = bytes[j];
        return this;
      }
      return Uint8Array.prototype.fill.call(this, value, start, end);
    }
    copy(target, targetStart = 0, sourceStart = 0, sourceEnd = this.length) {
      const part = this.subarray(sourceStart, Math.min(sourceEnd, sourceStart + target.length - targetStart));
      target.set(part, targetStart);
      return part.length;
    }
    indexOf(value, from = 0, encoding) {
      if (typeof value === "number") return Uint8Array.prototype.indexOf.call(this, value, from);
      const needle = typeof value === "string" ? encode(value, encoding) : value;
      if (from < 0) from = Math.max(0, this.length + from);
      outer: for (let i = from; i <= this.length - needle.length; i++) {
        for (let j = 0; j < needle.length; j++) if (this[i + j] !== needle[j]) continue outer;
        return i;
      }
      return -1;
    }
    lastIndexOf(value, from = this.length, encoding) {
      const needle = typeof value === "number" ? [value] : typeof value === "string" ? encode(value, encoding) : value;
      outer: for (let i = Math.min(from, this.length - needle.length); i >= 0; i--) {
        for (let j = 0; j < needle.length; j++) if (this[i + j] !== needle[j]) continue outer;
        return i;
      }
      return -1;
    }
    includes(value, from, encoding) {
      return this.indexOf(value, from, encoding) !== -1;
    }
    _view() {
      return new DataView(this.buffer, this.byteOffset, this.byteLength);
    }
    _check(offset, size) {
      if (offset < 0 || offset + size > this.length)
        throw rangeError(
          `The value of "offset" is out of range. It must be >= 0 and <= ${this.length - size}. Received ${offset}`,
        );
    }
  }
  // readUInt8, readInt32BE, writeUInt16LE, readFloatLE, readBigUInt64BE, … from DataView.
  const fixed = [
    ["UInt8", "Uint8", 1],
    ["Int8", "Int8", 1],
    ["UInt16", "Uint16", 2],
    ["Int16", "Int16", 2],
    ["UInt32", "Uint32", 4],
    ["Int32", "Int32", 4],
    ["Float", "Float32", 4],
    ["Double", "Float64", 8],
    ["BigUInt64", "BigUint64", 8],
    ["BigInt64", "BigInt64", 8],
  ];
  for (const [name, view, size] of fixed) {
    const ends =
      size === 1
        ? [["", false]]
        : [
            ["LE", true],
            ["BE", false],
          ];
    for (const [end, little] of ends) {
      const read = function (offset = 0) {
        this._check(offset, size);
        return this._view()[`get${view}`](offset, little);
      };
      const write = function (value, offset = 0) {
        this._check(offset, size);
        this._view()[`set${view}`](offset, value, little);
        return offset + size;
      };
      Buffer.prototype[`read${name}${end}`] = read;
      Buffer.prototype[`write${name}${end}`] = write;
      if (name.startsWith("UInt")) {
        Buffer.prototype[`readUint${name.slice(4)}${end}`] = read;
        Buffer.prototype[`writeUint${name.slice(4)}${end}`] = write;
      }
    }
  }
  // Variable-width unsigned reads (websocket and TLS framing use 6-byte lengths).
  Buffer.prototype.readUIntBE = function (offset, width) {
    this._check(offset, width);
    let v = 0;
    for (let i = 0; i < width; i++) v = v * 256 + this[offset + i];
    return v;
  };
  Buffer.prototype.readUIntLE = function (offset, width) {
    this._check(offset, width);
    let v = 0;
    for (let i = width - 1; i >= 0; i--) v = v * 256 + this[offset + i];
    return v;
  };

  g.Buffer = Buffer;
  const constants = { MAX_LENGTH: 2 ** 31 - 1, MAX_STRING_LENGTH: 2 ** 29 - 24 };
  internal.defineHost("node:buffer", () => ({
    Buffer,
    constants,
    kMaxLength: constants.MAX_LENGTH,
    kStringMaxLength: constants.MAX_STRING_LENGTH,
    Blob: g.Blob,
    File: g.File,
    atob: g.atob,
    btoa: g.btoa,
    isUtf8: (bytes) => {
      try {
        decodeURIComponent(escape(binaryString(bytes)));
        return true;
      } catch {
        return false;
      }
    },
    SlowBuffer: Buffer,
  }));
})(globalThis);
