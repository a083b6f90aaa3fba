#include "api/s3/conditions.h"

#include <cctype>

#include "api/object_http.h"

namespace tf::api {

bool EtagListMatches(std::string_view list, const std::string& etag) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.substr(0, 2) == "W/") item.remove_prefix(2);
    if (item.size() >= 2 && item.front() == '"' && item.back() == '"') {
      item = item.substr(1, item.size() - 2);
    }
    if (item == "*" || item == etag) return true;
  }
  return false;
}

ObjectConditions ObjectConditions::OfRequest(const http::Request& request) {
  return {request.Header("If-Match"), request.Header("If-None-Match"),
          request.Header("If-Modified-Since"), request.Header("If-Unmodified-Since")};
}

ObjectConditions ObjectConditions::OfCopySource(const http::Request& request) {
  return {request.Header("x-amz-copy-source-if-match"),
          request.Header("x-amz-copy-source-if-none-match"),
          request.Header("x-amz-copy-source-if-modified-since"),
          request.Header("x-amz-copy-source-if-unmodified-since")};
}

ConditionOutcome EvaluateConditions(const ObjectConditions& c, const objects::ObjectInfo& info) {
  // Last-Modified is sent in whole seconds, and dates are compared as sent.
  const TimeMs modified = info.modified_at / 1000 * 1000;
  if (!c.if_match.empty()) {
    if (!EtagListMatches(c.if_match, info.etag)) return {ConditionOutcome::kFailed, "If-Match"};
  } else if (!c.if_unmodified_since.empty()) {
    std::optional<TimeMs> since = ParseHttpDate(c.if_unmodified_since);
    if (since && modified > *since) return {ConditionOutcome::kFailed, "If-Unmodified-Since"};
  }
  if (!c.if_none_match.empty()) {
    if (EtagListMatches(c.if_none_match, info.etag)) {
      return {ConditionOutcome::kNotModified, "If-None-Match"};
    }
  } else if (!c.if_modified_since.empty()) {
    std::optional<TimeMs> since = ParseHttpDate(c.if_modified_since);
    if (since && modified <= *since) return {ConditionOutcome::kNotModified, "If-Modified-Since"};
  }
  return {};
}

s3::Error PreconditionFailed(const std::string& condition) {
  return s3::MakeError("PreconditionFailed",
                       "At least one of the pre-conditions you specified did not hold")
      .With("Condition", condition);
}

s3::Error CopySourcePreconditionFailed(const ConditionOutcome& outcome) {
  std::string header = "x-amz-copy-source-" + outcome.condition;
  for (char& c : header) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return PreconditionFailed(header);
}

namespace {

// The one ETag an If-Match of a write or delete names, without its quotes ("" for none).
s3::Outcome<std::string> EtagOfIfMatch(std::string_view match) {
  if (match.empty()) return std::string();
  if (match.size() >= 2 && match.front() == '"' && match.back() == '"') {
    match = match.substr(1, match.size() - 2);
  }
  if (match.empty() || match == "*" || match.find_first_of("\",") != std::string_view::npos) {
    return s3::MakeError("NotImplemented",
                         "A header you provided implies functionality that is not implemented: "
                         "If-Match on a write takes one ETag")
        .With("Header", "If-Match");
  }
  return std::string(match);
}

}  // namespace

s3::Outcome<store::PutCondition> PutConditionOf(const http::Request& request) {
  store::PutCondition out;
  if (const std::string& none = request.Header("If-None-Match"); !none.empty()) {
    if (none != "*") {
      return s3::MakeError("NotImplemented",
                           "A header you provided implies functionality that is not implemented: "
                           "If-None-Match on a write takes only '*'")
          .With("Header", "If-None-Match");
    }
    out.must_be_absent = true;
  }
  if (std::string_view match = request.Header("If-Match"); !match.empty()) {
    s3::Outcome<std::string> etag = EtagOfIfMatch(match);
    if (!etag.ok()) return etag.error();
    out.etag = std::move(*etag);
  }
  return out;
}

s3::Outcome<std::string> DeleteConditionOf(const http::Request& request) {
  // Deleting regardless of a condition the client relies on would be worse than refusing it.
  for (const char* header :
       {"If-None-Match", "x-amz-if-match-last-modified-time", "x-amz-if-match-size"}) {
    if (!request.Header(header).empty()) {
      return s3::MakeError("NotImplemented",
                           "A header you provided implies functionality that is not implemented: "
                           "a delete takes If-Match, not " +
                               std::string(header))
          .With("Header", header);
    }
  }
  std::string_view match = request.Header("If-Match");
  if (match == "*") return std::string(match);
  return EtagOfIfMatch(match);
}

s3::Error PutConditionError(const Status& failed, const store::PutCondition& condition) {
  if (!condition.etag.empty() && failed.message().find("does not exist") != std::string::npos) {
    return s3::MakeError("NoSuchKey", "The specified key does not exist.");
  }
  return PreconditionFailed(condition.must_be_absent &&
                                    failed.message().find("already exists") != std::string::npos
                                ? "If-None-Match"
                                : "If-Match");
}

}  // namespace tf::api
