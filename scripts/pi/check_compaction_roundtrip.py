#!/usr/bin/env python3
"""Compaction round trip with the reference agent (pi), both directions.

1. knightcode talks to the scripted mock (mock_openai.py) over RPC: two prompts, `compact`,
   end.  Its session file now holds our `compaction` entry.
2. pi continues a copy of that file with one more prompt; knightcode continues another copy
   with the same prompt.  Both requests must carry the same conversation: our summary (as the
   `<summary>` user message), then the kept entries, and not the compacted ones.
3. pi compacts a session of its own the same way; knightcode continues it and must send the
   conversation pi sends when it continues it.

Usage: check_compaction_roundtrip.py KNIGHTCODE_BIN PI_BIN
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = "## Goal\nROUNDTRIP-SUMMARY of the earlier turn"


def start_mock(base):
    port_file = os.path.join(base, "mock.port")
    proc = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "mock_openai.py"), "--port", "0", "--port-file", port_file],
        stderr=open(os.path.join(base, "mock.stderr"), "w"),
    )
    for _ in range(200):
        if os.path.exists(port_file) and open(port_file).read().strip():
            return proc, int(open(port_file).read().strip())
        time.sleep(0.05)
    raise SystemExit("the mock server did not start")


def load(port, turns, log):
    script = {"summary": SUMMARY, "turns": [{"text": [t], "usage": {"prompt_tokens": 50, "completion_tokens": 5}} for t in turns]}
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/_control/load",
        data=json.dumps({"script": script, "log": log}).encode(),
        headers={"content-type": "application/json"},
    )
    urllib.request.urlopen(req).read()


def requests(log):
    with open(log) as f:
        return [json.loads(line) for line in f if line.strip()]


def home(base, name, port):
    """A throwaway HOME with the mock provider for both agents."""
    h = os.path.join(base, name)
    models = {"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "mock-api-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "reasoning": False,
                    "contextWindow": 128000, "maxTokens": 4096}]}}}
    settings = {"compaction": {"keepRecentTokens": 5}, "defaultProvider": "mock", "defaultModel": "mock-model"}
    for agent in (".pi/agent", ".knightcode/agent"):
        d = os.path.join(h, agent)
        os.makedirs(d, exist_ok=True)
        json.dump(models, open(os.path.join(d, "models.json"), "w"))
        json.dump(settings, open(os.path.join(d, "settings.json"), "w"))
    os.makedirs(os.path.join(h, "cwd"), exist_ok=True)
    return h


def rpc(cmd, h, commands, session=None):
    """Runs an agent in RPC mode, sending each command after the previous one is answered
    (a prompt: after its run settled). Returns the session file it used."""
    args = list(cmd) + ["--mode", "rpc", "--provider", "mock", "--model", "mock-model"]
    if session:
        args += ["--session", session]
    env = {"PATH": os.environ["PATH"], "HOME": h, "PI_OFFLINE": "1", "TERM": "dumb", "LANG": "C.UTF-8"}
    proc = subprocess.Popen(args, cwd=os.path.join(h, "cwd"), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=open(os.path.join(h, "stderr.txt"), "w"), text=True)

    def read_until(pred):
        deadline = time.time() + 60
        while time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"{cmd[0]} ended early; stderr:\n" + open(os.path.join(h, "stderr.txt")).read())
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if pred(record):
                return record
        raise SystemExit(f"{cmd[0]}: no answer in time")

    state = None
    for i, command in enumerate(commands + [{"type": "get_state"}]):
        command = dict(command, id=f"c{i}")
        proc.stdin.write(json.dumps(command) + "\n")
        proc.stdin.flush()
        response = read_until(lambda r: r.get("type") == "response" and r.get("id") == f"c{i}")
        if not response.get("success"):
            raise SystemExit(f"{cmd[0]} refused {command}: {response}")
        if command["type"] == "prompt":
            read_until(lambda r: r.get("type") == "agent_end")
        state = response.get("data")
    proc.stdin.close()
    proc.wait(timeout=30)
    return state["sessionFile"]


def conversation(body):
    """The non-system messages of a request as (role, text)."""
    out = []
    for m in body["messages"]:
        if m["role"] in ("system", "developer"):
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        out.append((m["role"], content or ""))
    return out


def check(label, ok, detail):
    print(("ok   " if ok else "FAIL ") + label)
    if not ok:
        print(detail)
    return ok


def main():
    kc, pi = sys.argv[1], sys.argv[2]
    base = tempfile.mkdtemp(prefix="kc-compaction-roundtrip.")
    mock, port = start_mock(base)
    good = True
    try:
        prompts = [{"type": "prompt", "message": "first question"},
                   {"type": "prompt", "message": "second question"},
                   {"type": "compact"}]
        for writer, cmd in (("knightcode", [kc]), ("pi", [pi])):
            h = home(base, f"{writer}-home", port)
            load(port, ["first answer", "second answer"], os.path.join(base, f"{writer}-write.jsonl"))
            file = rpc(cmd, h, prompts)
            written = [json.loads(l) for l in open(file) if l.strip()]
            good &= check(f"{writer} wrote a compaction entry",
                          any(e.get("type") == "compaction" for e in written), written)
            seen = {}
            for reader, rcmd in (("pi", [pi]), ("knightcode", [kc])):
                rh = home(base, f"{writer}-by-{reader}", port)
                copy = os.path.join(rh, "session.jsonl")
                shutil.copy(file, copy)
                log = os.path.join(base, f"{writer}-by-{reader}.jsonl")
                load(port, ["third answer"], log)
                rpc(rcmd, rh, [{"type": "prompt", "message": "third question"}], session=copy)
                turns = [r for r in requests(log) if r["kind"] == "turn"]
                seen[reader] = conversation(turns[-1]["body"])
            texts = "\n".join(t for _, t in seen["pi"])
            good &= check(f"pi continues {writer}'s compacted session from the summary",
                          SUMMARY in texts and "second question" in texts and "first question" not in texts,
                          seen["pi"])
            good &= check(f"knightcode sends what pi sends for {writer}'s compacted session",
                          seen["pi"] == seen["knightcode"],
                          json.dumps(seen, indent=1))
    finally:
        mock.terminate()
        shutil.rmtree(base, ignore_errors=True)
    print("check-compaction-roundtrip: " + ("OK" if good else "FAILED"))
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
