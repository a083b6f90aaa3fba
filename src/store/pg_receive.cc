// PostgresStore::ReceiveMessages: claiming visible messages, and moving those past their receive
// limit to the dead-letter queue.
//
// Standard queues claim with FOR UPDATE SKIP LOCKED: concurrent receivers (on any server) pass
// over each other's rows instead of waiting, and never get the same message. FIFO queues take the
// queue's advisory lock first (LockFifoQueue), so that the "no group with a message in flight"
// check and the claim happen as one step.
#include <unordered_map>

#include "base/crypto.h"
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

// Rounds of claiming: messages moved to the dead-letter queue leave room for others.
constexpr int kMaxRounds = 4;

struct Candidate {
  int64_t seq = 0;
  int receive_count = 0;
};

uint64_t NewReceipt() {
  for (;;) {
    uint64_t r = RandomU64();
    if (r != 0) return r;  // 0 means "no valid receipt"
  }
}

// Up to `limit` visible messages in delivery order, locked, leaving out `taken`.
Result<std::vector<Candidate>> Claim(PgConnection& conn, const ReceiveOptions& o, TimeMs now,
                                     int limit, const std::vector<int64_t>& taken) {
  const char* sql =
      o.fifo ? "SELECT m.seq, m.receive_count FROM messages m "
               "WHERE m.queue_id = $1 AND m.visible_at <= $2 AND m.seq <> ALL($3::bigint[]) "
               "AND NOT EXISTS (SELECT 1 FROM messages f WHERE f.queue_id = $1 "
               "  AND f.group_id = m.group_id AND f.visible_at > $2 AND f.receive_count > 0) "
               "ORDER BY m.seq LIMIT $4 FOR UPDATE OF m"
             : "SELECT seq, receive_count FROM messages "
               "WHERE queue_id = $1 AND visible_at <= $2 AND seq <> ALL($3::bigint[]) "
               "ORDER BY visible_at, seq LIMIT $4 FOR UPDATE SKIP LOCKED";
  TF_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec(sql, PgParams().Add(o.queue_id).Add(now).AddInt64Array(taken).Add(int64_t{limit})));
  std::vector<Candidate> out;
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back({r.Int(i, 0), static_cast<int>(r.Int(i, 1))});
  }
  return out;
}

// Moves messages to the dead-letter queue, visible there at once with their receive count kept,
// remembering where they came from. Standard queues keep the original enqueue time for retention;
// FIFO queues restart it.
Status DeadLetter(PgConnection& conn, const ReceiveOptions& o, TimeMs now,
                  const std::vector<int64_t>& seqs) {
  return conn.Run(
      "UPDATE messages SET queue_id = $1, source_queue_id = queue_id, visible_at = $2, "
      "expires_at = (CASE WHEN $3::boolean THEN $2 ELSE sent_at END) + $4, receipt = 0 "
      "WHERE seq = ANY($5::bigint[])",
      PgParams()
          .Add(o.dead_letter_queue_id)
          .Add(now)
          .AddBool(o.fifo)
          .Add(o.dead_letter_retention_ms)
          .AddInt64Array(seqs));
}

// Marks messages received, each with a fresh receipt, and returns them in the order of `seqs`.
Status Deliver(PgConnection& conn, const ReceiveOptions& o, TimeMs now,
               const std::vector<int64_t>& seqs, std::vector<ReceivedMessage>& out) {
  std::vector<int64_t> receipts;
  for (size_t i = 0; i < seqs.size(); ++i) receipts.push_back(ReceiptToDb(NewReceipt()));
  TF_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec("UPDATE messages m SET receive_count = m.receive_count + 1, receipt = v.receipt, "
                "visible_at = $1, first_received_at = CASE WHEN m.first_received_at = 0 "
                "THEN $2 ELSE m.first_received_at END "
                "FROM unnest($3::bigint[], $4::bigint[]) AS v(seq, receipt) WHERE m.seq = v.seq "
                "RETURNING m.seq, m.receipt, m.message_id, m.body, m.body_md5, m.attributes, "
                "m.receive_count, m.sent_at, m.first_received_at, m.group_id, m.dedup_id",
                PgParams()
                    .Add(now + o.visibility_timeout_ms)
                    .Add(now)
                    .AddInt64Array(seqs)
                    .AddInt64Array(receipts)));
  std::unordered_map<int64_t, ReceivedMessage> by_seq;
  for (int i = 0; i < r.rows(); ++i) {
    ReceivedMessage m;
    m.sequence = r.Int(i, 0);
    m.receipt = ReceiptFromDb(r.Int(i, 1));
    m.message_id = r.Text(i, 2);
    m.body = r.Bytes(i, 3);
    m.body_md5 = r.Text(i, 4);
    m.attributes_json = r.Text(i, 5);
    m.receive_count = static_cast<int>(r.Int(i, 6));
    m.sent_at = r.Int(i, 7);
    m.first_received_at = r.Int(i, 8);
    m.group_id = r.Text(i, 9);
    m.deduplication_id = r.Text(i, 10);
    by_seq.emplace(m.sequence, std::move(m));
  }
  for (int64_t seq : seqs) {
    auto it = by_seq.find(seq);
    if (it == by_seq.end()) return Internal("postgresql: a claimed message vanished");
    out.push_back(std::move(it->second));
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<ReceivedMessage>> PostgresStore::ReceiveMessages(const ReceiveOptions& o,
                                                                    TimeMs now) {
  std::vector<ReceivedMessage> out;
  bool dead_lettered = false;
  if (o.max_messages <= 0) return out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    out.clear();
    dead_lettered = false;
    if (o.fifo) TF_RETURN_IF_ERROR(LockFifoQueue(conn, o.queue_id));
    std::vector<int64_t> taken;
    for (int round = 0; round < kMaxRounds; ++round) {
      const int want = o.max_messages - static_cast<int>(out.size());
      if (want <= 0) break;
      TF_ASSIGN_OR_RETURN(std::vector<Candidate> claimed, Claim(conn, o, now, want, taken));
      if (claimed.empty()) break;
      std::vector<int64_t> dead;
      std::vector<int64_t> deliver;
      for (const Candidate& c : claimed) {
        taken.push_back(c.seq);
        if (o.dead_letter_queue_id != 0 && c.receive_count >= o.max_receive_count) {
          dead.push_back(c.seq);
        } else {
          deliver.push_back(c.seq);
        }
      }
      if (!dead.empty()) {
        TF_RETURN_IF_ERROR(DeadLetter(conn, o, now, dead));
        dead_lettered = true;
      }
      if (!deliver.empty()) TF_RETURN_IF_ERROR(Deliver(conn, o, now, deliver, out));
      if (dead.empty()) break;  // a short batch means the queue ran dry
    }
    if (dead_lettered) return NotifyQueues(conn, {o.dead_letter_queue_id});
    return OkStatus();
  }));
  if (dead_lettered) NotifyLocal(o.dead_letter_queue_id);
  return out;
}

}  // namespace tf::store
