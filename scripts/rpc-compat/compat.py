#!/usr/bin/env python3
"""Runs one scripted RPC session through the reference agent (`pi --mode rpc`) and ours
(`knightcode --mode rpc`), keeps both transcripts, and lists every difference left after
normalising what cannot match (ids, timestamps, paths, ports, system prompt text).

    python3 scripts/rpc-compat/compat.py [--out DIR] [--compare-only]

DIR (default: a new temp dir) gets pi/ and ours/ with rpc-in.jsonl (what was sent),
rpc-out.jsonl (everything the agent wrote, verbatim), steps.json (which output records
belong to which command), requests.jsonl (model requests), the session files and
stderr.txt, plus summary.md (printed) and details.md. --compare-only re-reads DIR.
Exits 1 when a difference is not explained in EXPLAIN below (docs/compat.md, "RPC mode").

The session: state and model queries, a prompt with thinking, session name, thinking
levels, a model switch, a prompt with a bash tool call, user bash, errors (unknown model,
unknown command, a garbage line), queue and retry toggles, fork, a prompt in the fork,
clone, switch back, new session, and the commands pi 0.73.1 does not have.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts", "bench"))
sys.path.insert(0, os.path.join(ROOT, "scripts", "pi"))

import oneshot_compat  # noqa: E402  (the JSON-mode comparison: diff, alignment, explanations)
from oneshot_common import PI, Sandbox  # noqa: E402
from rpc_drive import Rpc  # noqa: E402  (the driver that recorded fixtures/pi/rpc*)

AGENTS = ("pi", "ours")
MODEL_ARGS = ["--provider", "mock", "--model", "mock-model", "--mode", "rpc"]


def _call(call_id, command):
    return {"toolCall": {"id": call_id, "name": "bash", "argumentsJson": json.dumps({"command": command})}}


# The reference recording's script (fixtures/pi/rpc/mock-script.json) in the format of
# knightcode-mock-provider, plus one answer for the prompt in the fork.
SCRIPT = [
    {"parts": [{"thinking": {"text": "A greeting. Reply briefly."}}, {"text": "Hi there!"}],
     "usage": {"input": 1100, "output": 12}},
    {"parts": [{"text": "Running it."}, _call("call_rpc_1", "echo rpc")],
     "usage": {"input": 200, "output": 20, "cacheRead": 1000}},
    {"parts": [{"text": "The command printed rpc."}], "usage": {"input": 200, "output": 8, "cacheRead": 1100}},
    {"parts": [{"text": "You're welcome."}], "usage": {"input": 1390, "output": 5, "cacheRead": 10}},
    {"parts": [{"text": "Fork answer."}], "usage": {"input": 950, "output": 3}},
]

MODELS = [
    {"id": "mock-model", "name": "Mock Model", "reasoning": True, "input": ["text"],
     "contextWindow": 128000, "maxTokens": 16384,
     "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
    {"id": "mock-model-2", "name": "Mock Model Two", "reasoning": False, "input": ["text", "image"],
     "contextWindow": 32000, "maxTokens": 4096,
     "cost": {"input": 0.5, "output": 1.5, "cacheRead": 0.05, "cacheWrite": 0}},
]

GARBAGE = b"this is not json\n"


def scenario(rpc, step):
    """The command sequence; `step(name, command, run=False)` sends one and records it."""
    step("state", {"type": "get_state"})
    step("models", {"type": "get_available_models"})
    step("commands", {"type": "get_commands"})
    step("prompt-hello", {"type": "prompt", "message": "Say hello"}, run=True)
    step("name", {"type": "set_session_name", "name": "kc compat rpc"})
    step("thinking-high", {"type": "set_thinking_level", "level": "high"})
    step("thinking-cycle", {"type": "cycle_thinking_level"})
    step("thinking-low", {"type": "set_thinking_level", "level": "low"})
    step("thinking-levels", {"type": "get_available_thinking_levels"})
    step("model-2", {"type": "set_model", "provider": "mock", "modelId": "mock-model-2"})
    step("prompt-tool", {"type": "prompt", "message": "Run echo rpc"}, run=True)
    step("user-bash", {"type": "bash", "command": "echo from-rpc-bash"})
    step("prompt-thanks", {"type": "prompt", "message": "Thanks"}, run=True)
    step("model-1", {"type": "set_model", "provider": "mock", "modelId": "mock-model"})
    step("last-text", {"type": "get_last_assistant_text"})
    step("fork-messages", {"type": "get_fork_messages"})
    step("messages", {"type": "get_messages"})
    step("stats", {"type": "get_session_stats"})
    step("state-2", {"type": "get_state"})
    step("bad-model", {"type": "set_model", "provider": "mock", "modelId": "no-such-model"})
    step("unknown", {"type": "no_such_command"})
    step("garbage", GARBAGE)
    step("steering-all", {"type": "set_steering_mode", "mode": "all"})
    step("follow-up-all", {"type": "set_follow_up_mode", "mode": "all"})
    step("clear-queue", {"type": "clear_queue"})
    step("abort-idle", {"type": "abort"})
    step("abort-retry", {"type": "abort_retry"})
    step("abort-bash", {"type": "abort_bash"})
    step("auto-retry-off", {"type": "set_auto_retry", "enabled": False})
    step("auto-compaction-off", {"type": "set_auto_compaction", "enabled": False})
    step("state-3", {"type": "get_state"})
    with rpc.cond:
        forks = [r for r in rpc.lines if r.get("command") == "get_fork_messages"][-1]
    original = [r for r in rpc.lines if r.get("command") == "get_state"][-1]["data"]["sessionFile"]
    target = forks["data"]["messages"][-1]["entryId"]
    step("fork", {"type": "fork", "entryId": target})
    step("prompt-fork", {"type": "prompt", "message": "Hello from the fork"}, run=True)
    step("clone", {"type": "clone"})
    step("state-clone", {"type": "get_state"})
    step("switch-back", {"type": "switch_session", "sessionPath": original})
    step("messages-back", {"type": "get_messages"})
    step("new-session", {"type": "new_session"})
    step("state-new", {"type": "get_state"})
    step("entries", {"type": "get_entries"})
    step("tree", {"type": "get_tree"})
    step("bad-fork", {"type": "fork", "entryId": "ffffffff"})
    step("empty-name", {"type": "set_session_name", "name": "   "})


def run_agent(agent, out_dir):
    side = os.path.join(out_dir, agent)
    if os.path.exists(side):
        shutil.rmtree(side)
    os.makedirs(side)
    box = Sandbox(agent, "rpc", keep_dir=os.path.join(side, "sandbox"))
    try:
        box.start_mock(SCRIPT)
        with open(os.path.join(box.agent_dir, "models.json"), "w") as f:
            json.dump({"providers": {"mock": {"baseUrl": box.mock.url, "api": "openai-completions",
                                              "apiKey": "mock-api-key", "models": MODELS}}}, f)
        with open(os.path.join(box.project, "notes.txt"), "w") as f:
            f.write("alpha\nbeta\ngamma\n")
        cmd = ["env", "-i"] + [f"{k}={v}" for k, v in box.env.items()] + box.argv0 + MODEL_ARGS
        rpc = Rpc(cmd, os.path.join(side, "rpc-in.jsonl"), os.path.join(side, "rpc-out.jsonl"),
                  os.path.join(side, "stderr.txt"), cwd=box.project)
        steps = []
        ids = iter(range(1, 1000))

        def step(name, command, run=False):
            start = len(rpc.lines)
            if isinstance(command, bytes):
                rpc.in_f.write(command.decode())
                rpc.in_f.flush()
                rpc.proc.stdin.write(command)
                rpc.proc.stdin.flush()
                rpc.wait_for(lambda r: r.get("type") == "response" and r.get("command") == "parse", start)
                rpc.settle()
            else:
                command = dict(command, id=f"req-{next(ids)}")
                rpc.call(command, run=run)
            with rpc.cond:
                steps.append({"name": name, "command": command if isinstance(command, dict) else None,
                              "first": start, "end": len(rpc.lines)})

        try:
            scenario(rpc, step)
        finally:
            rc = rpc.close()
        with open(os.path.join(side, "steps.json"), "w") as f:
            json.dump({"exit": rc, "steps": steps}, f, indent=1)
        for i, path in enumerate(box.session_files()):
            shutil.copyfile(path, os.path.join(side, f"session-{i + 1}.jsonl"))
        with open(os.path.join(side, "sessions.txt"), "w") as f:
            f.write("".join(f"session-{i + 1}.jsonl\t{p}\n" for i, p in enumerate(box.session_files())))
        shutil.copyfile(box.mock.log_path, os.path.join(side, "requests.jsonl"))
    finally:
        box.close(remove=False)


# --- comparison ----------------------------------------------------------------------------

EXPLAIN = [
    # (step regex, record signature regex, path regex, kind or "" for any, explanation
    # [, test(ours, pi)]). First match wins; then the JSON-mode list (oneshot_compat.EXPLAIN).
    (r"", r"^response$", r"^data$", "only ours",
     "rpc.md §2: `prompt`, `steer` and `follow_up` report `data.disposition` (pi 0.73.1 sends no data)",
     lambda ours, pi: isinstance(ours, dict) and set(ours) == {"disposition"}),
    (r"^(thinking-levels|clear-queue|entries|tree)$", r"^response$", r"^(id|data|success|error)$", "",
     "rpc.md §2: `get_available_thinking_levels`, `clear_queue`, `get_entries` and `get_tree` are newer "
     "than pi 0.73.1, which answers `Unknown command` without the id"),
    (r"^clear-queue$", r"^queue_update$", r"^$", "only ours",
     "rpc.md §2: `clear_queue` emits `queue_update` (pi 0.73.1 has no `clear_queue`)"),
    (r"^unknown$", r"^response$", r"^id$", "only ours",
     "docs/rpc.md: the unknown-command response echoes the request id (pi 0.73.1 drops it)"),
    (r"^garbage$", r"^response$", r"^error$", "value",
     "docs/rpc.md: parse errors carry serde_json's message after the same `Failed to parse command: ` prefix",
     lambda ours, pi: str(ours).startswith("Failed to parse command: ")),
    (r"", r"^bash_execution_update$", r"^$", "only ours",
     "rpc.md §4: `bash` streams `bash_execution_update` events (pi 0.73.1 streams nothing over RPC)"),
    (r"", r"^entry_appended$", r"^$", "only ours",
     "rpc.md §4: `entry_appended` for entries outside the message flow"),
    (r"", r"^thinking_level_changed$", r"^$", "only ours",
     "ours also reports a thinking level that a session switch, fork, clone or new session changes"),
]


# Differences JSON mode has as well: the JSON-mode comparison (scripts/bench/oneshot-compat.sh)
# reports them; here they are listed but do not fail the RPC verdict.
SHARED = [
    (r"^requests$", r"^tools\."),
    (r"", r"^assistantMessageEvent\.toolCall\.type$"),
]

# Differences of the model requests that only RPC commands can cause.
REQUEST_EXPLAIN = [
    (r"^messages\[\*\]\.content$", "value",
     "BUG (ours, crates/ai transform): a `bashExecution` message reaches the model as a user message with "
     "string content; the reference sends one text block (same text)",
     lambda ours, pi: isinstance(ours, str) and isinstance(pi, list) and ours.startswith("Ran `")),
]


def explain(step, sig, path, kind, ours, pi):
    for step_re, sig_re, path_re, k, text, *test in EXPLAIN:
        if (k in ("", kind)) and re.search(step_re, step) and re.search(sig_re, sig) \
                and re.search(path_re, path) and (not test or test[0](ours, pi)):
            return text
    if step == "requests":
        for path_re, k, text, *test in REQUEST_EXPLAIN:
            if k == kind and re.search(path_re, path) and (not test or test[0](ours, pi)):
                return text
    text = oneshot_compat.explain(sig, path, kind, ours, pi)
    if kind == "key order" and text == "UNEXPLAINED":
        text = "UNEXPLAINED (key order)"
    if text.startswith(("UNEXPLAINED", "BUG")) and any(
            re.search(step_re, step) and re.search(path_re, path) for step_re, path_re in SHARED):
        return f"SHARED with JSON mode (scripts/bench/oneshot-compat.sh): {text}"
    return text


SESSION_FILE = re.compile(r"/sessions/[^/]+/[0-9TZ-]+_([0-9a-f-]{36})\.jsonl$")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class Normaliser:
    """Per side: the sandbox root, session files, session ids, entry ids, the mock URL and
    times become placeholders; entry ids are named by what the entry is (as in the JSON-mode
    comparison) so that an entry only one side writes does not renumber the others."""

    def __init__(self, side_dir, sessions):
        self.root = os.path.realpath(os.path.join(side_dir, "sandbox"))
        self.names = {}
        seen = {}
        for n, (path, lines) in enumerate(sessions, 1):
            self.names[path] = f"<session-file-{n}>"
            for entry in lines:
                key = entry.get("id")
                if not isinstance(key, str) or key in self.names:
                    continue
                if entry.get("type") == "session":
                    self.names[key] = f"<session-id-{n}>"
                    continue
                sig = oneshot_compat.signature(entry)
                seen[sig] = seen.get(sig, 0) + 1
                self.names[key] = f"<{sig}#{seen[sig]}>"

    def __call__(self, value, key=None):
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        if key in ("timestamp", "labelTimestamp"):
            return "<ts>"
        if key == "durationMs":
            return "<ms>"
        if key == "responseId":
            return "<responseId>"
        if key == "baseUrl" and isinstance(value, str):
            return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", value)
        if isinstance(value, str):
            if value in self.names:
                return self.names[value]
            # A session file not written (yet): named by its session id.
            match = SESSION_FILE.search(value)
            if match:
                return f"<session-file:{self.names.get(match.group(1), '<unsaved>')}>"
            if UUID.fullmatch(value):
                return "<session-id:unsaved>"
            return value.replace(self.root, "<root>")
        return oneshot_compat.round_float(value)


def load(out_dir, agent):
    side = os.path.join(out_dir, agent)
    with open(os.path.join(side, "steps.json")) as f:
        steps = json.load(f)
    out = oneshot_compat.read_jsonl(os.path.join(side, "rpc-out.jsonl"))
    sessions = []
    with open(os.path.join(side, "sessions.txt")) as f:
        for line in f:
            name, original = line.rstrip("\n").split("\t")
            sessions.append((original, oneshot_compat.read_jsonl(os.path.join(side, name))))
    norm = Normaliser(side, sessions)
    return {
        "exit": steps["exit"],
        "steps": [dict(s, records=[norm(r) for r in out[s["first"]:s["end"]]]) for s in steps["steps"]],
        "sessions": [[norm(e) for e in lines] for _, lines in sessions],
        "requests": oneshot_compat.read_jsonl(os.path.join(side, "requests.jsonl")),
    }


def add(groups, step, sig, path, kind, ours, pi):
    key = (step, sig, oneshot_compat.generic(path), kind)
    group = groups.setdefault(key, {"count": 0, "ours": ours, "pi": pi})
    group["count"] += 1


def compare_step(name, ours, pi, groups):
    """The response against the response, the events against the events."""
    def split(records):
        responses = [r for r in records if r.get("type") == "response"]
        return (responses[-1] if responses else None), [r for r in records if r.get("type") != "response"]

    resp_o, events_o = split(ours)
    resp_p, events_p = split(pi)
    if resp_o is not None and resp_p is not None:
        found = []
        oneshot_compat.diff(resp_o, resp_p, "", found)
        for path, kind, a, b in found:
            add(groups, name, "response", path, kind, a, b)
    for (sig, path, kind), g in oneshot_compat.compare_records(events_o, events_p).items():
        for _ in range(g["count"]):
            add(groups, name, sig, path, kind, g["ours"], g["pi"])


def compare(out_dir):
    o, p = load(out_dir, "ours"), load(out_dir, "pi")
    groups = {}
    for so, sp in zip(o["steps"], p["steps"]):
        compare_step(so["name"], so["records"], sp["records"], groups)
    session_groups = {}
    for n, (lo, lp) in enumerate(zip(o["sessions"], p["sessions"]), 1):
        for (sig, path, kind), g in oneshot_compat.compare_records(lo, lp).items():
            session_groups[(f"session-{n}", sig, path, kind)] = g

    for (sig, path, kind), g in oneshot_compat.request_groups(o, p).items():
        session_groups[("requests", sig, path, kind)] = g

    lines = [
        f"Exit codes: ours {o['exit']}, pi {p['exit']}. Steps: {len(o['steps'])}. Output records: ours "
        f"{sum(len(s['records']) for s in o['steps'])}, pi {sum(len(s['records']) for s in p['steps'])}. "
        f"Session files: ours {len(o['sessions'])}, pi {len(p['sessions'])}. Model requests: ours "
        f"{len(o['requests'])}, pi {len(p['requests'])}.",
        "",
    ]
    rows = {}
    for (step, sig, path, kind), g in list(groups.items()) + list(session_groups.items()):
        text = explain(step, sig, path, kind, g["ours"], g["pi"])
        key = (text, kind) if not text.startswith("UNEXPLAINED") else (text, kind, step, sig, path)
        row = rows.setdefault(key, {"where": [], "count": 0, "ours": g["ours"], "pi": g["pi"]})
        row["where"].append(f"{step} `{sig}` `{path or '(record)'}`")
        row["count"] += g["count"]
    lines.append("| difference | kind | count | where | ours (example) | pi (example) |")
    lines.append("|---|---|---|---|---|---|")

    def rank(key):
        return (2 if key[0].startswith("UNEXPLAINED") else 1 if key[0].startswith("BUG") else 0, key)

    cell = oneshot_compat.cell
    for key, row in sorted(rows.items(), key=lambda kv: rank(kv[0])):
        where = row["where"][:3] + ([f"+{len(row['where']) - 3} more"] if len(row["where"]) > 3 else [])
        lines.append(f"| {key[0]} | {key[1]} | {row['count']} | {'; '.join(where)} | {cell(row['ours'])} | "
                     f"{cell(row['pi'])} |")
    unexplained = sum(1 for key in rows if key[0].startswith(("UNEXPLAINED", "BUG")))
    lines.append("")
    lines.append(f"Unexplained kinds of difference or bugs: {unexplained}.")
    summary = "\n".join(lines) + "\n"

    details = [lines[0], ""]
    for step_o, step_p in zip(o["steps"], p["steps"]):
        details.append(f"## {step_o['name']}: `{json.dumps(step_o['command'])}`\n")
        for label, records in (("ours", step_o["records"]), ("pi", step_p["records"])):
            kinds = [oneshot_compat.signature(r) for r in records]
            details.append(f"- {label}: {', '.join(kinds) or '(nothing)'}")
        details.append("")
    return summary, "\n".join(details) + "\n", unexplained


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="keep everything here (default: a new temp dir)")
    parser.add_argument("--compare-only", action="store_true")
    opts = parser.parse_args()
    out_dir = os.path.abspath(opts.out or tempfile.mkdtemp(prefix="kc-rpc-compat-"))
    if not opts.compare_only:
        if not os.path.exists(PI):
            sys.exit(f"missing {PI}: run scripts/rpc-compat/compat.sh (it installs pi)")
        os.makedirs(out_dir, exist_ok=True)
        for agent in AGENTS:
            run_agent(agent, out_dir)
    summary, details, unexplained = compare(out_dir)
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write(summary)
    with open(os.path.join(out_dir, "details.md"), "w") as f:
        f.write(details)
    print(summary)
    print(f"(per-step record kinds: {os.path.join(out_dir, 'details.md')}; kept in {out_dir})", file=sys.stderr)
    if unexplained:
        sys.exit(1)


if __name__ == "__main__":
    main()
