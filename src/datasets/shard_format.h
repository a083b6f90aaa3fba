// The shard file: many samples in one object, each checkable on its own (docs/datasets.md).
//
//   header (32 bytes)   magic "TFSHARD1", version, header size, sample count, table offset
//   samples             the samples' bytes, back to back, in order
//   offset table        per sample: offset (u64), size (u32), CRC-32C (u32)
//   footer (8 bytes)    CRC-32C of the offset table, magic "TFSE"
//
// All integers little-endian. ShardWriter builds one; ShardView reads one, trusting nothing: the
// structure is checked against the shard's size when it is opened and every sample against its
// CRC-32C when it is read, and every error names the shard and the byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tf::datasets {

inline constexpr std::string_view kShardMagic = "TFSHARD1";
inline constexpr std::string_view kShardEndMagic = "TFSE";
inline constexpr uint32_t kShardVersion = 1;
inline constexpr uint64_t kShardHeaderSize = 32;
inline constexpr uint64_t kShardEntrySize = 16;
inline constexpr uint64_t kShardFooterSize = 8;
// A sample's size is a u32 in the table.
inline constexpr uint64_t kMaxSampleBytes = 0xffffffffu;

// Builds a shard in memory, one after another in the same memory. Not thread-safe.
class ShardWriter {
 public:
  ShardWriter();
  // kInvalidArgument if the sample is larger than kMaxSampleBytes.
  Status Add(std::string_view sample);
  uint64_t sample_count() const { return entries_.size(); }
  // The size the shard would have if finished now.
  uint64_t size() const;
  // The whole shard, valid until the next Add or Finish; the writer is empty again afterwards.
  // The next shard is built in the same memory: a packer making shard after shard of 64 MiB
  // does not take (and fault in) fresh memory for each.
  std::string_view Finish();

 private:
  struct Entry {
    uint64_t offset;
    uint32_t size;
    uint32_t crc;
  };
  // Empties a finished writer, keeping its memory.
  void StartOver();
  std::string data_;  // header placeholder and samples so far; the whole shard once finished
  std::vector<Entry> entries_;
  bool finished_ = false;  // data_ holds the shard Finish returned
};

// A shard's bytes, checked. Holds a view of `bytes`: they must outlive it.
class ShardView {
 public:
  // Checks the header, the table's CRC and that every entry lies inside the sample area, in
  // order and without gaps. kInvalidArgument naming `name` and the offset of the first fault.
  static Result<ShardView> Open(std::string_view bytes, std::string name);

  uint64_t sample_count() const { return count_; }
  const std::string& name() const { return name_; }
  // Sample i (< sample_count()) after checking its CRC-32C; kInvalidArgument naming the shard,
  // the sample and its offset if it does not match.
  Result<std::string_view> Sample(uint64_t i) const;
  // Sample i (< sample_count()) without checking its CRC-32C: only for a sample whose bytes were
  // checked already (by Sample or Verify) and have not been read again from the disk since.
  // kInvalidArgument for an i out of range.
  Result<std::string_view> SampleAlreadyChecked(uint64_t i) const;
  // Checks every sample's CRC-32C.
  Status Verify() const;
  // Where samples [begin, end) lie in the shard, as (offset, length): they follow each other
  // (Open checks), so this is one range. `end` is clipped to sample_count(); an empty range
  // is (0, 0).
  std::pair<uint64_t, uint64_t> SampleBytes(uint64_t begin, uint64_t end) const;
  // Asks the CPU to start loading the first bytes of sample i (< sample_count()) into its
  // caches, so that a later Sample(i) does not wait on memory. No effect on the result of any
  // call; an i out of range is ignored.
  void Prefetch(uint64_t i) const;

 private:
  ShardView(std::string_view bytes, std::string name, uint64_t count, uint64_t table)
      : bytes_(bytes), name_(std::move(name)), count_(count), table_(table) {}
  std::string_view bytes_;
  std::string name_;
  uint64_t count_;
  uint64_t table_;  // offset of the offset table
};

}  // namespace tf::datasets
