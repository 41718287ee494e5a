#!/usr/bin/env python3
"""Builds fuzz/corpus/<target>/ (ignored by git) from the committed seeds (fuzz/seeds/), the
crash reproducers (fuzz/regressions/) and the repository's fixtures and docs: recorded
sessions and RPC input, JSON examples from the docs, the built-in themes, tool arguments the
recorded sessions carry, and skills and prompts that npm installed for the reference agent.

Usage: scripts/fuzz/seed.py [--clean]   (--clean empties the corpora first; without it, inputs
that earlier runs found are kept)."""
import hashlib
import json
import pathlib
import re
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZ = ROOT / "fuzz"
CORPUS = FUZZ / "corpus"
TOOLS = ["read", "write", "edit", "bash", "grep", "find", "ls"]  # crates/fuzzing/src/tools.rs order
MAX_BYTES = 256 * 1024


def add(target, data):
    if isinstance(data, str):
        data = data.encode()
    if not data or len(data) > MAX_BYTES:
        return
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def json_blocks(path):
    text = path.read_text(errors="replace")
    return re.findall(r"```jsonc?\n(.*?)```", text, re.S)


def walk(value):
    yield value
    if isinstance(value, dict):
        for v in value.values():
            yield from walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from walk(v)


def main():
    if "--clean" in sys.argv and CORPUS.exists():
        shutil.rmtree(CORPUS)
    for kind in ("seeds", "regressions"):
        for f in sorted((FUZZ / kind).glob("*/*")):
            add(f.parent.name, f.read_bytes())

    fixtures = ROOT / "fixtures"
    docs = sorted((ROOT / "docs").glob("*.md"))
    spec = pathlib.Path("/work/shared/spec")
    spec_docs = sorted(spec.glob("**/*.md")) if spec.is_dir() else []

    for f in sorted(fixtures.glob("**/session*.jsonl")):
        # The control byte 0 also opens the file as its owner (crates/fuzzing/src/session.rs).
        data = f.read_bytes()
        add("session_load", b"\x00" + data)
        # A torn last line and a damaged middle line: the repair paths.
        add("session_load", b"\x00" + data[: max(1, len(data) - 17)])
        lines = data.split(b"\n")
        if len(lines) > 3:
            mid = len(lines) // 2
            lines[mid] = lines[mid][: len(lines[mid]) // 2]
            add("session_load", b"\x01" + b"\n".join(lines))
    for f in sorted(fixtures.glob("**/rpc-in.jsonl")):
        add("rpc", b"\x00" + f.read_bytes())
        add("rpc", b"\x03" + f.read_bytes())
    rpc_lines = [b.strip() for d in docs if d.name == "rpc.md" for b in json_blocks(d)]
    rpc_lines = [line for block in rpc_lines for line in block.splitlines() if line.startswith("{")]
    if rpc_lines:
        add("rpc", b"\x05" + "\n".join(rpc_lines).encode())

    for f in sorted(fixtures.glob("**/*.jsonl")):
        for line in f.read_text(errors="replace").splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            for item in walk(value):
                if isinstance(item, dict) and item.get("type") == "toolCall" and item.get("name") in TOOLS:
                    arguments = json.dumps(item.get("arguments", {}))
                    add("tool_args", bytes([TOOLS.index(item["name"])]) + arguments.encode())

    for d in docs + spec_docs:
        for block in json_blocks(d):
            if '"providers"' in block:
                add("models_json", block)
            elif d.name == "settings.md" or '"compaction"' in block or '"retry"' in block:
                add("settings", block)
            elif "keybinding" in d.read_text(errors="replace").lower() and '"app.' in block:
                add("keybindings", b"\x00" + block.encode())
    for f in sorted((ROOT / "crates/resources/themes").glob("*.json")):
        add("theme", f.read_bytes())

    # The reference agent's package: its examples and docs carry skills and prompt templates.
    md_sources = list(ROOT.glob("scripts/pi/node_modules/@mariozechner/pi-coding-agent/**/*.md"))
    md_sources += list(pathlib.Path.home().glob(".cache/knightcode-rs/npm/pi-coding-agent-*/package/**/*.md"))
    md_sources += [d for d in docs + spec_docs if d.name in ("resources.md",)]
    for f in sorted(md_sources)[:200]:
        text = f.read_bytes()
        if text.startswith(b"---") or f.name == "SKILL.md":
            add("frontmatter", text)
    for d in docs + spec_docs:
        if d.name == "resources.md":
            for block in re.findall(r"```(?:markdown|md)\n(.*?)```", d.read_text(errors="replace"), re.S):
                add("frontmatter", block)

    for target in sorted(p.name for p in CORPUS.iterdir()):
        print(f"{target}: {sum(1 for _ in (CORPUS / target).iterdir())} inputs")


if __name__ == "__main__":
    main()
