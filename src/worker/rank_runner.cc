#include "worker/rank_runner.h"

#include <fstream>
#include <sstream>

#include "base/log.h"
#include "jobs/job_doc.h"
#include "jobs/metric_lines.h"
#include "worker/checkpoint_sync.h"
#include "worker/checkpoint_syncer.h"
#include "worker/code_bundle.h"
#include "worker/log_shipper.h"
#include "worker/process_group.h"

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
std::filesystem::path CheckpointDir(const std::filesystem::path& workdir, const json& spec) {
  std::string rel =
      spec.contains("checkpoint") ? spec["checkpoint"].value("dir", "checkpoints") : "checkpoints";
  std::filesystem::path p(rel);
  if (rel.empty() || p.is_absolute() || rel.find("..") != std::string::npos) p = "checkpoints";
  return workdir / p;
}

Status UploadTree(ObjectClient& objects, const std::string& bucket, const std::string& prefix,
                  const std::filesystem::path& dir, int& files) {
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

}  // namespace

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
    std::lock_guard lock(mu_);
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

bool RankRunner::WaitForStop(milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return stop_requested_; });
}

void RankRunner::Run() {
  const Assignment& a = assignment_;
  Result<RankOutcome> outcome = Execute();
  RankOutcome report =
      outcome.ok() ? *outcome
                   : RankOutcome{"failed", -1, 0, "",
                                 "the worker could not run it: " + outcome.status().ToString()};
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
  done_ = true;
}

Result<RankOutcome> RankRunner::Execute() {
  const Assignment& a = assignment_;
  std::filesystem::path dir = context_.attempts_dir / (a.job_id + "-" + std::to_string(a.attempt) +
                                                       "-" + std::to_string(a.node_rank));
  std::filesystem::path workdir = dir / "work", output = dir / "output", logs = dir / "logs";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  for (const auto& d : {workdir, output, logs}) {
    std::filesystem::create_directories(d, ec);
    if (ec) return Unavailable("cannot create " + d.string() + ": " + ec.message());
  }
  std::filesystem::path log0 = logs / "rank-0.log";
  TF_ASSIGN_OR_RETURN(std::unique_ptr<ObjectClient> objects, context_.objects(a.job_token));
  Note(log0, "job " + a.job_id + " attempt " + std::to_string(a.attempt) + ", node rank " +
                 std::to_string(a.node_rank) + " of " + std::to_string(a.addresses.size()));

  // Code.
  if (!a.code_key.empty()) {
    std::filesystem::path bundle = dir / "code.tar.gz";
    TF_RETURN_IF_ERROR(
        objects->GetToFile(a.bucket, a.code_key, bundle).WithContext("downloading the code"));
    TF_RETURN_IF_ERROR(Unpack(bundle, workdir).WithContext("unpacking the code"));
  }

  // Checkpoint.
  const json& spec = a.spec;
  std::filesystem::path checkpoint_dir = CheckpointDir(workdir, spec);
  bool checkpoints = !spec.contains("checkpoint") || spec["checkpoint"].value("enabled", true);
  CheckpointSync sync(*objects, a.bucket, a.checkpoint_prefix);
  if (checkpoints) {
    std::filesystem::remove_all(checkpoint_dir, ec);  // the snapshot wins over anything bundled
    TF_ASSIGN_OR_RETURN(RestoreStats restored, sync.Restore(checkpoint_dir));
    Note(log0, restored.seq == 0
                   ? "no checkpoint yet: starting from scratch"
                   : "restored checkpoint #" + std::to_string(restored.seq) + " (" +
                         std::to_string(restored.files) + " files, " + Bytes(restored.bytes) + ")");
  }
  std::filesystem::create_directories(checkpoint_dir, ec);

  // Processes.
  std::vector<std::string> argv = spec.value("command", std::vector<std::string>{});
  if (argv.empty()) return InvalidArgument("the spec has no command");
  int per_node = ProcessesPerNode(a);
  std::map<std::string, std::string> base = CurrentEnvironment();
  std::vector<std::unique_ptr<ProcessGroup>> groups;
  std::vector<std::pair<int, uint64_t>> recorded;
  std::vector<std::optional<ExitStatus>> exits(per_node);
  for (int local = 0; local < per_node; ++local) {
    ProcessPaths paths{workdir, checkpoint_dir, output,
                       dir / ("metrics-" + std::to_string(local) + ".jsonl")};
    ProcessSpec ps;
    ps.argv = argv;
    ps.env = JobEnvironment(a, local, paths, context_.server_url, base);
    ps.working_dir = workdir;
    ps.log_file = logs / ("rank-" + std::to_string(local) + ".log");
    auto group = ProcessGroup::Start(ps);
    if (!group.ok()) {
      for (auto& g : groups) (void)g->Terminate(kFailFastGrace);
      return group.status().WithContext("starting local rank " + std::to_string(local));
    }
    recorded.emplace_back((*group)->pid(), (*group)->start_time());
    groups.push_back(std::move(group).value());
  }
  if (context_.started) context_.started(a, recorded);

  auto fleet = context_.fleet();
  if (fleet.ok()) {
    RankOutcome running;
    running.state = "running";
    Status s = (*fleet)->Report(a, running);
    if (s.code() == StatusCode::kAborted) Stop(StopKind::kWithdraw, kFailFastGrace, s.message());
  }

  // While it runs.
  std::vector<std::unique_ptr<LogShipper>> shippers;
  std::vector<LineTail> metric_files;
  for (int local = 0; local < per_node; ++local) {
    shippers.push_back(std::make_unique<LogShipper>(
        *objects, a.bucket, jobs::LogPrefix(a.job_id, a.attempt, a.node_rank, local),
        logs / ("rank-" + std::to_string(local) + ".log")));
    metric_files.emplace_back(dir / ("metrics-" + std::to_string(local) + ".jsonl"));
  }
  LineTail stdout_lines(log0);
  std::vector<jobs::MetricDefinition> definitions;
  for (const json& m : spec.value("metrics", json::array())) {
    definitions.push_back({m.value("name", ""), m.value("regex", "")});
  }
  auto matcher = jobs::MetricMatcher::Create(definitions);
  auto ship = [&] {
    for (auto& s : shippers) {
      auto shipped = s->ShipNow();
      if (!shipped.ok())
        spdlog::warn("shipping logs of {}: {}", a.key(), shipped.status().ToString());
    }
    std::vector<MetricSampleOut> samples;
    if (matcher.ok() && a.node_rank == 0) {
      for (const std::string& line : stdout_lines.NewLines()) {
        for (const jobs::MetricSample& m : matcher->Match(line))
          samples.push_back({m.name, m.value, m.step});
      }
    }
    for (LineTail& f : metric_files) {
      for (const std::string& line : f.NewLines()) {
        auto m = jobs::ParseMetricLine(line);
        if (m.ok()) samples.push_back({m->name, m->value, m->step});
      }
    }
    if (!samples.empty() && fleet.ok()) {
      Status s = (*fleet)->AddSamples(a, samples);
      if (!s.ok()) spdlog::warn("metrics of {}: {}", a.key(), s.ToString());
    }
  };

  std::unique_ptr<CheckpointSyncer> syncer;
  if (checkpoints && a.node_rank == 0) {
    int64_t interval = spec.contains("checkpoint")
                           ? spec["checkpoint"].value("sync_interval_ms", int64_t{300'000})
                           : 300'000;
    syncer = std::make_unique<CheckpointSyncer>(
        sync, checkpoint_dir, milliseconds(std::max<int64_t>(interval, 1000)),
        [key = a.key()](const Result<SyncStats>& r) {
          if (!r.ok()) spdlog::warn("checkpoint sync of {}: {}", key, r.status().ToString());
        });
    syncer->Start();
  }

  auto last_ship = Clock::now();
  bool failed_fast = false;
  for (;;) {
    bool all_done = true, any_failed = false;
    for (size_t i = 0; i < groups.size(); ++i) {
      if (!exits[i]) {
        auto e = groups[i]->TryWait();
        if (e.ok() && *e) exits[i] = **e;
      }
      if (!exits[i])
        all_done = false;
      else if (!exits[i]->success())
        any_failed = true;
    }
    if (all_done) break;
    bool stop;
    Clock::time_point kill_at;
    {
      std::lock_guard lock(mu_);
      stop = stop_requested_;
      kill_at = kill_at_;
    }
    if (stop || any_failed) {
      // One process of the node failed: the others cannot go on without it.
      failed_fast = !stop;
      auto grace = stop ? std::chrono::duration_cast<milliseconds>(kill_at - Clock::now())
                        : milliseconds(kFailFastGrace);
      for (size_t i = 0; i < groups.size(); ++i) {
        if (exits[i]) continue;
        auto e = groups[i]->Terminate(std::max(grace, milliseconds(0)));
        if (e.ok()) exits[i] = *e;
      }
      break;
    }
    if (Clock::now() - last_ship >= context_.log_ship_interval) {
      ship();
      last_ship = Clock::now();
    }
    WaitForStop(context_.poll_interval);
  }

  // After: the last checkpoint, the output, the last logs.
  RankOutcome outcome;
  {
    std::lock_guard lock(mu_);
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
  if (syncer) {
    auto last = syncer->Stop();
    if (last.ok()) {
      Note(log0, "checkpoint synced after exit: snapshot #" + std::to_string(last->seq) + " (" +
                     std::to_string(last->files) + " files, " + Bytes(last->bytes_uploaded) +
                     " uploaded)");
    } else {
      Note(log0, "checkpoint sync after exit failed: " + last.status().ToString());
    }
  }
  if (outcome.state == "succeeded" && a.node_rank == 0) {
    int files = 0;
    Status uploaded = UploadTree(*objects, a.bucket, a.output_prefix, output, files);
    if (!uploaded.ok()) {
      outcome.state = "failed";
      outcome.message = "uploading the output failed: " + uploaded.ToString();
    } else {
      Note(log0, "output uploaded: " + std::to_string(files) + " files to " + a.bucket + "/" +
                     a.output_prefix);
    }
  }
  Note(log0, "rank " + outcome.state +
                 (first_failure ? " (" + first_failure->ToString() + ")" : std::string()));
  ship();
  outcome.log_tail = LastLines(log0);
  return outcome;
}

}  // namespace tf::worker
