#!/usr/bin/env bash
# Record compatibility fixtures from the reference `pi` agent into fixtures/pi/.
#
#   bash scripts/pi/record.sh            # all scenarios
#   bash scripts/pi/record.sh tools rpc  # only some (continue needs tools first)
#
# pi always runs with PI_OFFLINE=1, a scrubbed environment, a throwaway HOME and a
# scripted local model server (mock_openai.py) on 127.0.0.1.  Paths are fixed
# (/tmp/kc-pi-fixture/{home,project}) so that re-records diff cleanly.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${KC_PI_FIXTURES:-$ROOT/fixtures/pi}"
BASE=/tmp/kc-pi-fixture
HOME_DIR="$BASE/home"
PROJ="$BASE/project"
PI="$HERE/node_modules/.bin/pi"
PREFERRED_PORT="${KC_PI_PORT:-47311}"
ALL_SCENARIOS=(simple tools continue error rpc rpc-tree)

log() { printf '[record] %s\n' "$*" >&2; }

# --- reference agent -----------------------------------------------------------------
if [ ! -x "$PI" ]; then
	log "installing pi (npm ci)"
	(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
fi
PI_VERSION="$(node -p "require('$HERE/node_modules/@mariozechner/pi-coding-agent/package.json').version")"
log "pi $PI_VERSION"

# --- mock model server -----------------------------------------------------------------
mkdir -p "$BASE"
MOCK_PID=""
cleanup() {
	if [ -n "$MOCK_PID" ]; then kill "$MOCK_PID" 2>/dev/null || true; wait "$MOCK_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

start_mock() {
	local port="$1"
	rm -f "$BASE/mock.port"
	python3 "$HERE/mock_openai.py" --port "$port" --port-file "$BASE/mock.port" 2>"$BASE/mock.stderr" &
	MOCK_PID=$!
	for _ in $(seq 1 100); do
		[ -s "$BASE/mock.port" ] && return 0
		kill -0 "$MOCK_PID" 2>/dev/null || { MOCK_PID=""; return 1; }
		sleep 0.05
	done
	return 1
}
# a fixed port keeps baseUrl stable in get_state/get_available_models; fall back to any free port
start_mock "$PREFERRED_PORT" || start_mock 0 || { log "mock server failed"; cat "$BASE/mock.stderr" >&2; exit 1; }
PORT="$(cat "$BASE/mock.port")"
log "mock server on 127.0.0.1:$PORT (pid $MOCK_PID)"

mock_load() { # mock_load SCRIPT.json LOGFILE
	python3 - "$PORT" "$1" "$2" <<'PY'
import json, sys, urllib.request
port, script, log = sys.argv[1:4]
req = urllib.request.Request(
    "http://127.0.0.1:%s/_control/load" % port,
    data=json.dumps({"script": script, "log": log}).encode(),
    headers={"Content-Type": "application/json"},
)
urllib.request.urlopen(req, timeout=5).read()
PY
}

# --- environment -------------------------------------------------------------------------
fresh_env() {
	rm -rf "$HOME_DIR" "$PROJ"
	mkdir -p "$HOME_DIR/.pi/agent" "$PROJ"
	cat >"$HOME_DIR/.pi/agent/models.json" <<EOF
{
  "providers": {
    "mock": {
      "baseUrl": "http://127.0.0.1:$PORT/v1",
      "api": "openai-completions",
      "apiKey": "mock-api-key",
      "models": [
        {
          "id": "mock-model",
          "name": "Mock Model",
          "reasoning": true,
          "input": ["text"],
          "contextWindow": 128000,
          "maxTokens": 16384,
          "cost": { "input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75 }
        },
        {
          "id": "mock-model-2",
          "name": "Mock Model Two",
          "reasoning": false,
          "input": ["text", "image"],
          "contextWindow": 32000,
          "maxTokens": 4096,
          "cost": { "input": 0.5, "output": 1.5, "cacheRead": 0.05, "cacheWrite": 0 }
        }
      ]
    }
  }
}
EOF
	# small keepRecentTokens so that a manual compaction of a tiny session has something to cut
	cat >"$HOME_DIR/.pi/agent/settings.json" <<'EOF'
{
  "compaction": { "keepRecentTokens": 10 }
}
EOF
	printf 'alpha\nbeta\ngamma\n' >"$PROJ/notes.txt"
	mkdir -p "$PROJ/src"
	printf 'fn main() {}\n' >"$PROJ/src/main.rs"
}

run_pi() { # run_pi ARGS... (cwd = project, scrubbed env)
	(cd "$PROJ" && env -i PATH="$PATH" HOME="$HOME_DIR" PI_OFFLINE=1 TERM=dumb LANG=C.UTF-8 TZ=UTC \
		"$PI" --provider mock --model mock-model "$@")
}

snapshot_sessions() {
	mkdir -p "$HOME_DIR/.pi/agent/sessions"
	(cd "$HOME_DIR/.pi/agent/sessions" && find . -name '*.jsonl' -type f -exec md5sum {} + | LC_ALL=C sort) || true
}

# copy session files that are new or changed since snapshot $1 into dir $2
collect_sessions() {
	local before="$1" dest="$2" sessions="$HOME_DIR/.pi/agent/sessions"
	local after changed i=0 name f
	after="$(snapshot_sessions)"
	changed="$(LC_ALL=C comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | awk '{print $2}' | sed 's#^\./##')"
	# order by the session header timestamp (first line), i.e. creation order
	changed="$(for f in $changed; do printf '%s %s\n' "$(head -n 1 "$sessions/$f" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["timestamp"])')" "$f"; done | sort | awk '{print $2}')"
	: >"$dest/sessions.txt"
	for f in $changed; do
		i=$((i + 1))
		if [ "$i" -eq 1 ]; then name=session.jsonl; else name="session-$i.jsonl"; fi
		cp "$sessions/$f" "$dest/$name"
		printf '%s\t%s\n' "$name" "$sessions/$f" >>"$dest/sessions.txt"
	done
	[ "$i" -gt 0 ] || log "WARNING: no session file written for $(basename "$dest")"
}

shell_join() { python3 -c 'import shlex, sys; print(shlex.join(sys.argv[1:]))' "$@"; }

begin() { # begin NAME -> sets DEST, loads script, snapshots sessions
	DEST="$OUT/$1"
	rm -rf "$DEST"
	mkdir -p "$DEST"
	cp "$HERE/mock-scripts/$1.json" "$DEST/mock-script.json"
	mock_load "$HERE/mock-scripts/$1.json" "$DEST/requests.jsonl"
	BEFORE="$(snapshot_sessions)"
	log "scenario $1"
}

finish() { # finish RC
	printf '%s\n' "$1" >"$DEST/exit-code.txt"
	collect_sessions "$BEFORE" "$DEST"
}

json_run() { # json_run NAME PI-ARGS...
	local name="$1"; shift
	shell_join pi --provider mock --model mock-model "$@" >"$DEST/command.txt"
	local rc=0
	run_pi "$@" >"$DEST/events.jsonl" 2>"$DEST/stderr.txt" || rc=$?
	finish "$rc"
}

rpc_run() { # rpc_run NAME PI-ARGS...
	local name="$1"; shift
	shell_join python3 scripts/pi/rpc_drive.py "$name" -- pi --provider mock --model mock-model "$@" |
		sed "s#$HERE/#scripts/pi/#g" >"$DEST/command.txt"
	local rc=0
	(cd "$PROJ" && python3 "$HERE/rpc_drive.py" "$name" \
		--in-log "$DEST/rpc-in.jsonl" --out-log "$DEST/rpc-out.jsonl" --stderr-log "$DEST/stderr.txt" -- \
		env -i PATH="$PATH" HOME="$HOME_DIR" PI_OFFLINE=1 TERM=dumb LANG=C.UTF-8 TZ=UTC \
		"$PI" --provider mock --model mock-model "$@") || rc=$?
	finish "$rc"
	[ "$rc" -eq 0 ] || { log "rpc scenario $name failed (rc=$rc)"; cat "$DEST/stderr.txt" >&2; exit 1; }
}

# --- scenarios -------------------------------------------------------------------------------
scenario_simple() {
	fresh_env; begin simple
	json_run simple --mode json -p "hello"
}

scenario_tools() {
	fresh_env; begin tools
	json_run tools --tools read,bash,edit,write,ls --mode json -p "Inspect notes.txt and uppercase beta"
	cp "$PROJ/notes.txt" "$DEST/notes.txt.after"
}

scenario_continue() { # must run right after tools (same HOME and project)
	[ -f "$OUT/tools/session.jsonl" ] && [ -d "$HOME_DIR/.pi/agent/sessions" ] || { log "continue needs tools first"; exit 1; }
	begin continue
	json_run continue --tools read,bash,edit,write,ls --mode json --continue -p "again"
}

scenario_error() {
	fresh_env; begin error
	json_run error --mode json -p "trigger an error"
}

scenario_rpc() {
	fresh_env; begin rpc
	rpc_run rpc --mode rpc
}

scenario_rpc-tree() {
	fresh_env; begin rpc-tree
	rpc_run rpc-tree --mode rpc -e "$HERE/fixture-ext.ts"
}

mkdir -p "$OUT"
if [ "$#" -gt 0 ]; then SCENARIOS=("$@"); else SCENARIOS=("${ALL_SCENARIOS[@]}"); fi
for s in "${SCENARIOS[@]}"; do
	"scenario_$s"
done
printf '%s\n' "$PI_VERSION" >"$OUT/PI_VERSION"
# the hand-written docs live next to this script so that `rm -rf fixtures/pi` loses nothing
cp "$HERE/fixture-docs/README.md" "$HERE/fixture-docs/NOTES.md" "$OUT/"

# sanity checks
for s in "${SCENARIOS[@]}"; do
	[ -s "$OUT/$s/requests.jsonl" ] || { log "no model requests recorded for $s"; exit 1; }
done
log "done: $OUT"
