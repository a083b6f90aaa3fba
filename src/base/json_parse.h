// The one strict JSON parser for what arrives from outside (request bodies of the native API
// and of the engine's OpenAI server): nlohmann-json's parser, fed through a handler of our own
// that refuses what nlohmann accepts silently and what costs more than a request may.
//
//   - a key that appears twice in one object (nlohmann keeps the last, so two readers of the
//     same body could disagree about it);
//   - nesting deeper than JsonLimits::max_depth arrays and objects (kMaxJsonDepth by default).
//     Without a limit, 8 MB of '[' took 1.1 s and 700 MB of memory to parse.
//
// Errors are kInvalidArgument, and say what was wrong and where: the byte offset for bad syntax,
// the path ("messages[2].content") for a duplicate key or nesting too deep.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/status.h"

namespace tf {

// Deep enough for every document the API defines (the deepest, a chat request with tool calls,
// nests 6), shallow enough that a hostile body costs microseconds.
inline constexpr size_t kMaxJsonDepth = 64;

struct JsonLimits {
  size_t max_depth = kMaxJsonDepth;  // arrays and objects open at once
};

// Parses `text` as one JSON value (of any type). `what` names the text in messages
// ("request body").
Result<nlohmann::json> ParseJsonStrict(std::string_view text, std::string_view what,
                                       JsonLimits limits = {});

}  // namespace tf
