#include "api/s3/multipart_rules.h"

#include <algorithm>
#include <map>

#include "base/crypto.h"

namespace tf::api {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// 32 hex digits -> 16 bytes; "" if malformed.
std::string HexToBytes(const std::string& hex) {
  auto value = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    int hi = value(hex[i]), lo = value(hex[i + 1]);
    if (hi < 0 || lo < 0) return "";
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

}  // namespace

std::optional<s3::Error> CheckCompletion(const std::vector<s3::CompletedPart>& requested,
                                         const std::vector<objects::PartInfo>& uploaded,
                                         const std::string& upload_id) {
  std::map<int, const objects::PartInfo*> by_number;
  for (const auto& p : uploaded) by_number[p.number] = &p;
  for (size_t i = 0; i < requested.size(); ++i) {
    const s3::CompletedPart& part = requested[i];
    if (part.part_number < 1 || part.part_number > objects::kMaxPartNumber) {
      return s3::MakeError("InvalidArgument", "Part number must be an integer between 1 and " +
                                                  std::to_string(objects::kMaxPartNumber) +
                                                  ", inclusive")
          .With("ArgumentName", "PartNumber")
          .With("ArgumentValue", std::to_string(part.part_number));
    }
    if (i > 0 && part.part_number <= requested[i - 1].part_number) {
      return s3::MakeError("InvalidPartOrder",
                           "The list of parts was not in ascending order. Parts must be ordered by "
                           "part number.")
          .With("UploadId", upload_id);
    }
  }
  for (const s3::CompletedPart& part : requested) {
    auto it = by_number.find(part.part_number);
    if (it == by_number.end() || it->second->etag != Lower(part.etag)) {
      return s3::MakeError(
                 "InvalidPart",
                 "One or more of the specified parts could not be found. The part may not "
                 "have been uploaded, or the specified entity tag may not match the part's "
                 "entity tag.")
          .With("UploadId", upload_id)
          .With("PartNumber", std::to_string(part.part_number))
          .With("ETag", part.etag.substr(0, 64));
    }
  }
  for (size_t i = 0; i + 1 < requested.size(); ++i) {  // every part but the last
    const objects::PartInfo& p = *by_number[requested[i].part_number];
    if (p.size < objects::kMinPartBytes) {
      return s3::MakeError("EntityTooSmall",
                           "Your proposed upload is smaller than the minimum allowed object size.")
          .With("ProposedSize", std::to_string(p.size))
          .With("MinSizeAllowed", std::to_string(objects::kMinPartBytes))
          .With("PartNumber", std::to_string(p.number))
          .With("ETag", p.etag);
    }
  }
  return std::nullopt;
}

std::string MultipartEtag(const std::vector<std::string>& part_md5_hex) {
  std::string joined;
  for (const auto& md5 : part_md5_hex) joined += HexToBytes(Lower(md5));
  return Md5Hex(joined) + "-" + std::to_string(part_md5_hex.size());
}

}  // namespace tf::api
