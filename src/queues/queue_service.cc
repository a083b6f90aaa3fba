#include "queues/queue_service.h"

#include "base/crypto.h"

namespace tf::queues {
namespace {

// How long a cached queue record is trusted. Changes made through this server invalidate it at
// once; changes made by another server sharing the database are seen within this time.
constexpr TimeMs kQueueCacheMs = 2 * kSecondMs;
constexpr size_t kMaxGroupOrDedupId = 128;

Status CheckBatchSize(size_t n, const char* what) {
  if (n == 0) return InvalidArgument(std::string(what) + " must not be empty");
  if (n > static_cast<size_t>(kMaxBatch)) {
    return InvalidArgument(std::string(what) + " has " + std::to_string(n) +
                           " entries; the limit is 10");
  }
  return OkStatus();
}

Status CheckFifoId(const std::string& id, const char* field) {
  if (id.size() > kMaxGroupOrDedupId) {
    return InvalidArgument(std::string(field) + " is longer than 128 characters");
  }
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) {
      return InvalidArgument(std::string(field) + " may hold only printable ASCII characters");
    }
  }
  return OkStatus();
}

}  // namespace

Result<store::Queue> QueueService::Lookup(const std::string& project_id, const std::string& name) {
  TimeMs now = clock_.Now();
  auto key = std::make_pair(project_id, name);
  {
    MutexLock lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && now - it->second.fetched_at < kQueueCacheMs) return it->second.queue;
  }
  auto q = store_.queues().GetQueue(project_id, name);
  if (!q.ok()) {
    if (q.status().code() == StatusCode::kNotFound) {
      return NotFound("queue '" + name + "' does not exist");
    }
    return q.status();
  }
  MutexLock lock(mu_);
  cache_[key] = CacheEntry{*q, now};
  return q;
}

std::optional<store::Queue> QueueService::CachedQueue(const std::string& project_id,
                                                      const std::string& name) {
  TimeMs now = clock_.Now();
  MutexLock lock(mu_);
  auto it = cache_.find(std::make_pair(project_id, name));
  if (it != cache_.end() && now - it->second.fetched_at < kQueueCacheMs) return it->second.queue;
  return std::nullopt;
}

void QueueService::Forget(const std::string& project_id, const std::string& name) {
  MutexLock lock(mu_);
  cache_.erase({project_id, name});
}

Status QueueService::CheckDeadLetterTarget(const std::string& project_id, const std::string& name,
                                           const store::QueueConfig& config) {
  if (config.dead_letter_queue.empty()) return OkStatus();
  if (config.dead_letter_queue == name) {
    return InvalidArgument("a queue cannot be its own dead_letter_queue");
  }
  auto dlq = Lookup(project_id, config.dead_letter_queue);
  if (!dlq.ok()) {
    return dlq.status().code() == StatusCode::kNotFound
               ? InvalidArgument("dead_letter_queue '" + config.dead_letter_queue +
                                 "' does not exist: create it first")
               : dlq.status();
  }
  if (dlq->config.fifo != config.fifo) {
    return InvalidArgument("dead_letter_queue '" + config.dead_letter_queue + "' must be " +
                           (config.fifo ? "a FIFO queue" : "a standard queue") +
                           " like the queue it serves");
  }
  return OkStatus();
}

Result<store::Queue> QueueService::CreateQueue(const std::string& project_id,
                                               const std::string& name,
                                               const QueueSettings& settings) {
  bool fifo = settings.fifo.value_or(name.size() > 5 && name.ends_with(".fifo"));
  TF_RETURN_IF_ERROR(ValidateQueueName(name, fifo));
  QueueSettings with_type = settings;
  with_type.fifo = fifo;
  TF_ASSIGN_OR_RETURN(store::QueueConfig config, ApplySettings({}, with_type, /*creating=*/true));
  TF_RETURN_IF_ERROR(CheckDeadLetterTarget(project_id, name, config));

  store::Queue q;
  q.project_id = project_id;
  q.name = name;
  q.config = config;
  q.created_at = q.updated_at = clock_.Now();
  auto created = store_.queues().CreateQueue(q);
  if (created.ok() || created.status().code() != StatusCode::kAlreadyExists) return created;
  auto existing = store_.queues().GetQueue(project_id, name);
  if (existing.ok()) {
    // Tags are not settings: a queue created again with other tags is the same queue (as SQS
    // has it), and keeps its own.
    config.tags = existing->config.tags;
    if (existing->config == config) return existing;
  }
  return AlreadyExists("queue '" + name + "' already exists with different settings");
}

Result<QueueInfo> QueueService::DescribeQueue(const std::string& project_id,
                                              const std::string& name) {
  Forget(project_id, name);
  TF_ASSIGN_OR_RETURN(store::Queue q, Lookup(project_id, name));
  TF_ASSIGN_OR_RETURN(store::QueueCounts counts, store_.queues().CountMessages(q.id, clock_.Now()));
  return QueueInfo{std::move(q), counts};
}

Result<std::vector<store::Queue>> QueueService::ListQueues(const std::string& project_id,
                                                           const std::string& prefix) {
  return store_.queues().ListQueues(project_id, prefix);
}

Result<store::Queue> QueueService::UpdateQueue(const std::string& project_id,
                                               const std::string& name,
                                               const QueueSettings& settings) {
  Forget(project_id, name);
  TF_ASSIGN_OR_RETURN(store::Queue q, Lookup(project_id, name));
  TF_ASSIGN_OR_RETURN(q.config, ApplySettings(q.config, settings, /*creating=*/false));
  TF_RETURN_IF_ERROR(CheckDeadLetterTarget(project_id, name, q.config));
  q.updated_at = clock_.Now();
  TF_RETURN_IF_ERROR(store_.queues().UpdateQueueConfig(q.id, q.config, q.updated_at));
  Forget(project_id, name);
  return q;
}

Status QueueService::DeleteQueue(const std::string& project_id, const std::string& name) {
  Forget(project_id, name);
  TF_ASSIGN_OR_RETURN(store::Queue q, Lookup(project_id, name));
  Forget(project_id, name);
  return store_.queues().DeleteQueue(q.id);
}

Result<std::vector<SendOutcome>> QueueService::Send(const std::string& project_id,
                                                    const std::string& queue,
                                                    const std::vector<SendEntry>& entries) {
  TF_RETURN_IF_ERROR(CheckBatchSize(entries.size(), "messages"));
  TF_ASSIGN_OR_RETURN(store::Queue q, Lookup(project_id, queue));
  TF_ASSIGN_OR_RETURN(PreparedSend prepared, PrepareSend(q, entries));
  if (prepared.batch.empty()) return std::move(prepared.outcomes);
  TF_ASSIGN_OR_RETURN(auto sent, store_.queues().SendMessages(q.id, prepared.batch, prepared.now,
                                                              kDeduplicationWindowMs));
  return FinishSend(std::move(prepared), sent);
}

Result<QueueService::PreparedSend> QueueService::PrepareSend(
    const store::Queue& q, const std::vector<SendEntry>& entries) {
  TF_RETURN_IF_ERROR(CheckBatchSize(entries.size(), "messages"));
  const store::QueueConfig& c = q.config;
  PreparedSend p;
  p.now = clock_.Now();
  const TimeMs now = p.now;

  int64_t total = 0;
  for (const SendEntry& e : entries) total += MessageSize(e);
  if (entries.size() > 1 && total > c.max_message_bytes) {
    return InvalidArgument("the batch holds " + std::to_string(total) +
                           " bytes; a batch may hold at most the queue's max_message_bytes (" +
                           std::to_string(c.max_message_bytes) + ")");
  }

  p.outcomes.resize(entries.size());
  p.batch.reserve(entries.size());
  p.entry_of.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const SendEntry& e = entries[i];
    auto check = [&]() -> Status {
      TF_RETURN_IF_ERROR(ValidateBody(e.body));
      TF_RETURN_IF_ERROR(ValidateAttributes(e.attributes));
      int64_t size = MessageSize(e);
      if (size > c.max_message_bytes) {
        return InvalidArgument("message is " + std::to_string(size) +
                               " bytes; this queue's max_message_bytes is " +
                               std::to_string(c.max_message_bytes));
      }
      if (e.delay_seconds && (*e.delay_seconds < 0 || *e.delay_seconds > kMaxDelaySeconds)) {
        return InvalidArgument("delay_seconds must be between 0 and 900, got " +
                               std::to_string(*e.delay_seconds));
      }
      if (c.fifo) {
        if (e.delay_seconds) {
          return InvalidArgument("FIFO queues take no per-message delay_seconds; set the queue's");
        }
        if (e.group_id.empty())
          return InvalidArgument("FIFO queues need a group_id on every message");
        TF_RETURN_IF_ERROR(CheckFifoId(e.group_id, "group_id"));
        TF_RETURN_IF_ERROR(CheckFifoId(e.deduplication_id, "deduplication_id"));
        if (e.deduplication_id.empty() && !c.content_based_deduplication) {
          return InvalidArgument(
              "this FIFO queue needs a deduplication_id on every message (or enable "
              "content_based_deduplication)");
        }
      } else if (!e.deduplication_id.empty()) {
        return InvalidArgument("deduplication_id applies only to FIFO queues");
      }
      return OkStatus();
    };
    p.outcomes[i].status = check();
    if (!p.outcomes[i].status.ok()) continue;

    store::NewMessage m;
    m.message_id = NewMessageId();
    m.body = e.body;
    m.body_md5 = Md5Hex(e.body);
    m.attributes_json = AttributesToJson(e.attributes);
    m.visible_at = now + (e.delay_seconds ? *e.delay_seconds * kSecondMs : c.delay_ms);
    m.expires_at = now + c.retention_ms;
    if (c.fifo) {
      m.group_id = e.group_id;
      m.deduplication_id = e.deduplication_id.empty() ? Sha256Hex(e.body) : e.deduplication_id;
    }
    p.outcomes[i].body_md5 = m.body_md5;
    p.batch.push_back(std::move(m));
    p.entry_of.push_back(i);
  }
  return p;
}

std::vector<SendOutcome> QueueService::FinishSend(PreparedSend prepared,
                                                  const std::vector<store::SentMessage>& sent) {
  for (size_t k = 0; k < sent.size() && k < prepared.entry_of.size(); ++k) {
    SendOutcome& o = prepared.outcomes[prepared.entry_of[k]];
    o.message_id = sent[k].message_id;
    o.sequence = sent[k].sequence;
    o.duplicate = sent[k].duplicate;
  }
  return std::move(prepared.outcomes);
}

Result<store::ReceiveOptions> QueueService::ReceiveOptionsFor(const store::Queue& q,
                                                              const ReceiveParams& p) {
  std::optional<store::Queue> dead_letter;
  if (!q.config.dead_letter_queue.empty()) {
    auto dlq = Lookup(q.project_id, q.config.dead_letter_queue);
    if (dlq.ok()) {
      dead_letter = std::move(*dlq);
    } else if (dlq.status().code() != StatusCode::kNotFound) {
      return dlq.status();
    }
  }
  return ReceiveOptionsFor(q, p, dead_letter ? &*dead_letter : nullptr);
}

Result<store::ReceiveOptions> QueueService::ReceiveOptionsFor(const store::Queue& q,
                                                              const ReceiveParams& p,
                                                              const store::Queue* dead_letter) {
  if (p.max_messages < 1 || p.max_messages > kMaxBatch) {
    return InvalidArgument("max_messages must be between 1 and 10, got " +
                           std::to_string(p.max_messages));
  }
  if (p.visibility_timeout_seconds &&
      (*p.visibility_timeout_seconds < 0 ||
       *p.visibility_timeout_seconds > kMaxVisibilityTimeoutSeconds)) {
    return InvalidArgument("visibility_timeout_seconds must be between 0 and 43200, got " +
                           std::to_string(*p.visibility_timeout_seconds));
  }
  store::ReceiveOptions o;
  o.queue_id = q.id;
  o.fifo = q.config.fifo;
  o.max_messages = static_cast<int>(p.max_messages);
  o.visibility_timeout_ms = p.visibility_timeout_seconds ? *p.visibility_timeout_seconds * kSecondMs
                                                         : q.config.visibility_timeout_ms;
  if (dead_letter != nullptr) {
    o.dead_letter_queue_id = dead_letter->id;
    o.max_receive_count = q.config.max_receive_count;
    o.dead_letter_retention_ms = dead_letter->config.retention_ms;
  }
  return o;
}

Result<store::Queue> QueueService::ResolveForReceive(const std::string& project_id,
                                                     const std::string& queue,
                                                     const ReceiveParams& params) {
  TF_ASSIGN_OR_RETURN(store::Queue q, Lookup(project_id, queue));
  TF_RETURN_IF_ERROR(ReceiveOptionsFor(q, params).status());
  return q;
}

Result<std::vector<Message>> QueueService::ReceiveOnce(const std::string& project_id,
                                                       const std::string& queue,
                                                       const ReceiveParams& params) {
  TF_ASSIGN_OR_RETURN(store::Queue q, Lookup(project_id, queue));
  TF_ASSIGN_OR_RETURN(store::ReceiveOptions o, ReceiveOptionsFor(q, params));
  TF_ASSIGN_OR_RETURN(auto got, store_.queues().ReceiveMessages(o, clock_.Now()));
  return ToMessages(q.id, std::move(got));
}

std::vector<Message> QueueService::ToMessages(int64_t queue_id,
                                              std::vector<store::ReceivedMessage> received) {
  std::vector<Message> out;
  out.reserve(received.size());
  for (auto& r : received) {
    Message m;
    m.message_id = std::move(r.message_id);
    m.receipt_handle = EncodeReceiptHandle(queue_id, {r.sequence, r.receipt});
    m.body = std::move(r.body);
    m.body_md5 = std::move(r.body_md5);
    m.attributes = AttributesFromJson(r.attributes_json);
    m.receive_count = r.receive_count;
    m.sent_at = r.sent_at;
    m.first_received_at = r.first_received_at;
    m.group_id = std::move(r.group_id);
    m.deduplication_id = std::move(r.deduplication_id);
    m.sequence = r.sequence;
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<Status>> QueueService::Delete(const std::string& project_id,
                                                 const std::string& queue,
                                                 const std::vector<std::string>& handles) {
  TF_RETURN_IF_ERROR(CheckBatchSize(handles.size(), "receipt_handles"));
  TF_ASSIGN_OR_RETURN(store::Queue q, Lookup(project_id, queue));
  TF_ASSIGN_OR_RETURN(PreparedDelete prepared, PrepareDelete(q.id, handles));
  if (prepared.receipts.empty()) return std::move(prepared.results);
  TF_ASSIGN_OR_RETURN(auto deleted, store_.queues().DeleteMessages(q.id, prepared.receipts));
  return FinishDelete(std::move(prepared), deleted);
}

Result<QueueService::PreparedDelete> QueueService::PrepareDelete(
    int64_t queue_id, const std::vector<std::string>& handles) {
  TF_RETURN_IF_ERROR(CheckBatchSize(handles.size(), "receipt_handles"));
  PreparedDelete p;
  p.results.resize(handles.size());
  for (size_t i = 0; i < handles.size(); ++i) {
    auto r = DecodeReceiptHandle(handles[i], queue_id);
    if (!r.ok()) {
      p.results[i] = r.status();
      continue;
    }
    p.receipts.push_back(*r);
    p.handle_of.push_back(i);
  }
  return p;
}

std::vector<Status> QueueService::FinishDelete(PreparedDelete prepared,
                                               const std::vector<Status>& deleted) {
  for (size_t k = 0; k < deleted.size() && k < prepared.handle_of.size(); ++k) {
    prepared.results[prepared.handle_of[k]] = deleted[k];
  }
  return std::move(prepared.results);
}

Result<std::vector<Status>> QueueService::ChangeVisibility(
    const std::string& project_id, const std::string& queue,
    const std::vector<VisibilityRequest>& changes) {
  TF_RETURN_IF_ERROR(CheckBatchSize(changes.size(), "changes"));
  TF_ASSIGN_OR_RETURN(store::Queue q, Lookup(project_id, queue));
  TimeMs now = clock_.Now();
  std::vector<Status> out(changes.size());
  std::vector<store::VisibilityChange> valid;
  std::vector<size_t> index;
  for (size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.visibility_timeout_seconds < 0 ||
        c.visibility_timeout_seconds > kMaxVisibilityTimeoutSeconds) {
      out[i] = InvalidArgument("visibility_timeout_seconds must be between 0 and 43200, got " +
                               std::to_string(c.visibility_timeout_seconds));
      continue;
    }
    auto r = DecodeReceiptHandle(c.receipt_handle, q.id);
    if (!r.ok()) {
      out[i] = r.status();
      continue;
    }
    valid.push_back({*r, now + c.visibility_timeout_seconds * kSecondMs});
    index.push_back(i);
  }
  if (valid.empty()) return out;
  TF_ASSIGN_OR_RETURN(auto results, store_.queues().ChangeVisibility(q.id, valid, now));
  for (size_t k = 0; k < results.size(); ++k) out[index[k]] = results[k];
  return out;
}

Result<int64_t> QueueService::Purge(const std::string& project_id, const std::string& queue) {
  TF_ASSIGN_OR_RETURN(store::Queue q, Lookup(project_id, queue));
  return store_.queues().PurgeQueue(q.id);
}

Result<int64_t> QueueService::Redrive(const std::string& project_id, const std::string& queue,
                                      const std::string& to, int64_t limit) {
  if (limit < 0) return InvalidArgument("max_messages must not be negative");
  TF_ASSIGN_OR_RETURN(store::Queue from, Lookup(project_id, queue));
  int64_t to_id = 0;
  if (!to.empty()) {
    TF_ASSIGN_OR_RETURN(store::Queue target, Lookup(project_id, to));
    if (target.id == from.id) return InvalidArgument("cannot redrive a queue into itself");
    to_id = target.id;
  }
  constexpr int64_t kChunk = 1000;  // one bounded transaction at a time
  int64_t moved = 0;
  for (;;) {
    int64_t want = limit == 0 ? kChunk : std::min(kChunk, limit - moved);
    if (want <= 0) break;
    TF_ASSIGN_OR_RETURN(int64_t n,
                        store_.queues().RedriveMessages(from.id, to_id, clock_.Now(), want));
    moved += n;
    if (n < want) break;
  }
  return moved;
}

Result<int64_t> QueueService::DeleteExpired() {
  return store_.queues().DeleteExpired(clock_.Now());
}

}  // namespace tf::queues
