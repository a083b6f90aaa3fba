// One page of ListMultipartUploads: the uploads in order of key (then upload id) after the
// markers, under a prefix, grouped by a delimiter into common prefixes, at most max_uploads
// entries (uploads and prefixes together) a page.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "objects/multipart.h"

namespace tf::api {

struct UploadListingRequest {
  std::string prefix;
  std::string delimiter;
  std::string key_marker;
  std::string upload_id_marker;  // only with key_marker: uploads of that key after this id
  int64_t max_uploads = 1000;    // 1-1000
};

struct UploadListing {
  std::vector<objects::MultipartUpload> uploads;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  // Where the next page starts, when truncated.
  std::string next_key_marker;
  std::string next_upload_id_marker;
};

UploadListing ListUploadsPage(std::vector<objects::MultipartUpload> all,
                              const UploadListingRequest& request);

}  // namespace tf::api
