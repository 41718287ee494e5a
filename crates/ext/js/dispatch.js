// How the results of an event's handlers compose into the one answer Rust gets (`calls.dispatch`
// of api.js): who may block, patch, replace or cancel, and whether the walk stops there. The
// reference's rules per event; one round trip per event, whatever the number of handlers.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;

  // `run(name, event, step, errors)` is api.js's walk over the handlers: `step(result, event,
  // ext)` folds each handler's result and returns true to stop; errors are collected.
  internal.dispatchEvent = async function (run, { event: name, payload }) {
    const errors = [];
    const event = Object.assign({ type: name }, payload);
    let result = null;
    if (name === "tool_call") {
      const before = JSON.stringify(event.input);
      await run(
        name,
        event,
        (r) => {
          if (r && r.block) {
            result = { block: true, reason: r.reason || "Blocked by extension" };
            return true;
          }
          return false;
        },
        errors,
      );
      const after = JSON.stringify(event.input);
      if (!result && after !== before) result = { input: event.input };
    } else if (name === "project_trust") {
      // The first "yes" or "no" decides; "undecided" (or nothing) falls through.
      await run(
        name,
        event,
        (r) => {
          if (r && (r.trusted === "yes" || r.trusted === "no")) {
            result = { trusted: r.trusted, remember: r.remember === true };
            return true;
          }
          return false;
        },
        errors,
      );
    } else if (name === "tool_result") {
      const patch = {};
      await run(
        name,
        event,
        (r) => {
          if (!r || typeof r !== "object") return false;
          for (const key of ["content", "details", "isError", "structuredContent"])
            if (r[key] !== undefined) {
              patch[key] = r[key];
              event[key] = r[key];
            }
          // New text without new structured content drops the old: a handler that redacts
          // `content` must not leave the data scripts would get.
          if (r.content !== undefined && r.structuredContent === undefined) {
            patch.structuredContent = null;
            delete event.structuredContent;
          }
          return false;
        },
        errors,
      );
      result = patch;
    } else if (name === "input") {
      result = { action: "continue" };
      await run(
        name,
        event,
        (r) => {
          if (!r || r.action === "continue") return false;
          if (r.action === "handled") {
            result = { action: "handled" };
            return true;
          }
          if (r.action === "transform") {
            event.text = r.text;
            if (r.images) event.images = r.images;
            result = { action: "transform", text: event.text, images: event.images };
          }
          return false;
        },
        errors,
      );
    } else if (name === "before_agent_start") {
      result = { messages: [] };
      await run(
        name,
        event,
        (r) => {
          if (!r) return false;
          if (r.message) result.messages.push(r.message);
          if (typeof r.systemPrompt === "string") {
            result.systemPrompt = r.systemPrompt;
            event.systemPrompt = r.systemPrompt;
          }
          return false;
        },
        errors,
      );
    } else if (name === "message_end") {
      // A `{message}` with the same role replaces it; each handler sees the one before.
      const role = event.message && event.message.role;
      await run(
        name,
        event,
        (r, ev, ext) => {
          if (!r || !r.message) return false;
          if (r.message.role !== role) {
            errors.push({
              extensionPath: ext.path,
              event: "message_end",
              error: "message_end handlers must return a message with the same role",
            });
            return false;
          }
          event.message = r.message;
          result = { message: r.message };
          return false;
        },
        errors,
      );
    } else if (name === "before_provider_headers") {
      // Handlers edit `event.headers` in place; what they leave is sent.
      await run(name, event, null, errors);
      result = { headers: event.headers };
    } else if (name === "before_provider_request") {
      // Any non-undefined return replaces the payload; later handlers see the new one.
      await run(
        name,
        event,
        (r) => {
          if (r !== undefined) {
            event.payload = r;
            result = { payload: r };
          }
          return false;
        },
        errors,
      );
    } else if (name === "context") {
      const before = JSON.stringify(event.messages);
      await run(
        name,
        event,
        (r) => {
          if (r && Array.isArray(r.messages)) event.messages = r.messages;
          return false;
        },
        errors,
      );
      if (JSON.stringify(event.messages) !== before) result = { messages: event.messages };
    } else if (name === "resources_discover") {
      // Every handler's paths in load order, each with the extension that named it.
      result = { skillPaths: [], promptPaths: [], themePaths: [] };
      await run(
        name,
        event,
        (r, _event, ext) => {
          if (!r || typeof r !== "object") return false;
          for (const key of Object.keys(result)) {
            if (!Array.isArray(r[key])) continue;
            for (const path of r[key])
              if (typeof path === "string") result[key].push({ path, extensionPath: ext.path });
          }
          return false;
        },
        errors,
      );
    } else if (name === "user_bash") {
      // The first handler with `{result}` (or `{operations}`) takes the command.
      await run(
        name,
        event,
        (r) => {
          if (!r || typeof r !== "object" || (r.result === undefined && r.operations === undefined)) return false;
          result = r.result !== undefined ? { result: r.result } : { operations: true };
          return true;
        },
        errors,
      );
      // A throwing handler blocks the command (fail-safe, as for tool_call).
      if (!result && errors.length > 0) result = { blocked: `${errors[0].error}` };
    } else if (name === "cache_warming_decision") {
      // The last handler that returns an action wins; a throwing one leaves the decision as it was.
      await run(
        name,
        event,
        (r) => {
          if (r && (r.action === "warm" || r.action === "stop")) result = { action: r.action };
          return false;
        },
        errors,
      );
    } else if (name.startsWith("session_before_")) {
      // The last result stands; the first `cancel: true` stops and cancels.
      await run(
        name,
        event,
        (r) => {
          if (!r || typeof r !== "object") return false;
          result = r;
          return r.cancel === true;
        },
        errors,
      );
    } else {
      await run(name, event, null, errors);
    }
    return { result, errors };
  };
})(globalThis);
