// One entry of the conversation as HTML: messages, tool calls with their results, diffs,
// summaries and the entries that only note a change.

var PREVIEW_LINES = 12;

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
  // Drawn by an extension's renderers (terminal lines as HTML, made at export time).
  var drawn = (data.renderedTools || {})[call.id] || {};
  if (drawn.callHtml) html += '<div class="tool-title ansi">' + drawn.callHtml + "</div>";
  else html += '<div class="tool-title">' + esc(name) + " " + toolArgSummary(name, args) + "</div>";
  var output = result ? contentText(result.content) : "";
  if (result && drawn.resultHtmlCollapsed) {
    html += '<div class="tool-output ansi">' + drawn.resultHtmlCollapsed + "</div>";
    if (drawn.resultHtmlExpanded && drawn.resultHtmlExpanded !== drawn.resultHtmlCollapsed) {
      html += "<details" + (expandAll ? " open" : "") + "><summary>expanded</summary>" +
        '<div class="tool-output ansi">' + drawn.resultHtmlExpanded + "</div></details>";
    }
  } else if (name === "edit") {
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
