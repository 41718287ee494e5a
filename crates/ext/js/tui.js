// `@knightcode/tui` (and `@mariozechner/pi-tui`): the components extensions build screens
// from, line-based like ours. Measurement, wrapping, key parsing, keybindings, fuzzy
// matching and markdown are our Rust code (`__kc.tui`), so an extension's lines measure
// and wrap exactly as the built-in views do. Components are plain classes extensions may
// subclass; nothing here draws: the terminal UI asks for `render(width)` lines. The keyed
// widgets (`SelectList`, `Input`, `SettingsList`) are `tui_widgets.js`.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  internal.defineHost("tui", () => {
    const native = internal.kc.tui;
    const missing = (names) => Object.fromEntries(names.map((n) => [n, internal.missing(`@knightcode/tui.${n}`)]));

    const visibleWidth = (text) => native.width(String(text ?? ""));
    const truncateToWidth = (text, maxWidth, ellipsis = "...", pad = false) =>
      native.truncate(String(text ?? ""), Number(maxWidth) || 0, String(ellipsis), !!pad);
    const wrapTextWithAnsi = (text, width) => native.wrap(String(text ?? ""), Number(width) || 1);
    const graphemes = (text) => native.graphemes(String(text));
    const sliceByColumn = (text, start, length) => native.slice(String(text), start, length);
    const padToWidth = (line, width) => line + " ".repeat(Math.max(0, width - visibleWidth(line)));
    const withBackground = (line, width, bgFn) => bgFn(padToWidth(line, width));
    const isWhitespace = (ch) => /\s/.test(ch);
    const isPunctuation = (ch) => /[(){}[\]<>.,;:'"!?+\-=*/\\|&%^$#@~`]/.test(ch);

    // Keys: ids like "ctrl+c", "shift+tab", "escape"; `Key.ctrlAlt("p")` builds them.
    const KEY_SYMBOLS = {
      backtick: "`",
      hyphen: "-",
      equals: "=",
      leftbracket: "[",
      rightbracket: "]",
      backslash: "\\",
      semicolon: ";",
      quote: "'",
      comma: ",",
      period: ".",
      slash: "/",
      exclamation: "!",
      at: "@",
      hash: "#",
      dollar: "$",
      percent: "%",
      caret: "^",
      ampersand: "&",
      asterisk: "*",
      leftparen: "(",
      rightparen: ")",
      underscore: "_",
      plus: "+",
      pipe: "|",
      tilde: "~",
      leftbrace: "{",
      rightbrace: "}",
      colon: ":",
      lessthan: "<",
      greaterthan: ">",
      question: "?",
    };
    const Key = { ...KEY_SYMBOLS };
    for (const name of [
      "escape",
      "esc",
      "enter",
      "return",
      "tab",
      "space",
      "backspace",
      "delete",
      "insert",
      "clear",
      "home",
      "end",
      "pageUp",
      "pageDown",
      "up",
      "down",
      "left",
      "right",
      "f1",
      "f2",
      "f3",
      "f4",
      "f5",
      "f6",
      "f7",
      "f8",
      "f9",
      "f10",
      "f11",
      "f12",
    ]) {
      Key[name] = name;
    }
    for (const combo of [
      "ctrl",
      "shift",
      "alt",
      "super",
      "ctrlShift",
      "shiftCtrl",
      "ctrlAlt",
      "altCtrl",
      "shiftAlt",
      "altShift",
      "ctrlSuper",
      "superCtrl",
      "shiftSuper",
      "superShift",
      "altSuper",
      "superAlt",
      "ctrlShiftAlt",
      "ctrlShiftSuper",
    ]) {
      const prefix = combo.replace(/([A-Z])/g, "+$1").toLowerCase();
      Key[combo] = (key) => `${prefix}+${key}`;
    }
    const matchesKey = (data, keyId) =>
      typeof data === "string" && typeof keyId === "string" && native.matchesKey(data, keyId);
    const parseKey = (data) => (typeof data === "string" ? native.parseKey(data) : undefined);
    const isKeyRelease = (data) => typeof data === "string" && native.keyKind(data) === "release";
    const isKeyRepeat = (data) => typeof data === "string" && native.keyKind(data) === "repeat";
    const decodeKittyPrintable = (data) => (typeof data === "string" ? native.kittyPrintable(data) : undefined);

    // `getKeybindings()`: the app's bindings (defaults plus keybindings.json) by action id.
    const keybindings = {
      matches: (data, action) => typeof data === "string" && native.bindingMatches(data, String(action)),
      getKeys: (action) => native.bindingKeys(String(action)),
    };
    const getKeybindings = () => keybindings;

    function fuzzyMatch(query, text) {
      const score = native.fuzzy(String(query), String(text));
      return score === undefined || score === null ? { matches: false, score: 0 } : { matches: true, score };
    }
    function fuzzyFilter(items, query, getText) {
      const tokens = String(query).trim().split(/\s+/).filter(Boolean);
      if (tokens.length === 0) return items;
      const scored = [];
      items.forEach((item, index) => {
        const text = getText(item);
        let total = 0;
        for (const token of tokens) {
          const m = fuzzyMatch(token, text);
          if (!m.matches) return;
          total += m.score;
        }
        scored.push({ item, total, index });
      });
      scored.sort((a, b) => a.total - b.total || a.index - b.index);
      return scored.map((s) => s.item);
    }

    class Container {
      constructor() {
        this.children = [];
      }
      addChild(component) {
        this.children.push(component);
      }
      removeChild(component) {
        const i = this.children.indexOf(component);
        if (i >= 0) this.children.splice(i, 1);
      }
      clear() {
        this.children = [];
      }
      invalidate() {
        for (const child of this.children) child.invalidate?.();
      }
      render(width) {
        const lines = [];
        for (const child of this.children) lines.push(...child.render(width));
        return lines;
      }
    }

    class Text {
      constructor(text = "", paddingX = 1, paddingY = 1, customBgFn) {
        this.text = text;
        this.paddingX = paddingX;
        this.paddingY = paddingY;
        this.customBgFn = customBgFn;
        this.cache = null;
      }
      setText(text) {
        this.text = text;
        this.cache = null;
      }
      setCustomBgFn(fn) {
        this.customBgFn = fn;
        this.cache = null;
      }
      invalidate() {
        this.cache = null;
      }
      render(width) {
        if (this.cache && this.cache.text === this.text && this.cache.width === width) return this.cache.lines;
        let lines = [];
        if (this.text && String(this.text).trim() !== "") {
          const margin = " ".repeat(this.paddingX);
          const inner = Math.max(1, width - 2 * this.paddingX);
          const fill = (line) =>
            this.customBgFn ? withBackground(line, width, this.customBgFn) : padToWidth(line, width);
          const body = wrapTextWithAnsi(String(this.text).replace(/\t/g, "   "), inner).map((l) =>
            fill(margin + l + margin),
          );
          const blank = Array.from({ length: this.paddingY }, () => fill(""));
          lines = [...blank, ...body, ...blank];
        }
        this.cache = { text: this.text, width, lines };
        return lines;
      }
    }

    class TruncatedText {
      constructor(text, paddingX = 0, paddingY = 0) {
        this.text = text;
        this.paddingX = paddingX;
        this.paddingY = paddingY;
      }
      invalidate() {}
      render(width) {
        const blank = Array.from({ length: this.paddingY }, () => " ".repeat(width));
        const first = String(this.text ?? "").split("\n")[0];
        const margin = " ".repeat(this.paddingX);
        const shown = truncateToWidth(first, Math.max(1, width - 2 * this.paddingX));
        return [...blank, padToWidth(margin + shown + margin, width), ...blank];
      }
    }

    class Spacer {
      constructor(lines = 1) {
        this.lines = lines;
      }
      setLines(lines) {
        this.lines = lines;
      }
      invalidate() {}
      render() {
        return Array.from({ length: this.lines }, () => "");
      }
    }

    class Box {
      constructor(paddingX = 1, paddingY = 1, bgFn) {
        this.children = [];
        this.paddingX = paddingX;
        this.paddingY = paddingY;
        this.bgFn = bgFn;
      }
      addChild(c) {
        this.children.push(c);
      }
      removeChild(c) {
        const i = this.children.indexOf(c);
        if (i >= 0) this.children.splice(i, 1);
      }
      clear() {
        this.children = [];
      }
      setBgFn(fn) {
        this.bgFn = fn;
      }
      invalidate() {
        for (const c of this.children) c.invalidate?.();
      }
      render(width) {
        const inner = Math.max(1, width - 2 * this.paddingX);
        const margin = " ".repeat(this.paddingX);
        const body = [];
        for (const child of this.children) for (const line of child.render(inner)) body.push(margin + line);
        if (body.length === 0) return [];
        const fill = (line) => (this.bgFn ? withBackground(line, width, this.bgFn) : padToWidth(line, width));
        const blank = Array.from({ length: this.paddingY }, () => fill(""));
        return [...blank, ...body.map(fill), ...blank];
      }
    }

    // The keyed widgets are `tui_widgets.js`'s, built on the helpers above.
    const { SelectList, Input, SettingsList, CURSOR_MARKER } = internal.tuiWidgets({
      visibleWidth,
      truncateToWidth,
      wrapTextWithAnsi,
      padToWidth,
      sliceByColumn,
      graphemes,
      isWhitespace,
      isPunctuation,
      decodeKittyPrintable,
      keybindings,
      fuzzyFilter,
    });

    const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    class Loader extends Text {
      constructor(ui, spinnerColorFn, messageColorFn, message = "Loading...", indicator) {
        super("", 1, 0);
        this.ui = ui;
        this.spinnerColorFn = spinnerColorFn;
        this.messageColorFn = messageColorFn;
        this.message = message;
        this.timer = null;
        this.frame = 0;
        this.setIndicator(indicator);
      }
      render(width) {
        return ["", ...super.render(width)];
      }
      start() {
        this.draw();
        this.animate();
      }
      stop() {
        if (this.timer) {
          clearInterval(this.timer);
          this.timer = null;
        }
      }
      setMessage(message) {
        this.message = message;
        this.draw();
      }
      setIndicator(indicator) {
        this.verbatim = indicator !== undefined;
        this.frames = indicator && indicator.frames !== undefined ? [...indicator.frames] : [...SPINNER];
        this.intervalMs = indicator && indicator.intervalMs > 0 ? indicator.intervalMs : 80;
        this.frame = 0;
        this.start();
      }
      animate() {
        this.stop();
        if (this.frames.length <= 1) return;
        this.timer = setInterval(() => {
          this.frame = (this.frame + 1) % this.frames.length;
          this.draw();
        }, this.intervalMs);
      }
      draw() {
        const frame = this.frames[this.frame] ?? "";
        const shown = this.verbatim ? frame : this.spinnerColorFn(frame);
        this.setText(`${frame.length > 0 ? `${shown} ` : ""}${this.messageColorFn(this.message)}`);
        this.ui?.requestRender?.();
      }
    }
    class CancellableLoader extends Loader {
      constructor(...args) {
        super(...args);
        this.abortController = new AbortController();
        this.onAbort = undefined;
      }
      get signal() {
        return this.abortController.signal;
      }
      get aborted() {
        return this.abortController.signal.aborted;
      }
      handleInput(data) {
        if (keybindings.matches(data, "tui.select.cancel")) {
          this.abortController.abort();
          this.onAbort?.();
        }
      }
      dispose() {
        this.stop();
      }
    }

    // What a style function puts before its text: run it on a marker and keep the prefix.
    const MARK = "\u{E000}";
    const prefixOf = (fn) => {
      try {
        const s = String(fn(MARK));
        const at = s.indexOf(MARK);
        return at > 0 ? s.slice(0, at) : "";
      } catch {
        return "";
      }
    };
    function markdownStyles(theme, text) {
      const t = theme || {};
      const id = (x) => x;
      const f = (name) => (typeof t[name] === "function" ? t[name] : id);
      const styles = {
        heading: prefixOf((x) => f("heading")(f("bold")(x))),
        link: prefixOf((x) => f("link")(f("underline")(x))),
        quote: prefixOf((x) => f("quote")(f("italic")(x))),
      };
      for (const name of [
        "linkUrl",
        "code",
        "codeBlock",
        "codeBlockBorder",
        "quoteBorder",
        "hr",
        "listBullet",
        "bold",
        "italic",
        "strikethrough",
        "underline",
      ]) {
        if (typeof t[name] === "function") styles[name] = prefixOf(t[name]);
      }
      if (text) {
        let fn = typeof text.color === "function" ? text.color : id;
        const wrap = (inner, flag, name) => (flag && typeof t[name] === "function" ? (x) => t[name](inner(x)) : inner);
        fn = wrap(
          wrap(wrap(wrap(fn, text.bold, "bold"), text.italic, "italic"), text.strikethrough, "strikethrough"),
          text.underline,
          "underline",
        );
        styles.text = prefixOf(fn);
        if (typeof text.bgColor === "function") styles.background = prefixOf(text.bgColor);
      }
      return JSON.stringify(styles);
    }
    class Markdown {
      constructor(text = "", paddingX = 0, paddingY = 0, theme, defaultTextStyle) {
        this.text = text;
        this.paddingX = paddingX;
        this.paddingY = paddingY;
        this.theme = theme;
        this.defaultTextStyle = defaultTextStyle;
        this.cache = null;
        this.styles = null;
      }
      setText(text) {
        this.text = text;
        this.cache = null;
      }
      invalidate() {
        this.cache = null;
        this.styles = null;
      }
      render(width) {
        if (this.cache && this.cache.text === this.text && this.cache.width === width) return this.cache.lines;
        if (this.styles === null) this.styles = markdownStyles(this.theme, this.defaultTextStyle);
        const lines =
          !this.text || String(this.text).trim() === ""
            ? []
            : native
                .markdown(String(this.text), width, this.styles, this.paddingX, this.paddingY)
                .map((line) => padToWidth(line, width));
        this.cache = { text: this.text, width, lines };
        return lines;
      }
    }

    // The multi-line editor is our Rust editor (the prompt editor of the interactive mode),
    // held by handle; subclasses (`CustomEditor`, modal editors) wrap its input and lines.
    const editors =
      typeof FinalizationRegistry === "function"
        ? new FinalizationRegistry((id) => native.editor(id, "drop", ""))
        : null;
    class Editor {
      constructor(tui, theme, options = {}) {
        this.tui = tui;
        this.theme = theme || {};
        this.borderColor = this.theme.borderColor;
        this.editorId = native.editorNew();
        editors?.register(this, this.editorId);
        const padding = options && Number.isFinite(options.paddingX) ? Math.max(0, Math.floor(options.paddingX)) : 0;
        this.paddingX = padding;
        this.focused = false;
        this.disableSubmit = false;
        this.onSubmit = undefined;
        this.onChange = undefined;
        this.autocompleteProvider = undefined;
      }
      editorCall(op, arg = "") {
        return JSON.parse(native.editor(this.editorId, op, String(arg)));
      }
      getText() {
        return this.editorCall("text");
      }
      getExpandedText() {
        return this.editorCall("expandedText");
      }
      getLines() {
        return this.editorCall("lines");
      }
      getCursor() {
        return this.editorCall("cursor");
      }
      isEditorEmpty() {
        return this.getText() === "";
      }
      changed(before) {
        const after = this.getText();
        if (after !== before) this.onChange?.(after);
      }
      setText(text) {
        const before = this.getText();
        this.editorCall("setText", text);
        this.changed(before);
      }
      insertTextAtCursor(text) {
        const before = this.getText();
        this.editorCall("insert", text);
        this.changed(before);
      }
      addToHistory(text) {
        this.editorCall("history", text);
      }
      getPaddingX() {
        return this.paddingX;
      }
      setPaddingX(padding) {
        this.paddingX = Number.isFinite(padding) ? Math.max(0, Math.floor(padding)) : 0;
        this.tui?.requestRender?.();
      }
      setAutocompleteProvider(provider) {
        this.autocompleteProvider = provider;
      }
      isShowingAutocomplete() {
        return this.editorCall("showingCompletions");
      }
      invalidate() {}
      handleInput(data) {
        const before = this.getText();
        this.editorCall("submit", !this.disableSubmit);
        const result = this.editorCall("input", data);
        if (result && typeof result.submitted === "string") this.onSubmit?.(result.submitted);
        this.changed(before);
      }
      render(width) {
        this.editorCall("border", prefixOf(typeof this.borderColor === "function" ? this.borderColor : (x) => x));
        this.editorCall("paddingX", this.paddingX);
        this.editorCall("focused", !!this.focused);
        const rows = this.tui && this.tui.terminal && this.tui.terminal.rows;
        if (rows) this.editorCall("rows", rows);
        return this.editorCall("render", width);
      }
    }

    // Images draw only in terminals with an image protocol; elsewhere (and for now
    // everywhere) the reference's fallback text stands in.
    function imageFallback(mimeType, dimensions, filename) {
      const parts = [];
      if (filename) parts.push(filename);
      parts.push(`[${mimeType}]`);
      if (dimensions) parts.push(`${dimensions.widthPx}x${dimensions.heightPx}`);
      return `[Image: ${parts.join(" ")}]`;
    }
    class Image {
      constructor(base64Data, mimeType, theme, options = {}, dimensions) {
        this.base64Data = base64Data;
        this.mimeType = mimeType;
        this.theme = theme;
        this.options = options || {};
        this.dimensions = dimensions;
      }
      getImageId() {
        return this.options.imageId;
      }
      invalidate() {}
      render(width) {
        const text = imageFallback(this.mimeType, this.dimensions, this.options.filename);
        const fallback =
          this.theme && typeof this.theme.fallbackColor === "function" ? this.theme.fallbackColor(text) : text;
        return [truncateToWidth(fallback, Math.max(1, width))];
      }
    }

    // The terminal UI object components receive as `tui`; the interactive mode gives the
    // real one, this stands in where nothing draws.
    class TUI extends Container {
      constructor() {
        super();
        this.terminal = { columns: 80, rows: 24 };
      }
      requestRender() {}
      setFocus() {}
      start() {}
      stop() {}
      showOverlay() {
        return { hide() {}, setHidden() {}, isHidden: () => true, focus() {}, unfocus() {}, isFocused: () => false };
      }
      hasOverlay() {
        return false;
      }
    }

    return Object.assign(
      missing([
        "ProcessTerminal",
        "StdinBuffer",
        "CombinedAutocompleteProvider",
        "KeybindingsManager",
        "renderImage",
        "encodeKitty",
        "encodeITerm2",
        "detectCapabilities",
        "getCapabilities",
      ]),
      {
        Text,
        TruncatedText,
        Box,
        Container,
        Spacer,
        SelectList,
        SettingsList,
        Input,
        Editor,
        Loader,
        CancellableLoader,
        Markdown,
        Image,
        TUI,
        visibleWidth,
        truncateToWidth,
        wrapTextWithAnsi,
        matchesKey,
        parseKey,
        isKeyRelease,
        isKeyRepeat,
        decodeKittyPrintable,
        Key,
        getKeybindings,
        setKeybindings: () => {},
        TUI_KEYBINDINGS: {},
        setKittyProtocolActive: () => {},
        isKittyProtocolActive: () => false,
        fuzzyMatch,
        fuzzyFilter,
        isFocusable: (c) => c !== null && typeof c === "object" && "focused" in c,
        CURSOR_MARKER,
        hyperlink: (text, url) => `\x1b]8;;${url}\x1b\\${text}\x1b]8;;\x1b\\`,
        imageFallback,
      },
    );
  });
})(globalThis);
