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
    Tuple: (items, o) => build("Tuple", { type: "array", additionalItems: false, items, minItems: items.length }, o),
    Union: (anyOf, o) => build("Union", { anyOf }, o),
    Intersect: (allOf, o) => build("Intersect", { allOf }, o),
    Enum: (object, o) =>
      build(
        "Enum",
        {
          anyOf: Object.values(object)
            .filter((v) => typeof object[v] !== "number")
            .map((v) => ({ const: v, type: typeof v })),
        },
        o,
      ),
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
  // Validation as TypeBox 1.x's `Value.Errors` reports it: ajv-shaped errors
  // (`keyword`, `schemaPath` of the schema holding the keyword, `instancePath`, `params`,
  // `message`) in its order; `path`/`value` and `First()` keep 0.3x callers working.
  const typeOk = (type, v) => {
    switch (type) {
      case "string":
        return typeof v === "string";
      case "number":
        return typeof v === "number" && Number.isFinite(v);
      case "integer":
        return typeof v === "number" && Number.isInteger(v);
      case "boolean":
        return typeof v === "boolean";
      case "null":
        return v === null;
      case "array":
        return Array.isArray(v);
      case "object":
        return typeof v === "object" && v !== null && !Array.isArray(v);
      default:
        return true;
    }
  };
  const pointer = (key) => "/" + String(key).replace(/~/g, "~0").replace(/\//g, "~1");
  const equal = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  function validate(schema, value, schemaPath, instancePath, out) {
    if (schema === true || schema === undefined) return;
    const push = (keyword, params, message) =>
      out.push({ keyword, schemaPath, instancePath, params, message, path: instancePath, value });
    if (schema === false) {
      push("boolean", {}, "schema is false");
      return;
    }
    if (typeof schema !== "object" || schema === null) return;
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      // Not the end: the keywords of the value's own type are still checked (as TypeBox).
      if (!types.some((t) => typeOk(t, value))) push("type", { type: schema.type }, `must be ${types.join(",")}`);
    }
    if ("const" in schema && !equal(schema.const, value))
      push("const", { allowedValue: schema.const }, "must be equal to constant");
    if (Array.isArray(schema.enum) && !schema.enum.some((e) => equal(e, value)))
      push("enum", { allowedValues: schema.enum }, "must be equal to one of the allowed values");
    if (typeof value === "string") {
      if (typeof schema.maxLength === "number" && [...value].length > schema.maxLength)
        push("maxLength", { limit: schema.maxLength }, `must not have more than ${schema.maxLength} characters`);
      if (typeof schema.minLength === "number" && [...value].length < schema.minLength)
        push("minLength", { limit: schema.minLength }, `must not have fewer than ${schema.minLength} characters`);
      if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value))
        push("pattern", { pattern: schema.pattern }, `must match pattern "${schema.pattern}"`);
    }
    if (typeof value === "number") {
      if (typeof schema.exclusiveMaximum === "number" && !(value < schema.exclusiveMaximum))
        push(
          "exclusiveMaximum",
          { comparison: "<", limit: schema.exclusiveMaximum },
          `must be < ${schema.exclusiveMaximum}`,
        );
      if (typeof schema.exclusiveMinimum === "number" && !(value > schema.exclusiveMinimum))
        push(
          "exclusiveMinimum",
          { comparison: ">", limit: schema.exclusiveMinimum },
          `must be > ${schema.exclusiveMinimum}`,
        );
      if (typeof schema.maximum === "number" && !(value <= schema.maximum))
        push("maximum", { comparison: "<=", limit: schema.maximum }, `must be <= ${schema.maximum}`);
      if (typeof schema.minimum === "number" && !(value >= schema.minimum))
        push("minimum", { comparison: ">=", limit: schema.minimum }, `must be >= ${schema.minimum}`);
      if (typeof schema.multipleOf === "number" && !Number.isInteger(value / schema.multipleOf))
        push("multipleOf", { multipleOf: schema.multipleOf }, `must be multiple of ${schema.multipleOf}`);
    }
    if (Array.isArray(value)) {
      if (typeof schema.minItems === "number" && value.length < schema.minItems)
        push("minItems", { limit: schema.minItems }, `must not have fewer than ${schema.minItems} items`);
      if (typeof schema.maxItems === "number" && value.length > schema.maxItems)
        push("maxItems", { limit: schema.maxItems }, `must not have more than ${schema.maxItems} items`);
      if (schema.uniqueItems === true) {
        const seen = new Set();
        const duplicates = [];
        for (const item of value) {
          const key = JSON.stringify(item);
          if (seen.has(key)) duplicates.push(item);
          else seen.add(key);
        }
        if (duplicates.length) push("uniqueItems", { duplicateItems: duplicates }, "must not have duplicate items");
      }
      if (Array.isArray(schema.items)) {
        if (schema.additionalItems !== undefined) {
          for (let i = schema.items.length; i < value.length; i++)
            validate(
              schema.additionalItems,
              value[i],
              `${schemaPath}/additionalItems`,
              instancePath + pointer(i),
              out,
            );
        }
        schema.items.forEach((item, i) => {
          if (i < value.length) validate(item, value[i], `${schemaPath}/items/${i}`, instancePath + pointer(i), out);
        });
      } else if (schema.items !== undefined) {
        value.forEach((item, i) =>
          validate(schema.items, item, `${schemaPath}/items`, instancePath + pointer(i), out),
        );
      }
    }
    if (typeOk("object", value)) {
      const properties = schema.properties || {};
      if (Array.isArray(schema.required)) {
        const missing = schema.required.filter((k) => !(k in value) || value[k] === undefined);
        if (missing.length)
          push("required", { requiredProperties: missing }, `must have required properties ${missing.join(", ")}`);
      }
      if (schema.additionalProperties !== undefined) {
        const patterns = Object.keys(schema.patternProperties || {}).map((p) => new RegExp(p, "u"));
        const extra = Object.keys(value).filter((k) => !(k in properties) && !patterns.some((r) => r.test(k)));
        const before = out.length;
        for (const k of extra)
          validate(
            schema.additionalProperties,
            value[k],
            `${schemaPath}/additionalProperties`,
            instancePath + pointer(k),
            out,
          );
        if (out.length > before)
          push("additionalProperties", { additionalProperties: extra }, "must not have additional properties");
      }
      for (const [k, sub] of Object.entries(properties)) {
        if (k in value && value[k] !== undefined)
          validate(sub, value[k], `${schemaPath}/properties/${k}`, instancePath + pointer(k), out);
      }
      for (const [p, sub] of Object.entries(schema.patternProperties || {})) {
        const r = new RegExp(p, "u");
        for (const k of Object.keys(value))
          if (r.test(k))
            validate(sub, value[k], `${schemaPath}/patternProperties/${p}`, instancePath + pointer(k), out);
      }
    }
    if (Array.isArray(schema.allOf))
      schema.allOf.forEach((sub, i) => validate(sub, value, `${schemaPath}/allOf/${i}`, instancePath, out));
    if (Array.isArray(schema.anyOf)) {
      const branches = schema.anyOf.map((sub, i) => {
        const e = [];
        validate(sub, value, `${schemaPath}/anyOf/${i}`, instancePath, e);
        return e;
      });
      if (!branches.some((e) => e.length === 0)) {
        for (const e of branches) out.push(...e);
        push("anyOf", {}, "must match a schema in anyOf");
      }
    }
    if (Array.isArray(schema.oneOf)) {
      const branches = schema.oneOf.map((sub, i) => {
        const e = [];
        validate(sub, value, `${schemaPath}/oneOf/${i}`, instancePath, e);
        return e;
      });
      const passing = branches.map((e, i) => (e.length === 0 ? i : -1)).filter((i) => i >= 0);
      if (passing.length === 0) for (const e of branches) out.push(...e);
      if (passing.length !== 1) push("oneOf", { passingSchemas: passing }, "must match exactly one schema in oneOf");
    }
    if (schema.not !== undefined) {
      const e = [];
      validate(schema.not, value, `${schemaPath}/not`, instancePath, e);
      if (e.length === 0) push("not", {}, "must not be valid");
    }
  }
  function errors(schema, value) {
    const out = [];
    validate(schema, value, "#", "", out);
    Object.defineProperty(out, "First", { value: () => out[0], enumerable: false });
    return out;
  }
  const Value = {
    Clone: (v) => (v === undefined ? v : JSON.parse(JSON.stringify(v))),
    Check: (schema, value) => errors(schema, value).length === 0,
    Errors: errors,
    Parse: internal.missing("typebox Value.Parse"),
  };
  // `typebox/compile`'s `Compile(schema)` (and `@sinclair/typebox/compiler`'s
  // `TypeCompiler.Compile`): a validator over the same checks as `Value`, nothing compiled.
  const Compile = (schema) => ({
    schema: () => schema,
    Check: (value) => Value.Check(schema, value),
    Errors: (value) => errors(schema, value),
    Decode(value) {
      const found = errors(schema, value);
      if (found.length) throw new Error(`Unable to decode value: ${found[0].message}`);
      return value;
    },
    Encode: (value) => value,
  });
  const typebox = { Type, Kind, OptionalKind, Value, Compile, TypeCompiler: { Compile }, default: Type };
  Object.assign(typebox, Type);
  internal.defineHost("typebox", () => typebox);
})(globalThis);
