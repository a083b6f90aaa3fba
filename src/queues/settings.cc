#include "queues/settings.h"

namespace tf::queues {
namespace {

Status CheckRange(const char* field, int64_t value, int64_t min, int64_t max) {
  if (value < min || value > max) {
    return InvalidArgument(std::string(field) + " must be between " + std::to_string(min) +
                           " and " + std::to_string(max) + ", got " + std::to_string(value));
  }
  return OkStatus();
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Status ValidateQueueName(const std::string& name, bool fifo) {
  if (name.empty()) return InvalidArgument("queue name must not be empty");
  if (name.size() > kMaxQueueName) {
    return InvalidArgument("queue name is " + std::to_string(name.size()) +
                           " characters; the limit is 80");
  }
  std::string stem = name;
  if (EndsWith(name, ".fifo")) {
    if (!fifo)
      return InvalidArgument("queue name '" + name + "' ends in .fifo but fifo is not set");
    stem = name.substr(0, name.size() - 5);
  } else if (fifo) {
    return InvalidArgument("a FIFO queue's name must end in .fifo, got '" + name + "'");
  }
  if (stem.empty()) return InvalidArgument("queue name must have characters before .fifo");
  for (char c : stem) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) {
      return InvalidArgument("queue name '" + name +
                             "' may contain only letters, digits, '-' and '_'");
    }
  }
  return OkStatus();
}

Result<store::QueueConfig> ApplySettings(const store::QueueConfig& base, const QueueSettings& s,
                                         bool creating) {
  store::QueueConfig c = base;
  if (s.visibility_timeout_seconds) {
    TF_RETURN_IF_ERROR(CheckRange("visibility_timeout_seconds", *s.visibility_timeout_seconds, 0,
                                  kMaxVisibilityTimeoutSeconds));
    c.visibility_timeout_ms = *s.visibility_timeout_seconds * kSecondMs;
  }
  if (s.retention_seconds) {
    TF_RETURN_IF_ERROR(CheckRange("retention_seconds", *s.retention_seconds, kMinRetentionSeconds,
                                  kMaxRetentionSeconds));
    c.retention_ms = *s.retention_seconds * kSecondMs;
  }
  if (s.delay_seconds) {
    TF_RETURN_IF_ERROR(CheckRange("delay_seconds", *s.delay_seconds, 0, kMaxDelaySeconds));
    c.delay_ms = *s.delay_seconds * kSecondMs;
  }
  if (s.receive_wait_seconds) {
    TF_RETURN_IF_ERROR(
        CheckRange("receive_wait_seconds", *s.receive_wait_seconds, 0, kMaxWaitSeconds));
    c.receive_wait_ms = *s.receive_wait_seconds * kSecondMs;
  }
  if (s.max_message_bytes) {
    TF_RETURN_IF_ERROR(
        CheckRange("max_message_bytes", *s.max_message_bytes, kMinMessageBytes, kMaxMessageBytes));
    c.max_message_bytes = *s.max_message_bytes;
  }
  if (s.fifo) {
    if (!creating && *s.fifo != base.fifo) {
      return InvalidArgument("fifo cannot be changed after a queue is created");
    }
    c.fifo = *s.fifo;
  }
  if (s.content_based_deduplication) {
    if (*s.content_based_deduplication && !c.fifo) {
      return InvalidArgument("content_based_deduplication applies only to FIFO queues");
    }
    c.content_based_deduplication = *s.content_based_deduplication;
  }
  if (s.dead_letter_queue) c.dead_letter_queue = *s.dead_letter_queue;
  if (s.max_receive_count) {
    TF_RETURN_IF_ERROR(
        CheckRange("max_receive_count", *s.max_receive_count, 1, kMaxReceiveCountLimit));
    c.max_receive_count = *s.max_receive_count;
  }
  if (s.tags) {
    if (s.tags->size() > kMaxQueueTags) {
      return InvalidArgument("a queue has at most " + std::to_string(kMaxQueueTags) +
                             " tags, not " + std::to_string(s.tags->size()));
    }
    for (const auto& [key, value] : *s.tags) {
      if (key.empty() || key.size() > 128) {
        return InvalidArgument("tag key '" + key + "' must be 1 to 128 characters");
      }
      if (value.size() > 256) {
        return InvalidArgument("the value of tag '" + key + "' is over 256 characters");
      }
    }
    c.tags = *s.tags;
  }
  for (const auto& [name, value] : s.kept_attributes) c.kept_attributes[name] = value;
  if (c.dead_letter_queue.empty()) {
    c.max_receive_count = 0;
  } else if (c.max_receive_count == 0) {
    return InvalidArgument("dead_letter_queue needs max_receive_count (1 to 1000)");
  }
  return c;
}

}  // namespace tf::queues
