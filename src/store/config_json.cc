#include "store/config_json.h"

#include <nlohmann/json.hpp>

namespace tf::store {

std::string QueueConfigToJson(const QueueConfig& c) {
  nlohmann::json j = {
      {"visibility_timeout_ms", c.visibility_timeout_ms},
      {"retention_ms", c.retention_ms},
      {"delay_ms", c.delay_ms},
      {"receive_wait_ms", c.receive_wait_ms},
      {"max_message_bytes", c.max_message_bytes},
      {"dead_letter_queue", c.dead_letter_queue},
      {"max_receive_count", c.max_receive_count},
      {"fifo", c.fifo},
      {"content_based_deduplication", c.content_based_deduplication},
  };
  if (!c.tags.empty()) j["tags"] = c.tags;
  if (!c.kept_attributes.empty()) j["kept_attributes"] = c.kept_attributes;
  return j.dump();
}

Result<QueueConfig> QueueConfigFromJson(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Internal("stored queue config is not a JSON object: " + text);
  QueueConfig c;
  try {
    c.visibility_timeout_ms = j.value("visibility_timeout_ms", c.visibility_timeout_ms);
    c.retention_ms = j.value("retention_ms", c.retention_ms);
    c.delay_ms = j.value("delay_ms", c.delay_ms);
    c.receive_wait_ms = j.value("receive_wait_ms", c.receive_wait_ms);
    c.max_message_bytes = j.value("max_message_bytes", c.max_message_bytes);
    c.dead_letter_queue = j.value("dead_letter_queue", c.dead_letter_queue);
    c.max_receive_count = j.value("max_receive_count", c.max_receive_count);
    c.fifo = j.value("fifo", c.fifo);
    c.content_based_deduplication =
        j.value("content_based_deduplication", c.content_based_deduplication);
    c.tags = j.value("tags", c.tags);
    c.kept_attributes = j.value("kept_attributes", c.kept_attributes);
  } catch (const nlohmann::json::exception& e) {
    return Internal(std::string("stored queue config has a field of the wrong type: ") + e.what());
  }
  return c;
}

}  // namespace tf::store
