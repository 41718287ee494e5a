// The session operations: what extensions ask of the session through the host (`SessionOp`
// in crates/ext/src/session_op.rs, by the names it parses), named once, here, and the two
// ways to call them. Every other file names an operation as `SessionOp.<name>`;
// crates/ext/tests/suite/session_ops.rs checks this table against the Rust enum both ways,
// that every entry is used and that no file calls an operation by a string.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const op = internal.op;

  const SessionOp = Object.freeze({
    // The UI and the run's state.
    hasUI: "hasUI",
    ui: "ui",
    uiComponent: "uiComponent",
    uiTerminal: "uiTerminal",
    getEditorText: "getEditorText",
    isProjectTrusted: "isProjectTrusted",
    getSystemPrompt: "getSystemPrompt",
    getSystemPromptOptions: "getSystemPromptOptions",
    isIdle: "isIdle",
    hasPendingMessages: "hasPendingMessages",
    getContextUsage: "getContextUsage",
    getModel: "getModel",
    getThinkingLevel: "getThinkingLevel",
    getActiveTools: "getActiveTools",
    abort: "abort",
    shutdown: "shutdown",
    waitForIdle: "waitForIdle",
    // What extensions ask the session to do.
    sendUserMessage: "sendUserMessage",
    sendMessage: "sendMessage",
    setModel: "setModel",
    setThinkingLevel: "setThinkingLevel",
    registerProvider: "registerProvider",
    unregisterProvider: "unregisterProvider",
    registerVirtualModel: "registerVirtualModel",
    unregisterVirtualModel: "unregisterVirtualModel",
    mcpServersChanged: "mcpServersChanged",
    refreshTools: "refreshTools",
    setActiveTools: "setActiveTools",
    compact: "compact",
    reload: "reload",
    reloadContext: "reloadContext",
    newSession: "newSession",
    switchSession: "switchSession",
    fork: "fork",
    navigateTree: "navigateTree",
    // The session file.
    getEntries: "getEntries",
    getBranch: "getBranch",
    getLeafId: "getLeafId",
    getSessionFile: "getSessionFile",
    getSessionId: "getSessionId",
    getHeader: "getHeader",
    getSessionName: "getSessionName",
    setSessionName: "setSessionName",
    setLabel: "setLabel",
    appendMessage: "appendMessage",
    appendEntry: "appendEntry",
    appendCustomMessageEntry: "appendCustomMessageEntry",
  });
  internal.SessionOp = SessionOp;

  // An operation answered at once: its value, or the session's error thrown.
  internal.session = (name, args) => op(kc.session(name, JSON.stringify(args === undefined ? null : args)));

  // An operation answered later (a dialog, a session replacement): a promise per call; an
  // aborted `signal` cancels the Rust side.
  let asyncIds = 0;
  internal.sessionAsync = function (name, args, signal) {
    const id = ++asyncIds;
    const pending = kc.sessionAsync(id, name, JSON.stringify(args === undefined ? null : args)).then(op);
    if (signal && typeof signal.addEventListener === "function") {
      const onAbort = () => kc.cancelAsync(id);
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener("abort", onAbort, { once: true });
        const off = () => signal.removeEventListener("abort", onAbort);
        pending.then(off, off);
      }
    }
    return pending;
  };
})(globalThis);
