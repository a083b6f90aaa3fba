#include "worker/checkpoint_syncer.h"

namespace tf::worker {

CheckpointSyncer::CheckpointSyncer(CheckpointSync& sync, std::filesystem::path dir,
                                   std::chrono::milliseconds interval, Observer observer)
    : sync_(sync), dir_(std::move(dir)), interval_(interval), observer_(std::move(observer)) {}

CheckpointSyncer::~CheckpointSyncer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CheckpointSyncer::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Loop(); });
}

void CheckpointSyncer::Loop() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    (void)RunSync();
    lock.lock();
  }
}

Result<SyncStats> CheckpointSyncer::RunSync() {
  Result<SyncStats> result = sync_.Sync(dir_);
  {
    std::lock_guard lock(mu_);
    ++syncs_;
  }
  if (observer_) observer_(result);
  return result;
}

Result<SyncStats> CheckpointSyncer::SyncNow() { return RunSync(); }

Result<SyncStats> CheckpointSyncer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  return RunSync();
}

int64_t CheckpointSyncer::syncs() const {
  std::lock_guard lock(mu_);
  return syncs_;
}

}  // namespace tf::worker
