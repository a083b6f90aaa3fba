// ListObjects' prefix, delimiter and start_after rules (store.h), shared by the back ends: each
// supplies only a query for a range of keys.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace tf::store {

// Keys from `from` (inclusive or not) up to, not including, `before` ("": no upper bound).
struct KeyRange {
  std::string from;
  bool inclusive = false;
  std::string before;
};

// Returns up to `limit` objects whose keys fall in `range`, by key.
using FetchObjects =
    std::function<Result<std::vector<ObjectRecord>>(const KeyRange& range, int limit)>;

Result<ObjectListing> ListObjectsWith(const ListObjectsOptions& options, const FetchObjects& fetch);

// The smallest byte string greater than every string that starts with `prefix`; "" if there is
// none (an empty prefix, or one made of 0xff bytes only).
std::string PrefixEnd(std::string_view prefix);

}  // namespace tf::store
