"""The queue benchmark's cycle (send 10, receive up to 10, delete what came) from boto3 through
the SQS API, or through the native API with Python's own HTTP client, against a running server:
what a Python agent's worker gets, as messages/s over THREADS threads for SECONDS seconds.

  bench/run_sqs_boto3_bench.sh starts the server and runs both.
  sqs_boto3_bench.py sqs|native URL [--threads 8] [--seconds 8] [--body-bytes 256]

sqs: SQS_KEY_ID and SQS_SECRET name an access key of the token's project; native: TOKEN."""

import argparse
import http.client
import json
import os
import threading
import time
import urllib.parse

import boto3
from botocore.config import Config


def sqs_cycle(url, queue, body):
    client = boto3.client("sqs", endpoint_url=url, region_name="us-east-1",
                          aws_access_key_id=os.environ["SQS_KEY_ID"],
                          aws_secret_access_key=os.environ["SQS_SECRET"],
                          config=Config(retries={"max_attempts": 1}, max_pool_connections=1))
    queue_url = client.get_queue_url(QueueName=queue)["QueueUrl"]

    def cycle():
        client.send_message_batch(QueueUrl=queue_url, Entries=[
            {"Id": str(i), "MessageBody": body} for i in range(10)])
        got = client.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get(
            "Messages", [])
        if not got:
            return 0
        done = client.delete_message_batch(QueueUrl=queue_url, Entries=[
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)])
        return len(done.get("Successful", []))
    return cycle


def native_cycle(url, queue, body):
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port)
    headers = {"Authorization": "Bearer " + os.environ["TOKEN"],
               "Content-Type": "application/json"}

    def post(path, payload):
        conn.request("POST", "/v1/queues/" + queue + path, json.dumps(payload), headers)
        response = conn.getresponse()
        data = response.read()
        if response.status // 100 != 2:
            raise RuntimeError(data.decode())
        return json.loads(data)

    def cycle():
        post("/messages", {"messages": [{"body": body} for _ in range(10)]})
        got = post("/receive", {"max_messages": 10})["messages"]
        if not got:
            return 0
        done = post("/delete", {"receipt_handles": [m["receipt_handle"] for m in got]})
        return sum(1 for r in done["results"] if r.get("ok"))
    return cycle


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("path", choices=["sqs", "native"])
    parser.add_argument("url")
    parser.add_argument("--queue", default="bench")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--body-bytes", type=int, default=256)
    args = parser.parse_args()
    body = "x" * args.body_bytes
    make = sqs_cycle if args.path == "sqs" else native_cycle
    cycles = [make(args.url, args.queue, body) for _ in range(args.threads)]
    counts = [0] * args.threads
    stop = time.monotonic() + args.seconds
    cpu = time.process_time()

    def run(i):
        while time.monotonic() < stop:
            counts[i] += cycles[i]()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(args.threads)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    total = sum(counts)
    print(json.dumps({"path": args.path, "client": "boto3" if args.path == "sqs" else "python",
                      "threads": args.threads, "messages": total,
                      "messages_per_s": round(total / elapsed),
                      "client_cpu_ms_per_1k": round(
                          (time.process_time() - cpu) * 1e6 / max(total, 1), 1)}))


main()
