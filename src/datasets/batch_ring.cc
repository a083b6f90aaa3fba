#include "datasets/batch_ring.h"

#include <signal.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <string>

namespace tf::datasets {

namespace {

constexpr uint64_t kPage = 4096;
constexpr int kMaxSlots = 1024;
constexpr uint64_t kMaxSlotBytes = uint64_t{1} << 30;

static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<int64_t>::is_always_lock_free,
              "the slots' words are shared between processes: they must be lock-free");

uint32_t HolderOf(uint64_t word) { return static_cast<uint32_t>(word); }
// The word of the next claim of a slot now at `word`, by `pid`.
uint64_t NextClaim(uint64_t word, pid_t pid) {
  return ((word >> 32) + 1) << 32 | static_cast<uint32_t>(pid);
}
// The word of the slot freed from `word` (its claim count kept, so that old tickets stay old).
uint64_t Freed(uint64_t word) { return word & ~uint64_t{0xffffffff}; }

}  // namespace

// At the start of the mapping: the counters, then one claim word a slot. The slots' memory
// starts at the next page.
struct BatchRing::Header {
  std::atomic<int64_t> taken{0};
  std::atomic<int64_t> fallbacks{0};
};

std::optional<uint64_t> ProcessStartTime(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return std::nullopt;
  // A zombie (ended, not yet reaped by its parent) still answers kill(pid, 0). Its state is
  // the first field after the command name, which ends at the last ')'; the start time is the
  // 22nd field, the 20th after the name.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;  // no /proc here: kill's answer stands
  const size_t end = line.rfind(')');
  if (end == std::string::npos || end + 2 >= line.size()) return 0;
  std::istringstream fields(line.substr(end + 2));
  std::string field;
  fields >> field;
  if (field == "Z" || field == "X") return std::nullopt;
  for (int i = 4; i < 22; ++i) fields >> field;
  uint64_t start = 0;
  if (!(fields >> start)) return 0;
  return start;
}

Result<std::unique_ptr<BatchRing>> BatchRing::Create(int slots, uint64_t slot_bytes,
                                                     StartTime start_time) {
  if (slots < 1 || slots > kMaxSlots) {
    return InvalidArgument("a batch ring has 1 to " + std::to_string(kMaxSlots) + " slots, not " +
                           std::to_string(slots));
  }
  if (slot_bytes < 1 || slot_bytes > kMaxSlotBytes) {
    return InvalidArgument("a batch ring's slots hold 1 byte to 1 GiB, not " +
                           std::to_string(slot_bytes) + " bytes");
  }
  const uint64_t stride = (slot_bytes + kPage - 1) / kPage * kPage;  // slots start on pages
  // The header, then a claim word and a claimer word a slot.
  const uint64_t header_bytes =
      (sizeof(Header) + 2 * sizeof(std::atomic<uint64_t>) * slots + kPage - 1) / kPage * kPage;
  const uint64_t total = header_bytes + stride * static_cast<uint64_t>(slots);
  // Shared, so that processes forked after this see one memory; reserved only, so that slots
  // never written take nothing.
  void* mapping = ::mmap(nullptr, total, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) {
    return ResourceExhausted("cannot map " + std::to_string(total >> 20) +
                             " MiB of shared memory for a batch ring: " + std::strerror(errno));
  }
  new (mapping) Header;
  auto* claims = reinterpret_cast<std::atomic<uint64_t>*>(static_cast<Header*>(mapping) + 1);
  for (int i = 0; i < 2 * slots; ++i) new (claims + i) std::atomic<uint64_t>(0);  // all free
  return std::unique_ptr<BatchRing>(new BatchRing(mapping, total, header_bytes, stride, slots,
                                                  slot_bytes, std::move(start_time)));
}

BatchRing::BatchRing(void* mapping, uint64_t mapping_bytes, uint64_t header_bytes, uint64_t stride,
                     int slots, uint64_t slot_bytes, StartTime start_time)
    : mapping_(mapping),
      mapping_bytes_(mapping_bytes),
      header_(static_cast<Header*>(mapping)),
      data_(static_cast<char*>(mapping) + header_bytes),
      stride_(stride),
      slots_(slots),
      slot_bytes_(slot_bytes),
      start_time_(std::move(start_time)) {}

BatchRing::~BatchRing() { ::munmap(mapping_, mapping_bytes_); }

std::atomic<uint64_t>& BatchRing::claim_word(int slot) const {
  return reinterpret_cast<std::atomic<uint64_t>*>(header_ + 1)[slot];
}

std::atomic<uint64_t>& BatchRing::claimer_word(int slot) const {
  return reinterpret_cast<std::atomic<uint64_t>*>(header_ + 1)[slots_ + slot];
}

uint32_t BatchRing::OwnStart(pid_t pid) {
  const uint64_t known = own_start_.load(std::memory_order_relaxed);
  if (static_cast<pid_t>(known >> 32) == pid) return static_cast<uint32_t>(known);
  const auto start = static_cast<uint32_t>(start_time_(pid).value_or(0));
  own_start_.store(static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32 | start,
                   std::memory_order_relaxed);
  return start;
}

bool BatchRing::ClaimAt(int slot, uint64_t word, pid_t pid, uint64_t* ticket) {
  const uint64_t mine = NextClaim(word, pid);
  if (!claim_word(slot).compare_exchange_strong(word, mine, std::memory_order_acquire)) {
    return false;
  }
  claimer_word(slot).store((mine >> 32) << 32 | OwnStart(pid), std::memory_order_release);
  *ticket = mine;
  return true;
}

bool BatchRing::HolderAlive(int slot, uint64_t word) {
  const std::optional<uint64_t> start = start_time_(static_cast<pid_t>(HolderOf(word)));
  if (!start) return false;
  const uint64_t claimer = claimer_word(slot).load(std::memory_order_acquire);
  // Until the claimer has written who it is, it counts as alive; so does one whose start time
  // is not known, here or when it claimed.
  if ((claimer >> 32) != (word >> 32)) return true;
  const auto claimed_at = static_cast<uint32_t>(claimer);
  const auto running_since = static_cast<uint32_t>(*start);
  return claimed_at == 0 || running_since == 0 || claimed_at == running_since;
}

int BatchRing::Claim(pid_t pid, uint64_t* ticket) {
  for (int slot = 0; slot < slots_; ++slot) {
    const uint64_t word = claim_word(slot).load(std::memory_order_relaxed);
    if (HolderOf(word) != 0) continue;
    if (ClaimAt(slot, word, pid, ticket)) return slot;
  }
  // Every slot is held: take one whose holder has died (its batch will never be read).
  for (int slot = 0; slot < slots_; ++slot) {
    const uint64_t word = claim_word(slot).load(std::memory_order_relaxed);
    const auto held_by = static_cast<pid_t>(HolderOf(word));
    if (held_by == 0 || held_by == pid || HolderAlive(slot, word)) continue;
    if (ClaimAt(slot, word, pid, ticket)) return slot;
  }
  return -1;
}

void BatchRing::Release(int slot, uint64_t ticket) {
  if (slot < 0 || slot >= slots_) return;
  claim_word(slot).compare_exchange_strong(ticket, Freed(ticket), std::memory_order_release,
                                           std::memory_order_relaxed);
}

Status BatchRing::Take(int slot, uint64_t ticket, uint64_t bytes, char* out) {
  if (slot < 0 || slot >= slots_) {
    return InvalidArgument("batch ring slot " + std::to_string(slot) + " is not one of its " +
                           std::to_string(slots_));
  }
  if (bytes > slot_bytes_) {
    return InvalidArgument("a batch of " + std::to_string(bytes) +
                           " bytes cannot be in a slot of " + std::to_string(slot_bytes_));
  }
  if (HolderOf(ticket) == 0 || claim_word(slot).load(std::memory_order_acquire) != ticket) {
    return FailedPrecondition("batch ring slot " + std::to_string(slot) +
                              " no longer holds this batch (taken already, or claimed again)");
  }
  std::memcpy(out, slot_data(slot), bytes);
  // The copy is complete before the slot can be claimed again.
  uint64_t expected = ticket;
  if (!claim_word(slot).compare_exchange_strong(expected, Freed(ticket), std::memory_order_release,
                                                std::memory_order_relaxed)) {
    return Aborted("batch ring slot " + std::to_string(slot) +
                   " was claimed again while its batch was read (its worker taken for dead)");
  }
  header_->taken.fetch_add(1, std::memory_order_relaxed);
  return OkStatus();
}

pid_t BatchRing::holder(int slot) const {
  if (slot < 0 || slot >= slots_) return 0;
  return static_cast<pid_t>(HolderOf(claim_word(slot).load(std::memory_order_acquire)));
}

void BatchRing::CountFallback() { header_->fallbacks.fetch_add(1, std::memory_order_relaxed); }
int64_t BatchRing::taken() const { return header_->taken.load(std::memory_order_relaxed); }
int64_t BatchRing::fallbacks() const { return header_->fallbacks.load(std::memory_order_relaxed); }

}  // namespace tf::datasets
