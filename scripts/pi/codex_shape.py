"""The shape of ChatGPT-plan (Codex) requests that both agents must agree on, from a mock
server's request log (JSON lines): POST requests only, the headers the backend reads, and the
body with the session id replaced by a placeholder, the system prompt's and tools'
own words replaced by placeholders."""
import json
import sys

HEADERS = ["accept", "authorization", "chatgpt-account-id", "content-type", "openai-beta",
           "originator", "session_id", "x-client-request-id"]


def shape(request):
    headers = {k.lower(): v for k, v in request["headers"]}
    session = headers.get("session_id")
    kept = {}
    for name in HEADERS:
        value = headers.get(name)
        if value is not None and value == session:
            value = "<session>"
        kept[name] = value
    body = dict(request["body"])
    if body.get("prompt_cache_key") == session:
        body["prompt_cache_key"] = "<session>"
    # Each agent has its own system prompt; that it is sent as instructions is what counts.
    body["instructions"] = "<system prompt>" if body.get("instructions") else None
    body["tools"] = sorted(
        [{**tool, "description": "<description>", "parameters": "<schema>"} for tool in body.get("tools", [])],
        key=lambda t: t["name"])
    return {"method": request["method"], "path": request["path"], "headers": kept,
            "body_keys": list(request["body"].keys()), "body": body}


requests = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print(json.dumps([shape(r) for r in requests if r["method"] == "POST"], indent=1))
