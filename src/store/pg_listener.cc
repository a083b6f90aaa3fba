#include "store/pg_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "base/log.h"

namespace tf::store {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{2000};

}  // namespace

PgQueueListener::PgQueueListener(std::string conninfo, std::function<void(int64_t)> on_queue,
                                 std::function<bool(int)> is_own_backend)
    : conninfo_(std::move(conninfo)),
      on_queue_(std::move(on_queue)),
      is_own_backend_(std::move(is_own_backend)) {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    // Without the pipe the thread still stops: it polls with a timeout instead (see WaitForStop).
    spdlog::warn("postgresql listener: pipe2 failed: {}", std::strerror(errno));
    wake_[0] = wake_[1] = -1;
  }
  thread_ = std::thread([this] { Loop(); });
}

PgQueueListener::~PgQueueListener() {
  stopping_ = true;
  if (wake_[1] >= 0) {
    char byte = 1;
    (void)!write(wake_[1], &byte, 1);
  }
  thread_.join();
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
}

bool PgQueueListener::WaitListening(std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  return lock.WaitFor(listening_changed_, timeout, [&]() REQUIRES(mu_) { return listening_; });
}

void PgQueueListener::Loop() {
  std::chrono::milliseconds backoff = kFirstBackoff;
  bool first_attempt = true;
  while (!stopping_) {
    Result<std::unique_ptr<PgConnection>> conn = PgConnection::Connect(conninfo_);
    Status listen =
        conn.ok() ? (*conn)->Run(std::string("LISTEN ") + kQueueChannel) : conn.status();
    if (listen.ok()) {
      {
        MutexLock lock(mu_);
        listening_ = true;
      }
      listening_changed_.notify_all();
      if (!first_attempt) ReportAllQueues(**conn);
      first_attempt = false;
      backoff = kFirstBackoff;
      Listen(**conn);
      if (!stopping_) spdlog::warn("postgresql listener: connection lost; reconnecting");
      continue;  // the first reconnect is immediate
    }
    if (first_attempt || backoff == kFirstBackoff) {
      spdlog::warn("postgresql listener: {}; retrying", listen.ToString());
    }
    first_attempt = false;
    if (WaitForStop(backoff)) return;
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

void PgQueueListener::Listen(PgConnection& conn) {
  PGconn* raw = conn.raw();
  while (!stopping_) {
    pollfd fds[2] = {{PQsocket(raw), POLLIN, 0}, {wake_[0], POLLIN, 0}};
    // Without a wake pipe, look at stopping_ every 200 ms.
    int ready = poll(fds, wake_[0] >= 0 ? 2 : 1, wake_[0] >= 0 ? -1 : 200);
    if (ready < 0 && errno != EINTR) return;
    if (ready <= 0) continue;
    if (fds[1].revents != 0) return;
    if (PQconsumeInput(raw) == 0) return;
    while (PGnotify* notify = PQnotifies(raw)) {
      int64_t queue_id = 0;
      const char* payload = notify->extra;
      auto [end, error] = std::from_chars(payload, payload + std::strlen(payload), queue_id);
      if (error == std::errc() && !is_own_backend_(notify->be_pid)) on_queue_(queue_id);
      PQfreemem(notify);
    }
    if (PQstatus(raw) != CONNECTION_OK) return;
  }
}

void PgQueueListener::ReportAllQueues(PgConnection& conn) {
  Result<PgResult> queues = conn.Exec("SELECT id FROM queues");
  if (!queues.ok()) return;  // the connection is lost again; the next reconnect reports them
  for (int i = 0; i < queues->rows(); ++i) on_queue_(queues->Int(i, 0));
}

bool PgQueueListener::WaitForStop(std::chrono::milliseconds delay) {
  const auto deadline = std::chrono::steady_clock::now() + delay;
  while (!stopping_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fd{wake_[0], POLLIN, 0};
    int timeout = static_cast<int>(std::min<int64_t>(left.count(), 200));
    if (wake_[0] >= 0) {
      (void)poll(&fd, 1, timeout);
    } else {
      (void)poll(nullptr, 0, timeout);
    }
  }
  return true;
}

}  // namespace tf::store
