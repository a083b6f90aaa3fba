#include "worker/worker.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "auth/auth_service.h"
#include "base/crypto.h"
#include "base/log.h"
#include "base/mutex.h"
#include "base/version.h"
#include "client/fleet_client.h"
#include "http/http.h"
#include "worker/drain_stop.h"
#include "worker/gpus.h"
#include "worker/job_user.h"
#include "worker/local_state.h"
#include "worker/rank_runner.h"

namespace tf::worker {
namespace {

constexpr int64_t kAssignmentWaitMs = 20'000;
constexpr auto kRetryPause = std::chrono::milliseconds(1000);

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

// The host part of "http://host:port/...".
// "name (uid N)", or "uid N" for a uid without a name.
std::string CurrentUser() {
  const uid_t uid = ::geteuid();
  std::string name;
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(4096);
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    name = std::string(found->pw_name) + " ";
  }
  return name + (name.empty() ? "uid " : "(uid ") + std::to_string(uid) + (name.empty() ? "" : ")");
}

std::string UrlHost(const std::string& url) {
  std::string rest = url.substr(url.find("://") == std::string::npos ? 0 : url.find("://") + 3);
  if (!rest.empty() && rest[0] == '[') return rest.substr(1, rest.find(']') - 1);
  return rest.substr(0, rest.find_first_of(":/"));
}

// The local address this machine uses to reach `host` (no packet is sent).
std::string LocalAddressTowards(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || found == nullptr) return "127.0.0.1";
  std::string out = "127.0.0.1";
  int fd = socket(found->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      char text[INET6_ADDRSTRLEN] = {};
      const void* addr =
          local.ss_family == AF_INET6
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr);
      if (inet_ntop(local.ss_family, addr, text, sizeof text) != nullptr) out = text;
    }
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return out;
}

int64_t MachineMemory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<int64_t>(pages) * size : 0;
}

class WorkerImpl final : public Worker {
 public:
  explicit WorkerImpl(WorkerOptions o) : options_(std::move(o)) {}
  ~WorkerImpl() override {
    Shutdown(std::chrono::seconds(10));
    Wait();
  }

  Status Init() {
    std::error_code ec;
    std::filesystem::create_directories(options_.data_dir / "attempts", ec);
    if (ec)
      return Unavailable("cannot create " + (options_.data_dir / "attempts").string() + ": " +
                         ec.message());
    TF_ASSIGN_OR_RETURN(node_id_, LoadOrCreateNodeId(options_.data_dir));
    TF_ASSIGN_OR_RETURN(fleet_, client::FleetClient::Create(options_.server_url, options_.token,
                                                            node_id_, LoadNodeCredential()));
    state_ = std::make_unique<LocalState>(options_.data_dir / "worker-state.json");
    TF_RETURN_IF_ERROR(state_->Load());

    fleet::NodeInfo info = DescribeMachine();
    TF_ASSIGN_OR_RETURN(epoch_, fleet_->Register(options_.name, info));
    TF_RETURN_IF_ERROR(KeepNodeCredential(*fleet_));
    spdlog::info("worker {} registered as {} (epoch {}): {} CPUs, {} GPUs{}, address {}",
                 options_.name, node_id_, epoch_, info.cpus, info.gpus.size(),
                 info.simulated_gpus ? " (simulated)" : "", info.address);
    TF_RETURN_IF_ERROR(ChooseJobUsers());
    ReportOrphans();
    ChooseLimits();

    threads_.emplace_back([this] { HeartbeatLoop(); });
    threads_.emplace_back([this] { AssignmentLoop(); });
    if (!options_.spot_notice_url.empty()) threads_.emplace_back([this] { SpotNoticeLoop(); });
    return OkStatus();
  }

  const std::string& node_id() const override { return node_id_; }

  void Shutdown(std::chrono::milliseconds grace) override {
    {
      MutexLock lock(mu_);
      if (stopping_) return;
      stopping_ = true;
      for (auto& [key, runner] : runners_) {
        runner->Stop(StopKind::kInterrupt, grace,
                     "the worker on " + options_.name + " is shutting down");
      }
      // The assignment loop may be waiting on a long poll of up to kAssignmentWaitMs.
      if (assignments_client_ != nullptr) assignments_client_->Cancel();
    }
    cv_.notify_all();
  }

  void Wait() override {
    MutexLock lock(join_mu_);
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
    std::map<std::string, std::unique_ptr<RankRunner>> runners;
    {
      MutexLock lock(mu_);
      runners.swap(runners_);
    }
    for (auto& [key, runner] : runners) runner->Join();
    if (cgroups_) cgroups_->Release();
  }

 private:
  fleet::NodeInfo DescribeMachine() {
    if (options_.name.empty()) options_.name = HostName();
    fleet::NodeInfo info;
    info.address = options_.address.empty() ? LocalAddressTowards(UrlHost(options_.server_url))
                                            : options_.address;
    info.cpus =
        options_.cpus > 0 ? options_.cpus : std::max(1u, std::thread::hardware_concurrency());
    info.memory_bytes = options_.memory_bytes > 0 ? options_.memory_bytes : MachineMemory();
    if (options_.gpus) {
      info.gpus = SimulatedGpus(*options_.gpus, options_.simulated_gpu_memory_bytes);
      info.simulated_gpus = true;
    } else {
      GpuDiscovery found = DiscoverGpus();
      info.gpus = found.gpus;
      if (found.gpus.empty()) spdlog::info("no GPUs: {}", found.note);
    }
    info.labels = options_.labels;
    info.price_per_hour = options_.price_per_hour;
    info.spot = options_.spot;
    info.version = kTensorfleetVersion;
    return info;
  }

  // A previous worker on this data directory may have left processes behind: they are killed,
  // and their ranks reported lost, since nobody watched them meanwhile.
  void ReportOrphans() {
    std::vector<LocalState::Entry> orphans = state_->KillOrphans();
    for (const LocalState::Entry& e : orphans) {
      Assignment a;
      a.job_id = e.job_id;
      a.attempt = e.attempt;
      a.node_rank = e.node_rank;
      a.token = e.token;
      client::RankOutcome lost{"lost", -1, 0, "",
                               "the worker restarted and could not vouch for this rank"};
      Status s = fleet_->Report(a, lost);
      spdlog::warn("rank {} left by a previous worker: stopped, reported lost ({})", a.key(),
                   s.ok() ? "accepted" : s.ToString());
    }
  }

  // The node's credential from an earlier registration, kept in the worker's directory (0600,
  // the worker's alone): "" if there is none.
  std::string LoadNodeCredential() {
    std::ifstream in(options_.data_dir / kCredentialFile);
    std::string credential;
    if (in && std::getline(in, credential) && credential.rfind("tfn_", 0) == 0) return credential;
    return "";
  }

  // Writes the credential the server issued, if it differs from the one kept.
  Status KeepNodeCredential(const client::FleetClient& client) {
    std::string credential = client.credential();
    MutexLock lock(credential_mu_);
    if (credential.empty() || credential == kept_credential_) return OkStatus();
    Status st = auth::WriteSecretFile(options_.data_dir / kCredentialFile, credential + "\n");
    if (!st.ok()) return Unavailable("cannot keep the node's credential: " + st.message());
    kept_credential_ = credential;
    return OkStatus();
  }

  bool SleepUnlessStopping(std::chrono::milliseconds d) {
    MutexLock lock(mu_);
    return !lock.WaitFor(cv_, d, [&]() REQUIRES(mu_) { return stopping_; });
  }

  bool stopping() {
    MutexLock lock(mu_);
    return stopping_;
  }

  void HeartbeatLoop() {
    auto client = fleet_->Clone();
    if (!client.ok()) return;
    while (SleepUnlessStopping(options_.heartbeat_interval)) {
      Status s = (*client)->Heartbeat(epoch_);
      if (s.code() == StatusCode::kAborted || s.code() == StatusCode::kNotFound) {
        // Declared lost, or registered again elsewhere: the server has moved our ranks on.
        // Register again; the assignment loop stops whatever is no longer ours.
        spdlog::warn("heartbeat refused ({}); registering again", s.message());
        auto epoch = (*client)->Register(options_.name, DescribeMachine());
        if (epoch.ok()) {
          epoch_ = *epoch;
          if (Status kept = KeepNodeCredential(**client); !kept.ok()) {
            spdlog::warn("{}", kept.message());
          }
        } else {
          spdlog::warn("registering again failed: {}", epoch.status().ToString());
        }
      } else if (!s.ok()) {
        spdlog::warn("heartbeat failed: {}", s.ToString());
      }
    }
  }

  void AssignmentLoop() {
    auto client = fleet_->Clone();
    if (!client.ok()) return;
    {
      MutexLock lock(mu_);
      if (stopping_) return;
      assignments_client_ = client->get();
    }
    std::string known;
    while (!stopping()) {
      auto got = (*client)->Assignments(known, kAssignmentWaitMs);
      if (stopping()) break;
      if (!got.ok()) {
        spdlog::warn("assignments: {}", got.status().ToString());
        SleepUnlessStopping(kRetryPause);
        continue;
      }
      known = got->digest;
      Reconcile(*got);
    }
    MutexLock lock(mu_);
    assignments_client_ = nullptr;
  }

  // Makes what runs here match what the server wants.
  void Reconcile(const client::NodeAssignmentsView& want) {
    MutexLock lock(mu_);
    if (stopping_) return;
    std::map<std::string, const Assignment*> wanted;
    for (const Assignment& a : want.ranks) wanted[a.key()] = &a;
    // Finished runners leave.
    for (auto it = runners_.begin(); it != runners_.end();) {
      if (it->second->done()) {
        it->second->Join();
        it = runners_.erase(it);
      } else {
        ++it;
      }
    }
    if (want.drain_deadline_ms) {
      const std::chrono::milliseconds deadline(*want.drain_deadline_ms);
      const std::string reason =
          want.drain_reason.empty() ? "drained" : "drained: " + want.drain_reason;
      for (auto& [key, runner] : runners_) {
        std::chrono::milliseconds grace(runner->assignment().spec.drain_grace_ms);
        if (grace.count() == 0) {
          runner->Stop(StopKind::kInterrupt, deadline, reason);
        } else if (wanted.count(key)) {
          // A service: it serves on until its replacement has taken over (the server then
          // withdraws it), or until `grace` before the deadline (drain_stop.h).
          const DrainStop stop = ServiceDrainStop(deadline, grace);
          runner->StopAfter(stop.serve_for, stop.stop_within, reason);
        } else {
          runner->Stop(StopKind::kWithdraw, grace, "the server withdrew it (drained)");
        }
      }
      return;
    }
    for (auto& [key, runner] : runners_) {
      if (!wanted.count(key)) {
        runner->Stop(StopKind::kWithdraw, options_.stop_grace,
                     "the server withdrew it (cancelled, or its attempt ended)");
      }
    }
    for (const auto& [key, a] : wanted) {
      if (runners_.count(key) || finished_.count(key)) continue;
      auto runner = std::make_unique<RankRunner>(*a, MakeContext());
      runner->Start();
      runners_[key] = std::move(runner);
      finished_.insert(key);  // a rank runs once; a new attempt has a new key
    }
  }

  // Jobs get users of their own where this worker is root and may let them through to their
  // directories; otherwise they run as this worker's user, and it says what that leaves open.
  Status ChooseJobUsers() {
    const std::filesystem::path attempts = options_.data_dir / "attempts";
    if (options_.job_users && ::geteuid() == 0) {
      // The attempts directory lets jobs through and lists nothing to them; each rank's
      // directory lets only its own job's user in.
      Status open = OpenPathToJobs(attempts.parent_path());
      std::error_code ec;
      if (open.ok() && ::chown(attempts.c_str(), static_cast<uid_t>(-1), kJobsGid) != 0) {
        open =
            Unavailable("letting jobs through " + attempts.string() + ": " + std::strerror(errno));
      }
      if (open.ok()) {
        std::filesystem::permissions(
            attempts, std::filesystem::perms::owner_all | std::filesystem::perms::group_exec,
            std::filesystem::perm_options::replace, ec);
        job_users_ = true;
        spdlog::info(
            "jobs run as users of their own (uids from {}), without access to this "
            "worker's directory or each other's",
            kFirstJobUid);
        return OkStatus();
      }
      spdlog::warn("jobs cannot run as users of their own: {}", open.message());
    }
    spdlog::warn(
        "jobs run as this worker's user ({}): they can read what it can, its directory and its "
        "/proc entry included (docs/security.md, \"Not isolated yet\")",
        CurrentUser());
    return OkStatus();
  }

  // Each rank gets a cgroup with its limits where this worker may make them; otherwise it says
  // that resources.cpus and resources.memory are not enforced.
  void ChooseLimits() {
    if (!options_.resource_limits) {
      spdlog::warn("ranks are not limited to their resources (--no-resource-limits)");
      return;
    }
    auto made = Cgroups::Setup(options_.cgroup_root, node_id_);
    if (!made.ok()) {
      spdlog::warn(
          "resources.cpus and resources.memory are not enforced: {} (docs/security.md, "
          "\"Limits\")",
          made.status().message());
      return;
    }
    cgroups_ = std::move(made).value();
    spdlog::info(
        "each rank is limited to its resources.cpus, resources.memory and {} processes "
        "through {}",
        kRankPidsMax, cgroups_->Describe());
  }

  RankContext MakeContext() {
    RankContext c;
    c.cgroups = cgroups_ ? &*cgroups_ : nullptr;
    c.attempts_dir = options_.data_dir / "attempts";
    c.keep_attempt_dirs = options_.keep_attempt_dirs;
    c.job_users = job_users_;
    c.server_url = options_.server_url;
    c.fleet = [this] { return fleet_->Clone(); };
    std::string url = options_.server_url;
    c.objects = [url](const std::string& token) {
      return client::MakeHttpObjectClient(url, token);
    };
    LocalState* state = state_.get();
    c.started = [state](const Assignment& a, const std::vector<std::pair<int, uint64_t>>& groups) {
      for (size_t local = 0; local < groups.size(); ++local) {
        auto [pid, start] = groups[local];
        Status s = state->Add(
            {a.job_id, a.attempt, a.node_rank, a.token, pid, start, static_cast<int>(local)});
        if (!s.ok()) spdlog::warn("recording rank {}: {}", a.key(), s.ToString());
      }
    };
    c.finished = [state](const Assignment& a) {
      Status s = state->RemoveRank(a.job_id, a.attempt, a.node_rank);
      if (!s.ok()) spdlog::warn("forgetting rank {}: {}", a.key(), s.ToString());
    };
    return c;
  }

  // Polls the instance-metadata spot notice; on a notice, asks the server to drain this node
  // (the assignment loop then interrupts every rank before the deadline).
  void SpotNoticeLoop() {
    auto http = http::Client::Create(options_.spot_notice_url.substr(
        0, options_.spot_notice_url.find('/', options_.spot_notice_url.find("://") + 3)));
    if (!http.ok()) {
      spdlog::warn("spot notice URL {}: {}", options_.spot_notice_url, http.status().ToString());
      return;
    }
    std::string target = options_.spot_notice_url.substr(
        options_.spot_notice_url.find('/', options_.spot_notice_url.find("://") + 3));
    auto client = fleet_->Clone();
    if (!client.ok()) return;
    while (SleepUnlessStopping(options_.spot_notice_interval)) {
      auto answer = (*http)->Send("GET", target, {}, "", std::chrono::seconds(2));
      if (!answer.ok() || answer->status != 200) continue;  // 404: no notice
      spdlog::warn("spot interruption notice: {}", answer->body);
      Status s =
          (*client)->Drain(options_.spot_notice_deadline.count(), "spot interruption notice");
      if (s.ok()) return;
      spdlog::warn("asking the server to drain this node: {}", s.ToString());
    }
  }

  WorkerOptions options_;
  static constexpr const char* kCredentialFile = "node-credential";

  std::string node_id_;
  Mutex credential_mu_;
  std::string kept_credential_ GUARDED_BY(credential_mu_);
  bool job_users_ = false;          // jobs run as users of their own (ChooseJobUsers)
  std::optional<Cgroups> cgroups_;  // where ranks' limits go (ChooseLimits); none: no limits
  std::atomic<int64_t> epoch_{0};
  std::unique_ptr<client::FleetClient> fleet_;
  std::unique_ptr<LocalState> state_;
  std::vector<std::thread> threads_;
  Mutex join_mu_;

  Mutex mu_;
  std::condition_variable cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::map<std::string, std::unique_ptr<RankRunner>> runners_ GUARDED_BY(mu_);
  std::set<std::string> finished_ GUARDED_BY(mu_);
  client::FleetClient* assignments_client_ GUARDED_BY(mu_) = nullptr;  // the assignment loop's own
};

}  // namespace

Result<std::string> LoadOrCreateNodeId(const std::filesystem::path& data_dir) {
  std::filesystem::path path = data_dir / "node-id";
  {
    std::ifstream in(path);
    std::string id;
    if (in && std::getline(in, id) && id.rfind("node_", 0) == 0) return id;
  }
  std::string id = "node_" + RandomHex(8);
  std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << id << "\n";
    if (!out) return Unavailable("cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Unavailable("cannot write " + path.string() + ": " + ec.message());
  return id;
}

Result<std::unique_ptr<Worker>> Worker::Start(const WorkerOptions& options) {
  auto worker = std::make_unique<WorkerImpl>(options);
  TF_RETURN_IF_ERROR(worker->Init());
  return std::unique_ptr<Worker>(std::move(worker));
}

}  // namespace tf::worker
