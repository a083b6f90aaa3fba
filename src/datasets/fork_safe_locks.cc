#include "datasets/fork_safe_locks.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace tf::datasets {
namespace {

constexpr int kTracked = 4096;

// -1 where free. Atomics, not a mutex, so that the child handler can read them whatever the
// parent's other threads were doing at the fork.
std::atomic<int>* Tracked() {
  static std::atomic<int>* slots = [] {
    auto* s = new std::atomic<int>[kTracked];  // never destroyed: used until exit
    for (int i = 0; i < kTracked; ++i) s[i].store(-1, std::memory_order_relaxed);
    return s;
  }();
  return slots;
}

// In the child, after fork: every tracked descriptor now names /dev/null. Only calls that are
// safe after a fork of a threaded process (open, dup2, close).
void MakeHarmlessInChild() {
  std::atomic<int>* slots = Tracked();
  int null_fd = -1;
  for (int i = 0; i < kTracked; ++i) {
    const int fd = slots[i].exchange(-1, std::memory_order_relaxed);
    if (fd < 0) continue;
    if (null_fd < 0) null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0) {
      ::close(fd);  // no /dev/null: the lock must still go
      continue;
    }
    ::dup3(null_fd, fd, O_CLOEXEC);  // drops the child's hold on the locked description
  }
  if (null_fd >= 0) ::close(null_fd);
}

void RegisterForkHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    Tracked();  // built before a child's handler can need it
    ::pthread_atfork(nullptr, nullptr, MakeHarmlessInChild);
  });
}

}  // namespace

void TrackLockFd(int fd) {
  if (fd < 0) return;
  RegisterForkHandler();
  std::atomic<int>* slots = Tracked();
  for (int i = 0; i < kTracked; ++i) {
    int expected = -1;
    if (slots[i].compare_exchange_strong(expected, fd, std::memory_order_relaxed)) return;
  }
}

void CloseLockFd(int fd) {
  if (fd < 0) return;
  // The lock goes first, for every copy of the descriptor (a child forked between the two steps
  // below would otherwise keep it); only then may the number stop being tracked.
  ::flock(fd, LOCK_UN);
  std::atomic<int>* slots = Tracked();
  for (int i = 0; i < kTracked; ++i) {
    int expected = fd;
    if (slots[i].compare_exchange_strong(expected, -1, std::memory_order_relaxed)) break;
  }
  ::close(fd);
}

}  // namespace tf::datasets
