// Extensions' renderers in the terminal: tool cards (a tool's own `renderCall`/`renderResult`/
// `renderShell`, and `registerToolRenderer` resolvers) and custom messages
// (`registerMessageRenderer`). The terminal asks (`uiRenderTool`, `uiRenderMessage`) and the
// lines go back on the component channel of ui.js. Evaluated after ui.js (its theme).
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const calls = (internal.extraCalls = internal.extraCalls || {});
  const send = internal.sendComponentMessage;
  const theme = internal.terminalTheme;

  // Tool renderers: a tool's own `renderCall`/`renderResult`/`renderShell`, after the
  // resolvers of `registerToolRenderer` (load order; `next()` is the rest of the chain).
  const toolResolvers = [];
  internal.addToolRenderer = (resolver) => {
    if (typeof resolver === "function") toolResolvers.push(resolver);
  };
  function renderersFor(name) {
    const own = () => {
      const def = internal.toolDefinition(name);
      if (!def || !(def.renderCall || def.renderResult || def.renderShell)) return undefined;
      return {
        renderCall: def.renderCall && def.renderCall.bind(def),
        renderResult: def.renderResult && def.renderResult.bind(def),
        renderShell: def.renderShell,
      };
    };
    const at = (i) => {
      if (i >= toolResolvers.length) return own();
      let found;
      try {
        found = toolResolvers[i](name, () => at(i + 1));
      } catch (e) {
        internal.reportUncaught(e);
      }
      return found || at(i + 1);
    };
    return at(0);
  }
  // Per tool call: the renderers' shared state and their last components.
  const toolRows = new Map();
  // Tools and custom types whose renderer was stopped at the time limit (ui.js `limited`):
  // reported once, then drawn as if they had none, so a stuck renderer never holds the
  // JS thread again.
  const stuckTools = new Set();
  const stuckMessages = new Set();
  const ownDrawing = (toolCallId) => ({
    op: "tool",
    toolCallId,
    call: null,
    result: null,
    resultRenderer: false,
    shell: "default",
  });
  function renderTool(request) {
    if (stuckTools.has(request.toolName)) {
      send(ownDrawing(request.toolCallId));
      return;
    }
    const renderers = renderersFor(request.toolName);
    if (!renderers) return;
    const onStop = (error) => {
      stuckTools.add(request.toolName);
      internal.reportUncaught(new Error(`The renderer of tool "${request.toolName}": ${error.message}`));
      send(ownDrawing(request.toolCallId));
    };
    const limited = (what, run) => internal.limited(request.toolCallId, what, run, onStop);
    let row = toolRows.get(request.toolCallId);
    if (!row) {
      row = { state: {}, call: undefined, result: undefined };
      toolRows.set(request.toolCallId, row);
    }
    row.request = request;
    const context = (last) => ({
      args: request.args,
      toolCallId: request.toolCallId,
      lastComponent: last,
      state: row.state,
      cwd: g.process.cwd(),
      executionStarted: !!request.executionStarted,
      argsComplete: request.argsComplete !== false,
      isPartial: !!request.isPartial,
      expanded: !!request.expanded,
      showImages: false,
      isError: !!request.isError,
      invalidate: () => {
        const again = row.request;
        Promise.resolve().then(() => renderTool(again));
      },
    });
    const lines = (component) => {
      const out = component && typeof component.render === "function" ? component.render(request.width) : [];
      return Array.isArray(out) ? out.map((l) => String(l)) : [];
    };
    let call = null;
    let result = null;
    // Whether the result is the extension's to draw: then, before it has drawn one, the
    // card shows no output rather than ours for a moment.
    let resultRenderer = typeof renderers.renderResult === "function";
    if (renderers.renderCall) {
      try {
        limited("renderCall", () => {
          row.call = renderers.renderCall(request.args, theme, context(row.call));
          call = lines(row.call);
        });
      } catch (e) {
        row.call = undefined;
        call = null;
        internal.reportUncaught(e);
      }
    }
    if (request.result && renderers.renderResult) {
      try {
        const shown = { content: request.result.content || [], details: request.result.details };
        limited("renderResult", () => {
          row.result = renderers.renderResult(
            shown,
            { expanded: !!request.expanded, isPartial: !!request.isPartial },
            theme,
            context(row.result),
          );
          result = lines(row.result);
        });
      } catch (e) {
        row.result = undefined;
        result = null;
        resultRenderer = false;
        internal.reportUncaught(e);
      }
    }
    send({
      op: "tool",
      toolCallId: request.toolCallId,
      call,
      result,
      resultRenderer,
      shell: renderers.renderShell === "self" ? "self" : "default",
    });
  }
  calls.uiRenderTool = (request) => {
    renderTool(request);
    return null;
  };

  // Message renderers (`registerMessageRenderer`), by custom type; the last one wins.
  const messageRenderers = new Map();
  internal.addMessageRenderer = (customType, renderer) => {
    if (typeof customType === "string" && typeof renderer === "function") messageRenderers.set(customType, renderer);
  };
  // What the terminal asks to draw: tools with renderers of their own, whether any
  // resolver may take a tool, and the custom types with a message renderer.
  internal.rendererSummary = (ownTools) => ({
    tools: ownTools,
    resolvers: toolResolvers.length > 0,
    messages: [...messageRenderers.keys()],
  });
  calls.uiRenderMessage = ({ key, message, expanded, width }) => {
    const customType = message && message.customType;
    const renderer = messageRenderers.get(customType);
    if (!renderer) return null;
    const failed = (error) => [`\x1b[31m[extension renderer failed: ${error.message}]\x1b[39m`];
    if (stuckMessages.has(customType)) {
      send({ op: "message", key, lines: failed(new Error("it was stopped earlier")) });
      return null;
    }
    const onStop = (error) => {
      stuckMessages.add(customType);
      internal.reportUncaught(new Error(`The renderer of message type "${customType}": ${error.message}`));
      send({ op: "message", key, lines: failed(error) });
    };
    try {
      internal.limited(
        key,
        "render",
        () => {
          const component = renderer(message, { expanded: !!expanded, outputPad: 1 }, theme);
          if (!component) return;
          const out = typeof component.render === "function" ? component.render(width) : [];
          send({ op: "message", key, lines: Array.isArray(out) ? out.map((l) => String(l)) : [] });
        },
        onStop,
      );
    } catch (e) {
      internal.reportUncaught(e);
    }
    return null;
  };

  // A restart (session replacement, reload) drops the old extensions' renderers.
  internal.resetRenderers = () => {
    toolResolvers.length = 0;
    messageRenderers.clear();
    toolRows.clear();
    stuckTools.clear();
    stuckMessages.clear();
  };
})(globalThis);
