// SqliteStore's message operations: the SQS semantics that must hold inside one transaction.
#include <map>
#include <memory>
#include <set>

#include "base/crypto.h"
#include "store/config_json.h"
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kMessageColumns =
    "SELECT seq, message_id, body, body_md5, attributes, sent_at, receive_count, "
    "first_received_at, group_id, dedup_id, expires_at FROM messages ";

uint64_t NewReceipt() {
  for (;;) {
    uint64_t r = RandomU64();
    if (r != 0) return r;  // 0 means "never received"
  }
}

struct Candidate {
  ReceivedMessage message;
  TimeMs expires_at = 0;
};

Candidate ReadCandidate(const Stmt& q) {
  Candidate c;
  ReceivedMessage& m = c.message;
  m.sequence = q.Int(0);
  m.message_id = q.Text(1);
  m.body = q.Text(2);
  m.body_md5 = q.Text(3);
  m.attributes_json = q.Text(4);
  m.sent_at = q.Int(5);
  m.receive_count = static_cast<int>(q.Int(6));
  m.first_received_at = q.Int(7);
  m.group_id = q.Text(8);
  m.deduplication_id = q.Text(9);
  c.expires_at = q.Int(10);
  return c;
}

Status QueueExists(SqliteDb& db, int64_t queue_id) {
  TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT 1 FROM queues WHERE id = ?"));
  TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, queue_id).Step());
  if (!row) return NotFound("queue #" + std::to_string(queue_id) + " does not exist");
  return OkStatus();
}

// Visible messages in delivery order, up to `limit`.
Result<std::vector<Candidate>> SelectCandidates(SqliteDb& db, const ReceiveOptions& o, TimeMs now,
                                                int limit) {
  std::string sql =
      o.fifo ? std::string(kMessageColumns) +
                   "WHERE queue_id = ?1 AND visible_at <= ?2 AND group_id NOT IN ("
                   "  SELECT group_id FROM messages"
                   "  WHERE queue_id = ?1 AND visible_at > ?2 AND receive_count > 0)"
                   " ORDER BY seq LIMIT ?3"
             : std::string(kMessageColumns) +
                   "WHERE queue_id = ?1 AND visible_at <= ?2 ORDER BY visible_at, seq LIMIT ?3";
  TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(sql));
  q.Bind(1, o.queue_id).Bind(2, now).Bind(3, static_cast<int64_t>(limit));
  std::vector<Candidate> out;
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return out;
    out.push_back(ReadCandidate(q));
  }
}

Status MoveToDeadLetter(SqliteDb& db, const ReceiveOptions& o, const Candidate& c, TimeMs now) {
  // Standard queues keep the original enqueue time for retention; FIFO queues restart it.
  TimeMs start = o.fifo ? now : c.message.sent_at;
  TF_ASSIGN_OR_RETURN(
      Stmt q,
      db.Prepare(
          "UPDATE messages SET queue_id = ?, source_queue_id = ?, visible_at = ?, expires_at = ?, "
          "receipt = 0 WHERE seq = ?"));
  return q.Bind(1, o.dead_letter_queue_id)
      .Bind(2, o.queue_id)
      .Bind(3, now)
      .Bind(4, start + o.dead_letter_retention_ms)
      .Bind(5, c.message.sequence)
      .Run();
}

// The three hot writes, as work for the writer (each runs inside its own savepoint).

Status SendIn(SqliteDb& db, int64_t queue_id, const std::vector<NewMessage>& messages, TimeMs now,
              TimeMs dedup_window_ms, std::vector<SentMessage>& out) {
  out.clear();
  out.reserve(messages.size());
  TF_RETURN_IF_ERROR(QueueExists(db, queue_id));
  for (const NewMessage& m : messages) {
    if (!m.deduplication_id.empty()) {
      TF_ASSIGN_OR_RETURN(Stmt seen,
                          db.Prepare("SELECT message_id, seq FROM dedup "
                                     "WHERE queue_id = ? AND dedup_id = ? AND expires_at > ?"));
      TF_ASSIGN_OR_RETURN(bool row,
                          seen.Bind(1, queue_id).Bind(2, m.deduplication_id).Bind(3, now).Step());
      if (row) {
        out.push_back(SentMessage{seen.Text(0), seen.Int(1), /*duplicate=*/true});
        continue;
      }
    }
    TF_ASSIGN_OR_RETURN(
        Stmt insert,
        db.Prepare(
            "INSERT INTO messages (queue_id, message_id, body, body_md5, attributes, sent_at, "
            "visible_at, expires_at, group_id, dedup_id) VALUES (?,?,?,?,?,?,?,?,?,?)"));
    TF_RETURN_IF_ERROR(insert.Bind(1, queue_id)
                           .Bind(2, m.message_id)
                           .BindBlob(3, m.body)
                           .Bind(4, m.body_md5)
                           .Bind(5, m.attributes_json)
                           .Bind(6, now)
                           .Bind(7, m.visible_at)
                           .Bind(8, m.expires_at)
                           .Bind(9, m.group_id)
                           .Bind(10, m.deduplication_id)
                           .Run());
    int64_t seq = db.LastInsertId();
    if (!m.deduplication_id.empty()) {
      TF_ASSIGN_OR_RETURN(Stmt remember,
                          db.Prepare("INSERT OR REPLACE INTO dedup VALUES (?, ?, ?, ?, ?)"));
      TF_RETURN_IF_ERROR(remember.Bind(1, queue_id)
                             .Bind(2, m.deduplication_id)
                             .Bind(3, m.message_id)
                             .Bind(4, seq)
                             .Bind(5, now + dedup_window_ms)
                             .Run());
    }
    out.push_back(SentMessage{m.message_id, seq, false});
  }
  return OkStatus();
}

// *dead_lettered: whether a message moved to the dead-letter queue.
Status ReceiveIn(SqliteDb& db, const ReceiveOptions& o, TimeMs now,
                 std::vector<ReceivedMessage>& out, bool* dead_lettered) {
  out.clear();
  *dead_lettered = false;
  // A few rounds: messages moved to the dead-letter queue leave room for others.
  for (int round = 0; round < 4 && static_cast<int>(out.size()) < o.max_messages; ++round) {
    int want = o.max_messages - static_cast<int>(out.size());
    TF_ASSIGN_OR_RETURN(auto candidates, SelectCandidates(db, o, now, want));
    if (candidates.empty()) break;
    bool moved_any = false;
    for (Candidate& c : candidates) {
      if (o.dead_letter_queue_id != 0 && c.message.receive_count >= o.max_receive_count) {
        TF_RETURN_IF_ERROR(MoveToDeadLetter(db, o, c, now));
        moved_any = *dead_lettered = true;
        continue;
      }
      ReceivedMessage& m = c.message;
      m.receipt = NewReceipt();
      m.receive_count += 1;
      if (m.first_received_at == 0) m.first_received_at = now;
      TF_ASSIGN_OR_RETURN(
          Stmt update,
          db.Prepare("UPDATE messages SET receive_count = ?, receipt = ?, visible_at = ?, "
                     "first_received_at = ? WHERE seq = ?"));
      TF_RETURN_IF_ERROR(update.Bind(1, int64_t{m.receive_count})
                             .Bind(2, static_cast<int64_t>(m.receipt))
                             .Bind(3, now + o.visibility_timeout_ms)
                             .Bind(4, m.first_received_at)
                             .Bind(5, m.sequence)
                             .Run());
      out.push_back(std::move(m));
    }
    if (!moved_any) break;
  }
  return OkStatus();
}

Status DeleteIn(SqliteDb& db, int64_t queue_id, const std::vector<Receipt>& receipts,
                std::vector<Status>& out) {
  out.clear();
  out.reserve(receipts.size());
  for (const Receipt& r : receipts) {
    TF_ASSIGN_OR_RETURN(Stmt del, db.Prepare("DELETE FROM messages WHERE seq = ? AND queue_id = ? "
                                             "AND receipt = ? AND receipt <> 0"));
    TF_RETURN_IF_ERROR(
        del.Bind(1, r.sequence).Bind(2, queue_id).Bind(3, static_cast<int64_t>(r.receipt)).Run());
    if (db.Changes() > 0) {
      out.push_back(OkStatus());
      continue;
    }
    TF_ASSIGN_OR_RETURN(Stmt find,
                        db.Prepare("SELECT 1 FROM messages WHERE seq = ? AND queue_id = ?"));
    TF_ASSIGN_OR_RETURN(bool exists, find.Bind(1, r.sequence).Bind(2, queue_id).Step());
    out.push_back(exists ? Aborted("the receipt handle is stale: the message was received again "
                                   "after it was issued, and was not deleted")
                         : OkStatus());
  }
  return OkStatus();
}

// Hands `state->out` (or the failure) to `done`: the completion of a Submit.
template <typename State, typename Done>
std::function<void(Status)> Complete(std::shared_ptr<State> state, Done done) {
  return [state = std::move(state), done = std::move(done)](Status s) {
    if (s.ok()) {
      done(std::move(state->out));
    } else {
      done(std::move(s));
    }
  };
}

}  // namespace

Result<std::vector<SentMessage>> SqliteStore::SendMessages(int64_t queue_id,
                                                           const std::vector<NewMessage>& messages,
                                                           TimeMs now, TimeMs dedup_window_ms) {
  std::vector<SentMessage> out;
  TF_RETURN_IF_ERROR(writer_->Write(
      [&](SqliteDb& db) { return SendIn(db, queue_id, messages, now, dedup_window_ms, out); },
      [&] { Notify(queue_id); }));
  return out;
}

void SqliteStore::SendMessagesAsync(int64_t queue_id, std::vector<NewMessage> messages, TimeMs now,
                                    TimeMs dedup_window_ms,
                                    std::function<void(Result<std::vector<SentMessage>>)> done) {
  struct State {
    std::vector<NewMessage> messages;
    std::vector<SentMessage> out;
  };
  auto state = std::make_shared<State>(State{std::move(messages), {}});
  writer_->Submit(
      [state, queue_id, now, dedup_window_ms](SqliteDb& db) {
        return SendIn(db, queue_id, state->messages, now, dedup_window_ms, state->out);
      },
      [this, queue_id] { Notify(queue_id); }, Complete(state, std::move(done)));
}

Result<std::vector<ReceivedMessage>> SqliteStore::ReceiveMessages(const ReceiveOptions& o,
                                                                  TimeMs now) {
  std::vector<ReceivedMessage> out;
  bool dead_lettered = false;
  TF_RETURN_IF_ERROR(
      writer_->Write([&](SqliteDb& db) { return ReceiveIn(db, o, now, out, &dead_lettered); },
                     [&] {
                       if (dead_lettered) Notify(o.dead_letter_queue_id);
                     }));
  return out;
}

void SqliteStore::ReceiveMessagesAsync(
    const ReceiveOptions& o, TimeMs now,
    std::function<void(Result<std::vector<ReceivedMessage>>)> done) {
  struct State {
    ReceiveOptions options;
    std::vector<ReceivedMessage> out;
    bool dead_lettered = false;
  };
  auto state = std::make_shared<State>(State{o, {}, false});
  writer_->Submit(
      [state, now](SqliteDb& db) {
        return ReceiveIn(db, state->options, now, state->out, &state->dead_lettered);
      },
      [this, state] {
        if (state->dead_lettered) Notify(state->options.dead_letter_queue_id);
      },
      Complete(state, std::move(done)));
}

Result<std::vector<Status>> SqliteStore::DeleteMessages(int64_t queue_id,
                                                        const std::vector<Receipt>& receipts) {
  std::vector<Status> out;
  TF_RETURN_IF_ERROR(
      writer_->Write([&](SqliteDb& db) { return DeleteIn(db, queue_id, receipts, out); }));
  return out;
}

void SqliteStore::DeleteMessagesAsync(int64_t queue_id, std::vector<Receipt> receipts,
                                      std::function<void(Result<std::vector<Status>>)> done) {
  struct State {
    std::vector<Receipt> receipts;
    std::vector<Status> out;
  };
  auto state = std::make_shared<State>(State{std::move(receipts), {}});
  writer_->Submit([state, queue_id](
                      SqliteDb& db) { return DeleteIn(db, queue_id, state->receipts, state->out); },
                  {}, Complete(state, std::move(done)));
}

Result<std::vector<Status>> SqliteStore::ChangeVisibility(
    int64_t queue_id, const std::vector<VisibilityChange>& changes, TimeMs now) {
  std::vector<Status> out;
  bool made_visible = false;
  TF_RETURN_IF_ERROR(writer_->Write(
      [&](SqliteDb& db) -> Status {
        out.clear();
        made_visible = false;
        for (const VisibilityChange& c : changes) {
          TF_ASSIGN_OR_RETURN(Stmt update, db.Prepare("UPDATE messages SET visible_at = ? "
                                                      "WHERE seq = ? AND queue_id = ? AND receipt "
                                                      "= ? AND receipt <> 0 AND visible_at > ?"));
          TF_RETURN_IF_ERROR(update.Bind(1, c.visible_at)
                                 .Bind(2, c.receipt.sequence)
                                 .Bind(3, queue_id)
                                 .Bind(4, static_cast<int64_t>(c.receipt.receipt))
                                 .Bind(5, now)
                                 .Run());
          if (db.Changes() > 0) {
            made_visible = made_visible || c.visible_at <= now;
            out.push_back(OkStatus());
            continue;
          }
          TF_ASSIGN_OR_RETURN(
              Stmt find, db.Prepare("SELECT receipt FROM messages WHERE seq = ? AND queue_id = ?"));
          TF_ASSIGN_OR_RETURN(bool exists,
                              find.Bind(1, c.receipt.sequence).Bind(2, queue_id).Step());
          if (!exists) {
            out.push_back(NotFound("the message no longer exists"));
          } else if (static_cast<uint64_t>(find.Int(0)) != c.receipt.receipt) {
            out.push_back(
                Aborted("the receipt handle is stale: the message was received again "
                        "after it was issued"));
          } else {
            out.push_back(FailedPrecondition(
                "the message is not in flight: its visibility timeout has already expired"));
          }
        }
        return OkStatus();
      },
      [&] {
        if (made_visible) Notify(queue_id);
      }));
  return out;
}

Result<int64_t> SqliteStore::PurgeQueue(int64_t queue_id) {
  int64_t purged = 0;
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    TF_RETURN_IF_ERROR(QueueExists(db, queue_id));
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM messages WHERE queue_id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, queue_id).Run());
    purged = db.Changes();
    return OkStatus();
  }));
  return purged;
}

Result<QueueCounts> SqliteStore::CountMessages(int64_t queue_id, TimeMs now) {
  QueueCounts out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare("SELECT COALESCE(SUM(visible_at <= ?2), 0),"
                                   "       COALESCE(SUM(visible_at > ?2 AND receive_count > 0), 0),"
                                   "       COALESCE(SUM(visible_at > ?2 AND receive_count = 0), 0) "
                                   "FROM messages WHERE queue_id = ?1"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, queue_id).Bind(2, now).Step());
    if (row) out = QueueCounts{q.Int(0), q.Int(1), q.Int(2)};
    return OkStatus();
  }));
  return out;
}

Result<int64_t> SqliteStore::RedriveMessages(int64_t from_queue_id, int64_t to_queue_id, TimeMs now,
                                             int64_t limit) {
  int64_t moved = 0;
  std::set<int64_t> touched;
  TF_RETURN_IF_ERROR(writer_->Write(
      [&](SqliteDb& db) -> Status {
        moved = 0;
        touched.clear();
        TF_RETURN_IF_ERROR(QueueExists(db, from_queue_id));
        TF_ASSIGN_OR_RETURN(
            Stmt q, db.Prepare("SELECT seq, source_queue_id FROM messages "
                               "WHERE queue_id = ?1 AND visible_at <= ?2 "
                               // Back to their sources: only messages whose source still exists, so
                               // that unmovable ones never use up the limit ahead of movable ones.
                               "AND (?4 <> 0 OR source_queue_id IN (SELECT id FROM queues)) "
                               "ORDER BY seq LIMIT ?3"));
        q.Bind(1, from_queue_id).Bind(2, now).Bind(3, limit).Bind(4, to_queue_id);
        std::vector<std::pair<int64_t, int64_t>> rows;
        for (;;) {
          TF_ASSIGN_OR_RETURN(bool row, q.Step());
          if (!row) break;
          rows.emplace_back(q.Int(0), q.Int(1));
        }
        std::map<int64_t, TimeMs> retention;  // target queue -> its retention; absent: gone
        for (auto [seq, source] : rows) {
          int64_t target = to_queue_id != 0 ? to_queue_id : source;
          if (target == 0) continue;  // not dead-lettered from anywhere we know
          if (!retention.count(target)) {
            TF_ASSIGN_OR_RETURN(Stmt cfg, db.Prepare("SELECT config FROM queues WHERE id = ?"));
            TF_ASSIGN_OR_RETURN(bool row, cfg.Bind(1, target).Step());
            if (!row) {
              if (to_queue_id != 0)
                return NotFound("queue #" + std::to_string(target) + " does not exist");
              retention[target] = -1;
            } else {
              TF_ASSIGN_OR_RETURN(QueueConfig config, QueueConfigFromJson(cfg.Text(0)));
              retention[target] = config.retention_ms;
            }
          }
          if (retention[target] < 0) continue;  // its source queue was deleted: leave it here
          TF_ASSIGN_OR_RETURN(
              Stmt move,
              db.Prepare("UPDATE messages SET queue_id = ?, source_queue_id = 0, visible_at = ?, "
                         "expires_at = ?, receive_count = 0, receipt = 0, first_received_at = 0 "
                         "WHERE seq = ?"));
          TF_RETURN_IF_ERROR(move.Bind(1, target)
                                 .Bind(2, now)
                                 .Bind(3, now + retention[target])
                                 .Bind(4, seq)
                                 .Run());
          touched.insert(target);
          ++moved;
        }
        return OkStatus();
      },
      [&] {
        for (int64_t q : touched) Notify(q);
      }));
  return moved;
}

Result<int64_t> SqliteStore::DeleteExpired(TimeMs now) {
  int64_t deleted = 0;
  // Bounded transactions, so that a large backlog never holds the writer for long.
  for (;;) {
    int64_t batch = 0;
    TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
      TF_ASSIGN_OR_RETURN(
          Stmt q, db.Prepare("DELETE FROM messages WHERE seq IN "
                             "(SELECT seq FROM messages WHERE expires_at <= ? LIMIT 5000)"));
      TF_RETURN_IF_ERROR(q.Bind(1, now).Run());
      batch = db.Changes();
      return OkStatus();
    }));
    deleted += batch;
    if (batch < 5000) break;
  }
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM dedup WHERE expires_at <= ?"));
    return q.Bind(1, now).Run();
  }));
  return deleted;
}

}  // namespace tf::store
