// The sidebar: one row per entry, drawn only where it is in view, with the filters and the
// search over them.

var ROW_HEIGHT = 20;

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
