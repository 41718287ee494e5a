#!/usr/bin/env python3
"""Bounds (issue 31 item 5): what the biggest inputs users meet cost in memory and time, each
checked for its result and that it ends (no hang):

* bash-50mb:   the model runs a command printing 50 MB (print mode);
* read-2gb:    the model reads a 2 GiB sparse file (print mode);
* session-1gb: `--continue -p` on a 1 GiB session file (10,000 messages of ~100 KB);
* rpc-10k:     10,000 RPC commands piped at once (`get_state`), every one answered.

    python3 scripts/reliability/bounds.py [--binary PATH] [--only NAME,...]

Peak RSS comes from `/usr/bin/time -f %M`; wall time around the whole process. Uses the release
build in the shared target folder unless --binary says otherwise. Figures: docs/reliability.md.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/knightcode-rs/target"))
LIMIT_S = 600


class Box:
    """A home, an agent folder with models.json, a project, and the mock model."""

    def __init__(self, args, script):
        self.dir = tempfile.mkdtemp(prefix="kc-bounds-", dir=args.workdir)
        self.home, self.agent, self.project = (os.path.join(self.dir, x) for x in ("home", "agent", "project"))
        for d in (self.home, self.agent, self.project):
            os.makedirs(d)
        path = os.path.join(self.dir, "script.json")
        with open(path, "w") as f:
            json.dump(script, f)
        self.mock = subprocess.Popen([args.mock, "--format", "openai-completions", "--script", path],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        url = self.mock.stdout.readline().decode().strip()
        models = {"providers": {"mock": {"baseUrl": url, "api": "openai-completions", "apiKey": "k", "models": [
            {"id": "mock-model", "name": "Mock", "reasoning": False, "contextWindow": 10_000_000, "maxTokens": 4096}]}}}
        with open(os.path.join(self.agent, "models.json"), "w") as f:
            json.dump(models, f)
        # No automatic compaction of the 1 GiB session: the bound measured is loading it.
        with open(os.path.join(self.agent, "settings.json"), "w") as f:
            json.dump({"compaction": {"enabled": False}}, f)
        self.env = {"PATH": os.environ["PATH"], "HOME": self.home, "KNIGHTCODE_CODING_AGENT_DIR": self.agent}

    def run(self, binary, argv, stdin=None):
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", binary] + argv, cwd=self.project, env=self.env,
                              input=stdin, capture_output=True, timeout=LIMIT_S)
        wall = time.perf_counter() - start
        stderr = proc.stderr.decode(errors="replace").strip().splitlines()
        rss_kib = int(stderr[-1]) if stderr and stderr[-1].isdigit() else 0
        return proc, wall, rss_kib / 1024

    def close(self):
        self.mock.kill()
        self.mock.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def tool(name, arguments):
    return {"parts": [{"toolCall": {"id": "c1", "name": name, "argumentsJson": json.dumps(arguments)}}]}


def bash_50mb(args):
    box = Box(args, [tool("bash", {"command": "head -c 50000000 /dev/zero | tr '\\0' 'a'"}),
                     {"parts": [{"text": "done"}]}])
    try:
        proc, wall, rss = box.run(args.binary, ["-p", "go"])
        ok = proc.returncode == 0 and proc.stdout.decode().strip() == "done"
        return ok, wall, rss, "the tool result is capped (full output in a temp file)"
    finally:
        box.close()


def read_2gb(args):
    box = Box(args, [tool("read", {"path": "big.log"}), {"parts": [{"text": "done"}]}])
    try:
        with open(os.path.join(box.project, "big.log"), "wb") as f:
            f.write(b"first line\n")
            f.truncate(2 * 1024 ** 3)
        proc, wall, rss = box.run(args.binary, ["-p", "go"])
        ok = proc.returncode == 0 and proc.stdout.decode().strip() == "done"
        return ok, wall, rss, "one streaming pass; a NUL-filled file is named binary"
    finally:
        box.close()


def session_1gb(args):
    box = Box(args, [{"parts": [{"text": "resumed"}]}])
    try:
        folder = os.path.join(box.agent, "sessions", "--" + box.project.strip("/").replace("/", "-") + "--")
        os.makedirs(folder)
        sid = str(uuid.uuid4())
        path = os.path.join(folder, f"2026-01-01T00-00-00-000Z_{sid}.jsonl")
        body = "z" * 100_000
        with open(path, "w") as f:
            f.write(json.dumps({"type": "session", "version": 3, "id": sid,
                                "timestamp": "2026-01-01T00:00:00.000Z", "cwd": box.project}) + "\n")
            parent = None
            for i in range(10_000):
                role = "user" if i % 2 == 0 else "assistant"
                message = {"role": role, "content": [{"type": "text", "text": body}], "timestamp": 1767225600000 + i}
                if role == "assistant":
                    message.update({"api": "openai-completions", "provider": "mock", "model": "mock-model",
                                    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                                              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                                    "stopReason": "stop"})
                entry_id = f"{i:08x}"
                f.write(json.dumps({"type": "message", "id": entry_id, "parentId": parent,
                                    "timestamp": "2026-01-01T00:00:00.000Z", "message": message}) + "\n")
                parent = entry_id
        size = os.path.getsize(path)
        proc, wall, rss = box.run(args.binary, ["--continue", "-p", "go on"])
        # The context is far over any window: the request itself may be refused by the mock's
        # size; what is measured is opening and appending, so any clean end counts.
        ok = proc.returncode in (0, 1) and b"panicked" not in proc.stderr
        return ok, wall, rss, f"{size / 1024 ** 3:.2f} GiB file; {proc.stderr.decode(errors='replace').strip().splitlines()[0][:80] if proc.returncode else 'answered'}"
    finally:
        box.close()


def rpc_10k(args):
    box = Box(args, [])
    try:
        lines = "".join(json.dumps({"id": f"q{i}", "type": "get_state"}) + "\n" for i in range(10_000))
        proc, wall, rss = box.run(args.binary, ["--mode", "rpc"], stdin=lines.encode())
        answers = sum(1 for l in proc.stdout.decode().splitlines() if '"type":"response"' in l)
        return proc.returncode == 0 and answers == 10_000, wall, rss, f"{answers} responses"
    finally:
        box.close()


CASES = {"bash-50mb": bash_50mb, "read-2gb": read_2gb, "session-1gb": session_1gb, "rpc-10k": rpc_10k}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(TARGET, "release", "knightcode"))
    parser.add_argument("--mock", default=os.path.join(TARGET, "release", "knightcode-mock-provider"))
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}; binary {args.binary}")
    print("| case | result | wall s | peak RSS MiB | note |")
    print("|---|---|---|---|---|")
    failed = False
    for name in args.only.split(","):
        ok, wall, rss, note = CASES[name](args)
        failed |= not ok
        print(f"| {name} | {'ok' if ok else 'FAILED'} | {wall:.2f} | {rss:.0f} | {note} |", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
