#!/usr/bin/env bash
# `knightcode list` wall time (issue 16 asks <= 10 ms) with 20 configured packages (10 user,
# 10 project), installed as local folders, against the reference's `pi list` on the same
# layout. A throwaway HOME; no network. Figures: docs/perf.md.
#
#   bash scripts/bench/list.sh [RUNS] [BINARY]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
RUNS="${1:-50}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/knightcode-rs/target}"
BIN="${2:-}"
if [ -z "$BIN" ]; then
	(cd "$ROOT" && cargo build -q --release -p knightcode-cli)
	BIN="$CARGO_TARGET_DIR/release/knightcode"
fi
PI="${PI:-$ROOT/scripts/pi/node_modules/.bin/pi}"

T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home" "$T/proj"
user=() project=()
for i in $(seq 1 10); do
	mkdir -p "$T/pkgs/p$i/skills/s$i"
	user+=("\"$T/pkgs/p$i\"")
	project+=("\"../../pkgs/p$i\"")
done
join() { local IFS=,; echo "$*"; }
for dir in "$T/home/.knightcode/agent" "$T/home/.pi/agent"; do
	mkdir -p "$dir"
	echo "{\"packages\": [$(join "${user[@]}")]}" > "$dir/settings.json"
done
for dir in "$T/proj/.knightcode" "$T/proj/.pi"; do
	mkdir -p "$dir"
	echo "{\"packages\": [$(join "${project[@]}")]}" > "$dir/settings.json"
done

# Median wall time of RUNS runs, in milliseconds.
median_ms() {
	local times=()
	for _ in $(seq 1 "$RUNS"); do
		# $EPOCHREALTIME, not `date`: the fork of a `date` after the run would be timed too.
		local start end
		start=${EPOCHREALTIME/./}
		"$@" > /dev/null
		end=${EPOCHREALTIME/./}
		times+=($((end - start)))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f ms", a[int((NR+1)/2)]/1000}'
}

cd "$T/proj"
export HOME="$T/home" PI_OFFLINE=1
echo "machine: $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo "knightcode list: $(median_ms "$BIN" list) (median of $RUNS)"
if [ -x "$PI" ]; then
	echo "pi list:         $(median_ms "$PI" list) (median of $RUNS)"
fi
