#include "worker/rank_runner.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/log.h"
#include "jobs/job_doc.h"
#include "jobs/metric_lines.h"
#include "worker/checkpoint_sync.h"
#include "worker/checkpoint_syncer.h"
#include "worker/code_bundle.h"
#include "worker/job_user.h"
#include "worker/log_shipper.h"
#include "worker/process_group.h"
#include "worker/setup_step.h"

namespace tf::worker {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr size_t kLogTailLines = 20;
constexpr size_t kLogTailBytes = 4096;
constexpr int kReportTries = 60;
constexpr auto kFailFastGrace = std::chrono::seconds(10);

// A line from the platform in the job's own log, so that `tensorfleet logs` tells the story.
void Note(const std::filesystem::path& log, const std::string& line) {
  std::ofstream out(log, std::ios::app);
  out << "[tensorfleet] " << line << "\n";
}

std::string LastLines(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from =
      std::max<std::streamoff>(0, size - static_cast<std::streamoff>(kLogTailBytes));
  in.seekg(from);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (from > 0) {
    size_t nl = text.find('\n');
    text = nl == std::string::npos ? text : text.substr(nl + 1);
  }
  size_t lines = 0;
  for (size_t i = text.size(); i > 0; --i) {
    if (text[i - 1] == '\n' && i != text.size() && ++lines == kLogTailLines) return text.substr(i);
  }
  return text;
}

// Reads what was appended to a file since the last call, in whole lines.
class LineTail {
 public:
  explicit LineTail(std::filesystem::path file) : file_(std::move(file)) {}
  std::vector<std::string> NewLines() {
    std::vector<std::string> out;
    std::ifstream in(file_, std::ios::binary);
    if (!in) return out;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t start = 0;
    for (size_t nl; (nl = chunk.find('\n', start)) != std::string::npos; start = nl + 1) {
      out.push_back(chunk.substr(start, nl - start));
    }
    offset_ += start;
    return out;
  }

 private:
  std::filesystem::path file_;
  uint64_t offset_ = 0;
};

std::string Bytes(uint64_t n) {
  std::ostringstream s;
  if (n >= (1u << 20)) {
    s.precision(1);
    s << std::fixed << static_cast<double>(n) / (1 << 20) << " MiB";
  } else {
    s << n << " bytes";
  }
  return s.str();
}

// The checkpoint directory: spec.checkpoint.dir inside the working directory.
std::filesystem::path CheckpointDir(const std::filesystem::path& workdir, const std::string& rel) {
  std::filesystem::path p(rel);
  if (rel.empty() || p.is_absolute() || rel.find("..") != std::string::npos) p = "checkpoints";
  return workdir / p;
}

Status UploadTree(client::ObjectClient& objects, const std::string& bucket,
                  const std::string& prefix, const std::filesystem::path& dir, int& files) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return OkStatus();
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string rel = std::filesystem::relative(it->path(), dir).generic_string();
    TF_RETURN_IF_ERROR(objects.PutFile(bucket, prefix + "/" + rel, it->path()));
    ++files;
  }
  if (ec) return Internal("reading " + dir.string() + ": " + ec.message());
  return OkStatus();
}

std::filesystem::path RankLog(const std::filesystem::path& logs, int local_rank) {
  return logs / ("rank-" + std::to_string(local_rank) + ".log");
}

std::filesystem::path MetricsFile(const std::filesystem::path& dir, int local_rank) {
  return dir / ("metrics-" + std::to_string(local_rank) + ".jsonl");
}

}  // namespace

// While the rank runs, and once more at its end: its processes' logs shipped to the object
// store, and the metrics they print (node rank 0's stdout, by the spec's regexes) or write
// (every process's metrics file) sent to the server.
class RankTelemetry {
 public:
  RankTelemetry(const Assignment& a, client::ObjectClient& objects, client::FleetClient* fleet,
                const std::filesystem::path& logs, const std::filesystem::path& dir, int processes)
      : a_(a),
        fleet_(fleet),
        stdout_lines_(RankLog(logs, 0)),
        matcher_(jobs::MetricMatcher::Create(a.spec.metrics)) {
    for (int local = 0; local < processes; ++local) {
      shippers_.push_back(std::make_unique<LogShipper>(
          objects, a.bucket, jobs::LogPrefix(a.job_id, a.attempt, a.node_rank, local),
          RankLog(logs, local)));
      metric_files_.emplace_back(MetricsFile(dir, local));
    }
  }

  void Ship() {
    for (auto& s : shippers_) {
      auto shipped = s->ShipNow();
      if (!shipped.ok()) {
        spdlog::warn("shipping logs of {}: {}", a_.key(), shipped.status().ToString());
      }
    }
    std::vector<client::MetricSampleOut> samples;
    if (matcher_.ok() && a_.node_rank == 0) {
      for (const std::string& line : stdout_lines_.NewLines()) {
        for (const jobs::MetricSample& m : matcher_->Match(line)) {
          samples.push_back({m.name, m.value, m.step});
        }
      }
    }
    for (LineTail& f : metric_files_) {
      for (const std::string& line : f.NewLines()) {
        auto m = jobs::ParseMetricLine(line);
        if (m.ok()) samples.push_back({m->name, m->value, m->step});
      }
    }
    if (!samples.empty() && fleet_ != nullptr) {
      Status s = fleet_->AddSamples(a_, samples);
      if (!s.ok()) spdlog::warn("metrics of {}: {}", a_.key(), s.ToString());
    }
  }

 private:
  const Assignment& a_;
  client::FleetClient* fleet_;  // null when the server cannot be reached
  std::vector<std::unique_ptr<LogShipper>> shippers_;
  std::vector<LineTail> metric_files_;
  LineTail stdout_lines_;
  Result<jobs::MetricMatcher> matcher_;
};

RankRunner::RankRunner(Assignment assignment, RankContext context)
    : assignment_(std::move(assignment)), context_(std::move(context)) {}

RankRunner::~RankRunner() {
  Stop(StopKind::kWithdraw, std::chrono::seconds(10), "the worker is going away");
  Join();
}

void RankRunner::Start() {
  thread_ = std::thread([this] { Run(); });
}

void RankRunner::Join() {
  if (thread_.joinable()) thread_.join();
}

void RankRunner::Stop(StopKind kind, milliseconds grace, const std::string& reason) {
  {
    MutexLock lock(mu_);
    auto kill_at = Clock::now() + grace;
    if (!stop_requested_ || kill_at < kill_at_) kill_at_ = kill_at;
    if (!stop_requested_ || kind == StopKind::kInterrupt) {
      if (stop_kind_ != StopKind::kInterrupt || !stop_requested_) {
        stop_kind_ = kind;
        stop_reason_ = reason;
      }
    }
    stop_requested_ = true;
  }
  cv_.notify_all();
}

void RankRunner::StopAfter(milliseconds delay, milliseconds grace, const std::string& reason) {
  MutexLock lock(mu_);
  auto at = Clock::now() + delay;
  if (!deferred_stop_ || at < deferred_stop_->at) deferred_stop_ = DeferredStop{at, grace, reason};
}

bool RankRunner::WaitForStop(milliseconds timeout) {
  MutexLock lock(mu_);
  return lock.WaitFor(cv_, timeout, [&]() REQUIRES(mu_) { return stop_requested_; });
}

void RankRunner::Run() {
  const Assignment& a = assignment_;
  Result<client::RankOutcome> outcome = Execute();
  if (cgroup_) {
    // Whatever of the rank is left (a process that left its session) ends with it.
    Status removed = cgroup_->KillAndRemove();
    if (!removed.ok()) spdlog::warn("rank {}: {}", a.key(), removed.ToString());
    cgroup_.reset();
  }
  // A rank the worker could not start because the server or the object service did not
  // answer (a server restarting) is interrupted, not failed: the job's process never ran, and
  // its next attempt starts at once under the default retry policy.
  client::RankOutcome report =
      outcome.ok()
          ? *outcome
          : client::RankOutcome{
                outcome.status().code() == StatusCode::kUnavailable ? "interrupted" : "failed", -1,
                0, "", "the worker could not run it: " + outcome.status().ToString()};
  spdlog::info("rank {} {}{}", a.key(), report.state,
               report.message.empty() ? "" : ": " + report.message);
  auto fleet = context_.fleet();
  for (int i = 0; fleet.ok() && i < kReportTries; ++i) {
    Status s = (*fleet)->Report(a, report);
    if (s.ok()) break;
    if (s.code() != StatusCode::kUnavailable && s.code() != StatusCode::kInternal) {
      spdlog::warn("report of rank {} refused: {}", a.key(), s.ToString());
      break;
    }
    if (WaitForStop(milliseconds(0)) && i > 5) break;  // shutting down: do not linger long
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (context_.finished) context_.finished(a);
  if (!context_.keep_attempt_dirs) {
    std::error_code ec;
    std::filesystem::remove_all(WorkspaceDir(), ec);
    if (ec)
      spdlog::warn("rank {}: removing {}: {}", a.key(), WorkspaceDir().string(), ec.message());
  }
  done_ = true;
}

Result<client::RankOutcome> RankRunner::Execute() {
  const Assignment& a = assignment_;
  TF_ASSIGN_OR_RETURN(const Workspace ws, PrepareWorkspace());
  TF_ASSIGN_OR_RETURN(std::unique_ptr<client::ObjectClient> objects, context_.objects(a.job_token));
  Note(ws.log0, "job " + a.job_id + " attempt " + std::to_string(a.attempt) + ", node rank " +
                    std::to_string(a.node_rank) + " of " + std::to_string(a.addresses.size()));
  TF_RETURN_IF_ERROR(FetchCode(*objects, ws));
  CheckpointSync sync(*objects, a.bucket, a.checkpoint_prefix);
  TF_RETURN_IF_ERROR(RestoreCheckpoint(sync, ws));
  auto fleet = context_.fleet();
  RankTelemetry telemetry(a, *objects, fleet.ok() ? fleet->get() : nullptr, ws.logs, ws.dir,
                          ProcessesPerNode(a));
  TF_ASSIGN_OR_RETURN(const Launch launch, PrepareLaunch(ws));
  TF_ASSIGN_OR_RETURN(std::optional<client::RankOutcome> ended_in_setup,
                      RunSetup(ws, launch, telemetry));
  if (ended_in_setup) {
    Note(ws.log0, "rank " + ended_in_setup->state);
    telemetry.Ship();
    ended_in_setup->log_tail = LastLines(ws.log0);
    return *ended_in_setup;
  }
  TF_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<ProcessGroup>> groups,
                      StartProcesses(ws, launch));

  if (fleet.ok()) {
    client::RankOutcome running;
    running.state = "running";
    Status s = (*fleet)->Report(a, running);
    if (s.code() == StatusCode::kAborted) Stop(StopKind::kWithdraw, kFailFastGrace, s.message());
  }
  std::unique_ptr<CheckpointSyncer> syncer;
  if (a.spec.checkpoint.enabled && a.node_rank == 0) {
    syncer = std::make_unique<CheckpointSyncer>(
        sync, ws.checkpoint_dir,
        milliseconds(std::max<int64_t>(a.spec.checkpoint.sync_interval_ms, 1000)),
        [key = a.key()](const Result<SyncStats>& r) {
          if (!r.ok()) spdlog::warn("checkpoint sync of {}: {}", key, r.status().ToString());
        });
    syncer->Start();
  }

  std::vector<std::optional<ExitStatus>> exits(groups.size());
  const bool failed_fast = Supervise(groups, exits, telemetry);
  return Finish(ws, *objects, syncer.get(), exits, failed_fast, telemetry);
}

std::filesystem::path RankRunner::WorkspaceDir() const {
  const Assignment& a = assignment_;
  return context_.attempts_dir /
         (a.job_id + "-" + std::to_string(a.attempt) + "-" + std::to_string(a.node_rank));
}

Result<RankRunner::Workspace> RankRunner::PrepareWorkspace() const {
  const Assignment& a = assignment_;
  Workspace ws;
  ws.dir = WorkspaceDir();
  ws.workdir = ws.dir / "work";
  ws.output = ws.dir / "output";
  ws.logs = ws.dir / "logs";
  ws.log0 = ws.logs / "rank-0.log";
  ws.checkpoint_dir = CheckpointDir(ws.workdir, a.spec.checkpoint.dir);
  std::error_code ec;
  std::filesystem::remove_all(ws.dir, ec);
  for (const auto& d : {ws.workdir, ws.output, ws.logs}) {
    std::filesystem::create_directories(d, ec);
    if (ec) return Unavailable("cannot create " + d.string() + ": " + ec.message());
  }
  return ws;
}

Status RankRunner::FetchCode(client::ObjectClient& objects, const Workspace& ws) const {
  const Assignment& a = assignment_;
  if (a.code_key.empty()) return OkStatus();
  const std::filesystem::path bundle = ws.dir / "code.tar.gz";
  TF_RETURN_IF_ERROR(
      objects.GetToFile(a.bucket, a.code_key, bundle).WithContext("downloading the code"));
  return Unpack(bundle, ws.workdir).WithContext("unpacking the code");
}

Status RankRunner::RestoreCheckpoint(CheckpointSync& sync, const Workspace& ws) const {
  std::error_code ec;
  if (assignment_.spec.checkpoint.enabled) {
    // The snapshot wins over anything the code bundle brought.
    std::filesystem::remove_all(ws.checkpoint_dir, ec);
    TF_ASSIGN_OR_RETURN(RestoreStats restored, sync.Restore(ws.checkpoint_dir));
    Note(ws.log0, restored.seq == 0 ? "no checkpoint yet: starting from scratch"
                                    : "restored checkpoint #" + std::to_string(restored.seq) +
                                          " (" + std::to_string(restored.files) + " files, " +
                                          Bytes(restored.bytes) + ")");
  }
  std::filesystem::create_directories(ws.checkpoint_dir, ec);
  return OkStatus();
}

Result<RankRunner::Launch> RankRunner::PrepareLaunch(const Workspace& ws) {
  const Assignment& a = assignment_;
  if (a.spec.command.empty()) return InvalidArgument("the spec has no command");
  Launch launch;
  launch.base = CurrentEnvironment();
  if (context_.job_users) {
    TF_ASSIGN_OR_RETURN(launch.run_as, HandOverWorkspace(ws, ProcessesPerNode(a)));
    launch.base["HOME"] = ws.workdir.string();  // the worker's home is not the job's
  }
  if (context_.cgroups != nullptr) {
    CgroupLimits limits;
    limits.cpus = a.spec.resources.cpus;
    limits.memory_bytes = a.spec.resources.memory_bytes;
    limits.pids = kRankPidsMax;
    TF_ASSIGN_OR_RETURN(RankCgroup made, context_.cgroups->Create(ws.dir.filename(), limits));
    launch.cgroup_procs = made.ProcsFiles();
    cgroup_ = std::move(made);
  }
  launch.setup_commands = SetupCommands(a.spec);
  if (!launch.setup_commands.empty()) {
    launch.setup_dir = SetupDir(context_.attempts_dir, a.job_id);
  }
  return launch;
}

ProcessSpec RankRunner::ProcessFor(const Workspace& ws, const Launch& launch, int local) const {
  const Assignment& a = assignment_;
  ProcessPaths paths{ws.workdir, ws.checkpoint_dir, ws.output, MetricsFile(ws.dir, local)};
  ProcessSpec ps;
  ps.argv = a.spec.command;
  ps.env = JobEnvironment(a, local, paths, context_.server_url, launch.base);
  if (!launch.setup_dir.empty()) AddSetupEnvironment(a.spec, launch.setup_dir, ps.env);
  ps.working_dir = ws.workdir;
  ps.log_file = RankLog(ws.logs, local);
  ps.run_as = launch.run_as;
  ps.cgroup_procs = launch.cgroup_procs;
  return ps;
}

Result<std::optional<client::RankOutcome>> RankRunner::RunSetup(const Workspace& ws,
                                                                const Launch& launch,
                                                                RankTelemetry& telemetry) {
  namespace fs = std::filesystem;
  const Assignment& a = assignment_;
  const std::vector<std::string>& commands = launch.setup_commands;
  if (commands.empty()) return std::optional<client::RankOutcome>();
  const fs::path& dir = launch.setup_dir;
  const std::string key = SetupKey(a.code_key, commands);
  TF_ASSIGN_OR_RETURN(SetupLock lock, SetupLock::Take(dir));
  if (SetupDone(dir, key)) {
    Note(ws.log0, "setup: done before on this node, kept in " + dir.string());
    return std::optional<client::RankOutcome>();
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return Unavailable("cannot create " + dir.string() + ": " + ec.message());
  if (launch.run_as) {
    TF_RETURN_IF_ERROR(HandOver(dir, JobUserFor(a.job_id)));
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  const auto started = std::chrono::steady_clock::now();
  for (size_t i = 0; i < commands.size(); ++i) {
    const std::string which =
        "setup " + std::to_string(i + 1) + "/" + std::to_string(commands.size());
    Note(ws.log0, which + ": " + commands[i]);
    ProcessSpec ps = ProcessFor(ws, launch, 0);
    ps.argv = {"/bin/sh", "-c", commands[i]};
    TF_ASSIGN_OR_RETURN(std::unique_ptr<ProcessGroup> group, ProcessGroup::Start(ps));
    std::optional<ExitStatus> ended;
    while (!ended) {
      TF_ASSIGN_OR_RETURN(ended, group->WaitFor(context_.poll_interval));
      telemetry.Ship();  // the setup's output shows in `logs -f` as it comes
      if (ended || !WaitForStop(milliseconds(0))) continue;
      TF_ASSIGN_OR_RETURN(ExitStatus stopped, group->Terminate(kFailFastGrace));
      (void)stopped;
      client::RankOutcome outcome;
      MutexLock state(mu_);
      outcome.state = stop_kind_ == StopKind::kInterrupt ? "interrupted" : "stopped";
      outcome.message = stop_reason_ + " (during " + which + ")";
      return std::optional<client::RankOutcome>(outcome);
    }
    if (!ended->success()) {
      client::RankOutcome outcome;
      outcome.state = "failed";
      outcome.exit_code = ended->exit_code;
      outcome.signal = ended->signal;
      outcome.message = which + " failed (" + ended->ToString() + "): " + commands[i];
      Note(ws.log0, outcome.message);
      return std::optional<client::RankOutcome>(outcome);
    }
  }
  TF_RETURN_IF_ERROR(MarkSetupDone(dir, key));
  const auto took =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
  std::ostringstream seconds;
  seconds.precision(1);
  seconds << std::fixed << static_cast<double>(took.count()) / 1000;
  Note(ws.log0, "setup: done in " + seconds.str() + " s, kept in " + dir.string() +
                    " for the job's next attempts on this node");
  return std::optional<client::RankOutcome>();
}

Result<std::vector<std::unique_ptr<ProcessGroup>>> RankRunner::StartProcesses(
    const Workspace& ws, const Launch& launch) {
  const Assignment& a = assignment_;
  std::vector<std::unique_ptr<ProcessGroup>> groups;
  std::vector<std::pair<int, uint64_t>> recorded;
  for (int local = 0; local < ProcessesPerNode(a); ++local) {
    auto group = ProcessGroup::Start(ProcessFor(ws, launch, local));
    if (!group.ok()) {
      for (auto& g : groups) (void)g->Terminate(kFailFastGrace);
      return group.status().WithContext("starting local rank " + std::to_string(local));
    }
    recorded.emplace_back((*group)->pid(), (*group)->start_time());
    groups.push_back(std::move(group).value());
  }
  if (context_.started) context_.started(a, recorded);
  return groups;
}

Result<RunAs> RankRunner::HandOverWorkspace(const Workspace& ws, int processes) const {
  const JobUser user = JobUserFor(assignment_.job_id);
  TF_RETURN_IF_ERROR(HandOver(ws.workdir, user));
  TF_RETURN_IF_ERROR(HandOver(ws.output, user));
  for (int local = 0; local < processes; ++local) {
    const std::filesystem::path metrics = MetricsFile(ws.dir, local);
    std::ofstream(metrics, std::ios::app).close();
    TF_RETURN_IF_ERROR(HandOver(metrics, user));
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::permissions(ws.logs, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (::chown(ws.dir.c_str(), static_cast<uid_t>(-1), user.gid) != 0) {
    return Unavailable("letting the job's user into " + ws.dir.string() + ": " +
                       std::strerror(errno));
  }
  fs::permissions(ws.dir, fs::perms::owner_all | fs::perms::group_exec, fs::perm_options::replace,
                  ec);
  for (const fs::path& p : {ws.workdir, ws.output}) {
    fs::permissions(p, fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  return RunAs{user.uid, user.gid, {kJobsGid}};
}

bool RankRunner::Supervise(std::vector<std::unique_ptr<ProcessGroup>>& groups,
                           std::vector<std::optional<ExitStatus>>& exits,
                           RankTelemetry& telemetry) {
  auto last_ship = Clock::now();
  for (;;) {
    bool all_done = true, any_failed = false;
    for (size_t i = 0; i < groups.size(); ++i) {
      if (!exits[i]) {
        auto e = groups[i]->TryWait();
        if (e.ok() && *e) exits[i] = **e;
      }
      if (!exits[i]) {
        all_done = false;
      } else if (!exits[i]->success()) {
        any_failed = true;
      }
    }
    if (all_done) return false;
    bool stop;
    Clock::time_point kill_at;
    std::optional<DeferredStop> due;
    {
      MutexLock lock(mu_);
      if (!stop_requested_ && deferred_stop_ && Clock::now() >= deferred_stop_->at) {
        due = deferred_stop_;
      }
    }
    if (due) Stop(StopKind::kInterrupt, due->grace, due->reason);
    {
      MutexLock lock(mu_);
      stop = stop_requested_;
      kill_at = kill_at_;
    }
    if (stop || any_failed) {
      // One process of the node failed: the others cannot go on without it.
      auto grace = stop ? std::chrono::duration_cast<milliseconds>(kill_at - Clock::now())
                        : milliseconds(kFailFastGrace);
      for (size_t i = 0; i < groups.size(); ++i) {
        if (exits[i]) continue;
        auto e = groups[i]->Terminate(std::max(grace, milliseconds(0)));
        if (e.ok()) exits[i] = *e;
      }
      return !stop;
    }
    if (Clock::now() - last_ship >= context_.log_ship_interval) {
      telemetry.Ship();
      last_ship = Clock::now();
    }
    WaitForStop(context_.poll_interval);
  }
}

client::RankOutcome RankRunner::Finish(const Workspace& ws, client::ObjectClient& objects,
                                       CheckpointSyncer* syncer,
                                       const std::vector<std::optional<ExitStatus>>& exits,
                                       bool failed_fast, RankTelemetry& telemetry) {
  const Assignment& a = assignment_;
  client::RankOutcome outcome;
  {
    MutexLock lock(mu_);
    if (stop_requested_ && !failed_fast) {
      outcome.state = stop_kind_ == StopKind::kInterrupt ? "interrupted" : "stopped";
      outcome.message = stop_reason_;
    }
  }
  const ExitStatus* first_failure = nullptr;
  for (const auto& e : exits) {
    if (e && !e->success() && first_failure == nullptr) first_failure = &*e;
  }
  if (outcome.state.empty()) outcome.state = first_failure == nullptr ? "succeeded" : "failed";
  outcome.exit_code = first_failure ? first_failure->exit_code : 0;
  outcome.signal = first_failure ? first_failure->signal : 0;
  if (int64_t kills = cgroup_ ? cgroup_->OomKills() : 0; kills > 0 && first_failure != nullptr) {
    outcome.message = "out of memory: the rank went over resources.memory (" +
                      Bytes(a.spec.resources.memory_bytes) + ") and the kernel killed " +
                      (kills == 1 ? "one of its processes" : std::to_string(kills) + " of them");
    Note(ws.log0, outcome.message);
  }
  // The last checkpoint, the output, the last logs.
  if (syncer != nullptr) {
    auto last = syncer->Stop();
    if (last.ok()) {
      Note(ws.log0, "checkpoint synced after exit: snapshot #" + std::to_string(last->seq) + " (" +
                        std::to_string(last->files) + " files, " + Bytes(last->bytes_uploaded) +
                        " uploaded)");
    } else {
      Note(ws.log0, "checkpoint sync after exit failed: " + last.status().ToString());
    }
  }
  if (outcome.state == "succeeded" && a.node_rank == 0) {
    int files = 0;
    Status uploaded = UploadTree(objects, a.bucket, a.output_prefix, ws.output, files);
    if (!uploaded.ok()) {
      outcome.state = "failed";
      outcome.message = "uploading the output failed: " + uploaded.ToString();
    } else {
      Note(ws.log0, "output uploaded: " + std::to_string(files) + " files to " + a.bucket + "/" +
                        a.output_prefix);
    }
  }
  Note(ws.log0, "rank " + outcome.state +
                    (first_failure ? " (" + first_failure->ToString() + ")" : std::string()));
  telemetry.Ship();
  outcome.log_tail = LastLines(ws.log0);
  return outcome;
}

}  // namespace tf::worker
