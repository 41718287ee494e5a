// Renders an exported KnightCode session from the JSON in #session-data. Everything is drawn
// on demand: the tree shows only the rows in view, and the conversation grows in batches as
// it is scrolled, so a session with tens of thousands of entries opens at once.
(function () {
  "use strict";

  var started = window.performance ? performance.now() : 0;
  var BATCH = 120;
  var ROW_HEIGHT = 20;
  var PREVIEW_LINES = 12;
  var HIGHLIGHT_LIMIT = 200000;

  var data = JSON.parse(document.getElementById("session-data").textContent || "{}");
  var header = data.header || {};
  var entries = Array.isArray(data.entries) ? data.entries : [];

  // ---- the tree ---------------------------------------------------------------------------

  var byId = new Map();
  var order = new Map();
  var children = new Map();
  var labels = new Map();
  var resultsByCall = new Map();
  var roots = [];
  var sessionName = null;

  entries.forEach(function (entry, index) {
    if (entry && typeof entry.id === "string" && !byId.has(entry.id)) {
      byId.set(entry.id, entry);
      order.set(entry.id, index);
    }
  });
  entries.forEach(function (entry) {
    if (!entry || byId.get(entry.id) !== entry) return;
    if (entry.type === "label") {
      if (entry.label) labels.set(entry.targetId, entry.label);
      else labels.delete(entry.targetId);
    }
    if (entry.type === "session_info" && typeof entry.name === "string") sessionName = entry.name || null;
    var message = entry.type === "message" ? entry.message : null;
    if (message && message.role === "toolResult" && message.toolCallId && !resultsByCall.has(message.toolCallId)) {
      resultsByCall.set(message.toolCallId, entry);
    }
    var parent = entry.parentId;
    if (parent && parent !== entry.id && byId.has(parent)) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(entry.id);
    } else {
      roots.push(entry.id);
    }
  });

  // Depth-first rows for the sidebar; indentation grows only where the tree forks. Entries a
  // parent loop keeps out of reach are appended as roots so nothing is lost.
  var rows = [];
  var rowIndex = new Map();
  (function flatten() {
    var seen = new Set();
    var stack = [];
    function pushChildren(list, depth, forked) {
      for (var i = list.length - 1; i >= 0; i--) stack.push({ id: list[i], depth: depth, fork: forked });
    }
    function walk(rootIds) {
      pushChildren(rootIds, 0, rootIds.length > 1);
      while (stack.length) {
        var item = stack.pop();
        if (seen.has(item.id)) continue;
        seen.add(item.id);
        rowIndex.set(item.id, rows.length);
        rows.push(item);
        var kids = children.get(item.id) || [];
        var forks = kids.length > 1;
        pushChildren(kids, forks ? item.depth + 1 : item.depth, forks);
      }
    }
    walk(roots);
    var lost = [];
    byId.forEach(function (_, id) { if (!seen.has(id)) lost.push(id); });
    if (lost.length) walk(lost.filter(function (id) { return !seen.has(id); }));
  })();

  function pathTo(id) {
    var path = [];
    var seen = new Set();
    var current = byId.get(id);
    while (current && !seen.has(current.id)) {
      seen.add(current.id);
      path.push(current);
      var parent = current.parentId;
      current = parent && parent !== current.id ? byId.get(parent) : null;
    }
    return path.reverse();
  }

  // The newest leaf below `id`: the branch a click on a node continues along.
  function leafBelow(id) {
    var seen = new Set();
    while (!seen.has(id)) {
      seen.add(id);
      var kids = children.get(id);
      if (!kids || !kids.length) return id;
      id = kids[kids.length - 1];
    }
    return id;
  }

  // ---- text helpers -----------------------------------------------------------------------

  function esc(text) {
    return String(text == null ? "" : text)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }

  function contentBlocks(content) {
    if (typeof content === "string") return [{ type: "text", text: content }];
    return Array.isArray(content) ? content : [];
  }

  function contentText(content) {
    return contentBlocks(content)
      .filter(function (b) { return b && b.type === "text"; })
      .map(function (b) { return b.text || ""; })
      .join("\n");
  }

  function formatTokens(n) {
    n = Number(n) || 0;
    if (n < 1000) return String(n);
    if (n < 1e6) return (n / 1000).toFixed(n < 10000 ? 1 : 0) + "k";
    return (n / 1e6).toFixed(1) + "M";
  }

  function formatTime(ts) {
    var date = new Date(typeof ts === "number" ? ts : String(ts || ""));
    return isNaN(date.getTime()) ? "" : date.toLocaleString();
  }

  function oneLine(text, max) {
    text = String(text || "").replace(/\s+/g, " ").trim();
    return text.length > max ? text.slice(0, max - 1) + "…" : text;
  }

  // ---- syntax highlighting ----------------------------------------------------------------

  var KEYWORDS = new Set(("as async await break case catch class const continue crate def default defer del delete do elif " +
    "else enum export extends false final finally fn for from func function go if impl import in instanceof interface " +
    "is lambda let loop match mod module mut new nil none not null of or and package pass private protected pub public " +
    "raise return self static struct super switch this throw trait true try type typeof undefined unsafe use var void " +
    "where while with yield echo then fi done esac local").split(" "));
  var HASH_COMMENTS = new Set(["py", "python", "sh", "bash", "zsh", "shell", "rb", "ruby", "yaml", "yml", "toml", "pl",
    "perl", "r", "make", "makefile", "dockerfile", "conf", "ini", "nix", "ps1", "powershell", "fish", "elixir", "ex"]);
  var NO_HIGHLIGHT = new Set(["", "text", "txt", "plain", "plaintext", "md", "markdown", "log", "csv", "output"]);
  var EXTENSIONS = { rs: "rust", ts: "ts", tsx: "ts", js: "js", mjs: "js", cjs: "js", jsx: "js", py: "py", sh: "sh",
    bash: "sh", zsh: "sh", rb: "rb", go: "go", java: "java", kt: "kotlin", c: "c", h: "c", cc: "cpp", cpp: "cpp",
    hpp: "cpp", cs: "cs", swift: "swift", json: "json", yaml: "yaml", yml: "yaml", toml: "toml", html: "html",
    css: "css", scss: "css", sql: "sql", md: "md", txt: "txt", lua: "lua", php: "php", zig: "zig", nix: "nix" };

  function languageOfPath(path) {
    var name = String(path || "").split("/").pop().toLowerCase();
    if (name === "makefile") return "make";
    if (name === "dockerfile") return "dockerfile";
    var dot = name.lastIndexOf(".");
    return dot < 0 ? "" : (EXTENSIONS[name.slice(dot + 1)] || "");
  }

  function highlight(code, lang) {
    lang = String(lang || "").toLowerCase().split(/[\s{]/)[0];
    if (NO_HIGHLIGHT.has(lang) || code.length > HIGHLIGHT_LIMIT) return esc(code);
    var hash = HASH_COMMENTS.has(lang);
    var token = hash
      ? /(#[^\n]*)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?\b|\b0x[0-9a-f]+\b)|([A-Za-z_$][\w$]*)|([{}()[\];,.:=<>+\-*/%!&|^~?]+)/gi
      : /(\/\/[^\n]*|\/\*[\s\S]*?\*\/|<!--[\s\S]*?-->)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?\b|\b0x[0-9a-f]+\b)|([A-Za-z_$][\w$]*)|([{}()[\];,.:=<>+\-*/%!&|^~?#@]+)/gi;
    var out = "";
    var last = 0;
    var match;
    while ((match = token.exec(code))) {
      out += esc(code.slice(last, match.index));
      var text = match[0];
      var cls = null;
      if (match[1]) cls = "comment";
      else if (match[2]) cls = lang === "json" && /^\s*:/.test(code.slice(token.lastIndex)) ? "type" : "string";
      else if (match[3]) cls = "number";
      else if (match[4]) {
        if (KEYWORDS.has(text)) cls = "keyword";
        else if (/^[A-Z][A-Za-z0-9_]*$/.test(text) && text.length > 1) cls = "type";
        else if (/^\s*\(/.test(code.slice(token.lastIndex, token.lastIndex + 4))) cls = "function";
      } else if (match[5]) cls = "punct";
      out += cls ? '<span class="tok-' + cls + '">' + esc(text) + "</span>" : esc(text);
      last = token.lastIndex;
    }
    return out + esc(code.slice(last));
  }

  // ---- markdown ---------------------------------------------------------------------------

  function safeUrl(url) {
    url = String(url || "").trim();
    return /^(https?:|mailto:|#|\/|\.\/|\.\.\/)/i.test(url) || !/^[a-z][a-z0-9+.-]*:/i.test(url) ? url : "#";
  }

  function inline(text) {
    var codes = [];
    var html = esc(text).replace(/`([^`\n]+)`/g, function (_, code) {
      codes.push("<code>" + code + "</code>");
      return "\u0000" + (codes.length - 1) + "\u0000";
    });
    html = html
      .replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, function (_, alt, url) { return "[" + alt + "](" + url + ")"; })
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, function (_, label, url) {
        return '<a href="' + esc(safeUrl(url.replace(/&amp;/g, "&"))) + '" rel="noopener noreferrer">' + label + "</a>";
      })
      .replace(/(^|[\s(])(https?:\/\/[^\s<)]+)/g, function (_, lead, url) {
        return lead + '<a href="' + url + '" rel="noopener noreferrer">' + url + "</a>";
      })
      .replace(/\*\*([^*\n]+)\*\*|__([^_\n]+)__/g, function (_, a, b) { return "<strong>" + (a || b) + "</strong>"; })
      .replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)|(^|[^_\w])_([^_\n]+)_(?!\w)/g, function (_, la, a, lb, b) {
        return (la || lb || "") + "<em>" + (a || b) + "</em>";
      })
      .replace(/~~([^~\n]+)~~/g, "<del>$1</del>");
    return html.replace(/\u0000(\d+)\u0000/g, function (_, i) { return codes[Number(i)]; });
  }

  function markdown(text) {
    var lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
    var out = [];
    var i = 0;
    var paragraph = [];
    function flush() {
      if (paragraph.length) out.push("<p>" + paragraph.map(inline).join("<br>") + "</p>");
      paragraph = [];
    }
    while (i < lines.length) {
      var line = lines[i];
      var fence = /^\s*(```+|~~~+)\s*([^`]*)$/.exec(line);
      if (fence) {
        flush();
        var body = [];
        i++;
        while (i < lines.length && lines[i].trim().indexOf(fence[1]) !== 0) body.push(lines[i++]);
        i++;
        out.push('<pre><code class="lang">' + highlight(body.join("\n"), fence[2].trim()) + "</code></pre>");
        continue;
      }
      var heading = /^(#{1,6})\s+(.*)$/.exec(line);
      if (heading) {
        flush();
        var level = heading[1].length;
        out.push("<h" + level + ">" + inline(heading[2].replace(/\s+#+\s*$/, "")) + "</h" + level + ">");
        i++;
        continue;
      }
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
        flush();
        out.push("<hr>");
        i++;
        continue;
      }
      if (/^\s*>/.test(line)) {
        flush();
        var quoted = [];
        while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*>\s?/, ""));
        out.push("<blockquote>" + markdown(quoted.join("\n")) + "</blockquote>");
        continue;
      }
      if (/\|/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(lines[i + 1])) {
        flush();
        var cells = function (row) {
          return row.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map(function (c) { return inline(c.trim()); });
        };
        var table = "<table><thead><tr><th>" + cells(line).join("</th><th>") + "</th></tr></thead><tbody>";
        i += 2;
        while (i < lines.length && /\|/.test(lines[i]) && lines[i].trim()) {
          table += "<tr><td>" + cells(lines[i++]).join("</td><td>") + "</td></tr>";
        }
        out.push(table + "</tbody></table>");
        continue;
      }
      var item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
      if (item) {
        flush();
        var ordered = /\d/.test(item[2]);
        var items = [];
        while (i < lines.length) {
          var m = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]);
          if (m && /\d/.test(m[2]) === ordered) {
            items.push(m[3]);
          } else if (items.length && /^\s{2,}\S/.test(lines[i])) {
            items[items.length - 1] += "\n" + lines[i].trim();
          } else {
            break;
          }
          i++;
        }
        var tag = ordered ? "ol" : "ul";
        out.push("<" + tag + ">" + items.map(function (t) {
          return "<li>" + t.split("\n").map(inline).join("<br>") + "</li>";
        }).join("") + "</" + tag + ">");
        continue;
      }
      if (!line.trim()) {
        flush();
      } else {
        paragraph.push(line);
      }
      i++;
    }
    flush();
    return '<div class="markdown">' + out.join("") + "</div>";
  }

  // ---- pieces of the conversation ---------------------------------------------------------

  var expandAll = false;

  function collapsible(text, cls, html) {
    var lines = String(text || "").split("\n");
    var render = html || esc;
    if (lines.length <= PREVIEW_LINES) return '<div class="' + cls + '">' + render(text) + "</div>";
    var head = lines.slice(0, PREVIEW_LINES).join("\n");
    var rest = lines.slice(PREVIEW_LINES).join("\n");
    return '<div class="' + cls + '">' + render(head) + "</div>" +
      "<details" + (expandAll ? " open" : "") + '><summary>' + (lines.length - PREVIEW_LINES) +
      " more lines</summary>" + '<div class="' + cls + '">' + render(rest) + "</div></details>";
  }

  function images(content) {
    return contentBlocks(content)
      .filter(function (b) { return b && b.type === "image" && typeof b.data === "string"; })
      .map(function (b) {
        var mime = /^image\/[\w.+-]+$/.test(b.mimeType || "") ? b.mimeType : "image/png";
        return '<img class="attachment" alt="attached image" src="data:' + mime + ";base64," +
          esc(b.data.replace(/[^A-Za-z0-9+/=]/g, "")) + '">';
      })
      .join("");
  }

  function diffHtml(diff) {
    return '<div class="diff">' + String(diff).split("\n").map(function (line) {
      var cls = line[0] === "+" ? "add" : line[0] === "-" ? "del" : line.indexOf("@@") === 0 ? "hunk" : "ctx";
      return '<span class="' + cls + '">' + esc(line) + "</span>";
    }).join("\n") + "</div>";
  }

  function diffFromArgs(args) {
    var edits = Array.isArray(args.edits) ? args.edits : [{ oldText: args.oldText, newText: args.newText }];
    return edits.map(function (edit) {
      var minus = String(edit.oldText == null ? edit.old_string || "" : edit.oldText).split("\n").map(function (l) { return "-" + l; });
      var plus = String(edit.newText == null ? edit.new_string || "" : edit.newText).split("\n").map(function (l) { return "+" + l; });
      return minus.concat(plus).join("\n");
    }).join("\n@@\n");
  }

  function toolArgSummary(name, args) {
    args = args || {};
    var path = args.path || args.file_path || "";
    switch (name) {
      case "bash": return '<span class="arg">$ ' + esc(args.command || "") + "</span>";
      case "read": {
        var range = args.offset || args.limit ? ":" + (args.offset || 1) + (args.limit ? "-" + ((args.offset || 1) + args.limit - 1) : "") : "";
        return '<span class="arg">' + esc(path + range) + "</span>";
      }
      case "write": case "edit": case "ls": return '<span class="arg">' + esc(path || ".") + "</span>";
      case "grep": case "find":
        return '<span class="arg">' + esc((args.pattern || "") + (path ? " in " + path : "")) + "</span>";
      default: {
        var json = JSON.stringify(args);
        return json && json !== "{}" ? '<span class="arg">' + esc(oneLine(json, 160)) + "</span>" : "";
      }
    }
  }

  function toolCard(call, resultEntry) {
    var name = call.name || "tool";
    var args = call.arguments || {};
    var result = resultEntry ? resultEntry.message : null;
    var state = !result ? "" : result.isError ? " failed" : " ok";
    var html = '<div class="tool tool-' + esc(name) + state + '" data-tool-call="' + esc(call.id || "") + '"' +
      (resultEntry ? ' data-result-entry="' + esc(resultEntry.id) + '"' : "") + ">";
    html += '<div class="tool-title">' + esc(name) + " " + toolArgSummary(name, args) + "</div>";
    var output = result ? contentText(result.content) : "";
    if (name === "edit") {
      var diff = result && result.details && typeof result.details.diff === "string" ? result.details.diff : diffFromArgs(args);
      if (!result || !result.isError) html += collapsible(diff, "diff-wrap", diffHtml);
      if (result && result.isError) html += collapsible(output, "tool-output error-text");
    } else if (name === "write") {
      var lang = languageOfPath(args.path);
      html += collapsible(String(args.content || ""), "code", function (t) { return highlight(t, lang); });
      if (result && result.isError) html += collapsible(output, "tool-output error-text");
    } else if (result) {
      var readLang = name === "read" && !result.isError ? languageOfPath(args.path) : "";
      if (output) {
        html += collapsible(output, "tool-output" + (result.isError ? " error-text" : ""), readLang ? function (t) { return highlight(t, readLang); } : null);
      }
    }
    if (result) html += images(result.content);
    if (!result) html += '<div class="tool-output">(no result recorded)</div>';
    return html + "</div>";
  }

  function timeHtml(entry) {
    return '<div class="time">' + esc(formatTime(entry.timestamp)) + "</div>";
  }

  function meta(entry, html) {
    return '<div class="meta-entry">' + html + "</div>";
  }

  function labelFor(id) {
    var target = byId.get(id);
    return target ? oneLine(rowText(target).text, 60) : id;
  }

  function renderMessage(entry, shownCalls) {
    var m = entry.message || {};
    switch (m.role) {
      case "user":
        return '<div class="user-message">' + timeHtml(entry) + markdown(contentText(m.content)) + images(m.content) + "</div>";
      case "assistant": {
        var html = '<div class="assistant-message">' + timeHtml(entry);
        contentBlocks(m.content).forEach(function (block) {
          if (!block) return;
          if (block.type === "text" && block.text) html += markdown(block.text);
          else if (block.type === "thinking" && (block.thinking || "").trim()) {
            html += '<details class="thinking" open><summary>Thinking</summary><div class="body">' + esc(block.thinking) + "</div></details>";
          } else if (block.type === "image") html += images([block]);
        });
        if (m.stopReason === "error") html += '<div class="error-text">Error: ' + esc(m.errorMessage || "the request failed") + "</div>";
        if (m.stopReason === "aborted") html += '<div class="error-text">' + esc(m.errorMessage || "Aborted") + "</div>";
        var usage = m.usage || {};
        var model = [m.provider, m.model].filter(Boolean).join("/");
        if (model || usage.output) {
          html += '<div class="meta">' + esc(model) + (usage.input || usage.output ? " · ↑" + formatTokens(usage.input) + " ↓" + formatTokens(usage.output) : "") + "</div>";
        }
        html += "</div>";
        contentBlocks(m.content).forEach(function (block) {
          if (block && block.type === "toolCall") {
            html += toolCard(block, resultsByCall.get(block.id));
          }
        });
        return html;
      }
      case "toolResult":
        if (shownCalls.has(m.toolCallId)) return "";
        return toolCard({ id: m.toolCallId, name: m.toolName, arguments: {} }, entry);
      case "bashExecution": {
        var failed = m.cancelled || (m.exitCode != null && m.exitCode !== 0);
        var note = m.excludeFromContext ? " (not sent to the model)" : "";
        var status = m.cancelled ? "cancelled" : m.exitCode != null && m.exitCode !== 0 ? "exit code " + m.exitCode : "";
        return '<div class="tool tool-bash ' + (failed ? "failed" : "ok") + '">' + timeHtml(entry) +
          '<div class="tool-title">user shell <span class="arg">$ ' + esc(m.command) + "</span>" + esc(note) + "</div>" +
          (m.output ? collapsible(m.output, "tool-output") : "") +
          (status ? '<div class="error-text">' + esc(status) + "</div>" : "") + "</div>";
      }
      case "custom":
        return '<div class="custom-message">' + timeHtml(entry) + '<div class="kind">[' + esc(m.customType || "custom") + "]</div>" +
          markdown(contentText(m.content)) + images(m.content) + "</div>";
      case "branchSummary":
        return '<div class="summary-card"><div class="kind">Branch summary</div>' + markdown(m.summary) + "</div>";
      case "compactionSummary":
        return '<div class="summary-card"><div class="kind">Compaction summary</div>' + markdown(m.summary) + "</div>";
      case "system": {
        var text = contentText(m.content);
        if (!text && m.sections) text = Object.keys(m.sections).map(function (k) { return m.sections[k] || ""; }).join("\n\n");
        var tools = (m.toolsAdded || []).map(function (t) { return t.name; }).join(", ");
        return '<div class="system-card"><details><summary>System prompt' + (m.replace ? "" : " update") +
          (tools ? " · tools: " + esc(tools) : "") + "</summary>" + collapsible(text, "tool-output") + "</details></div>";
      }
      default:
        return meta(entry, "Message with role <b>" + esc(m.role) + "</b>");
    }
  }

  function renderEntry(entry, shownCalls) {
    switch (entry.type) {
      case "message": return renderMessage(entry, shownCalls);
      case "model_change": return meta(entry, "Model: <b>" + esc(entry.provider + "/" + entry.modelId) + "</b>");
      case "thinking_level_change": return meta(entry, "Thinking level: <b>" + esc(entry.thinkingLevel) + "</b>");
      case "compaction":
        return '<div class="summary-card">' + timeHtml(entry) + '<div class="kind">Compaction · ' + formatTokens(entry.tokensBefore) +
          " tokens summarised</div><details" + (expandAll ? " open" : "") + "><summary>Summary</summary>" + markdown(entry.summary) + "</details></div>";
      case "branch_summary":
        return '<div class="summary-card">' + timeHtml(entry) + '<div class="kind">Branch summary</div>' + markdown(entry.summary) + "</div>";
      case "custom_message":
        return '<div class="custom-message' + (entry.display === false ? " hidden-message" : "") + '">' + timeHtml(entry) +
          '<div class="kind">[' + esc(entry.customType) + "]" + (entry.display === false ? " (not displayed in the terminal)" : "") + "</div>" +
          markdown(contentText(entry.content)) + images(entry.content) + "</div>";
      case "custom":
        return meta(entry, "Extension data <b>" + esc(entry.customType) + "</b>" +
          (entry.data !== undefined ? "<details><summary>data</summary><pre>" + esc(JSON.stringify(entry.data, null, 2)) + "</pre></details>" : ""));
      case "label":
        return meta(entry, (entry.label ? "Label <b>" + esc(entry.label) + "</b> on " : "Label removed from ") + esc(labelFor(entry.targetId)));
      case "session_info":
        return meta(entry, "Session name: <b>" + esc(entry.name || "(cleared)") + "</b>");
      case "usage": {
        var u = entry.usage || {};
        return meta(entry, "Usage (" + esc(entry.kind) + ") <b>" + esc(entry.provider + "/" + entry.model) + "</b> ↑" +
          formatTokens(u.input) + " ↓" + formatTokens(u.output));
      }
      case "context_edit":
        return meta(entry, "Context edit of " + esc(labelFor(entry.targetId)) +
          (entry.replacement == null ? " (removed)" : ": " + esc(oneLine(contentText(entry.replacement), 200))));
      default:
        return meta(entry, "Entry of type <b>" + esc(entry.type) + "</b><details><summary>JSON</summary><pre>" +
          esc(JSON.stringify(entry, null, 2)) + "</pre></details>");
    }
  }

  // ---- sidebar rows -----------------------------------------------------------------------

  var rowTextCache = new Map();
  function rowText(entry) {
    var cached = rowTextCache.get(entry.id);
    if (cached) return cached;
    var cls = "meta";
    var text;
    var m = entry.message;
    switch (entry.type) {
      case "message":
        switch (m && m.role) {
          case "user": cls = "user"; text = "user: " + contentText(m.content); break;
          case "assistant": {
            cls = m.stopReason === "error" ? "error" : "assistant";
            var words = contentText(m.content);
            var calls = contentBlocks(m.content).filter(function (b) { return b && b.type === "toolCall"; })
              .map(function (b) { return b.name; });
            text = "assistant: " + (words || (calls.length ? "[" + calls.join(", ") + "]" : m.errorMessage || ""));
            break;
          }
          case "toolResult": cls = m.isError ? "error" : "tool"; text = "[" + m.toolName + "] " + contentText(m.content); break;
          case "bashExecution": cls = "tool"; text = "$ " + m.command; break;
          case "system": text = "system prompt"; break;
          default: text = (m && m.role) + ": " + contentText(m && m.content);
        }
        break;
      case "model_change": text = "model: " + entry.provider + "/" + entry.modelId; break;
      case "thinking_level_change": text = "thinking: " + entry.thinkingLevel; break;
      case "compaction": text = "compaction: " + entry.summary; break;
      case "branch_summary": text = "branch summary: " + entry.summary; break;
      case "custom_message": text = "[" + entry.customType + "] " + contentText(entry.content); break;
      case "custom": text = "data: " + entry.customType; break;
      case "label": text = "label: " + (entry.label || "(removed)"); break;
      case "session_info": text = "name: " + (entry.name || ""); break;
      case "usage": text = "usage: " + entry.kind; break;
      case "context_edit": text = "context edit"; break;
      default: text = entry.type;
    }
    cached = { cls: cls, text: String(text || "") };
    rowTextCache.set(entry.id, cached);
    return cached;
  }

  var searchCache = new Map();
  function searchText(entry) {
    var text = searchCache.get(entry.id);
    if (text === undefined) {
      var m = entry.message;
      var parts = [rowText(entry).text, labels.get(entry.id) || ""];
      if (m && Array.isArray(m.content)) {
        m.content.forEach(function (b) {
          if (b && b.type === "thinking") parts.push(b.thinking || "");
          if (b && b.type === "toolCall") parts.push(JSON.stringify(b.arguments || {}));
        });
      }
      if (m && m.role === "bashExecution") parts.push(m.output || "");
      text = parts.join("\n").toLowerCase();
      searchCache.set(entry.id, text);
    }
    return text;
  }

  var treeEl = document.getElementById("tree");
  var spacerEl = document.getElementById("tree-spacer");
  var statusEl = document.getElementById("tree-status");
  var searchEl = document.getElementById("search");
  var filter = "all";
  var query = "";
  var visibleRows = rows;
  var selectedId = null;
  var pathIds = new Set();

  function keepRow(row) {
    var entry = byId.get(row.id);
    if (filter === "messages" && !(entry.type === "message" && entry.message && entry.message.role !== "toolResult" && entry.message.role !== "system")) return false;
    if (filter === "user" && !(entry.type === "message" && entry.message && entry.message.role === "user")) return false;
    if (filter === "labeled" && !labels.has(row.id)) return false;
    return !query || searchText(entry).indexOf(query) >= 0;
  }

  function refilter() {
    visibleRows = filter === "all" && !query ? rows : rows.filter(keepRow);
    spacerEl.style.height = visibleRows.length * ROW_HEIGHT + "px";
    statusEl.textContent = (query || filter !== "all" ? visibleRows.length + " of " : "") + rows.length + " entries" +
      (query ? " match “" + query + "”" : "");
    drawRows();
  }

  function drawRows() {
    var height = treeEl.clientHeight || 800;
    var first = Math.max(0, Math.floor(treeEl.scrollTop / ROW_HEIGHT) - 10);
    var last = Math.min(visibleRows.length, first + Math.ceil(height / ROW_HEIGHT) + 20);
    var html = "";
    for (var i = first; i < last; i++) {
      var row = visibleRows[i];
      var entry = byId.get(row.id);
      var info = rowText(entry);
      var label = labels.get(row.id);
      var cls = "tree-row" + (pathIds.has(row.id) ? " on-path" : "") + (row.id === selectedId ? " selected" : "");
      html += '<div class="' + cls + '" data-id="' + esc(row.id) + '" style="top:' + i * ROW_HEIGHT + "px;padding-left:" +
        (8 + Math.min(row.depth, 16) * 12) + 'px">' + (row.fork ? '<span class="fork-mark">├ </span>' : "") +
        '<span class="role-' + info.cls + '">' + esc(oneLine(info.text, 140)) + "</span>" +
        (label ? '<span class="tree-label">[' + esc(label) + "]</span>" : "") + "</div>";
    }
    spacerEl.innerHTML = html;
  }

  treeEl.addEventListener("scroll", function () { window.requestAnimationFrame(drawRows); });
  window.addEventListener("resize", function () { window.requestAnimationFrame(drawRows); });
  treeEl.addEventListener("click", function (event) {
    var row = event.target.closest(".tree-row");
    if (row) select(row.getAttribute("data-id"), true);
  });
  var searchTimer = null;
  searchEl.addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(function () { query = searchEl.value.trim().toLowerCase(); refilter(); }, 120);
  });
  searchEl.addEventListener("keydown", function (event) {
    if (event.key !== "Enter") return;
    query = searchEl.value.trim().toLowerCase();
    refilter();
    if (!visibleRows.length) return;
    var at = visibleRows.findIndex(function (r) { return r.id === selectedId; });
    select(visibleRows[(at + 1) % visibleRows.length].id, true);
  });
  document.getElementById("filters").addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) return;
    filter = button.getAttribute("data-filter");
    Array.prototype.forEach.call(this.querySelectorAll("button"), function (b) { b.classList.toggle("active", b === button); });
    refilter();
  });

  // ---- header -----------------------------------------------------------------------------

  function renderHeader() {
    var counts = { user: 0, assistant: 0, toolResult: 0 };
    var tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    var cost = 0;
    var models = [];
    var leaves = 0;
    entries.forEach(function (entry) {
      if (!entry) return;
      if (byId.get(entry.id) === entry && !(children.get(entry.id) || []).length) leaves++;
      if (entry.type === "model_change") models.push(entry.provider + "/" + entry.modelId);
      if (entry.type !== "message" || !entry.message) return;
      var m = entry.message;
      if (counts[m.role] !== undefined) counts[m.role]++;
      if (m.role === "assistant") {
        if (m.provider && m.model) models.push(m.provider + "/" + m.model);
        var u = m.usage || {};
        tokens.input += Number(u.input) || 0;
        tokens.output += Number(u.output) || 0;
        tokens.cacheRead += Number(u.cacheRead) || 0;
        tokens.cacheWrite += Number(u.cacheWrite) || 0;
        cost += Number(u.cost && u.cost.total) || 0;
      }
    });
    models = models.filter(function (m, i) { return models.indexOf(m) === i; });
    var rowsHtml = [
      ["Session", header.id],
      ["Date", formatTime(header.timestamp)],
      ["Directory", header.cwd],
      ["Parent", header.parentSession],
      ["Models", models.join(", ")],
      ["Messages", counts.user + " user, " + counts.assistant + " assistant, " + counts.toolResult + " tool results"],
      ["Tokens", "↑" + formatTokens(tokens.input) + " ↓" + formatTokens(tokens.output) +
        (tokens.cacheRead ? " R" + formatTokens(tokens.cacheRead) : "") + (tokens.cacheWrite ? " W" + formatTokens(tokens.cacheWrite) : "")],
      ["Cost", cost ? "$" + cost.toFixed(3) : ""],
      ["Entries", entries.length + (leaves > 1 ? " in " + leaves + " branches" : "")]
    ].filter(function (r) { return r[1]; }).map(function (r) {
      return "<dt>" + esc(r[0]) + "</dt><dd>" + esc(r[1]) + "</dd>";
    }).join("");
    var html = "<h1>" + esc(sessionName || "Session " + (header.id || "")) + "</h1><dl>" + rowsHtml + "</dl>";
    if (data.systemPrompt) {
      html += '<details class="system-prompt"><summary>System prompt</summary>' + collapsible(data.systemPrompt, "tool-output") + "</details>";
    }
    if (Array.isArray(data.tools) && data.tools.length) {
      html += '<details class="tools-list"><summary>Tools (' + data.tools.length + ")</summary>" + data.tools.map(function (t) {
        return '<div class="tool-def"><span class="name">' + esc(t.name) + "</span> " + esc(t.description || "") +
          "<pre>" + esc(JSON.stringify(t.parameters || {}, null, 2)) + "</pre></div>";
      }).join("") + "</details>";
    }
    html += '<div class="toolbar"><button type="button" id="expand-all">Expand all</button>' +
      '<button type="button" id="collapse-all">Collapse all</button></div>';
    document.getElementById("session-header").innerHTML = html;
    function setAll(open) {
      expandAll = open;
      Array.prototype.forEach.call(document.querySelectorAll("#main details"), function (d) { d.open = open; });
    }
    document.getElementById("expand-all").addEventListener("click", function () { setAll(true); });
    document.getElementById("collapse-all").addEventListener("click", function () { setAll(false); });
  }

  // ---- the conversation -------------------------------------------------------------------

  var conversationEl = document.getElementById("conversation");
  var moreEl = document.getElementById("more");
  var mainEl = document.getElementById("main");
  var path = [];
  var windowStart = 0;
  var rendered = 0;
  var callsOnPath = new Set();

  function branchSwitch(entry) {
    var siblings = entry.parentId ? children.get(entry.parentId) || [] : roots;
    if (siblings.length < 2) return "";
    var at = siblings.indexOf(entry.id);
    var prev = siblings[(at - 1 + siblings.length) % siblings.length];
    var next = siblings[(at + 1) % siblings.length];
    return '<div class="branch-switch">Branch ' + (at + 1) + " of " + siblings.length +
      ' <button type="button" data-go="' + esc(prev) + '" title="previous branch">‹</button>' +
      '<button type="button" data-go="' + esc(next) + '" title="next branch">›</button></div>';
  }

  function renderRange(from, to) {
    var html = "";
    for (var i = from; i < to; i++) {
      var entry = path[i];
      var body = renderEntry(entry, callsOnPath);
      html += branchSwitch(entry);
      if (!body) continue;
      var role = entry.type === "message" && entry.message ? " role-" + esc(entry.message.role) : "";
      html += '<div class="entry entry-' + esc(entry.type) + role + (entry.id === selectedId ? " selected" : "") +
        '" data-entry-id="' + esc(entry.id) + '">' + body + "</div>";
    }
    return html;
  }

  function earlierButton() {
    var old = document.getElementById("earlier");
    if (old) old.remove();
    if (windowStart > 0) {
      conversationEl.insertAdjacentHTML("afterbegin", '<button type="button" id="earlier" class="meta-entry">Show ' +
        Math.min(BATCH, windowStart) + " earlier entries (" + windowStart + " above)</button>");
    }
  }

  function renderMore() {
    var end = Math.min(path.length, rendered + BATCH);
    conversationEl.insertAdjacentHTML("beforeend", renderRange(rendered, end));
    rendered = end;
    moreEl.textContent = rendered < path.length ? "Showing " + (rendered - windowStart) + " of " + path.length + " entries; scroll for more" : "";
  }

  function renderEarlier() {
    var from = Math.max(0, windowStart - BATCH);
    var button = document.getElementById("earlier");
    var anchor = button ? button.nextSibling : conversationEl.firstChild;
    var before = mainEl.scrollHeight;
    if (button) button.remove();
    var holder = document.createElement("div");
    holder.innerHTML = renderRange(from, windowStart);
    while (holder.firstChild) conversationEl.insertBefore(holder.firstChild, anchor);
    windowStart = from;
    earlierButton();
    mainEl.scrollTop += mainEl.scrollHeight - before;
  }

  // Shows the branch through `id` (continued to its newest leaf). The window of rendered
  // entries starts a little above `id` when it lies deep in the branch.
  function select(id, scrollTo) {
    if (!byId.has(id)) return;
    selectedId = id;
    path = pathTo(leafBelow(id));
    pathIds = new Set(path.map(function (e) { return e.id; }));
    callsOnPath = new Set();
    path.forEach(function (e) {
      var m = e.type === "message" ? e.message : null;
      if (m && m.role === "assistant") {
        contentBlocks(m.content).forEach(function (b) { if (b && b.type === "toolCall") callsOnPath.add(b.id); });
      }
    });
    var at = path.findIndex(function (e) { return e.id === id; });
    windowStart = scrollTo && at > BATCH / 2 ? at - 10 : 0;
    rendered = windowStart;
    conversationEl.innerHTML = "";
    renderMore();
    if (scrollTo && rendered <= at) {
      conversationEl.insertAdjacentHTML("beforeend", renderRange(rendered, at + 1));
      rendered = at + 1;
    }
    earlierButton();
    if (history.replaceState) history.replaceState(null, "", "#entry=" + encodeURIComponent(id));
    var target = conversationEl.querySelector('[data-entry-id="' + CSS.escape(id) + '"]');
    if (scrollTo && target) target.scrollIntoView({ block: "start" });
    else mainEl.scrollTop = 0;
    var index = visibleRows.findIndex(function (r) { return r.id === id; });
    if (index >= 0) {
      var top = index * ROW_HEIGHT;
      if (top < treeEl.scrollTop || top > treeEl.scrollTop + treeEl.clientHeight - ROW_HEIGHT) {
        treeEl.scrollTop = Math.max(0, top - treeEl.clientHeight / 2);
      }
    }
    drawRows();
  }

  conversationEl.addEventListener("click", function (event) {
    var go = event.target.closest("[data-go]");
    if (go) select(go.getAttribute("data-go"), true);
    if (event.target.closest("#earlier")) renderEarlier();
  });

  if (window.IntersectionObserver) {
    new IntersectionObserver(function (items) {
      if (items.some(function (i) { return i.isIntersecting; }) && rendered < path.length) renderMore();
    }, { root: mainEl, rootMargin: "800px" }).observe(moreEl);
  } else {
    mainEl.addEventListener("scroll", function () {
      if (mainEl.scrollTop + mainEl.clientHeight > mainEl.scrollHeight - 800 && rendered < path.length) renderMore();
    });
  }

  renderHeader();
  refilter();
  var fromHash = /^#(?:entry|leaf)=(.+)$/.exec(location.hash);
  var start = fromHash ? decodeURIComponent(fromHash[1]) : null;
  if (!start || !byId.has(start)) start = data.leafId && byId.has(data.leafId) ? data.leafId : rows.length ? rows[rows.length - 1].id : null;
  if (start) {
    select(start, !!fromHash);
  } else {
    conversationEl.innerHTML = '<div class="meta-entry">This session has no entries yet.</div>';
  }
  // How long the first draw took, for benchmarks (scripts/bench/export.sh reads it).
  if (window.performance) document.documentElement.setAttribute("data-render-ms", String(Math.round(performance.now() - started)));
})();
