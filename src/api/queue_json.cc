#include "api/queue_json.h"

#include "api/error_json.h"
#include "api/json_out.h"
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
      {"dead_letter_queue",
       c.dead_letter_queue.empty() ? Json(nullptr) : Json(c.dead_letter_queue)},
      {"max_receive_count",
       c.dead_letter_queue.empty() ? Json(nullptr) : Json(c.max_receive_count)},
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

namespace {

void WriteMessage(JsonOut& j, const queues::Message& m) {
  j.BeginObject();
  j.Key("attributes").BeginObject();
  for (const auto& [name, a] : m.attributes) {
    j.Key(name).BeginObject();
    if (!a.binary_value.empty()) j.Key("binary_value").String(a.binary_value);
    if (!a.string_value.empty()) j.Key("string_value").String(a.string_value);
    j.Key("type").String(a.data_type);
    j.EndObject();
  }
  j.EndObject();
  j.Key("body").String(m.body);
  if (!m.deduplication_id.empty()) j.Key("deduplication_id").String(m.deduplication_id);
  j.Key("first_received_at").Time(m.first_received_at);
  if (!m.group_id.empty()) j.Key("group_id").String(m.group_id);
  j.Key("md5_of_body").String(m.body_md5);
  j.Key("message_id").String(m.message_id);
  j.Key("receipt_handle").String(m.receipt_handle);
  j.Key("receive_count").Int(m.receive_count);
  j.Key("sent_at").Time(m.sent_at);
  j.Key("sequence").Int(m.sequence);
  j.EndObject();
}

// {"error": ErrorJson(s), "ok": false}
void WriteFailure(JsonOut& j, const Status& s) {
  j.BeginObject().Key("error").Value(ErrorJson(s)).Key("ok").Bool(false).EndObject();
}

}  // namespace

std::string ReceivedJson(const std::vector<queues::Message>& messages) {
  std::string out;
  size_t guess = 32;
  for (const auto& m : messages) guess += m.body.size() + 320;
  out.reserve(guess);
  JsonOut j(out);
  j.BeginObject().Key("messages").BeginArray();
  for (const auto& m : messages) WriteMessage(j, m);
  j.EndArray().EndObject();
  out.push_back('\n');
  return out;
}

std::string SentJson(const std::vector<queues::SendOutcome>& outcomes) {
  std::string out;
  out.reserve(32 + outcomes.size() * 160);
  JsonOut j(out);
  j.BeginObject().Key("results").BeginArray();
  for (const auto& o : outcomes) {
    if (!o.status.ok()) {
      WriteFailure(j, o.status);
      continue;
    }
    j.BeginObject()
        .Key("duplicate")
        .Bool(o.duplicate)
        .Key("md5_of_body")
        .String(o.body_md5)
        .Key("message_id")
        .String(o.message_id)
        .Key("ok")
        .Bool(true)
        .Key("sequence")
        .Int(o.sequence)
        .EndObject();
  }
  j.EndArray().EndObject();
  out.push_back('\n');
  return out;
}

std::string BatchResultsJson(const std::vector<Status>& statuses) {
  std::string out;
  out.reserve(32 + statuses.size() * 16);
  JsonOut j(out);
  j.BeginObject().Key("results").BeginArray();
  for (const Status& s : statuses) {
    if (s.ok()) {
      j.BeginObject().Key("ok").Bool(true).EndObject();
    } else {
      WriteFailure(j, s);
    }
  }
  j.EndArray().EndObject();
  out.push_back('\n');
  return out;
}

queues::QueueSettings ReadSettings(FieldReader& r) {
  queues::QueueSettings s;
  s.visibility_timeout_seconds = r.Int("visibility_timeout_seconds");
  s.retention_seconds = r.Int("retention_seconds");
  s.delay_seconds = r.Int("delay_seconds");
  s.receive_wait_seconds = r.Int("receive_wait_seconds");
  s.max_message_bytes = r.Int("max_message_bytes");
  s.dead_letter_queue = r.String("dead_letter_queue");
  if (auto n = r.Int("max_receive_count"))
    s.max_receive_count = static_cast<int>(std::clamp<int64_t>(*n, -1, 1'000'000));
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
