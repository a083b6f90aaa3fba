// Uploads the shards `dataset create` packs, on a thread of its own, one at a time and in order,
// while the packer builds the next one: the packing (and its SHA-256) and the upload (sending,
// and the server's MD5, SHA-256 and write) then take the two cores at once instead of in turn.
#pragma once

#include <condition_variable>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "client/object_client.h"

namespace tf::cli {

class ShardUploader {
 public:
  ShardUploader(client::ObjectClient& objects, std::string bucket);
  ~ShardUploader();  // waits for the upload in flight
  ShardUploader(const ShardUploader&) = delete;
  ShardUploader& operator=(const ShardUploader&) = delete;

  // Waits for the shard before to be uploaded, then copies `shard` (it need not outlive the
  // call) and starts uploading it as `key`; `sha256` (hex) is its SHA-256, which the index
  // needs too: taken once, and the server stores the shard only if it matches. Once an upload
  // has failed nothing more is uploaded, and this returns that error ("uploading KEY: ...")
  // without taking the shard.
  Status Submit(std::string key, std::string_view shard, std::string sha256);
  // Waits for the last upload: OK if every shard submitted was uploaded, else the first error.
  Status Finish();
  // The keys uploaded, in order (those of a failed create to remove). After Finish.
  const std::vector<std::string>& uploaded() const { return uploaded_; }

 private:
  void Run();

  client::ObjectClient& objects_;
  const std::string bucket_;
  Mutex mu_;
  std::condition_variable cv_;
  // key_ and shard_ wait for the thread, or are being uploaded.
  bool pending_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  // Handed over: written with mu_ held while pending_ is false, then the upload thread's alone
  // until it clears pending_ (which the analysis cannot express, so they carry no annotation).
  std::string key_;
  std::string sha256_;
  std::string shard_;              // kept from one shard to the next (its memory faulted in once)
  Status failed_ GUARDED_BY(mu_);  // the first failed upload
  std::vector<std::string> uploaded_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace tf::cli
