// `ctx.ui` in each front end: none (print and JSON modes: dialogs resolve their defaults), the
// host's (RPC: the extension-UI subprotocol), and the terminal's (the host's members plus the
// components of ui.js). Blocking prompts in the last two tell the extensions when they open
// and close.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const { SessionOp, sessionAsync } = internal;

  // `run(name, event, step, errors)` is api.js's walk over the handlers, for the prompt events.
  internal.contextUi = function (run) {
    const noUi = {
      select: async () => undefined,
      confirm: async () => false,
      input: async () => undefined,
      editor: async () => undefined,
      custom: async () => undefined,
      notify() {},
      onTerminalInput: () => () => {},
      setStatus() {},
      setWorkingMessage() {},
      setWorkingVisible() {},
      setWorkingIndicator() {},
      setHiddenThinkingLabel() {},
      setWidget() {},
      setFooter() {},
      setHeader() {},
      setTitle() {},
      pasteToEditor() {},
      setEditorText() {},
      getEditorText: () => "",
      addAutocompleteProvider() {},
      setEditorComponent() {},
      getEditorComponent: () => undefined,
      getAllThemes: () => [],
      getTheme: () => undefined,
      setTheme: () => ({ success: false, error: "UI not available" }),
      getToolsExpanded: () => false,
      setToolsExpanded() {},
      theme: {
        fg: (_, t) => t,
        bg: (_, t) => t,
        bold: (t) => t,
        italic: (t) => t,
        underline: (t) => t,
        dim: (t) => t,
        strikethrough: (t) => t,
      },
    };

    // The front end's UI (RPC: the extension-UI subprotocol, spec rpc.md §6). The host writes
    // a request while the call is made, so requests keep call order and precede whatever the
    // session emits afterwards (a notify before `ctx.abort()` comes before the run's end).
    const uiSend = (method, args) => {
      sessionAsync(SessionOp.ui, Object.assign({ method }, args)).then(
        () => {},
        () => {},
      );
    };
    const dialog = (method, args, opts, fallback) => {
      const signal = opts && opts.signal;
      if (signal && signal.aborted) return Promise.resolve(fallback);
      return sessionAsync(SessionOp.ui, Object.assign({ method }, args), signal).then(
        (r) => (r === null || r === undefined ? fallback : r),
        () => fallback,
      );
    };
    const timeoutOf = (opts) =>
      opts && typeof opts.timeout === "number" && opts.timeout > 0 ? opts.timeout : undefined;
    const hostUi = Object.assign({}, noUi, {
      select: (title, options, opts) =>
        dialog("select", { title, options, timeout: timeoutOf(opts) }, opts, undefined),
      confirm: (title, message, opts) => dialog("confirm", { title, message, timeout: timeoutOf(opts) }, opts, false),
      input: (title, placeholder, opts) =>
        dialog("input", { title, placeholder, timeout: timeoutOf(opts) }, opts, undefined),
      // As in the reference, the editor dialog takes no timeout or signal.
      editor: (title, prefill) => dialog("editor", { title, prefill }, undefined, undefined),
      notify(message, type) {
        uiSend("notify", { message, notifyType: type });
      },
      setStatus(key, text) {
        uiSend("setStatus", { statusKey: key, statusText: text });
      },
      setWidget(key, content, options) {
        // Component factories need a terminal: only string arrays (or a clear) are forwarded.
        if (content === undefined || Array.isArray(content)) {
          uiSend("setWidget", { widgetKey: key, widgetLines: content, widgetPlacement: options && options.placement });
        }
      },
      setTitle(title) {
        uiSend("setTitle", { title });
      },
      pasteToEditor(text) {
        uiSend("set_editor_text", { text });
      },
      setEditorText(text) {
        uiSend("set_editor_text", { text });
      },
      setTheme: () => ({ success: false, error: "Theme switching not supported in RPC mode" }),
    });
    // The terminal UI also draws components (ui.js).
    const terminalUi = Object.assign({}, hostUi, internal.terminalUi(uiSend));
    // Blocking prompts tell the extensions when they open and close (`ui_prompt_start`,
    // `ui_prompt_end`): once for the outermost of nested prompts, from a microtask, so a
    // handler never runs inside the call that opened the prompt.
    let promptDepth = 0;
    let activePrompt;
    const promptEvent = (type, prompt) => {
      const event = Object.assign(
        { type, reason: "ui_prompt", kind: prompt.kind },
        prompt.title ? { title: prompt.title } : {},
      );
      queueMicrotask(() => {
        const errors = [];
        run(type, event, null, errors).then(() => {
          for (const error of errors) kc.reportUncaught(JSON.stringify(error));
        });
      });
    };
    const withPrompt = (kind, title, open) => {
      if (promptDepth++ === 0) {
        activePrompt = { kind, title: typeof title === "string" ? title : undefined };
        promptEvent("ui_prompt_start", activePrompt);
      }
      const finish = () => {
        if (--promptDepth > 0) return;
        promptDepth = 0;
        const prompt = activePrompt || { kind };
        activePrompt = undefined;
        promptEvent("ui_prompt_end", prompt);
      };
      let pending;
      try {
        pending = Promise.resolve(open());
      } catch (e) {
        finish();
        throw e;
      }
      return pending.finally(finish);
    };
    for (const target of [hostUi, terminalUi]) {
      const { select, confirm, input, editor, custom } = target;
      target.select = (title, options, opts) => withPrompt("select", title, () => select(title, options, opts));
      target.confirm = (title, message, opts) => withPrompt("confirm", title, () => confirm(title, message, opts));
      target.input = (title, placeholder, opts) => withPrompt("input", title, () => input(title, placeholder, opts));
      target.editor = (title, prefill) => withPrompt("editor", title, () => editor(title, prefill));
      if (typeof custom === "function")
        target.custom = (factory, options) => withPrompt("custom", undefined, () => custom(factory, options));
    }
    return { noUi, hostUi, terminalUi };
  };
})(globalThis);
