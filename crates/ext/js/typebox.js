// TypeBox builders: plain JSON Schema objects (what providers receive), with TypeBox's
// markers as non-enumerable properties so `JSON.stringify` leaves them out.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const Kind = Symbol.for("TypeBox.Kind");
  const OptionalKind = Symbol.for("TypeBox.Optional");
  function mark(schema, kind) {
    Object.defineProperty(schema, "~kind", { value: kind, enumerable: false, configurable: true, writable: true });
    Object.defineProperty(schema, Kind, { value: kind, enumerable: false, configurable: true, writable: true });
    return schema;
  }
  const build = (kind, base, options) => mark(Object.assign({}, options || {}, base), kind);
  const isOptional = (s) => !!(s && (s["~optional"] || s[OptionalKind]));
  const Type = {
    String: (o) => build("String", { type: "string" }, o),
    Number: (o) => build("Number", { type: "number" }, o),
    Integer: (o) => build("Integer", { type: "integer" }, o),
    Boolean: (o) => build("Boolean", { type: "boolean" }, o),
    Null: (o) => build("Null", { type: "null" }, o),
    Any: (o) => build("Any", {}, o),
    Unknown: (o) => build("Unknown", {}, o),
    Literal: (value, o) => build("Literal", { const: value, type: typeof value }, o),
    Array: (items, o) => build("Array", { type: "array", items }, o),
    Tuple: (items, o) => build("Tuple", { type: "array", items, additionalItems: false, minItems: items.length, maxItems: items.length }, o),
    Union: (anyOf, o) => build("Union", { anyOf }, o),
    Intersect: (allOf, o) => build("Intersect", { allOf }, o),
    Enum: (object, o) => build("Enum", { anyOf: Object.values(object).filter((v) => typeof object[v] !== "number").map((v) => ({ const: v, type: typeof v })) }, o),
    Record: (key, value, o) => build("Record", { type: "object", patternProperties: { "^.*$": value } }, o),
    Unsafe: (schema) => build("Unsafe", Object.assign({}, schema)),
    Ref: (ref, o) => build("Ref", { $ref: typeof ref === "string" ? ref : ref.$id }, o),
    Object(properties, o) {
      const required = Object.keys(properties).filter((k) => !isOptional(properties[k]));
      const base = { type: "object", properties };
      if (required.length) base.required = required;
      return build("Object", base, o);
    },
    Optional(schema) {
      const copy = Object.assign({}, schema);
      mark(copy, schema["~kind"] || "Unknown");
      Object.defineProperty(copy, "~optional", { value: true, enumerable: false, configurable: true });
      Object.defineProperty(copy, OptionalKind, { value: "Optional", enumerable: false, configurable: true });
      return copy;
    },
    Readonly: (schema) => schema,
    Partial(schema) {
      const properties = {};
      for (const [k, v] of Object.entries(schema.properties || {})) properties[k] = Type.Optional(v);
      return Type.Object(properties);
    },
  };
  const Value = {
    Clone: (v) => (v === undefined ? v : JSON.parse(JSON.stringify(v))),
    Check: internal.missing("typebox Value.Check"),
    Errors: internal.missing("typebox Value.Errors"),
    Parse: internal.missing("typebox Value.Parse"),
  };
  const typebox = { Type, Kind, OptionalKind, Value, default: Type };
  Object.assign(typebox, Type);
  internal.Type = Type;
  internal.defineHost("typebox", () => typebox);
})(globalThis);
