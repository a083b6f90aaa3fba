#include "jobs/lifecycle.h"

#include <algorithm>

namespace tf::jobs {
namespace {

void Emit(Job& job, TimeMs now, const std::string& kind, const std::string& message,
          Events& events) {
  events.push_back(store::JobEvent{0, job.id(), now, kind, message});
}

void SetState(Job& job, const std::string& state, const std::string& reason, TimeMs now,
              Events& events) {
  job.record.state = state;
  job.doc.reason = reason;
  Emit(job, now, state, reason, events);
}

std::string Gpus(const std::vector<int>& gpus) {
  if (gpus.empty()) return "no GPUs";
  std::string out = gpus.size() == 1 ? "GPU " : "GPUs ";
  for (size_t i = 0; i < gpus.size(); ++i) out += (i ? "," : "") + std::to_string(gpus[i]);
  return out;
}

bool IsRankEnd(std::string_view s) {
  return s == "succeeded" || s == "failed" || s == "interrupted" || s == "lost" || s == "stopped";
}

// Ends attempt `a` as `state` (one of failed, interrupted, lost, timed-out, succeeded,
// cancelled); ranks that may still run are asked to stop. Then decides what the job does.
void EndAttempt(Job& job, Attempt& a, const std::string& state, const std::string& reason,
                int exit_code, TimeMs now, Events& events) {
  a.state = state;
  a.reason = reason;
  a.ended_at = now;
  a.exit_code = exit_code;
  for (RankState& r : a.ranks) {
    if (r.state == "assigned" || r.state == "running") r.state = "stopping";
  }
  std::string prefix = "attempt " + std::to_string(a.number) + " ";
  if (state == "succeeded") {
    job.doc.exit_code = 0;
    SetState(job, kSucceeded, prefix + "succeeded", now, events);
    return;
  }
  if (state == kCancelled) return;  // CancelJob sets the job's state itself

  const RetryPolicy& policy = job.spec.retry;
  bool retriable = (state == "failed" && policy.on_error) ||
                   (state == kInterrupted && policy.on_interruption) ||
                   (state == "lost" && policy.on_node_lost);
  bool attempts_left = static_cast<int>(job.doc.attempts.size()) < policy.max_attempts;
  if (state == kInterrupted)
    Emit(job, now, kInterrupted, prefix + "interrupted: " + reason, events);
  if (retriable && attempts_left) {
    TimeMs backoff = 0;
    if (state == "failed") {
      int failures =
          static_cast<int>(std::count_if(job.doc.attempts.begin(), job.doc.attempts.end(),
                                         [](const Attempt& x) { return x.state == "failed"; }));
      backoff = RetryBackoff(policy, failures);
    } else {
      ++job.doc.recoveries;
    }
    job.doc.not_before = now + backoff;
    std::string next =
        "attempt " + std::to_string(a.number + 1) + " of " + std::to_string(policy.max_attempts);
    std::string when = backoff > 0 ? " in " + std::to_string(backoff / 1000) + " s" : "";
    SetState(job, kRetrying,
             prefix + state + " (" + reason + "); " + next + " starts" + when +
                 " from the last checkpoint",
             now, events);
    return;
  }
  job.doc.exit_code = exit_code;
  std::string why =
      !retriable
          ? "the retry policy does not retry " + std::string(state == "failed" ? "errors" : state)
          : "no attempts left (max_attempts " + std::to_string(policy.max_attempts) + ")";
  SetState(job, kFailed, prefix + state + " (" + reason + "); " + why, now, events);
}

Attempt* LiveAttempt(Job& job) {
  Attempt* a = job.doc.current();
  return a != nullptr && !a->ended() ? a : nullptr;
}

std::string RankEndReason(const RankState& r, int node_rank, const std::string& message) {
  std::string where = "node rank " + std::to_string(node_rank) + " on " + r.node_id;
  if (!message.empty()) return message + " (" + where + ")";
  if (r.signal != 0) return "killed by signal " + std::to_string(r.signal) + " on " + where;
  return "exit code " + std::to_string(r.exit_code) + " on " + where;
}

}  // namespace

Result<Job> DecodeJob(const store::JobRecord& record) {
  Job job;
  job.record = record;
  TF_ASSIGN_OR_RETURN(job.doc, JobDocFromJson(record.doc_json));
  auto spec = JobSpecFromJson(job.doc.spec);
  if (!spec.ok()) {
    return Internal("job " + record.id +
                    " has a stored spec that does not read: " + spec.status().message());
  }
  job.spec = std::move(spec).value();
  return job;
}

store::JobRecord EncodeJob(const Job& job) {
  store::JobRecord r = job.record;
  r.doc_json = JobDocToJson(job.doc).dump();
  return r;
}

void StartAttempt(Job& job, const fleet::Placement& placement,
                  const std::vector<std::string>& addresses, uint64_t token, int master_port,
                  TimeMs now, Events& events) {
  Attempt a;
  a.number = static_cast<int>(job.doc.attempts.size()) + 1;
  a.token = token;
  a.master_port = master_port;
  a.created_at = now;
  std::string where;
  for (size_t i = 0; i < placement.ranks.size(); ++i) {
    RankState r;
    r.node_id = placement.ranks[i].node_id;
    r.address = i < addresses.size() ? addresses[i] : "";
    r.gpus = placement.ranks[i].gpus;
    a.ranks.push_back(r);
    where += (i ? ", " : "") + r.node_id + " (" + Gpus(r.gpus) + ")";
  }
  job.doc.attempts.push_back(std::move(a));
  job.doc.not_before = 0;
  SetState(job, kStarting,
           "attempt " + std::to_string(job.doc.attempts.back().number) + " placed on " + where, now,
           events);
}

Status ApplyRankReport(Job& job, const RankReport& report, TimeMs now, Events& events) {
  Attempt* a = nullptr;
  for (Attempt& x : job.doc.attempts) {
    if (x.number == report.attempt) a = &x;
  }
  if (a == nullptr || a->token != report.token) {
    return Aborted("stale lease: attempt " + std::to_string(report.attempt) + " of job " +
                   job.id() + " does not hold this token");
  }
  if (report.node_rank < 0 || report.node_rank >= static_cast<int>(a->ranks.size())) {
    return InvalidArgument("node_rank: " + std::to_string(report.node_rank) +
                           " is not a rank of attempt " + std::to_string(a->number));
  }
  if (!report.from_node.empty() &&
      a->ranks[static_cast<size_t>(report.node_rank)].node_id != report.from_node) {
    return PermissionDenied("rank " + std::to_string(report.node_rank) + " of attempt " +
                            std::to_string(a->number) + " of job " + job.id() +
                            " is not placed on node " + report.from_node);
  }
  const std::string& s = report.state;
  if (s != "running" && !IsRankEnd(s)) {
    return InvalidArgument(
        "state: must be running, succeeded, failed, interrupted, lost or "
        "stopped, got \"" +
        s + "\"");
  }
  RankState& rank = a->ranks[static_cast<size_t>(report.node_rank)];
  if (IsRankEnd(rank.state)) return OkStatus();  // said before
  if (s == "running") {
    if (rank.state != "assigned") return OkStatus();
    rank.state = "running";
    rank.started_at = now;
    bool all_started = std::none_of(a->ranks.begin(), a->ranks.end(),
                                    [](const RankState& r) { return r.state == "assigned"; });
    if (!a->ended() && a->state == kStarting && all_started) {
      a->state = kRunning;
      a->started_at = now;
      SetState(
          job, kRunning,
          "attempt " + std::to_string(a->number) + ": " +
              (a->ranks.size() == 1 ? std::string("the process is")
                                    : "all " + std::to_string(a->ranks.size()) + " nodes are") +
              " running",
          now, events);
    }
    return OkStatus();
  }

  // The rank ended.
  bool was_stopping = rank.state == "stopping";
  rank.state = (was_stopping && s != "lost") ? "stopped" : s;
  rank.exit_code = report.exit_code;
  rank.signal = report.signal;
  rank.ended_at = now;
  if (!report.log_tail.empty()) rank.log_tail = report.log_tail;
  if (a->ended()) return OkStatus();  // a rank of an attempt that already ended: now stopped

  std::string reason = RankEndReason(rank, report.node_rank, report.message);
  if (s == "failed" && a->failure_seen_at == 0 && a->has_live_ranks()) {
    // A gang's rank failed while its peers run: wait for the verdict (job_doc.h).
    a->failure_seen_at = now;
    a->failure_reason = reason;
    a->failure_exit_code = report.exit_code;
    return OkStatus();
  }
  if ((s == "failed" || s == "succeeded") && a->failure_seen_at > 0) {
    if (a->has_live_ranks()) return OkStatus();
    EndAttempt(job, *a, "failed", a->failure_reason, a->failure_exit_code, now, events);
    return OkStatus();
  }
  if (s == "succeeded") {
    bool all_done = std::all_of(a->ranks.begin(), a->ranks.end(),
                                [](const RankState& r) { return r.state == "succeeded"; });
    if (all_done) EndAttempt(job, *a, "succeeded", "every rank exited 0", 0, now, events);
    return OkStatus();
  }
  if (s == "stopped") {
    // Stopped without being asked: treat as an interruption of the attempt.
    EndAttempt(job, *a, kInterrupted, reason, report.exit_code, now, events);
  } else {
    EndAttempt(job, *a, s, reason, report.exit_code, now, events);
  }
  return OkStatus();
}

void MarkNodeLost(Job& job, const std::string& node_id, TimeMs now, Events& events) {
  bool live_rank_lost = false;
  for (Attempt& a : job.doc.attempts) {
    for (RankState& r : a.ranks) {
      if (r.node_id != node_id) continue;
      if (r.state == "assigned" || r.state == "running") live_rank_lost = !a.ended();
      if (r.state == "assigned" || r.state == "running" || r.state == "stopping") {
        r.state = "lost";
        r.ended_at = now;
      }
    }
  }
  Attempt* a = LiveAttempt(job);
  if (a != nullptr && live_rank_lost) {
    EndAttempt(job, *a, "lost", "node " + node_id + " stopped sending heartbeats", -1, now, events);
  }
}

Status CancelJob(Job& job, const std::string& why, TimeMs now, Events& events) {
  if (IsTerminalJobState(job.state())) {
    return FailedPrecondition("job " + job.id() + " already " + job.state());
  }
  if (Attempt* a = LiveAttempt(job)) EndAttempt(job, *a, kCancelled, why, -1, now, events);
  SetState(job, kCancelled, why, now, events);
  return OkStatus();
}

void EnforceMaxRuntime(Job& job, TimeMs now, Events& events) {
  Attempt* a = LiveAttempt(job);
  if (a == nullptr || job.spec.max_runtime_ms <= 0) return;
  TimeMs since = a->created_at;
  if (now - since < job.spec.max_runtime_ms) return;
  EndAttempt(
      job, *a, "timed-out",
      "ran longer than max_runtime (" + std::to_string(job.spec.max_runtime_ms / 1000) + " s)", -1,
      now, events);
}

void ResolveGangFailure(Job& job, TimeMs now, TimeMs wait_ms, Events& events) {
  Attempt* a = LiveAttempt(job);
  if (a == nullptr || a->failure_seen_at == 0 || now - a->failure_seen_at < wait_ms) return;
  EndAttempt(job, *a, "failed", a->failure_reason, a->failure_exit_code, now, events);
}

void ForgetSilentRanks(Job& job, TimeMs now, TimeMs unstarted_after_ms, TimeMs started_after_ms) {
  for (Attempt& a : job.doc.attempts) {
    if (!a.ended()) continue;
    for (RankState& r : a.ranks) {
      if (r.state != "stopping") continue;
      TimeMs limit = r.started_at == 0 ? unstarted_after_ms : started_after_ms;
      if (now - a.ended_at < limit) continue;
      r.state = "stopped";
      r.ended_at = now;
    }
  }
}

bool WantsPlacement(const Job& job) {
  if (job.state() == kQueued) return true;
  if (job.state() != kRetrying) return false;
  const Attempt* a = job.doc.current();
  return a == nullptr || !a->has_live_ranks();
}

fleet::WorkRequest ToWorkRequest(const Job& job) {
  fleet::WorkRequest w;
  w.job_id = job.id();
  w.priority = job.spec.priority;
  w.queued_at = job.record.created_at;
  w.nodes = job.spec.nodes;
  w.gpus_per_node = job.spec.resources.gpus;
  w.gpu_memory_per_node = job.spec.resources.gpu_memory_bytes;
  w.cpus_per_node = job.spec.resources.cpus;
  w.memory_per_node = job.spec.resources.memory_bytes;
  w.node_selector = job.spec.node_selector;
  switch (job.spec.capacity) {
    case CapacityType::kAny:
      w.capacity = fleet::CapacityType::kAny;
      break;
    case CapacityType::kSpot:
      w.capacity = fleet::CapacityType::kSpot;
      break;
    case CapacityType::kOnDemand:
      w.capacity = fleet::CapacityType::kOnDemand;
      break;
    case CapacityType::kPreferSpot:
      w.capacity = fleet::CapacityType::kAny;
      w.prefer_spot = true;
      break;
  }
  w.allow_zone_split = job.spec.allow_zone_split;
  w.not_before = job.doc.not_before;
  return w;
}

TimeMs RetryBackoff(const RetryPolicy& policy, int failed_attempts) {
  TimeMs backoff = policy.backoff_ms;
  for (int i = 1; i < failed_attempts && backoff < policy.max_backoff_ms; ++i) backoff *= 2;
  return std::min(backoff, policy.max_backoff_ms);
}

}  // namespace tf::jobs
