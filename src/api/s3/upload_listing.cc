#include "api/s3/upload_listing.h"

#include <algorithm>
#include <tuple>

namespace tf::api {

UploadListing ListUploadsPage(std::vector<objects::MultipartUpload> all,
                              const UploadListingRequest& r) {
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tie(a.key, a.upload_id) < std::tie(b.key, b.upload_id);
  });
  UploadListing out;
  int64_t listed = 0;
  for (const objects::MultipartUpload& u : all) {
    if (u.key.compare(0, r.prefix.size(), r.prefix) != 0) continue;
    if (!r.key_marker.empty()) {
      if (u.key < r.key_marker) continue;
      if (u.key == r.key_marker &&
          (r.upload_id_marker.empty() || u.upload_id <= r.upload_id_marker)) {
        continue;
      }
    }
    std::string common_prefix;
    if (!r.delimiter.empty()) {
      const size_t at = u.key.find(r.delimiter, r.prefix.size());
      if (at != std::string::npos) common_prefix = u.key.substr(0, at + r.delimiter.size());
    }
    if (!common_prefix.empty() &&
        ((!out.common_prefixes.empty() && out.common_prefixes.back() == common_prefix) ||
         common_prefix == r.key_marker)) {
      continue;  // already listed, on this page or the one before
    }
    if (listed == r.max_uploads) {
      out.truncated = true;
      break;
    }
    ++listed;
    if (!common_prefix.empty()) {
      out.common_prefixes.push_back(common_prefix);
      out.next_key_marker = common_prefix;
      out.next_upload_id_marker.clear();
    } else {
      out.uploads.push_back(u);
      out.next_key_marker = u.key;
      out.next_upload_id_marker = u.upload_id;
    }
  }
  if (!out.truncated) {
    out.next_key_marker.clear();
    out.next_upload_id_marker.clear();
  }
  return out;
}

}  // namespace tf::api
