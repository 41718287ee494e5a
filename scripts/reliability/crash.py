#!/usr/bin/env python3
"""The crash suite (issue 31): `kill -9` at random points of real runs, then check that nothing
the agent acknowledged was lost.

Each trial starts the mock model (`knightcode-mock-provider`, a four-turn read/bash/edit
script streamed in small paced chunks), runs knightcode in print, JSON or RPC mode in a fresh
sandbox, and kills it with SIGKILL after a random delay within the run's usual length. Then:

* every complete line of the session file parses as JSON (a cut-off last line is allowed: the
  next owner sets it aside);
* every message a `message_end` event reported on stdout (JSON and RPC modes) is in the file;
* `knightcode --continue -p ...` resumes the session and answers (exit 0).

    python3 scripts/reliability/crash.py [--kills 100] [--seed N] [--binary PATH]

Uses the debug build in $CARGO_TARGET_DIR (a `cargo test` or `cargo build` makes it). Prints a
summary; exits 1 when any check failed. Figures: docs/reliability.md.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
MODES = ("print", "json", "rpc")


def tool_call(call_id, name, args):
    return {"toolCall": {"id": call_id, "name": name, "argumentsJson": json.dumps(args)}}


# Four model turns, each streamed 4 characters per millisecond so that a run lasts long enough
# for kills to land inside streaming, tool execution and the writes between them.
PACED = {"textChars": 4, "intervalMs": 1}
SCRIPT = [
    {"parts": [{"text": "Reading the notes first. " * 8}, tool_call("c1", "read", {"path": "notes.txt"})],
     "chunking": PACED},
    {"parts": [{"text": "Listing the folder. " * 8}, tool_call("c2", "bash", {"command": "ls; sleep 0.05"})],
     "chunking": PACED},
    {"parts": [tool_call("c3", "edit", {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]})],
     "chunking": PACED},
    {"parts": [{"text": "Done: beta is now BETA. " * 8}], "chunking": PACED},
]
RESUME_SCRIPT = [{"parts": [{"text": "Resumed."}]}]


class Mock:
    """The scripted model on a free port, for one trial."""

    def __init__(self, binary, script, workdir):
        path = os.path.join(workdir, f"script-{len(script)}.json")
        with open(path, "w") as f:
            json.dump(script, f)
        self.process = subprocess.Popen(
            [binary, "--format", "openai-completions", "--script", path],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.url = self.process.stdout.readline().strip()
        if not self.url:
            raise SystemExit("the mock provider did not start")

    def stop(self):
        self.process.kill()
        self.process.wait()


def sandbox(root, url):
    home, agent, project = (os.path.join(root, d) for d in ("home", "agent", "project"))
    for d in (home, agent, project):
        os.makedirs(d, exist_ok=True)
    models = {"providers": {"mock": {
        "baseUrl": url, "api": "openai-completions", "apiKey": "test-key",
        "models": [{"id": "mock-model", "name": "Mock", "reasoning": False, "input": ["text"],
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    "contextWindow": 200000, "maxTokens": 8192}]}}}
    with open(os.path.join(agent, "models.json"), "w") as f:
        json.dump(models, f)
    with open(os.path.join(project, "notes.txt"), "w") as f:
        f.write("alpha\nbeta\ngamma\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "KNIGHTCODE_CODING_AGENT_DIR": agent}
    return env, agent, project


def set_models_url(agent, url):
    path = os.path.join(agent, "models.json")
    with open(path) as f:
        models = json.load(f)
    models["providers"]["mock"]["baseUrl"] = url
    with open(path, "w") as f:
        json.dump(models, f)


def start(binary, mode, env, project):
    args = [binary, "--provider", "mock", "--model", "mock-model"]
    prompt = "Change beta to BETA in notes.txt"
    if mode == "print":
        args += ["-p", prompt]
    elif mode == "json":
        args += ["--mode", "json", "-p", prompt]
    else:
        args += ["--mode", "rpc"]
    # Print and JSON modes read piped stdin into the prompt: give them none.
    stdin = subprocess.PIPE if mode == "rpc" else subprocess.DEVNULL
    process = subprocess.Popen(args, cwd=project, env=env, stdin=stdin,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if mode == "rpc":
        line = json.dumps({"type": "prompt", "message": prompt, "id": "p"}) + "\n"
        process.stdin.write(line.encode())
        process.stdin.flush()
    return process


def session_files(agent):
    found = []
    for base, _, names in os.walk(os.path.join(agent, "sessions")):
        found += [os.path.join(base, n) for n in names if n.endswith(".jsonl")]
    return sorted(found)


def reported_messages(stdout):
    """(role, timestamp) of each message a complete `message_end` line reported."""
    reported = []
    for line in stdout.split(b"\n")[:-1]:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "message_end":
            message = event.get("message", {})
            reported.append((message.get("role"), message.get("timestamp")))
    return reported


def check(agent, mode, stdout):
    """Problems found in the session left by a killed run."""
    problems = []
    files = session_files(agent)
    stored = []
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        for number, line in enumerate(lines[:-1], 1):
            try:
                entry = json.loads(line)
            except ValueError as e:
                problems.append(f"{os.path.basename(path)} line {number} does not parse: {e}")
                continue
            message = entry.get("message")
            if entry.get("type") == "message" and isinstance(message, dict):
                stored.append((message.get("role"), message.get("timestamp")))
    if mode != "print":
        for role, timestamp in reported_messages(stdout):
            # Tool results and custom messages are stored under their own entry shapes too;
            # every reported message is a `message` entry with the same timestamp.
            if (role, timestamp) not in stored:
                problems.append(f"a {role} message reported by message_end (timestamp {timestamp}) is not in the file")
    return problems, files


def resume(binary, env, project, agent, mock_binary, workdir):
    mock = Mock(mock_binary, RESUME_SCRIPT, workdir)
    try:
        set_models_url(agent, mock.url)
        run = subprocess.run([binary, "--provider", "mock", "--model", "mock-model", "--continue", "-p", "again"],
                             cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        if run.returncode != 0 or b"Resumed." not in run.stdout:
            return [f"--continue failed (exit {run.returncode}): {run.stderr.decode(errors='replace')[-300:]}"]
        return []
    finally:
        mock.stop()


def typical_duration(binary, mock_binary, workdir):
    """How long an unkilled JSON run takes here (kills land within it)."""
    root = tempfile.mkdtemp(dir=workdir)
    mock = Mock(mock_binary, SCRIPT, root)
    try:
        env, _, project = sandbox(root, mock.url)
        started = time.monotonic()
        process = start(binary, "json", env, project)
        process.communicate(timeout=120)
        return time.monotonic() - started
    finally:
        mock.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--binary", default=os.path.join(TARGET, "debug", "knightcode"))
    parser.add_argument("--mock", default=os.path.join(TARGET, "debug", "knightcode-mock-provider"))
    opts = parser.parse_args()
    for path in (opts.binary, opts.mock):
        if not os.path.exists(path):
            sys.exit(f"missing {path}: cargo build -p knightcode-cli -p knightcode-testkit first")
    seed = opts.seed if opts.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    workdir = tempfile.mkdtemp(prefix="kc-crash-")
    failures = []
    counts = {"kills": 0, "sessions": 0, "entries": 0, "resumed": 0, "finished_first": 0}
    per_mode = {mode: [0, 0] for mode in MODES}
    try:
        span = typical_duration(opts.binary, opts.mock, workdir)
        for trial in range(opts.kills):
            mode = MODES[trial % len(MODES)]
            root = tempfile.mkdtemp(dir=workdir)
            mock = Mock(opts.mock, SCRIPT, root)
            try:
                env, agent, project = sandbox(root, mock.url)
                process = start(opts.binary, mode, env, project)
                # Read stdout as it comes, so that a full pipe never holds the run up.
                chunks = []
                reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: process.stdout.read(65536), b"")))
                reader.start()
                delay = rng.uniform(0, span * 1.1)
                try:
                    process.wait(timeout=delay)
                    counts["finished_first"] += 1
                except subprocess.TimeoutExpired:
                    process.send_signal(signal.SIGKILL)
                    counts["kills"] += 1
                process.wait()
                reader.join()
                stdout = b"".join(chunks)
            finally:
                mock.stop()
            problems, files = check(agent, mode, stdout)
            per_mode[mode][0] += 1
            if files:
                per_mode[mode][1] += 1
                counts["sessions"] += 1
                with open(files[-1], "rb") as f:
                    counts["entries"] += max(0, f.read().count(b"\n") - 1)
                resumed = resume(opts.binary, env, project, agent, opts.mock, root)
                problems += resumed
                if not resumed:
                    counts["resumed"] += 1
            for problem in problems:
                failures.append(f"trial {trial} ({mode}, killed after {delay:.3f}s): {problem}")
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"crash suite: seed {seed}, {opts.kills} trials ({counts['kills']} killed, "
          f"{counts['finished_first']} finished first) over a {span:.2f}s run; "
          f"{counts['sessions']} sessions with {counts['entries']} entries checked, "
          f"{counts['resumed']} resumed with --continue; {len(failures)} problems")
    print("  by mode (trials, sessions left): " + ", ".join(f"{m} {t}/{n}" for m, (t, n) in per_mode.items()))
    for failure in failures:
        print("  " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
