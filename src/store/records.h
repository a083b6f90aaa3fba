// The records the store keeps. Plain values: no behaviour, no validation (the services validate
// before anything reaches the store).
#pragma once

#include <cstdint>
#include <map>
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
  std::string id;  // "tok_<hex>": public, safe to show and log
  std::string project_id;
  std::string name;    // what the owner called it
  std::string hash;    // SHA-256 hex of the secret; the secret itself is never stored
  bool admin = false;  // may manage projects and other projects' tokens
  TimeMs created_at = 0;
  std::optional<TimeMs> revoked_at;
};

// A join token (auth/): lets a worker register a new node, nothing else. Its secret ("tfj_" +
// 40 hex) is shown once; the store keeps its SHA-256.
struct JoinToken {
  std::string id;  // "jtk_<hex>": public
  std::string name;
  std::string hash;
  TimeMs created_at = 0;
  TimeMs expires_at = 0;  // registrations at or after it are refused
  int64_t max_uses = 0;   // registrations it admits; 0 for any number
  int64_t uses = 0;
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
  // Cost-allocation tags (SQS's TagQueue): no effect here, kept and listed.
  std::map<std::string, std::string> tags;
  // SQS attributes kept as given and answered back but not acted on here (a Policy, the KMS
  // settings, a RedriveAllowPolicy, ...): docs/sqs-api.md lists them.
  std::map<std::string, std::string> kept_attributes;

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
  std::string message_id;  // UUID chosen by the service
  std::string body;
  std::string body_md5;
  std::string attributes_json;   // "" when the message has no attributes
  TimeMs visible_at = 0;         // now + delay
  TimeMs expires_at = 0;         // now + retention
  std::string group_id;          // FIFO only
  std::string deduplication_id;  // FIFO only
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
  int max_messages = 1;              // 1..10
  TimeMs visibility_timeout_ms = 0;  // how long received messages stay hidden
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

// One piece of an object whose content is several blobs in a row (a completed multipart
// upload's parts): blob `blob_id`, holding `size` bytes of the content, and the checksum the part
// was kept with (base64, of the algorithm of the object's checksum; "" if none).
struct BlobSegment {
  std::string blob_id;
  int64_t size = 0;
  std::string checksum;
  bool operator==(const BlobSegment&) const = default;
};

// An object's metadata. Its content lives elsewhere (objects/blob_store.h): in blob `blob_id`,
// or, when blob_id is "", in the blobs of `segments`, one after another in their order.
struct ObjectRecord {
  int64_t bucket_id = 0;
  std::string key;  // any bytes the object service accepted (UTF-8, 1-1024 bytes)
  int64_t size = 0;
  std::string etag;    // MD5 of the content, hex
  std::string sha256;  // SHA-256 of the content, hex
  std::string content_type;
  std::string user_metadata;  // a JSON object of strings: {"name": "value"}
  std::string blob_id;        // "" when the content is `segments`
  TimeMs modified_at = 0;
  // Filled by GetObject (not by ListObjects) for an object kept as segments; empty otherwise.
  std::vector<BlobSegment> segments;
  std::string headers = "{}";  // representation headers kept with it: {"Cache-Control": "..."}
  std::string checksum;        // "" or the one a client sent: "<algorithm> <base64>"
};

// What must hold of the object that a put would replace, checked in the put's transaction so
// that two puts cannot both pass it (S3's conditional writes: If-None-Match: *, If-Match).
struct PutCondition {
  bool must_be_absent = false;  // no object may have the key yet
  std::string etag;             // when set: the object there must exist and have this ETag
};

// One stored part of a multipart upload (objects/multipart.h). Its content is blob_id.
struct MultipartPartRecord {
  std::string upload_id;
  int number = 0;
  int64_t size = 0;
  std::string etag;  // MD5 of the part, hex
  std::string blob_id;
  TimeMs modified_at = 0;
  std::string checksum;  // base64, of the upload's checksum_algorithm; "" if it has none
};

// A multipart upload in progress, kept until it is completed or aborted. `owner` names the blob
// store that holds its parts; the bucket is named, not numbered, as the S3 calls name it.
struct MultipartUploadRecord {
  std::string upload_id;
  std::string owner;
  std::string project_id;
  std::string bucket;
  std::string key;
  std::string content_type;   // of the object Complete makes
  std::string user_metadata;  // likewise, a JSON object of strings
  TimeMs initiated_at = 0;
  std::vector<MultipartPartRecord> parts;  // by number (filled by ListMultipartUploads)
  std::string headers = "{}";              // representation headers, likewise
  std::string checksum_algorithm;          // of its parts' checksums ("crc32c"), "" for none
  // How the object's checksum is made of its parts': "FULL_OBJECT", or "COMPOSITE" ("" reads as
  // COMPOSITE: uploads begun before the type was kept).
  std::string checksum_type;
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

namespace tf::store {

// A machine registered by its worker. What it has (CPUs, memory, GPUs, labels, price) is a JSON
// document that the fleet service reads and writes (fleet/node_info.h); the store keeps the
// fields it is asked about.
struct NodeRecord {
  std::string id;         // "node_<hex>", chosen by the worker once and kept across restarts
  std::string name;       // hostname, for people
  std::string state;      // "ready", "draining", "lost"
  int64_t epoch = 0;      // bumped by every registration: reports from an older one are stale
  std::string info_json;  // resources, labels, price, address
  TimeMs registered_at = 0;
  TimeMs heartbeat_at = 0;
  std::string drain_json;  // "" or the drain in progress: {"deadline_ms": ..., "reason": ...}
};

// What lets a registration in, besides the node record (NodeStore::AdmitNode): the join token
// it spends ("" for an admin or the node's own credential), and the SHA-256 of the credential
// the node is issued, which replaces any it had ("" keeps what it has).
struct NodeAdmission {
  std::string join_token_id;
  std::string credential_hash;
};

// One registration of a node, from when it registered until its last heartbeat: the time the
// machine was up and paid for, at the price and size it declared then. Metering prices idle
// capacity from these.
struct NodePeriod {
  std::string node_id;
  int64_t epoch = 0;        // the registration (NodeRecord.epoch) this period belongs to
  TimeMs started_at = 0;    // registered_at of that registration
  TimeMs last_seen_at = 0;  // its latest heartbeat
  std::string info_json;    // NodeRecord.info_json as registered: price, GPUs, CPUs
};

// A managed job. Its spec and the history of its attempts are a JSON document that the jobs
// service owns (jobs/job_record.h); the store indexes the rest. Every update names the version
// it read, so that two writers never silently overwrite each other.
struct JobRecord {
  std::string id;  // "job_<hex>"
  std::string project_id;
  std::string name;
  std::string state;    // queued, starting, running, retrying, succeeded, failed, cancelled
  int64_t version = 0;  // 1 when created; each update writes version + 1
  int priority = 0;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::string doc_json;  // spec, attempts, placements, reasons
};

// An inference endpoint (docs/endpoints.md). Its spec, replicas and scaling decisions are a
// JSON document that the endpoints service owns; the store indexes the rest. Names are unique
// within a project; every update names the version it read.
struct EndpointRecord {
  std::string id;  // "ep_<hex>"
  std::string project_id;
  std::string name;
  std::string state;    // "active", "deleting"
  int64_t version = 0;  // 1 when created; each update writes version + 1
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::string doc_json;
};

// A versioned JSON document of one project that a service owns whole, such as a sweep
// (sweeps/sweep_doc.h): the store indexes its kind, name and state and never looks inside.
// Names are unique within a project and kind; every update names the version it read.
struct DocumentRecord {
  std::string kind;  // "sweep", ...
  std::string id;    // "<prefix>_<hex>", unique across kinds
  std::string project_id;
  std::string name;
  std::string state;    // the owning service's words ("running", "stopped", ...)
  int64_t version = 0;  // 1 when created; each update writes version + 1
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::string doc_json;
};

// A node pool (pools/pool_spec.h): machines of one shape that the leader's pool controller
// starts and stops. Pools belong to the fleet, not to a project.
struct PoolRecord {
  std::string name;
  std::string spec_json;    // pools::PoolSpecToJson
  std::string status_json;  // the controller's view: machines, decisions ("{}" until its first)
  int64_t version = 0;      // of the spec: 1 when created, + 1 on each change
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

// What one server's gateway saw of one endpoint's load, published through the store so that
// the leader's controller scales on every server's traffic (endpoints/shared_load.h).
struct EndpointLoadRecord {
  std::string server_id;  // "srv_<hex>", new each time a server starts
  std::string endpoint_id;
  int64_t arrived = 0;    // requests that arrived since this run of publications began (a count)
  int64_t queued = 0;     // the most waiting for a replica at once since the previous publication
  int64_t in_flight = 0;  // the most in flight at once since then
  std::string replicas_json;  // {"replica id": requests in flight there now, ...}
  TimeMs updated_at = 0;
};

// What one server's gateway answered of one endpoint in one short interval, published through
// the store so that `endpoint describe` on any server shows every server's traffic
// (endpoints/shared_traffic.h).
struct EndpointTrafficRecord {
  std::string server_id;
  std::string endpoint_id;
  TimeMs bucket_start = 0;   // the interval's start
  std::string summary_json;  // its counts and latency histograms
};

// A transition or other fact in a job's life, kept for `describe`.
struct JobEvent {
  int64_t seq = 0;  // assigned by the store, increasing per store
  std::string job_id;
  TimeMs at = 0;
  std::string kind;     // usually the state entered: "queued", "running", ...
  std::string message;  // why
};

// One reported value of one metric of a job.
struct MetricPoint {
  std::string job_id;
  int attempt = 0;
  std::string name;
  int64_t step = -1;  // -1: none reported
  double value = 0;
  TimeMs at = 0;
};

}  // namespace tf::store

namespace tf::store {

// An S3 access key (docs/objects.md, "S3 API"). Checking a SigV4 signature needs the secret
// itself, so unlike an API token's it is stored as it is.
struct AccessKey {
  std::string id;          // "TFAK" + 16 upper-case letters and digits: public, safe to log
  std::string project_id;  // the project whose buckets the key reaches
  std::string secret;      // 40 characters
  std::string name;        // what the owner called it
  TimeMs created_at = 0;
  std::optional<TimeMs> revoked_at;
};

// A spending limit of one project (cost/budget.h owns the document: amount, period,
// thresholds, action, webhook).
struct BudgetRecord {
  std::string id;  // "bud_<hex>"
  std::string project_id;
  std::string name;  // unique in the project
  std::string doc_json;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

// A budget threshold crossed in one period. Each (budget, period, kind, threshold) fires once;
// the store enforces that. Alerts of budgets with a webhook are delivered by a notifier that
// retries with backoff; next_delivery_at is empty when nothing is left to send.
struct BudgetAlert {
  int64_t seq = 0;  // assigned by the store, increasing
  std::string budget_id;
  std::string project_id;
  TimeMs period_start = 0;  // the start of the budget period the alert belongs to
  std::string kind;         // "actual" or "forecast"
  double threshold = 0;     // percent of the amount: 50, 80, 90, 100, ...
  TimeMs fired_at = 0;
  double spend = 0;     // the spend (or forecast) that crossed the threshold, in dollars
  double amount = 0;    // the budget's amount then
  std::string message;  // for people: what was crossed and by how much
  std::optional<TimeMs> next_delivery_at;  // when the webhook should next be tried
  int delivery_attempts = 0;
  std::optional<TimeMs> delivered_at;
  std::string last_error;  // of the latest failed delivery
};

}  // namespace tf::store

namespace tf::store {

// A dataset: samples packed into shards that are objects of the project (docs/datasets.md).
// Written once, with all its shards, and never changed; deleted whole.
struct DatasetRecord {
  std::string id;  // "ds_<hex>"
  std::string project_id;
  std::string name;  // unique in the project
  TimeMs created_at = 0;
  int64_t sample_count = 0;
  int64_t bytes = 0;          // the shards' sizes added up
  int64_t shard_size = 0;     // the target size the shards were packed to
  std::string source_format;  // "files", "jsonl" or "text"
};

// One shard of a dataset: an object and where its samples fall in the dataset's numbering.
struct DatasetShardRecord {
  std::string dataset_id;
  int64_t ordinal = 0;  // 0, 1, 2, ... in dataset order
  std::string bucket;   // a bucket of the dataset's project
  std::string key;
  int64_t samples = 0;
  int64_t bytes = 0;
  std::string sha256;        // of the whole shard object, hex
  int64_t first_sample = 0;  // the samples of the shards before it
};

}  // namespace tf::store
