#!/usr/bin/env bash
# Records the requests the reference sends to GitHub Copilot, for each API the catalog lists
# for Copilot models (Anthropic Messages, Chat Completions, Responses), to our mock servers,
# into fixtures/pi/copilot/: the headers Copilot reads (identity, X-Initiator, Openai-Intent,
# auth) for a first turn and the tool-result turn after it. The GitHub token comes from
# COPILOT_GITHUB_TOKEN, which the reference sends as it is; a stored Copilot login would move
# the requests to the token's https host, out of the mock's reach.
# crates/cli/tests/suite/copilot.rs sends the same conversations and compares.
#
#   bash scripts/pi/record-copilot.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PI="${PI:-$HERE/node_modules/.bin/pi}"
OUT="$ROOT/fixtures/pi/copilot"
[ -x "$PI" ] || (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
# KC_MOCK_PROVIDER: a mock-provider binary already built (skips the build).
MOCK="${KC_MOCK_PROVIDER:-}"
if [ -z "$MOCK" ]; then
	(cd "$ROOT" && cargo build -q -p knightcode-testkit --bin knightcode-mock-provider)
	MOCK="${CARGO_TARGET_DIR:-$ROOT/target}/debug/knightcode-mock-provider"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/kc-copilot.XXXXXX")"
mock_pid=""
cleanup() {
	[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$OUT"
# A 1x1 PNG: a prompt with an image attached (`@pixel.png`) is a vision request.
PIXEL="iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
record() { # format model output-name [image]
	local format="$1" model="$2" name="$3" image="${4:-}"
	rm -rf "$work/home" "$work/project" "$work/requests.jsonl" "$work/url.txt"
	mkdir -p "$work/home/.pi/agent" "$work/project"
	echo "hello from the fixture" >"$work/project/notes.txt"
	echo "$PIXEL" | base64 -d >"$work/project/pixel.png"
	cat >"$work/script.json" <<'JSON'
[{"parts": [{"toolCall": {"id": "call_1", "name": "read", "argumentsJson": "{\"path\":\"notes.txt\"}"}}]},
 {"parts": [{"text": "The file says hello."}]}]
JSON
	if [ -n "$image" ]; then
		echo '[{"parts": [{"text": "A white pixel."}]}]' >"$work/script.json"
	fi
	"$MOCK" --format "$format" --script "$work/script.json" --port 0 --log "$work/requests.jsonl" >"$work/url.txt" 2>"$work/mock.err" &
	mock_pid=$!
	for _ in $(seq 1 100); do [ -s "$work/url.txt" ] && break; sleep 0.05; done
	local url
	url="$(head -n1 "$work/url.txt")"
	echo "{\"providers\": {\"github-copilot\": {\"baseUrl\": \"$url\"}}}" >"$work/home/.pi/agent/models.json"
	(cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" PI_OFFLINE=1 TERM=dumb \
		COPILOT_GITHUB_TOKEN=gho_fixture_token \
		"$PI" --mode json --model "github-copilot/$model" -p ${image:+@pixel.png} "What does notes.txt say?" </dev/null >/dev/null)
	kill "$mock_pid" 2>/dev/null || true
	wait "$mock_pid" 2>/dev/null || true
	mock_pid=""
	python3 - "$work/requests.jsonl" "$OUT/$name.json" <<'PY'
import json, sys
KEPT = ["accept", "anthropic-beta", "anthropic-dangerous-direct-browser-access", "authorization",
        "content-type", "copilot-integration-id", "copilot-vision-request", "editor-plugin-version",
        "editor-version", "openai-intent", "user-agent", "x-api-key", "x-initiator"]
out = []
for line in open(sys.argv[1]):
    request = json.loads(line)
    headers = {k.lower(): v for k, v in dict(request["headers"]).items()}
    out.append({"path": request["path"], "headers": {name: headers.get(name) for name in KEPT}})
json.dump(out, open(sys.argv[2], "w"), indent=1)
open(sys.argv[2], "a").write("\n")
PY
	echo "recorded $OUT/$name.json" >&2
}
record anthropic-messages claude-sonnet-4.5 anthropic-messages
record openai-completions gpt-4o openai-completions
record openai-responses gpt-5-mini openai-responses
record openai-completions gpt-4o vision image
