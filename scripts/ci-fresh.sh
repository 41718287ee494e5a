#!/usr/bin/env bash
# The fresh-machine check: clone the current commit into a temporary folder and run
# `.ci/run` there with its own empty CARGO_TARGET_DIR, as CI does. Prints the wall time,
# the target folder's size and the result, then deletes the clone and its target folder
# (pass --keep to keep them). Uncommitted changes are not included: commit first.
#
#   scripts/ci-fresh.sh [--keep]
set -uo pipefail
keep=
[ "${1:-}" = --keep ] && keep=1
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse HEAD)
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
	echo "note: uncommitted changes are not part of this check (it runs $commit)" >&2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kc-ci-fresh.XXXXXX")
clone="$work/main"
target="$work/target"
git clone -q --no-hardlinks "$repo" "$clone"
git -C "$clone" checkout -q "$commit"
# CI lays a read-only copy of shared/ beside the clone.
if [ -d "$repo/../shared" ]; then
	cp -r "$repo/../shared" "$work/shared"
fi
echo "== ci-fresh: $commit in $clone (CARGO_TARGET_DIR=$target)"
start=$(date +%s)
(cd "$clone" && CI=true CARGO_TARGET_DIR="$target" bash .ci/run </dev/null)
status=$?
end=$(date +%s)
size=$(du -sh "$target" 2>/dev/null | cut -f1)
binaries=$(find "$target/debug/deps" -maxdepth 1 -type f -executable -name '*-*' 2>/dev/null | grep -vc '\.so$')
echo "== ci-fresh: $( [ $status = 0 ] && echo PASSED || echo "FAILED (exit $status)" ) in $((end - start)) s; target folder $size, $binaries executables in deps/"
if [ -z "$keep" ]; then
	rm -rf "$work"
else
	echo "== kept $work"
fi
exit $status
