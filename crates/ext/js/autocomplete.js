// Autocomplete providers (`ctx.ui.addAutocompleteProvider`) in the terminal: they wrap the
// one before them, the built-in first; the terminal asks the chain (`uiAutocomplete`) after a
// key changes the editor, and the answer goes back on the component channel of ui.js.
// Evaluated after ui.js.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const calls = (internal.extraCalls = internal.extraCalls || {});
  const send = internal.sendComponentMessage;

  // Autocomplete: the built-in provider, as the chain's `current`, only says "ours".
  const completionFactories = [];
  let completionChain = null;
  const BUILTIN = Object.freeze({ items: [], prefix: "", builtin: true });
  const builtinProvider = {
    getSuggestions: async () => BUILTIN,
    applyCompletion(lines, cursorLine, cursorCol, item, prefix) {
      const line = lines[cursorLine] || "";
      const start = Math.max(0, cursorCol - String(prefix || "").length);
      const next = [...lines];
      next[cursorLine] = line.slice(0, start) + item.value + line.slice(cursorCol);
      return { lines: next, cursorLine, cursorCol: start + item.value.length };
    },
    shouldTriggerFileCompletion: () => true,
  };
  function completionProvider() {
    if (completionChain) return completionChain;
    let provider = builtinProvider;
    for (const factory of completionFactories) {
      try {
        provider = factory(provider) || provider;
      } catch (e) {
        internal.reportUncaught(e);
      }
    }
    return (completionChain = provider);
  }
  let completionAbort = null;
  calls.uiAutocomplete = ({ id, lines, cursorLine, cursorCol }) => {
    if (completionAbort) completionAbort.abort();
    const controller = (completionAbort = new AbortController());
    Promise.resolve()
      .then(() =>
        completionProvider().getSuggestions(lines, cursorLine, cursorCol, { signal: controller.signal, force: false }),
      )
      .then((found) => {
        if (controller.signal.aborted) return;
        if (!found || found === BUILTIN || found.builtin === true || !Array.isArray(found.items)) {
          send({ op: "completions", id, builtin: true });
          return;
        }
        const items = found.items
          .filter((i) => i && i.value !== undefined)
          .map((i) => ({
            value: String(i.value),
            label: i.label === undefined ? String(i.value) : String(i.label),
            description: i.description === undefined ? undefined : String(i.description),
          }));
        send({ op: "completions", id, prefix: String(found.prefix || ""), items });
      })
      .catch((e) => internal.reportUncaught(e));
    return null;
  };

  // `ctx.ui.addAutocompleteProvider` in the terminal (ui.js's terminalUi).
  internal.addAutocompleteProvider = (factory) => {
    if (typeof factory !== "function") return;
    completionFactories.push(factory);
    completionChain = null;
    send({ op: "autocomplete" });
  };
  // A restart (session replacement, reload) drops the old extensions' providers.
  internal.resetAutocomplete = () => {
    completionFactories.length = 0;
    completionChain = null;
  };
})(globalThis);
