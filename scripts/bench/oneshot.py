#!/usr/bin/env python3
"""knightcode vs the reference agent (pi) in one-shot use: `--version`, `-p hi` against the
local mock model, and a four-turn read/bash/edit run in `--mode json`. Prints machine details
and a Markdown table of medians; build first (scripts/bench/oneshot.sh does).

    python3 scripts/bench/oneshot.py [--runs N] [--agents ours,pi] [--scenarios ...] [--json FILE]

Each sample is a fresh process in a fresh HOME, agent directory and project directory, with
a fresh mock server (started before the clock starts). Wall time and peak RSS come from
separate runs, because the usual ways of reading a child's peak RSS either cost time
(`/usr/bin/time` forks first) or are wrong: wait4's ru_maxrss after a vfork/posix_spawn from
Python reports Python's own RSS, which the kernel carries into the exec'd child. So:
  time runs: posix_spawn + wait4, wall clock around exactly that, CPU time from wait4;
  RSS runs:  the same command under `/usr/bin/time -f %M` (its own ~1 MiB floor).
Every run is checked (exit code, answer text, number of model requests, tool results, the
edit on disk, one session file); a failed run aborts the benchmark. The machines are shared
with builds, so each run first waits (up to --quiet-wait seconds) until no other process wants
a CPU; the report says how many runs had to start under load anyway.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from oneshot_common import AGENTS, KNIGHTCODE, MOCK, PI, ROOT, SCENARIOS, Sandbox, check_run

TARGETS = {  # ours: (ms, MiB)
    "version": (3, 8),
    "print-hi": (20, 20),
    "json-edit": (60, 25),
}
TIME = "/usr/bin/time"


def others_running():
    """Runnable tasks right now other than this harness (a single reading, no waiting)."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("procs_running"):
                return int(line.split()[1]) - 1
    return 0


def wait_until_quiet(limit_s):
    """These machines are shared with builds. Returns "quiet" at once when nothing else wants a
    CPU; else polls until three readings in a row are quiet ("waited": the caller does a warm-up
    run, since an idle pause slows the next start) or limit_s passes ("busy")."""
    if others_running() == 0:
        return "quiet"
    deadline = time.monotonic() + limit_s
    quiet = 0
    while quiet < 3:
        if time.monotonic() > deadline:
            return "busy"
        time.sleep(0.05)
        quiet = quiet + 1 if others_running() == 0 else 0
    return "waited"


def run_once(agent, scenario, measure):
    script, args = SCENARIOS[scenario]
    box = Sandbox(agent, scenario)
    try:
        if script is not None:
            box.start_mock(script)
        argv = box.argv0 + args
        rss_file = os.path.join(box.root, "rss.txt")
        if measure == "rss":
            argv = [TIME, "-f", "%M", "-o", rss_file] + argv
        out_path = os.path.join(box.root, "stdout")
        err_path = os.path.join(box.root, "stderr")
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            actions = [
                (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                (os.POSIX_SPAWN_DUP2, err.fileno(), 2),
            ]
            os.chdir(box.project)
            start = time.perf_counter_ns()
            pid = os.posix_spawn(argv[0], argv, box.env, file_actions=actions)
            _, status, usage = os.wait4(pid, 0)
            wall_ms = (time.perf_counter_ns() - start) / 1e6
            os.chdir(ROOT)
        rc = os.waitstatus_to_exitcode(status)
        with open(out_path, encoding="utf-8", errors="replace") as f:
            stdout = f.read()
        with open(err_path, encoding="utf-8", errors="replace") as f:
            stderr = f.read()
        problem = check_run(scenario, box, rc, stdout, stderr)
        if problem:
            raise SystemExit(f"{agent} {scenario} ({measure} run) failed: {problem}\n"
                             f"kept in {box.root}")
        sample = {"wall_ms": wall_ms, "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000}
        if measure == "rss":
            with open(rss_file) as f:
                sample = {"rss_mib": int(f.read().split()[-1]) / 1024}
        box.close()
        return sample
    except BaseException:
        if box.mock:
            box.mock.stop()
            box.mock = None
        raise


def hyperfine_version(agent, runs):
    """Cross-check of the --version wall time with hyperfine (no shell), if installed."""
    if not shutil.which("hyperfine"):
        return None
    box = Sandbox(agent, "version")
    try:
        export = os.path.join(box.root, "hyperfine.json")
        cmd = " ".join(box.argv0 + ["--version"])
        subprocess.run(
            ["hyperfine", "-N", "--style", "none", "--warmup", "3", "--runs", str(runs),
             "--export-json", export, cmd],
            env={**box.env, "PATH": os.environ["PATH"]}, cwd=box.project, check=True,
            stdout=subprocess.DEVNULL,
        )
        with open(export) as f:
            return json.load(f)["results"][0]["median"] * 1000
    finally:
        box.close()


def command_output(argv, **kw):
    try:
        return subprocess.run(argv, capture_output=True, text=True, **kw).stdout.strip()
    except OSError:
        return "?"


def machine():
    model = "?"
    for line in command_output(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    pi_version = "not installed"
    if os.path.exists(PI):
        home = tempfile.mkdtemp(prefix="kc-oneshot-pi-version-")
        run = subprocess.run([PI, "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             env={"PATH": os.environ["PATH"], "HOME": home, "PI_OFFLINE": "1"})
        pi_version = (run.stdout + run.stderr).strip()
        shutil.rmtree(home, ignore_errors=True)
    commit = command_output(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    dirty = command_output(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "crates"])
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "kernel": platform.release(),
        "rustc": command_output(["rustc", "--version"]),
        "node": command_output(["node", "--version"]),
        "pi": pi_version,
        "commit": commit + (" + uncommitted changes in crates/" if dirty else ""),
        "knightcode_bytes": os.path.getsize(KNIGHTCODE),
    }


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def fmt_ratio(a, b):
    return f"{a / b:.3f}" if b else "-"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="samples per agent, scenario and measure")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--interleave", action="store_true",
                        help="alternate the agents run by run instead of back-to-back blocks")
    parser.add_argument("--quiet-wait", type=float, default=30,
                        help="before each run, wait up to this many seconds for other CPU users to stop")
    parser.add_argument("--json", help="write every sample and the machine details here")
    opts = parser.parse_args()
    agents = opts.agents.split(",")
    scenarios = opts.scenarios.split(",")
    for path in [KNIGHTCODE, MOCK] + ([PI] if "pi" in agents else []):
        if not os.path.exists(path):
            sys.exit(f"missing {path}: run scripts/bench/oneshot.sh (it builds both sides)")

    info = machine()
    info["load_before"] = loadavg()
    print(f"machine: {info['cpus']} CPUs, {info['cpu_model']}, Linux {info['kernel']}, "
          f"load {info['load_before']}", flush=True)
    print(f"{info['rustc']}; knightcode {info['commit']} ({info['knightcode_bytes'] / 2**20:.1f} MiB); "
          f"pi {info['pi']} on node {info['node']}", flush=True)

    samples = {(a, s): {"wall_ms": [], "cpu_ms": [], "rss_mib": []} for a in agents for s in scenarios}
    busy = {k: 0 for k in samples}
    started = time.monotonic()
    # Blocked like hyperfine (warm-up, then back-to-back runs of one command) unless
    # --interleave: then every run of ours follows a pi run, which leaves caches cold.
    for scenario in scenarios:
        for agent in agents:
            for _ in range(opts.warmup):
                run_once(agent, scenario, "time")
        order = [(a, m) for m in ("time", "rss") for a in agents]
        if opts.interleave:
            plan = [order] * opts.runs
        else:
            plan = [[(a, m)] * opts.runs for a, m in order]
        for step in plan:
            for agent, measure in step:
                state = wait_until_quiet(opts.quiet_wait)
                if state == "busy":
                    busy[(agent, scenario)] += 1
                elif state == "waited":
                    run_once(agent, scenario, "time")
                for key, value in run_once(agent, scenario, measure).items():
                    samples[(agent, scenario)][key].append(value)
        print(f"  {scenario} done ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    hyper = {}
    if "version" in scenarios:
        for agent in agents:
            wait_until_quiet(opts.quiet_wait)
            hyper[agent] = hyperfine_version(agent, max(opts.runs, 10) * (10 if agent == "ours" else 1))
    info["load_after"] = loadavg()

    med = {k: {m: statistics.median(v) for m, v in d.items() if v} for k, d in samples.items()}
    print()
    print(f"Medians of {opts.runs} runs each ({'interleaved' if opts.interleave else 'back to back'}, "
          f"after {opts.warmup} warm-up runs); "
          f"load {info['load_before']} before, {info['load_after']} after.")
    print()
    both = "ours" in agents and "pi" in agents
    print("| scenario | ours wall | pi wall | ours/pi | ours CPU | pi CPU | ours peak RSS | pi peak RSS "
          "| ours/pi | target (ours) | met |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for scenario in scenarios:
        o = med.get(("ours", scenario), {})
        p = med.get(("pi", scenario), {})
        t_ms, t_mib = TARGETS[scenario]
        met = "-"
        if o:
            ok_t = o["wall_ms"] <= t_ms
            ok_m = o["rss_mib"] <= t_mib
            met = "yes" if ok_t and ok_m else "no (" + ", ".join(
                x for x, bad in (("time", not ok_t), ("memory", not ok_m)) if bad) + ")"

        def cell(d, key, unit, digits):
            return f"{d[key]:.{digits}f} {unit}" if d.get(key) is not None else "-"

        print(f"| `{scenario}` | {cell(o, 'wall_ms', 'ms', 1)} | {cell(p, 'wall_ms', 'ms', 0)} | "
              f"{fmt_ratio(o['wall_ms'], p['wall_ms']) if both else '-'} | {cell(o, 'cpu_ms', 'ms', 1)} | "
              f"{cell(p, 'cpu_ms', 'ms', 0)} | {cell(o, 'rss_mib', 'MiB', 1)} | {cell(p, 'rss_mib', 'MiB', 1)} | "
              f"{fmt_ratio(o['rss_mib'], p['rss_mib']) if both else '-'} | ≤ {t_ms} ms, ≤ {t_mib} MiB | {met} |")
    noisy = {f"{a} {s}": n for (a, s), n in busy.items() if n}
    print()
    if noisy:
        print("Runs started while other processes wanted a CPU (after waiting "
              f"{opts.quiet_wait:.0f} s): " + ", ".join(f"{k} {n}" for k, n in noisy.items()) +
              f" of {2 * opts.runs} each.")
    else:
        print("Every run started with no other process wanting a CPU.")
    if any(v is not None for v in hyper.values()):
        parts = [f"{a} {v:.2f} ms" for a, v in hyper.items() if v is not None]
        print(f"hyperfine -N cross-check, `--version` median: {', '.join(parts)}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"machine": info, "hyperfine_version_ms": hyper, "runs_under_load": noisy,
                       "samples": {f"{a}/{s}": d for (a, s), d in samples.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
