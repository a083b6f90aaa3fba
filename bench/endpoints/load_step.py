#!/usr/bin/env python3
"""A load step at an endpoint: CLIENTS clients send streamed completions through the gateway
back to back for SECONDS, from the moment this starts.

    load_step.py URL TOKEN MODEL CLIENTS SECONDS

Prints {"requests": N, "failed": F, "tokens": T} when done (a token is an SSE event with text).
"""

import http.client
import json
import sys
import threading
import time
import urllib.parse


def client(url, token, model, until, totals, lock):
    parsed = urllib.parse.urlparse(url)
    body = json.dumps({"model": model, "prompt": "Hello", "max_tokens": 32, "stream": True})
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    while time.monotonic() < until:
        ok, tokens = False, 0
        try:
            conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
            conn.request("POST", "/openai/v1/completions", body=body, headers=headers)
            response = conn.getresponse()
            text = response.read().decode()
            tokens = sum(1 for e in text.split("\n\n") if e.startswith("data: {") and '"text":"' in e)
            ok = response.status == 200 and "data: [DONE]" in text
            conn.close()
        except OSError:
            pass
        with lock:
            totals["requests"] += 1
            totals["failed"] += 0 if ok else 1
            totals["tokens"] += tokens


def main():
    url, token, model, clients, seconds = sys.argv[1:6]
    until = time.monotonic() + float(seconds)
    totals = {"requests": 0, "failed": 0, "tokens": 0}
    lock = threading.Lock()
    threads = [threading.Thread(target=client, args=(url, token, model, until, totals, lock))
               for _ in range(int(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(totals))


if __name__ == "__main__":
    main()
