#include "queues/message.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/crypto.h"

namespace tf::queues {
namespace {

bool AllowedCodePoint(uint32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

Status ValidateBody(const std::string& body) {
  if (body.empty()) return InvalidArgument("message body must not be empty");
  const auto* p = reinterpret_cast<const unsigned char*>(body.data());
  size_t n = body.size();
  for (size_t i = 0; i < n;) {
    uint32_t c = p[i];
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len != 0 && i + len <= n;
    if (ok && len > 1) {
      c &= (0x7F >> len);
      for (size_t k = 1; k < len; ++k) {
        if ((p[i + k] & 0xC0) != 0x80) ok = false;
        c = (c << 6) | (p[i + k] & 0x3F);
      }
      // Reject overlong encodings.
      static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      if (ok && c < kMin[len]) ok = false;
    }
    if (!ok) return InvalidArgument("message body is not valid UTF-8 at byte " + std::to_string(i));
    if (!AllowedCodePoint(c)) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "U+%04X", c);
      return InvalidArgument("message body contains " + std::string(hex) + " at byte " +
                             std::to_string(i) + ", which SQS does not allow");
    }
    i += len;
  }
  return OkStatus();
}

Status ValidateAttributes(const MessageAttributes& attributes) {
  if (attributes.size() > static_cast<size_t>(kMaxMessageAttributes)) {
    return InvalidArgument("a message may have at most 10 attributes, got " +
                           std::to_string(attributes.size()));
  }
  for (const auto& [name, value] : attributes) {
    if (name.empty() || name.size() > 256) {
      return InvalidArgument("attribute name must be 1 to 256 characters: '" + name + "'");
    }
    for (char c : name) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || c == '.';
      if (!ok)
        return InvalidArgument("attribute name '" + name +
                               "' has a character outside [A-Za-z0-9_.-]");
    }
    if (name.front() == '.' || name.back() == '.' || name.find("..") != std::string::npos) {
      return InvalidArgument("attribute name '" + name +
                             "' must not start or end with '.' or hold '..'");
    }
    if (StartsWith(name, "AWS.") || StartsWith(name, "Amazon.")) {
      return InvalidArgument("attribute name '" + name + "' uses a reserved prefix");
    }
    std::string base = value.data_type.substr(0, value.data_type.find('.'));
    if (base == "String" || base == "Number") {
      if (value.string_value.empty()) {
        return InvalidArgument("attribute '" + name + "' of type " + value.data_type +
                               " needs a string value");
      }
      TF_RETURN_IF_ERROR(ValidateBody(value.string_value).WithContext("attribute '" + name + "'"));
      if (base == "Number" &&
          value.string_value.find_first_not_of("0123456789+-.eE") != std::string::npos) {
        return InvalidArgument("attribute '" + name + "' is a Number but its value '" +
                               value.string_value + "' is not a number");
      }
    } else if (base == "Binary") {
      if (value.binary_value.empty()) {
        return InvalidArgument("attribute '" + name + "' of type Binary needs a binary value");
      }
      if (!Base64Decode(value.binary_value)) {
        return InvalidArgument("attribute '" + name +
                               "' of type Binary: its value is not base64 (RFC 4648, padded)");
      }
    } else {
      return InvalidArgument("attribute '" + name + "' has data type '" + value.data_type +
                             "'; use String, Number or Binary");
    }
  }
  return OkStatus();
}

int64_t MessageSize(const SendEntry& entry) {
  int64_t size = static_cast<int64_t>(entry.body.size());
  for (const auto& [name, value] : entry.attributes) {
    size += static_cast<int64_t>(name.size() + value.data_type.size() + value.string_value.size() +
                                 value.binary_value.size());
  }
  return size;
}

std::string AttributesToJson(const MessageAttributes& attributes) {
  if (attributes.empty()) return "";
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, v] : attributes) {
    nlohmann::json a = {{"type", v.data_type}};
    if (!v.string_value.empty()) a["string"] = v.string_value;
    if (!v.binary_value.empty()) a["binary"] = v.binary_value;
    j[name] = a;
  }
  return j.dump();
}

MessageAttributes AttributesFromJson(const std::string& json) {
  MessageAttributes out;
  if (json.empty()) return out;
  auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return out;
  for (auto& [name, a] : j.items()) {
    if (!a.is_object()) continue;
    out[name] = MessageAttribute{a.value("type", ""), a.value("string", ""), a.value("binary", "")};
  }
  return out;
}

std::string EncodeReceiptHandle(int64_t queue_id, const store::Receipt& r) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "rh2.%llx.%llx.%016llx", static_cast<unsigned long long>(queue_id),
                static_cast<unsigned long long>(r.sequence),
                static_cast<unsigned long long>(r.receipt));
  return buf;
}

Result<store::Receipt> DecodeReceiptHandle(const std::string& handle, int64_t queue_id) {
  auto bad = [&] {
    return InvalidArgument("receipt handle '" + handle.substr(0, 64) +
                           "' is not one this server issued");
  };
  // The dot-separated hex fields after the version: 1 to 16 digits each.
  auto fields = [&](size_t from) {
    std::vector<uint64_t> out;
    while (from <= handle.size()) {
      size_t dot = std::min(handle.find('.', from), handle.size());
      size_t digits = dot - from;
      if (digits == 0 || digits > 16) return std::vector<uint64_t>{};
      uint64_t value = 0;
      for (size_t i = from; i < dot; ++i) {
        char c = handle[i];
        int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (d < 0) return std::vector<uint64_t>{};
        value = (value << 4) | static_cast<uint64_t>(d);
      }
      out.push_back(value);
      from = dot + 1;
    }
    return out;
  };
  std::vector<uint64_t> f;
  if (handle.rfind("rh2.", 0) == 0) {
    f = fields(4);
    if (f.size() != 3) return bad();
    if (f[0] != static_cast<uint64_t>(queue_id)) {
      return InvalidArgument("receipt handle '" + handle.substr(0, 64) +
                             "' was issued for another queue");
    }
    f.erase(f.begin());
  } else if (handle.rfind("rh1.", 0) == 0) {
    f = fields(4);
    if (f.size() != 2) return bad();
  } else {
    return bad();
  }
  if (f[0] > static_cast<uint64_t>(INT64_MAX) || f[1] == 0) return bad();
  return store::Receipt{static_cast<int64_t>(f[0]), f[1]};
}

std::string NewMessageId() {
  unsigned char b[16];
  RandomBytes(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  id.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) id.push_back('-');
    id.push_back(kHex[b[i] >> 4]);
    id.push_back(kHex[b[i] & 15]);
  }
  return id;
}

}  // namespace tf::queues
