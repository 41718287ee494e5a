#!/usr/bin/env bash
# RPC mode, knightcode vs the reference agent (issue 5): the same scripted RPC session through
# `pi --mode rpc` and `knightcode --mode rpc`, both transcripts, session files and model
# requests kept, then compared (scripts/rpc-compat/compat.py).
#   bash scripts/rpc-compat/compat.sh [--out DIR] [--compare-only]
# Exits 1 when a difference is not explained (docs/compat.md, "RPC mode").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
(cd "$ROOT" && cargo build -q --release --locked -p knightcode-cli -p knightcode-testkit \
	--bin knightcode --bin knightcode-mock-provider)
if [ ! -x "$ROOT/scripts/pi/node_modules/.bin/pi" ]; then
	(cd "$ROOT/scripts/pi" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec python3 "$ROOT/scripts/rpc-compat/compat.py" "$@"
