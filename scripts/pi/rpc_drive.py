#!/usr/bin/env python3
"""Drive `pi --mode rpc` with a fixed command sequence and record the transcript.

usage: rpc_drive.py SCENARIO --in-log rpc-in.jsonl --out-log rpc-out.jsonl [--stderr-log F] -- PI_CMD...

Every command written to pi's stdin is appended to --in-log, every line pi writes to
stdout is appended verbatim to --out-log.  After each command the driver waits for its
`response` (matched by id), for `agent_end` when the command starts an agent run, and then
for a short quiet period so that the transcript order is stable between re-records.

Scenarios:
  rpc       prompts, state, model/thinking changes, session name, stats, bash, clone
  rpc-tree  custom/custom_message/label entries, tree navigation with branch summary,
            manual compaction, fork
  check     get_messages + get_state only (used by check-load.sh); prints both responses
            and exits 1 on an error response or when no messages are returned
"""

import argparse
import json
import subprocess
import sys
import threading
import time

QUIET = 0.3  # seconds of silence on stdout that count as "settled"


class Rpc:
    def __init__(self, cmd, in_log, out_log, stderr_log, cwd=None):
        self.in_f = open(in_log, "w", encoding="utf-8") if in_log else None
        self.out_f = open(out_log, "wb") if out_log else None
        self.err_f = open(stderr_log, "wb") if stderr_log else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err_f, cwd=cwd
        )
        self.lines = []  # parsed stdout records (or {"_raw": ...} when not JSON)
        self.raw = []  # the same lines as pi wrote them (bytes, without the LF)
        self.cond = threading.Condition()
        self.last_output = time.monotonic()
        self.eof = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.seq = 0

    def _read(self):
        buf = b""
        stream = self.proc.stdout
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(1)
            if not chunk:
                break
            buf += chunk
            # strict JSONL: split on LF only
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                self._line(line)
        if buf:
            self._line(buf)
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def _line(self, raw):
        if self.out_f:
            self.out_f.write(raw + b"\n")
            self.out_f.flush()
        try:
            rec = json.loads(raw.rstrip(b"\r"))
        except ValueError:
            rec = {"_raw": raw.decode("utf-8", "replace")}
        with self.cond:
            self.lines.append(rec)
            self.raw.append(raw)
            self.last_output = time.monotonic()
            self.cond.notify_all()

    # -- sending ---------------------------------------------------------------------
    def send(self, cmd):
        line = json.dumps(cmd, ensure_ascii=False, separators=(",", ":"))
        if self.in_f:
            self.in_f.write(line + "\n")
            self.in_f.flush()
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def next_id(self):
        self.seq += 1
        return "req-%d" % self.seq

    # -- waiting ---------------------------------------------------------------------
    def wait_for(self, pred, start, timeout=30):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i in range(start, len(self.lines)):
                    if pred(self.lines[i]):
                        return i, self.lines[i]
                if self.eof:
                    raise RuntimeError("pi exited while waiting")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("timed out waiting for pi output")
                self.cond.wait(left)

    def settle(self, quiet=QUIET, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.cond:
                idle = time.monotonic() - self.last_output
            if idle >= quiet:
                return
            time.sleep(quiet - idle + 0.01)

    def call(self, cmd, run=False, timeout=60):
        """Send cmd with a fresh id; wait for its response (and agent_end if run)."""
        cmd = dict(cmd)
        cmd.setdefault("id", self.next_id())
        start = len(self.lines)
        self.send(cmd)
        # pi answers unknown commands without echoing the id, so also accept an id-less
        # response for the same command name
        idx, resp = self.wait_for(
            lambda r: r.get("type") == "response"
            and (r.get("id") == cmd["id"] or ("id" not in r and r.get("command") == cmd["type"])),
            start,
            timeout,
        )
        if run and resp.get("success"):
            self.wait_for(lambda r: r.get("type") == "agent_end", start, timeout)
        self.settle()
        self.last_raw = self.raw[idx]
        return resp

    def events_since(self, start, typ):
        with self.cond:
            return [r for r in self.lines[start:] if r.get("type") == typ]

    def close(self, timeout=10):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)
        for f in (self.in_f, self.out_f):
            if f:
                f.close()
        return self.proc.returncode


def expect(resp, what):
    if not resp.get("success"):
        raise RuntimeError("%s failed: %s" % (what, json.dumps(resp)))
    return resp


def last_notify(rpc):
    """Payload of the latest extension notify request (JSON text)."""
    with rpc.cond:
        for r in reversed(rpc.lines):
            if r.get("type") == "extension_ui_request" and r.get("method") == "notify":
                return json.loads(r["message"])
    raise RuntimeError("no notify seen")


def scenario_rpc(rpc):
    expect(rpc.call({"type": "get_state"}), "get_state")
    expect(rpc.call({"type": "get_available_models"}), "get_available_models")
    expect(rpc.call({"type": "get_commands"}), "get_commands")
    # turn 0 of the script: thinking + text
    expect(rpc.call({"type": "prompt", "message": "Say hello"}, run=True), "prompt 1")
    expect(rpc.call({"type": "set_session_name", "name": "kc fixture rpc"}), "set_session_name")
    expect(rpc.call({"type": "set_thinking_level", "level": "high"}), "set_thinking_level")
    expect(rpc.call({"type": "cycle_thinking_level"}), "cycle_thinking_level")
    expect(rpc.call({"type": "set_thinking_level", "level": "low"}), "set_thinking_level low")
    # mock-model-2 has reasoning: false -> the thinking level gets clamped to "off"
    expect(rpc.call({"type": "set_model", "provider": "mock", "modelId": "mock-model-2"}), "set_model")
    # turns 1-2: a bash tool call, then text
    expect(rpc.call({"type": "prompt", "message": "Run echo rpc"}, run=True), "prompt 2")
    # user-initiated bash (bashExecution message)
    expect(rpc.call({"type": "bash", "command": "echo from-rpc-bash"}), "bash")
    # turn 3: text (context now contains the bashExecution message)
    expect(rpc.call({"type": "prompt", "message": "Thanks"}, run=True), "prompt 3")
    expect(rpc.call({"type": "set_model", "provider": "mock", "modelId": "mock-model"}), "set_model back")
    expect(rpc.call({"type": "get_last_assistant_text"}), "get_last_assistant_text")
    expect(rpc.call({"type": "get_fork_messages"}), "get_fork_messages")
    expect(rpc.call({"type": "get_messages"}), "get_messages")
    expect(rpc.call({"type": "get_session_stats"}), "get_session_stats")
    expect(rpc.call({"type": "get_state"}), "get_state 2")
    # error response shape
    rpc.call({"type": "set_model", "provider": "mock", "modelId": "no-such-model"})
    rpc.call({"type": "no_such_command"})
    # clone the active branch into a new session file
    expect(rpc.call({"type": "clone"}), "clone")
    expect(rpc.call({"type": "get_state"}), "get_state after clone")
    expect(rpc.call({"type": "get_messages"}), "get_messages after clone")


def scenario_rpc_tree(rpc):
    expect(rpc.call({"type": "get_commands"}), "get_commands")
    # turns 0,1: two plain exchanges
    expect(rpc.call({"type": "prompt", "message": "First question"}, run=True), "prompt 1")
    expect(rpc.call({"type": "prompt", "message": "Second question"}, run=True), "prompt 2")
    expect(rpc.call({"type": "prompt", "message": "/kc-entry"}), "custom entry")
    expect(rpc.call({"type": "prompt", "message": "/kc-entries"}), "entries")
    tree = last_notify(rpc)
    msgs = [e for e in tree["entries"] if e["type"] == "message"]
    first_user = next(e for e in msgs if e["role"] == "user")
    first_assistant = next(e for e in msgs if e["role"] == "assistant")
    expect(rpc.call({"type": "prompt", "message": "/kc-label %s first-question" % first_user["id"]}), "label")
    expect(rpc.call({"type": "prompt", "message": "/kc-label %s answer-one" % first_assistant["id"]}), "label 2")
    expect(rpc.call({"type": "prompt", "message": "/kc-unlabel %s" % first_assistant["id"]}), "unlabel")
    # branch: go back to the first assistant answer, summarising the abandoned branch
    expect(rpc.call({"type": "prompt", "message": "/kc-navigate %s" % first_assistant["id"]}), "navigate")
    # custom message on the new branch: part of the LLM context from now on
    expect(rpc.call({"type": "prompt", "message": "/kc-message"}), "custom message")
    # turn 2: continue on the new branch
    expect(rpc.call({"type": "prompt", "message": "Alternative second question"}, run=True), "prompt 3")
    # manual compaction (summary request), then turn 3 after compaction
    expect(rpc.call({"type": "compact", "customInstructions": "Keep it short"}, timeout=60), "compact")
    expect(rpc.call({"type": "prompt", "message": "After compaction"}, run=True), "prompt 4")
    expect(rpc.call({"type": "get_messages"}), "get_messages")
    expect(rpc.call({"type": "get_session_stats"}), "get_session_stats")
    expect(rpc.call({"type": "prompt", "message": "/kc-entries"}), "entries 2")
    expect(rpc.call({"type": "get_fork_messages"}), "get_fork_messages")
    with rpc.cond:
        forks = [r for r in rpc.lines if r.get("command") == "get_fork_messages"][-1]
    target = forks["data"]["messages"][-1]["entryId"]
    # fork before the last user message into a new session file, then talk there (turn 4)
    expect(rpc.call({"type": "fork", "entryId": target}), "fork")
    expect(rpc.call({"type": "prompt", "message": "Hello from the fork"}, run=True), "prompt fork")
    expect(rpc.call({"type": "get_state"}), "get_state fork")


def scenario_check(rpc):
    ok = True
    msgs = rpc.call({"type": "get_messages", "id": "1"})
    msgs_raw = rpc.last_raw
    state = rpc.call({"type": "get_state", "id": "2"})
    state_raw = rpc.last_raw
    for resp, raw in ((msgs, msgs_raw), (state, state_raw)):
        sys.stdout.buffer.write(raw + b"\n")
        if not resp.get("success"):
            ok = False
    sys.stdout.flush()
    n = len((msgs.get("data") or {}).get("messages") or [])
    print("messages: %d" % n, file=sys.stderr)
    if n == 0:
        ok = False
    return 0 if ok else 1


SCENARIOS = {"rpc": scenario_rpc, "rpc-tree": scenario_rpc_tree, "check": scenario_check}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--in-log")
    ap.add_argument("--out-log")
    ap.add_argument("--stderr-log")
    ap.add_argument("--cwd")
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("missing '-- PI_CMD...'")
    split = argv.index("--")
    args = ap.parse_args(argv[:split])
    cmd = argv[split + 1 :]
    if not cmd:
        ap.error("missing pi command after --")
    rpc = Rpc(cmd, args.in_log, args.out_log, args.stderr_log, cwd=args.cwd)
    status = 1
    try:
        status = SCENARIOS[args.scenario](rpc) or 0
    except Exception as exc:  # noqa: BLE001 - report and fail
        print("rpc_drive: %s: %s" % (type(exc).__name__, exc), file=sys.stderr)
        status = 1
    finally:
        rc = rpc.close()
    if rc not in (0, None, -15) and status == 0:
        print("rpc_drive: pi exited with %s" % rc, file=sys.stderr)
        status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
