#!/usr/bin/env bash
# Checks that the reference agent (pi) loads a session written by knightcode's session store
# and sees the same context: writes a sample session with every entry type through the Rust
# API (crates/session/examples/write_sample_session.rs), loads it with pi over RPC
# (check-load.sh), and compares the number of context messages both build.
#
#   bash scripts/pi/check-our-sessions.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/kc-our-sessions.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT

ours="$(cd "$ROOT" && cargo run -q -p knightcode-session --example write_sample_session -- "$OUT")"
file="$(printf '%s\n' "$ours" | sed -n 1p)"
our_count="$(printf '%s\n' "$ours" | sed -n 's/^context messages: //p')"
pi_output="$(bash "$HERE/check-load.sh" "$file" 2>&1)"
pi_count="$(printf '%s\n' "$pi_output" | sed -n 's/^messages: //p')"
echo "knightcode context messages: $our_count; pi context messages: $pi_count"
if [ -z "$pi_count" ] || [ "$our_count" != "$pi_count" ]; then
	printf '%s\n' "$pi_output" >&2
	echo "check-our-sessions: FAILED" >&2
	exit 1
fi
echo "check-our-sessions: OK"
