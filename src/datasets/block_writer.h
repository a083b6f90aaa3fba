// Writes a file that arrives in pieces of any size (a download's chunks) in whole blocks of
// 4 MiB at offsets that are multiples of 4 MiB, the last one shorter.
//
// Why: the size of a write decides the size of the pages the kernel keeps the file in. A file
// written 64 KiB at a time sits in the page cache as 64 KiB pieces, and a mapping of it needs a
// page-table entry for every 4 KiB; written in 4 MiB blocks it sits in 2 MiB pieces (on a
// filesystem with large folios: ext4 on Linux 6.18 as measured, XFS), which a mapping maps with
// one entry each (MappedShard). A reader of a freshly downloaded shard then takes 512 times fewer
// page-table misses. On a virtual machine whose page tables the hypervisor shadows, each of those
// misses leaves the guest: there a shard written in small pieces was read at a third of the speed
// (docs/benchmarks/datasets.md, 2026-12-05). Elsewhere it costs nothing.
//
// The block is kept from one file to the next, so that its memory is faulted in once. One file
// at a time; not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tf::datasets {

inline constexpr uint64_t kWriteBlockBytes = uint64_t{4} << 20;

class BlockWriter {
 public:
  BlockWriter() = default;
  ~BlockWriter();  // closes a file still open, without writing what is gathered
  BlockWriter(const BlockWriter&) = delete;
  BlockWriter& operator=(const BlockWriter&) = delete;

  // Creates `path` (or empties it), mode 0644. Closes a file left open first. kInternal naming
  // the file if it cannot be created.
  Status Open(const std::filesystem::path& path);
  // Adds bytes at the end, writing each block as it fills. kResourceExhausted naming the file
  // (and the disk's answer: "No space left on device") if a write fails; the file then holds
  // only whole blocks before it, and every later Append or Close returns the same error.
  Status Append(std::string_view bytes);
  // Writes what is gathered and closes the file. The same errors as Append.
  Status Close();

  // Bytes given to Append since Open.
  uint64_t size() const { return written_ + used_; }

 private:
  Status Flush();
  void CloseFd();

  std::unique_ptr<char[]> block_;  // allocated on the first Open, kept across files
  uint64_t used_ = 0;              // bytes gathered in block_
  uint64_t written_ = 0;           // bytes written to the file
  int fd_ = -1;
  std::string path_;
  Status failed_;
};

}  // namespace tf::datasets
