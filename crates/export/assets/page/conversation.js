// The session's header and the conversation: the selected branch, rendered in batches as it
// is scrolled, with switches between sibling branches.

var BATCH = 120;

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
