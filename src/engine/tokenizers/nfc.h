// Unicode normalization form C (canonical decomposition, then canonical composition), as the
// tokenizers' NFC normalizer applies it (Qwen2).
#pragma once

#include <string>
#include <string_view>

namespace tf::engine::unicode {

// The NFC form of valid UTF-8 `text`.
std::string ToNfc(std::string_view text);

}  // namespace tf::engine::unicode
