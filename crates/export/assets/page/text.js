// Text helpers, syntax highlighting and markdown: strings in, escaped HTML out.

var HIGHLIGHT_LIMIT = 200000;

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
