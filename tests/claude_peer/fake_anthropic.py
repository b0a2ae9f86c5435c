#!/usr/bin/env python3
"""A scripted Anthropic Messages API on 127.0.0.1 for driving a real Claude Code.

Usage: fake_anthropic.py PORT_FILE LOGFILE

Vendored from the shared Claude Code peer notes (../shared/peers/claude-code/), changed
only so tests can run it beside each other: it binds an ephemeral port on 127.0.0.1 and
writes it to PORT_FILE once listening, and exits when its stdin closes (the test's pipe
to it is its lifeline), so a killed test run leaves no model behind.

Every request is appended to LOGFILE as one JSON line: {"path", "tools": [names],
"messages": [...]} so a test can read what the model was given (tool results included).

The model's turn, chosen from the conversation itself:
- The user's first message may hold lines `CALL: {"name": TOOL, "input": {...}}`.
  The model calls them one per turn, in order: the first on the first request, the
  next after each tool result. TOOL may be a built-in (AskUserQuestion) or an MCP
  tool (mcp__SERVER__TOOL).
- When every CALL has been made (or there is none), it ends the turn with the text
  `DONE` followed by the last tool result's text, so the transcript shows what came back.
Streaming (SSE) and non-streaming requests are both answered; count_tokens too.
"""
import http.server, itertools, json, os, sys, threading

PORT_FILE, LOG = sys.argv[1], sys.argv[2]
ids = itertools.count()


def calls_in(messages):
    for m in messages:
        if m.get("role") != "user":
            continue
        parts = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        for p in parts:
            if p.get("type") == "text" and "CALL:" in p.get("text", ""):
                out = []
                for line in p["text"].splitlines():
                    if line.strip().startswith("CALL:"):
                        out.append(json.loads(line.split("CALL:", 1)[1]))
                return out
    return []


def tool_results(messages):
    res = []
    for m in messages:
        if m.get("role") == "user" and isinstance(m["content"], list):
            for p in m["content"]:
                if p.get("type") == "tool_result":
                    c = p.get("content")
                    if isinstance(c, list):
                        c = "".join(x.get("text", "") for x in c if isinstance(x, dict))
                    res.append(c)
    return res


def sse(ev, data):
    return f"event: {ev}\ndata: {json.dumps(data)}\n\n".encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply_json(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply_json({})

    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        req = json.loads(self.rfile.read(n) or b"{}")
        if "count_tokens" in self.path:
            return self.reply_json({"input_tokens": 10})
        msgs = req.get("messages", [])
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "tools": [t.get("name") for t in req.get("tools", [])], "messages": msgs}) + "\n")
        calls, results = calls_in(msgs), tool_results(msgs)
        i = next(ids)
        if len(results) < len(calls):
            call = calls[len(results)]
            block = {"type": "tool_use", "id": f"toolu_{i}", "name": call["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(call.get("input", {}))}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": "DONE " + (results[-1] if results else "")}
            stop = "end_turn"
        msg = {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": req.get("model", "scripted"),
               "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        if not req.get("stream"):
            full = dict(block)
            if full["type"] == "text":
                full["text"] = delta["text"]
            else:
                full["input"] = json.loads(delta["partial_json"])
            msg.update(content=[full], stop_reason=stop)
            return self.reply_json(msg)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        out = sse("message_start", {"type": "message_start", "message": msg})
        out += sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block})
        out += sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        out += sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        out += sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}})
        out += sse("message_stop", {"type": "message_stop"})
        self.wfile.write(out)
        self.wfile.flush()
        self.close_connection = True


def exit_on_stdin_eof():
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        os._exit(0)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
tmp = PORT_FILE + ".tmp"
with open(tmp, "w") as f:
    f.write(str(server.server_address[1]))
os.replace(tmp, PORT_FILE)
threading.Thread(target=exit_on_stdin_eof, daemon=True).start()
server.serve_forever()
