// How many tokens an OpenAI-shaped answer generated, for the gateway's tallies: a whole answer's
// usage, or, for a stream, its usage if one event carries it (stream_options.include_usage) and
// otherwise the events that carry text (one token each from the built-in engine, and close to
// it from other servers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tf::endpoints {

// usage.completion_tokens of a whole answer; 0 when it has none.
int64_t CompletionTokensOf(std::string_view answer);

class StreamTokenCounter {
 public:
  // Takes the stream's next bytes, split anywhere.
  void Feed(std::string_view piece);
  int64_t tokens() const { return usage_.value_or(events_with_text_); }

 private:
  void Event(std::string_view event);

  std::string partial_;  // an event not yet ended by its blank line
  int64_t events_with_text_ = 0;
  std::optional<int64_t> usage_;
};

}  // namespace tf::endpoints
