"""boto3 against tensorfleet's S3 API: buckets, objects, ranges, copies, listings, batch deletes,
and keys that look like paths. Exits non-zero at the first failed check, saying which."""

import base64
import datetime
import hashlib
import os
import sqlite3
import urllib.request
import zlib

from s3check import BUCKET, call_with_headers, call_with_query, check, client, done, expect_error

s3 = client()
b1, b2 = BUCKET + "-objects", BUCKET + "-listing"


def body(resp):
    return resp["Body"].read()


# Buckets.
s3.create_bucket(Bucket=b1)
s3.create_bucket(Bucket=b2, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
s3.head_bucket(Bucket=b1)
names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
check(b1 in names and b2 in names, "list_buckets names both buckets: %s" % names)
expect_error("BucketAlreadyOwnedByYou", 409, s3.create_bucket, Bucket=b1)
expect_error("InvalidBucketName", 400, s3.create_bucket, Bucket="Bad_Name")
expect_error("404", 404, s3.head_bucket, Bucket=BUCKET + "-missing")
expect_error("NoSuchBucket", 404, s3.delete_bucket, Bucket=BUCKET + "-missing")
check(s3.get_bucket_location(Bucket=b1).get("LocationConstraint") is None,
      "the location is us-east-1 (empty)")

# Objects: put, get, head, with content type and metadata.
hello = b"hello world"
put = s3.put_object(Bucket=b1, Key="hello.txt", Body=hello, ContentType="text/plain",
                    Metadata={"owner": "alice"})
check(put["ETag"] == '"%s"' % hashlib.md5(hello).hexdigest(), "PutObject's ETag is the MD5")
got = s3.get_object(Bucket=b1, Key="hello.txt")
check(body(got) == hello, "GetObject returns the content")
check(got["ContentType"] == "text/plain", "content type kept: %s" % got["ContentType"])
check(got["Metadata"] == {"owner": "alice"}, "metadata kept: %s" % got["Metadata"])
head = s3.head_object(Bucket=b1, Key="hello.txt")
check(head["ContentLength"] == len(hello) and head["ETag"] == put["ETag"], "HeadObject")
expect_error("NoSuchKey", 404, s3.get_object, Bucket=b1, Key="missing.txt")
expect_error("NoSuchBucket", 404, s3.get_object, Bucket=BUCKET + "-missing", Key="x")
expect_error("404", 404, s3.head_object, Bucket=b1, Key="missing.txt")

big = os.urandom(3 * 1024 * 1024 + 17)  # streamed: more than one block
s3.put_object(Bucket=b1, Key="big.bin", Body=big)
check(body(s3.get_object(Bucket=b1, Key="big.bin")) == big, "a 3 MiB object round-trips")
# A download given up half way (a cancelled transfer, `curl | head -c`) ends only that
# connection: the server goes on serving.
for _ in range(4):
    abandoned = s3.get_object(Bucket=b1, Key="big.bin")
    check(abandoned["Body"].read(10) == big[:10], "the first bytes of an abandoned download")
    abandoned["Body"].close()
s3.head_bucket(Bucket=b1)
check(body(s3.get_object(Bucket=b1, Key="big.bin")) == big, "served whole after abandoned ones")
s3.put_object(Bucket=b1, Key="empty", Body=b"")
check(s3.head_object(Bucket=b1, Key="empty")["ContentType"] == "binary/octet-stream",
      "content put without a type has S3's default type")
check(body(s3.get_object(Bucket=b1, Key="empty")) == b"", "an empty object round-trips")
s3.put_object(Bucket=b1, Key="hello.txt", Body=b"replaced")
check(body(s3.get_object(Bucket=b1, Key="hello.txt")) == b"replaced", "a put replaces")
s3.put_object(Bucket=b1, Key="hello.txt", Body=hello, Metadata={"owner": "alice"})

bad_md5 = base64.b64encode(hashlib.md5(b"something else").digest()).decode()
expect_error("BadDigest", 400, s3.put_object, Bucket=b1, Key="digest", Body=b"abc",
             ContentMD5=bad_md5)
expect_error("NoSuchKey", 404, s3.get_object, Bucket=b1, Key="digest")


def empty_md5(request, **_):
    """Sends an empty Content-MD5 header: present, but naming no digest."""
    del request.headers["Content-MD5"]
    request.headers["Content-MD5"] = ""


empty_digest = client()
empty_digest.meta.events.register("before-sign.s3.PutObject", empty_md5)
expect_error("InvalidDigest", 400, empty_digest.put_object, Bucket=b1, Key="digest", Body=b"abc")
expect_error("NoSuchKey", 404, s3.get_object, Bucket=b1, Key="digest")

# Ranges, including past the end.
part = s3.get_object(Bucket=b1, Key="hello.txt", Range="bytes=0-4")
check(body(part) == b"hello" and part["ContentRange"] == "bytes 0-4/11", "a range")
check(part["ResponseMetadata"]["HTTPStatusCode"] == 206, "a range is 206")
check(body(s3.get_object(Bucket=b1, Key="hello.txt", Range="bytes=-5")) == b"world", "a suffix")
check(body(s3.get_object(Bucket=b1, Key="hello.txt", Range="bytes=6-100")) == b"world",
      "a range running past the end is cut at the end")
check(body(s3.get_object(Bucket=b1, Key="big.bin", Range="bytes=1048570-2097160")) ==
      big[1048570:2097161], "a range across blocks")
expect_error("InvalidRange", 416, s3.get_object, Bucket=b1, Key="hello.txt", Range="bytes=11-")
expect_error("InvalidRange", 416, s3.get_object, Bucket=b1, Key="hello.txt",
             Range="bytes=100-200")
expect_error("InvalidRange", 416, s3.get_object, Bucket=b1, Key="empty", Range="bytes=0-0")

# Conditional reads.
etag = put["ETag"]
expect_error("304", 304, s3.get_object, Bucket=b1, Key="hello.txt", IfNoneMatch=etag)
expect_error("PreconditionFailed", 412, s3.get_object, Bucket=b1, Key="hello.txt",
             IfMatch='"0123"')
check(body(s3.get_object(Bucket=b1, Key="hello.txt", IfMatch=etag)) == hello, "If-Match holds")
day = datetime.timedelta(days=1)
now = datetime.datetime.now(datetime.timezone.utc)
expect_error("304", 304, s3.get_object, Bucket=b1, Key="hello.txt", IfModifiedSince=now + day)
expect_error("304", 304, s3.head_object, Bucket=b1, Key="hello.txt", IfModifiedSince=now + day)
check(body(s3.get_object(Bucket=b1, Key="hello.txt", IfModifiedSince=now - day)) == hello,
      "If-Modified-Since a day ago: modified since")
expect_error("PreconditionFailed", 412, s3.get_object, Bucket=b1, Key="hello.txt",
             IfUnmodifiedSince=now - day)
check(body(s3.get_object(Bucket=b1, Key="hello.txt", IfUnmodifiedSince=now + day)) == hello,
      "If-Unmodified-Since tomorrow holds")
# As RFC 9110 and S3 order them: If-Match that holds outweighs If-Unmodified-Since, and
# If-None-Match that holds outweighs If-Modified-Since.
check(body(s3.get_object(Bucket=b1, Key="hello.txt", IfMatch=etag,
                         IfUnmodifiedSince=now - day)) == hello, "If-Match decides first")
check(body(s3.get_object(Bucket=b1, Key="hello.txt", IfNoneMatch='"0123"',
                         IfModifiedSince=now + day)) == hello, "If-None-Match decides first")

# Metadata names are HTTP header names: dots and the like are fine.
s3.put_object(Bucket=b1, Key="dotted", Body=b"x", Metadata={"my.key": "v", "a+b~c": "w"})
check(s3.head_object(Bucket=b1, Key="dotted")["Metadata"] == {"my.key": "v", "a+b~c": "w"},
      "metadata names with dots round-trip")
# response-* parameters set the answer's headers (a download link's file name, say).
got = s3.get_object(Bucket=b1, Key="dotted", ResponseContentType="text/csv",
                    ResponseContentDisposition='attachment; filename="x.csv"',
                    ResponseCacheControl="no-cache")
check(got["ContentType"] == "text/csv" and
      got["ContentDisposition"] == 'attachment; filename="x.csv"' and
      got["CacheControl"] == "no-cache", "response-* overrides: %s" % got["ResponseMetadata"])
link = s3.generate_presigned_url("get_object", Params={
    "Bucket": b1, "Key": "dotted", "ResponseContentDisposition": 'attachment; filename="y.bin"'})
with urllib.request.urlopen(link) as answer:
    check(answer.headers["Content-Disposition"] == 'attachment; filename="y.bin"',
          "a presigned link names the file: %s" % answer.headers)
s3.delete_object(Bucket=b1, Key="dotted")

# Additional checksums (x-amz-checksum-*): checked, and answered with.
for algorithm in ("CRC32", "CRC32C", "SHA1", "SHA256"):
    r = s3.put_object(Bucket=b1, Key="summed", Body=hello, ChecksumAlgorithm=algorithm)
    check(r.get("Checksum" + algorithm), "PutObject answers with its %s" % algorithm)
expected = {"CRC32": zlib.crc32(hello).to_bytes(4, "big"), "SHA1": hashlib.sha1(hello).digest(),
            "SHA256": hashlib.sha256(hello).digest()}
for algorithm, digest in expected.items():
    r = s3.put_object(Bucket=b1, Key="summed", Body=hello,
                      **{"Checksum" + algorithm: base64.b64encode(digest).decode()})
    check(r.get("Checksum" + algorithm) == base64.b64encode(digest).decode(),
          "a %s the client computed holds" % algorithm)
    wrong = bytes(len(digest))
    expect_error("BadDigest", 400, s3.put_object, Bucket=b1, Key="summed-wrong", Body=hello,
                 **{"Checksum" + algorithm: base64.b64encode(wrong).decode()})
expect_error("404", 404, s3.head_object, Bucket=b1, Key="summed-wrong")  # nothing was stored
expect_error("InvalidRequest", 400, s3.put_object, Bucket=b1, Key="summed-wrong", Body=hello,
             ChecksumCRC32="not base64!")
s3.delete_object(Bucket=b1, Key="summed")

# Conditional writes (If-None-Match: *, If-Match), sent as headers: this boto3 predates the
# parameters.
def put_with(headers, **kwargs):
    return call_with_headers("put_object", headers, **kwargs)


put_with({"If-None-Match": "*"}, Bucket=b1, Key="create-only", Body=b"first")
expect_error("PreconditionFailed", 412, put_with, {"If-None-Match": "*"}, Bucket=b1,
             Key="create-only", Body=b"second")
check(body(s3.get_object(Bucket=b1, Key="create-only")) == b"first",
      "a refused create-only put changes nothing")
first_etag = s3.head_object(Bucket=b1, Key="create-only")["ETag"]
expect_error("PreconditionFailed", 412, put_with, {"If-Match": '"0123"'}, Bucket=b1,
             Key="create-only", Body=b"second")
put_with({"If-Match": first_etag}, Bucket=b1, Key="create-only", Body=b"second")
check(body(s3.get_object(Bucket=b1, Key="create-only")) == b"second", "If-Match that holds")
expect_error("NoSuchKey", 404, put_with, {"If-Match": first_etag}, Bucket=b1, Key="no-such",
             Body=b"x")
expect_error("NotImplemented", 501, put_with, {"If-None-Match": first_etag}, Bucket=b1,
             Key="create-only", Body=b"x")
s3.delete_object(Bucket=b1, Key="create-only")

# A PUT whose query holds a parameter this server does not know still stores its whole body
# (newer SDKs add some, such as x-id).
call_with_query("put_object", "x-id=PutObject&unknown=1", Bucket=b1, Key="odd-query",
                Body=b"the whole body")
check(body(s3.get_object(Bucket=b1, Key="odd-query")) == b"the whole body", "kept whole")
s3.delete_object(Bucket=b1, Key="odd-query")

# Conditional deletes (If-Match: ETAG or *; an ETag element in DeleteObjects), checked in the
# delete's transaction: one that fails deletes nothing.
s3.put_object(Bucket=b1, Key="guarded", Body=b"guarded")
guarded_etag = s3.head_object(Bucket=b1, Key="guarded")["ETag"]
expect_error("PreconditionFailed", 412, call_with_headers, "delete_object", {"If-Match": '"0123"'},
             Bucket=b1, Key="guarded")
check(body(s3.get_object(Bucket=b1, Key="guarded")) == b"guarded", "a refused delete kept it")
call_with_headers("delete_object", {"If-Match": guarded_etag}, Bucket=b1, Key="guarded")
expect_error("NoSuchKey", 404, s3.get_object, Bucket=b1, Key="guarded")
expect_error("NoSuchKey", 404, call_with_headers, "delete_object", {"If-Match": "*"}, Bucket=b1,
             Key="guarded")
expect_error("NotImplemented", 501, call_with_headers, "delete_object", {"If-None-Match": "*"},
             Bucket=b1, Key="guarded")
for unchecked in ({"x-amz-if-match-size": "7"},
                  {"x-amz-if-match-last-modified-time": "Wed, 01 Dec 2026 10:00:00 GMT"}):
    s3.put_object(Bucket=b1, Key="guarded", Body=b"guarded")
    expect_error("NotImplemented", 501, call_with_headers, "delete_object", unchecked, Bucket=b1,
                 Key="guarded")
    check(body(s3.get_object(Bucket=b1, Key="guarded")) == b"guarded",
          "a delete with a condition not checked here deletes nothing: %s" % unchecked)
s3.delete_object(Bucket=b1, Key="guarded")
for k in ("cond-a", "cond-b"):
    s3.put_object(Bucket=b1, Key=k, Body=k.encode())
etags = {"cond-a": '"0123"', "cond-b": s3.head_object(Bucket=b1, Key="cond-b")["ETag"],
         "cond-gone": "*"}


def with_etags(request, **_):
    """Adds each key's ETag element (this boto3 has no parameter for it) before signing."""
    text = request.body.decode()
    for k, e in etags.items():
        text = text.replace("<Key>%s</Key>" % k, "<Key>%s</Key><ETag>%s</ETag>" % (k, e))
    request.data = text.encode()
    del request.headers["Content-MD5"]  # setting a header adds one; the old one must go
    request.headers["Content-MD5"] = base64.b64encode(hashlib.md5(request.data).digest()).decode()


conditional = client()
conditional.meta.events.register("before-sign.s3.DeleteObjects", with_etags)
answer = conditional.delete_objects(Bucket=b1, Delete={"Objects": [{"Key": k} for k in etags]})
errors = {e["Key"]: e["Code"] for e in answer.get("Errors", [])}
check(errors == {"cond-a": "PreconditionFailed", "cond-gone": "NoSuchKey"},
      "each condition is checked: %s" % answer)
check([d["Key"] for d in answer.get("Deleted", [])] == ["cond-b"], "the one that held: %s" % answer)
check(body(s3.get_object(Bucket=b1, Key="cond-a")) == b"cond-a", "cond-a is kept")
s3.delete_object(Bucket=b1, Key="cond-a")

# Keys are names, never paths: they are stored as given and touch no file named by them.
path_like = ["../escape.txt", "a/../../b", "/etc/passwd", "dir//double//", "./dot",
             "unicode-ü-日本語", "sp ace+plus%percent&amp?q=1#frag", "..", "~/home"]
for i, key in enumerate(path_like):
    s3.put_object(Bucket=b1, Key=key, Body=b"content %d" % i)
for i, key in enumerate(path_like):
    check(body(s3.get_object(Bucket=b1, Key=key)) == b"content %d" % i,
          "key %r round-trips" % key)
listed = set()
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=b1):
    listed.update(o["Key"] for o in page.get("Contents", []))
check(set(path_like) <= listed, "every path-like key is listed as given: %s" % sorted(listed))
data_dir = os.environ.get("S3_DATA_DIR")
if data_dir:
    parent = os.path.dirname(os.path.abspath(data_dir))
    check(not os.path.exists(os.path.join(parent, "escape.txt")), "nothing escaped the data dir")
    for root, dirs, files in os.walk(data_dir):
        for f in files:
            check(f not in ("passwd", "escape.txt", "double", "dot"),
                  "a key became a file name: %s" % os.path.join(root, f))
expect_error("InvalidArgument", 400, s3.put_object, Bucket=b1, Key="nul\x00byte", Body=b"x")
expect_error("KeyTooLongError", 400, s3.put_object, Bucket=b1, Key="k" * 1025, Body=b"x")
s3.put_object(Bucket=b1, Key="k" * 1024, Body=b"longest")
check(body(s3.get_object(Bucket=b1, Key="k" * 1024)) == b"longest", "a 1024-byte key")

# Copies.
copied = s3.copy_object(Bucket=b2, Key="copy.txt", CopySource={"Bucket": b1, "Key": "hello.txt"})
check(copied["CopyObjectResult"]["ETag"] == etag, "a copy has the source's ETag")
check(body(s3.get_object(Bucket=b2, Key="copy.txt")) == hello, "a copy has the content")
check(s3.head_object(Bucket=b2, Key="copy.txt")["Metadata"] == {"owner": "alice"},
      "a copy keeps the metadata")
s3.copy_object(Bucket=b2, Key="copy.txt", CopySource={"Bucket": b2, "Key": "copy.txt"},
               MetadataDirective="REPLACE", Metadata={"owner": "bob"}, ContentType="text/x")
h = s3.head_object(Bucket=b2, Key="copy.txt")
check(h["Metadata"] == {"owner": "bob"} and h["ContentType"] == "text/x", "REPLACE replaces")
expect_error("InvalidRequest", 400, s3.copy_object, Bucket=b2, Key="copy.txt",
             CopySource={"Bucket": b2, "Key": "copy.txt"})
source = {"Bucket": b1, "Key": "hello.txt"}
for condition in ({"CopySourceIfMatch": '"0123"'}, {"CopySourceIfNoneMatch": etag},
                  {"CopySourceIfModifiedSince": now + day},
                  {"CopySourceIfUnmodifiedSince": now - day}):
    expect_error("PreconditionFailed", 412, s3.copy_object, Bucket=b2, Key="c3",
                 CopySource=source, **condition)
expect_error("404", 404, s3.head_object, Bucket=b2, Key="c3")  # HEAD: no body, no code
s3.copy_object(Bucket=b2, Key="c3", CopySource=source, CopySourceIfMatch=etag,
               CopySourceIfUnmodifiedSince=now + day)
check(body(s3.get_object(Bucket=b2, Key="c3")) == hello, "a copy whose conditions hold")
# Conditions on the destination, as on a PUT: committed only if they hold.
s3.put_object(Bucket=b2, Key="c3", Body=b"kept")
kept_etag = s3.head_object(Bucket=b2, Key="c3")["ETag"]
expect_error("PreconditionFailed", 412, call_with_headers, "copy_object", {"If-None-Match": "*"},
             Bucket=b2, Key="c3", CopySource=source)
expect_error("PreconditionFailed", 412, call_with_headers, "copy_object",
             {"If-Match": '"0123"'}, Bucket=b2, Key="c3", CopySource=source)
check(body(s3.get_object(Bucket=b2, Key="c3")) == b"kept", "a failed condition copies nothing")
call_with_headers("copy_object", {"If-Match": kept_etag}, Bucket=b2, Key="c3", CopySource=source)
check(body(s3.get_object(Bucket=b2, Key="c3")) == hello, "If-Match of the destination's ETag")
s3.delete_object(Bucket=b2, Key="c3")
expect_error("NoSuchKey", 404, call_with_headers, "copy_object", {"If-Match": kept_etag},
             Bucket=b2, Key="c3", CopySource=source)
call_with_headers("copy_object", {"If-None-Match": "*"}, Bucket=b2, Key="c3", CopySource=source)
check(body(s3.get_object(Bucket=b2, Key="c3")) == hello, "If-None-Match: * onto no object")
s3.delete_object(Bucket=b2, Key="c3")
expect_error("NoSuchKey", 404, s3.copy_object, Bucket=b2, Key="c2",
             CopySource={"Bucket": b1, "Key": "missing"})
if data_dir:
    # A source whose content no longer hashes as recorded (its SHA-256 altered in the store,
    # the SQLite file of this server) is damaged: the copy is refused and makes nothing.
    s3.put_object(Bucket=b2, Key="damaged.txt", Body=b"as recorded")
    db = sqlite3.connect(os.path.join(data_dir, "tensorfleet.db"), timeout=30)
    altered = db.execute("UPDATE objects SET sha256 = ? WHERE key = ?", ("0" * 64, b"damaged.txt"))
    check(altered.rowcount == 1, "the source's record is altered")
    db.commit()
    db.close()
    damaged = expect_error("InternalError", 500, s3.copy_object, Bucket=b2, Key="from-damaged.txt",
                           CopySource={"Bucket": b2, "Key": "damaged.txt"})
    check("damaged" in damaged["Error"]["Message"], "says so: %s" % damaged["Error"]["Message"])
    expect_error("404", 404, s3.head_object, Bucket=b2, Key="from-damaged.txt")
    s3.delete_object(Bucket=b2, Key="damaged.txt")
s3.copy_object(Bucket=b2, Key="big-copy.bin", CopySource="%s/big.bin" % b1)
check(body(s3.get_object(Bucket=b2, Key="big-copy.bin")) == big, "a 3 MiB copy")
s3.delete_object(Bucket=b2, Key="big-copy.bin")
s3.delete_object(Bucket=b2, Key="copy.txt")

# Listings: prefix, delimiter, pagination, V1 and V2.
keys = ["photos/2023/a.jpg", "photos/2023/b.jpg", "photos/2024/c.jpg", "photos/readme",
        "top.txt", "videos/v.mp4", "z last"]
for k in keys:
    s3.put_object(Bucket=b2, Key=k, Body=k.encode())
tree = s3.list_objects_v2(Bucket=b2, Prefix="photos/", Delimiter="/")
check([p["Prefix"] for p in tree["CommonPrefixes"]] == ["photos/2023/", "photos/2024/"],
      "common prefixes: %s" % tree.get("CommonPrefixes"))
check([o["Key"] for o in tree["Contents"]] == ["photos/readme"], "keys beside them")
check(tree["KeyCount"] == 3 and not tree["IsTruncated"], "KeyCount counts both")
pages = list(s3.get_paginator("list_objects_v2").paginate(Bucket=b2,
                                                           PaginationConfig={"PageSize": 2}))
check(len(pages) == 4, "7 keys in pages of 2 are 4 pages, not %d" % len(pages))
check([o["Key"] for p in pages for o in p.get("Contents", [])] == keys, "V2 pages in order")
top = s3.list_objects_v2(Bucket=b2, Delimiter="/")
check([p["Prefix"] for p in top["CommonPrefixes"]] == ["photos/", "videos/"] and
      [o["Key"] for o in top["Contents"]] == ["top.txt", "z last"], "the top level")
after = s3.list_objects_v2(Bucket=b2, StartAfter="photos/readme")
check([o["Key"] for o in after["Contents"]] == keys[4:], "StartAfter")
none = s3.list_objects_v2(Bucket=b2, MaxKeys=0)
check(none["KeyCount"] == 0 and "Contents" not in none, "MaxKeys=0 lists nothing")
v1 = list(s3.get_paginator("list_objects").paginate(Bucket=b2, PaginationConfig={"PageSize": 3}))
check([o["Key"] for p in v1 for o in p.get("Contents", [])] == keys, "V1 pages in order")
grouped = list(s3.get_paginator("list_objects_v2").paginate(
    Bucket=b2, Delimiter="/", Prefix="photos/", PaginationConfig={"PageSize": 1}))
check([x["Prefix"] for p in grouped for x in p.get("CommonPrefixes", [])] ==
      ["photos/2023/", "photos/2024/"], "common prefixes are listed once across pages")
expect_error("NoSuchBucket", 404, s3.list_objects_v2, Bucket=BUCKET + "-missing")
expect_error("InvalidArgument", 400, s3.list_objects_v2, Bucket=b2, ContinuationToken="zz")

# DeleteObjects with mixed results, and the bucket only deleted once empty.
expect_error("BucketNotEmpty", 409, s3.delete_bucket, Bucket=b2)
result = s3.delete_objects(Bucket=b2, Delete={"Objects": [
    {"Key": "top.txt"}, {"Key": "never-was"}, {"Key": "k" * 1025}]})
check(sorted(d["Key"] for d in result.get("Deleted", [])) == ["never-was", "top.txt"],
      "deleted: %s" % result.get("Deleted"))
errors = result.get("Errors", [])
check(len(errors) == 1 and errors[0]["Code"] == "KeyTooLongError", "errors: %s" % errors)
quiet = s3.delete_objects(Bucket=b2, Delete={"Quiet": True, "Objects": [{"Key": k} for k in keys]})
check("Deleted" not in quiet and "Errors" not in quiet, "a quiet delete lists nothing")
check(s3.list_objects_v2(Bucket=b2)["KeyCount"] == 0, "the bucket is empty")
# A request body over the server's 8 MiB limit is refused in S3's form before it is read.
too_big = expect_error("MaxMessageLengthExceeded", 400, s3.delete_objects, Bucket=b2,
                       Delete={"Objects": [{"Key": "%04d" % i + "k" * 1000} for i in range(9000)]})
check(too_big["ResponseMetadata"]["HTTPHeaders"].get("x-amz-request-id"),
      "the refusal has a request id")
s3.delete_object(Bucket=b2, Key="already-gone")  # deleting nothing succeeds
s3.delete_bucket(Bucket=b2)
expect_error("404", 404, s3.head_bucket, Bucket=b2)
expect_error("NoSuchBucket", 404, s3.delete_objects, Bucket=b2,
             Delete={"Objects": [{"Key": "x"}]})

# What this server does not do is said plainly.
expect_error("NotImplemented", 501, s3.put_bucket_versioning, Bucket=b1,
             VersioningConfiguration={"Status": "Enabled"})
check(s3.get_object_tagging(Bucket=b1, Key="hello.txt")["TagSet"] == [], "objects have no tags")
expect_error("NotImplemented", 501, s3.put_object_tagging, Bucket=b1, Key="hello.txt",
             Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})

for page in s3.get_paginator("list_objects_v2").paginate(Bucket=b1):
    for o in page.get("Contents", []):
        s3.delete_object(Bucket=b1, Key=o["Key"])
s3.delete_bucket(Bucket=b1)
done("boto_objects")
