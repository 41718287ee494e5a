// Extensions' components in the terminal UI (`ctx.ui.custom`, component widgets,
// `setFooter`, `setHeader`). Components live here, on the JS thread; the terminal shows
// their lines. Whenever one may have changed (`tui.requestRender()`, a key it handled,
// a new width or theme) it renders again and, if its lines differ, they go to the
// terminal in one message, so an idle component costs nothing and a slow one never
// blocks the terminal's own drawing. Tool and message renderers are renderers.js,
// autocomplete providers autocomplete.js; both answer on this file's component channel.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const SessionOp = internal.SessionOp;
  const calls = (internal.extraCalls = internal.extraCalls || {});

  let columns = 80;
  let rows = 24;
  let nextId = 0;
  let flushing = false;
  const views = new Map();
  const inputListeners = [];

  // A message on the terminal's component channel; a failure is reported, never thrown.
  const send = (message) => {
    try {
      internal.session(SessionOp.uiComponent, message);
    } catch (e) {
      internal.reportUncaught(e);
    }
  };
  internal.sendComponentMessage = send;
  // A component's `render` or `handleInput` that has not returned after this long is
  // stopped (the engine unwinds it), shown as failed and reported: the JS thread, and with
  // it every extension's events and tools, is never held for good by one stuck component.
  const LIMIT_MS = 1000;
  let underLimit = null; // { id, what, onStop? } while a component's code runs with the limit
  // `onStop(error)` is told instead of a component when the code was a renderer's.
  const limited = (id, what, run, onStop) => {
    underLimit = { id, what, onStop };
    kc.deadline(LIMIT_MS);
    try {
      return run();
    } finally {
      kc.deadline(0);
      underLimit = null;
    }
  };
  internal.limited = limited;
  const same = (a, b) => a && b && a.length === b.length && a.every((line, i) => line === b[i]);

  // Where an overlay goes (the reference's overlay options): its width first, then its row
  // and column once its height is known; `at` is in screen cells, 0-based.
  // "40%" as 40; anything else undefined.
  function percentOf(value) {
    const m = typeof value === "string" && /^(\d+(?:\.\d+)?)%$/.exec(value);
    return m ? parseFloat(m[1]) : undefined;
  }
  function sizeOf(value, whole) {
    if (typeof value === "number" && Number.isFinite(value)) return Math.floor(value);
    const p = percentOf(value);
    return p === undefined ? undefined : Math.floor((whole * p) / 100);
  }
  function overlayLayout(opt, height) {
    const m =
      typeof opt.margin === "number"
        ? { top: opt.margin, right: opt.margin, bottom: opt.margin, left: opt.margin }
        : opt.margin || {};
    const top = Math.max(0, m.top || 0),
      right = Math.max(0, m.right || 0);
    const bottom = Math.max(0, m.bottom || 0),
      left = Math.max(0, m.left || 0);
    const availW = Math.max(1, columns - left - right);
    const availH = Math.max(1, rows - top - bottom);
    let width = sizeOf(opt.width, columns);
    if (width === undefined) width = Math.min(80, availW);
    if (typeof opt.minWidth === "number") width = Math.max(width, opt.minWidth);
    width = Math.max(1, Math.min(width, availW));
    let maxHeight = sizeOf(opt.maxHeight, rows);
    if (maxHeight !== undefined) maxHeight = Math.max(1, Math.min(maxHeight, availH));
    const h = maxHeight !== undefined ? Math.min(height, maxHeight) : height;
    const anchor = opt.anchor || "center";
    const vertical = anchor.startsWith("top") ? "start" : anchor.startsWith("bottom") ? "end" : "middle";
    const horizontal = /left/.test(anchor) ? "start" : /right/.test(anchor) ? "end" : "middle";
    const place = (where, size, avail, start) =>
      where === "start" ? start : where === "end" ? start + avail - size : start + Math.floor((avail - size) / 2);
    const percent = (value, size, avail, start) => {
      const p = percentOf(value);
      return p === undefined ? undefined : start + Math.floor(Math.max(0, avail - size) * (p / 100));
    };
    let row = typeof opt.row === "number" ? opt.row : percent(opt.row, h, availH, top);
    if (row === undefined) row = place(vertical, h, availH, top);
    let col = typeof opt.col === "number" ? opt.col : percent(opt.col, width, availW, left);
    if (col === undefined) col = place(horizontal, width, availW, left);
    if (typeof opt.offsetY === "number") row += opt.offsetY;
    if (typeof opt.offsetX === "number") col += opt.offsetX;
    row = Math.max(top, Math.min(row, rows - bottom - h));
    col = Math.max(left, Math.min(col, columns - right - width));
    return { width, maxHeight, row, col };
  }

  function render(id, view) {
    let lines;
    let at;
    try {
      const layout = view.overlay && overlayLayout(view.overlay, 0);
      const hidden =
        view.overlay &&
        (view.hidden || (typeof view.overlay.visible === "function" && !view.overlay.visible(columns, rows)));
      const out = hidden
        ? []
        : view.component && typeof view.component.render === "function"
          ? limited(id, "render", () => view.component.render(layout ? layout.width : columns))
          : [];
      lines = Array.isArray(out) ? out.map((l) => String(l)) : [];
      if (layout) {
        if (layout.maxHeight !== undefined) lines = lines.slice(0, layout.maxHeight);
        const placed = overlayLayout(view.overlay, lines.length);
        at = { row: placed.row, col: placed.col, width: layout.width };
      }
    } catch (e) {
      fail(id, view, e);
      return;
    }
    const moved = at && (!view.at || view.at.row !== at.row || view.at.col !== at.col || view.at.width !== at.width);
    if (!same(view.lines, lines) || moved) {
      view.lines = lines;
      view.at = at;
      send(at ? { op: "lines", id, lines, at } : { op: "lines", id, lines });
    }
  }
  // A throwing (or stopped) component shows as failed and is reported once; the terminal
  // goes on. A failed component in the editor's place closes with escape.
  function fail(id, view, e) {
    const lines = [`\x1b[31m[extension component failed: ${e && e.message ? e.message : String(e)}]\x1b[39m`];
    if (view.kind === "custom") lines.push("\x1b[2mPress escape to close it.\x1b[22m");
    if (!view.failed) internal.reportUncaught(e);
    view.failed = true;
    if (!same(view.lines, lines)) {
      view.lines = lines;
      send(view.at ? { op: "lines", id, lines, at: view.at } : { op: "lines", id, lines });
    }
  }
  // The engine stopped a component's code at its limit (the error could not be caught
  // where it ran): that component fails; the others draw as usual.
  g.__kc_deadline_passed = () => {
    const stopped = underLimit;
    underLimit = null;
    if (!stopped) return;
    const error = new Error(`its ${stopped.what}() was stopped after running for ${LIMIT_MS / 1000} s`);
    if (stopped.onStop) {
      stopped.onStop(error);
      return;
    }
    const view = views.get(stopped.id);
    if (view) view.stuck = true;
    if (view) fail(stopped.id, view, error);
    flushing = false;
    scheduleFlush();
  };
  function flush() {
    flushing = false;
    for (const [id, view] of views) {
      if (view.dirty) {
        view.dirty = false;
        if (!view.stuck) render(id, view);
      }
    }
  }
  function scheduleFlush() {
    if (!flushing) {
      flushing = true;
      Promise.resolve().then(flush);
    }
  }
  function requestRender() {
    for (const view of views.values()) view.dirty = true;
    scheduleFlush();
  }
  function lendTerminal(lend) {
    try {
      internal.session(SessionOp.uiTerminal, { lend });
    } catch (e) {
      internal.reportUncaught(e);
    }
  }
  function invalidateAll() {
    for (const view of views.values()) {
      try {
        view.component?.invalidate?.();
      } catch (e) {
        internal.reportUncaught(e);
      }
    }
  }

  // The `tui` object factories receive.
  const tui = {
    requestRender,
    get terminal() {
      return { columns, rows, write() {} };
    },
    // Focus among overlays; any other component (or null) means the app's own routing.
    setFocus(component) {
      const id = overlays.find((o) => views.get(o)?.component === component);
      if (setFocusId(id === undefined ? null : id)) {
        sendLayers();
        requestRender();
      }
    },
    showOverlay(component, options) {
      return overlayHandle(showOverlay(component, options));
    },
    hideOverlay() {
      if (overlays.length > 0) close(overlays[overlays.length - 1]);
    },
    hasOverlay: () => overlays.some((id) => overlayVisible(views.get(id))),
    // A program that takes over the terminal (`spawnSync(…, {stdio: "inherit"})`) runs
    // between stop() and start(): the terminal is handed over and taken back at once.
    stop() {
      lendTerminal(true);
    },
    start() {
      lendTerminal(false);
    },
    addChild() {},
    removeChild() {},
  };

  // The theme object: colour roles to SGR sequences (the terminal sends its table).
  let table = { name: "dark", fg: {}, bg: {} };
  let themeNames = ["dark", "light"];
  let toolsExpanded = false;
  const theme = {
    get name() {
      return table.name;
    },
    fg: (role, text) => (table.fg[role] ? `${table.fg[role]}${text}\x1b[39m` : String(text)),
    bg: (role, text) => (table.bg[role] ? `${table.bg[role]}${text}\x1b[49m` : String(text)),
    bold: (text) => `\x1b[1m${text}\x1b[22m`,
    dim: (text) => `\x1b[2m${text}\x1b[22m`,
    italic: (text) => `\x1b[3m${text}\x1b[23m`,
    underline: (text) => `\x1b[4m${text}\x1b[24m`,
    inverse: (text) => `\x1b[7m${text}\x1b[27m`,
    strikethrough: (text) => `\x1b[9m${text}\x1b[29m`,
    getFgAnsi: (role) => table.fg[role] || "",
    getBgAnsi: (role) => table.bg[role] || "",
    getColorMode: () => "truecolor",
    getThinkingBorderColor: (level) => {
      const role =
        {
          off: "thinkingOff",
          minimal: "thinkingMinimal",
          low: "thinkingLow",
          medium: "thinkingMedium",
          high: "thinkingHigh",
          xhigh: "thinkingXhigh",
        }[level] || "thinkingOff";
      return (text) => theme.fg(role, text);
    },
    getBashModeBorderColor: () => (text) => theme.fg("bashMode", text),
  };
  internal.terminalTheme = theme;

  const keybindings = () => internal.hostModule("tui").getKeybindings();

  // `placed` sets up an overlay between its `show` and its first lines.
  function show(kind, component, extra, overlay, placed) {
    const id = ++nextId;
    const view = { component, kind, dirty: false, lines: null, overlay };
    views.set(id, view);
    // An overlay is focused by the stack's rules (showOverlay), the others by their kind.
    if (component && "focused" in component) {
      try {
        component.focused = !overlay && (kind === "custom" || kind === "editor");
      } catch {}
    }
    send(Object.assign({ op: "show", id, kind }, extra));
    if (placed) placed(id, view);
    render(id, view);
    return id;
  }
  function close(id) {
    const view = views.get(id);
    if (!view) return;
    const stacked = overlays.indexOf(id);
    if (stacked >= 0) {
      overlays.splice(stacked, 1);
      if (focusedId === id) refocus(view);
    }
    views.delete(id);
    try {
      view.component?.dispose?.();
    } catch (e) {
      internal.reportUncaught(e);
    }
    // With an overlay, where the keys go now comes in the same message: a key the terminal
    // reads once the overlay is gone goes there.
    send(stacked >= 0 ? { op: "close", id, layers: layers() } : { op: "close", id });
    if (stacked >= 0) requestRender();
  }

  // Overlays (`ctx.ui.custom(…, { overlay: true })`, `tui.showOverlay`) stack in the order
  // they were shown, and the one shown or focused last draws on top. Keys go to the focused
  // overlay; with none focused (null) they take the app's own way (a component in the
  // editor's place, the editor). A capturing overlay takes the focus when it shows, a
  // `nonCapturing` one only through its handle's focus(); when the focused one goes, the
  // focus moves to the topmost visible capturing overlay, else back to where it was when
  // that overlay was shown. These are the reference TUI's rules.
  const overlays = []; // view ids, in the order shown
  let focusedId = null;
  let stackOrder = 0;
  function overlayVisible(view) {
    if (!view || view.hidden) return false;
    if (view.overlay && typeof view.overlay.visible === "function") {
      try {
        return !!view.overlay.visible(columns, rows);
      } catch (e) {
        internal.reportUncaught(e);
        return false;
      }
    }
    return true;
  }
  function topCapturing() {
    for (let i = overlays.length - 1; i >= 0; i--) {
      const view = views.get(overlays[i]);
      if (view && !view.overlay.nonCapturing && overlayVisible(view)) return overlays[i];
    }
    return null;
  }
  const alive = (id) => (id !== null && id !== undefined && views.has(id) ? id : null);
  // Whether the focus changed.
  function setFocusId(id) {
    if (focusedId === id) return false;
    const mark = (at, focused) => {
      const component = at === null ? undefined : views.get(at)?.component;
      if (component && "focused" in component) {
        try {
          component.focused = focused;
        } catch {}
      }
    };
    mark(focusedId, false);
    focusedId = id;
    mark(id, true);
    return true;
  }
  // The focused overlay `view` went away or out of sight.
  function refocus(view, except) {
    const top = topCapturing();
    setFocusId(top !== null && top !== except ? top : alive(view.preFocus));
  }
  function layers() {
    const order = [...overlays].sort((a, b) => views.get(a).order - views.get(b).order);
    return { order, focus: focusedId };
  }
  function sendLayers() {
    send(Object.assign({ op: "layers" }, layers()));
  }
  function showOverlay(component, options) {
    // The terminal learns where the keys go before it can show the overlay: a key typed
    // once it is on screen reaches it.
    const id = show("custom", component, { overlay: true }, Object.assign({}, options || {}), (id, view) => {
      view.preFocus = focusedId;
      view.order = ++stackOrder;
      view.done = () => close(id);
      overlays.push(id);
      if (!view.overlay.nonCapturing && overlayVisible(view)) setFocusId(id);
      sendLayers();
    });
    requestRender();
    return id;
  }
  // The handle `showOverlay` and `onHandle` give; `hide` ends a `ctx.ui.custom` overlay
  // the way its `done()` does.
  function overlayHandle(id, hide) {
    const view = () => (overlays.includes(id) ? views.get(id) : undefined);
    return {
      hide: hide || (() => close(id)),
      setHidden(hidden) {
        const v = view();
        if (!v || !!v.hidden === !!hidden) return;
        v.hidden = !!hidden;
        if (v.hidden) {
          if (focusedId === id) refocus(v);
        } else if (!v.overlay.nonCapturing && overlayVisible(v)) {
          v.order = ++stackOrder;
          setFocusId(id);
        }
        sendLayers();
        requestRender();
      },
      isHidden: () => !!(view() && view().hidden),
      focus() {
        const v = view();
        if (!v || !overlayVisible(v)) return;
        setFocusId(id);
        v.order = ++stackOrder;
        sendLayers();
        requestRender();
      },
      unfocus() {
        const v = view();
        if (!v || focusedId !== id) return;
        refocus(v, id);
        sendLayers();
        requestRender();
      },
      isFocused: () => focusedId === id,
    };
  }

  const widgets = new Map();
  let editorId = null;
  let editorFactory;
  // App actions a replacement editor hands back to the terminal (as the reference's
  // CustomEditor does through its action handlers).
  const APP_ACTIONS = [
    "app.clear",
    "app.suspend",
    "app.thinking.cycle",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.editor.external",
    "app.message.followUp",
    "app.message.dequeue",
    "app.message.copy",
    "app.session.new",
    "app.session.tree",
    "app.session.fork",
    "app.session.resume",
  ];
  const editorView = () => (editorId === null ? undefined : views.get(editorId));
  let footerId = null;
  let headerId = null;
  // What footers read (the reference's footer data provider): the git branch the
  // terminal reads after every run and shell command, the statuses set with
  // `ctx.ui.setStatus`, and the number of providers with models.
  let gitBranch = null;
  let providerCount = 0;
  const statuses = new Map();
  const branchListeners = new Set();
  const footerData = {
    getGitBranch: () => gitBranch,
    getExtensionStatuses: () => statuses,
    getAvailableProviderCount: () => providerCount,
    onBranchChange(callback) {
      if (typeof callback !== "function") return () => {};
      branchListeners.add(callback);
      return () => {
        branchListeners.delete(callback);
      };
    },
  };
  calls.uiFooterData = (data) => {
    const branch = typeof data.gitBranch === "string" ? data.gitBranch : null;
    providerCount = Number(data.providers) || 0;
    if (branch !== gitBranch) {
      gitBranch = branch;
      for (const callback of [...branchListeners]) {
        try {
          callback();
        } catch (e) {
          internal.reportUncaught(e);
        }
      }
    }
    requestRender();
    return null;
  };

  // The members `ctx.ui` has in the terminal on top of the RPC-shaped ones.
  function currentEditorText() {
    const view = editorView();
    if (view && typeof view.component.getText === "function") {
      try {
        return String(view.component.getText());
      } catch {
        return "";
      }
    }
    try {
      return String(internal.session(SessionOp.getEditorText) ?? "");
    } catch {
      return "";
    }
  }

  internal.terminalUi = (uiSend) => ({
    setStatus(key, text) {
      if (text === undefined || text === null) statuses.delete(String(key));
      else statuses.set(String(key), String(text));
      uiSend("setStatus", { statusKey: key, statusText: text });
      // A footer showing the statuses draws them again.
      if (footerId !== null) {
        const view = views.get(footerId);
        if (view) {
          view.dirty = true;
          scheduleFlush();
        }
      }
    },
    custom(factory, options) {
      return new Promise((resolve, reject) => {
        let id = null;
        let closed = false;
        const done = (value) => {
          if (closed) return;
          closed = true;
          if (id !== null) close(id);
          resolve(value);
        };
        Promise.resolve()
          .then(() => factory(tui, theme, keybindings(), done))
          .then((component) => {
            if (closed) {
              try {
                component?.dispose?.();
              } catch {}
              return;
            }
            if (options && options.overlay) {
              // Options given once, or by a function asked once; else the component's width.
              let overlayOptions = options.overlayOptions;
              if (typeof overlayOptions === "function") {
                try {
                  overlayOptions = overlayOptions();
                } catch (e) {
                  internal.reportUncaught(e);
                  overlayOptions = undefined;
                }
              }
              if (!overlayOptions && component && component.width) overlayOptions = { width: component.width };
              id = showOverlay(component, overlayOptions);
              if (typeof options.onHandle === "function") options.onHandle(overlayHandle(id, () => done(undefined)));
            } else {
              // In the editor's place it takes the keys, from any overlay too.
              if (setFocusId(null)) sendLayers();
              id = show("custom", component, { overlay: false });
            }
            const shown = views.get(id);
            if (shown) shown.done = done;
          })
          .catch((e) => {
            closed = true;
            reject(e);
          });
      });
    },
    setWidget(key, content, options) {
      if (widgets.has(key)) {
        close(widgets.get(key));
        widgets.delete(key);
      }
      if (typeof content === "function") {
        const component = content(tui, theme);
        widgets.set(
          key,
          show("widget", component, { key, placement: (options && options.placement) || "aboveEditor" }),
        );
        uiSend("setWidget", { widgetKey: key, widgetLines: undefined });
        return;
      }
      if (content === undefined || Array.isArray(content)) {
        uiSend("setWidget", { widgetKey: key, widgetLines: content, widgetPlacement: options && options.placement });
      }
    },
    setEditorComponent(factory) {
      // The text in the editor being replaced moves to the next one (typed before an
      // extension's editor arrived, or in it before it leaves), as in the reference.
      const carried = currentEditorText();
      if (editorId !== null) {
        close(editorId);
        editorId = null;
      }
      editorFactory = typeof factory === "function" ? factory : undefined;
      if (!editorFactory) {
        if (carried) uiSend("set_editor_text", { text: carried });
        return;
      }
      // The editor theme the reference hands editor factories (not the whole theme).
      const editorTheme = {
        borderColor: (text) => theme.fg("borderMuted", text),
        selectList: internal.hostModule("cli").getSelectListTheme(),
      };
      const editor = editorFactory(tui, editorTheme, keybindings());
      if (carried && typeof editor.setText === "function") {
        try {
          editor.setText(carried);
        } catch (e) {
          internal.reportUncaught(e);
        }
      }
      const text = () => {
        try {
          return typeof editor.getText === "function" ? editor.getText() : "";
        } catch {
          return "";
        }
      };
      const appAction = (action) => () => send({ op: "appAction", action, text: text() });
      editor.onSubmit = (value) => send({ op: "submit", text: String(value) });
      editor.onEscape = appAction("app.interrupt");
      editor.onCtrlD = appAction("app.exit");
      if (editor.actionHandlers instanceof Map)
        for (const action of APP_ACTIONS) editor.actionHandlers.set(action, appAction(action));
      editorId = show("editor", editor);
    },
    getEditorComponent: () => editorFactory,
    setEditorText(value) {
      const view = editorView();
      if (view && typeof view.component.setText === "function") {
        view.component.setText(String(value));
        requestRender();
      } else uiSend("set_editor_text", { text: value });
    },
    pasteToEditor(value) {
      const view = editorView();
      if (view && typeof view.component.insertTextAtCursor === "function") {
        view.component.insertTextAtCursor(String(value));
        requestRender();
      } else uiSend("set_editor_text", { text: value });
    },
    getEditorText() {
      return currentEditorText();
    },
    setFooter(factory) {
      if (footerId !== null) {
        close(footerId);
        footerId = null;
      }
      if (typeof factory === "function") footerId = show("footer", factory(tui, theme, footerData));
    },
    setHeader(factory) {
      if (headerId !== null) {
        close(headerId);
        headerId = null;
      }
      if (typeof factory === "function") headerId = show("header", factory(tui, theme));
    },
    get theme() {
      return theme;
    },
    getTheme: () => theme,
    setWorkingMessage(message) {
      send({ op: "working", message: typeof message === "string" ? message : null });
    },
    setWorkingIndicator(indicator) {
      const frames = indicator && Array.isArray(indicator.frames) ? indicator.frames.map(String) : null;
      send({ op: "workingIndicator", frames, intervalMs: indicator && indicator.intervalMs });
    },
    setWorkingVisible(visible) {
      send({ op: "workingVisible", visible: visible !== false });
    },
    // Raw input before the app sees it: a listener may consume it or change it. While any
    // listens, the terminal sends every key here first and takes back what is left.
    onTerminalInput(handler) {
      if (typeof handler !== "function") return () => {};
      inputListeners.push(handler);
      if (inputListeners.length === 1) send({ op: "terminalInput", listening: true });
      return () => {
        const at = inputListeners.indexOf(handler);
        if (at < 0) return;
        inputListeners.splice(at, 1);
        if (inputListeners.length === 0) send({ op: "terminalInput", listening: false });
      };
    },
    // Autocomplete providers wrap the one before them (the built-in first); the terminal
    // asks the chain after a key changes the editor, and shows what it answers.
    addAutocompleteProvider: (factory) => internal.addAutocompleteProvider(factory),
    setHiddenThinkingLabel(label) {
      send({ op: "thinkingLabel", label: typeof label === "string" && label ? label : null });
    },
    getToolsExpanded: () => toolsExpanded,
    setToolsExpanded(expanded) {
      toolsExpanded = !!expanded;
      send({ op: "toolsExpanded", expanded: toolsExpanded });
    },
    getAllThemes: () => themeNames.map((name) => ({ name, path: undefined })),
    setTheme(next) {
      const name = typeof next === "string" ? next : next && next.name;
      if (!themeNames.includes(name)) return { success: false, error: `Theme "${name}" not found` };
      send({ op: "setTheme", name });
      return { success: true };
    },
  });

  // The terminal changes the replacement editor's text (ctrl+c clears it, a follow-up
  // takes it).
  calls.uiSetEditorText = ({ text }) => {
    const view = editorView();
    if (view && typeof view.component.setText === "function") {
      view.component.setText(String(text));
      requestRender();
    }
    return null;
  };

  // A restart (session replacement, reload) drops what the old extensions showed.
  internal.resetTerminalUi = () => {
    for (const id of [...views.keys()]) close(id);
    widgets.clear();
    editorId = null;
    editorFactory = undefined;
    footerId = null;
    headerId = null;
    statuses.clear();
    branchListeners.clear();
  };

  calls.uiInput = ({ id, data }) => {
    let view = views.get(id);
    if (!view) return null;
    // The focused overlay went out of sight (its `visible()`, a resize): the keys go where
    // the focus moves.
    if (focusedId === id && overlays.includes(id) && !overlayVisible(view)) {
      refocus(view);
      sendLayers();
      if (focusedId === null) {
        send({ op: "reinput", data });
        return null;
      }
      id = focusedId;
      view = views.get(id);
    }
    // A component stopped at its limit gets no more keys (each would hold the thread again).
    if (!view.stuck && view.component && typeof view.component.handleInput === "function") {
      try {
        limited(id, "handleInput", () => view.component.handleInput(data));
      } catch (e) {
        internal.reportUncaught(e);
      }
    }
    if (view.failed && view.kind === "custom" && data === "\x1b" && views.has(id) && view.done) view.done(undefined);
    requestRender();
    return null;
  };
  calls.uiTerminalInput = ({ data }) => {
    let left = String(data);
    for (const handler of [...inputListeners]) {
      let r;
      try {
        r = handler(left);
      } catch (e) {
        internal.reportUncaught(e);
        continue;
      }
      if (r && r.consume) return null;
      if (r && typeof r.data === "string") left = r.data;
    }
    if (left) send({ op: "reinput", data: left });
    return null;
  };
  calls.uiResize = (size) => {
    columns = Math.max(1, Number(size.columns) || 80);
    rows = Math.max(1, Number(size.rows) || 24);
    invalidateAll();
    requestRender();
    return null;
  };
  // The theme's table, the theme names and the tools-expanded state; any may be absent.
  calls.uiTheme = (next) => {
    if (next.fg) table = { name: next.name || "dark", fg: next.fg || {}, bg: next.bg || {} };
    if (Array.isArray(next.names)) themeNames = next.names.map(String);
    if (typeof next.toolsExpanded === "boolean") toolsExpanded = next.toolsExpanded;
    invalidateAll();
    requestRender();
    return null;
  };
})(globalThis);
