#!/usr/bin/env python3
"""TypeScript extensions in the interactive terminal (issue 15): the release binary in a
pseudo-terminal (120x40), side by side with the reference agent, each run a fresh process in
a fresh sandbox (tui.py's machinery: HOME, agent directory, scripted mock model).

* ext-widgets: `scripts/bench/ext/ten-widgets.ts` sets ten component widgets (six above the
  editor, four below, 3-5 lines each); a 50 ms timer bumps their counters and asks for a
  render, so every frame all ten render. The extension times its own render() calls
  (performance.now(), summed per frame) and writes them on `session_shutdown` (ctrl+d) to
  $KC_BENCH_OUT. Figures: JS render time per frame, CPU per tick of the process and of our
  JS thread (`knightcode-js`), frames written to the terminal per tick;
* ext-keys: tui.py's keystroke scenario (a 10,000-line transcript opened with `--session`)
  with the reference's `rainbow-editor.ts`, a JS `CustomEditor` subclass installed with
  `ctx.ui.setEditorComponent`: key written to the PTY until the end of the next frame
  (`ESC[?2026l`). A small terminal emulator (`Screen`) follows the output and checks that
  this frame shows the typed text, counts the frames per key, checks the whole text at the
  end and finally types "ultrathink" to see the editor's rainbow colours;
* ext-stream: tui.py's streaming scenario (4-character deltas 1 ms apart, ~1,000 tokens/s)
  with `scripts/bench/ext/live-footer.ts`: a footer with a live count of the streamed
  characters from `message_update` (each asks for a render) and `ctx.ui.setStatus` on every
  `message_update`; CPU time between the marker words as a share of one core;
* ext-stream-examples: the same with the reference's `custom-footer.ts` (enabled by
  submitting `/footer` and waiting for its notice) and `status-line.ts`.

    python3 scripts/bench/tui_ext.py [--runs 5] [--agents ours,pi] [--scenarios ext-widgets,...]
        [--examples DIR] [--seconds 10] [--keys 200] [--stream 10] [--no-build] [--json FILE]
        [--screens DIR] [--perf DIR]

The examples come from the reference package: by default the cache the extension tests fill
(`~/.cache/knightcode-rs/npm/pi-coding-agent-0.73.1/package/examples/extensions`, or under
$KC_EXAMPLES_CACHE / $XDG_CACHE_HOME), else `npm pack` into that cache (beside the tests'
entry). Builds ours first (release, in $CARGO_TARGET_DIR, by default
~/.cache/knightcode-rs/target) unless --no-build.
"""
import argparse
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
import unicodedata

os.environ.setdefault("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/knightcode-rs/target"))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tui import (BEGIN, END, SYNC_END, TYPED, COLS, ROWS, Box, CpuWindow, Tty, loadavg,  # noqa: E402
                 machine, med, pct, start, stream_text, threads, wait_until_quiet, write_session)
from oneshot_common import KNIGHTCODE, MOCK, PI, ROOT  # noqa: E402

VERSION = "0.73.1"
EXT = os.path.join(HERE, "ext")
JS_THREAD = "knightcode-js"
SCENARIOS = ("ext-widgets", "ext-keys", "ext-stream", "ext-stream-examples")
TARGETS = {"render_ms": 2.0, "key_ms": 4.0, "stream_pct": 10.0}


# ---------------------------------------------------------------- the reference's examples


def npm_cache():
    if os.environ.get("KC_EXAMPLES_CACHE"):
        return os.environ["KC_EXAMPLES_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "knightcode-rs", "npm")


def default_examples():
    """The examples the extension tests unpacked; else our own `npm pack` of the same
    version, into an entry of its own (the tests' entry is theirs to complete)."""
    tests = os.path.join(npm_cache(), f"pi-coding-agent-{VERSION}", "package", "examples", "extensions")
    if os.path.isdir(tests):
        return tests
    entry = os.path.join(npm_cache(), f"bench-pi-coding-agent-{VERSION}")
    examples = os.path.join(entry, "package", "examples", "extensions")
    if not os.path.isdir(examples):
        os.makedirs(npm_cache(), exist_ok=True)
        staging = tempfile.mkdtemp(dir=npm_cache())
        out = subprocess.run(["npm", "pack", f"@mariozechner/pi-coding-agent@{VERSION}", "--silent",
                              "--pack-destination", staging], capture_output=True, text=True, check=True)
        subprocess.run(["tar", "-xzf", os.path.join(staging, out.stdout.strip().splitlines()[-1]),
                        "-C", staging], check=True)
        try:
            os.rename(staging, entry)
        except OSError:  # another run finished first
            subprocess.run(["rm", "-rf", staging], check=True)
    return examples


# ---------------------------------------------------------------- a small terminal emulator


CSI_RE = re.compile(rb"\x1b\[([0-9;:?<>=!]*)([ -/]*)([@-~])")


class Screen:
    """What a 120x40 xterm would show: printable text, cursor motion, erasing, line feeds
    that scroll, deferred wrap at the last column, a scroll region. Colours, modes and
    string sequences (OSC, APC, DCS) are dropped. Enough for both agents' output."""

    def __init__(self, cols=COLS, rows=ROWS):
        self.cols, self.rows = cols, rows
        self.grid = [[" "] * cols for _ in range(rows)]
        self.x = self.y = 0
        self.wrap = False
        self.top, self.bottom = 0, rows - 1
        self.saved = (0, 0)
        self.pending = b""

    def text(self):
        return "\n".join("".join(row).rstrip() for row in self.grid)

    def flat(self):
        """The screen as one line of words (rows joined by a space, runs of blanks as one)."""
        return " ".join(" ".join("".join(row).split()) for row in self.grid).strip()

    def _scroll_up(self):
        del self.grid[self.top]
        self.grid.insert(self.bottom, [" "] * self.cols)

    def _lf(self):
        if self.y == self.bottom:
            self._scroll_up()
        elif self.y < self.rows - 1:
            self.y += 1

    def _put(self, ch):
        w = 0 if unicodedata.combining(ch) else (2 if unicodedata.east_asian_width(ch) in "WF" else 1)
        if w == 0:
            return
        if self.wrap or self.x + w > self.cols:
            self.x, self.wrap = 0, False
            self._lf()
        self.grid[self.y][self.x] = ch
        if w == 2 and self.x + 1 < self.cols:
            self.grid[self.y][self.x + 1] = ""
        self.x += w
        if self.x >= self.cols:
            self.x, self.wrap = self.cols - 1, True

    def feed(self, data):
        data = self.pending + data
        self.pending = b""
        i, n = 0, len(data)
        text_start = None
        while i < n:
            b = data[i]
            if b >= 0x20 and b != 0x7f:
                # A run of printable bytes (UTF-8 included) up to the next control byte.
                j = i
                while j < n and data[j] >= 0x20 and data[j] != 0x7f:
                    j += 1
                chunk = data[i:j]
                # Keep an incomplete UTF-8 sequence at the end for the next feed.
                k = len(chunk)
                while k > 0 and k > len(chunk) - 4 and (chunk[k - 1] & 0xC0) == 0x80:
                    k -= 1
                if k > 0 and chunk[k - 1] >= 0xC0 and j == n:
                    need = 2 if chunk[k - 1] < 0xE0 else 3 if chunk[k - 1] < 0xF0 else 4
                    if len(chunk) - (k - 1) < need:
                        self.pending = chunk[k - 1:]
                        chunk = chunk[:k - 1]
                for ch in chunk.decode("utf-8", "replace"):
                    self._put(ch)
                i = j
                continue
            if b == 0x1b:
                if i + 1 >= n:
                    self.pending = data[i:]
                    return
                c = data[i + 1]
                if c == 0x5b:  # CSI
                    m = CSI_RE.match(data, i)
                    if not m:
                        if n - i < 64:
                            self.pending = data[i:]
                            return
                        i += 2
                        continue
                    self._csi(m.group(1).decode(), m.group(3).decode())
                    i = m.end()
                    continue
                if c in (0x5d, 0x5f, 0x50, 0x5e, 0x58):  # OSC, APC, DCS, PM, SOS: skip to BEL / ST
                    j = i + 2
                    while j < n and data[j] != 0x07 and not (data[j] == 0x1b and j + 1 < n and data[j + 1] == 0x5c):
                        j += 1
                    if j >= n or (data[j] == 0x1b and j + 1 >= n):
                        self.pending = data[i:]
                        return
                    i = j + (1 if data[j] == 0x07 else 2)
                    continue
                if c == 0x37:
                    self.saved = (self.x, self.y)
                elif c == 0x38:
                    self.x, self.y = self.saved
                    self.wrap = False
                elif c in (0x28, 0x29, 0x23, 0x25):  # charset designations: one byte more
                    i += 1
                elif c == 0x4d:  # reverse index
                    if self.y == self.top:
                        del self.grid[self.bottom]
                        self.grid.insert(self.top, [" "] * self.cols)
                    elif self.y > 0:
                        self.y -= 1
                elif c == 0x44:
                    self._lf()
                elif c == 0x45:
                    self.x = 0
                    self._lf()
                i += 2
                continue
            if b == 0x0d:
                self.x, self.wrap = 0, False
            elif b == 0x0a or b == 0x0b or b == 0x0c:
                self.wrap = False
                self._lf()
            elif b == 0x08:
                self.x, self.wrap = max(0, self.x - 1), False
            elif b == 0x09:
                self.x = min(self.cols - 1, (self.x // 8 + 1) * 8)
            i += 1

    def _csi(self, params, final):
        if params[:1] in ("?", ">", "<", "=", "!"):
            return  # private modes, keyboard protocol, queries
        args = [int(p) if p.isdigit() else 0 for p in params.replace(":", ";").split(";")] if params else []
        a = args[0] if args else 0
        one = max(1, a)
        if final != "m":
            self.wrap = False
        if final == "A":
            self.y = max(0, self.y - one)
        elif final == "B":
            self.y = min(self.rows - 1, self.y + one)
        elif final == "C":
            self.x = min(self.cols - 1, self.x + one)
        elif final == "D":
            self.x = max(0, self.x - one)
        elif final == "E":
            self.x, self.y = 0, min(self.rows - 1, self.y + one)
        elif final == "F":
            self.x, self.y = 0, max(0, self.y - one)
        elif final == "G" or final == "`":
            self.x = min(self.cols - 1, one - 1)
        elif final == "d":
            self.y = min(self.rows - 1, one - 1)
        elif final in ("H", "f"):
            row = args[0] if args else 1
            col = args[1] if len(args) > 1 else 1
            self.y = min(self.rows - 1, max(1, row) - 1)
            self.x = min(self.cols - 1, max(1, col) - 1)
        elif final == "J":
            if a == 0:
                self.grid[self.y][self.x:] = [" "] * (self.cols - self.x)
                for r in range(self.y + 1, self.rows):
                    self.grid[r] = [" "] * self.cols
            elif a == 1:
                for r in range(self.y):
                    self.grid[r] = [" "] * self.cols
                self.grid[self.y][:self.x + 1] = [" "] * (self.x + 1)
            elif a == 2:
                self.grid = [[" "] * self.cols for _ in range(self.rows)]
        elif final == "K":
            row = self.grid[self.y]
            if a == 0:
                row[self.x:] = [" "] * (self.cols - self.x)
            elif a == 1:
                row[:self.x + 1] = [" "] * (self.x + 1)
            else:
                self.grid[self.y] = [" "] * self.cols
        elif final == "X":
            end = min(self.cols, self.x + one)
            self.grid[self.y][self.x:end] = [" "] * (end - self.x)
        elif final == "P":
            row = self.grid[self.y]
            del row[self.x:self.x + one]
            row += [" "] * (self.cols - len(row))
        elif final == "@":
            row = self.grid[self.y]
            row[self.x:self.x] = [" "] * one
            del row[self.cols:]
        elif final == "S":
            for _ in range(one):
                self._scroll_up()
        elif final == "T":
            for _ in range(one):
                del self.grid[self.bottom]
                self.grid.insert(self.top, [" "] * self.cols)
        elif final in ("L", "M") and self.top <= self.y <= self.bottom:
            for _ in range(one):
                if final == "L":
                    del self.grid[self.bottom]
                    self.grid.insert(self.y, [" "] * self.cols)
                else:
                    del self.grid[self.y]
                    self.grid.insert(self.bottom, [" "] * self.cols)
        elif final == "r":
            top = (args[0] if args else 1) or 1
            bottom = (args[1] if len(args) > 1 else self.rows) or self.rows
            if top < bottom <= self.rows:
                self.top, self.bottom = top - 1, bottom - 1
                self.x = self.y = 0
        elif final == "s":
            self.saved = (self.x, self.y)
        elif final == "u":
            self.x, self.y = self.saved


def flat(text):
    return " ".join(text.split())


# ---------------------------------------------------------------- process helpers


def thread_ns(pid, name):
    return sum(ns for n, ns, _ in threads(pid).values() if n == name)


def pump(tty, seconds, screen=None):
    """Reads (and answers) everything the agent writes for `seconds`; returns the bytes."""
    buf = b""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return buf
        data = tty.read(left)
        buf += data
        if screen is not None and data:
            screen.feed(data)


def quit_and_wait(tty, limit=15):
    """ctrl+d on the empty editor; reads until the terminal closes (the process exited)."""
    os.write(tty.fd, b"\x04")
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        ready, _, _ = select.select([tty.fd], [], [], 0.2)
        if ready:
            try:
                if not os.read(tty.fd, 1 << 20):
                    return True
            except OSError:
                return True
    return False


def start_perf(opts, pid, agent, scenario):
    if not opts.perf:
        return None
    os.makedirs(opts.perf, exist_ok=True)
    path = os.path.join(opts.perf, f"{agent}-{scenario}-{int(time.time())}.data")
    return subprocess.Popen(["perf", "record", "-q", "-F", "4000", "--call-graph", "dwarf,16384",
                             "-p", str(pid), "-o", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def save_screen(opts, agent, scenario, run, screen):
    if opts.screens:
        os.makedirs(opts.screens, exist_ok=True)
        with open(os.path.join(opts.screens, f"{agent}-{scenario}-{run + 1}.txt"), "w") as f:
            f.write(screen.text() + "\n")


# ---------------------------------------------------------------- scenarios


def widgets_run(agent, opts, run):
    box = Box(agent, [])
    out_path = os.path.join(box.root, "widgets.json")
    box.env["KC_BENCH_OUT"] = out_path
    screen = Screen()
    try:
        tty = Tty(box, ["-e", os.path.join(EXT, "ten-widgets.ts")])
        try:
            data, _ = tty.read_until(b"widget 10", 60)
            screen.feed(data)
            pump(tty, opts.warmup, screen)  # the timer ticks from the start: no settling
            js0, wall0 = thread_ns(tty.pid, JS_THREAD), time.time()
            window = CpuWindow(tty.pid)
            profiler = start_perf(opts, tty.pid, agent, "ext-widgets")
            out = pump(tty, opts.seconds, screen)
            result = window.stop()
            wall1, js1 = time.time(), thread_ns(tty.pid, JS_THREAD)
            if profiler:
                profiler.send_signal(2)
                profiler.wait()
            # The window ended anywhere in a frame: read to its end before looking.
            rest, _ = tty.read_until(SYNC_END, 5)
            screen.feed(rest)
            shown = [i for i in range(1, 11) if f"● widget {i} ·" in screen.text()]
            save_screen(opts, agent, "ext-widgets", run, screen)
            exited = quit_and_wait(tty)
        finally:
            tty.close()
        if not os.path.exists(out_path):
            raise SystemExit(f"{agent}: the extension wrote no samples (exited: {exited})")
        with open(out_path) as f:
            samples = json.load(f)
    finally:
        box.close()
    t0, t1 = wall0 * 1000, wall1 * 1000
    frames = [f for f in samples["frames"] if t0 <= f["t"] <= t1]
    ticks = [t for t in samples["ticks"] if t0 <= t <= t1]
    full = [f["ms"] for f in frames if f["n"] >= 10]
    result.update({
        "render_ms": full, "js_frames": len(frames), "full_frames": len(full),
        "calls_per_frame": med(f["n"] for f in frames) if frames else 0,
        "ticks": len(ticks), "cpu_ms_per_tick": result["cpu_ms"] / max(1, len(ticks)),
        "js_thread_ms_per_tick": (js1 - js0) / 1e6 / max(1, len(ticks)),
        "term_frames_per_tick": out.count(SYNC_END) / max(1, len(ticks)),
        "bytes_per_tick": len(out) / max(1, len(ticks)),
        "widgets_shown": len(shown),
    })
    return result


def keys_run(agent, opts, run):
    box = Box(agent, [])
    try:
        session = os.path.join(box.root, "long.jsonl")
        write_session(session, box.project, opts.pairs)
        screen = Screen()
        tty, startup_ms, first = start(box, ["--session", session, "-e",
                                             os.path.join(opts.examples, "rainbow-editor.ts")])
        screen.feed(first)
        try:
            samples, frames, shown_first, typed = [], [], 0, ""
            checked = 0
            window = CpuWindow(tty.pid)
            js0 = thread_ns(tty.pid, JS_THREAD)
            for i in range(opts.keys):
                key = TYPED[i % len(TYPED):][:1]
                typed += key.decode()
                t0 = time.monotonic()
                os.write(tty.fd, key)
                out, t1 = tty.read_until(SYNC_END, 10)
                samples.append((t1 - t0) * 1000)
                # Does the timed frame (everything up to its end) show this key? The
                # current word (word wrap keeps it on one row) with the one before it.
                cut = out.rfind(SYNC_END) + len(SYNC_END)
                screen.feed(out[:cut])
                tail = " ".join(typed.split()[-2:])
                if key != b" " and len(tail) >= 3:
                    checked += 1
                    shown_first += tail in screen.flat()
                rest = out[cut:] + tty.drain(opts.key_gap)
                screen.feed(rest)
                frames.append(out.count(SYNC_END) + rest.count(SYNC_END))
            js_ms = (thread_ns(tty.pid, JS_THREAD) - js0) / 1e6
            typing = window.stop()
            screen.feed(tty.drain(0.3))
            all_shown = flat(typed) in screen.flat()
            save_screen(opts, agent, "ext-keys", run, screen)
            # The editor is the extension's: "ultrathink" comes back in its rainbow colours.
            os.write(tty.fd, b" ultrathink")
            rainbow = b"\x1b[38;2;" in pump(tty, 0.5)
        finally:
            tty.close()
        return {"startup_ms": startup_ms, "keys_ms": samples, "frames_per_key": frames,
                "shown_first": shown_first, "checked": checked, "all_shown": all_shown,
                "rainbow": rainbow, "cpu_ms_per_key": typing["cpu_ms"] / opts.keys,
                "js_thread_ms_per_key": js_ms / opts.keys, "first_frame_lines": first.count(b"\n")}
    finally:
        box.close()


def stream_ext_run(agent, opts, run, scenario):
    text = stream_text(int(opts.stream * 4000))
    reply = {"parts": [{"text": text}], "usage": {"input": 100, "output": len(text) // 4},
             "chunking": {"textChars": 4, "intervalMs": 1}}
    box = Box(agent, [reply])
    try:
        if scenario == "ext-stream":
            args = ["-e", os.path.join(EXT, "live-footer.ts")]
        else:
            args = ["-e", os.path.join(opts.examples, "custom-footer.ts"),
                    "-e", os.path.join(opts.examples, "status-line.ts")]
        screen = Screen()
        tty, _, first = start(box, args)
        screen.feed(first)
        try:
            if scenario == "ext-stream-examples":
                os.write(tty.fd, b"/footer")
                screen.feed(tty.drain(0.3))
                os.write(tty.fd, b"\r")
                out, _ = tty.read_until(b"Custom footer enabled", 10)
                screen.feed(out + tty.drain(0.3))
            os.write(tty.fd, b"go")
            screen.feed(tty.drain(0.2))
            os.write(tty.fd, b"\r")
            out, _ = tty.read_until(BEGIN, 30)
            screen.feed(out)
            profiler = start_perf(opts, tty.pid, agent, scenario)
            js0 = thread_ns(tty.pid, JS_THREAD)
            window = CpuWindow(tty.pid)
            out, _ = tty.read_until(END, opts.stream * 10 + 30)
            result = window.stop()
            js_ms = (thread_ns(tty.pid, JS_THREAD) - js0) / 1e6
            if profiler:
                profiler.send_signal(2)
                profiler.wait()
            screen.feed(out)
            screen.feed(tty.drain(0.5))
            save_screen(opts, agent, scenario, run, screen)
            shown = screen.text()
            if scenario == "ext-stream":
                m = re.search(r"streamed ([\d,]+) chars", shown)
                result["footer_chars"] = int(m.group(1).replace(",", "")) if m else None
                result["status_shown"] = "done: " in shown
            else:
                result["footer_chars"] = None
                # custom-footer.ts's line: tokens, cost and the model at the right edge.
                result["status_shown"] = bool(re.search(r"↑\S+ ↓\S+ \$\d+\.\d{3} +mock-model", shown))
        finally:
            tty.close()
        secs = result["seconds"]
        result.update({"chars": len(text), "tokens_per_s": len(text) / 4 / secs,
                       "pct": result["cpu_ms"] / 10 / secs, "js_pct": js_ms / 10 / secs,
                       "frames_per_s": out.count(SYNC_END) / secs, "bytes_per_s": len(out) / secs})
        return result
    finally:
        box.close()


def run_one(scenario, agent, opts, run):
    if scenario == "ext-widgets":
        r = widgets_run(agent, opts, run)
        rm = r["render_ms"]
        line = (f"render {med(rm):.3f} ms/frame (p90 {pct(rm, 0.9):.3f}, {r['full_frames']} full of "
                f"{r['js_frames']} JS frames, {r['ticks']} ticks), CPU {r['cpu_ms_per_tick']:.2f} ms/tick, "
                f"JS thread {r['js_thread_ms_per_tick']:.2f} ms/tick, {r['term_frames_per_tick']:.2f} "
                f"terminal frames/tick, {r['bytes_per_tick']:.0f} B/tick, widgets shown {r['widgets_shown']}/10")
    elif scenario == "ext-keys":
        r = keys_run(agent, opts, run)
        line = (f"median {med(r['keys_ms']):.2f} ms (p90 {pct(r['keys_ms'], 0.9):.2f}, max "
                f"{max(r['keys_ms']):.2f}), {r['cpu_ms_per_key']:.2f} ms CPU/key, JS thread "
                f"{r['js_thread_ms_per_key']:.2f} ms/key, frames/key {med(r['frames_per_key'])} "
                f"(max {max(r['frames_per_key'])}), timed frame shows the key {r['shown_first']}/"
                f"{r['checked']}, text at the end {r['all_shown']}, rainbow {r['rainbow']}, "
                f"{r['first_frame_lines']} lines")
    else:
        r = stream_ext_run(agent, opts, run, scenario)
        line = (f"{r['pct']:.2f} % of a core (JS thread {r['js_pct']:.2f} %) at {r['tokens_per_s']:.0f} "
                f"tokens/s, {r['frames_per_s']:.0f} frames/s, {r['bytes_per_s'] / 1024:.0f} KiB/s, "
                f"footer {r['footer_chars']} of {r['chars']} chars, status/footer shown {r['status_shown']}")
    print(f"  run {run + 1} {agent} {scenario}: {line}", file=sys.stderr, flush=True)
    return r


# ---------------------------------------------------------------- report


def report(agents, results):
    """measure | knightcode | pi | ratio | target | met, medians over all samples/runs."""
    rows = []

    def row(scenario, measure, value, fmt, target=None, extra=None):
        """value(list of runs) -> number; extra(list of runs) -> text after the number."""
        cells, nums = {}, {}
        for agent in agents:
            rs = results.get((agent, scenario))
            v = value(rs, agent) if rs else None
            nums[agent] = v
            cells[agent] = "-" if v is None else fmt(v) + (f" ({extra(rs, agent)})" if extra else "")
        ours, ref = nums.get("ours"), nums.get("pi")
        ratio = f"{ours / ref:.2f}" if ours is not None and ref else ""
        met = ""
        if target and ours is not None:
            met = "yes" if target[1](ours) else "**no**"
        rows.append((measure, cells, ratio, target[0] if target else "", met))

    def runs_n(rs):
        return len(rs)

    def all_of(key):
        return lambda rs, a: med([x for r in rs for x in r[key]])

    def each(key):
        return lambda rs, a: med([r[key] for r in rs])

    def ours_only(key):
        return lambda rs, a: med([r[key] for r in rs]) if a == "ours" else None

    ms = lambda v: f"{v:.2f} ms"  # noqa: E731
    ms3 = lambda v: f"{v:.3f} ms"  # noqa: E731
    if any(s == "ext-widgets" for _, s in results):
        row("ext-widgets", "10 JS widgets: render time per frame (sum of the 10), median",
            all_of("render_ms"), ms3, ("≤ 2 ms", lambda v: v <= TARGETS["render_ms"]),
            lambda rs, a: f"p90 {pct([x for r in rs for x in r['render_ms']], 0.9):.3f}; "
                          f"{sum(r['full_frames'] for r in rs)} frames, {runs_n(rs)} runs")
        row("ext-widgets", "10 JS widgets: process CPU per 50 ms tick", each("cpu_ms_per_tick"), ms)
        row("ext-widgets", "10 JS widgets: JS thread CPU per tick", ours_only("js_thread_ms_per_tick"), ms)
        row("ext-widgets", "10 JS widgets: terminal frames per tick", each("term_frames_per_tick"),
            lambda v: f"{v:.2f}")
    if any(s == "ext-keys" for _, s in results):
        row("ext-keys", "keystroke → frame, JS editor (rainbow-editor.ts), 10,208-line transcript",
            all_of("keys_ms"), ms, ("≤ 4 ms", lambda v: v <= TARGETS["key_ms"]),
            lambda rs, a: f"p90 {pct([x for r in rs for x in r['keys_ms']], 0.9):.2f}, max "
                          f"{max(x for r in rs for x in r['keys_ms']):.2f}; "
                          f"{sum(len(r['keys_ms']) for r in rs)} keys, {runs_n(rs)} runs")
        row("ext-keys", "CPU per keystroke", each("cpu_ms_per_key"), ms)
        row("ext-keys", "JS thread CPU per keystroke", ours_only("js_thread_ms_per_key"), ms)
        row("ext-keys", "frames per keystroke", all_of("frames_per_key"), lambda v: f"{v:g}")
    for scenario, label in (("ext-stream", "JS live footer + setStatus per update (live-footer.ts)"),
                            ("ext-stream-examples", "custom-footer.ts + status-line.ts")):
        if not any(s == scenario for _, s in results):
            continue
        row(scenario, f"streaming ~1,000 tokens/s, {label}: CPU", each("pct"),
            lambda v: f"{v:.1f} % of a core", ("< 10 %", lambda v: v < TARGETS["stream_pct"]),
            lambda rs, a: f"{min(r['pct'] for r in rs):.1f}–{max(r['pct'] for r in rs):.1f}; {runs_n(rs)} runs")
        row(scenario, "… JS thread", ours_only("js_pct"), lambda v: f"{v:.1f} % of a core")
        row(scenario, "… tokens/s", each("tokens_per_s"), lambda v: f"{v:.0f}")
        row(scenario, "… frames/s", each("frames_per_s"), lambda v: f"{v:.0f}")
    names = {"ours": "knightcode", "pi": f"pi {VERSION}"}
    print("| measure | " + " | ".join(names[a] for a in agents) + " | ratio | target | met |")
    print("|---|" + "---|" * len(agents) + "---|---|---|")
    for measure, cells, ratio, target, met in rows:
        print(f"| {measure} | " + " | ".join(cells[a] for a in agents) + f" | {ratio} | {target} | {met} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per scenario and agent")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--agents", default="ours,pi")
    parser.add_argument("--examples", help="the reference's examples/extensions folder")
    parser.add_argument("--seconds", type=float, default=10, help="ext-widgets: seconds measured")
    parser.add_argument("--warmup", type=float, default=2, help="ext-widgets: seconds before measuring")
    parser.add_argument("--keys", type=int, default=200, help="ext-keys: timed keystrokes per run")
    parser.add_argument("--key-gap", type=float, default=0.02, help="ext-keys: seconds between keys")
    parser.add_argument("--pairs", type=int, default=200, help="ext-keys: user/assistant pairs")
    parser.add_argument("--stream", type=float, default=10, help="ext-stream*: seconds of streaming")
    parser.add_argument("--quiet-wait", type=float, default=60)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--json", help="write every sample here")
    parser.add_argument("--screens", metavar="DIR", help="write each run's final screen text here")
    parser.add_argument("--perf", metavar="DIR", help="`perf record` each measured window into DIR")
    opts = parser.parse_args()
    agents = opts.agents.split(",")
    scenarios = opts.scenarios.split(",")
    for s in scenarios:
        if s not in SCENARIOS:
            sys.exit(f"unknown scenario {s}; known: {', '.join(SCENARIOS)}")
    opts.examples = opts.examples or default_examples()
    if not opts.no_build:
        subprocess.run(["cargo", "build", "-q", "--release", "--locked", "-p", "knightcode-cli",
                        "-p", "knightcode-testkit"], cwd=ROOT, check=True)
    for path in [KNIGHTCODE, MOCK] + ([PI] if "pi" in agents else []) + \
            [os.path.join(opts.examples, "rainbow-editor.ts")]:
        if not os.path.exists(path):
            sys.exit(f"missing {path}: cargo build --release -p knightcode-cli -p knightcode-testkit"
                     " (and npm ci in scripts/pi for the reference agent)")
    print(f"machine: {machine()}; load {loadavg()}", flush=True)
    results, busy = {}, 0
    for run in range(opts.runs):  # interleaved, so load changes hit every agent alike
        for scenario in scenarios:
            for agent in agents:
                if wait_until_quiet(opts.quiet_wait) == "busy":
                    busy += 1
                results.setdefault((agent, scenario), []).append(run_one(scenario, agent, opts, run))
    print(f"load after: {loadavg()}; runs started while another process wanted a CPU "
          f"(after waiting {opts.quiet_wait:.0f} s): {busy}")
    print()
    report(agents, results)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({f"{a}/{s}": rs for (a, s), rs in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
