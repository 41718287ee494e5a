// The reference agent's side of scripts/bench/compaction.sh: the same 100,000-entry session
// shape as crates/runtime/examples/compaction_bench.rs, prepared by pi's own
// prepareCompaction and serializeConversation, and pi's context estimate (which the footer
// recomputes over every message). Prints one JSON object of medians.
//
//   node scripts/bench/pi_compaction.mjs PI_PACKAGE_DIR [ENTRIES]
import { pathToFileURL } from "node:url";
import path from "node:path";

const [pkg, entriesArg] = process.argv.slice(2);
const entries = Number(entriesArg ?? 100000);
const dist = (p) => pathToFileURL(path.join(pkg, "dist", p)).href;
const { prepareCompaction, estimateContextTokens } = await import(dist("core/compaction/compaction.js"));
const { serializeConversation } = await import(dist("core/compaction/utils.js"));
const { convertToLlm } = await import(dist("core/messages.js"));

const RUNS = 7;
const usage = (input) => ({
  input, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
function message(i) {
  const timestamp = 1764000000000 + i;
  const assistant = (content, stopReason, tokens) => ({
    role: "assistant", content, api: "openai-completions", provider: "mock", model: "mock-model",
    usage: usage(tokens), stopReason, timestamp,
  });
  switch (i % 4) {
    case 0:
      return { role: "user", content: [{ type: "text", text: `turn ${i}: please look at src/module_${i}.rs and fix the failing test` }], timestamp };
    case 1:
      return assistant([
        { type: "text", text: "Reading the file first." },
        { type: "toolCall", id: `call_${i}`, name: "read", arguments: { path: `src/module_${i}.rs` } },
      ], "toolUse", i * 40);
    case 2:
      return { role: "toolResult", toolCallId: `call_${i - 1}`, toolName: "read",
        content: [{ type: "text", text: 'fn main() { println!("hi"); }\n'.repeat(20) }], isError: false, timestamp };
    default:
      return assistant([{ type: "text", text: "The test failed because the parser skipped the last token; fixed it." }], "stop", i * 40);
  }
}

const messages = [];
const pathEntries = [];
let parent = null;
for (let i = 0; i < entries; i++) {
  const m = message(i);
  messages.push(m);
  const id = i.toString(16).padStart(8, "0");
  pathEntries.push({ type: "message", id, parentId: parent, timestamp: new Date(m.timestamp).toISOString(), message: m });
  parent = id;
}

const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };
const prepare = [], serialize = [];
let summarised = 0, chars = 0;
for (let r = 0; r < RUNS; r++) {
  const t0 = performance.now();
  const prep = prepareCompaction(pathEntries, settings);
  const t1 = performance.now();
  const text = serializeConversation(convertToLlm(prep.messagesToSummarize));
  const t2 = performance.now();
  prepare.push(t1 - t0);
  serialize.push(t2 - t1);
  summarised = prep.messagesToSummarize.length;
  chars = text.length;
}
const estimate = [];
for (let r = 0; r < RUNS; r++) {
  const t0 = performance.now();
  estimateContextTokens(messages);
  estimate.push((performance.now() - t0) * 1e6);
}
const p = median(prepare), s = median(serialize);
console.log(JSON.stringify({
  entries, summarised_messages: summarised, serialized_chars: chars,
  prepare_ms: p, serialize_ms: s, total_ms: p + s,
  context_estimate_ns_per_message: median(estimate),
}));
