#!/usr/bin/env bash
# Records what the reference prints for `--list-models` with a set of provider keys in the
# environment, into fixtures/pi/list-models/, for the CLI test that compares ours with it
# (crates/cli/tests/suite/list_models_pi.rs). Re-run after scripts/catalog/generate.mjs.
#
#   bash scripts/catalog/record-list-models.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PI="$ROOT/scripts/pi/node_modules/.bin/pi"
OUT="$ROOT/fixtures/pi/list-models"
[ -x "$PI" ] || (cd "$ROOT/scripts/pi" && npm ci --no-audit --no-fund --loglevel=error) >&2
mkdir -p "$OUT"
work="$(mktemp -d "${TMPDIR:-/tmp}/kc-list-models.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.pi/agent"
# One key a line; the values do not matter, only which variables are set.
cat >"$OUT/env.txt" <<'ENV'
DEEPSEEK_API_KEY=test
OPENROUTER_API_KEY=test
ANTHROPIC_API_KEY=test
AWS_PROFILE=test
GH_TOKEN=test
MOONSHOT_API_KEY=test
HF_TOKEN=test
ZAI_API_KEY=test
CEREBRAS_API_KEY=test
KIMI_API_KEY=test
ENV
mapfile -t vars <"$OUT/env.txt"
run() {
	# The reference prints the table on stderr when its output is not a terminal.
	env -i PATH="$PATH" HOME="$work/home" PI_OFFLINE=1 "${vars[@]}" "$PI" --list-models "$@" 2>&1 </dev/null
}
run >"$OUT/all.txt"
run sonnet >"$OUT/search-sonnet.txt"
node -p "require('$ROOT/scripts/pi/node_modules/@mariozechner/pi-coding-agent/package.json').version" >"$OUT/PI_VERSION"
echo "recorded $(wc -l <"$OUT/all.txt") lines into $OUT" >&2
