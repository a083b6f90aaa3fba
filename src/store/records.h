// The records the store keeps. Plain values: no behaviour, no validation (the services validate
// before anything reaches the store).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"

namespace tf::store {

struct Project {
  std::string id;    // "prj_<hex>"
  std::string name;  // unique, [a-z0-9-]
  TimeMs created_at = 0;
};

struct Token {
  std::string id;          // "tok_<hex>": public, safe to show and log
  std::string project_id;
  std::string name;        // what the owner called it
  std::string hash;        // SHA-256 hex of the secret; the secret itself is never stored
  bool admin = false;      // may manage projects and other projects' tokens
  TimeMs created_at = 0;
  std::optional<TimeMs> revoked_at;
};

// A queue's settings, with SQS's defaults. Stored as JSON text (store/config_json.h).
struct QueueConfig {
  TimeMs visibility_timeout_ms = 30 * kSecondMs;
  TimeMs retention_ms = 4 * kDayMs;
  TimeMs delay_ms = 0;
  TimeMs receive_wait_ms = 0;
  int64_t max_message_bytes = 262'144;
  std::string dead_letter_queue;  // name of a queue in the same project; empty: none
  int max_receive_count = 0;      // meaningful only with dead_letter_queue
  bool fifo = false;
  bool content_based_deduplication = false;

  bool operator==(const QueueConfig&) const = default;
};

struct Queue {
  int64_t id = 0;  // assigned by the store
  std::string project_id;
  std::string name;
  QueueConfig config;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

// A message as the queue service hands it to the store: times already computed.
struct NewMessage {
  std::string message_id;       // UUID chosen by the service
  std::string body;
  std::string body_md5;
  std::string attributes_json;  // "" when the message has no attributes
  TimeMs visible_at = 0;        // now + delay
  TimeMs expires_at = 0;        // now + retention
  std::string group_id;         // FIFO only
  std::string deduplication_id; // FIFO only
};

struct SentMessage {
  std::string message_id;  // for a duplicate: the id of the message first sent with this dedup id
  int64_t sequence = 0;    // store order; FIFO sequence number
  bool duplicate = false;  // accepted but not enqueued again (FIFO dedup window)
};

// Identifies one receive of one message. A later receive of the same message gets a new receipt,
// after which this one is stale.
struct Receipt {
  int64_t sequence = 0;
  uint64_t receipt = 0;
};

struct ReceivedMessage {
  int64_t sequence = 0;
  uint64_t receipt = 0;
  std::string message_id;
  std::string body;
  std::string body_md5;
  std::string attributes_json;
  int receive_count = 0;  // including this receive
  TimeMs sent_at = 0;
  TimeMs first_received_at = 0;
  std::string group_id;
  std::string deduplication_id;
};

struct ReceiveOptions {
  int64_t queue_id = 0;
  bool fifo = false;
  int max_messages = 1;             // 1..10
  TimeMs visibility_timeout_ms = 0; // how long received messages stay hidden
  // Redrive: a message already received max_receive_count times goes to the dead-letter queue
  // instead of being delivered again. dead_letter_queue_id == 0: no redrive.
  int64_t dead_letter_queue_id = 0;
  int max_receive_count = 0;
  TimeMs dead_letter_retention_ms = 0;
};

struct QueueCounts {
  int64_t visible = 0;    // ready to be received
  int64_t in_flight = 0;  // received, not yet deleted, visibility timeout running
  int64_t delayed = 0;    // sent with a delay that has not elapsed
};

struct VisibilityChange {
  Receipt receipt;
  TimeMs visible_at = 0;
};

// A bucket: a namespace of objects inside one project.
struct Bucket {
  int64_t id = 0;  // assigned by the store
  std::string project_id;
  std::string name;  // unique within the project
  TimeMs created_at = 0;
};

// An object's metadata. Its content lives elsewhere (objects/blob_store.h), under blob_id.
struct ObjectRecord {
  int64_t bucket_id = 0;
  std::string key;            // any bytes the object service accepted (UTF-8, 1-1024 bytes)
  int64_t size = 0;
  std::string etag;           // MD5 of the content, hex
  std::string sha256;         // SHA-256 of the content, hex
  std::string content_type;
  std::string user_metadata;  // a JSON object of strings: {"name": "value"}
  std::string blob_id;
  TimeMs modified_at = 0;
};

// Content written (or being written) that no object refers to yet, or any more: an upload in
// progress, or a replaced or deleted object's content not yet removed. `owner` names the blob
// store that holds it, so that a server reclaims only its own.
struct PendingBlob {
  std::string blob_id;
  std::string owner;
  TimeMs created_at = 0;
};

struct ListObjectsOptions {
  std::string prefix;       // only keys that start with this
  std::string delimiter;    // "": no grouping
  std::string start_after;  // only keys (and common prefixes) after this one
  int limit = 1000;         // at most this many keys and common prefixes together, >= 1
};

struct ObjectListing {
  std::vector<ObjectRecord> objects;         // by key
  std::vector<std::string> common_prefixes;  // by value
  bool truncated = false;
  std::string next_start_after;  // when truncated: the start_after that continues the listing
};

}  // namespace tf::store
