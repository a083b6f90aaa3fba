#include "endpoints/completion_tokens.h"

#include <nlohmann/json.hpp>

namespace tf::endpoints {
namespace {

using Json = nlohmann::json;

std::optional<int64_t> UsageOf(const Json& answer) {
  auto usage = answer.find("usage");
  if (usage == answer.end() || !usage->is_object()) return std::nullopt;
  auto tokens = usage->find("completion_tokens");
  if (tokens == usage->end() || !tokens->is_number_integer()) return std::nullopt;
  return tokens->get<int64_t>();
}

bool NonEmptyString(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

}  // namespace

int64_t CompletionTokensOf(std::string_view answer) {
  Json parsed = Json::parse(answer, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return 0;
  return UsageOf(parsed).value_or(0);
}

void StreamTokenCounter::Feed(std::string_view piece) {
  partial_.append(piece);
  size_t start = 0;
  for (;;) {
    size_t end = partial_.find("\n\n", start);
    if (end == std::string::npos) break;
    Event(std::string_view(partial_).substr(start, end - start));
    start = end + 2;
  }
  partial_.erase(0, start);
}

void StreamTokenCounter::Event(std::string_view event) {
  constexpr std::string_view kData = "data:";
  if (event.substr(0, kData.size()) != kData) return;
  event.remove_prefix(kData.size());
  Json parsed = Json::parse(event, nullptr, /*allow_exceptions=*/false);  // [DONE]: discarded
  if (!parsed.is_object()) return;
  if (auto usage = UsageOf(parsed)) usage_ = usage;
  auto choices = parsed.find("choices");
  if (choices == parsed.end() || !choices->is_array() || choices->empty()) return;
  const Json& choice = (*choices)[0];
  if (!choice.is_object()) return;
  auto delta = choice.find("delta");
  bool text = NonEmptyString(choice, "text") ||
              (delta != choice.end() && delta->is_object() && NonEmptyString(*delta, "content"));
  if (text) ++events_with_text_;
}

}  // namespace tf::endpoints
