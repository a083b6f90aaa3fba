#include "store/put_condition.h"

namespace tf::store {

Status PutConditionHolds(const std::string& key, const PutCondition& condition,
                         const std::optional<std::string>& current_etag) {
  if (condition.must_be_absent && current_etag) {
    return FailedPrecondition("object '" + key + "' already exists");
  }
  if (!condition.etag.empty()) {
    if (!current_etag) return FailedPrecondition("object '" + key + "' does not exist");
    if (*current_etag != condition.etag) {
      return FailedPrecondition("object '" + key + "' has ETag " + *current_etag + ", not " +
                                condition.etag);
    }
  }
  return OkStatus();
}

Status DeleteConditionHolds(const std::string& key, const std::string& if_match,
                            const std::string& current_etag) {
  if (if_match.empty() || if_match == "*" || if_match == current_etag) return OkStatus();
  return FailedPrecondition("object '" + key + "' has ETag " + current_etag + ", not " + if_match);
}

}  // namespace tf::store
