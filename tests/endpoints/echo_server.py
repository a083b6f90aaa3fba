#!/usr/bin/python3
"""An OpenAI-compatible server of the simplest kind, as an endpoint's `command:` engine in tests.

  echo_server.py --host HOST --port PORT --name NAME

GET /health answers 200. POST /v1/chat/completions answers a chat completion whose content is
"NAME@PORT heard: <the last message>", and whose "seen_headers" lists the request's header names (so
that a test can check what the gateway passes on). With "stream": true it sends "events" chunks
(default 3), "interval" seconds apart (default 0), as SSE, then [DONE]. With
$TENSORFLEET_ENGINE_API_KEY set (an endpoint's replica), a POST must bear it (else 401), and the
answer says "key_checked": true.
"""
import argparse
import hmac
import json
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--name", default="echo")
    args = parser.parse_args()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *unused):
            pass

        def send_json(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/health":
                self.send_json(200, {"status": "ok"})
            else:
                self.send_json(404, {"error": {"message": "no such path", "type": "invalid_request_error"}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/v1/chat/completions":
                self.send_json(404, {"error": {"message": "no such path", "type": "invalid_request_error"}})
                return
            key = os.environ.get("TENSORFLEET_ENGINE_API_KEY", "")
            if key and not hmac.compare_digest(self.headers.get("Authorization", ""), "Bearer " + key):
                self.send_json(401, {"error": {"message": "wrong or missing API key",
                                               "type": "invalid_request_error", "code": "invalid_api_key"}})
                return
            said = request.get("messages", [{}])[-1].get("content", "")
            content = f"{args.name}@{args.port} heard: {said}"
            seen = sorted(k.lower() for k in self.headers.keys())
            if not request.get("stream"):
                self.send_json(200, {
                    "id": "chatcmpl-echo", "object": "chat.completion", "created": int(time.time()),
                    "model": request.get("model"), "seen_headers": seen, "key_checked": bool(key),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def chunk(text):
                data = text.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            for i in range(int(request.get("events", 3))):
                event = {"id": "chatcmpl-echo", "object": "chat.completion.chunk",
                         "created": int(time.time()), "model": request.get("model"),
                         "choices": [{"index": 0, "finish_reason": None,
                                      "delta": {"content": f"{content} [{i}]"}}]}
                chunk("data: " + json.dumps(event) + "\n\n")
                time.sleep(float(request.get("interval", 0)))
            chunk("data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")

    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
