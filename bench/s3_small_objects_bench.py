"""4 KiB PUTs and GETs per second through the S3 API with boto3 (bench/run_s3_bench.sh): COUNT
objects put, then got back, by THREADS threads sharing one client. Prints one line each.
Needs S3_ENDPOINT, S3_KEY_ID and S3_SECRET, and a bucket "bench".

    s3_small_objects_bench.py COUNT THREADS
"""
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config


def main():
    count, threads = int(sys.argv[1]), int(sys.argv[2])
    s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"], region_name="us-east-1",
                      aws_access_key_id=os.environ["S3_KEY_ID"],
                      aws_secret_access_key=os.environ["S3_SECRET"],
                      config=Config(s3={"addressing_style": "path"},
                                    max_pool_connections=threads))
    body = os.urandom(4096)

    def put(i):
        s3.put_object(Bucket="bench", Key="small/%06d" % i, Body=body)

    def get(i):
        got = s3.get_object(Bucket="bench", Key="small/%06d" % i)["Body"].read()
        if got != body:
            raise RuntimeError("small/%06d came back different" % i)

    for name, op in (("PUT", put), ("GET", get)):
        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(op, range(count)))
        seconds = time.perf_counter() - start
        print("4 KiB %s, boto3, %d threads: %d in %.2f s, %.0f/s"
              % (name, threads, count, seconds, count / seconds), flush=True)


if __name__ == "__main__":
    main()
