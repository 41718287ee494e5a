// Host packages: `@knightcodeai/cli`, `@knightcode/ai`, `@knightcode/agent` (`@knightcode/tui` is tui.js)
// (and the legacy `@mariozechner/pi-*` names, resolved to the same instances). Exports we
// have not written yet import fine and throw ERR_KC_UNSUPPORTED naming themselves when used.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const kc = internal.kc;
  const { Type } = internal.hostModule("typebox");
  const missing = (pkg, names) => Object.fromEntries(names.map((n) => [n, internal.missing(`${pkg}.${n}`)]));

  class ExtensionStartupError extends Error {
    constructor(message) {
      super(message);
      this.name = "ExtensionStartupError";
    }
  }
  const queues = new Map();
  function withFileMutationQueue(path, fn) {
    const previous = queues.get(path) || Promise.resolve();
    const next = previous.then(
      () => fn(),
      () => fn(),
    );
    queues.set(
      path,
      next.catch(() => {}),
    );
    return next;
  }
  const DEFAULT_MAX_BYTES = 50 * 1024;
  const DEFAULT_MAX_LINES = 2000;
  function formatSize(bytes) {
    if (bytes < 1024) return `${bytes}B`;
    if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
    return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
  }
  function truncate(content, options, fromEnd) {
    const maxLines = (options && options.maxLines) || DEFAULT_MAX_LINES;
    const maxBytes = (options && options.maxBytes) || DEFAULT_MAX_BYTES;
    const lines = String(content).split("\n");
    const totalLines = lines.length;
    const totalBytes = Buffer.byteLength(String(content));
    let kept = fromEnd ? lines.slice(-maxLines) : lines.slice(0, maxLines);
    let truncatedBy = kept.length < totalLines ? "lines" : null;
    let bytes = Buffer.byteLength(kept.join("\n"));
    while (kept.length && bytes > maxBytes) {
      kept = fromEnd ? kept.slice(1) : kept.slice(0, -1);
      bytes = Buffer.byteLength(kept.join("\n"));
      truncatedBy = "bytes";
    }
    const out = kept.join("\n");
    return {
      content: out,
      truncated: truncatedBy !== null,
      truncatedBy,
      totalLines,
      totalBytes,
      outputLines: kept.length,
      outputBytes: Buffer.byteLength(out),
      lastLinePartial: false,
      firstLineExceedsLimit: false,
      maxLines,
      maxBytes,
    };
  }
  function createEventBus() {
    const channels = new Map();
    return {
      emit(channel, data) {
        for (const fn of [...(channels.get(channel) || [])]) {
          try {
            fn(data);
          } catch (e) {
            internal.reportUncaught(e);
          }
        }
      },
      on(channel, fn) {
        if (!channels.has(channel)) channels.set(channel, []);
        channels.get(channel).push(fn);
        return () => {
          const l = channels.get(channel);
          const i = l.indexOf(fn);
          if (i >= 0) l.splice(i, 1);
        };
      },
    };
  }
  // Frontmatter as pi reads it (`---\n<yaml>\n---`), for the flat YAML that agent and prompt
  // files use: `key: scalar`, inline `[a, b]` lists and `- item` lists.
  function yamlScalar(text) {
    const t = text.replace(/\s+#.*$/, "").trim();
    if (/^".*"$/.test(t)) {
      try {
        return JSON.parse(t);
      } catch {
        return t.slice(1, -1);
      }
    }
    if (/^'.*'$/.test(t)) return t.slice(1, -1).replace(/''/g, "'");
    if (t === "true" || t === "false") return t === "true";
    if (t === "null" || t === "~") return null;
    if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
    if (/^\[.*\]$/.test(t))
      return t
        .slice(1, -1)
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean)
        .map(yamlScalar);
    return t;
  }
  function parseYaml(text) {
    const out = {};
    let key = null;
    for (const line of text.split("\n")) {
      if (!line.trim() || line.trim().startsWith("#")) continue;
      const item = line.match(/^\s*-\s+(.*)$/);
      if (item && key !== null) {
        if (!Array.isArray(out[key])) out[key] = [];
        out[key].push(yamlScalar(item[1]));
        continue;
      }
      const pair = line.match(/^([^\s:#][^:]*?)\s*:(?:\s+(.*))?$/);
      if (!pair) continue;
      key = pair[1];
      out[key] = pair[2] === undefined || pair[2].trim() === "" ? null : yamlScalar(pair[2]);
    }
    return out;
  }
  function parseFrontmatter(content) {
    const text = String(content).replace(/\r\n/g, "\n").replace(/\r/g, "\n");
    const end = text.startsWith("---") ? text.indexOf("\n---", 3) : -1;
    if (end === -1) return { frontmatter: {}, body: text };
    return { frontmatter: parseYaml(text.slice(4, end)) || {}, body: text.slice(end + 4).trim() };
  }
  // The conversation as labelled text for a summarizing model (the reference's format:
  // `[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`, `[Assistant tool calls]: …`,
  // `[Tool result]: …` cut at 2,000 characters; blank lines between).
  const SUMMARY_RESULT_CHARS = 2000;
  function serializeConversation(messages) {
    const parts = [];
    const texts = (content) =>
      typeof content === "string"
        ? content
        : (content || [])
            .filter((c) => c && c.type === "text")
            .map((c) => c.text)
            .join("");
    for (const m of messages || []) {
      if (!m) continue;
      if (m.role === "user") {
        const text = texts(m.content);
        if (text) parts.push(`[User]: ${text}`);
      } else if (m.role === "assistant") {
        const said = [],
          thought = [],
          calls = [];
        for (const block of m.content || []) {
          if (block.type === "text") said.push(block.text);
          else if (block.type === "thinking") thought.push(block.thinking);
          else if (block.type === "toolCall") {
            const args = Object.entries(block.arguments || {})
              .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
              .join(", ");
            calls.push(`${block.name}(${args})`);
          }
        }
        if (thought.length) parts.push(`[Assistant thinking]: ${thought.join("\n")}`);
        if (said.length) parts.push(`[Assistant]: ${said.join("\n")}`);
        if (calls.length) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
      } else if (m.role === "toolResult") {
        let text = texts(m.content);
        if (text.length > SUMMARY_RESULT_CHARS) {
          const more = text.length - SUMMARY_RESULT_CHARS;
          text = `${text.slice(0, SUMMARY_RESULT_CHARS)}\n\n[... ${more} more characters truncated]`;
        }
        if (text) parts.push(`[Tool result]: ${text}`);
      }
    }
    return parts.join("\n\n");
  }
  function keyText(action) {
    let keys = [];
    try {
      keys = internal.hostModule("tui").getKeybindings().getKeys(String(action)) || [];
    } catch {}
    return keys.join("/");
  }
  function hint(keys, description) {
    const theme = internal.terminalTheme;
    const fg = (role, text) => (theme ? theme.fg(role, text) : text);
    return fg("dim", keys) + fg("muted", ` ${description}`);
  }
  const isResult = (name) => (event) => event && event.toolName === name;
  const env = g.process.env;
  const cli = Object.assign(
    missing("@knightcodeai/cli", [
      "createReadTool",
      "createBashTool",
      "createEditTool",
      "createWriteTool",
      "createGrepTool",
      "createFindTool",
      "createLsTool",
      "createReadToolDefinition",
      "createBashToolDefinition",
      "createEditToolDefinition",
      "createWriteToolDefinition",
      "createGrepToolDefinition",
      "createFindToolDefinition",
      "createLsToolDefinition",
      "Theme",
      "createAgentSession",
      "SessionManager",
      "SettingsManager",
      "DefaultResourceLoader",
      "ModelRuntime",
    ]),
    {
      VERSION: "0.73.1",
      CONFIG_DIR_NAME: ".knightcode",
      defineTool: (def) => def,
      ExtensionStartupError,
      withFileMutationQueue,
      getAgentDir: () => env.KNIGHTCODE_CODING_AGENT_DIR || `${env.HOME || "/"}/.knightcode/agent`,
      isToolCallEventType: (name, event) => !!event && event.toolName === name,
      isBashToolResult: isResult("bash"),
      isReadToolResult: isResult("read"),
      isEditToolResult: isResult("edit"),
      isWriteToolResult: isResult("write"),
      isGrepToolResult: isResult("grep"),
      isFindToolResult: isResult("find"),
      isLsToolResult: isResult("ls"),
      createEventBus,
      DEFAULT_MAX_BYTES,
      DEFAULT_MAX_LINES,
      formatSize,
      truncateHead: (content, options) => truncate(content, options, false),
      truncateTail: (content, options) => truncate(content, options, true),
      truncateLine: (line, max = 500) =>
        line.length > max
          ? { text: line.slice(0, max) + "... [truncated]", wasTruncated: true }
          : { text: line, wasTruncated: false },
      parseFrontmatter,
      stripFrontmatter: (content) => parseFrontmatter(content).body,
      convertToLlm: (messages) => internal.op(kc.convertToLlm(JSON.stringify(messages || []))),
      serializeConversation,
      // Hints as the reference's footer and dialogs write them: the action's keys (from the
      // defaults and keybindings.json), then what they do.
      keyText,
      keyHint: (action, description) => hint(keyText(action), description),
      rawKeyHint: (key, description) => hint(key, description),
    },
  );
  // UI classes built on the tui package, made on first use (most extensions never ask).
  let uiClasses;
  const ui = () => {
    if (uiClasses) return uiClasses;
    const tuiPackage = internal.hostModule("tui");
    class CustomEditor extends tuiPackage.Editor {
      constructor(tuiObject, theme, keybindings, options) {
        super(tuiObject, theme, options);
        this.keybindings = keybindings || tuiPackage.getKeybindings();
        this.actionHandlers = new Map();
        this.onEscape = undefined;
        this.onCtrlD = undefined;
        this.onPasteImage = undefined;
        this.onExtensionShortcut = undefined;
      }
      onAction(action, handler) {
        this.actionHandlers.set(action, handler);
      }
      handleInput(data) {
        if (this.onExtensionShortcut && this.onExtensionShortcut(data)) return;
        const kb = this.keybindings;
        if (kb.matches(data, "app.clipboard.pasteImage")) {
          this.onPasteImage?.();
          return;
        }
        if (kb.matches(data, "app.interrupt")) {
          const handler = this.onEscape || this.actionHandlers.get("app.interrupt");
          if (!this.isShowingAutocomplete() && handler) {
            handler();
            return;
          }
          super.handleInput(data);
          return;
        }
        if (kb.matches(data, "app.exit") && this.getText().length === 0) {
          const handler = this.onCtrlD || this.actionHandlers.get("app.exit");
          if (handler) handler();
          return;
        }
        for (const [action, handler] of this.actionHandlers) {
          if (action !== "app.interrupt" && action !== "app.exit" && kb.matches(data, action)) {
            handler();
            return;
          }
        }
        super.handleInput(data);
      }
    }
    // A full-width rule (`─`) in a colour (the theme's border colour by default).
    class DynamicBorder {
      constructor(color) {
        this.color =
          typeof color === "function"
            ? color
            : (t) => (internal.terminalTheme ? internal.terminalTheme.fg("border", t) : t);
      }
      invalidate() {}
      render(width) {
        return [this.color("─".repeat(Math.max(1, width)))];
      }
    }
    const theme = () => internal.terminalTheme;
    const getMarkdownTheme = () => {
      const t = theme();
      const fg = (role) => (text) => (t ? t.fg(role, text) : text);
      return {
        heading: fg("mdHeading"),
        link: fg("mdLink"),
        linkUrl: fg("mdLinkUrl"),
        code: fg("mdCode"),
        codeBlock: fg("mdCodeBlock"),
        codeBlockBorder: fg("mdCodeBlockBorder"),
        quote: fg("mdQuote"),
        quoteBorder: fg("mdQuoteBorder"),
        hr: fg("mdHr"),
        listBullet: fg("mdListBullet"),
        bold: (x) => `\x1b[1m${x}\x1b[22m`,
        italic: (x) => `\x1b[3m${x}\x1b[23m`,
        strikethrough: (x) => `\x1b[9m${x}\x1b[29m`,
        underline: (x) => `\x1b[4m${x}\x1b[24m`,
      };
    };
    const getSelectListTheme = () => {
      const t = theme();
      const fg = (role) => (text) => (t ? t.fg(role, text) : text);
      return {
        selectedPrefix: fg("accent"),
        selectedText: fg("accent"),
        description: fg("muted"),
        scrollInfo: fg("muted"),
        noMatch: fg("muted"),
      };
    };
    const getSettingsListTheme = () => {
      const t = theme();
      const fg = (role) => (text) => (t ? t.fg(role, text) : text);
      return {
        label: (text, selected) => (selected ? fg("accent")(text) : text),
        value: (text, selected) => (selected ? fg("accent")(text) : fg("muted")(text)),
        description: fg("dim"),
        cursor: fg("accent")("→ "),
        hint: fg("dim"),
      };
    };
    // A loader between two rules, cancellable with the select list's cancel key (escape)
    // unless `{cancellable: false}`; `signal` aborts when it is cancelled.
    class BorderedLoader extends tuiPackage.Container {
      constructor(tuiObject, theme, message, options) {
        super();
        this.cancellable = !(options && options.cancellable === false);
        const border = (text) => theme.fg("border", text);
        const accent = (text) => theme.fg("accent", text);
        const muted = (text) => theme.fg("muted", text);
        this.addChild(new DynamicBorder(border));
        if (this.cancellable) {
          this.loader = new tuiPackage.CancellableLoader(tuiObject, accent, muted, message);
        } else {
          this.controller = new AbortController();
          this.loader = new tuiPackage.Loader(tuiObject, accent, muted, message);
        }
        this.addChild(this.loader);
        if (this.cancellable) {
          this.addChild(new tuiPackage.Spacer(1));
          this.addChild(new tuiPackage.Text(cli.keyHint("tui.select.cancel", "cancel"), 1, 0));
        }
        this.addChild(new tuiPackage.Spacer(1));
        this.addChild(new DynamicBorder(border));
      }
      get signal() {
        return this.cancellable ? this.loader.signal : this.controller.signal;
      }
      set onAbort(fn) {
        if (this.cancellable) this.loader.onAbort = fn;
      }
      handleInput(data) {
        if (this.cancellable) this.loader.handleInput(data);
      }
      dispose() {
        if (typeof this.loader.dispose === "function") this.loader.dispose();
        else this.loader.stop();
      }
    }
    uiClasses = {
      CustomEditor,
      DynamicBorder,
      BorderedLoader,
      getMarkdownTheme,
      getSelectListTheme,
      getSettingsListTheme,
    };
    return uiClasses;
  };
  for (const name of [
    "CustomEditor",
    "DynamicBorder",
    "BorderedLoader",
    "getMarkdownTheme",
    "getSelectListTheme",
    "getSettingsListTheme",
  ]) {
    Object.defineProperty(cli, name, { enumerable: true, configurable: true, get: () => ui()[name] });
  }
  internal.defineHost("cli", () => cli);

  const StringEnum = (values, options) =>
    Type.Unsafe(Object.assign({ type: "string", enum: [...values] }, options || {}));
  const ai = Object.assign(
    missing("@knightcode/ai", [
      "stream",
      "streamSimple",
      "complete",
      "completeSimple",
      "getModel",
      "getModels",
      "getProviders",
      "createAssistantMessageEventStream",
      "EventStream",
      "calculateCost",
      "anthropicMessagesApi",
      "openAIResponsesApi",
      "registerApiProvider",
    ]),
    {
      Type,
      StringEnum,
      getCurrentSystemPrompt: (messages) => {
        const m = (messages || []).find((x) => x.role === "system");
        return m ? m.content : undefined;
      },
    },
  );
  internal.defineHost("ai", () => ai);

  internal.defineHost("agent", () => missing("@knightcode/agent", ["Agent", "agentLoop"]));
})(globalThis);
