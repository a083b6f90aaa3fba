// The request bodies S3 has, read from their XML (xml.h). Every error is kInvalidArgument saying
// what is wrong; the routes answer it with MalformedXML.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::s3 {

// <CreateBucketConfiguration><LocationConstraint>REGION</LocationConstraint>
// </CreateBucketConfiguration>, or an empty body. Returns the region ("" when none).
Result<std::string> ParseCreateBucketConfiguration(std::string_view body);

inline constexpr size_t kMaxDeleteKeys = 1000;

// <Delete><Quiet>true</Quiet><Object><Key>k</Key><VersionId>v</VersionId><ETag>"e"</ETag>
// </Object>...</Delete>: 1-1000 objects, each with or without a version and an ETag it must
// have (its quotes dropped; "*" for any).
struct DeleteTarget {
  std::string key;
  std::optional<std::string> version_id;
  std::optional<std::string> etag;
};
struct DeleteRequest {
  bool quiet = false;
  std::vector<DeleteTarget> objects;  // in the order given
};
Result<DeleteRequest> ParseDeleteRequest(std::string_view body);

// <AccessControlPolicy><Owner><ID>o</ID></Owner><AccessControlList><Grant><Grantee ...>
// <ID>o</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant>...</AccessControlList>
// </AccessControlPolicy> (PutBucketAcl, PutObjectAcl): who is granted what. A grantee is named
// by one of ID, URI (a group) and EmailAddress.
struct AclGrant {
  std::string id, uri, email;
  std::string permission;  // FULL_CONTROL, READ, WRITE, READ_ACP, WRITE_ACP
};
struct AccessControlPolicy {
  std::string owner_id;
  std::vector<AclGrant> grants;
};
Result<AccessControlPolicy> ParseAccessControlPolicy(std::string_view body);

// <CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"..."</ETag></Part>...
// </CompleteMultipartUpload>: at least one part. Numbers are returned as given (checking
// their range and order is the upload's business); ETags lose their quotes. A part's
// checksums (<ChecksumSHA256>...) are kept by element name, as sent.
struct CompletedPart {
  int part_number = 0;
  std::string etag;
  std::map<std::string, std::string> checksums;
};
Result<std::vector<CompletedPart>> ParseCompleteMultipartUpload(std::string_view body);

}  // namespace tf::s3
