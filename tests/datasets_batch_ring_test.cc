// The shared slots through which DataLoader workers hand batches to the main process
// (src/datasets/batch_ring.h): claims, takes, what is refused, holders that died, and the memory
// and counters shared with a forked process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "datasets/batch_ring.h"

namespace tf::datasets {
namespace {

std::unique_ptr<BatchRing> MakeRing(int slots, uint64_t slot_bytes,
                                    BatchRing::StartTime start_time = ProcessStartTime) {
  auto ring = BatchRing::Create(slots, slot_bytes, std::move(start_time));
  EXPECT_TRUE(ring.ok()) << ring.status().ToString();
  return ring.ok() ? std::move(ring).value() : nullptr;
}

TEST(BatchRingTest, RefusesSizesOutOfRange) {
  for (auto [slots, bytes] :
       {std::pair<int, uint64_t>{0, 4096}, {1025, 4096}, {4, 0}, {4, uint64_t{2} << 30}}) {
    auto ring = BatchRing::Create(slots, bytes);
    ASSERT_FALSE(ring.ok()) << slots << " x " << bytes;
    EXPECT_EQ(ring.status().code(), StatusCode::kInvalidArgument);
  }
  auto ring = BatchRing::Create(2, 5000);  // slots of 5000 bytes, on pages of their own
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ((*ring)->slot_bytes(), 5000u);
  EXPECT_EQ((*ring)->slot_data(1) - (*ring)->slot_data(0), 8192);
  std::memset((*ring)->slot_data(1), 'x', 5000);  // all of it writable
}

TEST(BatchRingTest, ClaimsTheLowestFreeSlotAndNoneWhenAllAreHeld) {
  auto ring = MakeRing(3, 4096, [](pid_t) -> std::optional<uint64_t> { return 1; });
  ASSERT_NE(ring, nullptr);
  uint64_t t0 = 0, t1 = 0, t2 = 0, t = 0;
  EXPECT_EQ(ring->Claim(100, &t0), 0);
  EXPECT_EQ(ring->Claim(101, &t1), 1);
  EXPECT_EQ(ring->Claim(100, &t2), 2);
  EXPECT_EQ(ring->Claim(102, &t), -1);  // every holder is running
  EXPECT_EQ(ring->holder(1), 101);
  ring->Release(1, t0);  // another slot's ticket: nothing
  EXPECT_EQ(ring->holder(1), 101);
  ring->Release(1, t1);
  EXPECT_EQ(ring->holder(1), 0);
  ASSERT_EQ(ring->Claim(102, &t), 1);
  EXPECT_NE(t, t1);      // a new claim of the same slot by another process: a new ticket
  ring->Release(1, t1);  // the old claim's ticket frees nothing
  EXPECT_EQ(ring->holder(1), 102);
}

TEST(BatchRingTest, TakeCopiesTheBatchOutAndFreesTheSlot) {
  auto ring = MakeRing(2, 4096);
  ASSERT_NE(ring, nullptr);
  uint64_t ticket = 0;
  const int slot = ring->Claim(::getpid(), &ticket);
  ASSERT_EQ(slot, 0);
  std::memcpy(ring->slot_data(slot), "a batch", 7);
  char out[8] = {};
  ASSERT_TRUE(ring->Take(slot, ticket, 7, out).ok());
  EXPECT_EQ(std::string(out), "a batch");
  EXPECT_EQ(ring->holder(slot), 0);
  EXPECT_EQ(ring->taken(), 1);

  Status again = ring->Take(slot, ticket, 7, out);  // a batch delivered twice
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition) << again.ToString();
  EXPECT_NE(again.message().find("no longer holds this batch"), std::string::npos)
      << again.ToString();
  uint64_t next = 0;
  ASSERT_EQ(ring->Claim(::getpid(), &next), 0);
  EXPECT_NE(next, ticket);  // the same process claiming the slot again: still a new ticket
  EXPECT_EQ(ring->Take(0, ticket, 7, out).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ring->Take(2, next, 7, out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ring->Take(-1, next, 7, out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ring->Take(0, next, 4097, out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ring->holder(0), ::getpid());  // a refused take leaves the slot held
  EXPECT_EQ(ring->taken(), 1);
  EXPECT_TRUE(ring->Take(0, next, 7, out).ok());
}

TEST(BatchRingTest, ASlotWhoseHolderDiedIsClaimedAgainOnlyWhenNoneIsFree) {
  std::set<pid_t> dead = {200};
  auto ring = MakeRing(2, 4096, [&](pid_t pid) -> std::optional<uint64_t> {
    if (dead.count(pid)) return std::nullopt;
    return 1;
  });
  ASSERT_NE(ring, nullptr);
  uint64_t of_200 = 0, t = 0;
  ASSERT_EQ(ring->Claim(200, &of_200), 0);
  EXPECT_EQ(ring->Claim(300, &t), 1);  // a free slot first, though slot 0's holder is dead
  EXPECT_EQ(ring->Claim(301, &t), 0);  // then the dead holder's
  EXPECT_EQ(ring->holder(0), 301);
  EXPECT_EQ(ring->Claim(302, &t), -1);  // 300 and 301 are running
  // The dead holder's batch, read after all, is refused: the slot is 301's now.
  char out[8];
  EXPECT_EQ(ring->Take(0, of_200, 7, out).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ring->holder(0), 301);
}

// A holder's pid taken by a process started later (the pid reused after the holder died): the
// slot is reclaimed as a dead holder's is. A holder whose start time is not known is never
// taken for dead while its pid runs.
TEST(BatchRingTest, ASlotWhoseHoldersPidWasReusedIsClaimedAgain) {
  std::map<pid_t, uint64_t> started = {{400, 7}, {401, 0}, {500, 9}, {501, 9}};
  auto ring = MakeRing(2, 4096, [&](pid_t pid) -> std::optional<uint64_t> {
    auto it = started.find(pid);
    if (it == started.end()) return std::nullopt;
    return it->second;
  });
  ASSERT_NE(ring, nullptr);
  uint64_t of_400 = 0, of_401 = 0, t = 0;
  ASSERT_EQ(ring->Claim(400, &of_400), 0);
  ASSERT_EQ(ring->Claim(401, &of_401), 1);
  EXPECT_EQ(ring->Claim(500, &t), -1);  // both holders run as they were
  started[400] = 12;                    // 400 ended; a process started later has its pid
  started[401] = 12;                    // 401's start was never known: it counts as running
  EXPECT_EQ(ring->Claim(500, &t), 0);
  EXPECT_EQ(ring->holder(0), 500);
  EXPECT_EQ(ring->Claim(501, &t), -1);  // 500 runs as it claimed; 401 may
  char out[8];
  EXPECT_EQ(ring->Take(0, of_400, 7, out).code(), StatusCode::kFailedPrecondition);
}

TEST(BatchRingTest, AForkedProcessSharesTheSlotsAndTheCounters) {
  auto ring = MakeRing(4, 4096);
  ASSERT_NE(ring, nullptr);
  uint64_t mine = 0;
  ASSERT_EQ(ring->Claim(::getpid(), &mine), 0);  // held by this process: the child takes slot 1
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    uint64_t ticket = 0;
    const int slot = ring->Claim(::getpid(), &ticket);
    if (slot != 1) ::_exit(10);
    std::memcpy(ring->slot_data(slot), "from the child", 14);
    ring->CountFallback();
    // The ticket goes the way a DataLoader's message goes: through a pipe.
    ::_exit(::write(pipe_fds[1], &ticket, sizeof ticket) == sizeof ticket ? 0 : 11);
  }
  uint64_t ticket = 0;
  ASSERT_EQ(::read(pipe_fds[0], &ticket, sizeof ticket), static_cast<ssize_t>(sizeof ticket));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(ring->holder(1), child);
  EXPECT_EQ(ring->fallbacks(), 1);
  char out[15] = {};
  ASSERT_TRUE(ring->Take(1, ticket, 14, out).ok());  // the child is gone: its batch is still read
  EXPECT_EQ(std::string(out), "from the child");
}

TEST(BatchRingTest, ProcessStartTimeTellsAReapedChildFromThisProcess) {
  const std::optional<uint64_t> mine = ProcessStartTime(::getpid());
  ASSERT_TRUE(mine.has_value());
  EXPECT_GT(*mine, 0u) << "this machine has /proc: the start time is known";
  EXPECT_EQ(ProcessStartTime(::getpid()), mine);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(ProcessStartTime(child).has_value());
}

TEST(BatchRingTest, ProcessStartTimeTellsAnEndedChildNotYetReaped) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  // Waits for it to end, leaving it a zombie (WNOWAIT): kill(pid, 0) still succeeds then.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  ASSERT_EQ(::kill(child, 0), 0);
  EXPECT_FALSE(ProcessStartTime(child).has_value());
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
}

}  // namespace
}  // namespace tf::datasets
