#!/usr/bin/env python3
"""The crash suite (issue 31): `kill -9` at random points of real runs, then check that nothing
the agent acknowledged was lost.

Each trial runs one scenario in a fresh sandbox (with its own mock model,
`knightcode-mock-provider`, answering in small paced chunks) and kills knightcode with SIGKILL
after a random delay within the scenario's usual length. The scenarios, taken in turn:

* `print`, `json`, `rpc`: a four-turn read/bash/edit run in that mode;
* `compact`: an RPC run, then the `compact` command (the summary streamed slowly);
* `settings`: 30 RPC commands that each write `settings.json` (`set_auto_retry`), one after
  another's answer;
* `install`: `knightcode install git:...` of a package cloned from a local bare repository.

Then, as the scenario applies:

* every complete line of the session file parses as JSON (a cut-off last line is allowed: the
  next owner sets it aside);
* every message a `message_end` event reported on stdout is in the file, and a compaction the
  `compact` response reported is too;
* when the edit reached `notes.txt`, the file history holds its original (what `/undo` puts
  back);
* `settings.json` parses and holds the last acknowledged value (or the one sent after it);
* a package the settings list is installed whole, and installing it again works;
* `knightcode --continue -p ...` resumes the session and answers (exit 0).

    python3 scripts/reliability/crash.py [--kills 100] [--seed N] [--only SCENARIO,...] [--binary PATH]

Uses the debug build in $CARGO_TARGET_DIR (a `cargo test` or `cargo build` makes it). Prints a
summary; exits 1 when any check failed. Figures: docs/reliability.md.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
SCENARIOS = ("print", "json", "rpc", "compact", "settings", "install")
ORIGINAL_NOTES = "alpha\nbeta\ngamma\n"


def tool_call(call_id, name, args):
    return {"toolCall": {"id": call_id, "name": name, "argumentsJson": json.dumps(args)}}


# Four model turns, each streamed 4 characters per millisecond so that a run lasts long enough
# for kills to land inside streaming, tool execution and the writes between them.
PACED = {"textChars": 4, "intervalMs": 1}
SCRIPT = [
    {"parts": [{"text": "Reading the notes first. " * 8}, tool_call("c1", "read", {"path": "notes.txt"})],
     "chunking": PACED},
    {"parts": [{"text": "Listing the folder. " * 8}, tool_call("c2", "bash", {"command": "ls; sleep 0.05"})],
     "chunking": PACED},
    {"parts": [tool_call("c3", "edit", {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]})],
     "chunking": PACED},
    {"parts": [{"text": "Done: beta is now BETA. " * 8}], "chunking": PACED},
]
RESUME_SCRIPT = [{"parts": [{"text": "Resumed."}]}]


class Mock:
    """The scripted model on a free port, for one trial."""

    def __init__(self, binary, script, workdir):
        path = os.path.join(workdir, f"script-{len(script)}.json")
        with open(path, "w") as f:
            json.dump(script, f)
        self.process = subprocess.Popen(
            [binary, "--format", "openai-completions", "--script", path],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.url = self.process.stdout.readline().strip()
        if not self.url:
            raise SystemExit("the mock provider did not start")

    def stop(self):
        self.process.kill()
        self.process.wait()


def sandbox(root, url):
    home, agent, project = (os.path.join(root, d) for d in ("home", "agent", "project"))
    for d in (home, agent, project):
        os.makedirs(d, exist_ok=True)
    models = {"providers": {"mock": {
        "baseUrl": url, "api": "openai-completions", "apiKey": "test-key",
        "models": [{"id": "mock-model", "name": "Mock", "reasoning": False, "input": ["text"],
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    "contextWindow": 200000, "maxTokens": 8192}]}}}
    with open(os.path.join(agent, "models.json"), "w") as f:
        json.dump(models, f)
    with open(os.path.join(project, "notes.txt"), "w") as f:
        f.write(ORIGINAL_NOTES)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "KNIGHTCODE_CODING_AGENT_DIR": agent}
    return env, agent, project


def set_models_url(agent, url):
    path = os.path.join(agent, "models.json")
    with open(path) as f:
        models = json.load(f)
    models["providers"]["mock"]["baseUrl"] = url
    with open(path, "w") as f:
        json.dump(models, f)


COMPACT_SCRIPT = [
    {"parts": [{"text": "Here is a long answer to summarise later. " * 12}], "chunking": PACED},
    {"parts": [{"text": "## Goal\nThe summary of the conversation so far. " * 12}], "chunking": PACED},
]
SETTINGS_WRITES = 30
PACKAGE = "git:example.com/user/repo.git"


class Run:
    """knightcode started for one trial; stdout is read as it comes (a full pipe never holds
    the run up), and `on_line` may answer each complete line through `send`."""

    def __init__(self, args, env, cwd, stdin_lines=None, on_line=None):
        self.process = subprocess.Popen(args, cwd=cwd, env=env,
                                        stdin=subprocess.PIPE if stdin_lines is not None else subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.started = time.monotonic()
        self.elapsed = None
        self.chunks = []
        self.on_line = on_line
        self.reader = threading.Thread(target=self._read)
        self.reader.start()
        for line in stdin_lines or []:
            self.send(line)

    def send(self, message):
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # killed meanwhile

    def close_stdin(self):
        try:
            self.process.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def _read(self):
        pending = b""
        for chunk in iter(lambda: self.process.stdout.read1(65536), b""):
            self.chunks.append(chunk)
            if self.on_line is None:
                continue
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                try:
                    self.on_line(self, json.loads(line))
                except ValueError:
                    pass

    def stdout(self):
        return b"".join(self.chunks)

    def finish(self, kill_after):
        """Waits `kill_after` seconds, then kills; True when killed."""
        try:
            self.process.wait(timeout=kill_after)
            killed = False
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGKILL)
            killed = True
        self.process.wait()
        self.elapsed = time.monotonic() - self.started
        self.reader.join()
        if self.process.stdin:
            self.close_stdin()
        return killed


def model_args(binary):
    return [binary, "--provider", "mock", "--model", "mock-model"]


def start(binary, scenario, env, project, state):
    prompt = "Change beta to BETA in notes.txt"
    if scenario == "print":
        return Run(model_args(binary) + ["-p", prompt], env, project)
    if scenario == "json":
        return Run(model_args(binary) + ["--mode", "json", "-p", prompt], env, project)
    if scenario == "rpc":
        def on_line(run, event):
            if event.get("type") == "agent_end":
                run.close_stdin()
        return Run(model_args(binary) + ["--mode", "rpc"], env, project,
                   stdin_lines=[{"type": "prompt", "message": prompt, "id": "p"}], on_line=on_line)
    if scenario == "compact":
        def on_line(run, event):
            if event.get("type") == "agent_end" and not state.get("compact_sent"):
                state["compact_sent"] = True
                run.send({"type": "compact", "id": "c"})
            elif event.get("type") == "response" and event.get("command") == "compact":
                run.close_stdin()
        return Run(model_args(binary) + ["--mode", "rpc"], env, project,
                   stdin_lines=[{"type": "prompt", "message": "Tell me a long story", "id": "p"}], on_line=on_line)
    if scenario == "settings":
        # Alternate values, starting with the opposite of the default (on).
        state["sent"] = []
        state["acknowledged"] = []

        def send_next(run):
            if len(state["sent"]) == SETTINGS_WRITES:
                run.close_stdin()
                return
            value = len(state["sent"]) % 2 == 1
            state["sent"].append(value)
            run.send({"type": "set_auto_retry", "enabled": value, "id": f"s{len(state['sent'])}"})

        def on_line(run, event):
            if event.get("type") == "response" and event.get("command") == "set_auto_retry" and event.get("success"):
                state["acknowledged"].append(state["sent"][len(state["acknowledged"])])
                send_next(run)
        run = Run(model_args(binary) + ["--mode", "rpc"], env, project, stdin_lines=[], on_line=on_line)
        send_next(run)
        return run
    if scenario == "install":
        return Run([binary, "install", PACKAGE], env, project)
    raise ValueError(scenario)


def session_files(agent):
    found = []
    for base, _, names in os.walk(os.path.join(agent, "sessions")):
        found += [os.path.join(base, n) for n in names if n.endswith(".jsonl")]
    return sorted(found)


def reported(stdout):
    """(role, timestamp) of each message a complete `message_end` line reported, and whether a
    successful `compact` response was reported."""
    messages, compacted = [], False
    for line in stdout.split(b"\n")[:-1]:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "message_end":
            message = event.get("message", {})
            messages.append((message.get("role"), message.get("timestamp")))
        elif event.get("type") == "response" and event.get("command") == "compact" and event.get("success"):
            compacted = True
    return messages, compacted


def check_session(agent, scenario, stdout):
    """Problems found in the session left by a killed run."""
    problems = []
    files = session_files(agent)
    stored, compactions = [], 0
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        for number, line in enumerate(lines[:-1], 1):
            try:
                entry = json.loads(line)
            except ValueError as e:
                problems.append(f"{os.path.basename(path)} line {number} does not parse: {e}")
                continue
            message = entry.get("message")
            if entry.get("type") == "message" and isinstance(message, dict):
                stored.append((message.get("role"), message.get("timestamp")))
            elif entry.get("type") == "compaction":
                compactions += 1
    if scenario != "print":
        messages, compacted = reported(stdout)
        for role, timestamp in messages:
            # Tool results and custom messages are stored under their own entry shapes too;
            # every reported message is a `message` entry with the same timestamp.
            if (role, timestamp) not in stored:
                problems.append(f"a {role} message reported by message_end (timestamp {timestamp}) is not in the file")
        if compacted and compactions == 0:
            problems.append("the compact response was reported but no compaction entry is in the file")
    return problems, files


def check_backup(agent, project):
    """When the edit reached notes.txt, the file history must hold its original."""
    with open(os.path.join(project, "notes.txt")) as f:
        if f.read() == ORIGINAL_NOTES:
            return [], False
    history = os.path.join(agent, "file-history")
    for session in (os.listdir(history) if os.path.isdir(history) else []):
        index_path = os.path.join(history, session, "index.json")
        if not os.path.exists(index_path):
            continue
        try:
            with open(index_path) as f:
                index = json.load(f)
        except ValueError as e:
            return [f"{index_path} does not parse: {e}"], True
        for checkpoint in index.get("checkpoints", {}).values():
            for record in checkpoint.get("files", {}).values():
                if record.get("path", "").endswith("notes.txt") and record.get("backup"):
                    with open(os.path.join(history, session, record["backup"])) as f:
                        if f.read() == ORIGINAL_NOTES:
                            return [], True
    return ["notes.txt was edited but the file history holds no backup of its original"], True


def check_settings(agent, state):
    path = os.path.join(agent, "settings.json")
    if not os.path.exists(path):
        return [] if not state["acknowledged"] else ["settings.json is missing after an acknowledged write"]
    try:
        with open(path) as f:
            value = json.load(f).get("retry", {}).get("enabled", True)
    except ValueError as e:
        return [f"settings.json does not parse: {e}"]
    done = len(state["acknowledged"])
    allowed = {state["acknowledged"][-1]} if done else {True}
    if done < len(state["sent"]):
        allowed.add(state["sent"][done])
    if value not in allowed:
        return [f"settings.json has retry.enabled={value} after {done} acknowledged writes (expected one of {sorted(allowed)})"]
    return []


def package_remotes(workdir):
    """A bare repository standing for https://example.com/user/repo.git, and the environment
    that redirects git to it."""
    remotes = os.path.join(workdir, "remotes")
    bare = os.path.join(remotes, "user", "repo.git")
    work = os.path.join(workdir, "package-work")
    git_env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    os.makedirs(bare)
    os.makedirs(os.path.join(work, "skills", "first"))
    subprocess.run(["git", "init", "-q", "--bare"], cwd=bare, check=True)
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    with open(os.path.join(work, "skills", "first", "SKILL.md"), "w") as f:
        f.write("---\nname: first\ndescription: The first skill.\n---\nDo it.\n")
    for i in range(40):  # enough objects that the clone takes a while
        with open(os.path.join(work, f"file{i}.txt"), "w") as f:
            f.write(f"file {i}\n" * 200)
    subprocess.run(["git", "add", "."], cwd=work, check=True, env=git_env)
    subprocess.run(["git", "commit", "-qm", "one"], cwd=work, check=True, env=git_env)
    subprocess.run(["git", "push", "-q", bare, "HEAD:refs/heads/main"], cwd=work, check=True, env=git_env)
    subprocess.run(["git", "symbolic-ref", "HEAD", "refs/heads/main"], cwd=bare, check=True)
    return {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.file://{remotes}/.insteadOf",
            "GIT_CONFIG_VALUE_0": "https://example.com"}


def check_install(binary, env, project, agent):
    problems = []
    target = os.path.join(agent, "git", "example.com", "user", "repo")
    path = os.path.join(agent, "settings.json")
    listed = False
    if os.path.exists(path):
        try:
            with open(path) as f:
                listed = PACKAGE in json.load(f).get("packages", [])
        except ValueError as e:
            problems.append(f"settings.json does not parse: {e}")
    whole = os.path.isfile(os.path.join(target, "skills", "first", "SKILL.md")) and \
        os.path.isfile(os.path.join(target, "file39.txt"))
    if listed and not whole:
        problems.append("the settings list the package but its folder is not whole")
    again = subprocess.run([binary, "install", PACKAGE], cwd=project, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=60)
    if again.returncode != 0:
        problems.append(f"installing again failed (exit {again.returncode}): {again.stderr.decode(errors='replace')[-300:]}")
    elif not (os.path.isfile(os.path.join(target, "skills", "first", "SKILL.md"))
              and os.path.isfile(os.path.join(target, "file39.txt"))):
        problems.append("installing again left the package's folder incomplete (a half-made clone was kept)")
    return problems


def resume(binary, env, project, agent, mock_binary, workdir):
    mock = Mock(mock_binary, RESUME_SCRIPT, workdir)
    try:
        set_models_url(agent, mock.url)
        run = subprocess.run(model_args(binary) + ["--continue", "-p", "again"],
                             cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        if run.returncode != 0 or b"Resumed." not in run.stdout:
            return [f"--continue failed (exit {run.returncode}): {run.stderr.decode(errors='replace')[-300:]}"]
        return []
    finally:
        mock.stop()


def script_for(scenario):
    return COMPACT_SCRIPT if scenario == "compact" else SCRIPT


def trial(opts, scenario, root, delay, git_env):
    """One run of `scenario` killed after `delay` seconds (None: never); returns (killed,
    problems, stats)."""
    stats = {"sessions": 0, "entries": 0, "resumed": 0, "edited": 0, "compacted": 0, "elapsed": 0.0}
    mock = Mock(opts.mock, script_for(scenario), root)
    state = {}
    try:
        env, agent, project = sandbox(root, mock.url)
        env.update(git_env)
        run = start(opts.binary, scenario, env, project, state)
        killed = run.finish(delay)
        stdout = run.stdout()
        stats["elapsed"] = run.elapsed
    finally:
        mock.stop()
    if scenario == "settings":
        stats["acknowledged"] = len(state["acknowledged"])
        return killed, check_settings(agent, state), stats
    if scenario == "install":
        return killed, check_install(opts.binary, env, project, agent), stats
    problems, files = check_session(agent, scenario, stdout)
    stats["compacted"] = int(reported(stdout)[1])
    backup_problems, edited = check_backup(agent, project)
    problems += backup_problems
    stats["edited"] += edited
    if files:
        stats["sessions"] += 1
        with open(files[-1], "rb") as f:
            stats["entries"] += max(0, f.read().count(b"\n") - 1)
        resumed = resume(opts.binary, env, project, agent, opts.mock, root)
        problems += resumed
        stats["resumed"] += not resumed
    return killed, problems, stats


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    parser.add_argument("--binary", default=os.path.join(TARGET, "debug", "knightcode"))
    parser.add_argument("--mock", default=os.path.join(TARGET, "debug", "knightcode-mock-provider"))
    opts = parser.parse_args()
    for path in (opts.binary, opts.mock):
        if not os.path.exists(path):
            sys.exit(f"missing {path}: cargo build -p knightcode-cli -p knightcode-testkit first")
    scenarios = [s for s in opts.only.split(",") if s]
    unknown = [s for s in scenarios if s not in SCENARIOS]
    if unknown:
        sys.exit(f"unknown scenario {unknown[0]}: the scenarios are {', '.join(SCENARIOS)}")
    seed = opts.seed if opts.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    workdir = tempfile.mkdtemp(prefix="kc-crash-")
    failures = []
    totals = {"kills": 0, "finished_first": 0, "sessions": 0, "entries": 0, "resumed": 0, "edited": 0,
              "compacted": 0}
    per_scenario = {s: {"trials": 0, "killed": 0} for s in scenarios}
    try:
        git_env = package_remotes(workdir)
        # How long an unkilled run of each scenario takes here: kills land within it.
        # An unkilled run must do what the scenario is for, or its kills prove nothing.
        spans = {}
        for scenario in scenarios:
            root = tempfile.mkdtemp(dir=workdir)
            _, problems, stats = trial(opts, scenario, root, 120, git_env)
            spans[scenario] = stats["elapsed"]
            if scenario == "compact" and not stats["compacted"]:
                problems.append("the compact command did not succeed")
            if scenario == "settings" and stats["acknowledged"] != SETTINGS_WRITES:
                problems.append(f"{stats['acknowledged']} of {SETTINGS_WRITES} settings writes were acknowledged")
            if scenario in ("print", "json", "rpc") and not stats["edited"]:
                problems.append("the edit did not reach notes.txt")
            if problems:
                sys.exit(f"an unkilled {scenario} run already fails its checks: {problems}")
            shutil.rmtree(root, ignore_errors=True)
        for number in range(opts.kills):
            scenario = scenarios[number % len(scenarios)]
            root = tempfile.mkdtemp(dir=workdir)
            delay = rng.uniform(0, spans[scenario] * 1.1)
            killed, problems, stats = trial(opts, scenario, root, delay, git_env)
            per_scenario[scenario]["trials"] += 1
            per_scenario[scenario]["killed"] += killed
            totals["kills" if killed else "finished_first"] += 1
            for key in ("sessions", "entries", "resumed", "edited", "compacted"):
                totals[key] += stats[key]
            for problem in problems:
                failures.append(f"trial {number} ({scenario}, killed after {delay:.3f}s): {problem}")
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"crash suite: seed {seed}, {opts.kills} trials ({totals['kills']} killed, "
          f"{totals['finished_first']} finished first); {totals['sessions']} sessions with "
          f"{totals['entries']} entries checked, {totals['resumed']} resumed with --continue, "
          f"{totals['edited']} edits with their backup checked, {totals['compacted']} compactions "
          f"acknowledged; {len(failures)} problems")
    print("  by scenario (trials/killed, usual length): " + ", ".join(
        f"{s} {c['trials']}/{c['killed']} {spans[s]:.2f}s" for s, c in per_scenario.items()))
    for failure in failures:
        print("  " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
