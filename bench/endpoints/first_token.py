#!/usr/bin/env python3
"""Times one streamed completion through the gateway to its first token.

    first_token.py URL TOKEN MODEL

Prints {"first_token_s": ..., "total_s": ..., "status": ...}: from the moment the request is sent
to the first SSE event that carries text, and to the end of the stream.
"""

import http.client
import json
import sys
import time
import urllib.parse


def main():
    url, token, model = sys.argv[1:4]
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=600)
    body = json.dumps({"model": model, "prompt": "Hello", "max_tokens": 4, "stream": True})
    start = time.monotonic()
    conn.request("POST", "/openai/v1/completions", body=body,
                 headers={"Authorization": "Bearer " + token,
                          "Content-Type": "application/json"})
    response = conn.getresponse()
    first = None
    pending = b""
    while True:
        piece = response.read1(65536)
        if not piece:
            break
        pending += piece
        while b"\n\n" in pending:
            event, pending = pending.split(b"\n\n", 1)
            if first is None and event.startswith(b"data: {") and b'"text":"' in event:
                first = time.monotonic() - start
    total = time.monotonic() - start
    print(json.dumps({"first_token_s": first, "total_s": total, "status": response.status}))
    return 0 if response.status == 200 and first is not None else 1


if __name__ == "__main__":
    sys.exit(main())
