// PostgresStore's operations on received messages: deleting them and changing their visibility,
// each with one status per receipt.
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

Status StaleReceipt() {
  return Aborted("the receipt handle is stale: the message was received again after it was issued");
}

// (seq, receipt) as one key; receipts are random, so xor-ing is a fine hash.
struct ReceiptKey {
  int64_t seq;
  int64_t receipt;
  bool operator==(const ReceiptKey&) const = default;
};
struct ReceiptKeyHash {
  size_t operator()(const ReceiptKey& k) const {
    return std::hash<int64_t>()(k.seq) ^ std::hash<int64_t>()(k.receipt);
  }
};

}  // namespace

Result<std::vector<Status>> PostgresStore::DeleteMessages(int64_t queue_id,
                                                          const std::vector<Receipt>& receipts) {
  std::vector<Status> out;
  if (receipts.empty()) return out;
  std::vector<int64_t> seqs;
  std::vector<int64_t> codes;
  for (const Receipt& r : receipts) {
    seqs.push_back(r.sequence);
    codes.push_back(ReceiptToDb(r.receipt));
  }
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    out.assign(receipts.size(), OkStatus());
    // One statement deletes every message whose receipt is current. (A stored receipt of 0 was
    // never handed out.)
    TF_ASSIGN_OR_RETURN(
        PgResult deleted,
        conn.Exec("DELETE FROM messages m USING unnest($2::bigint[], $3::bigint[]) "
                  "AS r(seq, receipt) WHERE m.queue_id = $1 AND m.seq = r.seq "
                  "AND m.receipt = r.receipt AND m.receipt <> 0 RETURNING m.seq, m.receipt",
                  PgParams().Add(queue_id).AddInt64Array(seqs).AddInt64Array(codes)));
    if (deleted.rows() == static_cast<int>(receipts.size())) return OkStatus();
    std::unordered_set<ReceiptKey, ReceiptKeyHash> done;
    for (int i = 0; i < deleted.rows(); ++i) done.insert({deleted.Int(i, 0), deleted.Int(i, 1)});
    // The rest: still there means the receipt is stale; gone means deleted already. Read after
    // the delete committed, so a message deleted meanwhile by someone else counts as gone.
    std::vector<int64_t> unsure;
    for (size_t i = 0; i < receipts.size(); ++i) {
      if (!done.contains({seqs[i], codes[i]})) unsure.push_back(seqs[i]);
    }
    TF_ASSIGN_OR_RETURN(PgResult present,
                        conn.Exec("SELECT seq FROM messages WHERE queue_id = $1 "
                                  "AND seq = ANY($2::bigint[])",
                                  PgParams().Add(queue_id).AddInt64Array(unsure)));
    std::unordered_set<int64_t> still_there;
    for (int i = 0; i < present.rows(); ++i) still_there.insert(present.Int(i, 0));
    for (size_t i = 0; i < receipts.size(); ++i) {
      if (!done.contains({seqs[i], codes[i]}) && still_there.contains(seqs[i])) {
        out[i] = StaleReceipt();
      }
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Status>> PostgresStore::ChangeVisibility(
    int64_t queue_id, const std::vector<VisibilityChange>& changes, TimeMs now) {
  std::vector<Status> out;
  bool made_visible = false;
  if (changes.empty()) return out;
  std::vector<int64_t> requested;
  for (const VisibilityChange& c : changes) requested.push_back(c.receipt.sequence);
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    out.assign(changes.size(), OkStatus());
    made_visible = false;
    // Locked in sequence order, as every multi-row lock here is, to keep deadlocks rare.
    TF_ASSIGN_OR_RETURN(PgResult rows,
                        conn.Exec("SELECT seq, receipt, visible_at FROM messages "
                                  "WHERE queue_id = $1 AND seq = ANY($2::bigint[]) "
                                  "ORDER BY seq FOR UPDATE",
                                  PgParams().Add(queue_id).AddInt64Array(requested)));
    struct Row {
      int64_t receipt;
      TimeMs visible_at;
      bool changed = false;
    };
    std::unordered_map<int64_t, Row> found;
    for (int i = 0; i < rows.rows(); ++i)
      found[rows.Int(i, 0)] = Row{rows.Int(i, 1), rows.Int(i, 2)};
    // In order, as if one at a time: a second change of the same message sees the first.
    for (size_t i = 0; i < changes.size(); ++i) {
      const VisibilityChange& c = changes[i];
      auto it = found.find(c.receipt.sequence);
      if (it == found.end()) {
        out[i] = NotFound("the message no longer exists");
      } else if (it->second.receipt == 0 || it->second.receipt != ReceiptToDb(c.receipt.receipt)) {
        out[i] = StaleReceipt();
      } else if (it->second.visible_at <= now) {
        out[i] = FailedPrecondition(
            "the message is not in flight: its visibility timeout has already expired");
      } else {
        it->second.visible_at = c.visible_at;
        it->second.changed = true;
        made_visible = made_visible || c.visible_at <= now;
      }
    }
    std::vector<int64_t> seqs;
    std::vector<int64_t> times;
    for (const auto& [seq, row] : found) {
      if (!row.changed) continue;
      seqs.push_back(seq);
      times.push_back(row.visible_at);
    }
    if (seqs.empty()) return OkStatus();
    TF_RETURN_IF_ERROR(conn.Run(
        "UPDATE messages m SET visible_at = v.visible_at "
        "FROM unnest($1::bigint[], $2::bigint[]) AS v(seq, visible_at) WHERE m.seq = v.seq",
        PgParams().AddInt64Array(seqs).AddInt64Array(times)));
    if (made_visible) return NotifyQueues(conn, {queue_id});
    return OkStatus();
  }));
  if (made_visible) NotifyLocal(queue_id);
  return out;
}

}  // namespace tf::store
