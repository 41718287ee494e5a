#!/usr/bin/env bash
# Records the requests the reference sends for a ChatGPT Plus/Pro login (an `openai-codex`
# `oauth` entry in auth.json) to our mock Responses server, into fixtures/pi/openai-codex/:
# path, headers, and the body with what changes between runs (the session id, the access
# token's nonce) replaced by placeholders; a tool call and its answer, then a turn with
# thinking on: three requests.
# crates/cli/tests/suite/codex_pi.rs sends the same conversation and compares.
#
#   bash scripts/pi/record-openai-codex.sh
#   PI_BIN=/path/to/pi KC_MOCK_PROVIDER=/path/to/knightcode-mock-provider bash scripts/pi/record-openai-codex.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PI="${PI_BIN:-$HERE/node_modules/.bin/pi}"
OUT="$ROOT/fixtures/pi/openai-codex"
[ -x "$PI" ] || (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
MOCK="${KC_MOCK_PROVIDER:-}"
if [ -z "$MOCK" ]; then
	(cd "$ROOT" && cargo build -q -p knightcode-testkit --bin knightcode-mock-provider)
	MOCK="${CARGO_TARGET_DIR:-$ROOT/target}/debug/knightcode-mock-provider"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/kc-codex.XXXXXX")"
mock_pid=""
cleanup() {
	[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home/.pi/agent" "$work/project" "$OUT"
echo "hello from the fixture" >"$work/project/notes.txt"
cat >"$work/script.json" <<'JSON'
[{"parts": [{"toolCall": {"id": "call_1", "name": "read", "argumentsJson": "{\"path\":\"notes.txt\"}"}}]},
 {"parts": [{"text": "The file says hello."}]},
 {"parts": [{"text": "Hi."}]}]
JSON
"$MOCK" --format openai-responses --script "$work/script.json" --port 0 --log "$work/requests.jsonl" >"$work/url.txt" 2>"$work/mock.err" &
mock_pid=$!
for _ in $(seq 1 100); do [ -s "$work/url.txt" ] && break; sleep 0.05; done
url="$(head -n1 "$work/url.txt")"
root="${url%/v1}"
# The access token: an unsigned JWT naming the account, as crates/testkit's
# chatgpt_access_token makes it (nonce "fixture").
token="$(python3 - <<'PY'
import base64, json
b64 = lambda d: base64.urlsafe_b64encode(json.dumps(d, separators=(",", ":")).encode()).rstrip(b"=").decode()
claims = {"https://api.openai.com/auth": {"chatgpt_account_id": "acct-fixture", "chatgpt_plan_type": "plus"}, "nonce": "fixture"}
print(f'{b64({"alg": "none", "typ": "JWT"})}.{b64(claims)}.stand-in')
PY
)"
echo "{\"providers\": {\"openai-codex\": {\"baseUrl\": \"$root\"}}}" >"$work/home/.pi/agent/models.json"
echo "{\"openai-codex\": {\"type\": \"oauth\", \"access\": \"$token\", \"refresh\": \"rt-fixture\", \"expires\": 99999999999999, \"accountId\": \"acct-fixture\"}}" >"$work/home/.pi/agent/auth.json"
# SSE only: this build has no WebSocket transport (pi's default tries one first).
echo '{"transport": "sse"}' >"$work/home/.pi/agent/settings.json"
(cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" PI_OFFLINE=1 TERM=dumb \
	"$PI" --mode json --model openai-codex/gpt-5.1 --thinking off -p "What does notes.txt say?" </dev/null >"$work/pi.out")
# Thinking on: the effort and reasoning summary the backend is asked for.
(cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" PI_OFFLINE=1 TERM=dumb \
	"$PI" --mode json --model openai-codex/gpt-5.1 --thinking high -p "hi" </dev/null >"$work/pi.out")
python3 "$HERE/codex_shape.py" "$work/requests.jsonl" >"$OUT/requests.json"
echo "recorded $OUT/requests.json" >&2
