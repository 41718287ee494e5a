"""Shared set-up for the one-shot benchmarks and the JSON-mode comparison (issue 4).

Both agents run against the same scripted model (`knightcode-mock-provider`, OpenAI chat
completions format), each run in a fresh temporary HOME, agent directory and project
directory, with a scrubbed environment. Nothing here is timed; see oneshot.py.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
# KC_BENCH_BINARY: another build of ours (copied aside), to compare two builds in one sitting.
KNIGHTCODE = os.environ.get("KC_BENCH_BINARY") or os.path.join(TARGET, "release", "knightcode")
MOCK = os.path.join(TARGET, "release", "knightcode-mock-provider")
PI = os.path.join(ROOT, "scripts", "pi", "node_modules", ".bin", "pi")
AGENTS = ("ours", "pi")

MODEL_ARGS = ["--provider", "mock", "--model", "mock-model"]
NOTES_BEFORE = "alpha\nbeta\ngamma\n"
NOTES_AFTER = "alpha\nBETA\ngamma\n"
HI_ANSWER = "Hello from the mock."
EDIT_PROMPT = "Change beta to BETA in notes.txt"
EDIT_ANSWER = "Done: notes.txt now says BETA."


def _tool_call(call_id, name, args):
    return {"toolCall": {"id": call_id, "name": name, "argumentsJson": json.dumps(args)}}


# One reply per model request. The read/bash/edit scenario is four model turns: read the
# file, run `ls`, edit it, answer.
HI_SCRIPT = [{"parts": [{"text": HI_ANSWER}], "usage": {"input": 50, "output": 5}}]
EDIT_SCRIPT = [
    {
        "parts": [{"text": "Let me read the notes."}, _tool_call("call_read_1", "read", {"path": "notes.txt"})],
        "usage": {"input": 900, "output": 20},
    },
    {
        "parts": [_tool_call("call_bash_2", "bash", {"command": "ls"})],
        "usage": {"input": 100, "output": 12, "cacheRead": 900},
    },
    {
        "parts": [
            _tool_call(
                "call_edit_3",
                "edit",
                {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]},
            )
        ],
        "usage": {"input": 120, "output": 30, "cacheRead": 1000},
    },
    {"parts": [{"text": EDIT_ANSWER}], "usage": {"input": 80, "output": 10, "cacheRead": 1120}},
]

# name -> (model script, or None when no model is involved; arguments after the executable)
SCENARIOS = {
    "version": (None, ["--version"]),
    "print-hi": (HI_SCRIPT, MODEL_ARGS + ["-p", "hi"]),
    "json-edit": (EDIT_SCRIPT, MODEL_ARGS + ["--mode", "json", EDIT_PROMPT]),
}


class Mock:
    """A scripted model server on 127.0.0.1; the script is played once, then exhausted."""

    def __init__(self, script, workdir):
        self.script_path = os.path.join(workdir, "mock-script.json")
        self.log_path = os.path.join(workdir, "mock-requests.jsonl")
        with open(self.script_path, "w") as f:
            json.dump(script, f)
        self.proc = subprocess.Popen(
            [MOCK, "--format", "openai-completions", "--script", self.script_path,
             "--port", "0", "--log", self.log_path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=open(os.path.join(workdir, "mock-stderr.txt"), "w"),
        )
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("http://"):
            self.stop()
            raise RuntimeError(f"mock provider did not print its URL (got {line!r})")
        self.url = line

    def requests(self):
        if not os.path.exists(self.log_path):
            return []
        with open(self.log_path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


def models_json(url):
    return {
        "providers": {
            "mock": {
                "baseUrl": url,
                "api": "openai-completions",
                "apiKey": "mock-api-key",
                "models": [{"id": "mock-model", "name": "Mock", "reasoning": False,
                            "contextWindow": 128000, "maxTokens": 4096}],
            }
        }
    }


class Sandbox:
    """A fresh HOME, agent directory and project directory for one run of one agent."""

    def __init__(self, agent, scenario, keep_dir=None):
        self.agent = agent
        self.root = keep_dir or tempfile.mkdtemp(prefix=f"kc-oneshot-{agent}-")
        self.home = os.path.join(self.root, "home")
        self.project = os.path.join(self.root, "project")
        if agent == "ours":
            self.agent_dir = os.path.join(self.home, ".knightcode", "agent")
        else:
            self.agent_dir = os.path.join(self.home, ".pi", "agent")
        os.makedirs(self.agent_dir)
        os.makedirs(self.project)
        if scenario == "json-edit":
            with open(os.path.join(self.project, "notes.txt"), "w") as f:
                f.write(NOTES_BEFORE)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "TERM": "dumb",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
        }
        if agent == "ours":
            self.env["KNIGHTCODE_CODING_AGENT_DIR"] = self.agent_dir
            self.argv0 = [KNIGHTCODE]
        else:
            self.env["PI_OFFLINE"] = "1"
            self.argv0 = [PI]
        self.mock = None

    def start_mock(self, script):
        self.mock = Mock(script, self.root)
        with open(os.path.join(self.agent_dir, "models.json"), "w") as f:
            json.dump(models_json(self.mock.url), f)

    def session_files(self):
        found = []
        for dirpath, _, files in os.walk(os.path.join(self.agent_dir, "sessions")):
            found += [os.path.join(dirpath, f) for f in files if f.endswith(".jsonl")]
        return sorted(found)

    def close(self, remove=True):
        if self.mock:
            self.mock.stop()
            self.mock = None
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)


def check_run(scenario, sandbox, rc, stdout, stderr):
    """Returns None when the run did what the scenario asks, else why not."""
    if rc != 0:
        return f"exit code {rc}: {stderr.strip()[-300:]}"
    if scenario == "version":
        # pi writes it to stderr when stdout or stdin is not a terminal (stdout "taken over").
        text = stdout or stderr
        return None if re.fullmatch(r"\d+\.\d+\.\d+\S*\n?", text) else f"odd version {text!r}"
    requests = sandbox.mock.requests()
    expected = len(SCENARIOS[scenario][0])
    if len(requests) != expected:
        return f"{len(requests)} model requests, expected {expected}"
    if scenario == "print-hi":
        return None if stdout.strip() == HI_ANSWER else f"answer {stdout!r}"
    try:
        events = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    except ValueError as e:
        return f"stdout is not JSONL: {e}"
    ends = [e["message"] for e in events if e.get("type") == "message_end"
            and e["message"].get("role") == "assistant"]
    texts = [b.get("text") for b in (ends[-1]["content"] if ends else []) if b.get("type") == "text"]
    if EDIT_ANSWER not in texts:
        return f"last assistant text {texts!r}"
    tools = [(e["toolName"], e["isError"]) for e in events if e.get("type") == "tool_execution_end"]
    if tools != [("read", False), ("bash", False), ("edit", False)]:
        return f"tool results {tools!r}"
    with open(os.path.join(sandbox.project, "notes.txt")) as f:
        if f.read() != NOTES_AFTER:
            return "notes.txt was not edited"
    if len(sandbox.session_files()) != 1:
        return f"{len(sandbox.session_files())} session files"
    return None
