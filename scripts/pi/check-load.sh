#!/usr/bin/env bash
# Check that the reference pi agent can load a session file written by someone else.
#
#   bash scripts/pi/check-load.sh path/to/session.jsonl
#
# The file is copied into a throwaway HOME (pi may append to or migrate the file it opens,
# so the original is never touched), then `pi --mode rpc --session <copy>` is started and
# sent {"type":"get_messages","id":"1"} and {"type":"get_state","id":"2"}.  Both responses
# are printed on stdout (one JSON line each).  Exit status is non-zero when pi fails to
# start, answers with success:false, or returns no messages.
set -euo pipefail

if [ "$#" -ne 1 ] || [ ! -f "$1" ]; then
	echo "usage: $0 SESSION.jsonl" >&2
	exit 2
fi
SRC="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PI="$HERE/node_modules/.bin/pi"
if [ ! -x "$PI" ]; then
	(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/kc-pi-check.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/home/.pi/agent" "$TMP/cwd"

# The same provider/model names record.sh uses, so that model_change entries that name them
# resolve.  Nothing listens on the port: this check never prompts the model.
cat >"$TMP/home/.pi/agent/models.json" <<'EOF'
{
  "providers": {
    "mock": {
      "baseUrl": "http://127.0.0.1:9/v1",
      "api": "openai-completions",
      "apiKey": "mock-api-key",
      "models": [
        { "id": "mock-model", "name": "Mock Model", "reasoning": true },
        { "id": "mock-model-2", "name": "Mock Model Two", "reasoning": false }
      ]
    }
  }
}
EOF

COPY="$TMP/session.jsonl"
cp "$SRC" "$COPY"

rc=0
(cd "$TMP/cwd" && python3 "$HERE/rpc_drive.py" check --stderr-log "$TMP/stderr.txt" -- \
	env -i PATH="$PATH" HOME="$TMP/home" PI_OFFLINE=1 TERM=dumb LANG=C.UTF-8 TZ=UTC \
	"$PI" --mode rpc --session "$COPY") || rc=$?

if [ -s "$TMP/stderr.txt" ]; then
	echo "--- pi stderr:" >&2
	cat "$TMP/stderr.txt" >&2
fi
if [ "$rc" -ne 0 ]; then
	echo "check-load: FAILED ($SRC)" >&2
	exit 1
fi
echo "check-load: OK ($SRC)" >&2
