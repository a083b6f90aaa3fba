"""boto3 against tensorfleet's S3 API addressed virtual-hosted style, as most AWS SDKs address
it by default: the bucket in the Host (http://BUCKET.s3.tensorfleet.test:PORT/KEY) instead of
the path. The server runs with --s3-domain s3.tensorfleet.test; this script resolves that domain
and every name under it to the server's address, as a wildcard DNS record would. Exits non-zero
at the first failed check, saying which."""

import os
import socket
import urllib.parse
import urllib.request

from s3check import BUCKET, ENDPOINT, check, client, done, expect_error

DOMAIN = os.environ["S3_DOMAIN"]
server = urllib.parse.urlparse(ENDPOINT)
_resolve = socket.getaddrinfo


def resolve(host, *args, **kwargs):
    if isinstance(host, str) and (host == DOMAIN or host.endswith("." + DOMAIN)):
        host = server.hostname
    return _resolve(host, *args, **kwargs)


socket.getaddrinfo = resolve

virtual = client(endpoint="http://%s:%d" % (DOMAIN, server.port),
                 s3={"addressing_style": "virtual"})
path = client()
b = BUCKET + "-vhost"

seen_hosts = []


def note_host(request, **_):
    seen_hosts.append(urllib.parse.urlparse(request.url).hostname)


virtual.meta.events.register("before-send.s3.*", note_host)

made = virtual.create_bucket(Bucket=b)
check(seen_hosts[-1] == b + "." + DOMAIN, "the bucket travels in the Host: %s" % seen_hosts)
check(made.get("Location") == "/", "the Location is the bucket's host's root: %s" % made)
check(b in [x["Name"] for x in path.list_buckets()["Buckets"]],
      "a path-style client sees the bucket made by the virtual-hosted one")

# Keys that look like the native API's paths are still keys of the bucket.
for key, body in (("v1/queues", b"not the queue API"), ("healthz", b"not a health check"),
                  ("dir/with space+plus.txt", b"odd name")):
    virtual.put_object(Bucket=b, Key=key, Body=body)
    check(virtual.get_object(Bucket=b, Key=key)["Body"].read() == body,
          "%r reads back through the virtual host" % key)
    check(path.get_object(Bucket=b, Key=key)["Body"].read() == body,
          "%r reads back path style" % key)
listed = virtual.list_objects_v2(Bucket=b, Prefix="v1/")
check([o["Key"] for o in listed.get("Contents", [])] == ["v1/queues"],
      "a listing by prefix: %s" % listed.get("Contents"))
check(virtual.head_object(Bucket=b, Key="healthz")["ContentLength"] == len(b"not a health check"),
      "HeadObject")

# A streamed upload in parts, and a presigned URL, both addressed by Host.
part = os.urandom((5 << 20) + 1)
up = virtual.create_multipart_upload(Bucket=b, Key="big.bin")["UploadId"]
etag = virtual.upload_part(Bucket=b, Key="big.bin", UploadId=up, PartNumber=1, Body=part)["ETag"]
finished = virtual.complete_multipart_upload(Bucket=b, Key="big.bin", UploadId=up,
                                             MultipartUpload={
                                                 "Parts": [{"PartNumber": 1, "ETag": etag}]})
check(finished.get("Location") == "/big.bin", "the Location, relative to the bucket's host")
check(path.get_object(Bucket=b, Key="big.bin")["Body"].read() == part, "the multipart object")
link = virtual.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "healthz"},
                                      ExpiresIn=60)
check(urllib.parse.urlparse(link).hostname == b + "." + DOMAIN, "the link names the bucket host")
with urllib.request.urlopen(link) as answer:
    check(answer.read() == b"not a health check", "a presigned GET through the virtual host")

expect_error("NoSuchBucket", 404, virtual.get_object, Bucket=b + "-absent", Key="k")
expect_error("NoSuchKey", 404, virtual.get_object, Bucket=b, Key="absent")

for o in virtual.list_objects_v2(Bucket=b)["Contents"]:
    virtual.delete_object(Bucket=b, Key=o["Key"])
virtual.delete_bucket(Bucket=b)
check(b not in [x["Name"] for x in path.list_buckets()["Buckets"]], "the bucket is gone")
done("boto_virtual_host.py")
