#include "api/s3/addressing.h"

#include <algorithm>
#include <cctype>

#include "base/ascii.h"

namespace tf::api {

std::string Addressing::HostBucket(const http::Request& head) const {
  if (domain_.empty()) return "";
  std::string host = head.Header("Host");
  if (const size_t colon = host.rfind(':');
      colon != std::string::npos && host.find(']') == std::string::npos) {
    host.resize(colon);
  }
  if (!host.empty() && host.back() == '.') host.pop_back();  // a fully qualified name
  host = AsciiLower(host);
  if (host.size() <= domain_.size() + 1 || host[host.size() - domain_.size() - 1] != '.' ||
      host.compare(host.size() - domain_.size(), domain_.size(), domain_) != 0) {
    return "";
  }
  return host.substr(0, host.size() - domain_.size() - 1);
}

void Addressing::Split(const http::Request& head, std::string* bucket, std::string* key) const {
  std::string_view p = head.path;
  if (!p.empty() && p.front() == '/') p.remove_prefix(1);
  if (std::string host_bucket = HostBucket(head); !host_bucket.empty()) {
    *bucket = std::move(host_bucket);
    *key = std::string(p);
    return;
  }
  const size_t slash = p.find('/');
  *bucket = std::string(p.substr(0, slash));
  *key = slash == std::string_view::npos ? std::string() : std::string(p.substr(slash + 1));
}

bool Addressing::Claims(const http::Request& head) {
  const std::string& p = head.path;
  return !(p == "/healthz" || p == "/metrics" || p == "/v1" || p.rfind("/v1/", 0) == 0);
}

bool Addressing::StreamsBody(const http::Request& head) const {
  if (head.method != "PUT") return false;
  // Content, but not the document of one of an object's sub-resources, which is read whole.
  // (Any other parameter streams: PutObject and UploadPart read only the body they are given.)
  for (const char* document : {"acl", "tagging", "retention", "legal-hold"}) {
    if (head.query.count(document) > 0) return false;
  }
  std::string bucket, key;
  Split(head, &bucket, &key);
  return !key.empty();
}

Result<std::string> ValidateVirtualHostDomain(std::string_view domain) {
  std::string lower(domain);
  bool ok = !lower.empty() && lower.size() <= 253;
  bool letters = false;  // an address of digits and dots has no names under it
  for (char& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.');
    letters = letters || (c >= 'a' && c <= 'z') || c == '-';
  }
  // Labels of 1-63 characters that neither start nor end with '-'.
  for (size_t at = 0; ok && at <= lower.size();) {
    const size_t end = std::min(lower.find('.', at), lower.size());
    const std::string_view label = std::string_view(lower).substr(at, end - at);
    ok = !label.empty() && label.size() <= 63 && label.front() != '-' && label.back() != '-';
    at = end + 1;
  }
  if (!ok || !letters) {
    return InvalidArgument("the S3 domain '" + std::string(domain.substr(0, 64)) +
                           "' is not a host name: labels of letters, digits and inner '-' "
                           "joined by dots, no scheme, port or IP address (e.g. "
                           "s3.example.com)");
  }
  return lower;
}

}  // namespace tf::api
