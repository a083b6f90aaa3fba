#include "jobs/job_service.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "base/crypto.h"
#include "base/log.h"
#include "base/time_format.h"
#include "fleet/scheduler.h"
#include "jobs/hyperparameter_settings.h"

namespace tf::jobs {
namespace {

// GPU indices beyond this are not tracked for shares (no machine has that many).
constexpr int kMaxGpuIndex = 1024;

constexpr int kMutateAttempts = 20;
constexpr int kActiveJobLimit = 100'000;
const std::vector<std::string> kActiveStates = {kQueued, kStarting, kRunning, kRetrying};

bool IsLiveRank(const RankState& r) {
  return r.state == "assigned" || r.state == "running" || r.state == "stopping";
}

// The node ids a job's live ranks are on.
std::set<std::string> NodesOf(const Job& job) {
  std::set<std::string> out;
  for (const Attempt& a : job.doc.attempts) {
    for (const RankState& r : a.ranks) {
      if (IsLiveRank(r)) out.insert(r.node_id);
    }
  }
  return out;
}

fleet::NodeState ToNodeState(const store::NodeRecord& record, const fleet::NodeInfo& info) {
  fleet::NodeState n;
  n.id = record.id;
  for (const fleet::GpuInfo& g : info.gpus) {
    n.free_gpus.push_back(g.index);
    if (g.index < 0 || g.index >= kMaxGpuIndex) continue;
    if (static_cast<size_t>(g.index) >= n.gpu_memory.size()) n.gpu_memory.resize(g.index + 1);
    n.gpu_memory[g.index] = g.memory_bytes;
  }
  n.gpu_free_memory = n.gpu_memory;
  std::sort(n.free_gpus.begin(), n.free_gpus.end());
  n.total_gpus = static_cast<int>(info.gpus.size());
  n.free_cpus = n.total_cpus = info.cpus;
  n.free_memory_bytes = n.total_memory_bytes = info.memory_bytes;
  n.labels = info.labels;
  n.spot = info.spot;
  n.schedulable = record.state == "ready";
  n.price_per_hour = info.price_per_hour;
  return n;
}

fleet::WorkRequest RequestFor(const JobSpec& spec) {
  Job probe;
  probe.record.id = "job_new";  // not stored yet; the scheduler wants a name
  probe.spec = spec;
  return ToWorkRequest(probe);
}

// What metering needs of each rank of a new attempt, fixed at placement so that a node's later
// price does not change what the attempt cost.
void RecordPrices(Attempt& attempt, const JobSpec& spec,
                  const std::map<std::string, fleet::NodeInfo>& infos) {
  for (RankState& r : attempt.ranks) {
    auto it = infos.find(r.node_id);
    if (it == infos.end()) continue;
    const fleet::NodeInfo& node = it->second;
    r.price_per_hour = node.price_per_hour;
    r.spot = node.spot;
    r.share = RankShare(static_cast<int>(r.gpus.size()), spec.resources.cpus,
                        static_cast<int>(node.gpus.size()), node.cpus);
    // A share of one GPU costs its part of that GPU.
    const int64_t gpu_share = spec.resources.gpu_memory_bytes;
    if (gpu_share > 0 && r.gpus.size() == 1) {
      for (const fleet::GpuInfo& g : node.gpus) {
        if (g.index != r.gpus[0] || g.memory_bytes <= 0) continue;
        r.share =
            std::min(1.0, static_cast<double>(gpu_share) / static_cast<double>(g.memory_bytes)) /
            static_cast<double>(node.gpus.size());
      }
    }
  }
}

// The reason a waiting job keeps. The scheduler counts a backoff down ("eligible again in 4s"),
// which would change at every tick; the job keeps the time the backoff ends instead.
std::string KeptWaitingReason(const fleet::Waiting& waiting, const Job& job, TimeMs now) {
  if (job.doc.not_before > now) return "backing off until " + FormatTime(job.doc.not_before);
  return waiting.reason;
}

void ClearWaiting(JobDoc& doc) {
  doc.waiting_reason.clear();
  doc.waiting_since = 0;
}

uint64_t NewToken() {
  uint64_t t = 0;
  while (t == 0) t = std::stoull(RandomHex(8), nullptr, 16);
  return t;
}

}  // namespace

JobService::JobService(store::Store& store, auth::AuthService& auth, const Clock& clock,
                       JobServiceOptions options)
    : store_(store), auth_(auth), clock_(clock), options_(options) {}

void JobService::SetListeners(std::function<void(const std::string&)> on_node_change,
                              std::function<void()> on_work) {
  on_node_change_ = std::move(on_node_change);
  on_work_ = std::move(on_work);
}

Result<Job> JobService::Submit(const std::string& project_id, const std::string& spec_yaml,
                               const std::string& source, const std::string& code_key,
                               const nlohmann::json& settings) {
  TF_ASSIGN_OR_RETURN(JobSpec spec, ParseJobSpec(spec_yaml, source));
  TF_RETURN_IF_ERROR(ApplyHyperparameterSettings(spec, settings));
  return SubmitSpec(project_id, spec, source, code_key);
}

Status JobService::CheckPlaceable(const JobSpec& spec, const std::string& source) {
  // With no node registered yet, a job waits for one.
  TF_ASSIGN_OR_RETURN(std::vector<store::NodeRecord> records, store_.nodes().ListNodes());
  std::vector<fleet::NodeState> nodes;
  for (const store::NodeRecord& r : records) {
    if (r.state == "lost") continue;
    auto info = fleet::NodeInfoFromJson(nlohmann::json::parse(r.info_json, nullptr, false));
    if (info.ok()) nodes.push_back(ToNodeState(r, *info));
  }
  if (potential_nodes_) {
    for (fleet::NodeState& n : potential_nodes_()) nodes.push_back(std::move(n));
  }
  if (nodes.empty()) return OkStatus();
  Status feasible = fleet::CheckFeasible(nodes, RequestFor(spec));
  if (!feasible.ok()) return InvalidArgument(source + ": " + feasible.message());
  return OkStatus();
}

Result<Job> JobService::SubmitSpec(const std::string& project_id, const JobSpec& spec,
                                   const std::string& source, const std::string& code_key,
                                   const SubmitOptions& options) {
  TF_RETURN_IF_ERROR(ValidateJobSpec(spec));
  std::string checkpoint_job;
  if (!options.checkpoint_of.empty()) {
    auto earlier = Get(project_id, options.checkpoint_of);
    if (!earlier.ok()) {
      return InvalidArgument(source + ": the job whose checkpoints it resumes, '" +
                             options.checkpoint_of + "', does not exist in this project");
    }
    checkpoint_job =
        earlier->doc.checkpoint_job.empty() ? earlier->id() : earlier->doc.checkpoint_job;
  }
  if (admission_) TF_RETURN_IF_ERROR(admission_(project_id));
  TF_RETURN_IF_ERROR(CheckPlaceable(spec, source));

  TimeMs now = clock_.Now();
  // The bucket that will hold the job's checkpoints, logs and output.
  store::Bucket bucket;
  bucket.project_id = project_id;
  bucket.name = kJobsBucket;
  bucket.created_at = now;
  auto created_bucket = store_.objects().CreateBucket(bucket);
  if (!created_bucket.ok() && created_bucket.status().code() != StatusCode::kAlreadyExists) {
    return created_bucket.status();
  }

  Job job;
  job.spec = spec;
  job.record.id = "job_" + RandomHex(8);
  job.record.project_id = project_id;
  job.record.name = spec.name;
  job.record.state = kQueued;
  job.record.version = 1;
  job.record.priority = spec.priority;
  job.record.created_at = job.record.updated_at = now;
  job.doc.spec = JobSpecToJson(spec);
  job.doc.source = source;
  job.doc.code_key = code_key;
  job.doc.checkpoint_job = checkpoint_job;
  job.doc.reason = "submitted";

  std::string shape = std::to_string(spec.nodes) + (spec.nodes == 1 ? " node" : " nodes") +
                      " with " + std::to_string(spec.resources.gpus) + " GPU(s), " +
                      std::to_string(spec.resources.cpus) + " CPU(s) each";
  store::JobEvent first{0, job.record.id, now, kQueued, "submitted: " + shape};
  TF_RETURN_IF_ERROR(store_.jobs().CreateJob(EncodeJob(job), first));
  if (on_work_) on_work_();
  return job;
}

Result<Job> JobService::Get(const std::string& project_id, const std::string& job_id) {
  auto record = store_.jobs().GetJob(job_id);
  if (!record.ok()) return record.status();
  if (!project_id.empty() && record->project_id != project_id) {
    return NotFound("job '" + job_id + "' does not exist");
  }
  return DecodeJob(*record);
}

Result<std::vector<Job>> JobService::List(const std::string& project_id, bool include_finished,
                                          int limit) {
  std::vector<std::string> states;
  if (!include_finished) states = kActiveStates;
  TF_ASSIGN_OR_RETURN(std::vector<store::JobRecord> records,
                      store_.jobs().ListJobs(project_id, states, limit));
  std::vector<Job> out;
  for (const store::JobRecord& r : records) {
    TF_ASSIGN_OR_RETURN(Job job, DecodeJob(r));
    out.push_back(std::move(job));
  }
  return out;
}

Result<Job> JobService::Cancel(const std::string& project_id, const std::string& job_id,
                               const std::string& reason) {
  TF_RETURN_IF_ERROR(Get(project_id, job_id).status());
  return Mutate(job_id, [&](Job& job, Events& events) {
    TF_RETURN_IF_ERROR(CancelJob(job, reason, clock_.Now(), events));
    ClearWaiting(job.doc);
    return OkStatus();
  });
}

Result<std::vector<store::JobEvent>> JobService::EventsOf(const std::string& project_id,
                                                          const std::string& job_id) {
  TF_RETURN_IF_ERROR(Get(project_id, job_id).status());
  return store_.jobs().ListJobEvents(job_id, 0);
}

Result<std::vector<store::MetricPoint>> JobService::Metrics(const std::string& project_id,
                                                            const std::string& job_id, int limit) {
  TF_RETURN_IF_ERROR(Get(project_id, job_id).status());
  return store_.jobs().ListMetrics(job_id, limit);
}

Status JobService::Report(const std::string& job_id, const RankReport& report) {
  return Mutate(job_id,
                [&](Job& job, Events& events) {
                  return ApplyRankReport(job, report, clock_.Now(), events);
                })
      .status();
}

Status JobService::AddMetrics(const std::string& job_id, int attempt, uint64_t token,
                              std::vector<store::MetricPoint> points,
                              const std::string& from_node) {
  TF_ASSIGN_OR_RETURN(Job job, Get("", job_id));
  auto held = std::find_if(job.doc.attempts.begin(), job.doc.attempts.end(), [&](const Attempt& a) {
    return a.number == attempt && a.token == token;
  });
  if (held == job.doc.attempts.end()) {
    return Aborted("stale lease: attempt " + std::to_string(attempt) + " of job " + job_id +
                   " does not hold this token");
  }
  if (!from_node.empty() &&
      std::none_of(held->ranks.begin(), held->ranks.end(),
                   [&](const RankState& r) { return r.node_id == from_node; })) {
    return PermissionDenied("no rank of attempt " + std::to_string(attempt) + " of job " + job_id +
                            " is placed on node " + from_node);
  }
  TimeMs now = clock_.Now();
  for (store::MetricPoint& p : points) {
    p.job_id = job_id;
    p.attempt = attempt;
    if (p.at == 0) p.at = now;
  }
  return store_.jobs().AddMetrics(points);
}

Result<store::NodeRecord> JobService::RegisterNode(const std::string& node_id,
                                                   const std::string& name,
                                                   const fleet::NodeInfo& info,
                                                   const store::NodeAdmission& admission) {
  store::NodeRecord record;
  record.id = node_id;
  record.name = name;
  record.info_json = fleet::NodeInfoToJson(info).dump();
  record.registered_at = record.heartbeat_at = clock_.Now();
  TF_ASSIGN_OR_RETURN(store::NodeRecord stored, store_.nodes().AdmitNode(record, admission));
  spdlog::info("node {} ({}) registered{}: {} CPUs, {} GPUs, epoch {}", node_id, name,
               admission.join_token_id.empty() ? "" : " with join token " + admission.join_token_id,
               info.cpus, info.gpus.size(), stored.epoch);
  if (on_work_) on_work_();
  return stored;
}

Status JobService::Heartbeat(const std::string& node_id, int64_t epoch) {
  TF_ASSIGN_OR_RETURN(store::NodeRecord node, store_.nodes().GetNode(node_id));
  if (node.state == "lost") {
    return Aborted("node " + node_id + " was declared lost; its worker must register again");
  }
  return store_.nodes().TouchNode(node_id, epoch, clock_.Now());
}

Result<NodeAssignments> JobService::Assignments(const std::string& node_id) {
  TF_ASSIGN_OR_RETURN(store::NodeRecord node, store_.nodes().GetNode(node_id));
  NodeAssignments out;
  out.node_state = node.state;
  out.epoch = node.epoch;
  if (!node.drain_json.empty()) {
    out.drain = nlohmann::json::parse(node.drain_json, nullptr, false);
  }
  if (node.state == "lost") return out;  // it runs nothing until it registers again
  TF_ASSIGN_OR_RETURN(std::vector<store::JobRecord> records,
                      store_.jobs().ListJobs("", {kStarting, kRunning}, kActiveJobLimit));
  for (const store::JobRecord& record : records) {
    TF_ASSIGN_OR_RETURN(Job job, DecodeJob(record));
    const Attempt* a = job.doc.current();
    if (a == nullptr || a->ended()) continue;
    std::vector<std::string> addresses;
    for (const RankState& r : a->ranks) addresses.push_back(r.address);
    for (size_t rank = 0; rank < a->ranks.size(); ++rank) {
      const RankState& r = a->ranks[rank];
      if (r.node_id != node_id || (r.state != "assigned" && r.state != "running")) continue;
      RankAssignment ra;
      ra.job_id = job.id();
      ra.job_name = job.record.name;
      ra.project_id = job.record.project_id;
      ra.attempt = a->number;
      ra.token = a->token;
      ra.node_rank = static_cast<int>(rank);
      ra.gpus = r.gpus;
      ra.addresses = addresses;
      ra.master_port = a->master_port;
      ra.spec = job.doc.spec;
      ra.code_key = job.doc.code_key;
      ra.checkpoint_prefix = CheckpointPrefixOf(job.id(), job.doc);
      ra.job_token = a->api_token.empty() ? job.doc.token_secret : a->api_token;
      out.ranks.push_back(std::move(ra));
    }
  }
  return out;
}

Status JobService::Drain(const std::string& node_id, TimeMs deadline_ms,
                         const std::string& reason) {
  TF_ASSIGN_OR_RETURN(store::NodeRecord node, store_.nodes().GetNode(node_id));
  if (node.state == "lost") return FailedPrecondition("node " + node_id + " is lost");
  nlohmann::json drain = {
      {"deadline_ms", deadline_ms}, {"reason", reason}, {"requested_at", clock_.Now()}};
  TF_RETURN_IF_ERROR(store_.nodes().SetNodeState(node_id, "draining", drain.dump()));
  spdlog::info("node {} draining within {} ms: {}", node_id, deadline_ms, reason);
  if (on_node_change_) on_node_change_(node_id);
  return OkStatus();
}

Status JobService::Undrain(const std::string& node_id) {
  Status s = store_.nodes().ChangeNodeState(node_id, "draining", "ready", "");
  if (s.code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition(s.message() + ": only a draining node can be undrained");
  }
  TF_RETURN_IF_ERROR(s);
  spdlog::info("node {} undrained: it takes new work again", node_id);
  if (on_node_change_) on_node_change_(node_id);
  return OkStatus();
}

Status JobService::RemoveNode(const std::string& node_id) {
  Status s = store_.nodes().DeleteLostNode(node_id);
  if (s.code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition(s.message() +
                              ": only a lost node can be removed (drain it and stop its "
                              "worker; it is lost once its heartbeats stop for the timeout)");
  }
  TF_RETURN_IF_ERROR(s);
  spdlog::info("node {} removed", node_id);
  return OkStatus();
}

Status JobService::RetireNode(const std::string& node_id) {
  TF_ASSIGN_OR_RETURN(std::vector<Job> jobs, ActiveJobs());
  for (const Job& job : jobs) {
    if (NodesOf(job).count(node_id)) {
      return FailedPrecondition("node " + node_id + " still runs " + job.id());
    }
  }
  TF_RETURN_IF_ERROR(store_.nodes().ChangeNodeState(node_id, "draining", "lost", ""));
  TF_RETURN_IF_ERROR(store_.nodes().DeleteLostNode(node_id));
  spdlog::info("node {} retired: its machine was stopped", node_id);
  return OkStatus();
}

Result<std::vector<NodeView>> JobService::ListNodes() {
  TF_ASSIGN_OR_RETURN(std::vector<store::NodeRecord> records, store_.nodes().ListNodes());
  TF_ASSIGN_OR_RETURN(std::vector<Job> jobs, ActiveJobs());
  std::vector<NodeView> out;
  for (const store::NodeRecord& r : records) {
    NodeView v;
    v.record = r;
    auto info = fleet::NodeInfoFromJson(nlohmann::json::parse(r.info_json, nullptr, false));
    if (info.ok()) v.info = *info;
    for (const Job& job : jobs) {
      const Attempt* a = job.doc.current();
      if (a == nullptr) continue;
      for (size_t rank = 0; rank < a->ranks.size(); ++rank) {
        const RankState& rs = a->ranks[rank];
        if (rs.node_id != r.id || !IsLiveRank(rs)) continue;
        v.running.push_back(
            {job.record.project_id,
             job.id() + "/attempt-" + std::to_string(a->number) + "/rank-" + std::to_string(rank)});
        v.gpus_in_use += static_cast<int>(rs.gpus.size());
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

Result<TickStats> JobService::Tick() {
  TimeMs now = clock_.Now();
  TF_ASSIGN_OR_RETURN(std::vector<store::NodeRecord> nodes, store_.nodes().ListNodes());
  TF_ASSIGN_OR_RETURN(int lost, DetectLostNodes(nodes, now));
  const int forgotten = ForgetLostNodes(nodes, now);

  // Verdicts that were waiting, and ranks whose worker will never report.
  TF_ASSIGN_OR_RETURN(std::vector<Job> jobs, ActiveJobs());
  TimeMs verdict_wait = options_.heartbeat_timeout_ms + kSecondMs;
  TimeMs unstarted = 2 * options_.heartbeat_timeout_ms;
  TimeMs started = options_.heartbeat_timeout_ms + options_.stop_grace_ms + 30 * kSecondMs;
  for (const Job& job : jobs) {
    bool pending = false, silent = false;
    for (const Attempt& a : job.doc.attempts) {
      if (!a.ended() && a.failure_seen_at > 0 && now - a.failure_seen_at >= verdict_wait)
        pending = true;
      if (a.ended() && a.has_live_ranks()) silent = true;
    }
    if (!pending && !silent) continue;
    auto changed = Mutate(job.id(), [&](Job& j, Events& events) {
      ResolveGangFailure(j, now, verdict_wait, events);
      ForgetSilentRanks(j, now, unstarted, started);
      return OkStatus();
    });
    if (!changed.ok()) spdlog::warn("settling {}: {}", job.id(), changed.status().ToString());
  }

  // Time limits.
  for (const Job& job : jobs) {
    const Attempt* a = job.doc.current();
    if (a == nullptr || a->ended() || job.spec.max_runtime_ms <= 0) continue;
    if (now - a->created_at < job.spec.max_runtime_ms) continue;
    auto changed = Mutate(job.id(), [&](Job& j, Events& events) {
      EnforceMaxRuntime(j, now, events);
      return OkStatus();
    });
    if (!changed.ok()) spdlog::warn("time limit of {}: {}", job.id(), changed.status().ToString());
  }

  TF_ASSIGN_OR_RETURN(TickStats stats, Schedule(nodes, now));
  stats.nodes_lost = lost;
  stats.nodes_forgotten = forgotten;
  return stats;
}

int JobService::ForgetLostNodes(std::vector<store::NodeRecord>& nodes, TimeMs now) {
  int forgotten = 0;
  std::erase_if(nodes, [&](const store::NodeRecord& node) {
    if (node.state != "lost" || now - node.heartbeat_at <= options_.lost_node_retention_ms) {
      return false;
    }
    Status s = store_.nodes().DeleteLostNode(node.id);
    if (!s.ok()) {  // registered again meanwhile: it stays
      spdlog::info("node {} not forgotten: {}", node.id, s.ToString());
      return false;
    }
    spdlog::info("node {} forgotten: lost {} s ago", node.id, (now - node.heartbeat_at) / 1000);
    ++forgotten;
    return true;
  });
  return forgotten;
}

Result<int> JobService::DetectLostNodes(std::vector<store::NodeRecord>& nodes, TimeMs now) {
  int lost = 0;
  for (store::NodeRecord& node : nodes) {
    if (node.state == "lost" || now - node.heartbeat_at <= options_.heartbeat_timeout_ms) continue;
    TF_RETURN_IF_ERROR(store_.nodes().SetNodeState(node.id, "lost", ""));
    node.state = "lost";
    ++lost;
    spdlog::warn("node {} lost: no heartbeat for {} ms", node.id, now - node.heartbeat_at);
    TF_ASSIGN_OR_RETURN(std::vector<Job> jobs, ActiveJobs());
    for (const Job& job : jobs) {
      if (!NodesOf(job).count(node.id)) continue;
      auto changed = Mutate(job.id(), [&](Job& j, Events& events) {
        MarkNodeLost(j, node.id, now, events);
        return OkStatus();
      });
      if (!changed.ok())
        spdlog::warn("node loss for {}: {}", job.id(), changed.status().ToString());
    }
  }
  return lost;
}

// The fleet as it is now: every live rank holds its node's resources.
std::vector<fleet::NodeState> JobService::FleetInUse(
    const std::vector<store::NodeRecord>& records, const std::vector<Job>& jobs,
    std::map<std::string, fleet::NodeInfo>* infos) {
  std::vector<fleet::NodeState> nodes;
  std::map<std::string, size_t> index;
  for (const store::NodeRecord& r : records) {
    if (r.state == "lost") continue;
    auto info = fleet::NodeInfoFromJson(nlohmann::json::parse(r.info_json, nullptr, false));
    if (!info.ok()) continue;
    index[r.id] = nodes.size();
    nodes.push_back(ToNodeState(r, *info));
    if (infos != nullptr) (*infos)[r.id] = std::move(info).value();
  }
  for (const Job& job : jobs) {
    for (const Attempt& a : job.doc.attempts) {
      for (const RankState& rs : a.ranks) {
        auto it = index.find(rs.node_id);
        if (!IsLiveRank(rs) || it == index.end()) continue;
        fleet::NodeState& n = nodes[it->second];
        for (int g : rs.gpus) {
          std::erase(n.free_gpus, g);
          if (g < 0 || static_cast<size_t>(g) >= n.gpu_free_memory.size()) continue;
          int64_t& left = n.gpu_free_memory[g];
          const int64_t share = job.spec.resources.gpu_memory_bytes;
          left = share > 0 ? std::max<int64_t>(0, left - share) : 0;
        }
        n.free_cpus -= job.spec.resources.cpus;
        n.free_memory_bytes -= job.spec.resources.memory_bytes;
      }
    }
  }
  return nodes;
}

void JobService::SetCapacityNotes(std::map<std::string, std::string> notes) {
  MutexLock lock(notes_mu_);
  capacity_notes_ = std::move(notes);
}

Result<CapacityView> JobService::Capacity() {
  CapacityView view;
  TF_ASSIGN_OR_RETURN(view.records, store_.nodes().ListNodes());
  TF_ASSIGN_OR_RETURN(std::vector<Job> jobs, ActiveJobs());
  for (const Job& job : jobs) {
    if (WantsPlacement(job)) view.pending.push_back(ToWorkRequest(job));
    for (const Attempt& a : job.doc.attempts) {
      for (const RankState& rs : a.ranks) {
        if (IsLiveRank(rs)) view.busy.insert(rs.node_id);
      }
    }
  }
  view.nodes = FleetInUse(view.records, jobs, nullptr);
  return view;
}

Result<bool> JobService::WouldPlaceNow(const JobSpec& spec) {
  TF_ASSIGN_OR_RETURN(CapacityView view, Capacity());
  fleet::WorkRequest probe = RequestFor(spec);
  probe.priority = std::numeric_limits<int>::min();  // after everything that waits
  probe.queued_at = std::numeric_limits<TimeMs>::max();
  view.pending.push_back(probe);
  fleet::ScheduleResult result = fleet::Schedule(view.nodes, view.pending, clock_.Now());
  return std::any_of(result.placements.begin(), result.placements.end(),
                     [&](const fleet::Placement& p) { return p.job_id == probe.job_id; });
}

Result<TickStats> JobService::Schedule(const std::vector<store::NodeRecord>& records, TimeMs now) {
  TickStats stats;
  TF_ASSIGN_OR_RETURN(std::vector<Job> jobs, ActiveJobs());
  std::vector<fleet::WorkRequest> pending;
  for (const Job& job : jobs) {
    if (WantsPlacement(job)) pending.push_back(ToWorkRequest(job));
  }
  if (pending.empty()) return stats;

  std::map<std::string, fleet::NodeInfo> infos;
  fleet::ScheduleResult result = fleet::Schedule(FleetInUse(records, jobs, &infos), pending, now);
  stats.waiting = static_cast<int>(result.waiting.size());
  std::map<std::string, const Job*> by_id;
  for (const Job& job : jobs) by_id[job.id()] = &job;
  for (const fleet::Placement& p : result.placements) {
    std::vector<std::string> addrs;
    for (const fleet::RankPlacement& r : p.ranks) addrs.push_back(infos[r.node_id].address);
    uint64_t token = NewToken();
    int port = options_.master_port_base + static_cast<int>(token % options_.master_port_count);
    // The attempt's API token is made before the write that places it, and revoked if that
    // write does not happen: a token exists only for an attempt that does.
    const Job& listed = *by_id.at(p.job_id);
    auto api_token = auth_.CreateToken(listed.record.project_id,
                                       "job-" + listed.id().substr(4) + "-attempt", false);
    if (!api_token.ok()) {
      spdlog::warn("placing {}: {}", p.job_id, api_token.status().ToString());
      continue;
    }
    auto placed = Mutate(p.job_id, [&](Job& job, Events& events) -> Status {
      if (!WantsPlacement(job)) return Aborted("no longer waiting");
      StartAttempt(job, p, addrs, token, port, now, events);
      job.doc.attempts.back().api_token_id = api_token->token.id;
      job.doc.attempts.back().api_token = api_token->secret;
      RecordPrices(job.doc.attempts.back(), job.spec, infos);
      ClearWaiting(job.doc);
      return OkStatus();
    });
    if (placed.ok()) {
      ++stats.placed;
      continue;
    }
    RevokeQuietly(api_token->token.id, p.job_id + "'s unplaced attempt");
    if (placed.status().code() != StatusCode::kAborted) {
      spdlog::warn("placing {}: {}", p.job_id, placed.status().ToString());
    }
  }

  // Why the others wait, kept in each job for `describe` and `ps`. Written only when the reason
  // changed: a fleet that stays as it is costs no write per waiting job per tick.
  for (const fleet::Waiting& w : result.waiting) {
    auto it = by_id.find(w.job_id);
    if (it == by_id.end()) continue;
    std::string reason = KeptWaitingReason(w, *it->second, now);
    {
      MutexLock lock(notes_mu_);
      auto note = capacity_notes_.find(w.job_id);
      if (note != capacity_notes_.end() && it->second->doc.not_before <= now) reason = note->second;
    }
    if (it->second->doc.waiting_reason == reason) continue;
    auto kept = Mutate(w.job_id, [&](Job& job, Events&) -> Status {
      if (!WantsPlacement(job)) return Aborted("no longer waiting");
      if (job.doc.waiting_reason != reason) {
        job.doc.waiting_reason = reason;
        job.doc.waiting_since = now;
      }
      return OkStatus();
    });
    if (!kept.ok() && kept.status().code() != StatusCode::kAborted) {
      spdlog::warn("keeping why {} waits: {}", w.job_id, kept.status().ToString());
    }
  }
  return stats;
}

void JobService::RevokeQuietly(const std::string& token_id, const std::string& whose) {
  if (token_id.empty()) return;
  Status revoked = auth_.RevokeToken(token_id);
  if (!revoked.ok()) spdlog::warn("revoking the token of {}: {}", whose, revoked.ToString());
}

Result<std::vector<Job>> JobService::ActiveJobs() { return List("", false, kActiveJobLimit); }

Result<Job> JobService::Mutate(const std::string& job_id,
                               const std::function<Status(Job&, Events&)>& change) {
  for (int i = 0; i < kMutateAttempts; ++i) {
    TF_ASSIGN_OR_RETURN(store::JobRecord record, store_.jobs().GetJob(job_id));
    TF_ASSIGN_OR_RETURN(Job before, DecodeJob(record));
    Job job = before;
    Events events;
    TF_RETURN_IF_ERROR(change(job, events));
    if (events.empty() && JobDocToJson(job.doc) == JobDocToJson(before.doc) &&
        job.record.state == before.record.state) {
      return job;  // nothing changed
    }
    job.record.updated_at = clock_.Now();
    store::JobRecord encoded = EncodeJob(job);
    encoded.version = record.version + 1;
    Status s = store_.jobs().UpdateJob(encoded, record.version, events);
    if (s.code() == StatusCode::kAborted) continue;  // someone else wrote first: decide again
    TF_RETURN_IF_ERROR(s);
    job.record.version = encoded.version;
    AfterChange(before, job);
    return job;
  }
  return Aborted("job " + job_id + " is changing too often to update; try again");
}

void JobService::AfterChange(const Job& before, const Job& after) {
  std::set<std::string> touched = NodesOf(before);
  for (const std::string& n : NodesOf(after)) touched.insert(n);
  if (const Attempt* a = after.doc.current()) {
    for (const RankState& r : a->ranks) touched.insert(r.node_id);
  }
  if (on_node_change_) {
    for (const std::string& n : touched) on_node_change_(n);
  }
  // A new attempt fences off the ones before: their ranks have all ended or are on nodes
  // declared lost (WantsPlacement), so only a stale rank could still use their tokens.
  if (after.doc.attempts.size() > before.doc.attempts.size()) {
    for (const Attempt& earlier : before.doc.attempts) {
      RevokeQuietly(earlier.api_token_id,
                    after.id() + "'s attempt " + std::to_string(earlier.number));
    }
    RevokeQuietly(before.doc.token_id, after.id() + "'s job-wide token");
  }
  // The last attempt's token outlives the job until its last process is gone: stopping ranks
  // still ship their logs and checkpoints with it.
  bool done_now = IsTerminalJobState(after.state()) && NodesOf(after).empty();
  bool done_before = IsTerminalJobState(before.state()) && NodesOf(before).empty();
  if (done_now && !done_before) {
    if (const Attempt* last = after.doc.current()) {
      RevokeQuietly(last->api_token_id, after.id() + "'s attempt " + std::to_string(last->number));
    }
    RevokeQuietly(after.doc.token_id, after.id() + "'s job-wide token");
  }
  // A job that ended or left resources free may let another start.
  if (on_work_ && after.state() != before.state()) on_work_();
}

}  // namespace tf::jobs
