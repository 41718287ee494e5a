// The session's data and its tree: entries by id, children, labels, tool results by call,
// the sidebar's rows in depth-first order, and the walks along a branch.

var started = window.performance ? performance.now() : 0;

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
