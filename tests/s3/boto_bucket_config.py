"""A bucket's configuration read with boto3 as S3 answers where none is set (versioning never
enabled, no policy, no CORS, ...; the ACL grants the owner alone), and the writes that ask for
what the server does not do (a public ACL, encryption, a storage class, tags, object lock)
refused with a 400 that names the header, with nothing stored. Run by tests/s3_clients_test.cc."""

from s3check import BUCKET, call_with_headers, check, client, done, expect_error

s3 = client()
b = BUCKET + "-config"
s3.create_bucket(Bucket=b)
s3.put_object(Bucket=b, Key="k", Body=b"content")

# Read as S3 answers for a bucket without them.
versioning = s3.get_bucket_versioning(Bucket=b)
check("Status" not in versioning and "MFADelete" not in versioning,
      "versioning never enabled: %s" % versioning)
check("LoggingEnabled" not in s3.get_bucket_logging(Bucket=b), "no logging")
check(s3.get_bucket_request_payment(Bucket=b)["Payer"] == "BucketOwner", "the owner pays")
check("Status" not in s3.get_bucket_accelerate_configuration(Bucket=b), "no acceleration")
notification = s3.get_bucket_notification_configuration(Bucket=b)
check(not any(k.endswith("Configurations") for k in notification), "no notifications")
unset = [
    ("NoSuchBucketPolicy", s3.get_bucket_policy),
    ("NoSuchCORSConfiguration", s3.get_bucket_cors),
    ("NoSuchLifecycleConfiguration", s3.get_bucket_lifecycle_configuration),
    ("ServerSideEncryptionConfigurationNotFoundError", s3.get_bucket_encryption),
    ("NoSuchTagSet", s3.get_bucket_tagging),
    ("NoSuchWebsiteConfiguration", s3.get_bucket_website),
    ("ObjectLockConfigurationNotFoundError", s3.get_object_lock_configuration),
    ("NoSuchBucketPolicy", s3.get_bucket_policy_status),
    ("ReplicationConfigurationNotFoundError", s3.get_bucket_replication),
]
for code, call in unset:
    expect_error(code, 404, call, Bucket=b)
    expect_error("NoSuchBucket", 404, call, Bucket=b + "-missing")
# There are no ACLs and nothing can be public: the settings that say so.
ownership = s3.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]
check(ownership == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
      "ACLs disabled: %s" % ownership)
block = s3.get_public_access_block(Bucket=b)["PublicAccessBlockConfiguration"]
check(block == {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True,
                "RestrictPublicBuckets": True}, "public access blocked: %s" % block)
expect_error("NotImplemented", 501, s3.delete_public_access_block, Bucket=b)
expect_error("NotImplemented", 501, s3.delete_bucket_ownership_controls, Bucket=b)
# Deleting what is not there leaves it not there, as in S3.
for call in (s3.delete_bucket_policy, s3.delete_bucket_cors, s3.delete_bucket_lifecycle,
             s3.delete_bucket_encryption, s3.delete_bucket_tagging, s3.delete_bucket_website):
    check(call(Bucket=b)["ResponseMetadata"]["HTTPStatusCode"] == 204, call.__name__)
expect_error("NoSuchBucket", 404, s3.get_bucket_versioning, Bucket=b + "-missing")
check(s3.delete_object_tagging(Bucket=b, Key="k")["ResponseMetadata"]["HTTPStatusCode"] == 204,
      "an object's tags (there are none) are deleted")
expect_error("NoSuchKey", 404, s3.delete_object_tagging, Bucket=b, Key="missing")

# The only grant there is: the owner, which is the key's project, as ListBuckets names it.
owner = s3.list_buckets()["Owner"]
for acl in (s3.get_bucket_acl(Bucket=b), s3.get_object_acl(Bucket=b, Key="k")):
    check(acl["Owner"] == owner, "the ACL's owner is the project: %s" % acl)
    check(acl["Grants"] == [{"Grantee": dict(owner, Type="CanonicalUser"),
                             "Permission": "FULL_CONTROL"}], "one grant: %s" % acl["Grants"])
expect_error("NoSuchKey", 404, s3.get_object_acl, Bucket=b, Key="missing")

# Setting any of them is not done.
expect_error("NotImplemented", 501, s3.put_bucket_versioning, Bucket=b,
             VersioningConfiguration={"Status": "Enabled"})
# The one ACL there is may be set again (a canned private ACL, or the owner's one grant, as read
# back); any other is refused, as S3 refuses ACLs on a bucket that has them disabled.
s3.put_bucket_acl(Bucket=b, ACL="private")
s3.put_object_acl(Bucket=b, Key="k", ACL="bucket-owner-full-control")
as_read = s3.get_object_acl(Bucket=b, Key="k")
s3.put_object_acl(Bucket=b, Key="k", AccessControlPolicy={"Owner": as_read["Owner"],
                                                          "Grants": as_read["Grants"]})
expect_error("AccessControlListNotSupported", 400, s3.put_object_acl, Bucket=b, Key="k",
             ACL="public-read")
everyone = {"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"},
            "Permission": "READ"}
expect_error("AccessControlListNotSupported", 400, s3.put_bucket_acl, Bucket=b,
             AccessControlPolicy={"Owner": owner, "Grants": as_read["Grants"] + [everyone]})
expect_error("AccessControlListNotSupported", 400, s3.put_bucket_acl, Bucket=b, ACL="public-read")
expect_error("AccessControlListNotSupported", 400, s3.put_object_acl, Bucket=b, Key="k",
             AccessControlPolicy={"Owner": {"ID": "someone-else"}, "Grants": as_read["Grants"]})
expect_error("MalformedACLError", 400, s3.put_object_acl, Bucket=b, Key="k")
expect_error("NoSuchKey", 404, s3.put_object_acl, Bucket=b, Key="missing", ACL="private")
expect_error("NoSuchBucket", 404, s3.put_bucket_acl, Bucket=b + "-missing", ACL="private")
check(s3.get_object_acl(Bucket=b, Key="k")["Grants"] == as_read["Grants"], "the ACL is as it was")
expect_error("NotImplemented", 501, s3.put_bucket_policy, Bucket=b, Policy="{}")

# Writes that ask for what the server does not do are refused, naming the header.
refusals = [
    ("AccessControlListNotSupported", 400, "x-amz-acl", dict(ACL="public-read")),
    ("AccessControlListNotSupported", 400, "x-amz-grant-read",
     dict(GrantRead='uri="http://acs.amazonaws.com/groups/global/AllUsers"')),
    ("InvalidRequest", 400, "x-amz-server-side-encryption", dict(ServerSideEncryption="AES256")),
    ("InvalidStorageClass", 400, "GLACIER", dict(StorageClass="GLACIER")),
    ("InvalidRequest", 400, "x-amz-tagging", dict(Tagging="team=ml")),
    ("InvalidRequest", 400, "Object Lock", dict(ObjectLockLegalHoldStatus="ON")),
    ("InvalidRequest", 400, "x-amz-website-redirect-location",
     dict(WebsiteRedirectLocation="/elsewhere")),
]
for code, status, named, extra in refusals:
    for name, call, args in (
            ("put", s3.put_object, dict(Bucket=b, Key="refused", Body=b"x")),
            ("copy", s3.copy_object, dict(Bucket=b, Key="refused", CopySource=b + "/k")),
            ("multipart", s3.create_multipart_upload, dict(Bucket=b, Key="refused"))):
        answer = expect_error(code, status, call, **dict(args, **extra))
        check(named in answer["Error"]["Message"],
              "%s with %s: the answer names %s: %s" % (name, extra, named, answer["Error"]))
# An append (S3 Express's x-amz-write-offset-bytes) would replace the whole object here.
answer = expect_error("InvalidRequest", 400, call_with_headers, "put_object",
                      {"x-amz-write-offset-bytes": "7"}, Bucket=b, Key="k", Body=b"more")
check("x-amz-write-offset-bytes" in answer["Error"]["Message"], "names the header")
check(s3.get_object(Bucket=b, Key="k")["Body"].read() == b"content", "k is as it was")
expect_error("404", 404, s3.head_object, Bucket=b, Key="refused")
check(s3.list_multipart_uploads(Bucket=b).get("Uploads", []) == [], "no upload was begun")
expect_error("InvalidBucketAclWithObjectOwnership", 400, s3.create_bucket, Bucket=b + "-public",
             ACL="public-read")
expect_error("InvalidRequest", 400, s3.create_bucket, Bucket=b + "-locked",
             ObjectLockEnabledForBucket=True)
expect_error("404", 404, s3.head_bucket, Bucket=b + "-public")

# What states what the server does anyway is taken.
s3.put_object(Bucket=b, Key="private", Body=b"x", ACL="private", StorageClass="STANDARD")
s3.put_object(Bucket=b, Key="owned", Body=b"x", ACL="bucket-owner-full-control")
check(s3.get_object(Bucket=b, Key="private")["Body"].read() == b"x", "a private put is stored")
expect_error("InvalidArgument", 400, s3.put_object, Bucket=b, Key="odd", Body=b"x",
             ACL="everyone-please")

for key in ("k", "private", "owned"):
    s3.delete_object(Bucket=b, Key=key)
s3.delete_bucket(Bucket=b)
done("boto_bucket_config.py")
