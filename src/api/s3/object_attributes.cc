// S3's GetObjectAttributes (GET /BUCKET/KEY?attributes): what an object is, without its content.
// The x-amz-object-attributes header names what to answer with: ETag, Checksum (the kept one,
// with its type), ObjectParts (a multipart upload's object: its parts' sizes and checksums, a
// page at a time), StorageClass and ObjectSize.
#include <algorithm>
#include <charconv>

#include "api/object_http.h"
#include "api/s3/s3_api.h"
#include "base/crypto.h"
#include "s3/xml.h"

namespace tf::api {
namespace {

struct WantedAttributes {
  bool etag = false;
  bool checksum = false;
  bool parts = false;
  bool storage_class = false;
  bool size = false;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The attributes a comma-separated x-amz-object-attributes names: InvalidArgument when it is
// missing or names one S3 does not have.
s3::Outcome<WantedAttributes> WantedAttributesOf(const S3Call& call) {
  std::string_view list = call.request.Header("x-amz-object-attributes");
  WantedAttributes wanted;
  bool any = false;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view name = Trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (name.empty()) continue;
    bool* flag = name == "ETag"           ? &wanted.etag
                 : name == "Checksum"     ? &wanted.checksum
                 : name == "ObjectParts"  ? &wanted.parts
                 : name == "StorageClass" ? &wanted.storage_class
                 : name == "ObjectSize"   ? &wanted.size
                                          : nullptr;
    if (flag == nullptr) {
      return s3::MakeError("InvalidArgument",
                           "Invalid attribute name specified: '" + std::string(name.substr(0, 32)) +
                               "' is not ETag, Checksum, ObjectParts, StorageClass or ObjectSize")
          .With("ArgumentName", "x-amz-object-attributes");
    }
    *flag = any = true;
  }
  if (!any) {
    return s3::MakeError("InvalidArgument",
                         "The x-amz-object-attributes header specifying the attributes to be "
                         "retrieved is either missing or empty")
        .With("ArgumentName", "x-amz-object-attributes");
  }
  return wanted;
}

// A non-negative number from header `name`, `fallback` when absent; InvalidArgument if not one.
s3::Outcome<int64_t> HeaderNumber(const S3Call& call, const char* name, int64_t fallback) {
  const std::string& text = call.request.Header(name);
  if (text.empty()) return fallback;
  int64_t n = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end != text.data() + text.size() || n < 0) {
    return s3::MakeError(
               "InvalidArgument",
               std::string(name) + " must be a number from 0 up, not '" + text.substr(0, 32) + "'")
        .With("ArgumentName", name);
  }
  return n;
}

// ObjectParts: one page of a multipart upload's object's parts, numbered from 1 in content order.
void WriteParts(s3::XmlWriter& w, const objects::ObjectInfo& info, int64_t marker,
                int64_t max_parts) {
  w.Open("ObjectParts");
  w.Element("PartsCount", std::to_string(info.parts.size()));
  w.Element("PartNumberMarker", std::to_string(marker));
  w.Element("MaxParts", std::to_string(max_parts));
  int64_t listed = 0, last = marker;
  bool truncated = false;
  for (size_t i = static_cast<size_t>(std::min<int64_t>(marker, info.parts.size()));
       i < info.parts.size(); ++i) {
    if (listed == max_parts) {
      truncated = true;
      break;
    }
    const objects::ObjectPart& part = info.parts[i];
    w.Open("Part");
    w.Element("PartNumber", std::to_string(i + 1));
    w.Element("Size", std::to_string(part.size));
    if (!part.checksum.empty() && info.checksum_algorithm != objects::ChecksumAlgorithm::kNone) {
      w.Element(ChecksumElement(info.checksum_algorithm), Base64Encode(part.checksum));
    }
    w.Close();
    ++listed;
    last = static_cast<int64_t>(i + 1);
  }
  w.Element("NextPartNumberMarker", std::to_string(last));
  w.Element("IsTruncated", truncated ? "true" : "false");
  w.Close();
}

}  // namespace

awaitable<http::Response> GetObjectAttributes(S3Call& call) {
  s3::Outcome<WantedAttributes> wanted = WantedAttributesOf(call);
  if (!wanted.ok()) co_return S3ErrorResponse(call, wanted.error());
  s3::Outcome<int64_t> max_parts = HeaderNumber(call, "x-amz-max-parts", 1000);
  if (!max_parts.ok()) co_return S3ErrorResponse(call, max_parts.error());
  s3::Outcome<int64_t> marker = HeaderNumber(call, "x-amz-part-number-marker", 0);
  if (!marker.ok()) co_return S3ErrorResponse(call, marker.error());
  Services& s = call.services();
  auto info = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<objects::ObjectInfo> {
    auto head = s.objects.Head(call.project(), call.bucket, call.key);
    if (!head.ok()) return ObjectError(call, head.status());
    return std::move(head).value();
  });
  if (!info.ok()) co_return S3ErrorResponse(call, info.error());

  s3::XmlWriter w;
  w.Open("GetObjectAttributesResponse", s3::kS3Namespace);
  if (wanted->etag) w.Element("ETag", info->etag);  // unquoted here, unlike everywhere else
  if (wanted->checksum && info->checksum_algorithm != objects::ChecksumAlgorithm::kNone) {
    w.Open("Checksum");
    // Without the "-<parts>" that HeadObject shows after a composite one: S3 sends it so here.
    w.Element(ChecksumElement(info->checksum_algorithm), Base64Encode(info->checksum));
    w.Element("ChecksumType", info->checksum_parts > 0 ? "COMPOSITE" : "FULL_OBJECT");
    w.Close();
  }
  // At least one a page, as ListParts: a page of none would never move past its marker.
  if (wanted->parts && !info->parts.empty()) {
    WriteParts(w, *info, *marker, std::clamp<int64_t>(*max_parts, 1, 1000));
  }
  if (wanted->storage_class) w.Element("StorageClass", "STANDARD");
  if (wanted->size) w.Element("ObjectSize", std::to_string(info->size));
  http::Response r = XmlResponse(w.Finish());
  r.headers.emplace_back("Last-Modified", HttpDate(info->modified_at));
  co_return r;
}

}  // namespace tf::api
