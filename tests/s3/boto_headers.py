"""boto3 against tensorfleet's S3 API: what an object keeps beside its content. The
representation headers it was put with (Cache-Control, Content-Disposition, Content-Encoding,
Content-Language, Expires) come back on GET and HEAD, through copies and multipart uploads; the
checksum a client sent comes back when asked for (ChecksumMode=ENABLED), and boto3 checks it; a
multipart upload's is COMPOSITE (of the parts' checksums) or FULL_OBJECT (the whole content's
CRC, combined from the parts').
Exits non-zero at the first failed check, saying which."""

import base64
import datetime
import gzip
import hashlib
import os
import zlib

from s3check import BUCKET, call_with_headers, check, client, done, expect_error

s3 = client()
b = BUCKET + "-headers"
s3.create_bucket(Bucket=b)

STORED = dict(CacheControl="max-age=3600, public",
              ContentDisposition='attachment; filename="a.txt"',
              ContentEncoding="gzip", ContentLanguage="de-CH",
              Expires=datetime.datetime(2031, 5, 4, 3, 2, 1, tzinfo=datetime.timezone.utc))
packed = gzip.compress(b"hello, stored headers\n" * 50)


def stored_headers(answer):
    return {name: answer.get(name) for name in STORED}


def headers_of(key):
    head = s3.head_object(Bucket=b, Key=key)
    got = s3.get_object(Bucket=b, Key=key)
    got["Body"].read()
    return stored_headers(head), stored_headers(got)


# Put with every stored header: HEAD and GET both send them back.
s3.put_object(Bucket=b, Key="page.txt.gz", Body=packed, ContentType="text/plain", **STORED)
head, get = headers_of("page.txt.gz")
check(head == STORED, "HeadObject sends the stored headers back: %s" % head)
check(get == STORED, "GetObject sends the stored headers back: %s" % get)
got = s3.get_object(Bucket=b, Key="page.txt.gz")
check(got["Body"].read() == packed, "the content is as put (not decoded by anyone)")

# A response-* override wins over what is stored, and only for that request.
got = s3.get_object(Bucket=b, Key="page.txt.gz", ResponseCacheControl="no-store")
got["Body"].read()
check(got["CacheControl"] == "no-store", "the override is sent: %s" % got.get("CacheControl"))
raw_headers = got["ResponseMetadata"]["HTTPHeaders"]
check(raw_headers.get("cache-control") == "no-store",
      "the override replaces the stored header, not beside it: %s" % raw_headers)
check(s3.head_object(Bucket=b, Key="page.txt.gz")["CacheControl"] == STORED["CacheControl"],
      "the stored header is unchanged")

# A signed header with tabs in its value: boto3 signs each run of spaces and tabs as one space,
# and so does the server.
tabbed = 'attachment;\tfilename="a.txt" \t '
s3.put_object(Bucket=b, Key="tabbed", Body=b"x", ContentDisposition="x" + tabbed + "y")
kept = s3.head_object(Bucket=b, Key="tabbed").get("ContentDisposition", "")
check(kept.split() == ("x" + tabbed + "y").split(), "the header with tabs is kept: %r" % kept)

# A put without them leaves none; a replacing put replaces them.
s3.put_object(Bucket=b, Key="plain", Body=b"x")
head = s3.head_object(Bucket=b, Key="plain")
check(all(head.get(name) is None for name in STORED), "no stored headers: %s" % head)
s3.put_object(Bucket=b, Key="page.txt.gz", Body=packed, CacheControl="no-cache")
head, _ = headers_of("page.txt.gz")
check(head == dict({name: None for name in STORED}, CacheControl="no-cache"),
      "a replacing put replaces the stored headers: %s" % head)
s3.put_object(Bucket=b, Key="page.txt.gz", Body=packed, **STORED)

# Copies: COPY keeps them, REPLACE takes the request's.
s3.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": "page.txt.gz"})
head, get = headers_of("copy")
check(head == STORED and get == STORED, "CopyObject keeps the stored headers: %s" % head)
s3.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": "page.txt.gz"},
               MetadataDirective="REPLACE", ContentLanguage="fr")
head, _ = headers_of("copy")
check(head == dict({name: None for name in STORED}, ContentLanguage="fr"),
      "CopyObject with REPLACE takes the request's headers: %s" % head)

# Multipart: the headers given at the start are the completed object's.
upload = s3.create_multipart_upload(Bucket=b, Key="parts", **STORED)["UploadId"]
part1, part2 = b"a" * (5 << 20), b"tail"
e1 = s3.upload_part(Bucket=b, Key="parts", UploadId=upload, PartNumber=1, Body=part1)["ETag"]
e2 = s3.upload_part(Bucket=b, Key="parts", UploadId=upload, PartNumber=2, Body=part2)["ETag"]
s3.complete_multipart_upload(Bucket=b, Key="parts", UploadId=upload, MultipartUpload={
    "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
head, get = headers_of("parts")
check(head == STORED and get == STORED, "a multipart upload's object keeps them: %s" % head)

# "aws-chunked" is how a request's body was framed, never what the object holds.
def add_encoding(value):
    def handler(request, **kwargs):
        request.headers["Content-Encoding"] = value
    return handler


framed = client()
framed.meta.events.register("before-sign.s3.PutObject", add_encoding("aws-chunked"))
framed.put_object(Bucket=b, Key="framed", Body=b"x")
check(s3.head_object(Bucket=b, Key="framed").get("ContentEncoding") is None,
      "Content-Encoding: aws-chunked alone is not stored")
framed = client()
framed.meta.events.register("before-sign.s3.PutObject", add_encoding("aws-chunked, gzip"))
framed.put_object(Bucket=b, Key="framed", Body=b"x")
check(s3.head_object(Bucket=b, Key="framed").get("ContentEncoding") == "gzip",
      "of 'aws-chunked, gzip' only gzip is stored")

# A value longer than an object keeps is refused, and nothing is stored.
expect_error("InvalidArgument", 400, s3.put_object, Bucket=b, Key="bad", Body=b"x",
             ContentLanguage="de" * 1100)
# UTF-8 in a value is kept as sent; a Latin-1 "é" (one byte, 0xe9, which is not UTF-8) is refused
# with a clear error, and the server goes on.
s3.put_object(Bucket=b, Key="utf8", Body=b"x",
              ContentDisposition='attachment; filename="caf\u00e9.txt"')
raw = s3.head_object(Bucket=b, Key="utf8")["ResponseMetadata"]["HTTPHeaders"]
sent = 'attachment; filename="caf\u00e9.txt"'.encode()
check(raw["content-disposition"].encode("latin-1") == sent,
      "a UTF-8 value is kept as sent: %r" % raw["content-disposition"])


def latin1_disposition(request, **kwargs):
    request.headers["Content-Disposition"] = b'attachment; filename="caf\xe9.txt"'


latin1 = client()
latin1.meta.events.register("before-send.s3.PutObject", latin1_disposition)
latin1.meta.events.register("before-send.s3.CreateMultipartUpload", latin1_disposition)
expect_error("InvalidArgument", 400, latin1.put_object, Bucket=b, Key="bad", Body=b"x")
expect_error("InvalidArgument", 400, latin1.create_multipart_upload, Bucket=b, Key="bad")
expect_error("404", 404, s3.head_object, Bucket=b, Key="bad")
# A response-* override cannot add a header of its own to the answer (a CR LF is refused).
expect_error("InvalidArgument", 400, s3.get_object, Bucket=b, Key="page.txt.gz",
             ResponseCacheControl="no-cache\r\nSet-Cookie: x=1")

# Checksums: kept with the object and sent back when asked for, which boto3 then checks.
hello = b"hello checksums"
expected = {"CRC32": zlib.crc32(hello).to_bytes(4, "big"), "SHA1": hashlib.sha1(hello).digest(),
            "SHA256": hashlib.sha256(hello).digest()}
for algorithm, digest in expected.items():
    key = "summed-" + algorithm.lower()
    s3.put_object(Bucket=b, Key=key, Body=hello, ChecksumAlgorithm=algorithm)
    want = base64.b64encode(digest).decode()
    head = s3.head_object(Bucket=b, Key=key, ChecksumMode="ENABLED")
    check(head.get("Checksum" + algorithm) == want,
          "HeadObject sends the stored %s: %s" % (algorithm, head.get("Checksum" + algorithm)))
    got = s3.get_object(Bucket=b, Key=key, ChecksumMode="ENABLED")
    check(got["Body"].read() == hello and got.get("Checksum" + algorithm) == want,
          "GetObject sends the stored %s, and boto3 found it right" % algorithm)
    plain = s3.head_object(Bucket=b, Key=key)
    check(plain.get("Checksum" + algorithm) is None, "without ChecksumMode no checksum is sent")
    part = s3.get_object(Bucket=b, Key=key, ChecksumMode="ENABLED", Range="bytes=0-3")
    check(part["Body"].read() == hello[:4] and part.get("Checksum" + algorithm) is None,
          "a range gets no whole-object checksum")
check(s3.head_object(Bucket=b, Key="plain", ChecksumMode="ENABLED").get("ChecksumCRC32") is None,
      "an object put without a checksum has none to send")

# A copy keeps the source's checksum, or computes the one it is asked for.
copied = s3.copy_object(Bucket=b, Key="summed-copy",
                        CopySource={"Bucket": b, "Key": "summed-sha256"})
want = base64.b64encode(expected["SHA256"]).decode()
check(copied["CopyObjectResult"].get("ChecksumSHA256") == want,
      "CopyObject answers with the kept checksum: %s" % copied["CopyObjectResult"])
check(s3.head_object(Bucket=b, Key="summed-copy", ChecksumMode="ENABLED").get("ChecksumSHA256")
      == want, "the copy keeps the source's checksum")
copied = s3.copy_object(Bucket=b, Key="summed-copy", ChecksumAlgorithm="CRC32",
                        CopySource={"Bucket": b, "Key": "summed-sha256"})
want = base64.b64encode(expected["CRC32"]).decode()
check(copied["CopyObjectResult"].get("ChecksumCRC32") == want,
      "CopyObject computes the checksum asked for: %s" % copied["CopyObjectResult"])
head = s3.head_object(Bucket=b, Key="summed-copy", ChecksumMode="ENABLED")
check(head.get("ChecksumCRC32") == want and head.get("ChecksumSHA256") is None,
      "the copy keeps only the new checksum: %s" % head)


# A multipart upload with a checksum algorithm: each part's checksum is kept (checked when sent,
# computed when not), and the object gets S3's composite checksum: the checksum of the parts'
# checksums, with "-<parts>" after it.
part1, part2 = os.urandom(5 << 20), b"the tail of the object"
created = s3.create_multipart_upload(Bucket=b, Key="composite", ChecksumAlgorithm="SHA256")
check(created.get("ChecksumAlgorithm") == "SHA256",
      "CreateMultipartUpload names the algorithm: %s" % created.get("ChecksumAlgorithm"))
up = created["UploadId"]
r1 = s3.upload_part(Bucket=b, Key="composite", UploadId=up, PartNumber=1, Body=part1,
                    ChecksumAlgorithm="SHA256")
r2 = s3.upload_part(Bucket=b, Key="composite", UploadId=up, PartNumber=2, Body=part2)
expect_error("InvalidArgument", 400, s3.upload_part, Bucket=b, Key="composite", UploadId=up,
             PartNumber=3, Body=b"x", ChecksumAlgorithm="CRC32")
listed = s3.list_parts(Bucket=b, Key="composite", UploadId=up)["Parts"]
check([p.get("ChecksumSHA256") for p in listed] ==
      [r1["ChecksumSHA256"], base64.b64encode(hashlib.sha256(part2).digest()).decode()],
      "ListParts shows each part's checksum, computed where the part sent none: %s" % listed)
expect_error("InvalidPart", 400, s3.complete_multipart_upload, Bucket=b, Key="composite",
             UploadId=up, MultipartUpload={"Parts": [
                 {"PartNumber": 1, "ETag": r1["ETag"],
                  "ChecksumSHA256": base64.b64encode(bytes(32)).decode()},
                 {"PartNumber": 2, "ETag": r2["ETag"]}]})
finished = s3.complete_multipart_upload(Bucket=b, Key="composite", UploadId=up, MultipartUpload={
    "Parts": [{"PartNumber": 1, "ETag": r1["ETag"], "ChecksumSHA256": r1["ChecksumSHA256"]},
              {"PartNumber": 2, "ETag": r2["ETag"]}]})
want = base64.b64encode(hashlib.sha256(
    hashlib.sha256(part1).digest() + hashlib.sha256(part2).digest()).digest()).decode() + "-2"
check(finished.get("ChecksumSHA256") == want,
      "CompleteMultipartUpload answers with the composite checksum: %s" %
      finished.get("ChecksumSHA256"))
head = s3.head_object(Bucket=b, Key="composite", ChecksumMode="ENABLED")
check(head.get("ChecksumSHA256") == want and
      head["ResponseMetadata"]["HTTPHeaders"].get("x-amz-checksum-type") == "COMPOSITE",
      "HeadObject sends it, as COMPOSITE: %s" % head.get("ChecksumSHA256"))
got = s3.get_object(Bucket=b, Key="composite", ChecksumMode="ENABLED")
check(got["Body"].read() == part1 + part2 and got.get("ChecksumSHA256") == want,
      "GetObject sends it with the content")
# A copy is one piece of content: it gets its own whole-object checksum of that algorithm.
s3.copy_object(Bucket=b, Key="composite-copy", CopySource={"Bucket": b, "Key": "composite"})
check(s3.head_object(Bucket=b, Key="composite-copy", ChecksumMode="ENABLED").get(
      "ChecksumSHA256") == base64.b64encode(hashlib.sha256(part1 + part2).digest()).decode(),
      "a copy of it has the whole content's SHA-256")


# FULL_OBJECT: the object's checksum is the CRC of its whole content, which the server combines
# from the parts' CRCs; a client may claim it at completion, and it is checked before anything is
# made. This boto3 has no ChecksumType parameter: the header is sent as newer SDKs send it.
def crc32_b64(data):
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


full1, full2 = os.urandom((5 << 20) + 17), os.urandom(1000)
created = call_with_headers("create_multipart_upload", {"x-amz-checksum-type": "FULL_OBJECT"},
                            Bucket=b, Key="full", ChecksumAlgorithm="CRC32")
check(created["ResponseMetadata"]["HTTPHeaders"].get("x-amz-checksum-type") == "FULL_OBJECT",
      "CreateMultipartUpload answers with the type: %s" % created["ResponseMetadata"])
up = created["UploadId"]
f1 = s3.upload_part(Bucket=b, Key="full", UploadId=up, PartNumber=1, Body=full1,
                    ChecksumAlgorithm="CRC32")
f2 = s3.upload_part(Bucket=b, Key="full", UploadId=up, PartNumber=2, Body=full2)
check(f1.get("ChecksumCRC32") == crc32_b64(full1), "a part keeps its own CRC32")
check(s3.list_parts(Bucket=b, Key="full", UploadId=up).get("ChecksumAlgorithm") == "CRC32",
      "ListParts names the upload's algorithm")
parts = [{"PartNumber": 1, "ETag": f1["ETag"]}, {"PartNumber": 2, "ETag": f2["ETag"]}]
expect_error("BadDigest", 400, s3.complete_multipart_upload, Bucket=b, Key="full", UploadId=up,
             ChecksumCRC32=crc32_b64(full1), MultipartUpload={"Parts": parts})
expect_error("InvalidRequest", 400, s3.complete_multipart_upload, Bucket=b, Key="full",
             UploadId=up, ChecksumSHA256=base64.b64encode(bytes(32)).decode(),
             MultipartUpload={"Parts": parts})
expect_error("InvalidRequest", 400, s3.complete_multipart_upload, Bucket=b, Key="full",
             UploadId=up, ChecksumCRC32="not base64!", MultipartUpload={"Parts": parts})
whole = crc32_b64(full1 + full2)
finished = s3.complete_multipart_upload(Bucket=b, Key="full", UploadId=up, ChecksumCRC32=whole,
                                        MultipartUpload={"Parts": parts})
check(finished.get("ChecksumCRC32") == whole,
      "CompleteMultipartUpload answers with the CRC32 of the whole content, not a composite: %s"
      % finished.get("ChecksumCRC32"))
head = s3.head_object(Bucket=b, Key="full", ChecksumMode="ENABLED")
check(head.get("ChecksumCRC32") == whole and
      head["ResponseMetadata"]["HTTPHeaders"].get("x-amz-checksum-type") == "FULL_OBJECT",
      "HeadObject sends it, as FULL_OBJECT: %s" % head["ResponseMetadata"]["HTTPHeaders"])
# boto3 checks a whole object's CRC32 against the body it receives.
got = s3.get_object(Bucket=b, Key="full", ChecksumMode="ENABLED")
check(got["Body"].read() == full1 + full2 and got.get("ChecksumCRC32") == whole,
      "GetObject sends the content with its CRC32")
# A copy checks the content against the kept checksum as it goes, and keeps it.
s3.copy_object(Bucket=b, Key="full-copy", CopySource={"Bucket": b, "Key": "full"})
check(s3.head_object(Bucket=b, Key="full-copy", ChecksumMode="ENABLED").get("ChecksumCRC32")
      == whole, "a copy keeps the whole content's CRC32")
# The combinations S3 refuses: a digest cannot be combined, and CRC64NVME is full-object only.
expect_error("InvalidRequest", 400, call_with_headers, "create_multipart_upload",
             {"x-amz-checksum-type": "FULL_OBJECT"}, Bucket=b, Key="k",
             ChecksumAlgorithm="SHA256")
expect_error("InvalidRequest", 400, call_with_headers, "create_multipart_upload",
             {"x-amz-checksum-type": "COMPOSITE", "x-amz-checksum-algorithm": "CRC64NVME"},
             Bucket=b, Key="k")
expect_error("InvalidRequest", 400, call_with_headers, "create_multipart_upload",
             {"x-amz-checksum-type": "WHOLE"}, Bucket=b, Key="k", ChecksumAlgorithm="CRC32")
created = call_with_headers("create_multipart_upload", {"x-amz-checksum-algorithm": "CRC64NVME"},
                            Bucket=b, Key="nvme")
check(created["ResponseMetadata"]["HTTPHeaders"].get("x-amz-checksum-type") == "FULL_OBJECT",
      "CRC64NVME is FULL_OBJECT when no type is named")
s3.abort_multipart_upload(Bucket=b, Key="nvme", UploadId=created["UploadId"])

for o in s3.list_objects_v2(Bucket=b)["Contents"]:
    s3.delete_object(Bucket=b, Key=o["Key"])
s3.delete_bucket(Bucket=b)
done("boto_headers.py")
