// Shared memory through which a PyTorch DataLoader's worker processes hand whole batches to the
// main process (python/tensorfleet_data, batched=True): fixed-size slots in one anonymous shared
// mapping, made before the workers are forked and so shared with every one of them.
//
// A worker claims a free slot (marking it with its process id), writes a batch into it and sends
// only the slot's number, the batch's size and its offsets through the DataLoader's pipe; the
// main process copies the batch out (Take) and so frees the slot. Without it each batch crossed
// as a new shared-memory segment whose file descriptor went through a socket of its own, which
// bounded a DataLoader of small samples (docs/benchmarks/datasets.md).
//
// A slot is claimed by one process at a time (compare-and-swap), and each claim gets a ticket of
// its own: a take or release with a stale ticket (a batch delivered twice, a slot claimed again
// meanwhile) is refused, never frees another claim. A slot whose claimer has died is claimed
// again: a DataLoader shut down with batches still in its pipes never reads them, and its
// workers are gone by the time another DataLoader's start. A claimer is known by its pid and its
// start time, so that a slot is reclaimed also when the pid has been reused by another process.
// Where no slot is free, or a batch does not fit in one, the caller hands the batch over the
// ordinary way: nothing ever waits.
//
// The batch's bytes are ordered before its reader's copy by the message that names the slot
// (a pipe: the write and the read are system calls), not by this memory.
//
// Thread-safe and process-safe. The mapping is released when the BatchRing is destroyed; a
// process forked with it keeps its own mapping until it ends. A slot keeps the memory of the
// largest batch written into it until then.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "base/status.h"

namespace tf::datasets {

// The start time of the process running under `pid` (/proc/PID/stat's, in clock ticks since
// boot); 0 if it runs but its start cannot be told (no /proc); nullopt if none runs: kill(pid, 0)
// says ESRCH, or /proc shows it ended and waiting to be reaped (a zombie). The seam tests
// replace.
std::optional<uint64_t> ProcessStartTime(pid_t pid);

class BatchRing {
 public:
  using StartTime = std::function<std::optional<uint64_t>(pid_t)>;

  // `slots` of `slot_bytes` each (1 to 1024 slots, 1 byte to 1 GiB a slot; each starts on a
  // page). The memory is reserved, not committed: a slot's pages take memory once a batch has
  // been written into them.
  // kInvalidArgument for sizes out of range, kResourceExhausted if the mapping cannot be made.
  static Result<std::unique_ptr<BatchRing>> Create(int slots, uint64_t slot_bytes,
                                                   StartTime start_time = ProcessStartTime);
  ~BatchRing();
  BatchRing(const BatchRing&) = delete;
  BatchRing& operator=(const BatchRing&) = delete;

  int slots() const { return slots_; }
  uint64_t slot_bytes() const { return slot_bytes_; }

  // Claims a slot for process `pid`: the lowest free one, else one whose holder has died (no
  // process runs under its pid, or one that started at another time).
  // Returns it and sets *ticket (what Take and Release must be given); -1 if every slot is held
  // by a running process.
  int Claim(pid_t pid, uint64_t* ticket);
  // The slot's memory, slot_bytes() long; for its holder to write into.
  char* slot_data(int slot) { return data_ + static_cast<uint64_t>(slot) * stride_; }
  // Frees a slot without reading it (a batch that did not fit, or was not sent). Nothing
  // happens unless `ticket` is the slot's current claim.
  void Release(int slot, uint64_t ticket);
  // Copies the first `bytes` of a claimed slot into `out` and frees the slot; counts one batch
  // handed over. kInvalidArgument for a slot or size out of range; kFailedPrecondition if
  // `ticket` is not the slot's current claim (taken already, or claimed again); kAborted if the
  // slot was claimed again while being copied (its holder taken for dead), when `out` may hold
  // parts of another batch.
  Status Take(int slot, uint64_t ticket, uint64_t bytes, char* out);
  // The process holding a slot, 0 if free.
  pid_t holder(int slot) const;

  // Counts a batch that went the ordinary way because no slot was free or it did not fit.
  void CountFallback();
  // Batches taken through the slots, and batches counted as fallbacks, by every process.
  int64_t taken() const;
  int64_t fallbacks() const;

 private:
  struct Header;
  BatchRing(void* mapping, uint64_t mapping_bytes, uint64_t header_bytes, uint64_t stride,
            int slots, uint64_t slot_bytes, StartTime start_time);
  // The slot's claim: its claim count in the high 32 bits, the holder's pid (0: free) in the low.
  std::atomic<uint64_t>& claim_word(int slot) const;
  // Who made the slot's claim: that claim's count in the high 32 bits, the low 32 bits of its
  // holder's start time (0: unknown) in the low. Written right after the claim is made.
  std::atomic<uint64_t>& claimer_word(int slot) const;
  // Takes slot `slot`, now at `word`, for `pid`; false if another claim came first.
  bool ClaimAt(int slot, uint64_t word, pid_t pid, uint64_t* ticket);
  // Whether the holder of a claim `word` of slot `slot` is still the process that made it.
  bool HolderAlive(int slot, uint64_t word);
  // The low 32 bits of `pid`'s start time (0: unknown), remembered for this process's pid.
  uint32_t OwnStart(pid_t pid);

  void* mapping_;
  uint64_t mapping_bytes_;
  Header* header_;
  char* data_;
  uint64_t stride_;  // slot_bytes_ rounded up to a page
  int slots_;
  uint64_t slot_bytes_;
  StartTime start_time_;
  std::atomic<uint64_t> own_start_{0};  // pid << 32 | OwnStart(pid), for the last pid asked
};

}  // namespace tf::datasets
