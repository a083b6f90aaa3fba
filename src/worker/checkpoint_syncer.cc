#include "worker/checkpoint_syncer.h"

namespace tf::worker {

CheckpointSyncer::CheckpointSyncer(CheckpointSync& sync, std::filesystem::path dir,
                                   std::chrono::milliseconds interval, Observer observer)
    : sync_(sync), dir_(std::move(dir)), interval_(interval), observer_(std::move(observer)) {}

CheckpointSyncer::~CheckpointSyncer() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CheckpointSyncer::Start() {
  MutexLock lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Loop(); });
}

void CheckpointSyncer::Loop() {
  MutexLock lock(mu_);
  while (!lock.WaitFor(cv_, interval_, [this]() REQUIRES(mu_) { return stopping_; })) {
    lock.Unlock();
    (void)RunSync();
    lock.Lock();
  }
}

Result<SyncStats> CheckpointSyncer::RunSync() {
  Result<SyncStats> result = sync_.Sync(dir_);
  {
    MutexLock lock(mu_);
    ++syncs_;
  }
  if (observer_) observer_(result);
  return result;
}

Result<SyncStats> CheckpointSyncer::SyncNow() { return RunSync(); }

Result<SyncStats> CheckpointSyncer::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  return RunSync();
}

int64_t CheckpointSyncer::syncs() const {
  MutexLock lock(mu_);
  return syncs_;
}

}  // namespace tf::worker
