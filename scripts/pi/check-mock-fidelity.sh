#!/usr/bin/env bash
# Fidelity check of our mock provider servers (crates/testkit) against the reference agent's
# real SDK clients, which are strict parsers: for each wire format, pi runs a two-turn
# scripted conversation (thinking + text + a tool call, then a final answer) against
# `knightcode-mock-provider`, and the check passes only if pi reports the scripted content.
#
#   bash scripts/pi/check-mock-fidelity.sh [format ...]   # default: openai-completions anthropic-messages (openai-responses, google-generative-ai and mistral-conversations also pass)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PI="$HERE/node_modules/.bin/pi"
[ -x "$PI" ] || (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
(cd "$ROOT" && cargo build -q -p knightcode-testkit --bin knightcode-mock-provider)
MOCK="${CARGO_TARGET_DIR:-$ROOT/target}/debug/knightcode-mock-provider"

formats=("$@")
[ ${#formats[@]} -gt 0 ] || formats=(openai-completions anthropic-messages)
status=0
for format in "${formats[@]}"; do
	work="$(mktemp -d "${TMPDIR:-/tmp}/kc-fidelity.XXXXXX")"
	mkdir -p "$work/home/.pi/agent" "$work/project"
	echo "hello from the fixture" >"$work/project/notes.txt"
	cat >"$work/script.json" <<'JSON'
[
  {"parts": [{"thinking": {"text": "I should read the file.", "signature": "sig-1", "redacted": false}},
             {"text": "Reading notes.txt."},
             {"toolCall": {"id": "call_1", "name": "read", "argumentsJson": "{\"path\":\"notes.txt\"}"}}],
   "usage": {"input": 50, "output": 20, "cacheRead": 0, "cacheWrite": 0, "reasoning": 5}},
  {"parts": [{"text": "The file says hello."}],
   "usage": {"input": 80, "output": 6, "cacheRead": 0, "cacheWrite": 0, "reasoning": 0}}
]
JSON
	"$MOCK" --format "$format" --script "$work/script.json" --port 0 --log "$work/requests.jsonl" >"$work/url.txt" 2>"$work/mock.err" &
	mock_pid=$!
	for _ in $(seq 1 100); do [ -s "$work/url.txt" ] && break; sleep 0.05; done
	url="$(head -n1 "$work/url.txt")"
	cat >"$work/home/.pi/agent/models.json" <<JSON
{"providers": {"mock": {"baseUrl": "$url", "api": "$format", "apiKey": "mock-key",
  "models": [{"id": "mock-model", "name": "Mock", "reasoning": true, "contextWindow": 128000, "maxTokens": 4096}]}}}
JSON
	rc=0
	(cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" PI_OFFLINE=1 TERM=dumb \
		"$PI" --mode json --provider mock --model mock-model -p "What does notes.txt say?" \
		</dev/null >"$work/events.jsonl" 2>"$work/pi.err") || rc=$?
	kill "$mock_pid" 2>/dev/null || true
	if [ "$rc" -eq 0 ] && python3 - "$work/events.jsonl" <<'PY'
import json, sys
events = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
ends = [e["message"] for e in events if e.get("type") == "message_end" and e["message"]["role"] == "assistant"]
assert len(ends) == 2, f"expected two assistant messages, got {len(ends)}"
first, second = ends
# pi's Mistral client keeps the empty text blocks of Mistral's `content: ""` chunks.
first["content"] = [b for b in first["content"] if not (b["type"] == "text" and b["text"] == "")]
second["content"] = [b for b in second["content"] if not (b["type"] == "text" and b["text"] == "")]
kinds = [b["type"] for b in first["content"]]
assert kinds == ["thinking", "text", "toolCall"], kinds
assert first["content"][0]["thinking"] == "I should read the file."
assert first["content"][2]["arguments"] == {"path": "notes.txt"}
assert first["stopReason"] == "toolUse", first["stopReason"]
assert first["usage"]["output"] >= 20, first["usage"]
results = [e["message"] for e in events if e.get("type") == "message_end" and e["message"]["role"] == "toolResult"]
assert "hello from the fixture" in results[0]["content"][0]["text"]
assert second["content"][0]["text"] == "The file says hello.", second
assert second["stopReason"] == "stop"
PY
	then
		echo "mock fidelity ($format): OK"
	else
		echo "mock fidelity ($format): FAILED (exit $rc); kept $work" >&2
		cat "$work/pi.err" >&2 || true
		status=1
		continue
	fi
	rm -rf "$work"
done
exit "$status"
