#include "api/queue_json.h"

#include "base/time_format.h"

namespace tf::api {

Json QueueToJson(const store::Queue& q, const store::QueueCounts* counts) {
  const store::QueueConfig& c = q.config;
  Json j = {
      {"name", q.name},
      {"fifo", c.fifo},
      {"visibility_timeout_seconds", c.visibility_timeout_ms / kSecondMs},
      {"retention_seconds", c.retention_ms / kSecondMs},
      {"delay_seconds", c.delay_ms / kSecondMs},
      {"receive_wait_seconds", c.receive_wait_ms / kSecondMs},
      {"max_message_bytes", c.max_message_bytes},
      {"content_based_deduplication", c.content_based_deduplication},
      {"dead_letter_queue", c.dead_letter_queue.empty() ? Json(nullptr) : Json(c.dead_letter_queue)},
      {"max_receive_count", c.dead_letter_queue.empty() ? Json(nullptr) : Json(c.max_receive_count)},
      {"created_at", FormatTime(q.created_at)},
      {"updated_at", FormatTime(q.updated_at)},
  };
  if (counts != nullptr) {
    j["messages"] = {{"visible", counts->visible},
                     {"in_flight", counts->in_flight},
                     {"delayed", counts->delayed}};
  }
  return j;
}

Json MessageToJson(const queues::Message& m) {
  Json attributes = Json::object();
  for (const auto& [name, a] : m.attributes) {
    Json v = {{"type", a.data_type}};
    if (!a.string_value.empty()) v["string_value"] = a.string_value;
    if (!a.binary_value.empty()) v["binary_value"] = a.binary_value;
    attributes[name] = v;
  }
  Json j = {
      {"message_id", m.message_id},
      {"receipt_handle", m.receipt_handle},
      {"body", m.body},
      {"md5_of_body", m.body_md5},
      {"attributes", attributes},
      {"receive_count", m.receive_count},
      {"sent_at", FormatTime(m.sent_at)},
      {"first_received_at", FormatTime(m.first_received_at)},
      {"sequence", m.sequence},
  };
  if (!m.group_id.empty()) j["group_id"] = m.group_id;
  if (!m.deduplication_id.empty()) j["deduplication_id"] = m.deduplication_id;
  return j;
}

queues::QueueSettings ReadSettings(FieldReader& r) {
  queues::QueueSettings s;
  s.visibility_timeout_seconds = r.Int("visibility_timeout_seconds");
  s.retention_seconds = r.Int("retention_seconds");
  s.delay_seconds = r.Int("delay_seconds");
  s.receive_wait_seconds = r.Int("receive_wait_seconds");
  s.max_message_bytes = r.Int("max_message_bytes");
  s.dead_letter_queue = r.String("dead_letter_queue");
  if (auto n = r.Int("max_receive_count")) s.max_receive_count = static_cast<int>(std::clamp<int64_t>(*n, -1, 1'000'000));
  s.fifo = r.Bool("fifo");
  s.content_based_deduplication = r.Bool("content_based_deduplication");
  return s;
}

Result<queues::SendEntry> ReadSendEntry(const Json& entry, const std::string& where) {
  if (!entry.is_object()) return InvalidArgument("'" + where + "' must be an object");
  FieldReader r(entry, where);
  queues::SendEntry e;
  e.body = r.Required(r.String("body"), "body");
  e.delay_seconds = r.Int("delay_seconds");
  e.group_id = r.String("group_id").value_or("");
  e.deduplication_id = r.String("deduplication_id").value_or("");
  if (const Json* attrs = r.Value("attributes", Json::value_t::object)) {
    for (auto it = attrs->begin(); it != attrs->end(); ++it) {
      std::string name = where + ".attributes." + it.key();
      if (!it->is_object()) return InvalidArgument("'" + name + "' must be an object");
      FieldReader a(*it, name);
      queues::MessageAttribute attribute;
      attribute.data_type = a.Required(a.String("type"), "type");
      attribute.string_value = a.String("string_value").value_or("");
      attribute.binary_value = a.String("binary_value").value_or("");
      TF_RETURN_IF_ERROR(a.Finish());
      e.attributes[it.key()] = std::move(attribute);
    }
  }
  TF_RETURN_IF_ERROR(r.Finish());
  return e;
}

}  // namespace tf::api
