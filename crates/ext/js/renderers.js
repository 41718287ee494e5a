// Extensions' renderers in the terminal: tool cards (a tool's own `renderCall`/`renderResult`/
// `renderShell`, and `registerToolRenderer` resolvers) and custom messages
// (`registerMessageRenderer`) and entries (`registerEntryRenderer`). The terminal asks
// (`uiRenderTool`, `uiRenderMessage`, `uiRenderEntry`) and the
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
  const stuckEntries = new Set();
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

  // The HTML export: tool calls drawn by their renderers, as terminal lines (the export
  // makes HTML of them). `tools` are `{toolCallId, toolName, args, result?}`; the tools the
  // page draws itself are skipped, as in the reference. A renderer that throws leaves that
  // call to the page; one past the time limit ends the call (the export goes on without).
  const PAGE_DRAWN_TOOLS = new Set(["bash", "read", "write", "edit", "ls"]);
  calls.exportRenderTools = ({ tools, width }) => {
    const drawn = {};
    const lines = (component) => {
      const out = component && typeof component.render === "function" ? component.render(width) : [];
      return Array.isArray(out) ? out.map((l) => String(l)) : [];
    };
    for (const tool of Array.isArray(tools) ? tools : []) {
      if (PAGE_DRAWN_TOOLS.has(tool.toolName) || stuckTools.has(tool.toolName)) continue;
      const renderers = renderersFor(tool.toolName);
      if (!renderers) continue;
      const state = {};
      const context = (expanded, isError) => ({
        args: tool.args,
        toolCallId: tool.toolCallId,
        lastComponent: undefined,
        state,
        cwd: g.process.cwd(),
        executionStarted: true,
        argsComplete: true,
        isPartial: false,
        expanded,
        showImages: false,
        isError,
        invalidate() {},
      });
      const entry = {};
      const onStop = (error) => {
        stuckTools.add(tool.toolName);
        internal.reportUncaught(new Error(`The renderer of tool "${tool.toolName}": ${error.message}`));
      };
      try {
        internal.limited(
          tool.toolCallId,
          "render",
          () => {
            if (renderers.renderCall)
              entry.call = lines(renderers.renderCall(tool.args, theme, context(false, false)));
            if (tool.result && renderers.renderResult) {
              const shown = { content: tool.result.content || [], details: tool.result.details };
              const isError = !!tool.result.isError;
              const result = (expanded) =>
                lines(
                  renderers.renderResult(shown, { expanded, isPartial: false }, theme, context(expanded, isError)),
                );
              entry.collapsed = result(false);
              entry.expanded = result(true);
            }
          },
          onStop,
        );
      } catch (e) {
        continue;
      }
      if (entry.call || entry.collapsed) drawn[tool.toolCallId] = entry;
    }
    return drawn;
  };

  // Message renderers (`registerMessageRenderer`) and entry renderers
  // (`registerEntryRenderer`), by custom type; the last one wins.
  const messageRenderers = new Map();
  const entryRenderers = new Map();
  internal.addMessageRenderer = (customType, renderer) => {
    if (typeof customType === "string" && typeof renderer === "function") messageRenderers.set(customType, renderer);
  };
  internal.addEntryRenderer = (customType, renderer) => {
    if (typeof customType === "string" && typeof renderer === "function") entryRenderers.set(customType, renderer);
  };
  // What the terminal asks to draw: tools with renderers of their own, whether any
  // resolver may take a tool, and the custom types with a message or entry renderer.
  internal.rendererSummary = (ownTools) => ({
    tools: ownTools,
    resolvers: toolResolvers.length > 0,
    messages: [...messageRenderers.keys()],
    entries: [...entryRenderers.keys()],
    markdown: markdownTransformers.size > 0,
  });
  // Draws a custom message or entry (`what`) with `renderer`; the lines go back under
  // `key`. A renderer that returns nothing leaves a message as a notice and an entry unseen.
  function renderCustom(what, renderer, stuck, { key, value, expanded, width }) {
    const customType = value && value.customType;
    const failed = (error) => [`\x1b[31m[extension renderer failed: ${error.message}]\x1b[39m`];
    if (stuck.has(customType)) {
      send({ op: "message", key, lines: failed(new Error("it was stopped earlier")) });
      return;
    }
    const onStop = (error) => {
      stuck.add(customType);
      internal.reportUncaught(new Error(`The renderer of ${what} type "${customType}": ${error.message}`));
      send({ op: "message", key, lines: failed(error) });
    };
    try {
      internal.limited(
        key,
        "render",
        () => {
          const component = renderer(value, { expanded: !!expanded, outputPad: 1 }, theme);
          if (!component) return;
          const out = typeof component.render === "function" ? component.render(width) : [];
          send({ op: "message", key, lines: Array.isArray(out) ? out.map((l) => String(l)) : [] });
        },
        onStop,
      );
    } catch (e) {
      internal.reportUncaught(e);
    }
  }
  calls.uiRenderMessage = ({ key, message, expanded, width }) => {
    const renderer = messageRenderers.get(message && message.customType);
    if (renderer) renderCustom("message", renderer, stuckMessages, { key, value: message, expanded, width });
    return null;
  };
  calls.uiRenderEntry = ({ key, entry, expanded, width }) => {
    const renderer = entryRenderers.get(entry && entry.customType);
    if (renderer) renderCustom("entry", renderer, stuckEntries, { key, value: entry, expanded, width });
    return null;
  };

  // Markdown transformers (`registerMarkdownTransformer`): one per extension (a second
  // replaces the first), chained in load order. Display only: the terminal shows what they
  // return; the session and the model keep the original.
  const markdownTransformers = new Map();
  const stuckTransformers = new Set();
  internal.addMarkdownTransformer = (ext, transformer) => {
    if (typeof transformer === "function") markdownTransformers.set(ext, transformer);
  };
  calls.uiTransformMarkdown = ({ key, parts, isStreaming, availableWidth }) => {
    const list = Array.isArray(parts) ? parts : [];
    const out = list.map((part) => {
      let markdown = String(part.markdown);
      const context = { messageType: part.messageType, isStreaming: !!isStreaming, availableWidth };
      for (const [ext, transformer] of markdownTransformers) {
        if (stuckTransformers.has(ext)) continue;
        // The engine unwinds the whole call at the limit: the card gets its text as is.
        const onStop = (error) => {
          stuckTransformers.add(ext);
          internal.reportUncaught(new Error(`The markdown transformer of ${ext}: ${error.message}`));
          send({ op: "markdown", key, parts: list.map((p) => ({ index: p.index, markdown: String(p.markdown) })) });
        };
        try {
          const result = internal.limited(key, "transform", () => transformer(markdown, context), onStop);
          if (typeof result === "string") markdown = result;
        } catch (e) {
          // A throwing transformer is skipped for this text and reported once.
          if (!stuckTransformers.has(ext)) {
            stuckTransformers.add(ext);
            internal.reportUncaught(e);
          }
        }
      }
      return { index: part.index, markdown };
    });
    send({ op: "markdown", key, parts: out });
    return null;
  };

  // A restart (session replacement, reload) drops the old extensions' renderers.
  internal.resetRenderers = () => {
    toolResolvers.length = 0;
    messageRenderers.clear();
    entryRenderers.clear();
    markdownTransformers.clear();
    stuckTransformers.clear();
    toolRows.clear();
    stuckTools.clear();
    stuckMessages.clear();
    stuckEntries.clear();
  };
})(globalThis);
