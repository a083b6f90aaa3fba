#include "datasets/dataset_index.h"

namespace tf::datasets {
namespace {

using nlohmann::json;

Result<int64_t> Int(const json& j, const char* field, const std::string& where) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    return InvalidArgument(where + field + ": must be a non-negative integer");
  }
  return it->get<int64_t>();
}

Result<std::string> Text(const json& j, const char* field, const std::string& where) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_string())
    return InvalidArgument(where + field + ": must be a string");
  return it->get<std::string>();
}

bool IsHex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

json DatasetIndexToJson(const DatasetIndex& index) {
  json shards = json::array();
  for (const ShardInfo& s : index.shards) {
    shards.push_back({{"ordinal", s.ordinal},
                      {"bucket", s.bucket},
                      {"key", s.key},
                      {"samples", s.samples},
                      {"bytes", s.bytes},
                      {"sha256", s.sha256},
                      {"first_sample", s.first_sample}});
  }
  return {{"name", index.name},
          {"created_at", index.created_at},
          {"samples", index.samples},
          {"bytes", index.bytes},
          {"shard_size", index.shard_size},
          {"format", index.format},
          {"shard_count", index.shards.size()},
          {"shards", shards}};
}

Result<DatasetIndex> DatasetIndexFromJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("dataset index: not a JSON object");
  }
  DatasetIndex out;
  TF_ASSIGN_OR_RETURN(out.name, Text(j, "name", "dataset index: "));
  if (auto c = j.find("created_at"); c != j.end() && c->is_string()) out.created_at = *c;
  TF_ASSIGN_OR_RETURN(out.samples, Int(j, "samples", "dataset index: "));
  TF_ASSIGN_OR_RETURN(out.bytes, Int(j, "bytes", "dataset index: "));
  TF_ASSIGN_OR_RETURN(out.shard_size, Int(j, "shard_size", "dataset index: "));
  TF_ASSIGN_OR_RETURN(out.format, Text(j, "format", "dataset index: "));
  auto shards = j.find("shards");
  if (shards == j.end() || !shards->is_array()) {
    return InvalidArgument("dataset index: shards: must be an array");
  }
  int64_t next_sample = 0, bytes = 0;
  for (size_t i = 0; i < shards->size(); ++i) {
    const json& s = (*shards)[i];
    std::string where = "dataset index: shards[" + std::to_string(i) + "].";
    if (!s.is_object())
      return InvalidArgument(where.substr(0, where.size() - 1) + ": not an object");
    ShardInfo info;
    TF_ASSIGN_OR_RETURN(info.ordinal, Int(s, "ordinal", where));
    TF_ASSIGN_OR_RETURN(info.bucket, Text(s, "bucket", where));
    TF_ASSIGN_OR_RETURN(info.key, Text(s, "key", where));
    TF_ASSIGN_OR_RETURN(info.samples, Int(s, "samples", where));
    TF_ASSIGN_OR_RETURN(info.bytes, Int(s, "bytes", where));
    TF_ASSIGN_OR_RETURN(info.sha256, Text(s, "sha256", where));
    TF_ASSIGN_OR_RETURN(info.first_sample, Int(s, "first_sample", where));
    if (info.ordinal != static_cast<int64_t>(i))
      return InvalidArgument(where + "ordinal: out of order");
    if (info.samples == 0) return InvalidArgument(where + "samples: a shard holds at least one");
    if (info.first_sample != next_sample) {
      return InvalidArgument(where + "first_sample: " + std::to_string(info.first_sample) +
                             ", the shards before it hold " + std::to_string(next_sample));
    }
    if (!IsHex64(info.sha256)) return InvalidArgument(where + "sha256: not 64 hex digits");
    if (info.samples > INT64_MAX - next_sample || info.bytes > INT64_MAX - bytes) {
      return InvalidArgument(where + "samples: too many");
    }
    next_sample += info.samples;
    bytes += info.bytes;
    out.shards.push_back(std::move(info));
  }
  if (next_sample != out.samples || bytes != out.bytes) {
    return InvalidArgument("dataset index: samples and bytes do not add up to its shards'");
  }
  return out;
}

Status ValidateDatasetName(std::string_view name) {
  auto fail = [&](const std::string& why) {
    return InvalidArgument("dataset name '" + std::string(name) + "' " + why +
                           " (names are 1-63 of a-z, 0-9, '.', '_', '-', starting with a letter "
                           "or digit)");
  };
  if (name.empty() || name.size() > 63) return fail("has the wrong length");
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) {
      return fail("has '" + std::string(1, c) + "' at position " + std::to_string(i + 1));
    }
  }
  return OkStatus();
}

}  // namespace tf::datasets
