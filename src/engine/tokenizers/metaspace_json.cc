// The Metaspace parts of tokenizer.json: how spaces become "▁" (a Prepend + Replace normalizer,
// or the Metaspace pre-tokenizer) and how decoding undoes it.
#include <nlohmann/json.hpp>

#include "engine/tokenizers/tokenizer_parts.h"

namespace tf::engine {
namespace {

using Json = nlohmann::json;
using json_fields::Flag;
using json_fields::Str;
using json_fields::Type;

// j[key] is the integer `want`.
bool IntIs(const Json& j, const char* key, int64_t want) {
  return j.contains(key) && j[key].is_number_integer() && j[key].get<int64_t>() == want;
}

// {"type": "Replace", "pattern": {"String": from}, "content": to}
bool IsReplace(const Json& j, std::string_view from, std::string_view to) {
  return Type(j) == "Replace" && j.contains("pattern") && Str(j["pattern"], "String") == from &&
         Str(j, "content") == to;
}

// Sequence[Prepend "▁", Replace " " -> "▁"], in either order, or the Replace alone.
Status Normalizer(const Json& j, std::string_view file, MetaspaceOptions* o, bool* replaces) {
  *replaces = false;
  if (j.is_null()) return OkStatus();
  std::vector<Json> steps;
  if (Type(j) == "Sequence" && j.contains("normalizers") && j["normalizers"].is_array()) {
    steps.assign(j["normalizers"].begin(), j["normalizers"].end());
  } else {
    steps.push_back(j);
  }
  o->prepend = MetaspaceOptions::Prepend::kNever;
  for (const Json& step : steps) {
    if (Type(step) == "Prepend" && Str(step, "prepend") == kMetaspace) {
      o->prepend = MetaspaceOptions::Prepend::kAlways;
    } else if (IsReplace(step, " ", kMetaspace)) {
      *replaces = true;
    } else {
      return json_fields::Error(
          file, "normalizer", step.dump() + " is not supported (Prepend and Replace of \"▁\" are)");
    }
  }
  return OkStatus();
}

Status PreTokenizer(const Json& j, std::string_view file, MetaspaceOptions* o, bool* replaces) {
  if (j.is_null()) return OkStatus();
  if (Type(j) != "Metaspace" || Str(j, "replacement") != kMetaspace) {
    return json_fields::Error(file, "pre_tokenizer",
                              "type '" + Type(j) + "' is not supported with Metaspace BPE");
  }
  *replaces = true;
  o->prepend_only_if_missing = true;
  std::string scheme = Str(j, "prepend_scheme");
  if (scheme.empty()) scheme = Flag(j, "add_prefix_space", true) ? "always" : "never";
  if (scheme == "always") {
    o->prepend = MetaspaceOptions::Prepend::kAlways;
  } else if (scheme == "first") {
    o->prepend = MetaspaceOptions::Prepend::kFirst;
  } else if (scheme == "never") {
    o->prepend = MetaspaceOptions::Prepend::kNever;
  } else {
    return json_fields::Error(file, "pre_tokenizer.prepend_scheme", "'" + scheme + "' is unknown");
  }
  o->split = Flag(j, "split", true);
  return OkStatus();
}

// Sequence[Replace "▁" -> " ", ByteFallback, Fuse, Strip " " 1 0] (ByteFallback, Fuse and Strip
// optional), or the Metaspace decoder.
Status Decoder(const Json& j, std::string_view file, MetaspaceOptions* o) {
  if (Type(j) == "Metaspace" && Str(j, "replacement") == kMetaspace) {
    std::string scheme = Str(j, "prepend_scheme");
    o->strip_leading_space = scheme.empty() ? Flag(j, "add_prefix_space", true) : scheme != "never";
    o->decode_byte_fallback = false;
    return OkStatus();
  }
  if (Type(j) != "Sequence" || !j.contains("decoders") || !j["decoders"].is_array()) {
    return json_fields::Error(file, "decoder",
                              "type '" + Type(j) +
                                  "' is not supported with "
                                  "Metaspace BPE (Sequence and Metaspace are)");
  }
  bool replaces = false;
  o->decode_byte_fallback = false;
  o->strip_leading_space = false;
  for (const Json& step : j["decoders"]) {
    std::string type = Type(step);
    if (IsReplace(step, kMetaspace, " ")) {
      replaces = true;
    } else if (type == "ByteFallback") {
      o->decode_byte_fallback = true;
    } else if (type == "Fuse") {
      // Joining the pieces is what decoding does anyway.
    } else if (type == "Strip" && Str(step, "content") == " " && IntIs(step, "start", 1) &&
               IntIs(step, "stop", 0)) {
      o->strip_leading_space = true;
    } else {
      return json_fields::Error(file, "decoder.decoders", step.dump() + " is not supported");
    }
  }
  if (!replaces) return json_fields::Error(file, "decoder", "does not turn \"▁\" back into spaces");
  return OkStatus();
}

}  // namespace

Status ParseMetaspaceOptions(const Json& j, std::string_view file, MetaspaceOptions* o) {
  bool normalizer_replaces = false, pre_tokenizer_replaces = false;
  TF_RETURN_IF_ERROR(Normalizer(j.value("normalizer", Json()), file, o, &normalizer_replaces));
  TF_RETURN_IF_ERROR(
      PreTokenizer(j.value("pre_tokenizer", Json()), file, o, &pre_tokenizer_replaces));
  if (!normalizer_replaces && !pre_tokenizer_replaces) {
    return json_fields::Error(file, "normalizer",
                              "neither it nor the pre_tokenizer turns spaces into \"▁\"");
  }
  return Decoder(j.value("decoder", Json()), file, o);
}

}  // namespace tf::engine
