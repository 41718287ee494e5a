#!/usr/bin/env bash
# grep and find at monorepo scale side by side with ripgrep and fd (issue 17): generates a
# ~520 MB, 32,000-file tree under /tmp, runs the comparison, deletes the tree.
#   bash scripts/bench/tools.sh [RUNS]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RUNS="${1:-7}"
TREE="${KNIGHTCODE_TOOLS_BENCH_DIR:-${TMPDIR:-/tmp}/knightcode-tools-bench}"
if ! command -v rg >/dev/null || ! command -v fdfind >/dev/null; then
	apt-get install -y ripgrep fd-find >/dev/null
fi
(cd "$ROOT" && cargo build -q --release -p knightcode-tools --example tools_at_scale)
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/tools_at_scale"
trap 'rm -rf "$TREE"' EXIT
rm -rf "$TREE"
"$BIN" generate "$TREE"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "native: $(rg --version | sed -n 1p), $(fdfind --version)"
"$BIN" run "$TREE" "$RUNS"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
