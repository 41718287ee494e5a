#!/usr/bin/env python3
"""What configured MCP servers add to starting a session (issue 30: three stdio servers add at
most 5 ms, connections being in the background). RPC mode, one fresh process and sandbox per
run; `get_state` and `prompt` are written the moment the process starts, and each run records

* ready: process start until the `get_state` response (start-up done, input being read);
* accepted: process start until the `prompt` response (`success: true`: accepted, after
  `before_agent_start`; the model points at a closed port, so the run fails afterwards).

Configurations, interleaved run by run so load falls on all alike:

* `none`: no `mcp.json`;
* `fixture`: three stdio servers, the tests' fixture server (`node`, answers at once);
* `slow`: three stdio servers that answer `initialize` after about 500 ms (`sleep 0.5`, then
  the fixture server);
* `http`: three streamable HTTP servers at a closed loopback port (no process started:
  what reading the config and making the HTTP client cost).

    python3 scripts/bench/mcp_startup.py [--runs 15] [--configs none,fixture,slow]

The first prompt of a session waits up to 10 s for servers still connecting (spec
mcp-codemode-virtual.md 1.3; the reference waits in `before_agent_start`, before it answers
`prompt`), so "accepted" includes the servers' own start-up by design; "ready" is what the
background connections must leave alone. The binary is $KC_BENCH_BINARY, else the release
build in the shared target folder (`kcargo build --release -p knightcode-cli` first).
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from rpc import KNIGHTCODE, Box, Lines, machine, stop  # noqa: E402
FIXTURE = os.path.join(ROOT, "crates", "mcp", "tests", "common", "fixture-server.js")
SERVERS = 3


def mcp_json(config, box):
    if config == "none":
        return None
    if config == "http":
        return {"mcpServers": {f"s{i}": {"url": f"http://127.0.0.1:9/mcp{i}"} for i in range(SERVERS)}}
    node = shutil.which("node")
    if config == "fixture":
        entry = {"command": node, "args": [FIXTURE]}
    else:
        slow = os.path.join(box, "slow-server.sh")
        with open(slow, "w") as f:
            f.write(f"#!/bin/sh\nsleep 0.5\nexec {node} {FIXTURE}\n")
        os.chmod(slow, 0o755)
        entry = {"command": slow}
    return {"mcpServers": {f"s{i}": dict(entry) for i in range(SERVERS)}}


def run(config):
    """(ready ms, accepted ms) of one fresh process."""
    box = Box("ours")
    try:
        servers = mcp_json(config, box.root)
        if servers:
            agent_dir = box.env["KNIGHTCODE_CODING_AGENT_DIR"]
            with open(os.path.join(agent_dir, "mcp.json"), "w") as f:
                json.dump(servers, f)
        start = time.monotonic()
        proc = box.spawn()
        os.write(proc.stdin.fileno(),
                 b'{"type":"get_state","id":"s"}\n{"type":"prompt","id":"p","message":"hi"}\n')
        lines = Lines(proc.stdout.fileno())
        ready = accepted = None
        while accepted is None:
            record = json.loads(lines.next())
            if record.get("id") == "s":
                ready = (time.monotonic() - start) * 1000
            elif record.get("id") == "p":
                accepted = (time.monotonic() - start) * 1000
                if not record.get("success"):
                    raise RuntimeError(f"{config}: prompt refused: {record}")
        stop(proc)
        return ready, accepted
    finally:
        box.remove()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--configs", default="none,fixture,slow")
    opts = parser.parse_args()
    configs = opts.configs.split(",")
    if not os.path.exists(KNIGHTCODE):
        sys.exit(f"missing {KNIGHTCODE}: kcargo build --release -p knightcode-cli")
    if any(c in ("fixture", "slow") for c in configs) and not shutil.which("node"):
        sys.exit("the fixture MCP server needs node on PATH")
    print(f"machine: {machine()}")
    print(f"binary: {KNIGHTCODE}")
    for config in configs:  # warm the page cache (node, the binary)
        run(config)
    samples = {c: [] for c in configs}
    for _ in range(opts.runs):
        for config in configs:
            samples[config].append(run(config))
    base = configs[0]
    base_ready = statistics.median(s[0] for s in samples[base])
    base_accepted = statistics.median(s[1] for s in samples[base])
    print(f"runs: {opts.runs} per configuration, interleaved; medians (min-max)")
    print("| servers | ready (get_state) | added | accepted (prompt) | added |")
    print("|---|---|---|---|---|")
    for config in configs:
        ready = [s[0] for s in samples[config]]
        accepted = [s[1] for s in samples[config]]
        r, a = statistics.median(ready), statistics.median(accepted)
        print(f"| {config} | {r:.1f} ms ({min(ready):.1f}-{max(ready):.1f}) | {r - base_ready:+.1f} ms "
              f"| {a:.1f} ms ({min(accepted):.1f}-{max(accepted):.1f}) | {a - base_accepted:+.1f} ms |")
    print(f"machine after: load average {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
