#include "client/memory_object_client.h"

#include <fstream>
#include <iterator>

#include "base/crypto.h"

namespace tf::client {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadWholeFile(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    return InvalidArgument(file.string() + " is not a regular file");
  std::ifstream in(file, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  if (in.bad()) return InvalidArgument("cannot read " + file.string());
  return content;
}

Status NoBucket(const std::string& bucket) {
  return NotFound("bucket '" + bucket + "' does not exist");
}

}  // namespace

Status MemoryObjectClient::EnsureBucket(const std::string& bucket) {
  MutexLock lock(mu_);
  buckets_[bucket];
  return OkStatus();
}

Status MemoryObjectClient::BeforeWrite(const std::string& bucket, const std::string& key) {
  WriteHook hook;
  {
    MutexLock lock(mu_);
    hook = hook_;
  }
  return hook ? hook(bucket, key) : OkStatus();
}

Status MemoryObjectClient::Store(const std::string& bucket, const std::string& key,
                                 std::string content) {
  MutexLock lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return NoBucket(bucket);
  it->second[key] = std::move(content);
  ++puts_;
  return OkStatus();
}

Status MemoryObjectClient::PutFile(const std::string& bucket, const std::string& key,
                                   const fs::path& file) {
  TF_RETURN_IF_ERROR(BeforeWrite(bucket, key));
  TF_ASSIGN_OR_RETURN(std::string content, ReadWholeFile(file));
  return Store(bucket, key, std::move(content));
}

Status MemoryObjectClient::PutFileChecked(const std::string& bucket, const std::string& key,
                                          const fs::path& file, const std::string& sha256) {
  TF_RETURN_IF_ERROR(BeforeWrite(bucket, key));
  TF_ASSIGN_OR_RETURN(std::string content, ReadWholeFile(file));
  if (Sha256Hex(content) != sha256) {
    return Aborted(file.string() + " changed after it was hashed; tf://" + bucket + "/" + key +
                   " was not stored");
  }
  return Store(bucket, key, std::move(content));
}

Status MemoryObjectClient::PutBytes(const std::string& bucket, const std::string& key,
                                    std::string_view bytes) {
  TF_RETURN_IF_ERROR(BeforeWrite(bucket, key));
  return Store(bucket, key, std::string(bytes));
}

Status MemoryObjectClient::PutBytesChecked(const std::string& bucket, const std::string& key,
                                           std::string_view bytes, const std::string& sha256) {
  TF_RETURN_IF_ERROR(BeforeWrite(bucket, key));
  if (const std::string got = Sha256Hex(bytes); got != sha256) {
    return InvalidArgument("the content's SHA-256 is " + got + ", not the expected " + sha256 +
                           "; tf://" + bucket + "/" + key + " was not stored");
  }
  return Store(bucket, key, std::string(bytes));
}

Result<std::optional<std::string>> MemoryObjectClient::GetBytes(const std::string& bucket,
                                                                const std::string& key) {
  MutexLock lock(mu_);
  auto b = buckets_.find(bucket);
  if (b == buckets_.end()) return std::optional<std::string>();
  auto o = b->second.find(key);
  if (o == b->second.end()) return std::optional<std::string>();
  return std::optional<std::string>(o->second);
}

Status MemoryObjectClient::GetToFile(const std::string& bucket, const std::string& key,
                                     const fs::path& dest) {
  TF_ASSIGN_OR_RETURN(std::optional<std::string> content, GetBytes(bucket, key));
  if (!content) return NotFound("object tf://" + bucket + "/" + key + " does not exist");
  fs::path temp = dest.parent_path() / ("." + dest.filename().string() + ".tmp-" + RandomHex(4));
  {
    std::ofstream out(temp, std::ios::binary);
    out << *content;
    if (!out.flush()) {
      std::error_code ec;
      fs::remove(temp, ec);
      return InvalidArgument("cannot write " + temp.string());
    }
  }
  std::error_code ec;
  fs::rename(temp, dest, ec);
  if (ec) {
    fs::remove(temp, ec);
    return InvalidArgument("cannot create " + dest.string() + ": " + ec.message());
  }
  return OkStatus();
}

Result<std::vector<std::string>> MemoryObjectClient::ListKeys(const std::string& bucket,
                                                              const std::string& prefix) {
  MutexLock lock(mu_);
  auto b = buckets_.find(bucket);
  if (b == buckets_.end()) return NoBucket(bucket);
  std::vector<std::string> keys;
  for (auto it = b->second.lower_bound(prefix);
       it != b->second.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    keys.push_back(it->first);
  }
  return keys;
}

Status MemoryObjectClient::Delete(const std::string& bucket, const std::string& key) {
  TF_RETURN_IF_ERROR(BeforeWrite(bucket, key));
  MutexLock lock(mu_);
  auto b = buckets_.find(bucket);
  if (b != buckets_.end()) b->second.erase(key);
  return OkStatus();
}

void MemoryObjectClient::set_write_hook(WriteHook hook) {
  MutexLock lock(mu_);
  hook_ = std::move(hook);
}

void MemoryObjectClient::Overwrite(const std::string& bucket, const std::string& key,
                                   std::string content) {
  MutexLock lock(mu_);
  buckets_[bucket][key] = std::move(content);
}

int MemoryObjectClient::puts() const {
  MutexLock lock(mu_);
  return puts_;
}

}  // namespace tf::client
