"""Object versions with boto3, as S3 has them in a bucket whose versioning was never enabled: each
object has one version, "null", which ListObjectVersions lists and GET, HEAD, DELETE, CopyObject
and DeleteObjects may name; any other version id names nothing (NoSuchVersion) and deletes
nothing. boto3's usual way to empty a bucket, object_versions.delete(), then works. Run by
tests/s3_clients_test.cc."""

import boto3

from s3check import (BUCKET, ENDPOINT, KEY_ID, SECRET, call_with_query, check, client, done,
                     expect_error)


s3 = client()
b = BUCKET + "-versions"
s3.create_bucket(Bucket=b)
keys = ["a.txt", "dir/b.txt", "dir/c.txt", "z.txt"]
for k in keys:
    s3.put_object(Bucket=b, Key=k, Body=k.encode())

listed = s3.list_object_versions(Bucket=b)
versions = listed["Versions"]
check([v["Key"] for v in versions] == keys, "every object, in key order: %s" % versions)
check(all(v["VersionId"] == "null" and v["IsLatest"] for v in versions), "each one's null version")
check(versions[0]["Size"] == len(b"a.txt") and versions[0]["ETag"].startswith('"'), "its size, ETag")
check("DeleteMarkers" not in listed and listed["IsTruncated"] is False, "no delete markers")
grouped = s3.list_object_versions(Bucket=b, Delimiter="/")
check([v["Key"] for v in grouped["Versions"]] == ["a.txt", "z.txt"] and
      grouped["CommonPrefixes"] == [{"Prefix": "dir/"}], "grouped by the delimiter: %s" % grouped)
check([v["Key"] for v in s3.list_object_versions(Bucket=b, Prefix="dir/")["Versions"]] ==
      ["dir/b.txt", "dir/c.txt"], "by prefix")
page = s3.list_object_versions(Bucket=b, MaxKeys=1)
check(page["IsTruncated"] and page["NextKeyMarker"] == "a.txt" and
      page["NextVersionIdMarker"] == "null", "a page and where the next begins: %s" % page)
paged = []
for p in s3.get_paginator("list_object_versions").paginate(Bucket=b, PaginationConfig={"PageSize": 1}):
    paged += [v["Key"] for v in p.get("Versions", [])]
check(paged == keys, "the paginator sees every version once: %s" % paged)
expect_error("InvalidArgument", 400, s3.list_object_versions, Bucket=b, VersionIdMarker="null")
expect_error("NoSuchBucket", 404, s3.list_object_versions, Bucket=b + "-missing")

# The null version is the object; any other names nothing.
check(s3.get_object(Bucket=b, Key="a.txt", VersionId="null")["Body"].read() == b"a.txt", "GET null")
check(s3.head_object(Bucket=b, Key="a.txt", VersionId="null")["ContentLength"] == 5, "HEAD null")
missing = expect_error("NoSuchVersion", 404, s3.get_object, Bucket=b, Key="a.txt",
                       VersionId="3HL4kqtJlcpXroDTDmJ")
check(missing["Error"].get("VersionId") == "3HL4kqtJlcpXroDTDmJ", "the answer names the version")
expect_error("404", 404, s3.head_object, Bucket=b, Key="a.txt", VersionId="3HL4kqtJlcpXroDTDmJ")
s3.copy_object(Bucket=b, Key="copy.txt", CopySource={"Bucket": b, "Key": "a.txt", "VersionId": "null"})
check(s3.get_object(Bucket=b, Key="copy.txt")["Body"].read() == b"a.txt", "copied from null")
expect_error("NoSuchVersion", 404, s3.copy_object, Bucket=b, Key="copy2.txt",
             CopySource={"Bucket": b, "Key": "a.txt", "VersionId": "3HL4kqtJlcpXroDTDmJ"})

# Deleting another version deletes nothing: the object stays.
expect_error("NoSuchVersion", 404, s3.delete_object, Bucket=b, Key="a.txt", VersionId="old")
result = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "a.txt", "VersionId": "old"},
                                                         {"Key": "copy.txt", "VersionId": "null"}]})
check(result.get("Errors") == [{"Key": "a.txt", "VersionId": "old", "Code": "NoSuchVersion",
                                "Message": result["Errors"][0]["Message"]}],
      "the other version is an error: %s" % result)
check(result.get("Deleted") == [{"Key": "copy.txt", "VersionId": "null"}], "null is deleted")
check(s3.get_object(Bucket=b, Key="a.txt")["Body"].read() == b"a.txt", "a.txt is still there")
expect_error("NoSuchKey", 404, s3.get_object, Bucket=b, Key="copy.txt")
s3.delete_object(Bucket=b, Key="z.txt", VersionId="null")
expect_error("NoSuchKey", 404, s3.get_object, Bucket=b, Key="z.txt")

# Versions are listed, and nothing else: a DELETE naming them deletes nothing.
expect_error("NotImplemented", 501, call_with_query, "delete_bucket", "versions", Bucket=b)
check(s3.head_bucket(Bucket=b)["ResponseMetadata"]["HTTPStatusCode"] == 200, "the bucket stays")

# How boto3's users empty a bucket.
resource = boto3.resource("s3", endpoint_url=ENDPOINT, region_name="us-east-1",
                          aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET)
resource.Bucket(b).object_versions.delete()
check(s3.list_objects_v2(Bucket=b)["KeyCount"] == 0, "object_versions.delete() empties the bucket")
s3.delete_bucket(Bucket=b)
done("boto_versions.py")
