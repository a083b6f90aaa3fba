#include "store/sqlite_writer.h"

#include <future>
#include <utility>

namespace tf::store {
namespace {
constexpr size_t kMaxBatch = 512;  // bounds how long one transaction holds the write lock
}  // namespace

SqliteWriter::SqliteWriter(std::unique_ptr<SqliteDb> db)
    : db_(std::move(db)), thread_([this] { Loop(); }) {}

SqliteWriter::~SqliteWriter() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Status SqliteWriter::Write(std::function<Status(SqliteDb&)> work,
                           std::function<void()> after_commit) {
  // The writer thread owns the promise: it may still be inside set_value when get() returns.
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> result = promise->get_future();
  Submit(std::move(work), std::move(after_commit),
         [promise](Status s) { promise->set_value(std::move(s)); });
  return result.get();
}

void SqliteWriter::Submit(std::function<Status(SqliteDb&)> work, std::function<void()> after_commit,
                          std::function<void(Status)> done) {
  bool wake = false;
  {
    MutexLock lock(mu_);
    if (stopping_) {
      lock.Unlock();
      done(Unavailable("the store is closing"));
      return;
    }
    pending_.push_back(Item{std::move(work), std::move(after_commit), std::move(done)});
    // A busy writer takes whatever is pending when its transaction ends: it needs no wake-up.
    std::swap(wake, idle_);
  }
  if (wake) cv_.notify_one();
}

int64_t SqliteWriter::writes() const {
  MutexLock lock(mu_);
  return writes_;
}

int64_t SqliteWriter::transactions() const {
  MutexLock lock(mu_);
  return transactions_;
}

void SqliteWriter::Loop() {
  for (;;) {
    std::deque<Item> batch;
    {
      MutexLock lock(mu_);
      while (!stopping_ && pending_.empty()) {
        idle_ = true;
        lock.Wait(cv_);
      }
      idle_ = false;
      if (pending_.empty()) return;  // stopping, and nothing left to do
      while (!pending_.empty() && batch.size() < kMaxBatch) {
        batch.push_back(std::move(pending_.front()));
        pending_.pop_front();
      }
    }
    RunBatch(batch);
  }
}

void SqliteWriter::RunBatch(std::deque<Item>& batch) {
  std::vector<Status> results(batch.size());
  Status begin = db_->Run("BEGIN IMMEDIATE");
  if (!begin.ok()) {
    for (auto& item : batch) item.done(begin);
    return;
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    Status savepoint = db_->Run("SAVEPOINT w");
    results[i] = savepoint.ok() ? batch[i].work(*db_) : savepoint;
    if (!results[i].ok()) (void)db_->Run("ROLLBACK TO w");
    (void)db_->Run("RELEASE w");
  }
  Status commit = db_->Run("COMMIT");
  if (!commit.ok()) {
    (void)db_->Run("ROLLBACK");
    for (auto& r : results) {
      if (r.ok()) r = commit.WithContext("commit failed");
    }
  }
  {
    MutexLock lock(mu_);
    writes_ += static_cast<int64_t>(batch.size());
    transactions_ += 1;
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (results[i].ok() && batch[i].after_commit) batch[i].after_commit();
    batch[i].done(std::move(results[i]));
  }
}

}  // namespace tf::store
