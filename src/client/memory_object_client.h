// An ObjectClient held in memory, for tests of what the worker builds on objects (checkpoints,
// logs). It behaves as the HTTP one does (missing buckets, atomic replacement, checked puts) and
// lets a test cut a call off or change a file mid-way through the hooks below.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "client/object_client.h"

namespace tf::client {

class MemoryObjectClient final : public ObjectClient {
 public:
  // Runs before every write (PutFile, PutFileChecked, PutBytes, PutBytesChecked, Delete), before
  // the file is read. A non-OK status fails that call with nothing changed, as a crash or a dropped
  // connection would.
  using WriteHook = std::function<Status(const std::string& bucket, const std::string& key)>;

  Status EnsureBucket(const std::string& bucket) override;
  Status PutFile(const std::string& bucket, const std::string& key,
                 const std::filesystem::path& file) override;
  Status PutFileChecked(const std::string& bucket, const std::string& key,
                        const std::filesystem::path& file, const std::string& sha256) override;
  Status PutBytes(const std::string& bucket, const std::string& key,
                  std::string_view bytes) override;
  Status PutBytesChecked(const std::string& bucket, const std::string& key, std::string_view bytes,
                         const std::string& sha256) override;
  Result<std::optional<std::string>> GetBytes(const std::string& bucket,
                                              const std::string& key) override;
  Status GetToFile(const std::string& bucket, const std::string& key,
                   const std::filesystem::path& dest) override;
  Result<std::vector<std::string>> ListKeys(const std::string& bucket,
                                            const std::string& prefix) override;
  Status Delete(const std::string& bucket, const std::string& key) override;

  void set_write_hook(WriteHook hook);
  // Replaces an object's content directly (damage, for tests); no hook runs.
  void Overwrite(const std::string& bucket, const std::string& key, std::string content);
  // Successful puts so far (files and bytes).
  int puts() const;

 private:
  Status BeforeWrite(const std::string& bucket, const std::string& key);
  Status Store(const std::string& bucket, const std::string& key, std::string content);

  mutable Mutex mu_;
  std::map<std::string, std::map<std::string, std::string>> buckets_ GUARDED_BY(mu_);
  WriteHook hook_ GUARDED_BY(mu_);
  int puts_ GUARDED_BY(mu_) = 0;
};

}  // namespace tf::client
