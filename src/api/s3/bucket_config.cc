// A bucket's configuration as S3 answers it for a bucket where none is set: this server has no
// versioning, policies, CORS, lifecycle rules, encryption settings, tags, websites, object lock,
// replication or logging, and every bucket and object belongs to its project alone (no ACLs,
// nothing public: the ownership controls and public access block say so). Tools that
// read every setting before they use a bucket (Terraform's AWS provider, rclone's purge,
// s3cmd info) get S3's own answers for "none" instead of NotImplemented. Setting any of them is
// still NotImplemented (routes.cc), but for the one ACL there is (PutAcl), and asking for one
// in a write's headers is refused (write_headers.cc), so that nothing is silently left undone.
#include "api/s3/s3_api.h"
#include "s3/request_xml.h"
#include "s3/xml.h"

namespace tf::api {
namespace {

// A configuration whose absence S3 answers with an error naming it (404); where S3 can delete
// one, deleting it here succeeds too (204): there is none, as after a delete.
struct UnsetAsError {
  std::string_view sub_resource;
  std::string_view code;
  std::string_view message;
  bool deletable;
};

constexpr UnsetAsError kUnsetAsError[] = {
    {"cors", "NoSuchCORSConfiguration", "The CORS configuration does not exist", true},
    {"encryption", "ServerSideEncryptionConfigurationNotFoundError",
     "The server side encryption configuration was not found", true},
    {"lifecycle", "NoSuchLifecycleConfiguration", "The lifecycle configuration does not exist",
     true},
    {"object-lock", "ObjectLockConfigurationNotFoundError",
     "Object Lock configuration does not exist for this bucket", false},
    {"policy", "NoSuchBucketPolicy", "The bucket policy does not exist", true},
    {"policyStatus", "NoSuchBucketPolicy", "The bucket policy does not exist", false},
    {"replication", "ReplicationConfigurationNotFoundError",
     "The replication configuration was not found", true},
    {"tagging", "NoSuchTagSet", "The TagSet does not exist", true},
    {"website", "NoSuchWebsiteConfiguration",
     "The specified bucket does not have a website configuration", true},
};

// A configuration whose state S3 answers with a document (200), and what that document holds
// here: nothing (never enabled), or the settings that describe this server.
struct AnsweredAsDocument {
  std::string_view sub_resource;
  void (*write)(s3::XmlWriter& w);
};

constexpr AnsweredAsDocument kAnsweredAsDocument[] = {
    {"accelerate", [](s3::XmlWriter& w) { w.Open("AccelerateConfiguration", s3::kS3Namespace); }},
    // S3 writes the logging status in a namespace of its own.
    {"logging",
     [](s3::XmlWriter& w) {
       w.Open("BucketLoggingStatus", "http://doc.s3.amazonaws.com/2006-03-01");
     }},
    {"notification",
     [](s3::XmlWriter& w) { w.Open("NotificationConfiguration", s3::kS3Namespace); }},
    // There are no ACLs: the bucket's owner owns every object (S3's default since 2023).
    {"ownershipControls",
     [](s3::XmlWriter& w) {
       w.Open("OwnershipControls", s3::kS3Namespace);
       w.Open("Rule");
       w.Element("ObjectOwnership", "BucketOwnerEnforced");
     }},
    // Nothing can be made public: every request needs one of the project's keys.
    {"publicAccessBlock",
     [](s3::XmlWriter& w) {
       w.Open("PublicAccessBlockConfiguration", s3::kS3Namespace);
       for (const char* setting :
            {"BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets"}) {
         w.Element(setting, "true");
       }
     }},
    {"requestPayment",
     [](s3::XmlWriter& w) {
       w.Open("RequestPaymentConfiguration", s3::kS3Namespace);
       w.Element("Payer", "BucketOwner");
     }},
    // Never enabled: no Status.
    {"versioning", [](s3::XmlWriter& w) { w.Open("VersioningConfiguration", s3::kS3Namespace); }},
};

// The owner of every bucket and object a key reaches: its project, as ListBuckets names it.
void WriteOwner(s3::XmlWriter& w, const std::string& project) {
  w.Element("ID", project);
  w.Element("DisplayName", project);
}

std::string OwnerOnlyAcl(const std::string& project) {
  s3::XmlWriter w;
  w.Open("AccessControlPolicy", s3::kS3Namespace);
  w.Open("Owner");
  WriteOwner(w, project);
  w.Close();
  w.Open("AccessControlList");
  w.Open("Grant");
  w.Open("Grantee", {{"xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"},
                     {"xsi:type", "CanonicalUser"}});
  WriteOwner(w, project);
  w.Close();
  w.Element("Permission", "FULL_CONTROL");
  return w.Finish();
}

}  // namespace

bool IsUnsetBucketConfiguration(const S3Call& call) {
  const std::string& m = call.request.method;
  if (!call.key.empty() || (m != "GET" && m != "DELETE")) return false;
  for (const UnsetAsError& u : kUnsetAsError) {
    if (call.Has(std::string(u.sub_resource).c_str())) return m == "GET" || u.deletable;
  }
  if (m == "DELETE") return false;
  for (const AnsweredAsDocument& d : kAnsweredAsDocument) {
    if (call.Has(std::string(d.sub_resource).c_str())) return true;
  }
  return call.Has("acl");
}

awaitable<http::Response> AnswerUnsetBucketConfiguration(S3Call& call) {
  if (auto missing = co_await MissingBucket(call)) co_return S3ErrorResponse(call, *missing);
  for (const UnsetAsError& u : kUnsetAsError) {
    if (!call.Has(std::string(u.sub_resource).c_str())) continue;
    if (call.request.method == "DELETE") {
      http::Response r;
      r.status = 204;
      r.content_type.clear();
      co_return r;
    }
    co_return S3ErrorResponse(
        call, s3::MakeError(u.code, std::string(u.message)).With("BucketName", call.bucket));
  }
  for (const AnsweredAsDocument& d : kAnsweredAsDocument) {
    if (!call.Has(std::string(d.sub_resource).c_str())) continue;
    s3::XmlWriter w;
    d.write(w);
    co_return XmlResponse(w.Finish());
  }
  co_return XmlResponse(OwnerOnlyAcl(call.project()));  // ?acl
}

awaitable<http::Response> PutAcl(S3Call& call) {
  // A canned ACL, or grants in headers: the same rules as on a write.
  if (auto refused = RefuseUnsupportedWriteHeaders(call)) co_return S3ErrorResponse(call, *refused);
  if (call.request.body.empty() && call.request.Header("x-amz-acl").empty()) {
    co_return S3ErrorResponse(call, s3::MakeError("MalformedACLError",
                                                  "The request names no ACL: send x-amz-acl or "
                                                  "an AccessControlPolicy"));
  }
  if (!call.request.body.empty()) {
    auto policy = s3::ParseAccessControlPolicy(call.request.body);
    if (!policy.ok()) {
      co_return S3ErrorResponse(call, s3::MakeError("MalformedACLError",
                                                    "The XML you provided was not well-formed "
                                                    "or did not validate: " +
                                                        policy.status().message()));
    }
    // Only what is so already: the owner, and no one else, with FULL_CONTROL.
    bool owner_only =
        !policy->grants.empty() && (policy->owner_id.empty() || policy->owner_id == call.project());
    for (const s3::AclGrant& g : policy->grants) {
      owner_only = owner_only && g.id == call.project() && g.permission == "FULL_CONTROL";
    }
    if (!owner_only) {
      co_return S3ErrorResponse(
          call, s3::MakeError("AccessControlListNotSupported",
                              "The bucket does not allow ACLs: this server has no ACLs; buckets "
                              "and objects are reachable only with their project's access keys, "
                              "so the only ACL there is grants FULL_CONTROL to the owner, " +
                                  call.project()));
    }
  }
  // Two statements, not ?: (g++ 12 mishandles a co_await of a conditional's result).
  std::optional<s3::Error> missing;
  if (call.key.empty()) missing = co_await MissingBucket(call);
  if (!call.key.empty()) missing = co_await MissingObject(call);
  if (missing) co_return S3ErrorResponse(call, *missing);
  http::Response r;  // nothing to change: the ACL asked for is the one there is
  r.content_type.clear();
  co_return r;
}

awaitable<http::Response> GetObjectAcl(S3Call& call) {
  if (auto missing = co_await MissingObject(call)) co_return S3ErrorResponse(call, *missing);
  co_return XmlResponse(OwnerOnlyAcl(call.project()));
}

}  // namespace tf::api
