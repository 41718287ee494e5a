"""What fixtures/pi/bedrock/requests.json keeps of each recorded Bedrock request (see
record-bedrock.sh); crates/cli/tests/suite/bedrock.rs builds the same shape from ours.

The SigV4 `authorization` keeps its algorithm, access key, region and service and the signed
headers Bedrock needs (the SDK also signs its own `amz-sdk-*`, `content-length` and
`x-amz-user-agent` headers, which we do not send); the date and signature change per run.
The system prompt is reduced to its blocks' keys (the prompt's text is the agent's own)."""
import json
import sys

NEEDED = {"content-type", "host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"}


def authorization(value):
    if not value or not value.startswith("AWS4-HMAC-SHA256 "):
        return value
    fields = dict(part.split("=", 1) for part in value[len("AWS4-HMAC-SHA256 "):].split(", "))
    key, _date, region, service, terminator = fields["Credential"].split("/")
    signed = [h for h in fields["SignedHeaders"].split(";") if h in NEEDED]
    return f"AWS4-HMAC-SHA256 Credential={key}/<date>/{region}/{service}/{terminator}, SignedHeaders={';'.join(signed)}"


out = []
for line in open(sys.argv[1]):
    request = json.loads(line)
    headers = dict(request["headers"])
    body = request["body"]
    out.append({
        "path": request["path"],
        "authorization": authorization(headers.get("authorization")),
        "content-type": headers.get("content-type"),
        "x-amz-security-token": headers.get("x-amz-security-token"),
        "x-amz-content-sha256": "x-amz-content-sha256" in headers,
        "keys": list(body),
        "inferenceConfig": body.get("inferenceConfig"),
        "additionalModelRequestFields": body.get("additionalModelRequestFields"),
        "system": [sorted(block) for block in body.get("system", [])],
        "tools": sorted(tool["toolSpec"]["name"] for tool in body.get("toolConfig", {}).get("tools", [])),
        "toolSpecKeys": [list(tool["toolSpec"]) for tool in body.get("toolConfig", {}).get("tools", [])][:1],
        "messages": body["messages"],
    })
json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")
