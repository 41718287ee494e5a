#!/usr/bin/env bash
# Checks that knightcode and the reference agent (pi) share one auth.json: a key knightcode
# stores (`knightcode auth login`) is the key pi sends, and a key pi's own AuthStorage stores
# is the key knightcode sends; each write keeps the other's entries. Both agents run against
# a local OpenAI-compatible responder that records the Authorization header it receives
# (deepseek, an openai-completions provider of both catalogs, moved there by models.json).
#
#   bash scripts/pi/check-auth-roundtrip.sh            # builds knightcode (debug) first
#   KC_BIN=path/to/knightcode bash scripts/pi/check-auth-roundtrip.sh
#
# pi runs with PI_OFFLINE=1 and a throwaway HOME; knightcode's agent folder is pi's
# (~/.pi/agent), as for someone who uses both.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PI="$HERE/node_modules/.bin/pi"
if [ ! -x "$PI" ]; then
	(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ -z "${KC_BIN:-}" ]; then
	(cd "$ROOT" && cargo build -q -p knightcode-cli --bin knightcode)
	KC_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/knightcode"
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kc-auth-roundtrip.XXXXXX")"
RESPONDER=""
cleanup() {
	if [ -n "$RESPONDER" ]; then kill "$RESPONDER" 2>/dev/null || true; fi
	rm -rf "$WORK"
}
trap cleanup EXIT
export HOME="$WORK/home"
AGENT="$HOME/.pi/agent"
mkdir -p "$AGENT" "$WORK/project"

# The responder: one streamed chat completion per request; the Authorization header of
# each request is appended to a file.
cat >"$WORK/responder.py" <<'PY'
import http.server, json, sys
seen, port_file = sys.argv[1], sys.argv[2]
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        with open(seen, "a") as f:
            f.write(self.headers.get("authorization", "") + "\n")
        chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}]}
        done = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        body = "".join("data: " + json.dumps(c) + "\n\n" for c in (chunk, done)) + "data: [DONE]\n\n"
        data = body.encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
PY
python3 "$WORK/responder.py" "$WORK/seen" "$WORK/port" &
RESPONDER=$!
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
[ -s "$WORK/port" ] || { echo "check-auth-roundtrip: the responder did not start" >&2; exit 1; }
PORT="$(cat "$WORK/port")"
printf '{"providers": {"deepseek": {"baseUrl": "http://127.0.0.1:%s/v1"}}}\n' "$PORT" >"$AGENT/models.json"

run_env=(env -i PATH="$PATH" HOME="$HOME" PI_OFFLINE=1 KNIGHTCODE_CODING_AGENT_DIR="$AGENT")
fail() {
	echo "check-auth-roundtrip: FAILED: $*" >&2
	echo "auth.json: $(cat "$AGENT/auth.json" 2>/dev/null)" >&2
	exit 1
}
last_seen() { tail -n 1 "$WORK/seen" 2>/dev/null | tr -d '\r'; }

# 1. knightcode stores a key; pi sends it.
printf 'sk-from-knightcode\n' | (cd "$WORK/project" && "${run_env[@]}" "$KC_BIN" auth login deepseek) >/dev/null
(cd "$WORK/project" && "${run_env[@]}" "$PI" -p --no-tools --model deepseek/deepseek-v4-flash hi) >"$WORK/pi.out" 2>&1 ||
	fail "pi did not answer with knightcode's key: $(cat "$WORK/pi.out")"
[ "$(last_seen)" = "Bearer sk-from-knightcode" ] || fail "pi sent '$(last_seen)', not knightcode's key"
echo "knightcode's key is pi's: ok"

# 2. pi's AuthStorage stores a key for another provider; knightcode's entry stays.
(cd "$HERE" && "${run_env[@]}" node --input-type=module -e "
import { AuthStorage } from '@mariozechner/pi-coding-agent';
AuthStorage.create('$AGENT/auth.json').set('openrouter', { type: 'api_key', key: 'sk-or-from-pi' });
") || fail "pi's AuthStorage could not write"
grep -q sk-from-knightcode "$AGENT/auth.json" || fail "pi's write dropped knightcode's entry"

# 3. pi stores a new deepseek key; knightcode sends it and keeps pi's other entry.
(cd "$HERE" && "${run_env[@]}" node --input-type=module -e "
import { AuthStorage } from '@mariozechner/pi-coding-agent';
AuthStorage.create('$AGENT/auth.json').set('deepseek', { type: 'api_key', key: 'sk-from-pi' });
") || fail "pi's AuthStorage could not write"
(cd "$WORK/project" && "${run_env[@]}" "$KC_BIN" -p --no-tools --model deepseek/deepseek-v4-flash hi) >"$WORK/kc.out" 2>&1 ||
	fail "knightcode did not answer with pi's key: $(cat "$WORK/kc.out")"
[ "$(last_seen)" = "Bearer sk-from-pi" ] || fail "knightcode sent '$(last_seen)', not pi's key"
echo "pi's key is knightcode's: ok"

# 4. knightcode's logout removes only its provider's entry.
(cd "$WORK/project" && "${run_env[@]}" "$KC_BIN" auth logout deepseek) >/dev/null
grep -q sk-or-from-pi "$AGENT/auth.json" || fail "knightcode's logout dropped pi's other entry"
! grep -q '"deepseek"' "$AGENT/auth.json" || fail "knightcode's logout kept the deepseek entry"
echo "check-auth-roundtrip: OK"
