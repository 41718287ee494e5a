#!/usr/bin/env bash
# One-shot use, knightcode vs the reference agent, in one run (issue 4): `--version`,
# `-p hi` against the local mock model, and a four-turn read/bash/edit run in `--mode json`.
# Builds both sides once, then measures (scripts/bench/oneshot.py; options pass through):
#   bash scripts/bench/oneshot.sh [--runs 15] [--interleave] [--json samples.json]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
(cd "$ROOT" && cargo build -q --release --locked -p knightcode-cli -p knightcode-testkit \
	--bin knightcode --bin knightcode-mock-provider)
if [ ! -x "$ROOT/scripts/pi/node_modules/.bin/pi" ]; then
	(cd "$ROOT/scripts/pi" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec python3 "$ROOT/scripts/bench/oneshot.py" "$@"
