#!/usr/bin/env python3
"""Interactive mode (issue 6): the real binary in a pseudo-terminal, optionally side by side
with the reference agent.

* keystroke to frame: a session whose transcript renders to more than 10,000 lines is opened
  with `--session <file>`; characters are typed one at a time and each is timed from the
  write to the PTY until the end of the frame it causes (the synchronized-output end
  `ESC[?2026l`); also the time from process start to the end of the first frame, and RSS;
* idle: after start-up has settled, a pause with no input: CPU time and wake-ups (context
  switches of every thread) of the process;
* search (fullscreen only): in the same session, the transcript search is opened
  (ctrl+shift+f as the kitty keyboard protocol sends it) and a query typed; the key that
  opens it and each typed key are timed to the end of their frame, the first typed key
  (the one that finds the query in the whole transcript) on its own; then the search is
  closed and opened again, `--search-again` times, to time a first key once more;
* streaming: the scripted model (`knightcode-mock-provider`, paced with `intervalMs`) streams a
  Markdown reply of 4-character deltas 1 ms apart (~1,000 tokens/s) for ~10 s; the CPU time
  of the process over the stream, as a share of one core, with an empty transcript and with
  the 10,000-line one.

    python3 scripts/bench/tui.py [--runs 5] [--keys 200] [--idle 10] [--stream 10]
                                 [--agents ours,pi] [--tui-mode regular|fullscreen]
                                 [--scenarios keys,search,stream,stream-long]
                                 [--no-build] [--json FILE] [--perf DIR]

`--tui-mode fullscreen` runs every scenario in the fullscreen mode (the alternate screen, the
transcript in its own viewport: a keystroke's frame is one screenful whatever the transcript's
length, and the resize measure redraws that screenful rather than the whole transcript).

Builds ours in release mode first (unless --no-build). Every run is a fresh process in a
fresh sandbox (HOME, agent directory with a models.json pointing at a fresh mock, project
directory) in a 120x40 terminal. Prints machine details and medians. CPU times come from
/proc/<pid>/task/*/schedstat (nanoseconds on a CPU, per live thread) or, when larger (a thread
ended within the window), utime+stime of /proc/<pid>/stat (all threads, clock ticks).
Start-up has settled when for 0.3 s nothing was written and less than 1 ms of CPU was used.
The machines are shared with builds, so each run first waits (up to --quiet-wait seconds)
until no other process wants a CPU.
"""
import argparse
import fcntl
import json
import os
import platform
import pty
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

from oneshot import others_running, wait_until_quiet
from oneshot_common import KNIGHTCODE, MOCK, PI, ROOT, Mock, models_json

COLS, ROWS = 120, 40
SYNC_END = b"\x1b[?2026l"
# The terminal layer asks for the kitty keyboard flags, the cursor position and the device
# attributes, and waits for the last; answer like a plain xterm: cursor at the top left.
PROBE = b"\x1b[c"
PROBE_REPLY = b"\x1b[1;1R\x1b[?62;22c"
TICK = os.sysconf("SC_CLK_TCK")
TYPED = b"the quick brown fox jumps over the lazy dog while we measure every frame "
BEGIN, END = b"STREAMBEGIN", b"STREAMEND"
# ctrl+shift+f and escape; the query whose first key starts a search.
SEARCH_KEY, ESCAPE = b"\x1b[102;6u", b"\x1b"
QUERY = b"the buffer"
TARGETS = {"key_ms": 4.0, "stream_pct": 10.0, "idle_ticks": 0}


# ---------------------------------------------------------------- session and reply text


def reply_markdown(i):
    """A 50-line Markdown answer: heading, list, highlighted code, prose."""
    lines = [f"## Part {i}: how the stream decoder keeps its state", ""]
    lines += [f"- step {j}: the decoder keeps a small buffer and hands out `token_{j}` as soon "
              f"as it is complete" for j in range(8)]
    lines += ["", "```rust"]
    lines += [f"fn step_{i}_{j}(input: &str) -> usize {{ input.len() * {j} + {i} }}"
              for j in range(20)]
    lines += ["```", ""]
    lines += [f"Paragraph line {j} of part {i} explains **why** the buffer is reused: fewer "
              f"allocations, less copying." for j in range(8)]
    lines += ["", f"> Note {i}: nothing here is real; it only has the shape of an answer.", "",
              "Done."]
    return "\n".join(lines)


def write_session(path, cwd, pairs):
    """A v3 session file (docs/sessions.md): header, then user/assistant message entries."""
    stamp = "2026-11-30T09:25:33.821Z"
    ms = 1796030733869
    usage = {"input": 1234, "output": 900, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2134,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    records = [{"type": "session", "version": 3, "id": "01a22bc6-1dfc-7095-95ad-35707689a588",
                "timestamp": stamp, "cwd": cwd}]
    parent = None
    for i in range(pairs):
        for role in ("user", "assistant"):
            entry_id = f"{len(records):08x}"
            if role == "user":
                message = {"role": "user", "content": [{"type": "text", "text":
                           f"Question {i}: how does part {i} of the decoder work?"}],
                           "timestamp": ms}
            else:
                message = {"role": "assistant",
                           "content": [{"type": "text", "text": reply_markdown(i)}],
                           "api": "openai-completions", "provider": "mock", "model": "mock-model",
                           "usage": usage, "stopReason": "stop", "timestamp": ms}
            records.append({"type": "message", "id": entry_id, "parentId": parent,
                            "timestamp": stamp, "message": message})
            parent = entry_id
            ms += 1000
    with open(path, "w") as f:
        for record in records:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")


def stream_text(chars):
    """~`chars` characters of Markdown prose, lists and code, between the two markers."""
    parts, size, n = [BEGIN.decode() + " starts the answer."], 0, 0
    while size < chars:
        block = "\n\n".join([
            f"### Section {n}",
            f"The answer goes on with section {n}, which says why the renderer keeps the lines "
            f"of finished cards and only redraws what changed at the bottom of the screen.",
            "\n".join(f"- point {j}: frames are coalesced while text streams in" for j in range(4)),
            "```python\n" + "\n".join(f"def f_{n}_{j}(x):\n    return x * {j}" for j in range(3)) + "\n```",
        ])
        parts.append(block)
        size += len(block) + 2
        n += 1
    parts.append(f"That is all, {END.decode()}")
    return "\n\n".join(parts)


# ---------------------------------------------------------------- process and /proc


class Box:
    """A fresh HOME, agent directory, project and mock model for one agent process."""

    def __init__(self, agent, script, mode_args=()):
        self.agent = agent
        self.mode_args = list(mode_args)
        self.root = tempfile.mkdtemp(prefix=f"kc-tui-bench-{agent}-")
        self.home = os.path.join(self.root, "home")
        agent_dir = os.path.join(self.home, ".knightcode" if agent == "ours" else ".pi", "agent")
        self.project = os.path.join(self.root, "project")
        os.makedirs(agent_dir)
        os.makedirs(self.project)
        self.mock = Mock(script, self.root)
        with open(os.path.join(agent_dir, "models.json"), "w") as f:
            json.dump(models_json(self.mock.url), f)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home,
                    "TERM": "xterm-256color", "LANG": "C.UTF-8", "TZ": "UTC"}
        if agent == "ours":
            self.env["KNIGHTCODE_CODING_AGENT_DIR"] = agent_dir
            self.program = KNIGHTCODE
        else:
            self.env["PI_OFFLINE"] = "1"
            self.program = PI

    def close(self):
        self.mock.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class Tty:
    """An agent in a pseudo-terminal; everything it writes goes through `read`."""

    def __init__(self, box, args):
        self.started = time.monotonic()
        pid, fd = pty.fork()
        if pid == 0:  # the child: size the terminal, then become the agent
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
                os.chdir(box.project)
                os.execve(box.program, [box.program, "--provider", "mock", "--model",
                                        "mock-model"] + box.mode_args + args, box.env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.probed = False

    def read(self, timeout):
        """Bytes written within `timeout` seconds (b"" if none); answers the start-up probe."""
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return b""
        try:
            data = os.read(self.fd, 1 << 20)
        except OSError:  # EIO: the program exited
            raise SystemExit(f"the agent exited (pid {self.pid})") from None
        if not self.probed and PROBE in data:
            os.write(self.fd, PROBE_REPLY)
            self.probed = True
        return data

    def read_until(self, marker, limit=60):
        """Reads until `marker` appears; returns (everything read, monotonic time of arrival)."""
        buf = b""
        deadline = time.monotonic() + limit
        while True:
            now = time.monotonic()
            if now > deadline:
                raise SystemExit(f"no {marker!r} within {limit} s; last output {buf[-300:]!r}")
            seen = len(buf)
            buf += self.read(deadline - now)
            # Only the new bytes (and a marker's length before them) can complete it.
            if buf.find(marker, max(0, seen - len(marker))) >= 0:
                return buf, time.monotonic()

    def drain(self, quiet):
        """Reads until nothing arrives for `quiet` seconds; returns the bytes."""
        buf = b""
        while True:
            data = self.read(quiet)
            if not data:
                return buf
            buf += data

    def close(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def proc_cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime of every thread, exited ones too


def threads(pid):
    """tid -> (name, ns on a CPU, voluntary + involuntary context switches)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run_ns = int(f.read().split()[0])
            name, switches = "?", 0
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    if key == "Name":
                        name = value.strip()
                    elif key in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
                        switches += int(value)
            out[tid] = (name, run_ns, switches)
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread ended while we looked
    return out


class CpuWindow:
    """CPU time and wake-ups of a process between `__init__` and `stop`."""

    def __init__(self, pid):
        self.pid = pid
        self.t0 = time.monotonic()
        self.ticks0 = proc_cpu_ticks(pid)
        self.threads0 = threads(pid)

    def stop(self):
        t1 = time.monotonic()
        ticks = proc_cpu_ticks(self.pid) - self.ticks0
        now = threads(self.pid)
        run_ns = wakeups = 0
        per_thread = {}
        for tid, (name, ns, sw) in now.items():
            _, ns0, sw0 = self.threads0.get(tid, (name, 0, 0))
            run_ns += ns - ns0
            wakeups += sw - sw0
            if sw - sw0:
                per_thread[f"{name}/{tid}"] = sw - sw0
        gone = set(self.threads0) - set(now)
        # schedstat misses threads that ended inside the window (grammar compiles run on a
        # helper thread); the process's utime+stime keeps them, at clock-tick resolution.
        cpu_ms = max(run_ns / 1e6, ticks * 1000 / TICK)
        return {"seconds": t1 - self.t0, "cpu_ms": cpu_ms, "ticks": ticks,
                "tick_ms": ticks * 1000 / TICK, "wakeups": wakeups, "by_thread": per_thread,
                "threads_gone": len(gone), "threads": len(now)}


def rss_kib(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                values[line.split(":")[0]] = int(line.split()[1])
    return values


# ---------------------------------------------------------------- scenarios


def cpu_ns(pid):
    return sum(ns for _, ns, _ in threads(pid).values())


def start(box, args):
    """Starts the agent and waits until it has settled (see the module doc; ours compiles
    common grammars on a thread of its own after the first frame). Returns (tty, ms to the end
    of the first frame, everything written until settled)."""
    tty = Tty(box, args)
    frame, at = tty.read_until(SYNC_END)
    startup_ms = (at - tty.started) * 1000
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        before = cpu_ns(tty.pid)
        more = tty.drain(0.3)
        frame += more
        if not more and cpu_ns(tty.pid) - before < 1e6:
            break
    return tty, startup_ms, frame


def mode_args(opts):
    """`--tui-mode <mode>` when one was asked for (both agents take the flag)."""
    return ["--tui-mode", opts.tui_mode] if opts.tui_mode else []


def keystroke_run(agent, opts):
    box = Box(agent, [], mode_args(opts))
    try:
        session = os.path.join(box.root, "long.jsonl")
        write_session(session, box.project, opts.pairs)
        tty, startup_ms, first = start(box, ["--session", session])
        try:
            rss = rss_kib(tty.pid)
            window = CpuWindow(tty.pid)
            idle_bytes = len(tty.drain(opts.idle)) if opts.idle else 0
            idle = window.stop()
            idle["bytes"] = idle_bytes
            samples, frame_bytes = [], []
            window = CpuWindow(tty.pid)
            for i in range(opts.keys):
                key = TYPED[i % len(TYPED):][:1]
                t0 = time.monotonic()
                os.write(tty.fd, key)
                out, t1 = tty.read_until(SYNC_END, 10)
                samples.append((t1 - t0) * 1000)
                frame_bytes.append(len(out))
                # A typist's pace: the next key comes after the frame, with a short gap.
                tty.drain(opts.key_gap)
            typing = window.stop()
            rss_after = rss_kib(tty.pid)
            # A narrower window: every line is wrapped again and the whole transcript is
            # written again (a width change clears the scrollback, as in the reference).
            t0 = time.monotonic()
            fcntl.ioctl(tty.fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS - 20, 0, 0))
            _, t1 = tty.read_until(SYNC_END, 30)
            resize_ms = (t1 - t0) * 1000
        finally:
            tty.close()
        return {"startup_ms": startup_ms, "first_frame_lines": first.count(b"\n"),
                "first_frame_bytes": len(first), "rss": rss, "rss_after": rss_after,
                "idle": idle, "keys_ms": samples, "frame_bytes": frame_bytes,
                "resize_ms": resize_ms,
                "cpu_ms_per_key": typing["cpu_ms"] / opts.keys}
    finally:
        box.close()


def search_run(agent, opts):
    """The transcript search on the long session: (ms of the opening key, of the first typed
    key, of the later typed keys) for a new search in a fresh process, then first keys of
    searches opened again in the same process."""
    box = Box(agent, [], mode_args(opts))
    try:
        session = os.path.join(box.root, "long.jsonl")
        write_session(session, box.project, opts.pairs)
        tty, _, _ = start(box, ["--session", session])

        def timed(key):
            t0 = time.monotonic()
            os.write(tty.fd, key)
            _, t1 = tty.read_until(SYNC_END, 10)
            ms = (t1 - t0) * 1000
            tty.drain(opts.key_gap)
            return ms

        try:
            result = {"open_ms": [], "first_ms": [], "later_ms": [], "again_ms": []}
            window = CpuWindow(tty.pid)
            for attempt in range(1 + opts.search_again):
                result["open_ms"].append(timed(SEARCH_KEY))
                first = timed(QUERY[:1])
                result["first_ms" if attempt == 0 else "again_ms"].append(first)
                if attempt == 0:
                    result["later_ms"] += [timed(QUERY[i:i + 1]) for i in range(1, len(QUERY))]
                timed(ESCAPE)
            result["cpu_ms"] = window.stop()["cpu_ms"]
        finally:
            tty.close()
        return result
    finally:
        box.close()


def stream_run(agent, opts, with_transcript):
    text = stream_text(int(opts.stream * 4000))
    reply = {"parts": [{"text": text}], "usage": {"input": 100, "output": len(text) // 4},
             "chunking": {"textChars": 4, "intervalMs": 1}}
    box = Box(agent, [reply], mode_args(opts))
    try:
        args = []
        if with_transcript:
            path = os.path.join(box.root, "long.jsonl")
            write_session(path, box.project, opts.pairs)
            args = ["--session", path]
        tty, _, _ = start(box, args)
        try:
            os.write(tty.fd, b"go")
            tty.drain(0.2)
            os.write(tty.fd, b"\r")
            tty.read_until(BEGIN, 30)
            profiler = start_perf(opts, tty.pid, agent, with_transcript)
            window = CpuWindow(tty.pid)
            out, _ = tty.read_until(END, opts.stream * 10 + 30)
            result = window.stop()
            stop_perf(profiler)
            result["chars"] = len(text)
            result["tokens_per_s"] = len(text) / 4 / result["seconds"]
            result["pct"] = result["cpu_ms"] / 10 / result["seconds"]
            result["frames_per_s"] = out.count(SYNC_END) / result["seconds"]
            result["bytes_per_s"] = len(out) / result["seconds"]
            tty.drain(0.5)
        finally:
            tty.close()
        return result
    finally:
        box.close()


def start_perf(opts, pid, agent, with_transcript):
    """With --perf DIR: `perf record` on the agent for the streaming window (the CPU figures
    of such a run include perf's own overhead; use it to see where the time goes)."""
    if not opts.perf:
        return None
    os.makedirs(opts.perf, exist_ok=True)
    name = f"{agent}-{'stream-long' if with_transcript else 'stream'}-{int(time.time())}.data"
    return subprocess.Popen(["perf", "record", "-q", "-F", "4000", "--call-graph", "dwarf,16384",
                             "-p", str(pid), "-o", os.path.join(opts.perf, name)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_perf(profiler):
    if profiler:
        profiler.send_signal(signal.SIGINT)
        profiler.wait()


# ---------------------------------------------------------------- report


def machine():
    model = "?"
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no",
                            "crates"], capture_output=True, text=True).stdout.strip()
    commit += " + uncommitted changes in crates/" if dirty else ""
    return f"{os.cpu_count()} CPUs, {model}, Linux {platform.release()}, knightcode {commit}"


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def med(values):
    return statistics.median(list(values))


def report(agents, results, opts):
    """A Markdown table: one row per measure, one column per agent."""
    rows = []  # (measure, {agent: cell}, target, met by ours)

    def row(measure, cell, target="", met=None):
        cells = {}
        for agent in agents:
            rs = results.get((agent, measure[0]))
            cells[agent] = cell(rs) if rs else "-"
        ok = met(results[("ours", measure[0])]) if met and ("ours", measure[0]) in results else None
        rows.append((measure[1], cells, target, "" if ok is None else ("yes" if ok else "no")))

    def keys(rs):
        ks = [k for r in rs for k in r["keys_ms"]]
        per_run = ", ".join(f"{med(r['keys_ms']):.2f}" for r in rs)
        return f"{med(ks):.2f} ms (p90 {pct(ks, 0.9):.2f}, max {max(ks):.2f}; runs {per_run})"

    lines = med(r["first_frame_lines"] for (a, s), rs in results.items() if s == "keys" for r in rs) \
        if any(s == "keys" for _, s in results) else 0
    label = f"{lines:,.0f}-line transcript"
    if opts.tui_mode == "fullscreen":
        # The first frame is one screenful; the session is the one the regular mode draws
        # as ~10,000 lines.
        label = f"{opts.pairs}-pair session (~10,000 lines), fullscreen"
    row(("keys", f"keystroke → frame, {label}"), keys, "≤ 4 ms",
        lambda rs: med(k for r in rs for k in r["keys_ms"]) <= TARGETS["key_ms"])
    row(("keys", "CPU per keystroke"), lambda rs: f"{med(r['cpu_ms_per_key'] for r in rs):.2f} ms")
    row(("keys", "bytes per keystroke frame"), lambda rs: f"{med(b for r in rs for b in r['frame_bytes']):.0f}")
    row(("keys", "start → end of first frame, same session"),
        lambda rs: f"{med(r['startup_ms'] for r in rs):.0f} ms "
                   f"({min(r['startup_ms'] for r in rs):.0f}–{max(r['startup_ms'] for r in rs):.0f})")
    row(("keys", "resize (narrower by 20 columns) → end of the redrawn frame"),
        lambda rs: f"{med(r['resize_ms'] for r in rs):.0f} ms "
                   f"({min(r['resize_ms'] for r in rs):.0f}–{max(r['resize_ms'] for r in rs):.0f})")
    row(("keys", "RSS when settled / peak after typing"),
        lambda rs: f"{med(r['rss']['VmRSS'] for r in rs) / 1024:.1f} / "
                   f"{med(r['rss_after']['VmHWM'] for r in rs) / 1024:.1f} MiB")
    row(("keys", f"idle {opts.idle:.0f} s: CPU"),
        lambda rs: f"{med(r['idle']['cpu_ms'] for r in rs):.2f} ms, "
                   f"{med(r['idle']['ticks'] for r in rs):.0f} ticks (max {max(r['idle']['ticks'] for r in rs)})",
        "0", lambda rs: max(r["idle"]["ticks"] for r in rs) == TARGETS["idle_ticks"])
    row(("keys", f"idle {opts.idle:.0f} s: wake-ups"),
        lambda rs: f"{med(r['idle']['wakeups'] for r in rs):.0f} "
                   f"({', '.join(str(r['idle']['wakeups']) for r in rs)})", "0",
        lambda rs: max(r["idle"]["wakeups"] for r in rs) == 0)
    def spread(values):
        return f"{med(values):.2f} ms (p90 {pct(values, 0.9):.2f}, max {max(values):.2f}; n={len(values)})"

    row(("search", "search: key that opens it → frame"),
        lambda rs: spread([k for r in rs for k in r["open_ms"]]))
    row(("search", "search: first typed key → frame (new search, fresh process)"),
        lambda rs: spread([r["first_ms"][0] for r in rs]), "≤ 4 ms",
        lambda rs: med(r["first_ms"][0] for r in rs) <= TARGETS["key_ms"])
    row(("search", "search: first typed key → frame (search opened again)"),
        lambda rs: spread([k for r in rs for k in r["again_ms"]]) if any(r["again_ms"] for r in rs) else "-")
    row(("search", "search: later typed keys → frame"),
        lambda rs: spread([k for r in rs for k in r["later_ms"]]))
    for scenario, label in (("stream", "empty transcript"), ("stream-long", "10,000-line transcript")):
        row((scenario, f"streaming ~1,000 tokens/s, {label}: CPU"),
            lambda rs: f"{med(r['pct'] for r in rs):.1f} % of a core "
                       f"({min(r['pct'] for r in rs):.1f}–{max(r['pct'] for r in rs):.1f}) at "
                       f"{med(r['tokens_per_s'] for r in rs):.0f} tokens/s, "
                       f"{med(r['frames_per_s'] for r in rs):.0f} frames/s",
            "< 10 %", lambda rs: med(r["pct"] for r in rs) < TARGETS["stream_pct"])
    print("| measure | " + " | ".join("knightcode" if a == "ours" else "pi" for a in agents)
          + " | target (ours) | met |")
    print("|---|" + "---|" * len(agents) + "---|---|")
    for measure, cells, target, met in rows:
        if all(v == "-" for v in cells.values()):
            continue
        print(f"| {measure} | " + " | ".join(cells[a] for a in agents) + f" | {target} | {met} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per scenario")
    parser.add_argument("--keys", type=int, default=200, help="timed keystrokes per run")
    parser.add_argument("--key-gap", type=float, default=0.02, help="seconds between keystrokes")
    parser.add_argument("--idle", type=float, default=10, help="idle seconds measured per run")
    parser.add_argument("--stream", type=float, default=10, help="seconds of streaming per run")
    parser.add_argument("--pairs", type=int, default=200, help="user/assistant pairs in the session")
    parser.add_argument("--scenarios", default="keys,stream,stream-long",
                        help="any of keys, search (needs --tui-mode fullscreen), stream, stream-long")
    parser.add_argument("--search-again", type=int, default=5,
                        help="searches opened again per search run")
    parser.add_argument("--agents", default="ours")
    parser.add_argument("--tui-mode", choices=["regular", "fullscreen"],
                        help="pass --tui-mode to the agents (default: neither is passed)")
    parser.add_argument("--quiet-wait", type=float, default=60)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--json", help="write every sample here")
    parser.add_argument("--perf", metavar="DIR",
                        help="record each streaming window with `perf record` into DIR")
    opts = parser.parse_args()
    agents = opts.agents.split(",")
    if not opts.no_build:
        subprocess.run(["cargo", "build", "-q", "--release", "--locked", "-p", "knightcode-cli",
                        "-p", "knightcode-testkit"], cwd=ROOT, check=True)
    for path in [KNIGHTCODE, MOCK] + ([PI] if "pi" in agents else []):
        if not os.path.exists(path):
            sys.exit(f"missing {path}: cargo build --release -p knightcode-cli -p knightcode-testkit"
                     " (and npm ci in scripts/pi for the reference agent)")
    print(f"machine: {machine()}; load {loadavg()}; tui mode {opts.tui_mode or 'default'}",
          flush=True)
    scenarios = opts.scenarios.split(",")
    results = {}
    busy = 0
    # Interleaved run by run, so that load changes hit every agent and scenario alike.
    for run in range(opts.runs):
        for scenario in scenarios:
            for agent in agents:
                if wait_until_quiet(opts.quiet_wait) == "busy":
                    busy += 1
                if scenario == "keys":
                    r = keystroke_run(agent, opts)
                    print(f"  run {run + 1} {agent} keys: median {med(r['keys_ms']):.2f} ms, "
                          f"{r['cpu_ms_per_key']:.2f} ms CPU/key, start-up {r['startup_ms']:.0f} ms, "
                          f"{r['first_frame_lines']} lines, resize {r['resize_ms']:.0f} ms, idle {r['idle']['cpu_ms']:.2f} ms CPU / "
                          f"{r['idle']['wakeups']} wake-ups {r['idle']['by_thread']}",
                          file=sys.stderr, flush=True)
                elif scenario == "search":
                    if opts.tui_mode != "fullscreen":
                        sys.exit("the search scenario needs --tui-mode fullscreen")
                    r = search_run(agent, opts)
                    print(f"  run {run + 1} {agent} search: open {med(r['open_ms']):.2f} ms, first key "
                          f"{r['first_ms'][0]:.2f} ms, later keys {med(r['later_ms']):.2f} ms, again "
                          f"{', '.join(f'{k:.2f}' for k in r['again_ms'])} ms",
                          file=sys.stderr, flush=True)
                else:
                    r = stream_run(agent, opts, scenario == "stream-long")
                    print(f"  run {run + 1} {agent} {scenario}: {r['pct']:.2f} % of a core at "
                          f"{r['tokens_per_s']:.0f} tokens/s ({r['cpu_ms']:.0f} ms CPU, "
                          f"{r['tick_ms']:.0f} ms by ticks, {r['seconds']:.1f} s, "
                          f"{r['frames_per_s']:.0f} frames/s, {r['wakeups']} wake-ups)",
                          file=sys.stderr, flush=True)
                results.setdefault((agent, scenario), []).append(r)
    print(f"load after: {loadavg()}; runs started while another process wanted a CPU "
          f"(after waiting {opts.quiet_wait:.0f} s): {busy}")
    print()
    report(agents, results, opts)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({f"{a}/{s}": rs for (a, s), rs in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
