// PostgresStore::SendMessages: enqueueing, with FIFO deduplication.
#include <algorithm>
#include <unordered_map>

#include "store/config_json.h"
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

// Rows per INSERT statement: large batches are split to stay far below the 65535-parameter limit.
constexpr size_t kRowsPerInsert = 500;

// What happens to each message of a batch.
struct SendPlan {
  std::vector<size_t> fresh;                   // indexes of the messages to enqueue, in order
  std::unordered_map<size_t, size_t> copy_of;  // duplicate index -> earlier index in this batch
};

// Looks up the batch's deduplication ids (set for FIFO queues; honoured wherever given): a message
// whose id was seen within the window is answered from the dedup table; one whose id appears
// earlier in the same batch copies that earlier answer; the rest are fresh.
Status PlanDedup(PgConnection& conn, int64_t queue_id, const std::vector<NewMessage>& messages,
                 TimeMs now, std::vector<SentMessage>& sent, SendPlan& plan) {
  std::vector<std::string> ids;
  for (const NewMessage& m : messages) {
    if (!m.deduplication_id.empty()) ids.push_back(m.deduplication_id);
  }
  std::unordered_map<std::string, SentMessage> seen;
  if (!ids.empty()) {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("SELECT dedup_id, message_id, seq FROM dedup "
                                              "WHERE queue_id = $1 AND dedup_id = ANY($2::text[]) "
                                              "AND expires_at > $3",
                                              PgParams().Add(queue_id).AddTextArray(ids).Add(now)));
    for (int i = 0; i < r.rows(); ++i) {
      seen[std::string(r.Text(i, 0))] = SentMessage{std::string(r.Text(i, 1)), r.Int(i, 2), true};
    }
  }
  std::unordered_map<std::string, size_t> first_in_batch;
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& id = messages[i].deduplication_id;
    if (id.empty()) {
      plan.fresh.push_back(i);
    } else if (auto old = seen.find(id); old != seen.end()) {
      sent[i] = old->second;
    } else if (auto earlier = first_in_batch.find(id); earlier != first_in_batch.end()) {
      plan.copy_of[i] = earlier->second;
    } else {
      first_in_batch[id] = i;
      plan.fresh.push_back(i);
    }
  }
  return OkStatus();
}

// `n` new sequence numbers, ascending.
Result<std::vector<int64_t>> AllocateSequences(PgConnection& conn, size_t n) {
  TF_ASSIGN_OR_RETURN(PgResult r,
                      conn.Exec("SELECT nextval('messages_seq') FROM generate_series(1, $1) "
                                "ORDER BY 1",
                                PgParams().Add(static_cast<int64_t>(n))));
  std::vector<int64_t> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(r.Int(i, 0));
  if (out.size() != n) return Internal("postgresql: allocated the wrong number of sequences");
  return out;
}

// Inserts messages[plan.fresh[k]] with sequence seqs[k], in chunks.
Status InsertMessages(PgConnection& conn, int64_t queue_id, TimeMs now,
                      const std::vector<NewMessage>& messages, const std::vector<size_t>& fresh,
                      const std::vector<int64_t>& seqs) {
  for (size_t start = 0; start < fresh.size(); start += kRowsPerInsert) {
    const size_t end = std::min(fresh.size(), start + kRowsPerInsert);
    std::string sql =
        "INSERT INTO messages (queue_id, sent_at, seq, message_id, body, body_md5, attributes, "
        "visible_at, expires_at, group_id, dedup_id) VALUES ";
    PgParams params;
    params.Add(queue_id).Add(now);
    int next = 3;
    for (size_t k = start; k < end; ++k) {
      const NewMessage& m = messages[fresh[k]];
      if (k > start) sql += ", ";
      sql += "($1, $2";
      for (int column = 0; column < 9; ++column) sql += ", $" + std::to_string(next++);
      sql += ")";
      params.Add(seqs[k]).Add(m.message_id).AddBytes(m.body).Add(m.body_md5);
      params.Add(m.attributes_json).Add(m.visible_at).Add(m.expires_at);
      params.Add(m.group_id).Add(m.deduplication_id);
    }
    TF_RETURN_IF_ERROR(conn.Run(sql, params));
  }
  return OkStatus();
}

// Records the fresh messages' deduplication ids until now + window.
Status RememberDedupIds(PgConnection& conn, int64_t queue_id, TimeMs expires_at,
                        const std::vector<NewMessage>& messages, const std::vector<size_t>& fresh,
                        const std::vector<int64_t>& seqs) {
  std::string values;
  PgParams params;
  params.Add(queue_id).Add(expires_at);
  int next = 3;
  for (size_t k = 0; k < fresh.size(); ++k) {
    const NewMessage& m = messages[fresh[k]];
    if (m.deduplication_id.empty()) continue;
    if (!values.empty()) values += ", ";
    values += "($1, $" + std::to_string(next) + ", $" + std::to_string(next + 1) + ", $" +
              std::to_string(next + 2) + "::bigint, $2::bigint)";
    next += 3;
    params.Add(m.deduplication_id).Add(m.message_id).Add(seqs[k]);
  }
  if (values.empty()) return OkStatus();
  return conn.Run(
      "INSERT INTO dedup (queue_id, dedup_id, message_id, seq, expires_at) VALUES " + values +
          " ON CONFLICT (queue_id, dedup_id) DO UPDATE SET message_id = excluded.message_id, "
          "seq = excluded.seq, expires_at = excluded.expires_at",
      params);
}

}  // namespace

Result<std::vector<SentMessage>> PostgresStore::SendMessages(
    int64_t queue_id, const std::vector<NewMessage>& messages, TimeMs now, TimeMs dedup_window_ms) {
  std::vector<SentMessage> sent;
  bool enqueued = false;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    sent.assign(messages.size(), SentMessage{});
    enqueued = false;
    // The queue's settings, under a key-share lock so that the queue is not deleted under this
    // send. The notification is sent only if the transaction commits.
    TF_ASSIGN_OR_RETURN(PgResult queue,
                        conn.Exec("SELECT config, pg_notify($2, id::text) FROM queues "
                                  "WHERE id = $1 FOR KEY SHARE",
                                  PgParams().Add(queue_id).Add(kQueueChannel)));
    if (queue.rows() == 0)
      return NotFound("queue #" + std::to_string(queue_id) + " does not exist");
    TF_ASSIGN_OR_RETURN(QueueConfig config, QueueConfigFromJson(std::string(queue.Text(0, 0))));

    if (config.fifo) TF_RETURN_IF_ERROR(LockFifoQueue(conn, queue_id));
    SendPlan plan;
    TF_RETURN_IF_ERROR(PlanDedup(conn, queue_id, messages, now, sent, plan));
    if (plan.fresh.empty()) return OkStatus();

    TF_ASSIGN_OR_RETURN(std::vector<int64_t> seqs, AllocateSequences(conn, plan.fresh.size()));
    TF_RETURN_IF_ERROR(InsertMessages(conn, queue_id, now, messages, plan.fresh, seqs));
    TF_RETURN_IF_ERROR(
        RememberDedupIds(conn, queue_id, now + dedup_window_ms, messages, plan.fresh, seqs));
    for (size_t k = 0; k < plan.fresh.size(); ++k) {
      sent[plan.fresh[k]] = SentMessage{messages[plan.fresh[k]].message_id, seqs[k], false};
    }
    for (const auto& [duplicate, original] : plan.copy_of) {
      sent[duplicate] = SentMessage{sent[original].message_id, sent[original].sequence, true};
    }
    enqueued = true;
    return OkStatus();
  }));
  if (enqueued) NotifyLocal(queue_id);
  return sent;
}

}  // namespace tf::store
