// The request bodies S3 has, read from their XML (xml.h). Every error is kInvalidArgument saying
// what is wrong; the routes answer it with MalformedXML.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::s3 {

// <CreateBucketConfiguration><LocationConstraint>REGION</LocationConstraint>
// </CreateBucketConfiguration>, or an empty body. Returns the region ("" when none).
Result<std::string> ParseCreateBucketConfiguration(std::string_view body);

inline constexpr size_t kMaxDeleteKeys = 1000;

// <Delete><Quiet>true</Quiet><Object><Key>k</Key></Object>...</Delete>: 1-1000 objects.
struct DeleteRequest {
  bool quiet = false;
  std::vector<std::string> keys;  // in the order given
};
Result<DeleteRequest> ParseDeleteRequest(std::string_view body);

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
