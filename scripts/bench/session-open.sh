#!/usr/bin/env bash
# Side by side: knightcode's session store vs the reference agent opening the same generated
# sessions (10,000 and 100,000 entries, ~500-character messages, linear chain).
#   bash scripts/bench/session-open.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export KNIGHTCODE_BENCH_DIR="${KNIGHTCODE_BENCH_DIR:-${TMPDIR:-/tmp}/knightcode-session-bench}"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
(cd "$ROOT" && cargo bench -q -p knightcode-session --bench session_store)
if [ ! -x "$ROOT/scripts/pi/node_modules/.bin/pi" ]; then
	(cd "$ROOT/scripts/pi" && npm ci --no-audit --no-fund --loglevel=error)
fi
for n in 10000 100000; do
	python3 "$ROOT/scripts/bench/pi_session_open.py" "$KNIGHTCODE_BENCH_DIR/linear-$n.jsonl" 3
done
