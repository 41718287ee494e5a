// Drives the reference agent's own RPC client (`RpcClient` from
// @mariozechner/pi-coding-agent, dist/modes/rpc/rpc-client.js) against an agent in
// `--mode rpc` and prints one JSON report on stdout:
//
//   {"methods": {"<method>": ["<problem>", ...], ...}, "steps": {"<step>": "<problem>"}}
//
// `methods` has every public method of RpcClient (read from its prototype, so a new method
// shows up as never checked); an empty list means every check of that method held. `steps`
// has failures that are not a method's (a scenario that could not be set up).
//
// Environment: KC_RPC_CLIENT_MODULE (rpc-client.js), KC_RPC_CLI (the script RpcClient runs
// with `node`: pi's cli.js or the knightcode shim), KC_RPC_PROJECT (the agent's working
// directory), KC_RPC_TEMPLATE (a prompt template file given with --prompt-template).
// The model replies are scripted in rpc_pi_client.rs, in the order of the steps here.

import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const { RpcClient } = await import(pathToFileURL(process.env.KC_RPC_CLIENT_MODULE).href);
const project = process.env.KC_RPC_PROJECT;
const template = process.env.KC_RPC_TEMPLATE;
// Bounds every wait of this script; a passing run never reaches it.
const LIMIT = 30000;
// A 1x1 PNG.
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const PRIVATE = new Set(["constructor", "handleLine", "send", "getData"]);
const publicMethods = Object.getOwnPropertyNames(RpcClient.prototype)
    .filter((name) => !PRIVATE.has(name) && typeof RpcClient.prototype[name] === "function")
    .sort();
const problems = Object.fromEntries(publicMethods.map((m) => [m, []]));
const checked = new Set();
const stepFailures = {};

function fail(method, why) {
    (problems[method] ??= []).push(why);
}

function show(value) {
    const text = JSON.stringify(value);
    return text === undefined ? "undefined" : text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** Records a problem of `method` unless `ok`; `got` is shown with it. */
function check(method, ok, what, got) {
    checked.add(method);
    if (!ok) fail(method, arguments.length > 3 ? `${what} (got ${show(got)})` : what);
    return ok;
}

class StepStopped extends Error {}

/** Awaits `run()`, a call of `method`; a rejection is that method's problem and ends the step. */
async function call(method, run) {
    checked.add(method);
    try {
        return await run();
    } catch (e) {
        fail(method, `rejected: ${e?.message ?? e}`);
        throw new StepStopped();
    }
}

async function step(name, body) {
    try {
        await body();
    } catch (e) {
        if (!(e instanceof StepStopped)) stepFailures[name] = `${e?.stack ?? e}`;
    }
}

/** The message a call of RpcClient rejected with, or what it resolved with. */
function rejection(promise) {
    return promise.then(
        (result) => `resolved ${show(result)}`,
        (e) => e.message,
    );
}

/** Resolves with the first event matching `pred` from now on. */
function nextEvent(client, what, pred) {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            off();
            reject(new Error(`no ${what} event within ${LIMIT} ms`));
        }, LIMIT);
        const off = client.onEvent((event) => {
            if (pred(event)) {
                clearTimeout(timer);
                off();
                resolve(event);
            }
        });
    });
}

function text(message) {
    const content = message?.content;
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    return content
        .filter((part) => part.type === "text")
        .map((part) => part.text)
        .join("");
}

/** `role: text` of each message, the way the checks below compare them. */
function transcript(messages) {
    return messages.map((m) => `${m.role}: ${m.role === "bashExecution" ? m.command : text(m)}`);
}

function mkfifo(name) {
    const file = path.join(project, name);
    execFileSync("mkfifo", [file]);
    return file;
}

const client = new RpcClient({
    cliPath: process.env.KC_RPC_CLI,
    cwd: project,
    provider: "mock",
    model: "mock-model",
    args: ["--prompt-template", template],
});

let started = false;
await step("start", async () => {
    await call("start", () => client.start());
    started = true;
});

let firstFile;
let firstEvents = [];
let stopListening;

if (started) {
    await step("getState after start", async () => {
        const state = await call("getState", () => client.getState());
        check("start", state !== undefined, "the agent answers after start");
        check("getState", state.model?.provider === "mock" && state.model?.id === "mock-model", "model is mock/mock-model", state.model);
        check("getState", state.isStreaming === false, "not streaming", state.isStreaming);
        check("getState", state.messageCount === 0, "no messages yet", state.messageCount);
        check("getState", typeof state.sessionId === "string" && state.sessionId.length > 0, "a session id", state.sessionId);
        check("getState", typeof state.sessionFile === "string" && state.sessionFile.endsWith(".jsonl"), "a session file", state.sessionFile);
        check("getState", state.steeringMode === "one-at-a-time" && state.followUpMode === "one-at-a-time", "queue modes one-at-a-time", [state.steeringMode, state.followUpMode]);
        check("getState", state.autoCompactionEnabled === true, "auto-compaction on", state.autoCompactionEnabled);
        firstFile = state.sessionFile;
    });

    await step("getAvailableModels", async () => {
        const models = await call("getAvailableModels", () => client.getAvailableModels());
        const byId = Object.fromEntries(models.map((m) => [m.id, m]));
        check("getAvailableModels", models.map((m) => `${m.provider}/${m.id}`).sort().join(",") === "mock/mock-model,mock/mock-model-2", "the two mock models", models.map((m) => m.id));
        check("getAvailableModels", byId["mock-model"]?.contextWindow === 128000 && byId["mock-model"]?.reasoning === true, "mock-model: 128000 tokens, reasoning", byId["mock-model"]);
        check("getAvailableModels", byId["mock-model-2"]?.contextWindow === 32000 && byId["mock-model-2"]?.reasoning === false, "mock-model-2: 32000 tokens, no reasoning", byId["mock-model-2"]);
    });

    await step("getCommands", async () => {
        const commands = await call("getCommands", () => client.getCommands());
        const greet = commands.find((c) => c.name === "greet");
        check("getCommands", greet?.source === "prompt" && greet?.description === "Say hello politely", "the template greet, source prompt, with its description", commands);
        check("getCommands", greet?.sourceInfo?.path === template, "greet's sourceInfo.path is the template file", greet?.sourceInfo);
    });

    await step("promptAndWait", async () => {
        stopListening = client.onEvent((event) => firstEvents.push(event.type));
        checked.add("onEvent");
        const events = await call("promptAndWait", () => client.promptAndWait("Say hello", undefined, LIMIT));
        stopListening();
        const types = events.map((e) => e.type);
        check("promptAndWait", types[0] === "agent_start" && types.at(-1) === "agent_end", "events from agent_start to agent_end", types);
        const answer = events.find((e) => e.type === "message_end" && e.message.role === "assistant");
        check("promptAndWait", text(answer?.message) === "Hello there.", "the assistant's message_end", answer);
        check("onEvent", firstEvents.includes("agent_start") && firstEvents.includes("message_update") && firstEvents.includes("agent_end"), "a listener sees the run's events", firstEvents);
    });

    await step("getLastAssistantText", async () => {
        const last = await call("getLastAssistantText", () => client.getLastAssistantText());
        check("getLastAssistantText", last === "Hello there.", "the last answer", last);
    });

    await step("getMessages", async () => {
        const messages = await call("getMessages", () => client.getMessages());
        check("getMessages", show(transcript(messages)) === show(["user: Say hello", "assistant: Hello there."]), "the first exchange", transcript(messages));
    });

    await step("prompt + waitForIdle", async () => {
        const seenBefore = firstEvents.length;
        const idle = client.waitForIdle(LIMIT);
        const result = await call("prompt", () => client.prompt("Second question"));
        check("prompt", result === undefined, "prompt resolves with nothing", result);
        await call("waitForIdle", () => idle);
        const last = await call("getLastAssistantText", () => client.getLastAssistantText());
        check("waitForIdle", last === "Second answer.", "resolves once the answer is in", last);
        const state = await call("getState", () => client.getState());
        check("waitForIdle", state.messageCount === 4, "resolves once the messages are in", state.messageCount);
        check("onEvent", firstEvents.length === seenBefore, "the unsubscribed listener hears nothing more", firstEvents.slice(seenBefore));
    });

    await step("steer + followUp + collectEvents", async () => {
        const gate = mkfifo("gate.fifo");
        const events = client.collectEvents(LIMIT);
        const toolRunning = nextEvent(client, "tool_execution_start", (e) => e.type === "tool_execution_start");
        await call("prompt", () => client.prompt("Run the gated command"));
        // The bash tool now waits for a line on gate.fifo, so the run is busy.
        await toolRunning;
        // Refused without streamingBehavior (RpcClient's void methods do not read the
        // response, so this shows only in the messages below).
        await call("prompt", () => client.prompt("Interrupting"));
        await call("steer", () => client.steer("Steer: look at notes.txt"));
        await call("followUp", () => client.followUp("Follow-up: summarise"));
        await writeFile(gate, "open\n");
        const collected = await call("collectEvents", () => events);
        const types = collected.map((e) => e.type);
        check("collectEvents", types[0] === "agent_start" && types.at(-1) === "agent_end", "events from agent_start to agent_end", types);
        check("collectEvents", types.includes("tool_execution_end"), "the tool's events are collected", types);
        const messages = await call("getMessages", () => client.getMessages());
        const run = transcript(messages).slice(4);
        const toolResult = run.findIndex((line) => line.startsWith("toolResult: got open"));
        const steered = run.indexOf("user: Steer: look at notes.txt");
        const afterSteer = run.indexOf("assistant: After steer.");
        const followed = run.indexOf("user: Follow-up: summarise");
        const afterFollowUp = run.indexOf("assistant: After follow-up.");
        check("steer", toolResult >= 0 && steered === toolResult + 1 && afterSteer === steered + 1, "the steering message follows the tool result and is answered", run);
        check("followUp", followed === afterSteer + 1 && afterFollowUp === followed + 1, "the follow-up comes when the agent would stop and is answered", run);
        check("prompt", !run.includes("user: Interrupting"), "a prompt sent while the agent works is not run", run);
    });

    await step("abort", async () => {
        const idle = client.waitForIdle(LIMIT);
        const streaming = nextEvent(client, "text_delta", (e) => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta");
        await call("prompt", () => client.prompt("Tell me a long story"));
        // The model's stream now stalls until its connection closes.
        await streaming;
        const result = await call("abort", () => client.abort());
        check("abort", result === undefined, "abort resolves with nothing", result);
        await idle.catch((e) => check("abort", false, `the run ends: ${e.message}`));
        const messages = await call("getMessages", () => client.getMessages());
        const last = messages.at(-1);
        check("abort", last?.role === "assistant" && last?.stopReason === "aborted", "the answer is saved as aborted", last);
        const state = await call("getState", () => client.getState());
        check("abort", state.isStreaming === false, "the agent is idle", state.isStreaming);
    });

    await step("bash", async () => {
        const result = await call("bash", () => client.bash("echo from-bash"));
        check("bash", result.output === "from-bash\n" && result.exitCode === 0 && result.cancelled === false, "output, exit code 0, not cancelled", result);
        const messages = await call("getMessages", () => client.getMessages());
        check("bash", messages.at(-1)?.role === "bashExecution" && messages.at(-1)?.command === "echo from-bash", "stored as a bashExecution message", messages.at(-1));
        const failed = await call("bash", () => client.bash("echo failing >&2; exit 3"));
        check("bash", failed.exitCode === 3 && failed.output === "failing\n" && failed.cancelled === false, "exit code 3, stderr in the output", failed);
    });

    await step("abortBash", async () => {
        const ready = mkfifo("ready.fifo");
        mkfifo("never.fifo");
        const running = client.bash("echo ready > ready.fifo; read line < never.fifo");
        // The command has started once it wrote to ready.fifo; it then waits forever.
        const said = await readFile(ready, "utf8");
        check("abortBash", said === "ready\n", "the command started", said);
        const result = await call("abortBash", () => client.abortBash());
        check("abortBash", result === undefined, "abortBash resolves with nothing", result);
        const outcome = await call("abortBash", () => running);
        check("abortBash", outcome.cancelled === true && outcome.exitCode === undefined, "the running command ends cancelled", outcome);
    });

    await step("thinking levels", async () => {
        const result = await call("setThinkingLevel", () => client.setThinkingLevel("high"));
        check("setThinkingLevel", result === undefined, "resolves with nothing", result);
        let state = await call("getState", () => client.getState());
        check("setThinkingLevel", state.thinkingLevel === "high", "the level is high", state.thinkingLevel);
        const cycled = await call("cycleThinkingLevel", () => client.cycleThinkingLevel());
        check("cycleThinkingLevel", cycled?.level === "off", "high cycles to off", cycled);
        state = await call("getState", () => client.getState());
        check("cycleThinkingLevel", state.thinkingLevel === "off", "the state has the new level", state.thinkingLevel);
    });

    await step("queue modes", async () => {
        await call("setSteeringMode", () => client.setSteeringMode("all"));
        await call("setFollowUpMode", () => client.setFollowUpMode("all"));
        let state = await call("getState", () => client.getState());
        check("setSteeringMode", state.steeringMode === "all", "steering mode all", state.steeringMode);
        check("setFollowUpMode", state.followUpMode === "all", "follow-up mode all", state.followUpMode);
        await call("setSteeringMode", () => client.setSteeringMode("one-at-a-time"));
        await call("setFollowUpMode", () => client.setFollowUpMode("one-at-a-time"));
        state = await call("getState", () => client.getState());
        check("setSteeringMode", state.steeringMode === "one-at-a-time", "steering mode back to one-at-a-time", state.steeringMode);
        check("setFollowUpMode", state.followUpMode === "one-at-a-time", "follow-up mode back to one-at-a-time", state.followUpMode);
    });

    await step("models", async () => {
        const set = await call("setModel", () => client.setModel("mock", "mock-model-2"));
        check("setModel", set?.provider === "mock" && set?.id === "mock-model-2", "the model set", set);
        let state = await call("getState", () => client.getState());
        check("setModel", state.model?.id === "mock-model-2", "the state has it", state.model?.id);
        const noLevels = await call("cycleThinkingLevel", () => client.cycleThinkingLevel());
        check("cycleThinkingLevel", noLevels === null, "null for a model without reasoning", noLevels);
        const missing = await rejection(client.setModel("mock", "no-such-model"));
        check("setModel", missing === "Model not found: mock/no-such-model", "an unknown model is refused", missing);
        // mock-model-2 reads images: one goes with a prompt.
        const image = { type: "image", data: PIXEL, mimeType: "image/png" };
        const events = await call("promptAndWait", () => client.promptAndWait("What is in this picture?", [image], LIMIT));
        const user = events.find((e) => e.type === "message_end" && e.message.role === "user")?.message;
        check("prompt", Array.isArray(user?.content) && user.content.some((p) => p.type === "image" && p.data === PIXEL && p.mimeType === "image/png"), "the prompt's image is in the user message", user);
        const answer = events.find((e) => e.type === "message_end" && e.message.role === "assistant")?.message;
        check("setModel", answer?.model === "mock-model-2", "the next answer comes from the model set", answer?.model);
        const cycled = await call("cycleModel", () => client.cycleModel());
        check("cycleModel", cycled?.model?.provider === "mock" && cycled?.model?.id === "mock-model" && cycled?.isScoped === false && typeof cycled?.thinkingLevel === "string", "cycles to mock-model, unscoped", cycled);
        state = await call("getState", () => client.getState());
        check("cycleModel", state.model?.id === "mock-model", "the state has it", state.model?.id);
    });

    await step("setSessionName", async () => {
        const result = await call("setSessionName", () => client.setSessionName("pi client check"));
        check("setSessionName", result === undefined, "resolves with nothing", result);
        const state = await call("getState", () => client.getState());
        check("setSessionName", state.sessionName === "pi client check", "the state has the name", state.sessionName);
        await call("setSessionName", () => client.setSessionName("   "));
        const kept = await call("getState", () => client.getState());
        check("setSessionName", kept.sessionName === "pi client check", "an empty name changes nothing", kept.sessionName);
    });

    await step("getSessionStats", async () => {
        const stats = await call("getSessionStats", () => client.getSessionStats());
        const state = await call("getState", () => client.getState());
        const messages = await call("getMessages", () => client.getMessages());
        const count = (role) => messages.filter((m) => m.role === role).length;
        check("getSessionStats", stats.sessionFile === state.sessionFile && stats.sessionId === state.sessionId, "this session's file and id", [stats.sessionFile, stats.sessionId]);
        check("getSessionStats", stats.userMessages === count("user") && stats.assistantMessages === count("assistant") && stats.toolResults === count("toolResult") && stats.totalMessages === messages.length, "counts match the messages", stats);
        check("getSessionStats", stats.toolCalls === 1, "one tool call", stats.toolCalls);
        const t = stats.tokens ?? {};
        check("getSessionStats", t.input === 300 && t.output === 30 && t.total === t.input + t.output + t.cacheRead + t.cacheWrite, "tokens add up the usage of the answers", t);
        check("getSessionStats", stats.contextUsage?.contextWindow === 128000, "context usage of mock-model", stats.contextUsage);
    });

    await step("exportHtml", async () => {
        const target = path.join(project, "export.html");
        const result = await call("exportHtml", () => client.exportHtml(target));
        check("exportHtml", path.resolve(project, result?.path ?? "") === target, "the path written", result);
        const page = existsSync(target) ? readFileSync(target, "utf8") : "";
        check("exportHtml", /<html/i.test(page), "an HTML page is there", page.slice(0, 100));
        // Without a path: named after the session file, in the agent's working directory.
        const state = await call("getState", () => client.getState());
        const named = await call("exportHtml", () => client.exportHtml());
        const base = path.basename(state.sessionFile, ".jsonl");
        check("exportHtml", named?.path?.endsWith(`-session-${base}.html`) && existsSync(path.resolve(project, named.path)), "a page named after the session file", named);
    });

    let before;
    let forkedFile;
    await step("getForkMessages + fork", async () => {
        before = await call("getMessages", () => client.getMessages());
        const forkable = await call("getForkMessages", () => client.getForkMessages());
        const texts = forkable.map((m) => m.text);
        check("getForkMessages", show(texts.slice(0, 3)) === show(["Say hello", "Second question", "Run the gated command"]) && texts.includes("Tell me a long story"), "the user messages, oldest first", texts);
        check("getForkMessages", forkable.every((m) => typeof m.entryId === "string" && m.entryId.length > 0), "each with an entry id", forkable);
        const second = forkable.find((m) => m.text === "Second question");
        const invalid = await rejection(client.fork("no-such-entry"));
        check("fork", invalid === "Invalid entry ID for forking", "an unknown entry is refused", invalid);
        const forked = await call("fork", () => client.fork(second.entryId));
        check("fork", forked?.text === "Second question" && forked?.cancelled === false, "the message's text, not cancelled", forked);
        const state = await call("getState", () => client.getState());
        forkedFile = state.sessionFile;
        check("fork", forkedFile !== firstFile, "a new session file", forkedFile);
        const messages = await call("getMessages", () => client.getMessages());
        check("fork", show(transcript(messages)) === show(["user: Say hello", "assistant: Hello there."]), "the path before that message", transcript(messages));
    });

    await step("clone", async () => {
        const result = await call("clone", () => client.clone());
        check("clone", result?.cancelled === false, "not cancelled", result);
        const state = await call("getState", () => client.getState());
        check("clone", state.sessionFile !== forkedFile && state.sessionFile !== firstFile, "a new session file", state.sessionFile);
        const messages = await call("getMessages", () => client.getMessages());
        check("clone", show(transcript(messages)) === show(["user: Say hello", "assistant: Hello there."]), "the same messages", transcript(messages));
    });

    await step("switchSession", async () => {
        const result = await call("switchSession", () => client.switchSession(firstFile));
        check("switchSession", result?.cancelled === false, "not cancelled", result);
        const state = await call("getState", () => client.getState());
        check("switchSession", state.sessionFile === firstFile && state.sessionName === "pi client check", "the first session, with its name", [state.sessionFile, state.sessionName]);
        const messages = await call("getMessages", () => client.getMessages());
        check("switchSession", show(transcript(messages)) === show(transcript(before)), "its messages", transcript(messages));
    });

    await step("newSession", async () => {
        const result = await call("newSession", () => client.newSession(firstFile));
        check("newSession", result?.cancelled === false, "not cancelled", result);
        const state = await call("getState", () => client.getState());
        check("newSession", state.messageCount === 0 && state.sessionFile !== firstFile && state.sessionName === undefined, "an empty session in a new file", state);
    });

    await step("auto-compaction + compact", async () => {
        await call("setAutoCompaction", () => client.setAutoCompaction(false));
        let state = await call("getState", () => client.getState());
        check("setAutoCompaction", state.autoCompactionEnabled === false, "off", state.autoCompactionEnabled);
        await call("setAutoCompaction", () => client.setAutoCompaction(true));
        state = await call("getState", () => client.getState());
        check("setAutoCompaction", state.autoCompactionEnabled === true, "on again", state.autoCompactionEnabled);

        await call("promptAndWait", () => client.promptAndWait("first question", undefined, LIMIT));
        await call("promptAndWait", () => client.promptAndWait("second question", undefined, LIMIT));
        const result = await call("compact", () => client.compact("keep it short"));
        check("compact", result?.summary === "THE SUMMARY" && result?.tokensBefore > 0 && typeof result?.firstKeptEntryId === "string", "the summary, tokens before, first kept entry", result);
        const messages = await call("getMessages", () => client.getMessages());
        check("compact", messages[0]?.role === "compactionSummary" && messages[0]?.summary === "THE SUMMARY", "the context starts with the summary", messages[0]);
        check("compact", !transcript(messages).includes("user: first question"), "the first question left the context", transcript(messages));
        const header = JSON.parse(readFileSync(state.sessionFile, "utf8").split("\n")[0]);
        check("newSession", header.parentSession === firstFile, "the new session's header names its parent", header);
    });

    await step("setAutoRetry + abortRetry", async () => {
        await call("setAutoRetry", () => client.setAutoRetry(true));
        const retrying = nextEvent(client, "auto_retry_start", (e) => e.type === "auto_retry_start");
        const retryEnded = nextEvent(client, "auto_retry_end", (e) => e.type === "auto_retry_end");
        await call("prompt", () => client.prompt("Try once more"));
        const start = await retrying;
        check("setAutoRetry", start.attempt === 1, "with auto-retry on, a retry is scheduled", start);
        const result = await call("abortRetry", () => client.abortRetry());
        check("abortRetry", result === undefined, "resolves with nothing", result);
        const end = await retryEnded;
        check("abortRetry", end.success === false && end.finalError === "Retry cancelled", "the retry is cancelled", end);

        await call("setAutoRetry", () => client.setAutoRetry(false));
        const events = await call("promptAndWait", () => client.promptAndWait("Fail without retry", undefined, LIMIT));
        const types = events.map((e) => e.type);
        check("setAutoRetry", !types.includes("auto_retry_start"), "with auto-retry off, no retry", types);
        const messages = await call("getMessages", () => client.getMessages());
        const last = messages.at(-1);
        check("setAutoRetry", last?.role === "assistant" && last?.stopReason === "error", "the failure ends the run", last);
    });

    await step("getStderr", async () => {
        const stderr = client.getStderr();
        check("getStderr", typeof stderr === "string" && !stderr.includes("panicked"), "the agent's stderr, a string without a crash", stderr);
    });

    await step("stop", async () => {
        const child = client.process;
        let exit;
        child.on("exit", (code, signal) => {
            exit = { code, signal };
        });
        await call("stop", () => client.stop());
        check("stop", exit !== undefined && exit.signal !== "SIGKILL", "the agent ends on SIGTERM, before the SIGKILL fallback", exit);
        const after = await rejection(client.getState());
        check("stop", after === "Client not started", "commands are refused after stop", after);
    });
}

for (const method of publicMethods) {
    if (!checked.has(method)) fail(method, "never checked");
}
process.stdout.write(`${JSON.stringify({ methods: problems, steps: stepFailures })}\n`);
process.exit(0);
