#!/usr/bin/env python3
"""The code-shape counts of issue 29 ("one home per concept"), checked as a ratchet.

    python3 scripts/shape.py            # print the counts; fail if one exceeds its limit
    python3 scripts/shape.py --update   # write the current counts as the new limits

The limits live in scripts/shape-limits.json. A count may fall (then lower its limit with
--update in the same change) but never rise: CI runs this script (.ci/run). The targets
are 0 for every count; what is left is listed per file when a count is not 0.

Counts:
- result_string: `Result<_, String>` in the ai, runtime and ext crates (src/ only)
- error_text_compare: comparisons of error texts in front ends (interactive, headless,
  cli src/): `== <...>CANCELLED|BUSY|PROCESSING` constants
- policy_wildcards: `_ =>` arms in the command policy (runtime/src/actor/policy.rs)
- long_functions: functions over 150 lines in runtime/src
- long_files: .rs/.js files over 800 lines outside tests and generated code (the extension
  host's crates/ext/js/*.js included)
- long_js_lines: lines over 119 columns in crates/ext/js (prettier wraps code at 119 but
  not strings or comments)
"""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMITS = os.path.join(ROOT, "scripts", "shape-limits.json")


def sources(*dirs, exts=(".rs",)):
    for d in dirs:
        for base, subdirs, files in os.walk(os.path.join(ROOT, d)):
            subdirs[:] = [s for s in subdirs if s not in ("tests", "target", "node_modules")]
            for f in sorted(files):
                if f.endswith(exts):
                    yield os.path.join(base, f)


def rel(path):
    return os.path.relpath(path, ROOT)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def strip_tests(text):
    """Drops `#[cfg(test)] mod … { … }` blocks (unit tests are tests, not code shape)."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i : m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def result_string():
    hits = []
    for crate in ("ai", "runtime", "ext"):
        for path in sources(f"crates/{crate}/src"):
            for n, line in enumerate(strip_tests(read(path)).splitlines(), 1):
                if re.search(r"Result<[^;{]*,\s*String>", line):
                    hits.append(f"{rel(path)}:{n}")
    return hits


def error_text_compare():
    hits = []
    pattern = re.compile(r"==\s*(?:Some\()?(?:[\w:]+::)?[A-Z_]*(?:CANCELLED|BUSY|PROCESSING)\b")
    for crate in ("interactive", "headless", "cli"):
        for path in sources(f"crates/{crate}/src"):
            for n, line in enumerate(read(path).splitlines(), 1):
                if pattern.search(line):
                    hits.append(f"{rel(path)}:{n}")
    return hits


def policy_wildcards():
    path = os.path.join(ROOT, "crates/runtime/src/actor/policy.rs")
    return [f"{rel(path)}:{n}" for n, line in enumerate(read(path).splitlines(), 1) if re.match(r"\s*_\s*=>", line)]


def long_functions(limit=150):
    hits = []
    fn = re.compile(r"^(\s*)(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+(\w+)")
    for path in sources("crates/runtime/src"):
        lines = strip_tests(read(path)).splitlines()
        i = 0
        while i < len(lines):
            m = fn.match(lines[i])
            if not m:
                i += 1
                continue
            depth, j, opened = 0, i, False
            while j < len(lines):
                code = re.sub(r'"(?:\\.|[^"\\])*"', '""', lines[j].split("//")[0])
                depth += code.count("{") - code.count("}")
                opened = opened or "{" in code
                if (opened and depth <= 0) or (not opened and code.rstrip().endswith(";")):
                    break
                j += 1
            length = j - i + 1
            if length > limit:
                hits.append(f"{rel(path)}:{i + 1} {m.group(2)} ({length} lines)")
            i = j + 1 if opened else i + 1
    return hits


def long_files(limit=800):
    hits = []
    for path in sources("crates", exts=(".rs", ".js")):
        if "/snapshots/" in path:
            continue
        count = read(path).count("\n")
        if count > limit:
            hits.append(f"{rel(path)} ({count} lines)")
    return hits


def long_js_lines(limit=119):
    hits = []
    for path in sources("crates/ext/js", exts=(".js",)):
        for n, line in enumerate(read(path).splitlines(), 1):
            if len(line) > limit:
                hits.append(f"{rel(path)}:{n} ({len(line)} columns)")
    return hits


CHECKS = {
    "result_string": result_string,
    "error_text_compare": error_text_compare,
    "policy_wildcards": policy_wildcards,
    "long_functions": long_functions,
    "long_files": long_files,
    "long_js_lines": long_js_lines,
}


def main():
    found = {name: check() for name, check in CHECKS.items()}
    counts = {name: len(hits) for name, hits in found.items()}
    if "--update" in sys.argv:
        with open(LIMITS, "w", encoding="utf-8") as f:
            json.dump(counts, f, indent=2)
            f.write("\n")
    limits = json.load(open(LIMITS, encoding="utf-8")) if os.path.exists(LIMITS) else counts
    failed = False
    for name, hits in found.items():
        limit = limits.get(name, 0)
        status = "ok" if len(hits) <= limit else "OVER"
        failed |= len(hits) > limit
        print(f"{name}: {len(hits)} (limit {limit}, target 0) {status}")
        if len(hits) > limit or "--list" in sys.argv:
            for hit in hits:
                print(f"    {hit}")
    if failed:
        print("A count rose above its limit (scripts/shape-limits.json); see the list above.")
        sys.exit(1)


if __name__ == "__main__":
    main()
