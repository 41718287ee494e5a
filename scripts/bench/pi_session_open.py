#!/usr/bin/env python3
"""Time the reference agent (pi) opening a session: process start until its RPC answer to
`get_state`, and the process's peak RSS. Prints medians over several runs.

    python3 scripts/bench/pi_session_open.py SESSION.jsonl [RUNS]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PI = os.path.join(ROOT, "scripts", "pi", "node_modules", ".bin", "pi")


def peak_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def one_run(session):
    home = tempfile.mkdtemp(prefix="kc-pi-bench-")
    try:
        os.makedirs(os.path.join(home, ".pi", "agent"))
        copy = os.path.join(home, "session.jsonl")
        shutil.copyfile(session, copy)
        env = {"PATH": os.environ["PATH"], "HOME": home, "PI_OFFLINE": "1", "TERM": "dumb"}
        start = time.monotonic()
        proc = subprocess.Popen(
            [PI, "--mode", "rpc", "--session", copy],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd="/tmp",
        )
        proc.stdin.write(b'{"type":"get_state","id":"bench"}\n')
        proc.stdin.flush()
        for line in proc.stdout:
            record = json.loads(line)
            if record.get("id") == "bench":
                elapsed = (time.monotonic() - start) * 1000
                rss = peak_rss_kib(proc.pid)
                proc.kill()
                proc.wait()
                return elapsed, rss / 1024
        proc.wait()
        raise RuntimeError(proc.stderr.read().decode(errors="replace"))
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main():
    session = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if not os.path.exists(PI):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=os.path.dirname(PI) + "/../..", check=True)
    results = [one_run(session) for _ in range(runs)]
    times = [r[0] for r in results]
    rss = [r[1] for r in results]
    print(
        f"pi open {os.path.basename(session)}: median {statistics.median(times):.0f} ms, "
        f"peak RSS median {statistics.median(rss):.0f} MiB ({runs} runs)"
    )


if __name__ == "__main__":
    main()
