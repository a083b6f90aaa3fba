#include "sqs/names.h"

#include <cstdio>

#include "base/crypto.h"

namespace tf::sqs {

std::string AccountIdOf(std::string_view project_id) {
  // The first 8 bytes of the SHA-256 of the project id, as a number below 10^12.
  const std::string hex = Sha256Hex(project_id).substr(0, 16);
  const unsigned long long n = std::stoull(hex, nullptr, 16) % 1'000'000'000'000ULL;
  char out[16];
  std::snprintf(out, sizeof(out), "%012llu", n);
  return out;
}

std::string QueueUrl(std::string_view base_url, std::string_view account, std::string_view queue) {
  std::string url(base_url);
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url + "/" + std::string(account) + "/" + std::string(queue);
}

std::string QueueArn(std::string_view region, std::string_view account, std::string_view queue) {
  return "arn:aws:sqs:" + std::string(region) + ":" + std::string(account) + ":" +
         std::string(queue);
}

Result<std::string> QueueNameFromUrl(std::string_view url, std::string_view account) {
  if (url.empty()) return InvalidArgument("the queue URL is empty");
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) {
    if (url.find('/') != std::string_view::npos) {
      return InvalidArgument("'" + std::string(url) + "' is not a queue URL");
    }
    return std::string(url);
  }
  std::string_view path = url.substr(scheme + 3);
  const size_t slash = path.find('/');
  path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const size_t last = path.rfind('/');
  if (path.empty() || last == std::string_view::npos) {
    return InvalidArgument("'" + std::string(url) +
                           "' is not a queue URL: it needs the account and the queue name "
                           "(http://HOST:PORT/ACCOUNT/QUEUE)");
  }
  const std::string_view owner = path.substr(0, last);
  const std::string_view name = path.substr(last + 1);
  if (owner != account) return NotFound("'" + std::string(name) + "'");
  return std::string(name);
}

Result<std::string> QueueNameFromArn(std::string_view arn, std::string_view account) {
  // arn:aws:sqs:REGION:ACCOUNT:NAME
  std::string_view parts[6];
  std::string_view rest = arn;
  for (int i = 0; i < 6; ++i) {
    const size_t colon = i == 5 ? std::string_view::npos : rest.find(':');
    if (i < 5 && colon == std::string_view::npos) break;
    parts[i] = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  if (parts[0] != "arn" || parts[2] != "sqs" || parts[5].empty()) {
    return InvalidArgument("'" + std::string(arn) +
                           "' is not an SQS queue ARN (arn:aws:sqs:REGION:ACCOUNT:QUEUE)");
  }
  if (parts[4] != account) return NotFound("'" + std::string(parts[5]) + "'");
  return std::string(parts[5]);
}

}  // namespace tf::sqs
