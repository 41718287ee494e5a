#!/usr/bin/env python3
"""What storing the session costs a prompt (issue 31: persisting at prompt time and the atomic
writes cost at most 1 ms a prompt). RPC mode, one fresh process and sandbox per run: once
`get_state` has answered (start-up done), `prompt` is written and the time to its response is
taken. A prompt is answered after its session file exists with the header and the user
message (acknowledged means stored, docs/reliability.md), so the difference between a run
that stores its session and one with `--no-session` is what persisting at prompt time costs;
the model points at a closed port, so the run fails afterwards.

    python3 scripts/bench/persist_prompt.py [--runs 40]

The binary is $KC_BENCH_BINARY, else the release build in the shared target folder.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from rpc import KNIGHTCODE, Box, Lines, machine, stop  # noqa: E402


def run(stored):
    """Milliseconds from writing `prompt` to its response, in a fresh process."""
    box = Box("ours")
    try:
        if not stored:
            box.argv.append("--no-session")
        proc = box.spawn()
        lines = Lines(proc.stdout.fileno())
        os.write(proc.stdin.fileno(), b'{"type":"get_state","id":"s"}\n')
        while json.loads(lines.next()).get("id") != "s":
            pass
        start = time.monotonic()
        os.write(proc.stdin.fileno(), b'{"type":"prompt","id":"p","message":"hi"}\n')
        while True:
            record = json.loads(lines.next())
            if record.get("id") == "p":
                took = (time.monotonic() - start) * 1000
                if not record.get("success"):
                    raise RuntimeError(f"prompt refused: {record}")
                break
        stop(proc)
        sessions = os.path.join(box.env["KNIGHTCODE_CODING_AGENT_DIR"], "sessions")
        files = [f for _, _, names in os.walk(sessions) for f in names if f.endswith(".jsonl")]
        if stored != bool(files):
            raise RuntimeError(f"stored={stored} but session files: {files}")
        return took
    finally:
        box.remove()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    opts = parser.parse_args()
    if not os.path.exists(KNIGHTCODE):
        sys.exit(f"missing {KNIGHTCODE}: kcargo build --release -p knightcode-cli")
    print(f"machine: {machine()}")
    print(f"binary: {KNIGHTCODE}")
    run(True), run(False)  # warm the page cache
    samples = {True: [], False: []}
    for _ in range(opts.runs):
        for stored in (False, True):
            samples[stored].append(run(stored))
    base = statistics.median(samples[False])
    print(f"runs: {opts.runs} each, interleaved; medians (min-max)")
    print("| session | prompt answered | added |")
    print("|---|---|---|")
    for stored, name in ((False, "--no-session"), (True, "stored")):
        values = samples[stored]
        m = statistics.median(values)
        print(f"| {name} | {m:.2f} ms ({min(values):.2f}-{max(values):.2f}) | {m - base:+.2f} ms |")
    print(f"machine after: load average {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
