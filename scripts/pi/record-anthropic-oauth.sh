#!/usr/bin/env bash
# Records the request the reference sends for an Anthropic subscription login (an `oauth`
# entry in auth.json) to our mock Anthropic server, into fixtures/pi/anthropic-oauth/: the
# headers the service checks, the system blocks and the tool names, first and second turn.
# crates/cli/tests/suite/subscription.rs sends the same conversation and compares.
#
#   bash scripts/pi/record-anthropic-oauth.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PI="$HERE/node_modules/.bin/pi"
OUT="$ROOT/fixtures/pi/anthropic-oauth"
[ -x "$PI" ] || (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
# KC_MOCK_PROVIDER: a mock-provider binary already built (skips the build).
MOCK="${KC_MOCK_PROVIDER:-}"
if [ -z "$MOCK" ]; then
	(cd "$ROOT" && cargo build -q -p knightcode-testkit --bin knightcode-mock-provider)
	MOCK="${CARGO_TARGET_DIR:-$ROOT/target}/debug/knightcode-mock-provider"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/kc-oauth.XXXXXX")"
mock_pid=""
cleanup() {
	[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home/.pi/agent" "$work/project"
echo "hello from the fixture" >"$work/project/notes.txt"
cat >"$work/script.json" <<'JSON'
[{"parts": [{"toolCall": {"id": "toolu_1", "name": "Read", "argumentsJson": "{\"path\":\"notes.txt\"}"}}]},
 {"parts": [{"text": "The file says hello."}]}]
JSON
"$MOCK" --format anthropic-messages --script "$work/script.json" --port 0 --log "$work/requests.jsonl" >"$work/url.txt" 2>"$work/mock.err" &
mock_pid=$!
for _ in $(seq 1 100); do [ -s "$work/url.txt" ] && break; sleep 0.05; done
url="$(head -n1 "$work/url.txt")"
echo "{\"providers\": {\"anthropic\": {\"baseUrl\": \"$url\"}}}" >"$work/home/.pi/agent/models.json"
echo '{"anthropic": {"type": "oauth", "refresh": "sk-ant-ort01-fixture", "access": "sk-ant-oat01-fixture", "expires": 99999999999999}}' >"$work/home/.pi/agent/auth.json"
(cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" PI_OFFLINE=1 TERM=dumb \
	"$PI" --mode json --model anthropic/claude-sonnet-4-5 -p "What does notes.txt say?" </dev/null >/dev/null)
python3 - "$work/requests.jsonl" "$OUT/requests.json" <<'PY'
import json, sys
KEPT = ["accept", "anthropic-beta", "anthropic-dangerous-direct-browser-access",
        "anthropic-version", "authorization", "content-type", "user-agent", "x-app", "x-api-key"]
out = []
for line in open(sys.argv[1]):
    request = json.loads(line)
    headers = dict(request["headers"])
    body = request["body"]
    out.append({
        "path": request["path"],
        "headers": {name: headers.get(name) for name in KEPT},
        "system": [block["text"].split("\n")[0] for block in body.get("system", [])][:1],
        "system_blocks": len(body.get("system", [])),
        "tools": sorted(tool["name"] for tool in body.get("tools", [])),
        "tool_use_names": [block["name"] for message in body["messages"] if message["role"] == "assistant"
                           for block in message["content"] if block.get("type") == "tool_use"],
    })
json.dump(out, open(sys.argv[2], "w"), indent=1)
open(sys.argv[2], "a").write("\n")
PY
echo "recorded $OUT/requests.json" >&2
