#!/usr/bin/env python3
"""Runs the scripted four-turn read/bash/edit scenario through the reference agent
(`pi --mode json`) and ours (`knightcode --mode json`), keeps both JSON streams, both session
files and both sides' model requests, and lists every difference that is left after
normalising the ones that cannot match (ids, timestamps, paths, durations, system prompt
text, responseId values, cost floats).

    python3 scripts/bench/oneshot_compat.py [--out DIR] [--compare-only]

DIR (default: a new temp dir) gets ours/ and pi/ with events.jsonl, session.jsonl,
requests.jsonl, stderr.txt, the project, and summary.md (also printed). --compare-only
re-reads an existing DIR instead of running the agents. Exits 1 when a difference is
unexplained or marked as a bug in EXPLAIN below.
"""
import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from oneshot_common import EDIT_SCRIPT, PI, SCENARIOS, Sandbox, check_run

EXPLAIN = [
    # (record signature regex, path regex, kind, explanation[, test(ours, pi)]). First match wins.
    (r"^message_update", r"^assistantMessageEvent\.partial$", "only pi",
     "json.md: wire `message_update` is delta-only; pi 0.73.1 still sends the `partial` snapshot"),
    (r"^message_update", r"^message$", "only pi",
     "json.md: wire `message_update` omits the cumulative `message`"),
    (r"^message_update", r"^usage$", "only ours", "json.md: `message_update` carries the latest `usage`"),
    (r"^message_update:toolcall_start", r"^assistantMessageEvent\.(id|toolName)$", "only ours",
     "json.md: `toolcall_start` carries `id` and `toolName` (they were only in `partial`)"),
    (r"^agent_settled", r"^$", "only ours", "json.md: `agent_settled` after `agent_end`"),
    (r"^agent_end", r"^willRetry$", "only ours", "json.md: `agent_end` has `willRetry`"),
    (r"^tool_execution_end", r"^durationMs$", "only ours", "json.md: `tool_execution_end.durationMs`"),
    (r"^message_start:assistant", r"^message\.stopReason$", "value",
     "json.md / messages.md: a streaming assistant message has `stopReason: \"pending\"`"),
    (r"", r"(^|\.)usage\.reasoning$", "only ours",
     "messages.md: `Usage.reasoning?` (reasoning tokens inside output); ours writes 0 when the provider reports 0"),
    (r"", r"(^|\.)thinkingLevel$", "only ours",
     "KnightCode assistant messages record the requested thinking level (mcp-codemode-virtual.md: dispatch fields)"),
    (r"", r"(^|\.)rawStopReason$", "only ours", "messages.md: assistant `rawStopReason?` (provider's own stop reason)"),
    (r"", r"(^|\.)durationMs$", "only ours",
     "ours: assistant `durationMs` (declared in crates/protocol message.rs; not in the condensed spec)"),
    (r"", r"(^|\.)details\.lineCount$", "only ours", "tools.md: `read` details `{lineCount}`"),
    (r"", r"(^|\.)details\.patch$", "only ours", "tools.md: `edit` details `{diff, patch, firstChangedLine}`"),
    (r"", r"(^|\.)details$", "only ours", "tools.md: `read` details `{lineCount}`; pi 0.73.1 writes none",
     lambda ours, pi: isinstance(ours, dict) and set(ours) <= {"lineCount", "truncation"}),
    (r"^request$", r"\.properties\.[^.]+\.description$", "value",
     "our own wording of the parameter descriptions (house rule: no prose copied from the reference)"),
    (r"^message:user$", r"^parentId$", "value",
     "follows from the `system` entry: the first user message's parent is that entry",
     lambda ours, pi: str(ours).startswith("<message:system")),
    (r"^message:system", r"^$", "only ours",
     "messages.md: the system prompt is a `system` message entry (KnightCode replay model); pi keeps it out of the session"),
]


def explain(sig, path, kind, ours=None, pi=None):
    for sig_re, path_re, k, text, *test in EXPLAIN:
        if k == kind and re.search(sig_re, sig) and re.search(path_re, path) \
                and (not test or test[0](ours, pi)):
            return text
    return "UNEXPLAINED"


# --- normalisation -----------------------------------------------------------------------

def round_float(x):
    return float(f"{x:.12g}") if isinstance(x, float) else x


class Normaliser:
    """Per side: the sandbox root becomes <root>, session and entry ids become placeholders in
    order of first appearance, timestamps and durations become markers (presence is kept)."""

    def __init__(self, root, session_lines):
        self.root = os.path.realpath(root)
        # Entry ids are named after what the entry is, not its position, so that an entry only
        # one side writes does not renumber all the others.
        self.ids = {}
        seen = {}
        for entry in session_lines:
            if not isinstance(entry.get("id"), str) or entry["id"] in self.ids:
                continue
            if entry.get("type") == "session":
                self.ids[entry["id"]] = "<session-id>"
                continue
            sig = signature(entry)
            seen[sig] = seen.get(sig, 0) + 1
            self.ids[entry["id"]] = f"<{sig}#{seen[sig]}>"

    def __call__(self, value, key=None):
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        if key == "timestamp":
            return "<ts>"
        if key == "durationMs":
            return "<ms>"
        if key == "responseId":
            return "<responseId>"
        if isinstance(value, str):
            if value in self.ids:
                return self.ids[value]
            return value.replace(self.root, "<root>")
        return round_float(value)


# --- structural diff ---------------------------------------------------------------------

def diff(a, b, path, out):
    """Differences between ours (a) and pi (b): (path, kind, ours, pi)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            p = f"{path}.{k}" if path else k
            if k not in b:
                out.append((p, "only ours", a[k], None))
            else:
                diff(a[k], b[k], p, out)
        for k in b:
            if k not in a:
                out.append((f"{path}.{k}" if path else k, "only pi", None, b[k]))
        common_a = [k for k in a if k in b]
        common_b = [k for k in b if k in a]
        if common_a != common_b:
            out.append((path, "key order", common_a, common_b))
        return
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            p = f"{path}[{i}]"
            if i >= len(b):
                out.append((p, "only ours", a[i], None))
            elif i >= len(a):
                out.append((p, "only pi", None, b[i]))
            else:
                diff(a[i], b[i], p, out)
        return
    if a != b or type(a) is not type(b):
        out.append((path, "value", a, b))


def signature(record):
    """What a record is, for alignment: event/entry type plus the kind of message or delta."""
    parts = [record.get("type", "?")]
    event = record.get("assistantMessageEvent")
    if isinstance(event, dict):
        parts.append(event.get("type", "?"))
    message = record.get("message")
    if isinstance(message, dict) and "role" in message and not isinstance(event, dict):
        parts.append(message["role"])
        if message.get("toolName"):
            parts.append(message["toolName"])
    if record.get("toolName"):
        parts.append(record["toolName"])
    return ":".join(parts)


def generic(path):
    return re.sub(r"\[\d+\]", "[*]", path)


def short(value, limit=90):
    text = json.dumps(value, ensure_ascii=False) if value is not None else "—"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compare_records(ours, pi):
    """Aligns two record lists by signature and groups the differences."""
    sig_o = [signature(r) for r in ours]
    sig_p = [signature(r) for r in pi]
    groups = {}

    def add(sig, path, kind, a, b):
        key = (sig, generic(path), kind)
        if key not in groups:
            groups[key] = {"count": 0, "ours": a, "pi": b}
        groups[key]["count"] += 1

    matcher = difflib.SequenceMatcher(a=sig_o, b=sig_p, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2)):
                found = []
                diff(ours[i], pi[j], "", found)
                for path, kind, a, b in found:
                    add(sig_o[i], path, kind, a, b)
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2)):
                add(f"{sig_o[i]} ≠ {sig_p[j]}", "", "value", sig_o[i], sig_p[j])
            continue
        for i in range(i1, i2):
            add(sig_o[i], "", "only ours", short(ours[i], 60), None)
        for j in range(j1, j2):
            add(sig_p[j], "", "only pi", None, short(pi[j], 60))
    return groups


def type_counts(records):
    counts = {}
    for r in records:
        counts[signature(r).split(":")[0]] = counts.get(signature(r).split(":")[0], 0) + 1
    return counts


# --- running -----------------------------------------------------------------------------

def run_agent(agent, out_dir):
    side = os.path.join(out_dir, agent)
    if os.path.exists(side):
        shutil.rmtree(side)
    os.makedirs(side)
    box = Sandbox(agent, "json-edit", keep_dir=os.path.join(side, "sandbox"))
    try:
        box.start_mock(EDIT_SCRIPT)
        argv = box.argv0 + SCENARIOS["json-edit"][1]
        run = subprocess.run(argv, cwd=box.project, env=box.env, stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=120)
        stdout = run.stdout.decode("utf-8", errors="replace")
        stderr = run.stderr.decode("utf-8", errors="replace")
        with open(os.path.join(side, "events.jsonl"), "wb") as f:
            f.write(run.stdout)
        with open(os.path.join(side, "stderr.txt"), "w") as f:
            f.write(stderr)
        problem = check_run("json-edit", box, run.returncode, stdout, stderr)
        if problem:
            raise SystemExit(f"{agent}: the scenario failed: {problem} (see {side})")
        shutil.copyfile(box.session_files()[0], os.path.join(side, "session.jsonl"))
        shutil.copyfile(box.mock.log_path, os.path.join(side, "requests.jsonl"))
    finally:
        box.close(remove=False)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def why(sig, path, kind, group):
    text = explain(sig.split(" ≠ ")[0], path, kind, group["ours"], group["pi"])
    return "UNEXPLAINED (key order)" if kind == "key order" and text == "UNEXPLAINED" else text


def cell(value):
    return short(value).replace("|", "\\|") if value is not None else "—"


def group_table(groups, lines):
    """Every kind of difference, one row per record type and path."""
    lines.append("| record | path | kind | count | ours | pi | explanation |")
    lines.append("|---|---|---|---|---|---|---|")
    rows = sorted(groups.items(), key=lambda kv: (why(*kv[0], kv[1]).startswith("UNEXPLAINED"), kv[0]))
    for (sig, path, kind), g in rows:
        lines.append(f"| `{sig}` | `{path or '(whole record)'}` | {kind} | {g['count']} | {cell(g['ours'])} | "
                     f"{cell(g['pi'])} | {why(sig, path, kind, g)} |")


def condensed_table(sections, lines):
    """One row per explanation (per path when unexplained), across streams and record types."""
    rows = {}
    for section, groups in sections:
        for (sig, path, kind), g in groups.items():
            text = why(sig, path, kind, g)
            key = (text, kind) if not text.startswith("UNEXPLAINED") else (text, kind, path)
            row = rows.setdefault(key, {"where": [], "count": 0, "ours": g["ours"], "pi": g["pi"]})
            row["where"].append(f"{section} `{sig}` `{path or '(record)'}`")
            row["count"] += g["count"]
    lines.append("| difference | kind | count | where | ours (example) | pi (example) |")
    lines.append("|---|---|---|---|---|---|")
    def rank(key):
        return (2 if key[0].startswith("UNEXPLAINED") else 1 if key[0].startswith("BUG") else 0, key)

    for key, row in sorted(rows.items(), key=lambda kv: rank(kv[0])):
        where = row["where"][:3] + ([f"+{len(row['where']) - 3} more"] if len(row["where"]) > 3 else [])
        lines.append(f"| {key[0]} | {key[1]} | {row['count']} | {'; '.join(where)} | {cell(row['ours'])} | "
                     f"{cell(row['pi'])} |")
    return sum(1 for key in rows if key[0].startswith(("UNEXPLAINED", "BUG")))


def request_groups(o, p):
    """Request bodies; tool declarations (the same in every request) from the first only, keyed
    by tool name so that a difference says which tool."""
    groups = {}
    for n, (ro, rp) in enumerate(zip(o["requests"], p["requests"])):
        bo, bp = json.loads(json.dumps(ro["body"])), json.loads(json.dumps(rp["body"]))
        for body in (bo, bp):
            tools = body.pop("tools", [])
            if n == 0:
                body["tools"] = {t.get("function", {}).get("name", "?"): t for t in tools}
            if body.get("messages") and body["messages"][0].get("role") in ("system", "developer"):
                body["messages"][0]["content"] = "<system prompt>"
            for tool in body.get("tools", {}).values():
                fn = tool.get("function", {})
                if "description" in fn:
                    fn["description"] = "<description>"
        found = []
        diff(bo, bp, "", found)
        for path, kind, a, b in found:
            g = groups.setdefault(("request", generic(path), kind), {"count": 0, "ours": a, "pi": b})
            g["count"] += 1
    return groups


def compare(out_dir):
    """Returns (summary, details) as Markdown."""
    data = {}
    for agent in ("ours", "pi"):
        side = os.path.join(out_dir, agent)
        session = read_jsonl(os.path.join(side, "session.jsonl"))
        norm = Normaliser(os.path.join(side, "sandbox"), session)
        data[agent] = {
            "events": [norm(e) for e in read_jsonl(os.path.join(side, "events.jsonl"))],
            "session": [norm(e) for e in session],
            "requests": read_jsonl(os.path.join(side, "requests.jsonl")),
        }
    o, p = data["ours"], data["pi"]
    head = []
    head.append(f"Records: JSON stream ours {len(o['events'])} / pi {len(p['events'])}, session entries "
                f"ours {len(o['session'])} / pi {len(p['session'])}, model requests ours "
                f"{len(o['requests'])} / pi {len(p['requests'])}.")
    counts_o, counts_p = type_counts(o["events"]), type_counts(p["events"])
    head.append("Events by type (ours/pi): " + ", ".join(
        f"`{t}` {counts_o.get(t, 0)}/{counts_p.get(t, 0)}" for t in dict.fromkeys(list(counts_o) + list(counts_p))) + ".")
    sizes = {a: os.path.getsize(os.path.join(out_dir, a, "events.jsonl")) for a in ("ours", "pi")}
    head.append(f"Stream size: ours {sizes['ours']} bytes, pi {sizes['pi']} bytes.")
    tools_o = [t["function"]["name"] for t in o["requests"][0]["body"].get("tools", [])]
    tools_p = [t["function"]["name"] for t in p["requests"][0]["body"].get("tools", [])]
    sys_o = o["requests"][0]["body"]["messages"][0]["content"]
    sys_p = p["requests"][0]["body"]["messages"][0]["content"]
    desc = []
    for to, tp in zip(o["requests"][0]["body"].get("tools", []), p["requests"][0]["body"].get("tools", [])):
        same = to["function"].get("description") == tp["function"].get("description")
        desc.append(f"{to['function']['name']} {'same' if same else 'differs'}")
    head.append(f"Model requests: tools ours {tools_o}, pi {tools_p}; system prompt ours {len(sys_o)} chars, "
                f"pi {len(sys_p)} chars; tool descriptions: {', '.join(desc)} (these three are normalised away). "
                f"HTTP headers: ours {len(o['requests'][0]['headers'])}, pi {len(p['requests'][0]['headers'])} "
                f"(pi's OpenAI SDK adds `x-stainless-*`, `accept-language`, `sec-fetch-mode`, ...; not compared).")

    sections = [
        ("stream", compare_records(o["events"], p["events"])),
        ("session", compare_records(o["session"], p["session"])),
        ("requests", request_groups(o, p)),
    ]
    summary = head[:]
    summary.append("")
    unexplained = condensed_table(sections, summary)
    summary.append("")
    summary.append(f"Unexplained kinds of difference or bugs: {unexplained}. Everything else in the two streams, the "
                   f"two session files and the model requests is equal after normalisation, key order included.")

    details = head[:]
    titles = {"stream": "JSON stream (`--mode json` stdout)", "session": "Session file",
              "requests": "Model request bodies"}
    for section, groups in sections:
        details.append(f"\n## {titles[section]}: {len(groups)} kinds of difference\n")
        group_table(groups, details)
    return "\n".join(summary) + "\n", "\n".join(details) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="keep everything here (default: a new temp dir)")
    parser.add_argument("--compare-only", action="store_true")
    opts = parser.parse_args()
    out_dir = os.path.abspath(opts.out or tempfile.mkdtemp(prefix="kc-oneshot-compat-"))
    if not opts.compare_only:
        if not os.path.exists(PI):
            sys.exit(f"missing {PI}: run scripts/bench/oneshot-compat.sh (it installs pi)")
        os.makedirs(out_dir, exist_ok=True)
        for agent in ("pi", "ours"):
            run_agent(agent, out_dir)
    summary, details = compare(out_dir)
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write(summary)
    with open(os.path.join(out_dir, "details.md"), "w") as f:
        f.write(details)
    print(summary)
    print(f"(every record type and path: {os.path.join(out_dir, 'details.md')})", file=sys.stderr)
    if "Unexplained kinds of difference or bugs: 0." not in summary:
        sys.exit(1)
    print(f"(kept in {out_dir})", file=sys.stderr)


if __name__ == "__main__":
    main()
