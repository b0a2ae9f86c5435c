#!/usr/bin/env python3
"""oq's scripted model for tests against a real OpenCode server (stdlib only).

An OpenAI-compatible `POST /v1/chat/completions` (streaming SSE or plain JSON) and
`GET /v1/models`, bound to 127.0.0.1. Its turn, per request:

  * the last message is a tool result      -> a plain-text reply quoting that result
  * the request offers the `question` tool -> one call of `question` whose input is the
    JSON object after `ASK:` in the first user message (`{"questions": [...]}`), or a
    default one-question request when there is no `ASK:`
  * anything else (title generation, ...)  -> a short plain text

Every request is appended to the log as one JSON line, with the full text of every
message, so a test can check what the model received (the user's answer, for one).

Usage: fake_model.py PORT_FILE LOG_FILE
Binds an ephemeral port and writes it to PORT_FILE once listening. Exits when its
standard input reaches end of file, so it never outlives the test that started it.
"""
import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE = sys.argv[1]
LOG_FILE = sys.argv[2]
_lock = threading.Lock()

DEFAULT_REQUEST = {
    "questions": [{
        "question": "Which database should the project use?",
        "header": "Database",
        "options": [
            {"label": "Postgres", "description": "Relational, battle tested"},
            {"label": "SQLite", "description": "Embedded, zero setup"},
        ],
        "multiple": False,
    }]
}


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def scripted(messages):
    """The JSON object after 'ASK:' in the first user message, if there is one."""
    for m in messages:
        if m.get("role") != "user":
            continue
        text = text_of(m.get("content"))
        at = text.find("ASK:")
        if at < 0:
            return None
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[at + 4:].lstrip())
        except ValueError:
            return None
        return obj if isinstance(obj, dict) and "questions" in obj else None
    return None


def turn(req):
    messages = req.get("messages") or []
    tools = [t.get("function", {}).get("name") for t in (req.get("tools") or [])]
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return "text", "Thanks, noted your answer: " + text_of(last.get("content"))[:600]
    if "question" in tools:
        return "tool", json.dumps(scripted(messages) or DEFAULT_REQUEST)
    return "text", "Scripted session title"


def log(entry):
    with _lock, open(LOG_FILE, "a") as f:
        f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            return self.send_json(200, {"object": "list", "data": [
                {"id": "scripted-model", "object": "model", "owned_by": "oq-tests"}]})
        return self.send_json(404, {"error": "not found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            return self.send_json(400, {"error": "bad json"})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self.send_json(404, {"error": "not found"})
        kind, payload = turn(req)
        messages = req.get("messages") or []
        log({
            "t": time.time(),
            "stream": bool(req.get("stream")),
            "roles": [m.get("role") for m in messages],
            "texts": [text_of(m.get("content")) for m in messages],
            "tools": [t.get("function", {}).get("name") for t in (req.get("tools") or [])],
            "reply": kind,
            "payload": payload,
        })
        cid = "chatcmpl-" + uuid.uuid4().hex[:12]
        created = int(time.time())
        model = req.get("model", "scripted-model")
        call_id = "call_" + uuid.uuid4().hex[:12]
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}

        if not req.get("stream"):
            if kind == "tool":
                message = {"role": "assistant", "content": None, "tool_calls": [{
                    "id": call_id, "type": "function",
                    "function": {"name": "question", "arguments": payload}}]}
                finish = "tool_calls"
            else:
                message = {"role": "assistant", "content": payload}
                finish = "stop"
            return self.send_json(200, {
                "id": cid, "object": "chat.completion", "created": created, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage})

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def chunk(delta, finish=None, with_usage=False):
            c = {"id": cid, "object": "chat.completion.chunk", "created": created,
                 "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if with_usage:
                c["usage"] = usage
            self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
            self.wfile.flush()

        if kind == "tool":
            chunk({"role": "assistant", "content": None, "tool_calls": [{
                "index": 0, "id": call_id, "type": "function",
                "function": {"name": "question", "arguments": ""}}]})
            half = len(payload) // 2
            for part in (payload[:half], payload[half:]):
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
            chunk({}, "tool_calls", True)
        else:
            chunk({"role": "assistant", "content": ""})
            for word in payload.split(" "):
                chunk({"content": word + " "})
            chunk({}, "stop", True)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def exit_on_stdin_eof():
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        os._exit(0)


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = PORT_FILE + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, PORT_FILE)
    threading.Thread(target=exit_on_stdin_eof, daemon=True).start()
    server.serve_forever()
