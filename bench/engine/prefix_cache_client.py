#!/usr/bin/env python3
"""The prefix cache's client: times requests against a running `tensorfleet engine serve`.

    prefix_cache_client.py URL ttft PREFIX_TOKENS QUESTION_TOKENS
        Two streamed completions that share a PREFIX_TOKENS-token prefix, each followed by its
        own QUESTION_TOKENS-token question, one after the other. Prints {"first_s", "second_s",
        "second_cached_tokens"}: each one's time to its first token, and what the second's usage
        says came from the cache.
    prefix_cache_client.py URL chats CHATS SYSTEM_TOKENS QUESTION_TOKENS MAX_TOKENS
        CHATS completions at once, each a SYSTEM_TOKENS-token system prompt shared by all and a
        question of its own, MAX_TOKENS generated each. Prints {"seconds", "generated_tokens",
        "tokens_per_s", "cached_tokens", "mean_ttft_s"}.

Prompts are token ids (the completions API takes them), so their lengths are exact; each run
draws its own ids (a seed from the clock), so nothing is cached from an earlier run.
"""

import http.client
import json
import random
import sys
import threading
import time
import urllib.parse

VOCAB = 32000


def ids(rng, n):
    return [rng.randrange(100, VOCAB) for _ in range(n)]


def complete(url, prompt, max_tokens):
    """Streams one completion; returns (seconds to the first text, usage)."""
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=600)
    body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
                       "ignore_eos": True, "stream": True,
                       "stream_options": {"include_usage": True}})
    start = time.monotonic()
    conn.request("POST", "/v1/completions", body=body,
                 headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    if response.status != 200:
        raise SystemExit("status %d: %s" % (response.status, response.read()[:300]))
    first, usage, pending = None, None, b""
    while True:
        piece = response.read1(65536)
        if not piece:
            break
        pending += piece
        while b"\n\n" in pending:
            event, pending = pending.split(b"\n\n", 1)
            if not event.startswith(b"data: {"):
                continue
            data = json.loads(event[len(b"data: "):])
            if first is None and data.get("choices"):
                first = time.monotonic() - start
            if data.get("usage"):
                usage = data["usage"]
    conn.close()
    return first, usage


def ttft(url, prefix_tokens, question_tokens):
    rng = random.Random(time.time_ns())
    prefix = ids(rng, prefix_tokens)
    first, _ = complete(url, prefix + ids(rng, question_tokens), 1)
    second, usage = complete(url, prefix + ids(rng, question_tokens), 1)
    print(json.dumps({"first_s": first, "second_s": second,
                      "second_cached_tokens": usage["prompt_tokens_details"]["cached_tokens"]}))


def chats(url, count, system_tokens, question_tokens, max_tokens):
    rng = random.Random(time.time_ns())
    system = ids(rng, system_tokens)
    prompts = [system + ids(rng, question_tokens) for _ in range(count)]
    results = [None] * count

    def run(i):
        results[i] = complete(url, prompts[i], max_tokens)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - start
    generated = sum(r[1]["completion_tokens"] for r in results)
    print(json.dumps({
        "seconds": seconds, "generated_tokens": generated, "tokens_per_s": generated / seconds,
        "cached_tokens": sum(r[1]["prompt_tokens_details"]["cached_tokens"] for r in results),
        "mean_ttft_s": sum(r[0] for r in results) / count}))


def main():
    url, mode = sys.argv[1], sys.argv[2]
    args = [int(a) for a in sys.argv[3:]]
    if mode == "ttft":
        ttft(url, *args)
    elif mode == "chats":
        chats(url, *args)
    else:
        raise SystemExit("mode: ttft or chats")


if __name__ == "__main__":
    main()
