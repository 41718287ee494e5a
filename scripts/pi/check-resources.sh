#!/usr/bin/env bash
# Compare skills and prompt templates between the reference pi agent and knightcode:
# the same skill folder and template folder (given with --skill / --prompt-template) and
# the same `skills` settings entry (a Claude Code style folder) go to both, each sends the same prompts to the mock model, and the requests are compared:
#   - the system prompt's skills text (from "The following skills" to "</available_skills>"),
#   - the user message of a `/skill:name args` prompt and of a `/template args` prompt.
#
#   bash scripts/pi/check-resources.sh [path/to/knightcode]
#
# Exit status 0 when every comparison matches; the differing texts are printed otherwise.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PI="$HERE/node_modules/.bin/pi"
KC="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/knightcode}"
[ -x "$KC" ] || { echo "no knightcode binary at $KC (cargo build -p knightcode-cli)" >&2; exit 2; }
if [ ! -x "$PI" ]; then
	(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/kc-pi-resources.XXXXXX")"
MOCK_PID=""
cleanup() {
	if [ -n "$MOCK_PID" ]; then kill "$MOCK_PID" 2>/dev/null || true; wait "$MOCK_PID" 2>/dev/null || true; fi
	rm -rf "$TMP"
}
trap cleanup EXIT

python3 "$HERE/mock_openai.py" --port 0 --port-file "$TMP/port" 2>"$TMP/mock.stderr" &
MOCK_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
PORT="$(cat "$TMP/port")"

# --- resources: written once, used by both agents --------------------------------------
R="$TMP/res"
mkdir -p "$R/skills/alpha/refs" "$R/skills/group/beta" "$R/skills/hidden" "$R/prompts"
cat >"$R/skills/alpha/SKILL.md" <<'MD'
---
name: alpha
description: Reviews <code> & "quotes" for 'style'.
---

# Alpha

Read refs/guide.md first.
MD
printf 'guide\n' >"$R/skills/alpha/refs/guide.md"
cat >"$R/skills/group/beta/SKILL.md" <<'MD'
---
description: Second skill, nested one level down.
license: MIT
---
Beta body.
MD
cat >"$R/skills/hidden/SKILL.md" <<'MD'
---
name: hidden
description: Only by /skill:hidden.
disable-model-invocation: true
---
Hidden body.
MD
cat >"$R/skills/loose.md" <<'MD'
---
description: A loose markdown skill at the top of the folder.
---
Loose body.
MD
printf 'No frontmatter: not a skill.\n' >"$R/skills/notes.md"
# A Claude Code style folder, named in the settings' `skills` list of both agents.
mkdir -p "$R/claude-skills/pdf"
cat >"$R/claude-skills/pdf/SKILL.md" <<'MD'
---
name: pdf
description: Extract text from PDF files.
allowed-tools: read bash
---
Use pdftotext.
MD
cat >"$R/prompts/review.md" <<'MD'
---
description: Review a file
argument-hint: <file> [focus]
---
Review $1 focusing on ${@:2}. All: $ARGUMENTS. Count: $@. Third: [$3].
MD

mock_load() { # mock_load LOGFILE
	python3 - "$PORT" "$1" <<'PY'
import json, sys, urllib.request
port, log = sys.argv[1:3]
script = {"turns": [{"text": ["ok"]}] * 4}
req = urllib.request.Request("http://127.0.0.1:%s/_control/load" % port,
    data=json.dumps({"script": script, "log": log}).encode(),
    headers={"Content-Type": "application/json"})
urllib.request.urlopen(req, timeout=5).read()
PY
}

models_json() {
	cat <<JSON
{"providers": {"mock": {"baseUrl": "http://127.0.0.1:$PORT/v1", "api": "openai-completions",
  "apiKey": "mock-api-key", "models": [{"id": "mock-model", "name": "Mock", "reasoning": false,
  "input": ["text"], "contextWindow": 128000, "maxTokens": 4096}]}}}
JSON
}

PROMPTS=("/skill:alpha check src/main.rs" "/review a.rs \"error handling\" extra")
FLAGS=(--skill "$R/skills" --prompt-template "$R/prompts")

# --- pi ----------------------------------------------------------------------------------
mkdir -p "$TMP/pi-home/.pi/agent" "$TMP/project"
models_json >"$TMP/pi-home/.pi/agent/models.json"
printf '{"skills": ["%s"]}\n' "$R/claude-skills" >"$TMP/pi-home/.pi/agent/settings.json"
mock_load "$TMP/pi.jsonl"
for prompt in "${PROMPTS[@]}"; do
	(cd "$TMP/project" && env -i PATH="$PATH" HOME="$TMP/pi-home" PI_OFFLINE=1 TERM=dumb LANG=C.UTF-8 TZ=UTC \
		"$PI" --provider mock --model mock-model --no-session "${FLAGS[@]}" -p "$prompt" >/dev/null)
done

# --- knightcode --------------------------------------------------------------------------
mkdir -p "$TMP/kc-home" "$TMP/kc-agent"
models_json >"$TMP/kc-agent/models.json"
printf '{"skills": ["%s"]}\n' "$R/claude-skills" >"$TMP/kc-agent/settings.json"
mock_load "$TMP/kc.jsonl"
for prompt in "${PROMPTS[@]}"; do
	(cd "$TMP/project" && env -i PATH="$PATH" HOME="$TMP/kc-home" KNIGHTCODE_CODING_AGENT_DIR="$TMP/kc-agent" \
		TERM=dumb LANG=C.UTF-8 TZ=UTC "$KC" --provider mock --model mock-model --no-session "${FLAGS[@]}" -p "$prompt" >/dev/null)
done

python3 - "$TMP/pi.jsonl" "$TMP/kc.jsonl" <<'PY'
import json, sys

def requests(path):
    return [json.loads(line)["body"] for line in open(path) if line.strip()]

def text(content):
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)

def system(body):
    return "\n".join(text(m["content"]) for m in body["messages"] if m["role"] in ("system", "developer"))

def skills_text(body):
    s = system(body)
    start = s.find("The following skills")
    end = s.find("</available_skills>")
    return s[start:end + len("</available_skills>")] if start >= 0 and end >= 0 else None

def last_user(body):
    return text([m for m in body["messages"] if m["role"] == "user"][-1]["content"])

pi, kc = requests(sys.argv[1]), requests(sys.argv[2])
checks = [
    ("skills section", skills_text(pi[0]), skills_text(kc[0])),
    ("/skill:alpha expansion", last_user(pi[0]), last_user(kc[0])),
    ("/review expansion", last_user(pi[1]), last_user(kc[1])),
]
failed = False
for name, want, got in checks:
    if want is None or want != got:
        failed = True
        print(f"DIFFERENT {name}\n--- pi:\n{want}\n--- knightcode:\n{got}\n")
    else:
        print(f"same {name} ({len(want)} bytes)")
sys.exit(1 if failed else 0)
PY
