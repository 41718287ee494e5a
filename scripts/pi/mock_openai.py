#!/usr/bin/env python3
"""Scripted mock of the OpenAI chat-completions streaming API (stdlib only).

Used by record.sh to drive the reference `pi` agent deterministically.

Endpoints
---------
POST /v1/chat/completions   streamed (SSE) or plain reply taken from the loaded script
GET  /v1/models             list of model ids seen in the script (informational)
POST /_control/load         {"script": <script object>, "log": "/path/requests.jsonl"}
                            loads a new script, resets the turn cursor, truncates/sets the log
GET  /_control/status       {"next_turn": n, "turns": total, "requests": count}

Script format (JSON)
--------------------
{
  "summary": "text used for every summarization request (compaction / branch summary)",
  "delay": 0.02,                # optional pause between SSE chunks (also per turn)
  "turns": [
    {
      "reasoning": ["piece", "piece"],          # optional, streamed as delta.reasoning_content
      "text": ["piece", "piece"],               # optional, streamed as delta.content
      "tool_calls": [                           # optional, streamed as delta.tool_calls
        {"id": "call_1", "name": "read", "arguments": ["{\"pa", "th\": \"a.txt\"}"]}
      ],
      "usage": {"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 0},
      "finish_reason": "stop"                   # default: "tool_calls" if tool_calls else "stop"
    },
    {"http_error": 400, "error_body": {"error": {"message": "..."}}}   # plain HTTP error reply
  ]
}

A request is classified as a *summarization* request when its first system/developer
message starts with "You are a context summarization assistant" (pi's compaction and
branch-summary prompt).  Those requests are answered with `summary` and do not consume a
turn.  Every request is appended to the log as one JSON line:
{"seq":n,"kind":"turn"|"summary","turn":i|null,"body":<request body exactly as received>}
"""

import argparse
import os
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CREATED = 1700000000  # fixed so that recordings are stable
# Pause between SSE chunks (seconds).  Without it pi may serialise several deltas' events
# after the whole stream was parsed, so every `partial` would show the final text.
DEFAULT_DELAY = 0.02
# The reference's summarization system prompt, and knightcode's (check-compaction-roundtrip).
SUMMARY_MARKERS = ("You are a context summarization assistant", "You write context checkpoints")


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.script = {"turns": []}
        self.log_path = None
        self.cursor = 0
        self.seq = 0

    def load(self, script, log_path):
        with self.lock:
            self.script = script
            self.cursor = 0
            self.seq = 0
            self.log_path = log_path
            if log_path:
                open(log_path, "w").close()

    def log(self, record, raw_body):
        """Append one line; the request body is embedded byte-for-byte as pi sent it."""
        if not self.log_path:
            return
        head = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(head[:-1] + ',"body":' + raw_body + "}\n")


STATE = State()


def first_system_text(body):
    for msg in body.get("messages", []):
        if msg.get("role") in ("system", "developer"):
            content = msg.get("content")
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return content or ""
    return ""


def is_summary_request(body):
    return first_system_text(body).startswith(SUMMARY_MARKERS)


def build_chunks(turn, model, chunk_id):
    """Yield chat.completion.chunk objects for one scripted turn."""

    def chunk(delta, finish=None):
        return {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    for piece in turn.get("reasoning", []):
        yield chunk({"reasoning_content": piece})
    for piece in turn.get("text", []):
        yield chunk({"content": piece})
    for index, call in enumerate(turn.get("tool_calls", [])):
        args = call.get("arguments", [])
        if isinstance(args, (dict, str)):
            args = [args if isinstance(args, str) else json.dumps(args)]
        # first piece carries id + name + the first argument fragment
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["name"], "arguments": args[0] if args else ""},
                    }
                ]
            }
        )
        for piece in args[1:]:
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    finish = turn.get("finish_reason") or ("tool_calls" if turn.get("tool_calls") else "stop")
    yield chunk({}, finish)
    usage = turn.get("usage", {})
    prompt = usage.get("prompt_tokens", 100)
    completion = usage.get("completion_tokens", 20)
    cached = usage.get("cached_tokens", 0)
    yield {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    def _json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self.raw_body = raw.decode("utf-8") if raw else "{}"
        return json.loads(self.raw_body)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            return self._json(200, {"object": "list", "data": []})
        if self.path == "/_control/status":
            with STATE.lock:
                return self._json(
                    200,
                    {
                        "next_turn": STATE.cursor,
                        "turns": len(STATE.script.get("turns", [])),
                        "requests": STATE.seq,
                    },
                )
        self._json(404, {"error": "not found"})

    def do_POST(self):
        if self.path == "/_control/load":
            body = self._body()
            script = body.get("script")
            if isinstance(script, str):
                with open(script, encoding="utf-8") as f:
                    script = json.load(f)
            STATE.load(script or {"turns": []}, body.get("log"))
            return self._json(200, {"ok": True})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._json(404, {"error": "not found"})

        body = self._body()
        summary = is_summary_request(body)
        with STATE.lock:
            seq = STATE.seq
            STATE.seq += 1
            if summary:
                turn_index = None
                turn = {
                    "text": [STATE.script.get("summary", "## Goal\nMock summary.")],
                    "usage": {"prompt_tokens": 500, "completion_tokens": 40},
                }
            else:
                turn_index = STATE.cursor
                turns = STATE.script.get("turns", [])
                if turn_index < len(turns):
                    turn = turns[turn_index]
                else:
                    turn = {"text": ["(mock: script exhausted)"]}
                STATE.cursor += 1
            STATE.log(
                {"seq": seq, "kind": "summary" if summary else "turn", "turn": turn_index},
                self.raw_body.strip(),
            )

        if turn.get("http_error"):
            return self._json(
                turn["http_error"],
                turn.get("error_body", {"error": {"message": "mock error", "type": "invalid_request_error"}}),
            )

        model = body.get("model", "mock")
        chunk_id = "chatcmpl-mock-%04d" % seq
        chunks = list(build_chunks(turn, model, chunk_id))

        if not body.get("stream"):
            # Non-streaming fallback: collapse the chunks into one completion.
            message = {"role": "assistant", "content": "".join(turn.get("text", [])) or None}
            if turn.get("tool_calls"):
                message["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {
                            "name": c["name"],
                            "arguments": "".join(c["arguments"])
                            if isinstance(c.get("arguments"), list)
                            else json.dumps(c.get("arguments", {})),
                        },
                    }
                    for c in turn["tool_calls"]
                ]
            return self._json(
                200,
                {
                    "id": chunk_id,
                    "object": "chat.completion",
                    "created": CREATED,
                    "model": model,
                    "choices": [
                        {"index": 0, "message": message, "finish_reason": chunks[-2]["choices"][0]["finish_reason"]}
                    ],
                    "usage": chunks[-1]["usage"],
                },
            )

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        delay = turn.get("delay", STATE.script.get("delay", DEFAULT_DELAY))
        for c in chunks:
            self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
            self.wfile.flush()
            if delay:
                time.sleep(delay)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0, help="0 = pick a free port")
    ap.add_argument("--port-file", help="write the bound port here once listening")
    ap.add_argument("--script", help="initial script file")
    ap.add_argument("--log", help="initial request log file")
    args = ap.parse_args()

    if args.script:
        with open(args.script, encoding="utf-8") as f:
            STATE.load(json.load(f), args.log)
    elif args.log:
        STATE.load({"turns": []}, args.log)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(args.port_file + ".tmp", args.port_file)
    print(f"mock_openai listening on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
