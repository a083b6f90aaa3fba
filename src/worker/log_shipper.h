// A job's log, kept in the object service while it grows so that it outlives the machine:
// the bytes appended to the log file since the last shipment become the next chunk object,
//
//   <prefix>/0000000000, <prefix>/0000000001, ...   (the chunk number, 10 digits)
//
// each at most max_chunk_bytes, in order, none empty. Chunks are cut at byte boundaries, not
// lines. Concatenated they are the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "client/object_client.h"

namespace tf::worker {

inline constexpr size_t kMaxLogChunkBytes = 4 << 20;

// The object key of chunk `number` under `prefix` ("" or "logs/job_1/1/0", no trailing '/').
std::string LogChunkKey(const std::string& prefix, int64_t number);

// Thread-safe: calls are serialized.
class LogShipper {
 public:
  // The file need not exist yet (nothing to ship until it does). `client` must outlive this.
  LogShipper(client::ObjectClient& client, std::string bucket, std::string prefix,
             std::filesystem::path file, size_t max_chunk_bytes = kMaxLogChunkBytes);

  // Uploads what was appended to the file since the last call, as chunks of up to
  // max_chunk_bytes. Returns how many chunks were uploaded (0 if nothing was appended or the
  // file does not exist yet). After an error nothing is lost: the next call starts again from
  // the first byte not yet shipped, and a chunk whose upload failed is sent again under the same
  // number.
  Result<int> ShipNow();
  // The last shipment, once the process has exited: ships whatever is left.
  Result<int> Flush() { return ShipNow(); }

  int64_t next_chunk() const;
  uint64_t shipped_bytes() const;

 private:
  client::ObjectClient& client_;
  const std::string bucket_;
  const std::string prefix_;
  const std::filesystem::path file_;
  const size_t max_chunk_bytes_;
  mutable Mutex mu_;
  int64_t next_chunk_ GUARDED_BY(mu_) = 0;
  uint64_t offset_ GUARDED_BY(mu_) = 0;  // bytes of the file shipped so far
};

struct LogChunk {
  int64_t number = 0;
  std::string bytes;
};

// The chunks under `prefix` from number `from_chunk` on, in order, stopping at the first one
// not there yet or once max_bytes have been gathered (at least one chunk is returned if there is
// one). For `tensorfleet logs -f`: call again from the number after the last one returned.
Result<std::vector<LogChunk>> ReadLogChunks(client::ObjectClient& client, const std::string& bucket,
                                            const std::string& prefix, int64_t from_chunk,
                                            size_t max_bytes = 16 << 20);

}  // namespace tf::worker
