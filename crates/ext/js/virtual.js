// Virtual models (`pi.registerVirtualModel`): a model entry whose `route(request, ctx)` picks
// the physical model of each request. The entries join the Rust registry (`api`
// "knightcode-virtual"); before every request with one, Rust calls `routeVirtual` here, which
// reads the router's state from the session branch, calls `route` and stores a new state.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const SessionOp = internal.SessionOp;
  const kc = internal.kc;
  const calls = (internal.extraCalls = internal.extraCalls || {});
  const VIRTUAL_API = "knightcode-virtual";
  const STATE_TYPE = "knightcode.virtual-model-state";
  const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];
  const virtualModels = new Map(); // "provider/id" -> { ext, def, model }
  const keyOf = (provider, id) => `${provider}/${id}`;

  // A token count as the catalog holds it (unknown = 0).
  const count = (n) => (Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

  // The catalog entry of a definition (a bad definition throws to the caller).
  function catalogEntry(def) {
    if (!def || typeof def !== "object") throw new TypeError("registerVirtualModel: the definition must be an object");
    for (const field of ["provider", "id"])
      if (typeof def[field] !== "string" || def[field] === "")
        throw new TypeError(`registerVirtualModel: "${field}" must be a non-empty string`);
    if (typeof def.route !== "function")
      throw new TypeError(`Virtual model ${def.provider}/${def.id}: "route" must be a function`);
    const levels = Array.isArray(def.thinkingLevels) && def.thinkingLevels.length > 0 ? def.thinkingLevels : ["off"];
    for (const level of levels)
      if (!LEVELS.includes(level))
        throw new TypeError(`Virtual model ${def.provider}/${def.id}: unknown thinking level "${level}"`);
    const thinkingLevelMap = {};
    for (const level of LEVELS) thinkingLevelMap[level] = levels.includes(level) ? level : null;
    return {
      id: def.id,
      name: typeof def.name === "string" && def.name ? def.name : def.id,
      api: VIRTUAL_API,
      provider: def.provider,
      baseUrl: "",
      reasoning: levels.some((level) => level !== "off"),
      thinkingLevelMap,
      input: Array.isArray(def.input) ? def.input.slice() : ["text", "image"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: count(def.contextWindow),
      maxTokens: count(def.maxTokens),
    };
  }

  internal.registerVirtualModel = function (ext, def) {
    const model = catalogEntry(def);
    virtualModels.set(keyOf(model.provider, model.id), { ext, def, model });
    // While loading, Rust reads the registrations once the factory returns; afterwards the
    // session's registry takes the model at once.
    if (ext.state !== "loading") internal.session(SessionOp.registerVirtualModel, { model, extensionPath: ext.path });
  };
  internal.unregisterVirtualModel = function (ext, provider, id) {
    if (!virtualModels.delete(keyOf(provider, id))) return;
    if (ext.state !== "loading") internal.session(SessionOp.unregisterVirtualModel, { provider, id });
  };
  // An extension that failed to load, or a runtime torn down, leaves no virtual models.
  internal.dropVirtualModels = (ext) => {
    for (const [key, entry] of [...virtualModels]) if (!ext || entry.ext === ext) virtualModels.delete(key);
  };
  internal.virtualModelSpecs = () =>
    [...virtualModels.values()].map((entry) => ({ model: entry.model, extensionPath: entry.ext.path }));

  const find = (provider, id) => internal.modelRegistry.find(provider, id);
  // A model of a message (`provider`, `model` id) as the router sees it: the registry's entry,
  // else what the message names.
  const modelOfMessage = (m) => find(m.provider, m.model) || { provider: m.provider, id: m.model, api: m.api };

  // The latest state the router stored for this model on the current branch.
  function storedState(provider, id) {
    const branch = internal.session(SessionOp.getBranch, { customType: STATE_TYPE }) || [];
    for (let i = branch.length - 1; i >= 0; i--) {
      const e = branch[i];
      if (e.type !== "custom" || e.customType !== STATE_TYPE || !e.data) continue;
      if (e.data.provider === provider && e.data.modelId === id) return e.data.state;
    }
    return undefined;
  }

  calls.routeVirtual = async function ({
    provider,
    id,
    thinkingLevel,
    reason,
    failed,
    systemPrompt,
    previous,
    routeId,
  }) {
    const entry = virtualModels.get(keyOf(provider, id));
    if (!entry) throw new Error(`Virtual model ${provider}/${id} is not registered`);
    const request = { model: entry.model, thinkingLevel, reason };
    // The conversation stays in Rust under `routeId` while this call runs and is converted
    // when the router first reads it (see virtual_route.rs); then an ordinary property the
    // router may change.
    let messages;
    Object.defineProperty(request, "messages", {
      enumerable: true,
      configurable: true,
      get() {
        if (messages === undefined) {
          const history = kc.routeMessages(routeId);
          if (history === undefined)
            throw new Error("request.messages can be read only while route() runs; keep a copy to use it later");
          const parsed = JSON.parse(history);
          messages = systemPrompt ? [{ role: "system", content: systemPrompt }].concat(parsed) : parsed;
        }
        return messages;
      },
      set(value) {
        messages = value;
      },
    });
    // The last answer that did not fail (Rust found it), as the router sees models.
    if (previous) {
      request.previous = { model: modelOfMessage(previous) };
      if (previous.thinkingLevel) request.previous.thinkingLevel = previous.thinkingLevel;
    }
    if (failed) {
      request.failed = { model: modelOfMessage(failed), message: failed.errorMessage || "Unknown error" };
      if (failed.thinkingLevel) request.failed.thinkingLevel = failed.thinkingLevel;
    }
    // State belongs to the conversation's requests; a direct call neither sees nor stores it.
    const direct = reason === "direct";
    if (!direct) {
      const state = storedState(provider, id);
      if (state !== undefined) request.state = state;
    }
    const result = await entry.def.route(request, internal.eventContext());
    if (!result || typeof result !== "object" || !result.model || typeof result.model !== "object")
      throw new Error("route() must return { model, thinkingLevel }");
    const model = result.model;
    if (typeof model.provider !== "string" || typeof model.id !== "string")
      throw new Error("route() returned a model without provider and id");
    if (model.api === VIRTUAL_API) throw new Error(`route() returned the virtual model ${model.provider}/${model.id}`);
    if (!direct && result.state !== undefined && result.state !== request.state) {
      // Stored before the request is sent, so a resumed session routes from it.
      const state = JSON.parse(JSON.stringify(result.state));
      internal.session(SessionOp.appendEntry, { customType: STATE_TYPE, data: { provider, modelId: id, state } });
    }
    const level = typeof result.thinkingLevel === "string" ? result.thinkingLevel : thinkingLevel;
    return { model, thinkingLevel: level };
  };
})(globalThis);
