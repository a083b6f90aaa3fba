#include "pools/local_provider.h"

#include <cstdlib>
#include <system_error>

#include "base/log.h"

namespace tf::pools {
namespace {

// A stopping worker interrupts what it runs; idle ones stop at once.
constexpr std::chrono::seconds kStopGrace{30};

std::string FromEnv(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

LocalProvider::~LocalProvider() {
  for (auto& [id, group] : workers_) (void)group->Terminate(kStopGrace);
}

Status LocalProvider::Create(const PoolSpec& spec, const std::string& id,
                             const std::string& join_token) {
  auto it = workers_.find(id);
  if (it != workers_.end()) {
    TF_ASSIGN_OR_RETURN(auto ended, it->second->TryWait());
    if (!ended) return OkStatus();
    workers_.erase(it);
  }
  std::filesystem::path dir = context_.dir / id;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Unavailable("creating " + dir.string() + ": " + ec.message());
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);

  worker::ProcessSpec process;
  process.argv = WorkerArguments(spec, context_.server_url, id, "127.0.0.1");
  process.argv.insert(process.argv.begin(), context_.binary.string());
  // Heartbeats are cheap on one machine: often enough for a short --heartbeat-timeout.
  process.argv.insert(process.argv.end(),
                      {"--worker-dir", (dir / "worker").string(), "--heartbeat", "1s"});
  // The join token travels in the environment, not on the command line (/proc/PID/cmdline is
  // readable by every user).
  process.env = {{"PATH", FromEnv("PATH", "/usr/local/bin:/usr/bin:/bin")},
                 {"HOME", FromEnv("HOME", "/")},
                 {"LANG", FromEnv("LANG", "C.UTF-8")},
                 {"TENSORFLEET_TOKEN", join_token}};
  process.working_dir = dir;
  process.log_file = dir / "worker.log";
  TF_ASSIGN_OR_RETURN(workers_[id], worker::ProcessGroup::Start(process));
  spdlog::info("pool {}: started worker {} (pid {}), log {}", pool_, id, workers_[id]->pid(),
               process.log_file.string());
  return OkStatus();
}

Status LocalProvider::Delete(const std::string& id) {
  auto it = workers_.find(id);
  if (it == workers_.end()) return OkStatus();
  auto ended = it->second->Terminate(kStopGrace);
  if (!ended.ok()) return ended.status().WithContext("stopping worker " + id);
  workers_.erase(it);
  return OkStatus();
}

Result<std::vector<Machine>> LocalProvider::List() {
  std::vector<Machine> out;
  for (auto& [id, group] : workers_) {
    TF_ASSIGN_OR_RETURN(auto ended, group->TryWait());
    Machine m{id, !ended.has_value(), ended ? "worker " + ended->ToString() : ""};
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace tf::pools
