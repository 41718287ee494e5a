#!/usr/bin/env bash
# Session export to HTML at scale, knightcode beside the reference agent (pi) in one run
# (issue 13): a generated 10,000-entry session (user / assistant with a read call / tool
# result turns, with code), `--export in.jsonl out.html` end to end (read, parse, render,
# write) on both, medians of RUNS runs. Also prints the in-process renderer bench.
# Figures: docs/perf.md "Export (issue 13)".
#
#   bash scripts/bench/export.sh [ENTRIES] [RUNS]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
ENTRIES="${1:-10000}"
RUNS="${2:-7}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/knightcode-rs/target}"

PI_DIR="$ROOT/scripts/pi"
if [ ! -x "$PI_DIR/node_modules/.bin/pi" ]; then
	(cd "$PI_DIR" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
(cd "$ROOT" && cargo build -q --release --locked -p knightcode-cli --bin knightcode)
KC="$CARGO_TARGET_DIR/release/knightcode"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home"
python3 - "$ENTRIES" "$WORK/session.jsonl" <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
usage = {"input": 1200, "output": 80, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1280,
         "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}}
code = "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n" * 8
with open(out, "w") as f:
    f.write(json.dumps({"type": "session", "version": 3, "id": "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
                        "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/home/user/project"}) + "\n")
    parent = None
    for i in range(n):
        k = i % 3
        if k == 0:
            m = {"role": "user", "content": [{"type": "text", "text": f"Step {i}: please look at src/lib.rs and fix the failing test"}], "timestamp": 1764583200000}
        elif k == 1:
            m = {"role": "assistant", "content": [
                {"type": "text", "text": "Reading the file first.\n\n```rust\nfn main() { println!(\"hi\"); }\n```"},
                {"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {"path": "src/lib.rs"}}],
                "api": "openai-completions", "provider": "mock", "model": "mock-model", "usage": usage,
                "stopReason": "toolUse", "timestamp": 1764583201000}
        else:
            m = {"role": "toolResult", "toolCallId": f"call_{i-1}", "toolName": "read",
                 "content": [{"type": "text", "text": code}], "isError": False, "timestamp": 1764583202000}
        eid = f"{i:08x}"
        f.write(json.dumps({"type": "message", "id": eid, "parentId": parent,
                            "timestamp": "2026-12-01T10:00:00.000Z", "message": m}) + "\n")
        parent = eid
PY

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # NAME COMMAND...: prints the median wall time in ms of RUNS runs
	local name="$1"; shift
	local times=()
	for _ in $(seq "$RUNS"); do
		local start end
		start=$(date +%s%N)
		"$@" >/dev/null 2>&1
		end=$(date +%s%N)
		times+=($(( (end - start) / 1000000 )))
	done
	printf '%s: median %s ms over %s runs (%s)\n' "$name" \
		"$(printf '%s\n' "${times[@]}" | median)" "$RUNS" "$(printf '%s ' "${times[@]}")"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), node $(node --version)"
echo "session: $ENTRIES entries, $(du -h "$WORK/session.jsonl" | cut -f1)"
cd "$WORK"
run "knightcode --export" env HOME="$WORK/home" "$KC" --export session.jsonl kc.html
run "pi --export        " env HOME="$WORK/home" PI_OFFLINE=1 "$PI_DIR/node_modules/.bin/pi" --export session.jsonl pi.html
echo "pages: knightcode $(du -h kc.html | cut -f1), pi $(du -h pi.html | cut -f1)"
# Opening the pages: headless Chromium start to DOM dump (browser start-up included), and
# our page's own first-draw time.
if command -v chromium >/dev/null 2>&1; then
	browse() { chromium --headless --no-sandbox --disable-gpu --user-data-dir="$WORK/profile" --dump-dom "file://$WORK/$1"; }
	run "chromium open knightcode page" browse kc.html
	run "chromium open pi page        " browse pi.html
	echo "knightcode page first draw: $(browse kc.html 2>/dev/null | grep -o 'data-render-ms="[0-9]*"')"
fi
(cd "$ROOT" && cargo bench -q -p knightcode-export --bench export 2>/dev/null | tail -1)
