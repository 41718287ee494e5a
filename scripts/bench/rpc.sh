#!/usr/bin/env bash
# RPC mode, knightcode vs the reference agent (issue 5): process start until the `get_state`
# response and peak RSS, then sustained `get_state` round trips per second. Builds ours in
# release mode, installs the reference agent when missing, then measures
# (scripts/bench/rpc.py; options pass through):
#   bash scripts/bench/rpc.sh [--runs 15] [--round-trips 20000] [--agents ours,pi]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
(cd "$ROOT" && cargo build -q --release --locked -p knightcode-cli --bin knightcode)
if [ ! -x "$ROOT/scripts/pi/node_modules/.bin/pi" ]; then
	(cd "$ROOT/scripts/pi" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec python3 "$ROOT/scripts/bench/rpc.py" "$@"
