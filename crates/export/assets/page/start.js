// The first draw: the header, the sidebar and the branch the address or the session's leaf
// names.

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
