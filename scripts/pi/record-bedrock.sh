#!/usr/bin/env bash
# Records the requests the reference sends to Amazon Bedrock's ConverseStream (our mock,
# `knightcode-mock-provider --format bedrock-converse-stream`, as `amazon-bedrock.baseUrl` in
# models.json) into fixtures/pi/bedrock/requests.json: the path, the headers Bedrock checks
# (the SigV4 `authorization` without its date and signature), the body's keys in order,
# `inferenceConfig`, `additionalModelRequestFields`, the system blocks' shape, the tool
# names and the messages, first and second turn (thinking, a tool call, its result).
# crates/cli/tests/suite/bedrock.rs sends the same conversation and compares.
#
#   bash scripts/pi/record-bedrock.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PI="$HERE/node_modules/.bin/pi"
OUT="$ROOT/fixtures/pi/bedrock"
[ -x "$PI" ] || (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
# KC_MOCK_PROVIDER: a mock-provider binary already built (skips the build).
MOCK="${KC_MOCK_PROVIDER:-}"
if [ -z "$MOCK" ]; then
	(cd "$ROOT" && cargo build -q -p knightcode-testkit --bin knightcode-mock-provider)
	MOCK="${CARGO_TARGET_DIR:-$ROOT/target}/debug/knightcode-mock-provider"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/kc-bedrock.XXXXXX")"
mock_pid=""
cleanup() {
	[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home/.pi/agent" "$work/project"
echo "hello from the fixture" >"$work/project/notes.txt"
cat >"$work/script.json" <<'JSON'
[{"parts": [{"thinking": {"text": "I should read it.", "signature": "sig-fixture"}},
            {"text": "Reading."},
            {"toolCall": {"id": "tooluse_fixture1", "name": "read", "argumentsJson": "{\"path\":\"notes.txt\"}"}}]},
 {"parts": [{"text": "The file says hello."}]}]
JSON
"$MOCK" --format bedrock-converse-stream --script "$work/script.json" --port 0 --log "$work/requests.jsonl" >"$work/url.txt" 2>"$work/mock.err" &
mock_pid=$!
for _ in $(seq 1 100); do [ -s "$work/url.txt" ] && break; sleep 0.05; done
url="$(head -n1 "$work/url.txt")"
echo "{\"providers\": {\"amazon-bedrock\": {\"baseUrl\": \"$url\"}}}" >"$work/home/.pi/agent/models.json"
# The SDK speaks HTTP/2 unless told otherwise; the mock speaks HTTP/1.1.
(cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" PI_OFFLINE=1 TERM=dumb \
	AWS_ACCESS_KEY_ID=AKIDFIXTURE AWS_SECRET_ACCESS_KEY=fixture-secret AWS_SESSION_TOKEN=fixture-token \
	AWS_REGION=eu-west-1 AWS_BEDROCK_FORCE_HTTP1=1 \
	"$PI" --mode json --thinking high --model amazon-bedrock/eu.anthropic.claude-opus-4-6-v1 \
	-p "What does notes.txt say?" </dev/null >/dev/null)
python3 "$HERE/bedrock_shape.py" "$work/requests.jsonl" >"$OUT/requests.json"
echo "recorded $OUT/requests.json" >&2
