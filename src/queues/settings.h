// Queue settings as users give them, with SQS's names for the limits and SQS's ranges.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "store/records.h"

namespace tf::queues {

// SQS's limits.
constexpr int64_t kMaxVisibilityTimeoutSeconds = 12 * 60 * 60;
constexpr int64_t kMinRetentionSeconds = 60;
constexpr int64_t kMaxRetentionSeconds = 14 * 24 * 60 * 60;
constexpr int64_t kMaxDelaySeconds = 15 * 60;
constexpr int64_t kMaxWaitSeconds = 20;
constexpr int64_t kMinMessageBytes = 1024;
constexpr int64_t kMaxMessageBytes = 1024 * 1024;
constexpr int kMaxBatch = 10;
constexpr int kMaxReceiveCountLimit = 1000;
constexpr int kMaxMessageAttributes = 10;
constexpr size_t kMaxQueueName = 80;
constexpr TimeMs kDeduplicationWindowMs = 5 * kMinuteMs;

// Every field is optional: unset means "the default" when creating a queue and "unchanged"
// when updating one.
struct QueueSettings {
  std::optional<int64_t> visibility_timeout_seconds;
  std::optional<int64_t> retention_seconds;
  std::optional<int64_t> delay_seconds;
  std::optional<int64_t> receive_wait_seconds;
  std::optional<int64_t> max_message_bytes;
  std::optional<std::string> dead_letter_queue;  // "" removes the redrive policy
  std::optional<int> max_receive_count;
  std::optional<bool> fifo;
  std::optional<bool> content_based_deduplication;
  std::optional<std::map<std::string, std::string>> tags;  // replaces the queue's tags
  std::map<std::string, std::string> kept_attributes;      // set over the queue's, per name
};

constexpr size_t kMaxQueueTags = 50;

// Checks a queue name: 1-80 characters of [A-Za-z0-9_-], and ".fifo" at the end iff FIFO.
Status ValidateQueueName(const std::string& name, bool fifo);

// Applies `settings` over `base`, checking every value against SQS's ranges. The error names
// the offending field and the allowed range. `creating` allows fifo to be set (it cannot
// change after creation).
Result<store::QueueConfig> ApplySettings(const store::QueueConfig& base,
                                         const QueueSettings& settings, bool creating);

}  // namespace tf::queues
