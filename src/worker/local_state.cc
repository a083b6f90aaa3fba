#include "worker/local_state.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "base/crypto.h"
#include "base/log.h"
#include "worker/proc_stat.h"

namespace tf::worker {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr int kFormatVersion = 1;
constexpr int kKillWaitMs = 10'000;

Json ToJson(const LocalState::Entry& e) {
  return {{"job_id", e.job_id},         {"attempt", e.attempt}, {"node_rank", e.node_rank},
          {"local_rank", e.local_rank}, {"token", e.token},     {"pgid", e.pgid},
          {"start_time", e.start_time}};
}

Result<LocalState::Entry> FromJson(const Json& j) {
  LocalState::Entry e;
  try {
    e.job_id = j.at("job_id").get<std::string>();
    e.attempt = j.at("attempt").get<int>();
    e.node_rank = j.at("node_rank").get<int>();
    e.local_rank = j.at("local_rank").get<int>();
    e.token = j.at("token").get<std::string>();
    e.pgid = j.at("pgid").get<pid_t>();
    e.start_time = j.at("start_time").get<uint64_t>();
  } catch (const Json::exception& ex) {
    return InvalidArgument(ex.what());
  }
  if (e.pgid <= 1)
    return InvalidArgument("pgid " + std::to_string(e.pgid) + " is not a workload's");
  return e;
}

Status WriteAll(int fd, const std::string& data, const fs::path& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unavailable("cannot write " + path.string() + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

// Writes `content` to `path` so that a crash leaves the old file or the new one.
Status WriteFileAtomically(const fs::path& path, const std::string& content) {
  fs::path temp = path.parent_path() / ("." + path.filename().string() + ".tmp-" + RandomHex(4));
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot create " + temp.string() + ": " + std::strerror(errno));
  Status s = WriteAll(fd, content, temp);
  if (s.ok() && ::fsync(fd) != 0) {
    s = Unavailable("cannot sync " + temp.string() + ": " + std::strerror(errno));
  }
  if (::close(fd) != 0 && s.ok()) {
    s = Unavailable("cannot write " + temp.string() + ": " + std::strerror(errno));
  }
  if (s.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    s = Unavailable("cannot replace " + path.string() + ": " + std::strerror(errno));
  }
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || ::fsync(dir_fd) != 0) {
    s = Unavailable("cannot sync directory " + dir.string() + ": " + std::strerror(errno));
  }
  if (dir_fd >= 0) ::close(dir_fd);
  return s;
}

bool SameRank(const LocalState::Entry& a, const LocalState::Entry& b) {
  return a.job_id == b.job_id && a.attempt == b.attempt && a.node_rank == b.node_rank;
}

// Processes, other than the leader, still in group `pgid` that started no earlier than it.
bool GroupHasMembers(pid_t pgid, uint64_t start_time) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto st = ReadProcStat(static_cast<pid_t>(std::stol(name)));
    if (!st.ok() || !st->has_value()) continue;
    const ProcStat& p = **st;
    if (p.pgrp == pgid && p.session == pgid && p.start_time >= start_time && p.state != 'Z') {
      return true;
    }
  }
  return false;
}

// Kills the group of `e` if it is still the one recorded. Returns what was done, for the log.
std::string KillIfOurs(const LocalState::Entry& e) {
  auto leader = ReadProcStat(e.pgid);
  if (!leader.ok()) return "not checked: " + leader.status().ToString();
  if (leader->has_value() && (*leader)->start_time != e.start_time) {
    return "gone (pid " + std::to_string(e.pgid) + " is another program now)";
  }
  const bool leader_alive = leader->has_value() && (*leader)->state != 'Z';
  if (!leader_alive && !GroupHasMembers(e.pgid, e.start_time)) return "gone";
  int pidfd = leader_alive ? PidfdOpen(e.pgid) : -1;
  if (::kill(-e.pgid, SIGKILL) != 0 && errno != ESRCH) {
    std::string why = std::strerror(errno);
    if (pidfd >= 0) ::close(pidfd);
    return "could not be killed: " + why;
  }
  if (pidfd >= 0) {
    pollfd p{.fd = pidfd, .events = POLLIN, .revents = 0};
    while (::poll(&p, 1, kKillWaitMs) < 0 && errno == EINTR) {
    }
    ::close(pidfd);
  }
  return "killed";
}

}  // namespace

Status LocalState::Load() {
  MutexLock lock(mu_);
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path_, ec)) {
      entries_.clear();
      return OkStatus();
    }
    return FailedPrecondition("cannot read the worker's state " + path_.string());
  }
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto damaged = [&](const std::string& why) {
    return FailedPrecondition("the worker's state " + path_.string() + " is damaged (" + why +
                              "); move it away to start without it, after checking that no "
                              "workload it lists is still running");
  };
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j["process_groups"].is_array()) return damaged("not a state file");
  if (j.value("version", 0) != kFormatVersion) return damaged("unknown version");
  std::vector<Entry> entries;
  for (const Json& item : j["process_groups"]) {
    auto e = FromJson(item);
    if (!e.ok()) return damaged(e.status().message());
    entries.push_back(*e);
  }
  entries_ = std::move(entries);
  return OkStatus();
}

std::vector<LocalState::Entry> LocalState::entries() const {
  MutexLock lock(mu_);
  return entries_;
}

Status LocalState::Replace(std::vector<Entry> entries) {
  Json groups = Json::array();
  for (const auto& e : entries) groups.push_back(ToJson(e));
  Json doc = {{"version", kFormatVersion}, {"process_groups", groups}};
  TF_RETURN_IF_ERROR(WriteFileAtomically(path_, doc.dump(1) + "\n"));
  entries_ = std::move(entries);
  return OkStatus();
}

Status LocalState::Add(const Entry& entry) {
  if (entry.pgid <= 1)
    return InvalidArgument("pgid " + std::to_string(entry.pgid) + " is not a workload's");
  MutexLock lock(mu_);
  std::vector<Entry> next;
  for (const auto& e : entries_) {
    if (!(SameRank(e, entry) && e.local_rank == entry.local_rank)) next.push_back(e);
  }
  next.push_back(entry);
  return Replace(std::move(next));
}

Status LocalState::RemoveRank(const std::string& job_id, int attempt, int node_rank) {
  MutexLock lock(mu_);
  std::vector<Entry> next;
  for (const auto& e : entries_) {
    if (!(e.job_id == job_id && e.attempt == attempt && e.node_rank == node_rank)) {
      next.push_back(e);
    }
  }
  if (next.size() == entries_.size()) return OkStatus();
  return Replace(std::move(next));
}

std::vector<LocalState::Entry> LocalState::KillOrphans() { return worker::KillOrphans(*this); }

std::vector<LocalState::Entry> KillOrphans(LocalState& state) {
  std::vector<LocalState::Entry> lost;
  for (const auto& e : state.entries()) {
    std::string done = KillIfOurs(e);
    spdlog::info("process group {} of {} attempt {} rank {}.{} left by a previous worker: {}",
                 e.pgid, e.job_id, e.attempt, e.node_rank, e.local_rank, done);
    bool seen = false;
    for (const auto& l : lost) seen = seen || SameRank(l, e);
    if (!seen) lost.push_back(e);
  }
  for (const auto& l : lost) {
    Status s = state.RemoveRank(l.job_id, l.attempt, l.node_rank);
    if (!s.ok()) spdlog::warn("cannot forget {} attempt {}: {}", l.job_id, l.attempt, s.ToString());
  }
  return lost;
}

}  // namespace tf::worker
