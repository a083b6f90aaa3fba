"""boto3 multipart uploads against tensorfleet's S3 API: create, upload part, list parts,
complete (with S3's ETag), abort, and every way a completion can be wrong; then boto3's own
managed transfers, which split large files into parts and download them in ranges."""

import base64
import hashlib
import os
import tempfile

from boto3.s3.transfer import TransferConfig

from s3check import BUCKET, call_with_headers, check, client, done, expect_error

s3 = client()
bucket = BUCKET + "-multipart"
MiB = 1024 * 1024
s3.create_bucket(Bucket=bucket)


def s3_etag(parts):
    digests = b"".join(hashlib.md5(p).digest() for p in parts)
    return '"%s-%d"' % (hashlib.md5(digests).hexdigest(), len(parts))


def upload(key, parts):
    """Starts an upload of `key` and uploads `parts` (numbered from 1); returns the id and the
    parts' list for CompleteMultipartUpload."""
    up = s3.create_multipart_upload(Bucket=bucket, Key=key, ContentType="application/x-test",
                                    Metadata={"kind": "parts"})["UploadId"]
    done_parts = []
    for i, data in enumerate(parts, start=1):
        r = s3.upload_part(Bucket=bucket, Key=key, UploadId=up, PartNumber=i, Body=data)
        check(r["ETag"] == '"%s"' % hashlib.md5(data).hexdigest(), "a part's ETag is its MD5")
        done_parts.append({"PartNumber": i, "ETag": r["ETag"]})
    return up, done_parts


# The whole path: parts in, one object out, with S3's ETag.
p1, p2, p3 = os.urandom(5 * MiB), os.urandom(5 * MiB + 3), os.urandom(1000)
up, parts = upload("assembled.bin", [p1, p2, p3])
listed = s3.list_parts(Bucket=bucket, Key="assembled.bin", UploadId=up)
check([p["PartNumber"] for p in listed["Parts"]] == [1, 2, 3], "ListParts lists the parts")
check([p["Size"] for p in listed["Parts"]] == [len(p1), len(p2), len(p3)], "with their sizes")
first = s3.list_parts(Bucket=bucket, Key="assembled.bin", UploadId=up, MaxParts=2)
check(first["IsTruncated"] and first["NextPartNumberMarker"] == 2, "ListParts pages")
# max-parts=0 still moves on, so that a client following the marker gets to the end.
marker, pages = 0, 0
while pages < 10:
    page = s3.list_parts(Bucket=bucket, Key="assembled.bin", UploadId=up, MaxParts=0,
                         PartNumberMarker=marker)
    pages += 1
    if not page["IsTruncated"]:
        break
    check(page["NextPartNumberMarker"] > marker, "max-parts=0 advances the marker")
    marker = page["NextPartNumberMarker"]
check(pages == 3, "max-parts=0 lists one part a page: %d pages" % pages)
uploads = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
check([u["UploadId"] for u in uploads] == [up], "ListMultipartUploads names the upload")
# Pages of uploads, and a delimiter.
more = [(key, s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"])
        for key in ["lmu/a", "lmu/a", "lmu/b", "lmu/d/x", "lmu/d/y"]]
paged = [u["UploadId"]
         for page in s3.get_paginator("list_multipart_uploads").paginate(
             Bucket=bucket, Prefix="lmu/", PaginationConfig={"PageSize": 2})
         for u in page.get("Uploads", [])]
check(sorted(paged) == sorted(u for _, u in more) and len(set(paged)) == 5,
      "pages of 2 list each of 5 uploads once: %s" % paged)
grouped = s3.list_multipart_uploads(Bucket=bucket, Prefix="lmu/", Delimiter="/")
check([u["Key"] for u in grouped["Uploads"]] == ["lmu/a", "lmu/a", "lmu/b"] and
      [p["Prefix"] for p in grouped["CommonPrefixes"]] == ["lmu/d/"],
      "a delimiter groups lmu/d/: %s" % grouped)
for key, upload_id in more:
    s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
# encoding-type=url: keys as XML 1.0 cannot carry them come percent-encoded.
odd = s3.create_multipart_upload(Bucket=bucket, Key="lmu/c d\x01")["UploadId"]
encoded = s3.list_multipart_uploads(Bucket=bucket, Prefix="lmu/", EncodingType="url")
check([u["Key"] for u in encoded["Uploads"]] == ["lmu/c%20d%01"] and
      encoded.get("EncodingType") == "url",
      "ListMultipartUploads encodes keys when asked: %s" % encoded.get("Uploads"))
expect_error("InvalidArgument", 400, s3.list_multipart_uploads, Bucket=bucket,
             EncodingType="base64")
s3.abort_multipart_upload(Bucket=bucket, Key="lmu/c d\x01", UploadId=odd)
expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="assembled.bin")
done_resp = s3.complete_multipart_upload(Bucket=bucket, Key="assembled.bin", UploadId=up,
                                         MultipartUpload={"Parts": parts})
check(done_resp["ETag"] == s3_etag([p1, p2, p3]), "the ETag is S3's: %s" % done_resp["ETag"])
got = s3.get_object(Bucket=bucket, Key="assembled.bin")
check(got["Body"].read() == p1 + p2 + p3, "the object is the parts in order")
check(got["ETag"] == done_resp["ETag"], "GetObject shows the same ETag")
check(got["ContentType"] == "application/x-test" and got["Metadata"] == {"kind": "parts"},
      "content type and metadata from CreateMultipartUpload")
expect_error("NoSuchUpload", 404, s3.list_parts, Bucket=bucket, Key="assembled.bin", UploadId=up)
expect_error("NoSuchUpload", 404, s3.complete_multipart_upload, Bucket=bucket,
             Key="assembled.bin", UploadId=up, MultipartUpload={"Parts": parts})

# UploadPartCopy: parts copied from an existing object, by range.
whole = p1 + p2 + p3
up = s3.create_multipart_upload(Bucket=bucket, Key="copied.bin")["UploadId"]
source = {"Bucket": bucket, "Key": "assembled.bin"}
c1 = s3.upload_part_copy(Bucket=bucket, Key="copied.bin", UploadId=up, PartNumber=1,
                         CopySource=source, CopySourceRange="bytes=0-%d" % (5 * MiB - 1))
c2 = s3.upload_part_copy(Bucket=bucket, Key="copied.bin", UploadId=up, PartNumber=2,
                         CopySource=source,
                         CopySourceRange="bytes=%d-%d" % (10 * MiB, 10 * MiB + 99))
check(c1["CopyPartResult"]["ETag"] == '"%s"' % hashlib.md5(whole[:5 * MiB]).hexdigest(),
      "a copied part's ETag is its MD5")
expect_error("InvalidArgument", 400, s3.upload_part_copy, Bucket=bucket, Key="copied.bin",
             UploadId=up, PartNumber=3, CopySource=source, CopySourceRange="bytes=0-99999999")
expect_error("NoSuchKey", 404, s3.upload_part_copy, Bucket=bucket, Key="copied.bin",
             UploadId=up, PartNumber=3, CopySource={"Bucket": bucket, "Key": "missing"})
s3.complete_multipart_upload(Bucket=bucket, Key="copied.bin", UploadId=up, MultipartUpload={
    "Parts": [{"PartNumber": 1, "ETag": c1["CopyPartResult"]["ETag"]},
              {"PartNumber": 2, "ETag": c2["CopyPartResult"]["ETag"]}]})
check(s3.get_object(Bucket=bucket, Key="copied.bin")["Body"].read() ==
      whole[:5 * MiB] + whole[10 * MiB:10 * MiB + 100], "the copied parts, in order")

# The object is kept as its parts: ranges across their boundaries, and copies of it.
b1, b2 = len(p1), len(p1) + len(p2)
for first, last in [(b1 - 1, b1 - 1), (b1, b1), (b1 - 1, b1), (b2 - 1, b2), (b2, b2),
                    (b1 - 100, b2 + 100), (len(whole) - 1, len(whole) - 1), (0, b2 - 1)]:
    got = s3.get_object(Bucket=bucket, Key="assembled.bin",
                        Range="bytes=%d-%d" % (first, last))["Body"].read()
    check(got == whole[first:last + 1], "bytes %d-%d across the parts" % (first, last))
s3.copy_object(Bucket=bucket, Key="assembled-copy.bin", CopySource=source)
check(s3.get_object(Bucket=bucket, Key="assembled-copy.bin")["Body"].read() == whole,
      "CopyObject of a multipart object copies all its parts")

# Part re-uploaded: the last one counts; parts may be skipped.
up, parts = upload("redo.bin", [os.urandom(5 * MiB), b"old tail"])
expect_error("BadDigest", 400, s3.upload_part, Bucket=bucket, Key="redo.bin", UploadId=up,
             PartNumber=2, Body=b"new tail", ChecksumCRC32="AAAAAA==")
r = s3.upload_part(Bucket=bucket, Key="redo.bin", UploadId=up, PartNumber=2, Body=b"new tail",
                   ChecksumAlgorithm="SHA256")
check(r.get("ChecksumSHA256") ==
      base64.b64encode(hashlib.sha256(b"new tail").digest()).decode(),
      "UploadPart answers with the checksum it checked: %s" % r.get("ChecksumSHA256"))
parts[1]["ETag"] = r["ETag"]
s3.complete_multipart_upload(Bucket=bucket, Key="redo.bin", UploadId=up,
                             MultipartUpload={"Parts": parts})
check(s3.get_object(Bucket=bucket, Key="redo.bin", Range="bytes=-8")["Body"].read() ==
      b"new tail", "a re-uploaded part replaces the first")

# Every way a completion can be wrong leaves the upload as it was.
up, parts = upload("wrong.bin", [os.urandom(5 * MiB), b"small", b"last"])
expect_error("InvalidPart", 400, s3.complete_multipart_upload, Bucket=bucket, Key="wrong.bin",
             UploadId=up, MultipartUpload={"Parts": parts + [{"PartNumber": 9, "ETag": '"aa"'}]})
wrong_etag = [dict(parts[0]), dict(parts[1])]
wrong_etag[1]["ETag"] = '"%s"' % hashlib.md5(b"not it").hexdigest()
expect_error("InvalidPart", 400, s3.complete_multipart_upload, Bucket=bucket, Key="wrong.bin",
             UploadId=up, MultipartUpload={"Parts": wrong_etag})
expect_error("InvalidPartOrder", 400, s3.complete_multipart_upload, Bucket=bucket,
             Key="wrong.bin", UploadId=up,
             MultipartUpload={"Parts": [parts[1], parts[0]]})
expect_error("EntityTooSmall", 400, s3.complete_multipart_upload, Bucket=bucket,
             Key="wrong.bin", UploadId=up, MultipartUpload={"Parts": parts})
expect_error("NoSuchUpload", 404, s3.complete_multipart_upload, Bucket=bucket, Key="wrong.bin",
             UploadId="no-such-upload", MultipartUpload={"Parts": parts})
expect_error("NoSuchUpload", 404, s3.upload_part, Bucket=bucket, Key="other.bin", UploadId=up,
             PartNumber=1, Body=b"x")
expect_error("InvalidArgument", 400, s3.upload_part, Bucket=bucket, Key="wrong.bin",
             UploadId=up, PartNumber=10001, Body=b"x")
expect_error("404", 404, s3.head_object, Bucket=bucket, Key="wrong.bin")
ok = s3.complete_multipart_upload(Bucket=bucket, Key="wrong.bin", UploadId=up,
                                  MultipartUpload={"Parts": [parts[0], parts[2]]})
check(ok["ETag"].endswith('-2"'), "completing with parts 1 and 3 works after the failures")

# Abort: the upload is gone, and so is every part.
up, parts = upload("aborted.bin", [b"one", b"two"])
s3.abort_multipart_upload(Bucket=bucket, Key="aborted.bin", UploadId=up)
expect_error("NoSuchUpload", 404, s3.list_parts, Bucket=bucket, Key="aborted.bin", UploadId=up)
expect_error("NoSuchUpload", 404, s3.abort_multipart_upload, Bucket=bucket, Key="aborted.bin",
             UploadId=up)
expect_error("NoSuchUpload", 404, s3.upload_part, Bucket=bucket, Key="aborted.bin",
             UploadId=up, PartNumber=3, Body=b"late")
expect_error("NoSuchBucket", 404, s3.create_multipart_upload, Bucket=BUCKET + "-missing",
             Key="x")
expect_error("MalformedXML", 400, s3.complete_multipart_upload, Bucket=bucket, Key="x",
             UploadId="u", MultipartUpload={"Parts": []})

# A bucket with an upload in progress is not deleted from under it.
up, _ = upload("pending.bin", [b"p"])
expect_error("BucketNotEmpty", 409, s3.delete_bucket, Bucket=bucket)
s3.abort_multipart_upload(Bucket=bucket, Key="pending.bin", UploadId=up)

# Conditional completion (If-None-Match: *, If-Match), checked when the object commits: a
# failed one leaves the upload as it was, to be completed another way.
def complete_with(headers, **kwargs):
    return call_with_headers("complete_multipart_upload", headers, **kwargs)


existing = s3.put_object(Bucket=bucket, Key="guarded.bin", Body=b"already here")["ETag"]
up, parts = upload("guarded.bin", [b"new content"])
expect_error("PreconditionFailed", 412, complete_with, {"If-None-Match": "*"}, Bucket=bucket,
             Key="guarded.bin", UploadId=up, MultipartUpload={"Parts": parts})
check(s3.get_object(Bucket=bucket, Key="guarded.bin")["Body"].read() == b"already here",
      "a failed conditional completion leaves the object as it was")
expect_error("PreconditionFailed", 412, complete_with, {"If-Match": '"0123"'}, Bucket=bucket,
             Key="guarded.bin", UploadId=up, MultipartUpload={"Parts": parts})
check([p["PartNumber"] for p in s3.list_parts(Bucket=bucket, Key="guarded.bin",
                                              UploadId=up)["Parts"]] == [1],
      "and the upload with its parts")
complete_with({"If-Match": existing}, Bucket=bucket, Key="guarded.bin", UploadId=up,
              MultipartUpload={"Parts": parts})
check(s3.get_object(Bucket=bucket, Key="guarded.bin")["Body"].read() == b"new content",
      "a completion whose If-Match holds replaces the object")
up, parts = upload("guarded-new.bin", [b"x"])
complete_with({"If-None-Match": "*"}, Bucket=bucket, Key="guarded-new.bin", UploadId=up,
              MultipartUpload={"Parts": parts})
up, parts = upload("guarded-missing.bin", [b"x"])
expect_error("NoSuchKey", 404, complete_with, {"If-Match": existing}, Bucket=bucket,
             Key="guarded-missing.bin", UploadId=up, MultipartUpload={"Parts": parts})
s3.abort_multipart_upload(Bucket=bucket, Key="guarded-missing.bin", UploadId=up)

# boto3's managed transfers: multipart upload in parallel parts, ranged parallel download.
config = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB,
                        max_concurrency=4)
with tempfile.TemporaryDirectory() as tmp:
    src, dst = os.path.join(tmp, "src.bin"), os.path.join(tmp, "dst.bin")
    data = os.urandom(17 * MiB + 5)
    with open(src, "wb") as f:
        f.write(data)
    s3.upload_file(src, bucket, "managed.bin", Config=config)
    head = s3.head_object(Bucket=bucket, Key="managed.bin")
    check(head["ContentLength"] == len(data) and head["ETag"].endswith('-4"'),
          "upload_file made a 4-part object: %s" % head["ETag"])
    s3.download_file(bucket, "managed.bin", dst, Config=config)
    with open(dst, "rb") as f:
        check(f.read() == data, "download_file (ranged, in parallel) returns the same bytes")
    # A managed copy of a large object is a multipart upload of UploadPartCopy parts.
    s3.copy({"Bucket": bucket, "Key": "managed.bin"}, bucket, "managed-copy.bin", Config=config)
    copy_head = s3.head_object(Bucket=bucket, Key="managed-copy.bin")
    check(copy_head["ETag"] == head["ETag"], "a managed copy has the same parts: %s" %
          copy_head["ETag"])
    s3.download_file(bucket, "managed-copy.bin", dst, Config=config)
    with open(dst, "rb") as f:
        check(f.read() == data, "the managed copy has the same bytes")

for key in ["assembled.bin", "redo.bin", "wrong.bin", "managed.bin", "copied.bin",
            "managed-copy.bin", "assembled-copy.bin", "guarded.bin", "guarded-new.bin"]:
    s3.delete_object(Bucket=bucket, Key=key)
s3.delete_bucket(Bucket=bucket)
done("boto_multipart")
