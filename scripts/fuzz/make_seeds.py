#!/usr/bin/env python3
"""Writes the small hand-made seeds committed under fuzz/seeds/<target>/ (run once; the files
are committed). The first byte of session, stream, RPC, keybindings and tool inputs is a control byte
(see crates/fuzzing): how the body is cut, which tool, which platform."""
import json
import pathlib
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "fuzz" / "seeds"


def put(target, name, data):
    d = ROOT / target
    d.mkdir(parents=True, exist_ok=True)
    data = data if isinstance(data, bytes) else data.encode()
    if target == "session_load":
        data = b"\x00" + data  # control byte: also open the file as its owner
    (d / name).write_bytes(data)


def sse(events):
    out = ""
    for ev in events:
        name, data = ev if isinstance(ev, tuple) else (None, ev)
        if name:
            out += f"event: {name}\n"
        out += f"data: {json.dumps(data, separators=(',', ':'))}\n\n"
    return out


HEADER = {"type": "session", "version": 3, "id": "0197a0e0-0000-7000-8000-000000000001",
          "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/tmp/p"}
USER = {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": "2026-12-01T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}}
ASSISTANT = {"type": "message", "id": "b2c3d4e5", "parentId": "a1b2c3d4", "timestamp": "2026-12-01T10:00:02.000Z",
             "message": {"role": "assistant", "content": [
                 {"type": "text", "text": "calling"},
                 {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.txt"}}],
                 "api": "anthropic-messages", "provider": "anthropic", "model": "m",
                 "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
                           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                 "stopReason": "toolUse", "timestamp": 2}}
RESULT = {"type": "message", "id": "c3d4e5f6", "parentId": "b2c3d4e5", "timestamp": "2026-12-01T10:00:03.000Z",
          "message": {"role": "toolResult", "toolCallId": "call_1", "toolName": "read",
                      "content": [{"type": "text", "text": "x"}], "isError": False, "timestamp": 3}}
lines = [json.dumps(x) for x in (HEADER, USER, ASSISTANT, RESULT)]
put("session_load", "v3", "\n".join(lines) + "\n")
put("session_load", "torn-tail", "\n".join(lines) + "\n" + lines[1][:30])
put("session_load", "damaged-middle", "\n".join([lines[0], lines[1], lines[2][:40], lines[3]]) + "\n")
v1 = dict(HEADER, version=1)
put("session_load", "v1-no-ids", json.dumps(v1) + "\n" + json.dumps(
    {"type": "message", "timestamp": "2026-12-01T10:00:01.000Z", "message": USER["message"]}) + "\n" + json.dumps(
    {"type": "compaction", "timestamp": "x", "summary": "s", "firstKeptEntryIndex": 0, "tokensBefore": 5}) + "\n")
put("session_load", "newer", json.dumps(dict(HEADER, version=99)) + "\n")

put("rpc", "commands", b"\x00" + b'{"type":"prompt","message":"hi","id":"1"}\n{"type":"get_state"}\r\n'
    b'{"type":"steer","message":"x","images":[{"type":"image","data":"AA==","mimeType":"image/png"}]}\n'
    b'{"type":"extension_ui_response","id":"u1","value":"ok"}\n{"type":"nope"}\nnot json\n'
    b'{"type":"set_model","provider":1}\n{"id":"2"}\n' + b'{"type":"prompt","message":"' + b"a" * 600 + b'"}\n')

anthropic = sse([
    ("message_start", {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                           "model": "m", "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2ln"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hello"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 1}),
    ("content_block_start", {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a"}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ".txt\"}"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 2}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
    ("message_stop", {"type": "message_stop"}),
])
put("stream_anthropic", "tool-call", b"\x87" + anthropic.encode())
put("stream_anthropic", "error", b"\x00" + sse([("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})]).encode())

chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
completions = sse([
    dict(chunk, choices=[{"index": 0, "delta": {"role": "assistant", "reasoning_content": "think"}}]),
    dict(chunk, choices=[{"index": 0, "delta": {"content": "Hi"}}]),
    dict(chunk, choices=[{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                                 "function": {"name": "bash", "arguments": "{\"comm"}}]}}]),
    dict(chunk, choices=[{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "and\":\"ls\"}"}}]}}]),
    dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
    dict(chunk, choices=[], usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                                   "prompt_tokens_details": {"cached_tokens": 2}}),
]) + "data: [DONE]\n\n"
put("stream_openai_completions", "tool-call", b"\x85" + completions.encode())
put("stream_openai_completions", "error", b"\x00" + b'data: {"error":{"message":"bad","code":500}}\n\n')

responses = sse([
    ("response.created", {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
    ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                    "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
    ("response.reasoning_summary_text.delta", {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
                                               "output_index": 0, "summary_index": 0, "delta": "plan"}),
    ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                   "item": {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "plan"}]}}),
    ("response.output_item.added", {"type": "response.output_item.added", "output_index": 1,
                                    "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
    ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
                                    "content_index": 0, "delta": "Hello"}),
    ("response.output_item.done", {"type": "response.output_item.done", "output_index": 1,
                                   "item": {"type": "message", "id": "msg_1", "role": "assistant",
                                            "content": [{"type": "output_text", "text": "Hello"}]}}),
    ("response.output_item.added", {"type": "response.output_item.added", "output_index": 2,
                                    "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "ls", "arguments": ""}}),
    ("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                                                "output_index": 2, "delta": "{\"path\":\".\"}"}),
    ("response.output_item.done", {"type": "response.output_item.done", "output_index": 2,
                                   "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "ls",
                                            "arguments": "{\"path\":\".\"}"}}),
    ("response.completed", {"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
                                                                        "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7,
                                                                                  "input_tokens_details": {"cached_tokens": 0}}}}),
])
put("stream_openai_responses", "tool-call", b"\x86" + responses.encode())
put("stream_openai_responses", "failed", b"\x00" + sse([("response.failed", {"type": "response.failed", "response": {
    "id": "r", "status": "failed", "error": {"code": "server_error", "message": "boom"}}})]).encode())

google = sse([
    {"candidates": [{"content": {"role": "model", "parts": [{"text": "think", "thought": True, "thoughtSignature": "c2ln"}]}}]},
    {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello"}]}}]},
    {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "grep", "args": {"pattern": "x"}}}]},
                     "finishReason": "STOP"}],
     "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 5, "thoughtsTokenCount": 1, "totalTokenCount": 10}},
])
put("stream_google", "tool-call", b"\x84" + google.encode())
put("stream_google", "raw-error", b"\x00" + b'[{\n  "error": {\n    "code": 429,\n    "message": "quota",\n    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n]\n')

def mistral_chunk(delta, finish=None, usage=None):
    chunk = {"id": "a1", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        chunk["usage"] = usage
    return chunk


mistral_usage = {"prompt_tokens": 5, "total_tokens": 9, "completion_tokens": 4}
mistral = sse([
    mistral_chunk({"content": ""}),
    mistral_chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me look."}]}]}),
    mistral_chunk({"content": "Reading."}),
    mistral_chunk({"tool_calls": [{"id": "abcDEF123", "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"},
                                   "index": 0}]}),
    mistral_chunk({"tool_calls": [{"id": "null", "function": {"name": "bash", "arguments": {"command": "ls"}}, "index": 1}]}),
    mistral_chunk({"content": ""}, "tool_calls", mistral_usage),
]) + "data: [DONE]\n\n"
put("stream_mistral", "tool-call", b"\x85" + mistral.encode())
put("stream_mistral", "text", b"\x03" + (sse([
    mistral_chunk({"role": "assistant", "content": ""}),
    mistral_chunk({"content": [{"type": "text", "text": "Hello"}, {"type": "image_url", "image_url": "x"}]}),
    mistral_chunk({"content": " there"}, "model_length", mistral_usage),
]) + "data: [DONE]\n\n").encode())
put("stream_mistral", "error", b"\x07" + sse([
    mistral_chunk({"content": "Part"}),
    {"object": "error", "message": "boom", "type": "internal_server_error", "param": None, "code": "3700"},
]).encode())

def event_stream(messages):
    """AWS event-stream frames (Bedrock): each (headers, payload) with string headers."""
    out = b""
    for headers, payload in messages:
        head = b""
        for name, value in headers:
            head += bytes([len(name)]) + name.encode() + b"\x07" + len(value).to_bytes(2, "big") + value.encode()
        body = payload if isinstance(payload, bytes) else json.dumps(payload, separators=(",", ":")).encode()
        total = 12 + len(head) + len(body) + 4
        prelude = total.to_bytes(4, "big") + len(head).to_bytes(4, "big")
        message = prelude + zlib.crc32(prelude).to_bytes(4, "big") + head + body
        out += message + zlib.crc32(message).to_bytes(4, "big")
    return out


def bedrock_event(name, payload):
    return ([(":event-type", name), (":content-type", "application/json"), (":message-type", "event")], payload)


bedrock = event_stream([
    bedrock_event("messageStart", {"p": "abc", "role": "assistant"}),
    bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Let me look."}}}),
    bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}}),
    bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
    bedrock_event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Reading."}}),
    bedrock_event("contentBlockStop", {"contentBlockIndex": 1}),
    bedrock_event("contentBlockStart", {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t1", "name": "read"}}}),
    bedrock_event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"path\":"}}}),
    bedrock_event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": "\"a.txt\"}"}}}),
    bedrock_event("contentBlockStop", {"contentBlockIndex": 2}),
    bedrock_event("messageStop", {"stopReason": "tool_use"}),
    bedrock_event("metadata", {"usage": {"inputTokens": 5, "outputTokens": 4, "cacheReadInputTokens": 2,
                                         "cacheWriteInputTokens": 1, "totalTokens": 12}, "metrics": {"latencyMs": 9}}),
])
put("stream_bedrock", "tool-call", b"\x85" + bedrock)
put("stream_bedrock", "text", b"\x03" + event_stream([
    bedrock_event("messageStart", {"role": "assistant"}),
    bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hello"}}),
    bedrock_event("messageStop", {"stopReason": "max_tokens"}),
]))
put("stream_bedrock", "exception", b"\x07" + event_stream([
    bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Part"}}),
    ([(":exception-type", "throttlingException"), (":content-type", "application/json"),
      (":message-type", "exception")], {"message": "Too many requests"}),
    ([(":error-code", "InternalFailure"), (":error-message", "boom"), (":message-type", "error")], b""),
]))


put("sse", "mixed", b"\x83" + b": comment\nevent: a\ndata: 1\ndata: 2\r\n\r\nid: 7\nretry: 5\ndata\n\n{\"error\":1}\nevent: b\rdata: x\r\r" + b"data: tail")

put("models_json", "providers", json.dumps({
    "providers": {
        "local": {"baseUrl": "http://127.0.0.1:8080/v1", "api": "openai-completions", "apiKey": "$KEY",
                  "headers": {"x-a": "b"}, "authHeader": True,
                  "models": [{"id": "m1", "name": "M1", "reasoning": True, "input": ["text", "image"],
                              "contextWindow": 32000, "maxTokens": 4096,
                              "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0},
                              "compat": {"supportsDeveloperRole": False},
                              "thinkingLevelMap": {"high": "max", "off": None}}]},
        "anthropic": {"modelOverrides": {"anthropic-messages": {"name": "Renamed"}}, "baseUrl": "https://proxy.example"},
    }}, indent=1))
put("models_json", "comments", '// comment\n{ /* c */ "providers": { "x": { "models": [], }, }, }\n')

put("settings", "layers", json.dumps({
    "defaultProvider": "anthropic", "defaultModel": "m", "defaultThinkingLevel": "high", "theme": "dark",
    "compaction": {"enabled": True, "reserveTokens": 1000, "keepRecentTokens": 2000},
    "retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 10, "maxDelayMs": 100},
    "queueMode": "all", "websockets": False, "skills": {"enableSkillCommands": False, "customDirectories": ["a"]},
    "defaultTools": ["read", "bash"], "packages": ["npm:x"], "sessionDir": "s", "shellPath": "/bin/sh",
}) + "\x00" + json.dumps({"defaultTools": ["+grep", "-bash"], "sessionDir": "evil", "theme": 5,
                           "sandbox": {"mode": "workspace-write"}}))
put("settings", "bom", "\ufeff{\"theme\":\"light\"}\x00[1]")

put("keybindings", "user", b"\x00" + json.dumps({
    "tui.input.submit": ["enter", "ctrl+m"], "app.interrupt": "escape", "cursorUp": "ctrl+p",
    "tui.editor.cursorUp": "up", "nope": "x", "app.clear": 5, "app.exit": ["ctrl+d", 1], "app.suspend": "ctrl+shift+alt+z",
}).encode())

put("frontmatter", "skill", "---\nname: fuzz-skill\ndescription: Does a thing\ndisable-model-invocation: true\n"
    "allowed-tools: [read, bash]\n---\n\n# Title\nUse $1 and ${@:2} and ${3:-def} and $ARGUMENTS.\n")
put("frontmatter", "crlf", "---\r\ndescription: \"quoted: yes\"\r\nargument-hint: <file>\r\n---\r\nbody 'a b' \"c d\"\r\n")
put("frontmatter", "bad-yaml", "---\nname: [unclosed\n---\nbody\n")

for i, args in enumerate([
    {"path": "a.txt", "offset": 2, "limit": 10},
    {"path": "a.txt", "content": "x"},
    {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]},
    {"command": "ls", "timeout": 5},
    {"pattern": "x", "path": ".", "glob": "*.rs", "ignoreCase": True, "literal": False, "context": 2, "limit": 5},
    {"pattern": "*.rs", "path": ".", "limit": 3},
    {"path": ".", "limit": 1},
]):
    put("tool_args", f"tool{i}", bytes([i]) + json.dumps(args).encode())
put("tool_args", "legacy-edit", b"\x02" + b'{"path":"a","oldText":"x","newText":"y"}')
put("tool_args", "partial", b"\x00" + b'{"path": "a.txt", "offs')

put("edit_match", "simple", "fn main() {\n    let x = 1;\r\n}\n\x00let x = 1;\x00let x = 2;")
put("edit_match", "fuzzy", "he said \u201chello\u201d\u00a0 there  \n\tend\x00\"hello\" there\x00bye\x00end\x00END")

theme = json.loads((ROOT.parents[1] / "crates/resources/themes/dark.json").read_text())
put("theme", "dark", json.dumps(theme, indent=1))
theme["vars"] = {"accent": "#ff0000", "loop": "accent"}
theme["colors"]["accent"] = "accent"
theme["colors"]["border"] = 300
put("theme", "vars-and-bad-values", json.dumps(theme))
