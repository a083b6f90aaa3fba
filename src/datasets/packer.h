// Samples from local files into shards: `tensorfleet dataset create` packs with it.
//
// A source is a list of paths: a directory stands for every regular file below it, sorted by
// path; files are taken in the order given. Formats: "files" (each file one sample), "jsonl"
// (each non-blank line one sample, which must be a JSON value) and "text" (each non-blank
// line one sample). Lines lose their "\n" or "\r\n". Errors name the file, and the line for
// line formats: "data/b.jsonl:17: not JSON: ...".
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "datasets/shard_format.h"

namespace tf::datasets {

// kInvalidArgument unless files, jsonl or text.
Status ValidateSourceFormat(const std::string& format);

// The files `paths` name, in packing order: a file named, or the files below a directory named,
// leaving out what is hidden below it (names starting with '.', such as .git or .DS_Store;
// counted in *hidden when given). kNotFound for a path that does not exist, kInvalidArgument
// for one that is neither a regular file nor a directory, or when there are no files at all.
Result<std::vector<std::filesystem::path>> ListSourceFiles(const std::vector<std::string>& paths,
                                                           int* hidden = nullptr);

// Collects samples into shards of at most `shard_size` bytes (a sample larger than that gets
// a shard of its own) and hands each finished shard to `emit` with its sample count. A sample
// is held whole in memory while it is packed; none may be longer than `max_sample_bytes`
// (at most the format's kMaxSampleBytes), and a longer line is refused without being read
// further. Not thread-safe.
class Packer {
 public:
  // `shard` is valid until `emit` returns.
  using Emit = std::function<Status(std::string_view shard, uint64_t samples)>;
  Packer(uint64_t shard_size, Emit emit, uint64_t max_sample_bytes = kMaxSampleBytes)
      : shard_size_(shard_size),
        emit_(std::move(emit)),
        max_sample_bytes_(std::min(max_sample_bytes, kMaxSampleBytes)) {}

  // Adds the samples of one file; `progress` (may be empty) hears how many of its bytes were
  // read as reading goes. kInvalidArgument, naming the file (and line), for a sample that is
  // too long or a line that is not JSON in jsonl; kResourceExhausted when memory for a sample
  // runs out.
  Status AddFile(const std::filesystem::path& file, const std::string& format,
                 const std::function<void(uint64_t)>& progress = {});
  Status AddSample(std::string_view sample);
  // Emits the last shard. kInvalidArgument if no sample was added at all.
  Status Finish();

  uint64_t samples() const { return samples_; }
  uint64_t shards() const { return shards_; }

 private:
  Status ReadFile(const std::filesystem::path& file, const std::string& format,
                  const std::function<void(uint64_t)>& progress);
  Status Flush();

  const uint64_t shard_size_;
  Emit emit_;
  const uint64_t max_sample_bytes_;
  ShardWriter writer_;
  uint64_t samples_ = 0;
  uint64_t shards_ = 0;
};

}  // namespace tf::datasets
