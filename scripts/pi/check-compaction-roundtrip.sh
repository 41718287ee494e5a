#!/usr/bin/env bash
# Compaction compatibility with the reference agent in both directions (see
# check_compaction_roundtrip.py): pi continues a session knightcode compacted, knightcode
# continues one pi compacted, and both send the model the same conversation.
#
#   bash scripts/pi/check-compaction-roundtrip.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/knightcode-rs/target}"
if [ ! -x "$HERE/node_modules/.bin/pi" ]; then
	(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
(cd "$ROOT" && cargo build -q -p knightcode-cli)
python3 "$HERE/check_compaction_roundtrip.py" "$CARGO_TARGET_DIR/debug/knightcode" "$HERE/node_modules/.bin/pi"
