#!/usr/bin/env bash
# JSON mode and sessions, knightcode vs the reference agent (issue 4): the same scripted
# read/bash/edit scenario through `pi --mode json` and `knightcode --mode json`, both streams,
# session files and model requests kept, then compared (scripts/bench/oneshot_compat.py).
#   bash scripts/bench/oneshot-compat.sh [--out DIR]
# Exits 1 when a difference is not explained (docs/compat.md "JSON mode and sessions").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
(cd "$ROOT" && cargo build -q --release --locked -p knightcode-cli -p knightcode-testkit \
	--bin knightcode --bin knightcode-mock-provider)
if [ ! -x "$ROOT/scripts/pi/node_modules/.bin/pi" ]; then
	(cd "$ROOT/scripts/pi" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec python3 "$ROOT/scripts/bench/oneshot_compat.py" "$@"
