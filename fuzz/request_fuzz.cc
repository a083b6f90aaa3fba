// Fuzzes everything that reads a request before a service sees it: JSON bodies and their
// field readers, queue settings, message entries and attributes, receipt handles, query
// strings and percent-decoding. Any crash, hang or sanitizer report is a bug; a clean error
// Status is the expected answer to garbage.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/json_body.h"
#include "api/queue_json.h"
#include "http/url.h"
#include "queues/message.h"
#include "queues/settings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);

  (void)tf::queues::DecodeReceiptHandle(input, /*queue_id=*/7);
  (void)tf::queues::ValidateBody(input);
  (void)tf::http::ParseQuery(input);
  (void)tf::http::PercentDecode(input, true);

  auto body = tf::api::ParseJsonObject(input);
  if (!body.ok()) return 0;
  tf::api::FieldReader reader(*body);
  tf::queues::QueueSettings settings = tf::api::ReadSettings(reader);
  if (reader.Finish().ok()) {
    (void)tf::queues::ApplySettings({}, settings, /*creating=*/true);
  }
  if (auto it = body->find("messages"); it != body->end() && it->is_array()) {
    for (const auto& entry : *it) {
      auto e = tf::api::ReadSendEntry(entry, "messages[0]");
      if (!e.ok()) continue;
      (void)tf::queues::ValidateBody(e->body);
      (void)tf::queues::ValidateAttributes(e->attributes);
      (void)tf::queues::AttributesFromJson(tf::queues::AttributesToJson(e->attributes));
    }
  }
  return 0;
}
