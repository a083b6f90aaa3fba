// Syncs a checkpoint directory in the background while its job runs: every interval on a thread
// of its own, and once more when stopped (after the job's processes have exited, so that the
// last checkpoint they wrote is kept).
//
// The interval is waited on a condition variable; tests drive it with SyncNow() and Stop()
// instead of waiting for time to pass.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <thread>

#include "base/mutex.h"
#include "worker/checkpoint_sync.h"

namespace tf::worker {

class CheckpointSyncer {
 public:
  // Called after every sync, on the thread that ran it (for logs and reports).
  using Observer = std::function<void(const Result<SyncStats>&)>;

  // `sync` must outlive this.
  CheckpointSyncer(CheckpointSync& sync, std::filesystem::path dir,
                   std::chrono::milliseconds interval, Observer observer = {});
  // Stops the thread without a last sync; call Stop() for that.
  ~CheckpointSyncer();
  CheckpointSyncer(const CheckpointSyncer&) = delete;
  CheckpointSyncer& operator=(const CheckpointSyncer&) = delete;

  // Starts the thread: the first sync comes one interval from now.
  void Start();
  // Syncs now on the calling thread (a sync in progress on the thread finishes first).
  Result<SyncStats> SyncNow();
  // Stops the thread, then syncs once more and returns that sync's outcome.
  Result<SyncStats> Stop();

  // Syncs finished so far, successful or not.
  int64_t syncs() const;

 private:
  void Loop();
  Result<SyncStats> RunSync();

  CheckpointSync& sync_;
  const std::filesystem::path dir_;
  const std::chrono::milliseconds interval_;
  const Observer observer_;
  std::thread thread_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  int64_t syncs_ GUARDED_BY(mu_) = 0;
};

}  // namespace tf::worker
