"""The largest copy on the server, with boto3, against a server started with a small
--max-copy-size (its bytes in S3_MAX_COPY_BYTES). A CopyObject or UploadPartCopy of more is
refused as S3 refuses a source over 5 GiB, InvalidRequest naming the limit, and makes nothing;
exactly the limit is copied; and boto3's managed copy, which copies a large object as a multipart
upload of part copies, copies an object over the limit whole. Run by tests/s3_clients_test.cc."""

import os

from boto3.s3.transfer import TransferConfig

from s3check import BUCKET, check, client, done, expect_error

LIMIT = int(os.environ["S3_MAX_COPY_BYTES"])
MiB = 1024 * 1024

s3 = client()
b = BUCKET + "-copy-limit"
s3.create_bucket(Bucket=b)
big = os.urandom(LIMIT + MiB + 3)
s3.put_object(Bucket=b, Key="big.bin", Body=big)
s3.put_object(Bucket=b, Key="at-limit.bin", Body=big[:LIMIT])


def keys():
    return [o["Key"] for o in s3.list_objects_v2(Bucket=b).get("Contents", [])]


def body(key):
    return s3.get_object(Bucket=b, Key=key)["Body"].read()


# CopyObject: over the limit, refused before anything is written; at it, copied.
refused = expect_error("InvalidRequest", 400, s3.copy_object, Bucket=b, Key="copy.bin",
                       CopySource={"Bucket": b, "Key": "big.bin"})
message = refused["Error"]["Message"]
check("maximum allowable size for a copy source: %d" % LIMIT in message,
      "the refusal names the limit: %s" % message)
expect_error("InvalidRequest", 400, s3.copy_object, Bucket=b, Key="big.bin",
             CopySource={"Bucket": b, "Key": "big.bin"}, MetadataDirective="REPLACE",
             Metadata={"a": "b"})
check(keys() == ["at-limit.bin", "big.bin"], "a refused copy makes nothing: %s" % keys())
check(body("big.bin") == big, "nor touches the source")
s3.copy_object(Bucket=b, Key="copy-at-limit.bin", CopySource={"Bucket": b, "Key": "at-limit.bin"})
check(body("copy-at-limit.bin") == big[:LIMIT], "a copy of exactly the limit is made")

# UploadPartCopy: the same limit on what one part copies, whole source or range.
up = s3.create_multipart_upload(Bucket=b, Key="parts.bin")["UploadId"]
expect_error("InvalidRequest", 400, s3.upload_part_copy, Bucket=b, Key="parts.bin", UploadId=up,
             PartNumber=1, CopySource={"Bucket": b, "Key": "big.bin"})
expect_error("InvalidRequest", 400, s3.upload_part_copy, Bucket=b, Key="parts.bin", UploadId=up,
             PartNumber=1, CopySource={"Bucket": b, "Key": "big.bin"},
             CopySourceRange="bytes=0-%d" % LIMIT)
check("Parts" not in s3.list_parts(Bucket=b, Key="parts.bin", UploadId=up),
      "a refused part copy makes no part")
first = s3.upload_part_copy(Bucket=b, Key="parts.bin", UploadId=up, PartNumber=1,
                            CopySource={"Bucket": b, "Key": "big.bin"},
                            CopySourceRange="bytes=0-%d" % (LIMIT - 1))
second = s3.upload_part_copy(Bucket=b, Key="parts.bin", UploadId=up, PartNumber=2,
                             CopySource={"Bucket": b, "Key": "big.bin"},
                             CopySourceRange="bytes=%d-%d" % (LIMIT, len(big) - 1))
s3.complete_multipart_upload(Bucket=b, Key="parts.bin", UploadId=up, MultipartUpload={"Parts": [
    {"PartNumber": 1, "ETag": first["CopyPartResult"]["ETag"]},
    {"PartNumber": 2, "ETag": second["CopyPartResult"]["ETag"]}]})
check(body("parts.bin") == big, "parts copied up to the limit each make the whole object")

# boto3's managed copy goes in part copies above its threshold: any size is copied.
config = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
s3.copy({"Bucket": b, "Key": "big.bin"}, b, "managed.bin", Config=config)
check(body("managed.bin") == big, "a managed copy of an object over the limit")

for key in keys():
    s3.delete_object(Bucket=b, Key=key)
s3.delete_bucket(Bucket=b)
done("boto_copy_limit.py")
