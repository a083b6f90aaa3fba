#include "cli/shard_uploader.h"

#include <utility>

namespace tf::cli {

ShardUploader::ShardUploader(worker::ObjectClient& objects, std::string bucket)
    : objects_(objects), bucket_(std::move(bucket)), thread_([this] { Run(); }) {}

ShardUploader::~ShardUploader() {
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !pending_; });
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Status ShardUploader::Submit(std::string key, std::string_view shard, std::string sha256) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !pending_; });
  if (!failed_.ok()) return failed_;
  key_ = std::move(key);
  sha256_ = std::move(sha256);
  shard_.assign(shard);
  pending_ = true;
  lock.unlock();
  cv_.notify_all();
  return OkStatus();
}

Status ShardUploader::Finish() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !pending_; });
  return failed_;
}

void ShardUploader::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || pending_; });
    if (!pending_) return;  // stopped, nothing left
    // key_, sha256_ and shard_ are this thread's until pending_ is cleared.
    lock.unlock();
    Status put =
        objects_.PutBytesChecked(bucket_, key_, shard_, sha256_).WithContext("uploading " + key_);
    lock.lock();
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
