#!/usr/bin/env python3
"""What the OS sandbox adds to starting a command: `bash -c true` run directly against the same
command through `knightcode __sandbox-exec` (workspace-write, network off: Landlock and the
seccomp filter applied, then exec), as the bash tool starts it. Prints machine details and the
medians; the issue's budget is at most 2 ms more per command.

    python3 scripts/bench/sandbox.py [--runs N] [--binary PATH]

The binary defaults to $KC_BENCH_BINARY, else the release build in the shared target folder
(`cargo build --release -p knightcode-cli` first). Runs alternate between the two commands so
load on the machine falls on both alike; each is posix_spawn + wait, timed around exactly that.
"""
import argparse
import os
import platform
import statistics
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/knightcode-rs/target"))


def timed(argv):
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ)
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed with {status}")
    return elapsed * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--binary", default=os.environ.get("KC_BENCH_BINARY", os.path.join(TARGET, "release", "knightcode")))
    args = parser.parse_args()
    bash = "/bin/bash"
    with tempfile.TemporaryDirectory() as project:
        direct = [bash, "-c", "true"]
        sandboxed = [args.binary, "__sandbox-exec", "--mode", "workspace-write", "--write", project,
                     "--write", "/tmp", "--", bash, "-c", "true"]
        for _ in range(10):  # warm the page cache
            timed(direct)
            timed(sandboxed)
        plain, boxed = [], []
        for _ in range(args.runs):
            plain.append(timed(direct))
            boxed.append(timed(sandboxed))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}")
    print(f"binary: {args.binary}")
    print(f"runs: {args.runs} each, alternating")
    p, b = statistics.median(plain), statistics.median(boxed)
    print("| command | median ms | p90 ms |")
    print("|---|---|---|")
    print(f"| `bash -c true` | {p:.2f} | {statistics.quantiles(plain, n=10)[-1]:.2f} |")
    print(f"| through `__sandbox-exec` (workspace-write, no network) | {b:.2f} | {statistics.quantiles(boxed, n=10)[-1]:.2f} |")
    print(f"| added by the sandbox | {b - p:.2f} | |")


if __name__ == "__main__":
    main()
