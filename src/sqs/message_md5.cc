#include "sqs/message_md5.h"

#include <cstdint>

#include "base/crypto.h"

namespace tf::sqs {
namespace {

void AppendLengthPrefixed(std::string& out, std::string_view bytes) {
  const auto n = static_cast<uint32_t>(bytes.size());
  out.push_back(static_cast<char>((n >> 24) & 0xff));
  out.push_back(static_cast<char>((n >> 16) & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  out.push_back(static_cast<char>(n & 0xff));
  out.append(bytes);
}

}  // namespace

std::string MessageAttributesMd5(const queues::MessageAttributes& attributes) {
  if (attributes.empty()) return "";
  std::string buffer;
  for (const auto& [name, value] : attributes) {  // a std::map: in name order
    AppendLengthPrefixed(buffer, name);
    AppendLengthPrefixed(buffer, value.data_type);
    if (value.data_type.rfind("Binary", 0) == 0) {
      buffer.push_back(2);
      AppendLengthPrefixed(buffer, Base64Decode(value.binary_value).value_or(std::string()));
    } else {
      buffer.push_back(1);
      AppendLengthPrefixed(buffer, value.string_value);
    }
  }
  return Md5Hex(buffer);
}

}  // namespace tf::sqs
