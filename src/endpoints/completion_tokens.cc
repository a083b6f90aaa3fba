#include "endpoints/completion_tokens.h"

#include <limits>
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

// Finds usage.completion_tokens in a whole answer as it is read, without building the document
// (a gateway relaying small answers spent more on that than on anything else of its own).
class UsageFinder final : public nlohmann::json_sax<Json> {
 public:
  std::optional<int64_t> tokens() const { return tokens_; }

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t value) override { return Count(value); }
  bool number_unsigned(number_unsigned_t value) override {
    if (value > static_cast<number_unsigned_t>(std::numeric_limits<int64_t>::max())) return Value();
    return Count(static_cast<int64_t>(value));
  }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(size_t) override { return Open(true); }
  bool start_array(size_t) override { return Open(false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& name) override {
    // The only keys that matter: "usage" in the answer, and "completion_tokens" in its usage.
    if (depth_ == 1) {
      in_usage_key_ = name == "usage";
      if (in_usage_key_) tokens_.reset();  // a later "usage" replaces an earlier one
    }
    if (depth_ == 2 && in_usage_) at_tokens_ = name == "completion_tokens";
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) override {
    tokens_.reset();  // not JSON: no usage, as for a document that failed to parse
    return false;
  }

 private:
  bool Open(bool object) {
    // The usage object: an object that is the value of the answer's "usage".
    if (depth_ == 1 && in_usage_key_ && object) in_usage_ = true;
    at_tokens_ = false;
    ++depth_;
    return true;
  }
  bool Close() {
    if (--depth_ == 1) in_usage_ = false;
    return true;
  }
  bool Count(int64_t value) {
    if (depth_ == 2 && in_usage_ && at_tokens_) tokens_ = value;  // the last, if repeated
    return Value();
  }
  bool Value() {
    at_tokens_ = false;
    return true;
  }

  int depth_ = 0;
  bool in_usage_key_ = false;  // the answer's current key is "usage"
  bool in_usage_ = false;      // inside the answer's usage object
  bool at_tokens_ = false;     // the usage's current key is "completion_tokens"
  std::optional<int64_t> tokens_;
};

}  // namespace

int64_t CompletionTokensOf(std::string_view answer) {
  UsageFinder finder;
  if (!Json::sax_parse(answer, &finder, nlohmann::json::input_format_t::json, /*strict=*/true)) {
    return 0;
  }
  return finder.tokens().value_or(0);
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
