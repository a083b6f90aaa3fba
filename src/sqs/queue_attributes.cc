#include "sqs/queue_attributes.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "sqs/names.h"

namespace tf::sqs {
namespace {

// Attributes SQS has that this server keeps as given and answers back, without acting on them:
// access policies (a project is the unit of access here), encryption settings (the store's disk
// is the operator's), FIFO throughput modes (no quotas here) and who may use a queue as its
// dead-letter queue.
constexpr std::string_view kKept[] = {
    "Policy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "DeduplicationScope",
    "FifoThroughputLimit",
    "RedriveAllowPolicy",
};

// Attributes only GetQueueAttributes answers.
constexpr std::string_view kReadOnly[] = {
    "QueueArn",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
};

constexpr std::string_view kSettable[] = {
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "RedrivePolicy",
    "FifoQueue",
    "ContentBasedDeduplication",
};

template <size_t N>
bool In(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

Error InvalidAttributeValue(const std::string& name, const std::string& why) {
  return MakeError("InvalidAttributeValue", "Invalid value for the parameter " + name + ": " + why);
}

Outcome<int64_t> Integer(const std::string& name, const std::string& value) {
  if (value.empty() || value.size() > 12 ||
      !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return InvalidAttributeValue(name, "'" + value + "' is not a whole number of seconds or bytes");
  }
  return static_cast<int64_t>(std::stoll(value));
}

Outcome<bool> Boolean(const std::string& name, const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  return InvalidAttributeValue(name, "'" + value + "' is neither true nor false");
}

// {"deadLetterTargetArn": "arn:aws:sqs:...", "maxReceiveCount": 5 or "5"}; "" removes the policy.
std::optional<Error> ReadRedrivePolicy(const std::string& text, const QueueNaming& naming,
                                       queues::QueueSettings& settings) {
  const std::string name = "RedrivePolicy";
  if (text.empty()) {
    settings.dead_letter_queue = "";
    return std::nullopt;
  }
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("deadLetterTargetArn") ||
      !j["deadLetterTargetArn"].is_string() || !j.contains("maxReceiveCount")) {
    return InvalidAttributeValue(
        name, "a JSON object with deadLetterTargetArn and maxReceiveCount is needed");
  }
  auto target = QueueNameFromArn(j["deadLetterTargetArn"].get<std::string>(), naming.account);
  if (!target.ok()) {
    return target.status().code() == StatusCode::kNotFound
               ? InvalidAttributeValue(name, "the dead-letter target " + target.status().message() +
                                                 " is not a queue of this account")
               : InvalidAttributeValue(name, target.status().message());
  }
  const nlohmann::json& count = j["maxReceiveCount"];
  int64_t n = -1;
  if (count.is_number_integer()) {
    n = count.get<int64_t>();
  } else if (count.is_string()) {
    auto parsed = Integer(name, count.get<std::string>());
    if (parsed.ok()) n = *parsed;
  }
  if (n < 1 || n > queues::kMaxReceiveCountLimit) {
    return InvalidAttributeValue(name, "maxReceiveCount must be a number from 1 to 1000");
  }
  settings.dead_letter_queue = *target;
  settings.max_receive_count = static_cast<int>(n);
  return std::nullopt;
}

std::string Seconds(TimeMs ms) { return std::to_string(ms / kSecondMs); }

// The queue service's names of settings, and SQS's.
constexpr std::pair<std::string_view, std::string_view> kServiceNames[] = {
    {"visibility_timeout_seconds", "VisibilityTimeout"},
    {"retention_seconds", "MessageRetentionPeriod"},
    {"receive_wait_seconds", "ReceiveMessageWaitTimeSeconds"},
    {"delay_seconds", "DelaySeconds"},
    {"max_message_bytes", "MaximumMessageSize"},
    {"max_receive_count", "RedrivePolicy's maxReceiveCount"},
    {"content_based_deduplication", "ContentBasedDeduplication"},
    {"dead_letter_queue", "RedrivePolicy's deadLetterTargetArn"},
};

}  // namespace

Error SettingsError(const Status& status) {
  if (status.code() != StatusCode::kInvalidArgument) return FromStatus(status);
  std::string message = status.message();
  for (const auto& [service, sqs] : kServiceNames) {
    for (size_t at = message.find(service); at != std::string::npos;
         at = message.find(service, at + sqs.size())) {
      message.replace(at, service.size(), sqs);
    }
  }
  return MakeError("InvalidAttributeValue", "Invalid value for an attribute: " + message);
}

Outcome<queues::QueueSettings> SettingsFromAttributes(const AttributeMap& attributes,
                                                      const QueueNaming& naming, bool creating) {
  queues::QueueSettings s;
  for (const auto& [name, value] : attributes) {
    if (In(kKept, name)) {
      s.kept_attributes[name] = value;
      continue;
    }
    if (!In(kSettable, name)) {
      return MakeError("InvalidAttributeName", In(kReadOnly, name)
                                                   ? "The attribute " + name + " cannot be set."
                                                   : "Unknown Attribute " + name + ".");
    }
    if (name == "RedrivePolicy") {
      if (auto bad = ReadRedrivePolicy(value, naming, s)) return *bad;
    } else if (name == "FifoQueue" || name == "ContentBasedDeduplication") {
      auto b = Boolean(name, value);
      if (!b.ok()) return b.error();
      if (name == "FifoQueue") {
        if (!creating) {
          return MakeError("InvalidAttributeName",
                           "FifoQueue can be given only when a queue is created.");
        }
        s.fifo = *b;
      } else {
        s.content_based_deduplication = *b;
      }
    } else {
      auto n = Integer(name, value);
      if (!n.ok()) return n.error();
      if (name == "DelaySeconds") s.delay_seconds = *n;
      if (name == "MaximumMessageSize") s.max_message_bytes = *n;
      if (name == "MessageRetentionPeriod") s.retention_seconds = *n;
      if (name == "ReceiveMessageWaitTimeSeconds") s.receive_wait_seconds = *n;
      if (name == "VisibilityTimeout") s.visibility_timeout_seconds = *n;
    }
  }
  return s;
}

AttributeMap AttributesOf(const store::Queue& queue, const store::QueueCounts* counts,
                          const QueueNaming& naming) {
  const store::QueueConfig& c = queue.config;
  AttributeMap a = c.kept_attributes;
  a["QueueArn"] = QueueArn(naming.region, naming.account, queue.name);
  a["DelaySeconds"] = Seconds(c.delay_ms);
  a["MaximumMessageSize"] = std::to_string(c.max_message_bytes);
  a["MessageRetentionPeriod"] = Seconds(c.retention_ms);
  a["ReceiveMessageWaitTimeSeconds"] = Seconds(c.receive_wait_ms);
  a["VisibilityTimeout"] = Seconds(c.visibility_timeout_ms);
  a["CreatedTimestamp"] = Seconds(queue.created_at);
  a["LastModifiedTimestamp"] = Seconds(queue.updated_at);
  if (!c.dead_letter_queue.empty()) {
    nlohmann::json policy = {
        {"deadLetterTargetArn", QueueArn(naming.region, naming.account, c.dead_letter_queue)},
        {"maxReceiveCount", c.max_receive_count}};
    a["RedrivePolicy"] = policy.dump();
  }
  if (c.fifo) {
    a["FifoQueue"] = "true";
    a["ContentBasedDeduplication"] = c.content_based_deduplication ? "true" : "false";
  }
  if (counts != nullptr) {
    a["ApproximateNumberOfMessages"] = std::to_string(counts->visible);
    a["ApproximateNumberOfMessagesNotVisible"] = std::to_string(counts->in_flight);
    a["ApproximateNumberOfMessagesDelayed"] = std::to_string(counts->delayed);
  }
  return a;
}

Outcome<AttributeMap> SelectAttributes(const AttributeMap& all,
                                       const std::vector<std::string>& names) {
  AttributeMap out;
  for (const std::string& name : names) {
    if (name == "All") return all;
    if (!In(kKept, name) && !In(kReadOnly, name) && !In(kSettable, name)) {
      return MakeError("InvalidAttributeName", "Unknown Attribute " + name + ".");
    }
    auto it = all.find(name);
    if (it != all.end()) out[it->first] = it->second;
  }
  return out;
}

}  // namespace tf::sqs
