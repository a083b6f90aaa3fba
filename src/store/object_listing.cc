#include "store/object_listing.h"

#include <optional>

namespace tf::store {
namespace {

// The common prefix `key` rolls up into, if any. `key` starts with `prefix`.
std::optional<std::string> CommonPrefix(const std::string& key, const std::string& prefix,
                                        const std::string& delimiter) {
  if (delimiter.empty() || key.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  size_t at = key.find(delimiter, prefix.size());
  if (at == std::string::npos) return std::nullopt;
  return key.substr(0, at + delimiter.size());
}

}  // namespace

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xff) end.pop_back();
  if (!end.empty()) end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  return end;
}

Result<ObjectListing> ListObjectsWith(const ListObjectsOptions& options,
                                      const FetchObjects& fetch) {
  if (options.limit < 1) return InvalidArgument("a listing's limit must be at least 1");
  const std::string& prefix = options.prefix;
  ObjectListing out;
  KeyRange range{options.start_after, false, PrefixEnd(prefix)};
  if (auto group = CommonPrefix(options.start_after, prefix, options.delimiter);
      group && *group == options.start_after) {
    range.from = PrefixEnd(*group);  // skip every key under the group
    range.inclusive = true;
    if (range.from.empty()) return out;
  }
  if (range.from < prefix) range = {prefix, true, range.before};

  int count = 0;
  std::string last;
  for (;;) {
    const int want = options.limit - count + 1;  // one more than fits: is there more?
    TF_ASSIGN_OR_RETURN(std::vector<ObjectRecord> batch, fetch(range, want));
    bool skipped = false;
    for (ObjectRecord& object : batch) {
      if (count == options.limit) {
        out.truncated = true;
        out.next_start_after = last;
        return out;
      }
      ++count;
      if (auto group = CommonPrefix(object.key, prefix, options.delimiter)) {
        out.common_prefixes.push_back(*group);
        last = *group;
        range = {PrefixEnd(*group), true, range.before};
        if (range.from.empty()) return out;
        skipped = true;  // the rest of this batch may lie under the group: fetch again
        break;
      }
      last = object.key;
      range = {object.key, false, range.before};
      out.objects.push_back(std::move(object));
    }
    if (!skipped && static_cast<int>(batch.size()) < want) return out;
  }
}

}  // namespace tf::store
