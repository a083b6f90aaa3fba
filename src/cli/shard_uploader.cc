#include "cli/shard_uploader.h"

#include <utility>

namespace tf::cli {

ShardUploader::ShardUploader(client::ObjectClient& objects, std::string bucket)
    : objects_(objects), bucket_(std::move(bucket)), thread_([this] { Run(); }) {}

ShardUploader::~ShardUploader() {
  {
    MutexLock lock(mu_);
    lock.Wait(cv_, [&]() REQUIRES(mu_) { return !pending_; });
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Status ShardUploader::Submit(std::string key, std::string_view shard, std::string sha256) {
  MutexLock lock(mu_);
  lock.Wait(cv_, [&]() REQUIRES(mu_) { return !pending_; });
  if (!failed_.ok()) return failed_;
  key_ = std::move(key);
  sha256_ = std::move(sha256);
  shard_.assign(shard);
  pending_ = true;
  lock.Unlock();
  cv_.notify_all();
  return OkStatus();
}

Status ShardUploader::Finish() {
  MutexLock lock(mu_);
  lock.Wait(cv_, [&]() REQUIRES(mu_) { return !pending_; });
  return failed_;
}

void ShardUploader::Run() {
  MutexLock lock(mu_);
  for (;;) {
    lock.Wait(cv_, [&]() REQUIRES(mu_) { return stop_ || pending_; });
    if (!pending_) return;  // stopped, nothing left
    // key_, sha256_ and shard_ are this thread's until pending_ is cleared.
    lock.Unlock();
    Status put =
        objects_.PutBytesChecked(bucket_, key_, shard_, sha256_).WithContext("uploading " + key_);
    lock.Lock();
    if (put.ok()) {
      uploaded_.push_back(key_);
    } else if (failed_.ok()) {
      failed_ = std::move(put);
    }
    pending_ = false;
    cv_.notify_all();
  }
}

}  // namespace tf::cli
