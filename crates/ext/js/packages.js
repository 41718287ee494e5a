// Host packages: `@knightcodeai/cli`, `@knightcode/ai`, `@knightcode/tui`, `@knightcode/agent`
// (and the legacy `@mariozechner/pi-*` names, resolved to the same instances). Exports we
// have not written yet import fine and throw ERR_KC_UNSUPPORTED naming themselves when used.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  const Type = internal.Type;
  const missing = (pkg, names) => Object.fromEntries(names.map((n) => [n, internal.missing(`${pkg}.${n}`)]));

  class ExtensionStartupError extends Error {
    constructor(message) { super(message); this.name = "ExtensionStartupError"; }
  }
  const queues = new Map();
  function withFileMutationQueue(path, fn) {
    const previous = queues.get(path) || Promise.resolve();
    const next = previous.then(() => fn(), () => fn());
    queues.set(path, next.catch(() => {}));
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
    return { content: out, truncated: truncatedBy !== null, truncatedBy, totalLines, totalBytes, outputLines: kept.length, outputBytes: Buffer.byteLength(out), lastLinePartial: false, firstLineExceedsLimit: false, maxLines, maxBytes };
  }
  function createEventBus() {
    const channels = new Map();
    return {
      emit(channel, data) { for (const fn of [...(channels.get(channel) || [])]) { try { fn(data); } catch (e) { internal.reportUncaught(e); } } },
      on(channel, fn) { if (!channels.has(channel)) channels.set(channel, []); channels.get(channel).push(fn); return () => { const l = channels.get(channel); const i = l.indexOf(fn); if (i >= 0) l.splice(i, 1); }; },
    };
  }
  internal.createEventBus = createEventBus;
  // Frontmatter as pi reads it (`---\n<yaml>\n---`), for the flat YAML that agent and prompt
  // files use: `key: scalar`, inline `[a, b]` lists and `- item` lists.
  function yamlScalar(text) {
    const t = text.replace(/\s+#.*$/, "").trim();
    if (/^".*"$/.test(t)) { try { return JSON.parse(t); } catch { return t.slice(1, -1); } }
    if (/^'.*'$/.test(t)) return t.slice(1, -1).replace(/''/g, "'");
    if (t === "true" || t === "false") return t === "true";
    if (t === "null" || t === "~") return null;
    if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
    if (/^\[.*\]$/.test(t)) return t.slice(1, -1).split(",").map((x) => x.trim()).filter(Boolean).map(yamlScalar);
    return t;
  }
  function parseYaml(text) {
    const out = {};
    let key = null;
    for (const line of text.split("\n")) {
      if (!line.trim() || line.trim().startsWith("#")) continue;
      const item = line.match(/^\s*-\s+(.*)$/);
      if (item && key !== null) { if (!Array.isArray(out[key])) out[key] = []; out[key].push(yamlScalar(item[1])); continue; }
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
  const isResult = (name) => (event) => event && event.toolName === name;
  const env = g.process.env;
  const cli = Object.assign(missing("@knightcodeai/cli", [
    "createReadTool", "createBashTool", "createEditTool", "createWriteTool", "createGrepTool", "createFindTool", "createLsTool",
    "createReadToolDefinition", "createBashToolDefinition", "createEditToolDefinition", "createWriteToolDefinition",
    "createGrepToolDefinition", "createFindToolDefinition", "createLsToolDefinition",
    "getMarkdownTheme", "getSettingsListTheme", "DynamicBorder", "BorderedLoader", "CustomEditor", "Theme",
    "serializeConversation", "convertToLlm", "createAgentSession", "SessionManager", "SettingsManager",
    "DefaultResourceLoader", "ModelRuntime",
  ]), {
    VERSION: "0.73.1",
    CONFIG_DIR_NAME: ".knightcode",
    defineTool: (def) => def,
    ExtensionStartupError,
    withFileMutationQueue,
    getAgentDir: () => env.KNIGHTCODE_CODING_AGENT_DIR || `${env.HOME || "/"}/.knightcode/agent`,
    isToolCallEventType: (name, event) => !!event && event.toolName === name,
    isBashToolResult: isResult("bash"), isReadToolResult: isResult("read"), isEditToolResult: isResult("edit"),
    isWriteToolResult: isResult("write"), isGrepToolResult: isResult("grep"), isFindToolResult: isResult("find"),
    isLsToolResult: isResult("ls"),
    createEventBus,
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES,
    formatSize,
    truncateHead: (content, options) => truncate(content, options, false),
    truncateTail: (content, options) => truncate(content, options, true),
    truncateLine: (line, max = 500) => (line.length > max ? { text: line.slice(0, max) + "... [truncated]", wasTruncated: true } : { text: line, wasTruncated: false }),
    parseFrontmatter,
    stripFrontmatter: (content) => parseFrontmatter(content).body,
    keyHint: (key, description) => `${key} ${description || ""}`.trim(),
  });
  internal.defineHost("cli", () => cli);

  const StringEnum = (values, options) => Type.Unsafe(Object.assign({ type: "string", enum: [...values] }, options || {}));
  const ai = Object.assign(missing("@knightcode/ai", [
    "stream", "streamSimple", "complete", "completeSimple", "getModel", "getModels", "getProviders",
    "createAssistantMessageEventStream", "EventStream", "calculateCost", "anthropicMessagesApi", "openAIResponsesApi",
    "registerApiProvider",
  ]), {
    Type,
    StringEnum,
    getCurrentSystemPrompt: (messages) => { const m = (messages || []).find((x) => x.role === "system"); return m ? m.content : undefined; },
  });
  internal.defineHost("ai", () => ai);

  // Components render to lines; only the terminal draws them (part 2), but renderers may
  // build them in any mode.
  const visibleWidth = (s) => String(s).replace(/\x1b\[[0-9;]*m/g, "").length;
  class Text {
    constructor(text = "", paddingX = 1, paddingY = 1) { this.text = text; this.paddingX = paddingX; this.paddingY = paddingY; }
    setText(text) { this.text = text; }
    render(width) { return String(this.text).split("\n").map((l) => " ".repeat(this.paddingX) + l.slice(0, Math.max(0, width - this.paddingX))); }
    invalidate() {}
  }
  class Container {
    constructor() { this.children = []; }
    addChild(c) { this.children.push(c); }
    removeChild(c) { this.children = this.children.filter((x) => x !== c); }
    clear() { this.children = []; }
    render(width) { return this.children.flatMap((c) => c.render(width)); }
    invalidate() { for (const c of this.children) if (c.invalidate) c.invalidate(); }
  }
  class Spacer { constructor(n = 1) { this.n = n; } render() { return Array(this.n).fill(""); } invalidate() {} }
  // `Key.escape` is "escape", `Key.slash` "/", `Key.ctrlAlt("p")` "ctrl+alt+p" (as pi-tui's Key).
  const KEY_SYMBOLS = { backtick: "`", hyphen: "-", equals: "=", leftbracket: "[", rightbracket: "]", backslash: "\\",
    semicolon: ";", quote: "'", comma: ",", period: ".", slash: "/", exclamation: "!", at: "@", hash: "#", dollar: "$",
    percent: "%", caret: "^", ampersand: "&", asterisk: "*", leftparen: "(", rightparen: ")", underscore: "_", plus: "+",
    pipe: "|", tilde: "~", leftbrace: "{", rightbrace: "}", colon: ":", lessthan: "<", greaterthan: ">", question: "?" };
  const Key = new Proxy({}, {
    get: (_, k) => {
      if (typeof k !== "string") return undefined;
      if (/^(ctrl|shift|alt|super)(Ctrl|Shift|Alt|Super)*$/.test(k)) {
        const prefix = k.replace(/([A-Z])/g, "+$1").toLowerCase();
        return (key) => `${prefix}+${key}`;
      }
      return Object.prototype.hasOwnProperty.call(KEY_SYMBOLS, k) ? KEY_SYMBOLS[k] : k;
    },
  });
  const tui = Object.assign(missing("@knightcode/tui", ["SelectList", "SettingsList", "Loader", "CancellableLoader", "Input", "Editor", "Markdown", "Image", "TUI", "wrapTextWithAnsi", "fuzzyFilter", "fuzzyMatch", "parseKey"]), {
    Text, Container, Spacer, Box: Container, TruncatedText: Text,
    visibleWidth,
    truncateToWidth: (s, w, ellipsis = "...") => (visibleWidth(s) <= w ? s : String(s).slice(0, Math.max(0, w - ellipsis.length)) + ellipsis),
    matchesKey: () => false,
    Key,
    CURSOR_MARKER: "\x1b_pi:c\x07",
  });
  internal.defineHost("tui", () => tui);
  internal.defineHost("agent", () => missing("@knightcode/agent", ["Agent", "agentLoop"]));
})(globalThis);
