#!/usr/bin/env bash
# Checks knightcode's SigV4 signature of a Bedrock request against the AWS SDK's: knightcode
# sends one ConverseStream request (temporary keys, a model id with `:`, a base URL with a
# port) to the Bedrock mock, then the reference's own `@smithy/signature-v4` (from pi's
# node_modules) signs the recorded request (same body bytes, headers and date) and the two
# `authorization` headers must be equal.
#
#   bash scripts/pi/check-bedrock-signature.sh      # builds knightcode and the mock (debug)
#   KC_BIN=… KC_MOCK_PROVIDER=… bash scripts/pi/check-bedrock-signature.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
[ -d "$HERE/node_modules/@smithy/signature-v4" ] || (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
if [ -z "${KC_BIN:-}" ] || [ -z "${KC_MOCK_PROVIDER:-}" ]; then
	(cd "$ROOT" && cargo build -q -p knightcode-cli --bin knightcode -p knightcode-testkit --bin knightcode-mock-provider)
	KC_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/knightcode"
	KC_MOCK_PROVIDER="${CARGO_TARGET_DIR:-$ROOT/target}/debug/knightcode-mock-provider"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/kc-bedrock-sig.XXXXXX")"
mock_pid=""
cleanup() {
	[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/agent" "$work/project"
echo '[{"parts": [{"text": "ok"}]}]' >"$work/script.json"
"$KC_MOCK_PROVIDER" --format bedrock-converse-stream --script "$work/script.json" --port 0 \
	--log "$work/requests.jsonl" >"$work/url.txt" 2>"$work/mock.err" &
mock_pid=$!
for _ in $(seq 1 100); do [ -s "$work/url.txt" ] && break; sleep 0.05; done
echo "{\"providers\": {\"amazon-bedrock\": {\"baseUrl\": \"$(head -n1 "$work/url.txt")\"}}}" >"$work/agent/models.json"
(cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" KNIGHTCODE_CODING_AGENT_DIR="$work/agent" \
	AWS_ACCESS_KEY_ID=AKIDCHECK AWS_SECRET_ACCESS_KEY=check-secret AWS_SESSION_TOKEN=check-token \
	AWS_REGION=eu-west-1 "$KC_BIN" -p --model "amazon-bedrock/anthropic.claude-3-7-sonnet-20250219-v1:0" hi \
	</dev/null >/dev/null)
cat >"$work/verify.mjs" <<'JS'
import { createHash, createHmac } from "crypto";
import { readFileSync } from "fs";
const { SignatureV4 } = await import(process.argv[3] + "/node_modules/@smithy/signature-v4/dist-cjs/index.js");
class Sha256 {
  constructor(key) { this.hash = key ? createHmac("sha256", key) : createHash("sha256"); }
  update(data) { this.hash.update(data); }
  async digest() { return new Uint8Array(this.hash.digest()); }
}
const request = JSON.parse(readFileSync(process.argv[2], "utf8").split("\n")[0]);
const headers = Object.fromEntries(request.headers);
// The mock logs the parsed body; serialised again it must be the bytes that were signed.
const body = JSON.stringify(request.body);
if (createHash("sha256").update(body).digest("hex") !== headers["x-amz-content-sha256"]) {
  throw new Error("the recorded body is not the signed body");
}
const d = headers["x-amz-date"];
const date = new Date(Date.UTC(+d.slice(0, 4), +d.slice(4, 6) - 1, +d.slice(6, 8), +d.slice(9, 11), +d.slice(11, 13), +d.slice(13, 15)));
const signer = new SignatureV4({ service: "bedrock", region: "eu-west-1", sha256: Sha256,
  credentials: { accessKeyId: "AKIDCHECK", secretAccessKey: "check-secret", sessionToken: "check-token" } });
const [hostname, port] = headers.host.split(":");
const signed = await signer.sign({ method: "POST", protocol: "http:", hostname, port: Number(port), path: request.path,
  query: {}, body, headers: { host: headers.host, "content-type": headers["content-type"],
  "x-amz-content-sha256": headers["x-amz-content-sha256"] } }, { signingDate: date });
if (signed.headers.authorization !== headers.authorization) {
  throw new Error(`signatures differ:\n  sdk:  ${signed.headers.authorization}\n  ours: ${headers.authorization}`);
}
console.log("knightcode's SigV4 signature equals the AWS SDK's");
JS
node "$work/verify.mjs" "$work/requests.jsonl" "$HERE"
