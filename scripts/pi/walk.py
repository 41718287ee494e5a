#!/usr/bin/env python3
"""The side-by-side walk of issue 32: ours and the reference agent (pi) driven through the
same everyday steps in tmux, each on the same scripted model, with every screen saved so the
two can be compared step by step.

    python3 scripts/pi/walk.py [--out DIR] [--only first-run,settings,...] [--agents ours,pi]

Binaries: ours from $KC_WALK_BINARY (else target/debug/knightcode under CARGO_TARGET_DIR), the
mock from $KC_WALK_MOCK (else the knightcode-mock-provider beside it), pi from scripts/pi
(`npm ci` there first). pi runs with PI_OFFLINE=1; each agent gets a fresh HOME and project
per scenario, in a 100x30 tmux window. Screens go to DIR/<scenario>/<step>.<agent>.txt
(default: a new folder under /tmp, printed at the end). This is a record for people to read,
not a test: nothing is asserted, and waits are short pauses for the screen to settle.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts", "bench"))
import oneshot_common  # noqa: E402
from oneshot_common import Mock, models_json  # noqa: E402

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
OURS = os.environ.get("KC_WALK_BINARY") or os.path.join(TARGET, "debug", "knightcode")
MOCK = os.environ.get("KC_WALK_MOCK") or os.path.join(os.path.dirname(OURS), "knightcode-mock-provider")
PI = os.path.join(HERE, "node_modules", ".bin", "pi")
# The mock the one-shot benchmarks use, from this build (they take the release one).
oneshot_common.MOCK = MOCK
COLS, ROWS = 100, 30
SETTLE = float(os.environ.get("KC_WALK_SETTLE", "1.5"))
ESC, CTRL_C, CTRL_O, CTRL_T = "Escape", "C-c", "C-o", "C-t"


def text(answer):
    return {"parts": [{"text": answer}], "usage": {"input": 50, "output": 5}}


def tool(call_id, name, args):
    return {
        "parts": [{"toolCall": {"id": call_id, "name": name, "argumentsJson": json.dumps(args)}}],
        "usage": {"input": 60, "output": 8},
    }


BIG = "".join(f"line {i} " + "x" * 60 + "\n" for i in range(1, 1201))
SIX = "import os\n\ndef main():\n    print('hi')\n\nmain()\n"
THIRTY = "".join(f"row {i}\n" for i in range(1, 31))

# name -> (files in the project, model script, steps). A step is (label, keys, literal):
# keys are tmux key names (literal=False) or text typed as is (literal=True, Enter after).
SCENARIOS = {
    "first-run": ({}, None, [("start", None, False), ("prompt", "hello", True)]),
    "settings": ({}, [], [("open", "/settings", True)]),
    "model-picker-escape": ({}, [], [
        ("open", "/model", True),
        ("filter", "mock", False),
        ("escape", ESC, False),
    ]),
    "truncated-read": ({"big.txt": BIG}, [tool("r1", "read", {"path": "big.txt"}), text("Read it.")], [
        ("collapsed", "read big.txt", True),
    ]),
    "diff-context": ({"six.py": SIX}, [
        tool("e1", "edit", {"path": "six.py", "edits": [{"oldText": "print('hi')", "newText": "print('hello')"}]}),
        text("Edited."),
    ], [("edited", "change the greeting", True)]),
    "ctrl-c-hint": ({}, [], [
        ("first-press", CTRL_C, False),
        ("after-window", None, False),
        ("second-press", CTRL_C, False),
    ]),
    "write-30-lines": ({}, [tool("w1", "write", {"path": "thirty.txt", "content": THIRTY}), text("Wrote it.")], [
        ("card", "write thirty lines", True),
    ]),
    "ctrl-t": ({}, [], [("toggle", CTRL_T, False)]),
    "at-completion": ({"hello.txt": "hi\n", "knightcode-session-1.html": "<html>\n", "other/help.md": "x\n"}, [], [
        ("completion", "@he", False),
    ]),
    "changelog": ({}, [], [("open", "/changelog", True)]),
}


def tmux(*args, check=True):
    return subprocess.run(["tmux", *args], check=check, capture_output=True, text=True)


def run_scenario(agent, name, out_dir):
    files, script, steps = SCENARIOS[name]
    root = tempfile.mkdtemp(prefix=f"kc-walk-{agent}-")
    home = os.path.join(root, "home")
    project = os.path.join(root, "project")
    agent_dir = os.path.join(home, ".knightcode" if agent == "ours" else ".pi", "agent")
    os.makedirs(agent_dir)
    os.makedirs(project)
    for path, content in files.items():
        full = os.path.join(project, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(content)
    mock = None
    if script is not None:
        mock = Mock(script, root)
        with open(os.path.join(agent_dir, "models.json"), "w") as f:
            json.dump(models_json(mock.url), f)
    binary = OURS if agent == "ours" else PI
    env = f"env -i PATH={os.environ['PATH']} HOME={home} TERM=xterm-256color LANG=C.UTF-8 PI_OFFLINE=1"
    session = f"kcwalk-{agent}-{name}"
    tmux("kill-session", "-t", session, check=False)
    # The pane outlives the agent, so a screen is still there to save when it exits.
    command = f"{env} {binary}; echo \"[exited with $?]\"; sleep 3600"
    tmux("new-session", "-d", "-s", session, "-x", str(COLS), "-y", str(ROWS), "-c", project, command)
    try:
        time.sleep(SETTLE * 2)
        for label, keys, literal in steps:
            if keys is not None:
                if literal:
                    tmux("send-keys", "-t", session, "-l", keys)
                    tmux("send-keys", "-t", session, "Enter")
                elif keys.startswith(("C-", "Escape")):
                    tmux("send-keys", "-t", session, keys)
                else:
                    tmux("send-keys", "-t", session, "-l", keys)
            time.sleep(SETTLE * (3 if label == "after-window" else 1))
            screen = tmux("capture-pane", "-p", "-t", session).stdout
            path = os.path.join(out_dir, name, f"{label}.{agent}.txt")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(screen)
    finally:
        tmux("kill-session", "-t", session, check=False)
        if mock:
            mock.stop()
        shutil.rmtree(root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--only", default=None, help="comma-separated scenario names")
    parser.add_argument("--agents", default="ours,pi")
    opts = parser.parse_args()
    for binary in (OURS, MOCK):
        if not os.path.exists(binary):
            sys.exit(f"walk: {binary} is missing (cargo build -p knightcode-cli -p knightcode-testkit)")
    agents = opts.agents.split(",")
    if "pi" in agents and not os.path.exists(PI):
        sys.exit("walk: pi is missing (cd scripts/pi && npm ci)")
    names = opts.only.split(",") if opts.only else list(SCENARIOS)
    out_dir = opts.out or tempfile.mkdtemp(prefix="kc-walk-screens-")
    for name in names:
        for agent in agents:
            run_scenario(agent, name, out_dir)
            print(f"{name}: {agent} done", flush=True)
    print(f"screens in {out_dir}")


if __name__ == "__main__":
    main()
