#!/usr/bin/env bash
# Compaction preparation at scale, knightcode beside the reference agent (pi) in one run:
# a 100,000-entry session, the work before the summary request (token estimate, cut point,
# serialization), and the per-message cost of the footer's context figure (ours is kept
# message by message; pi's footer re-estimates the whole context). Figures: docs/perf.md.
#
#   bash scripts/bench/compaction.sh [ENTRIES]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
ENTRIES="${1:-100000}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/knightcode-rs/target}"

PI_DIR="$ROOT/scripts/pi"
if [ ! -x "$PI_DIR/node_modules/.bin/pi" ]; then
	(cd "$PI_DIR" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
PKG="$PI_DIR/node_modules/@mariozechner/pi-coding-agent"

(cd "$ROOT" && cargo build -q --release -p knightcode-runtime --example compaction_bench)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), node $(node --version)"
echo "knightcode: $("$CARGO_TARGET_DIR/release/examples/compaction_bench" "$ENTRIES")"
echo "pi:         $(node "$HERE/pi_compaction.mjs" "$PKG" "$ENTRIES")"
