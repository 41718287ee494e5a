#!/usr/bin/env bash
# Runs every fuzz target (or those named) for SECONDS each, one after another, then prints a
# table of executions, time and crashes per target. Needs a nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz --locked`); without them it says so and exits 0, so that CI
# without nightly skips rather than fails.
#
#   scripts/fuzz/run.sh [SECONDS] [TARGET...]      default 10 s each, every target
#   FUZZ_NO_BUILD=1: run the binaries built last; FUZZ_KEEP_GOING=1: go on after a crash;
#   FUZZ_RUNS=N: stop a target after N executions (or SECONDS, whichever comes first);
#   FUZZ_LOG_DIR=DIR: keep each target's libFuzzer log there.
#
# Builds go to ~/.cache/knightcode-rs/fuzz-target (coverage-instrumented builds cannot share
# the workspace's target folder). Targets are built without a sanitizer: `unsafe` is denied
# in every crate they reach, so AddressSanitizer would mostly cost speed; debug assertions
# and overflow checks are on. Corpora are rebuilt from the fixtures by scripts/fuzz/seed.py
# and grow in fuzz/corpus/ (ignored by git). A crash leaves its input in
# fuzz/artifacts/<target>/ and makes the script exit 1: fix the parser, and commit the input
# under fuzz/regressions/<target>/ (crates/fuzzing's test replays it on stable).
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-10}
shift || true
if ! cargo +nightly --version >/dev/null 2>&1; then
	echo "fuzz: skipped: no nightly toolchain (rustup toolchain install nightly)"
	exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
	echo "fuzz: skipped: cargo-fuzz is missing (cargo install cargo-fuzz --locked)"
	exit 0
fi

export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$HOME/.cache/knightcode-rs/fuzz-target}"
export CARGO_INCREMENTAL=0 CARGO_TERM_COLOR=never
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^knightcode-fuzz$')
fi
flags=(-s none -a)

python3 scripts/fuzz/seed.py >/dev/null
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
	echo "== building the fuzz targets"
	(cd fuzz && cargo +nightly fuzz build "${flags[@]}" --target-dir "$CARGO_TARGET_DIR")
fi
bin="$CARGO_TARGET_DIR/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"

logs=$(mktemp -d)
# The targets' scratch folders go here (memory-backed when the machine has /dev/shm) and
# are removed at the end: a fuzzing process exits without removing its own.
scratch=$(mktemp -d /dev/shm/kc-fuzz-run.XXXXXX 2>/dev/null || mktemp -d)
export KC_FUZZ_SCRATCH="$scratch"
trap 'rm -rf "$logs" "$scratch"' EXIT
status=0
printf '%-28s %14s %8s %8s %s\n' target executions seconds crashes "exec/s"
for target in "${targets[@]}"; do
	mkdir -p "fuzz/corpus/$target" "fuzz/artifacts/$target"
	log="$logs/$target.log"
	rc=0
	# -rss_limit_mb: a parser that balloons on a small input is a finding too.
	# The binary itself, not `cargo fuzz run`: that would rebuild whenever a source was
	# touched (the build wrappers touch them), in the middle of a series of runs.
	# -max_len: longer inputs mostly repeat what short ones reach, at a fraction of the speed.
	(cd fuzz && "$bin/$target" "corpus/$target" -max_total_time="$seconds" -runs="${FUZZ_RUNS:--1}" \
		-rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 -artifact_prefix="artifacts/$target/") \
		>"$log" 2>&1 || rc=$?
	if [ -n "${FUZZ_LOG_DIR:-}" ]; then cp "$log" "$FUZZ_LOG_DIR/"; fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
	crashes=0
	if [ "$rc" != 0 ]; then
		crashes=1
		status=1
	fi
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	printf '%-28s %14s %8s %8s %s\n' "$target" "${runs:-?}" "${took:-$seconds}" "$crashes" "${rate:-?}"
	if [ "$rc" != 0 ]; then
		echo "-- $target failed (exit $rc); the end of its log:"
		tail -40 "$log"
		if [ -z "${FUZZ_KEEP_GOING:-}" ]; then exit 1; fi
	fi
done
exit "$status"
