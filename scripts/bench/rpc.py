#!/usr/bin/env python3
"""RPC mode, knightcode vs the reference agent (issue 5):

* start-up: process start until the response to a `get_state` sent right away, and the
  process's peak RSS (VmHWM) at that moment, each run in a fresh sandbox;
* round trips: `get_state` sent one at a time, each waiting for its response, in one
  long-lived process (requests per second), and the same number sent pipelined.

    python3 scripts/bench/rpc.py [--runs 15] [--round-trips 20000] [--agents ours,pi]

Prints medians (with min and max) and the machine. No model request is made: the model
points at a closed port and is never asked.
"""
import argparse
import json
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
# KC_BENCH_BINARY: another build of ours (copied aside), to compare two builds in one sitting.
KNIGHTCODE = os.environ.get("KC_BENCH_BINARY") or os.path.join(TARGET, "release", "knightcode")
PI = os.path.join(ROOT, "scripts", "pi", "node_modules", ".bin", "pi")

ARGS = ["--provider", "mock", "--model", "mock-model", "--mode", "rpc"]
MODELS = {"providers": {"mock": {
    "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "mock-api-key",
    "models": [{"id": "mock-model", "name": "Mock", "reasoning": False,
                "contextWindow": 128000, "maxTokens": 4096}]}}}


class Box:
    """A fresh HOME, agent directory and project for one agent process."""

    def __init__(self, agent):
        self.root = tempfile.mkdtemp(prefix=f"kc-rpc-bench-{agent}-")
        home = os.path.join(self.root, "home")
        self.project = os.path.join(self.root, "project")
        agent_dir = os.path.join(home, ".knightcode" if agent == "ours" else ".pi", "agent")
        os.makedirs(agent_dir)
        os.makedirs(self.project)
        with open(os.path.join(agent_dir, "models.json"), "w") as f:
            json.dump(MODELS, f)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TERM": "dumb",
                    "LANG": "C.UTF-8", "TZ": "UTC"}
        if agent == "ours":
            self.env["KNIGHTCODE_CODING_AGENT_DIR"] = agent_dir
            self.argv = [KNIGHTCODE] + ARGS
        else:
            self.env["PI_OFFLINE"] = "1"
            self.argv = [PI] + ARGS

    def spawn(self):
        return subprocess.Popen(self.argv, cwd=self.project, env=self.env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


class Lines:
    """LF-split reader on a raw pipe (no Python buffering layers in the way)."""

    def __init__(self, fd):
        self.fd = fd
        self.buf = b""

    def next(self):
        while b"\n" not in self.buf:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise EOFError("the agent closed its output")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def stop(proc):
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()


def startup(agent):
    box = Box(agent)
    try:
        start = time.monotonic()
        proc = box.spawn()
        os.write(proc.stdin.fileno(), b'{"type":"get_state","id":"s"}\n')
        lines = Lines(proc.stdout.fileno())
        while True:
            record = json.loads(lines.next())
            if record.get("id") == "s":
                break
        elapsed = (time.monotonic() - start) * 1000
        if not record.get("success"):
            raise RuntimeError(f"{agent}: get_state failed: {record}")
        rss = peak_rss_mib(proc.pid)
        stop(proc)
        return elapsed, rss
    finally:
        box.remove()


def round_trips(agent, count):
    """(sequential requests/s, pipelined requests/s) in one process."""
    box = Box(agent)
    try:
        proc = box.spawn()
        fd_in, lines = proc.stdin.fileno(), Lines(proc.stdout.fileno())
        os.write(fd_in, b'{"type":"get_state","id":"warm"}\n')
        lines.next()
        request = b'{"type":"get_state","id":"r"}\n'
        start = time.monotonic()
        for _ in range(count):
            os.write(fd_in, request)
            lines.next()
        sequential = count / (time.monotonic() - start)

        # Pipelined: a writer that never waits, the reader draining as fast as it can.
        payload = request * count
        start = time.monotonic()
        sent, received = 0, 0
        os.set_blocking(fd_in, False)
        while received < count:
            want_write = [fd_in] if sent < len(payload) else []
            readable, writable, _ = select.select([lines.fd], want_write, [])
            if writable:
                try:
                    sent += os.write(fd_in, payload[sent:sent + (1 << 16)])
                except BlockingIOError:
                    pass
            if readable:
                chunk = os.read(lines.fd, 1 << 20)
                if not chunk:
                    raise EOFError("the agent closed its output")
                received += chunk.count(b"\n")
        pipelined = count / (time.monotonic() - start)
        os.set_blocking(fd_in, True)
        stop(proc)
        return sequential, pipelined
    finally:
        box.remove()


def machine():
    model = "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name")), "?")
    except OSError:
        pass
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return f"{os.cpu_count()} cores, {model}, Linux {platform.release()}, load average {load}"


def describe(values, unit, digits=1):
    return (f"median {statistics.median(values):.{digits}f} {unit} "
            f"(min {min(values):.{digits}f}, max {max(values):.{digits}f}, n={len(values)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--round-trips", type=int, default=20000)
    parser.add_argument("--rt-runs", type=int, default=3, help="round-trip runs per agent")
    parser.add_argument("--agents", default="ours,pi")
    opts = parser.parse_args()
    agents = opts.agents.split(",")
    print(f"machine: {machine()}")
    for agent in agents:
        binary = KNIGHTCODE if agent == "ours" else PI
        if not os.path.exists(binary):
            sys.exit(f"missing {binary}: run scripts/bench/rpc.sh")
    # Interleaved, so that load changes hit both sides alike.
    samples = {agent: [] for agent in agents}
    for _ in range(opts.runs):
        for agent in agents:
            samples[agent].append(startup(agent))
    for agent in agents:
        times = [s[0] for s in samples[agent]]
        rss = [s[1] for s in samples[agent]]
        print(f"{agent:>4} start to get_state: {describe(times, 'ms')}; peak RSS {describe(rss, 'MiB')}")
    for agent in agents:
        # The reference is slow enough that a tenth of the requests gives a stable rate.
        count = opts.round_trips if agent == "ours" else max(opts.round_trips // 10, 100)
        results = [round_trips(agent, count) for _ in range(opts.rt_runs)]
        seq = [r[0] for r in results]
        pipe = [r[1] for r in results]
        print(f"{agent:>4} get_state round trips ({count} per run): sequential {describe(seq, '/s', 0)}; "
              f"pipelined {describe(pipe, '/s', 0)}")
    print(f"machine after: load average {open('/proc/loadavg').read().split()[0:3]}")


if __name__ == "__main__":
    main()
