#!/usr/bin/env python3
"""Extension host start-up and idle cost (issue 14), knightcode vs the reference agent:

* start-up: RPC process start until the response to a `get_state` sent right away, with no
  extension and with ten of the reference's example extensions (`-e` each), and the peak
  RSS (VmHWM) at that moment; each run in a fresh sandbox. For knightcode the ten load
  twice: cold (an empty load cache, as a fresh HOME has) and warm (a cache the first run
  filled, `KNIGHTCODE_EXT_CACHE_DIR`);
* whether the JS runtime starts without extensions (its thread, `knightcode-js`);
* idle: wake-ups (context switches of every thread) and CPU time over a quiet pause with the
  ten extensions loaded.

    python3 scripts/bench/extensions.py [--runs 15] [--idle 10] [--agents ours,pi]
        [--binary path/to/knightcode]   # another build, to compare in one sitting

Needs a release build (`cargo build --release -p knightcode-cli`) and the reference agent in
scripts/pi (`npm ci` there). Prints medians with min and max, and the machine.
"""
import argparse
import os
import shutil
import statistics
import tempfile
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rpc  # noqa: E402  (sandboxes, line reader, machine description)
from tui import threads  # noqa: E402

EXAMPLES = os.path.join(rpc.ROOT, "scripts", "pi", "node_modules", "@mariozechner", "pi-coding-agent",
                        "examples", "extensions")
# Ten examples that load headless and between them import every host package the
# examples use (the CLI API, ai, tui, typebox, node built-ins).
TEN = ["hello.ts", "pirate.ts", "permission-gate.ts", "protected-paths.ts", "todo.ts", "tools.ts",
       "commands.ts", "event-bus.ts", "truncated-tool.ts", "status-line.ts"]


def extension_args():
    args = []
    for name in TEN:
        args += ["-e", os.path.join(EXAMPLES, name)]
    return args


def spawn(box, extensions):
    if extensions:
        box.argv = box.argv + extension_args()
    return box.spawn()


def startup(agent, extensions, cache_dir=None):
    box = rpc.Box(agent)
    if cache_dir:
        box.env["KNIGHTCODE_EXT_CACHE_DIR"] = cache_dir
    try:
        start = time.monotonic()
        proc = spawn(box, extensions)
        os.write(proc.stdin.fileno(), b'{"type":"get_state","id":"s"}\n')
        lines = rpc.Lines(proc.stdout.fileno())
        while True:
            record = rpc.json.loads(lines.next())
            if record.get("id") == "s":
                break
        elapsed = (time.monotonic() - start) * 1000
        if not record.get("success"):
            raise RuntimeError(f"{agent}: get_state failed: {record}")
        rss = rpc.peak_rss_mib(proc.pid)
        names = {name for name, _, _ in threads(proc.pid).values()}
        rpc.stop(proc)
        return elapsed, rss, "knightcode-js" in names
    finally:
        box.remove()


def idle(agent, seconds):
    box = rpc.Box(agent)
    try:
        proc = spawn(box, True)
        lines = rpc.Lines(proc.stdout.fileno())
        os.write(proc.stdin.fileno(), b'{"type":"get_state","id":"s"}\n')
        while rpc.json.loads(lines.next()).get("id") != "s":
            pass
        time.sleep(1.0)  # let start-up work (timers of the examples, GC) finish
        before = threads(proc.pid)
        time.sleep(seconds)
        after = threads(proc.pid)
        wakeups = sum(sw - before.get(tid, (n, 0, sw))[2] for tid, (n, _, sw) in after.items())
        cpu_ms = sum(ns - before.get(tid, (n, ns, 0))[1] for tid, (n, ns, _) in after.items()) / 1e6
        rpc.stop(proc)
        return wakeups, cpu_ms
    finally:
        box.remove()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--agents", default="ours,pi")
    parser.add_argument("--binary", help="the knightcode binary (default: the release build)")
    opts = parser.parse_args()
    if opts.binary:
        rpc.KNIGHTCODE = os.path.abspath(opts.binary)
    agents = opts.agents.split(",")
    print(f"machine: {rpc.machine()}")
    missing = [n for n in TEN if not os.path.exists(os.path.join(EXAMPLES, n))]
    if missing:
        sys.exit(f"missing examples {missing}: run npm ci in scripts/pi")
    samples = {(a, e): [] for a in agents for e in (False, True, "warm")}
    warm_cache = tempfile.mkdtemp(prefix="kc-ext-cache-")
    if "ours" in agents:
        startup("ours", True, warm_cache)  # fills the cache the warm runs read
    for _ in range(opts.runs):
        for agent in agents:
            for extensions in (False, True):
                samples[(agent, extensions)].append(startup(agent, extensions))
            if agent == "ours":
                samples[(agent, "warm")].append(startup(agent, True, warm_cache))
    shutil.rmtree(warm_cache, ignore_errors=True)
    for agent in agents:
        base = samples[(agent, False)]
        loaded = samples[(agent, True)]
        b_ms = statistics.median(s[0] for s in base)
        l_ms = statistics.median(s[0] for s in loaded)
        print(f"{agent}: start-up, no extension: {rpc.describe([s[0] for s in base], 'ms')}, "
              f"peak RSS {statistics.median(s[1] for s in base):.1f} MiB, "
              f"JS thread started: {any(s[2] for s in base)}")
        print(f"{agent}: start-up, ten examples: {rpc.describe([s[0] for s in loaded], 'ms')}, "
              f"peak RSS {statistics.median(s[1] for s in loaded):.1f} MiB")
        print(f"{agent}: added by the ten: {l_ms - b_ms:.1f} ms, "
              f"{statistics.median(s[1] for s in loaded) - statistics.median(s[1] for s in base):.1f} MiB")
        warm = samples[(agent, "warm")]
        if warm:
            w_ms = statistics.median(s[0] for s in warm)
            print(f"{agent}: start-up, ten examples, warm cache: {rpc.describe([s[0] for s in warm], 'ms')}, "
                  f"peak RSS {statistics.median(s[1] for s in warm):.1f} MiB; added: {w_ms - b_ms:.1f} ms")
    for agent in agents:
        wakeups, cpu_ms = idle(agent, opts.idle)
        print(f"{agent}: idle {opts.idle:.0f} s with the ten: {wakeups} wake-ups, {cpu_ms:.1f} ms CPU")


if __name__ == "__main__":
    main()
