"""boto3 against tensorfleet's S3 API: what an object is made of. GetObjectAttributes answers
with the ETag, the kept checksum, the parts of a multipart upload's object (sizes and checksums,
a page at a time), the storage class and the size; a GET or HEAD with partNumber fetches one part,
as S3's multipart downloads do. Exits non-zero at the first failed check, saying which."""

import base64
import hashlib
import os
import zlib

from s3check import BUCKET, call_with_query, check, client, done, expect_error

s3 = client()
b = BUCKET + "-parts"
s3.create_bucket(Bucket=b)
ALL = ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"]


def sha256_b64(data):
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


# A multipart upload of three parts with SHA-256 checksums: parts 1 and 3 make the object, so
# the object's parts are numbered 1 and 2 in content order.
first, unused, last = os.urandom((5 << 20) + 5), os.urandom(5 << 20), b"the last part"
up = s3.create_multipart_upload(Bucket=b, Key="made", ChecksumAlgorithm="SHA256")["UploadId"]
etags = [s3.upload_part(Bucket=b, Key="made", UploadId=up, PartNumber=n, Body=body,
                        ChecksumAlgorithm="SHA256")["ETag"]
         for n, body in ((1, first), (2, unused), (3, last))]
s3.complete_multipart_upload(Bucket=b, Key="made", UploadId=up, MultipartUpload={"Parts": [
    {"PartNumber": 1, "ETag": etags[0]}, {"PartNumber": 3, "ETag": etags[2]}]})
head = s3.head_object(Bucket=b, Key="made")
# GetObjectAttributes shows a composite checksum without the "-<parts>" that HeadObject adds.
composite = base64.b64encode(hashlib.sha256(
    hashlib.sha256(first).digest() + hashlib.sha256(last).digest()).digest()).decode()

attributes = s3.get_object_attributes(Bucket=b, Key="made", ObjectAttributes=ALL)
check(attributes.get("ETag") == head["ETag"].strip('"'),
      "the ETag, unquoted as S3 sends it here: %s" % attributes.get("ETag"))
check(attributes.get("Checksum", {}).get("ChecksumSHA256") == composite,
      "the kept composite checksum: %s" % attributes.get("Checksum"))
check(attributes.get("StorageClass") == "STANDARD" and
      attributes.get("ObjectSize") == len(first) + len(last),
      "storage class and size: %s" % attributes)
check(attributes.get("LastModified") == head["LastModified"], "Last-Modified as HeadObject's")
parts = attributes.get("ObjectParts", {})
check(parts.get("TotalPartsCount", parts.get("PartsCount")) == 2 and
      parts.get("IsTruncated") is False, "two parts, on one page: %s" % parts)
check([(p["PartNumber"], p["Size"], p.get("ChecksumSHA256")) for p in parts.get("Parts", [])] ==
      [(1, len(first), sha256_b64(first)), (2, len(last), sha256_b64(last))],
      "each part's size and kept checksum, numbered in content order: %s" % parts.get("Parts"))
page = s3.get_object_attributes(Bucket=b, Key="made", ObjectAttributes=["ObjectParts"],
                                MaxParts=1)
check(page["ObjectParts"]["IsTruncated"] is True and
      [p["PartNumber"] for p in page["ObjectParts"]["Parts"]] == [1] and
      page["ObjectParts"]["NextPartNumberMarker"] == 1, "a page of one: %s" % page)
page = s3.get_object_attributes(Bucket=b, Key="made", ObjectAttributes=["ObjectParts"],
                                MaxParts=1, PartNumberMarker=1)
check(page["ObjectParts"]["IsTruncated"] is False and
      [p["PartNumber"] for p in page["ObjectParts"]["Parts"]] == [2], "the next page")
only = s3.get_object_attributes(Bucket=b, Key="made", ObjectAttributes=["ObjectSize"])
check("ETag" not in only and "Checksum" not in only and "ObjectParts" not in only and
      only["ObjectSize"] == len(first) + len(last), "only what was asked for: %s" % only)

# An object of one piece has no parts to list, and no checksum when it was put without one.
s3.put_object(Bucket=b, Key="single", Body=b"one piece")
single = s3.get_object_attributes(Bucket=b, Key="single", ObjectAttributes=ALL)
check("ObjectParts" not in single and "Checksum" not in single and single["ObjectSize"] == 9,
      "a plain object: %s" % single)
s3.put_object(Bucket=b, Key="summed", Body=b"summed", ChecksumAlgorithm="CRC32")
summed = s3.get_object_attributes(Bucket=b, Key="summed", ObjectAttributes=["Checksum"])
check(summed["Checksum"].get("ChecksumCRC32") ==
      base64.b64encode(zlib.crc32(b"summed").to_bytes(4, "big")).decode(),
      "a put's kept checksum: %s" % summed)

listed = {o["Key"]: o.get("ChecksumAlgorithm") for o in s3.list_objects_v2(Bucket=b)["Contents"]}
check(listed == {"made": ["SHA256"], "single": None, "summed": ["CRC32"]},
      "ListObjectsV2 names each object's checksum algorithm: %s" % listed)

expect_error("NoSuchKey", 404, s3.get_object_attributes, Bucket=b, Key="absent",
             ObjectAttributes=ALL)
expect_error("NoSuchBucket", 404, s3.get_object_attributes, Bucket=b + "-absent", Key="k",
             ObjectAttributes=ALL)
expect_error("InvalidArgument", 400, s3.get_object_attributes, Bucket=b, Key="made",
             ObjectAttributes=["Colour"])


# GET and HEAD by partNumber: one part's bytes, with the object's part count; with checksum mode
# the part's own checksum, which boto3 checks against what it receives.
got = s3.get_object(Bucket=b, Key="made", PartNumber=2, ChecksumMode="ENABLED")
check(got["Body"].read() == last, "part 2 is the last part's bytes")
check(got["ResponseMetadata"]["HTTPStatusCode"] == 206 and got.get("PartsCount") == 2 and
      got["ContentRange"] == "bytes %d-%d/%d" % (len(first), len(first) + len(last) - 1,
                                                 len(first) + len(last)),
      "206, the part's range and the part count: %s" % got["ResponseMetadata"]["HTTPHeaders"])
check(got.get("ChecksumSHA256") == sha256_b64(last), "the part's checksum: %s" % got)
got = s3.get_object(Bucket=b, Key="made", PartNumber=1)
check(got["Body"].read() == first and got["ContentLength"] == len(first), "part 1")
head = s3.head_object(Bucket=b, Key="made", PartNumber=1)
check(head["ContentLength"] == len(first) and head.get("PartsCount") == 2,
      "HeadObject by partNumber: the part's length: %s" % head)
got = s3.get_object(Bucket=b, Key="single", PartNumber=1)
check(got["Body"].read() == b"one piece", "an object of one piece is its part 1")
expect_error("InvalidPartNumber", 416, s3.get_object, Bucket=b, Key="made", PartNumber=3)
expect_error("InvalidPartNumber", 416, s3.get_object, Bucket=b, Key="single", PartNumber=2)
expect_error("InvalidArgument", 400, s3.get_object, Bucket=b, Key="made", PartNumber=10001)
expect_error("InvalidRequest", 400, s3.get_object, Bucket=b, Key="made", PartNumber=1,
             Range="bytes=0-1")

# A last part may be empty: fetched by its number, it is nothing, not the whole object.
up = s3.create_multipart_upload(Bucket=b, Key="empty-tail")["UploadId"]
e1 = s3.upload_part(Bucket=b, Key="empty-tail", UploadId=up, PartNumber=1, Body=first)["ETag"]
e2 = s3.upload_part(Bucket=b, Key="empty-tail", UploadId=up, PartNumber=2, Body=b"")["ETag"]
s3.complete_multipart_upload(Bucket=b, Key="empty-tail", UploadId=up, MultipartUpload={
    "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
got = s3.get_object(Bucket=b, Key="empty-tail", PartNumber=2)
check(got["Body"].read() == b"" and got["ContentLength"] == 0 and got.get("PartsCount") == 2,
      "an empty part is sent as nothing: %s" % got["ResponseMetadata"]["HTTPHeaders"])
check(s3.head_object(Bucket=b, Key="empty-tail", PartNumber=2)["ContentLength"] == 0,
      "HeadObject of the empty part")


# The attributes sub-resource is only read: a PUT or DELETE naming it neither writes nor
# removes the object.
expect_error("NotImplemented", 501, call_with_query, "put_object", "attributes", Bucket=b,
             Key="single", Body=b"overwritten")
expect_error("NotImplemented", 501, call_with_query, "delete_object", "attributes", Bucket=b,
             Key="single")
check(s3.get_object(Bucket=b, Key="single")["Body"].read() == b"one piece",
      "the object is as it was")

for o in s3.list_objects_v2(Bucket=b)["Contents"]:
    s3.delete_object(Bucket=b, Key=o["Key"])
s3.delete_bucket(Bucket=b)
done("boto_parts.py")
